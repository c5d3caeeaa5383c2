// Chapter 7: a shift of k positions is a rotation of each (sin, cos) pair (see utils/figures/pe_rotation.py).
function aiaynFigure_pe_rotation(root, data) {
  var F = window.aiaynFig, L = F.locale(root), NS = "http://www.w3.org/2000/svg", d = data.d_model;
  var ctl = {k: F.part(root, "k"), i: F.part(root, "i"), pos: F.part(root, "pos")};

  function pair(p, omega) { return [Math.sin(omega * p), Math.cos(omega * p)]; }
  function svg(tag, attrs) {
    var e = document.createElementNS(NS, tag);
    Object.keys(attrs).forEach(function (a) { e.setAttribute(a, attrs[a]); });
    return e;
  }

  function draw() {
    var k = Number(ctl.k.value), i = Number(ctl.i.value), pos = Number(ctl.pos.value);
    var omega = Math.pow(10000, -2 * i / d), theta = omega * k;
    var here = pair(pos, omega), later = pair(pos + k, omega);
    var M = [[Math.cos(theta), Math.sin(theta)], [-Math.sin(theta), Math.cos(theta)]];
    var rotated = [M[0][0] * here[0] + M[0][1] * here[1], M[1][0] * here[0] + M[1][1] * here[1]];
    var diff = Math.max(Math.abs(rotated[0] - later[0]), Math.abs(rotated[1] - later[1]));
    var cols = {a: 2 * i, b: 2 * i + 1};
    ["k", "i", "pos"].forEach(function (c) { F.part(root, c + "-out").textContent = ctl[c].value; });

    // unit circle; x = first entry of the pair (sine), y = second (cosine)
    var R = 80, c = 100, X = function (p) { return c + R * p[0]; }, Y = function (p) { return c - R * p[1]; };
    var s = svg("svg", {width: 200, height: 200, viewBox: "0 0 200 200", "aria-hidden": "true"});
    s.appendChild(svg("circle", {cx: c, cy: c, r: R, fill: "none", stroke: "#888"}));
    s.appendChild(svg("line", {x1: c - R - 8, y1: c, x2: c + R + 8, y2: c, stroke: "#bbb"}));
    s.appendChild(svg("line", {x1: c, y1: c - R - 8, x2: c, y2: c + R + 8, stroke: "#bbb"}));
    s.appendChild(svg("line", {x1: c, y1: c, x2: X(here), y2: Y(here), stroke: "#111", "stroke-dasharray": "4 3"}));
    s.appendChild(svg("line", {x1: c, y1: c, x2: X(later), y2: Y(later), stroke: "#111"}));
    s.appendChild(svg("circle", {cx: X(here), cy: Y(here), r: 6, fill: "#fff", stroke: "#111", "stroke-width": 2}));
    s.appendChild(svg("rect", {x: X(later) - 4, y: Y(later) - 4, width: 8, height: 8, fill: "#111"}));
    var t1 = svg("text", {x: 4, y: 14}); t1.textContent = L.t("plot_legend", {pos: pos, later: pos + k});
    var t2 = svg("text", {x: 4, y: 196}); t2.textContent = L.t("plot_axes", cols);
    s.appendChild(t1); s.appendChild(t2);
    F.fill(F.part(root, "plot"), [s]);
    F.part(root, "plot").setAttribute("aria-label", L.t("plot_alt", {pos: pos, later: pos + k, angle: L.num(theta, 4)}));

    F.fill(F.part(root, "numbers"), [
      F.table(L.t("rotation_caption", {angle: L.num(theta, 5)}), [L.t("column", {c: 1}), L.t("column", {c: 2})],
        [[L.t("row", {r: 1}), M[0]], [L.t("row", {r: 2}), M[1]]], {digits: 4, L: L}),
      F.table(L.t("pairs_caption", cols), ["sin", "cos"],
        [["PE(" + pos + ")", here], ["M · PE(" + pos + ")", rotated], ["PE(" + (pos + k) + ")", later]], {digits: 4, L: L}),
      F.el("p", {"data-part": "diff", text: L.t("difference", {diff: L.sci(diff, 1), bound: L.sci(1e-6, 0)})})]);
    F.part(root, "summary").textContent = L.t("summary", {
      i: i, d: d, omega: L.num(omega, 5), angle: L.num(theta, 5), degrees: L.num(theta * 180 / Math.PI, 2),
      wavelength: L.num(2 * Math.PI / omega, 2)});
    F.setState(root, {k: k, i: i, pos: pos, omega: omega, angle: theta, M: M, here: here, rotated: rotated,
                      later: later, diff: diff});
  }
  Object.keys(ctl).forEach(function (c) { ctl[c].addEventListener("input", draw); });
  draw();
}
