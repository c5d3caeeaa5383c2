// Chapter 2: why divide by sqrt(d_k) (see utils/figures/sqrt_dk.py).
function aiaynFigure_sqrt_dk(root, data) {
  var F = window.aiaynFig, L = F.locale(root), n = data.Q.length, t = data.token;
  var angle = F.part(root, "angle"), dim = F.part(root, "d"), scale = F.part(root, "scale");

  // repeat a 2-D vector d/2 times and multiply by (d/2)^(-1/4): dot products grow by sqrt(d/2)
  function lift(x, d) {
    var c = Math.pow(d / 2, -0.25), out = [];
    for (var r = 0; r < d / 2; r++) out.push(c * x[0], c * x[1]);
    return out;
  }

  function draw() {
    var a = Number(angle.value), d = Number(dim.value), divide = scale.checked;
    var rad = a * Math.PI / 180;
    var Q = data.Q.map(function (q, i) {
      return i === t ? [data.radius * Math.cos(rad), data.radius * Math.sin(rad)] : q;
    });
    var Ql = Q.map(function (q) { return lift(q, d); }), Kl = data.K.map(function (k) { return lift(k, d); });
    var div = divide ? Math.sqrt(d) : 1;
    var S = Ql.map(function (q) { return Kl.map(function (k) { return F.dot(q, k) / div; }); });
    var A = S.map(function (row) { return F.softmax(row); });
    var O = A.map(function (w) {
      return data.V[0].map(function (_, c) {
        return w.reduce(function (s, wj, j) { return s + wj * data.V[j][c]; }, 0);
      });
    });
    var labels = Q.map(function (_, i) { return L.t("token", {i: i}); });
    F.fill(F.part(root, "scores"), [F.table(divide ? L.t("scores_divided", {d: d}) : L.t("scores_not_divided"),
      labels, S.map(function (r, i) { return [labels[i], r]; }),
      {digits: 4, selected: t, corner: L.t("query_key"), L: L})]);
    F.fill(F.part(root, "weights"), [F.table(L.t("weights_caption"), labels.concat([L.t("row_sum")]),
      A.map(function (r, i) {
        return [labels[i], r.concat([L.num(r.reduce(function (x, y) { return x + y; }, 0), 4)])];
      }), {digits: 4, shade: true, selected: t, corner: L.t("query_key"), L: L})]);
    F.fill(F.part(root, "output"), [F.table(L.t("output_caption"),
      data.V[0].map(function (_, c) { return L.t("column", {c: c}); }),
      O.map(function (r, i) { return [labels[i], r]; }), {digits: 4, selected: t, L: L})]);
    F.part(root, "angle-out").textContent = a + "°";
    F.part(root, "d-out").textContent = String(d);
    var top = Math.max.apply(null, A[t]);
    var copies = d / 2;  // at d = 2 the query is the worked example's own, not lifted
    var lifted = Ql[t].slice(0, 4).map(function (x) { return L.num(x, 4); }).concat(d > 4 ? ["…"] : []);
    var args = {t: t, query: L.vec(Q[t], 4), d: d, copies: copies, factor: L.num(Math.pow(copies, -0.25), 4),
                lifted: L.vec(lifted), top: L.num(top, 4),
                scaling: divide ? L.t("scaling_on", {d: d}) : L.t("scaling_off")};
    F.part(root, "summary").textContent = L.t(copies === 1 ? "summary_d2" : "summary_lifted", args);
    F.setState(root, {angle: a, d: d, scale: divide, query: Q[t], lifted_query: Ql[t], scores: S, weights: A, output: O});
  }
  [angle, dim].forEach(function (s) { s.addEventListener("input", draw); });
  scale.addEventListener("change", draw);
  draw();
}
