// Chapter 2: why divide by sqrt(d_k) (see utils/figures/sqrt_dk.py).
function aiaynFigure_sqrt_dk(root, data) {
  var F = window.aiaynFig, n = data.Q.length, t = data.token;
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
    var labels = Q.map(function (_, i) { return "token " + i; });
    F.fill(F.part(root, "scores"), [F.table("Scores q·k" + (divide ? "/√" + d : " (not divided)"), labels,
      S.map(function (r, i) { return [labels[i], r]; }), {digits: 4, selected: t, corner: "query \\ key"})]);
    F.fill(F.part(root, "weights"), [F.table("Weights A (rows sum to 1)", labels.concat(["row sum"]),
      A.map(function (r, i) {
        return [labels[i], r.concat([F.fmt(r.reduce(function (x, y) { return x + y; }, 0), 4)])];
      }), {digits: 4, shade: true, selected: t, corner: "query \\ key"})]);
    F.fill(F.part(root, "output"), [F.table("Output A V", data.V[0].map(function (_, c) { return "col " + c; }),
      O.map(function (r, i) { return [labels[i], r]; }), {digits: 4, selected: t})]);
    F.part(root, "angle-out").textContent = a + "°";
    F.part(root, "d-out").textContent = String(d);
    var top = Math.max.apply(null, A[t]);
    var lifted = Ql[t].slice(0, 4).map(function (x) { return F.fmt(x, 4); }).join(", ") + (d > 4 ? ", …" : "");
    var copies = d / 2;  // at d = 2 the query is the worked example's own, not lifted
    var how = copies === 1 ? " at d = 2, the worked example itself (no lifting)" :
      ", lifted to d = " + d + ": its two numbers repeated " + copies + " times and multiplied by " + copies +
      "^(-1/4) = " + F.fmt(Math.pow(copies, -0.25), 4) + ", giving [" + lifted + "]";
    F.part(root, "summary").textContent = "Query of token " + t + " = [" + Q[t].map(function (x) {
      return F.fmt(x, 4); }).join(", ") + "]" + how + (divide ? "; scores divided by √" + d : "; scores not divided") +
      ". Largest weight in row " + t + ": " + F.fmt(top, 4) + ".";
    F.setState(root, {angle: a, d: d, scale: divide, query: Q[t], lifted_query: Ql[t], scores: S, weights: A, output: O});
  }
  [angle, dim].forEach(function (s) { s.addEventListener("input", draw); });
  scale.addEventListener("change", draw);
  draw();
}
