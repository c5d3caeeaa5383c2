// Chapter 10: the learning-rate schedule of equation 3 (see utils/figures/schedule.py).
function aiaynFigure_schedule(root, data) {
  var F = window.aiaynFig, L = F.locale(root), NS = "http://www.w3.org/2000/svg";
  var menu = F.part(root, "d"), slider = F.part(root, "warmup");
  var W = 360, H = 260, L0 = 52, B = 34, T = 10, Rm = 22;  // plot size and margins
  var X0 = 0, X1 = 5, Y0 = -8, Y1 = -1;  // log10 ranges: steps 1..100,000, rates 1e-8..1e-1

  function rate(step, d, w) { step = Math.max(step, 1); return Math.pow(d, -0.5) * Math.min(Math.pow(step, -0.5), step * Math.pow(w, -1.5)); }
  function px(s) { return L0 + (Math.log10(s) - X0) / (X1 - X0) * (W - L0 - Rm); }
  function py(r) { return T + (Y1 - Math.log10(r)) / (Y1 - Y0) * (H - T - B); }
  function svg(tag, attrs, text) {
    var e = document.createElementNS(NS, tag);
    Object.keys(attrs).forEach(function (a) { e.setAttribute(a, attrs[a]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function draw() {
    var d = Number(menu.value), w = Number(slider.value), peak = rate(w, d, w);
    var args = {d: d, warmup: L.int(w), peak: L.sci(peak, 3)};
    F.part(root, "warmup-out").textContent = L.int(w);
    var s = svg("svg", {width: W, height: H, viewBox: "0 0 " + W + " " + H, "aria-hidden": "true"});
    var e, pts = [];
    for (e = X0; e <= X1; e++) {
      s.appendChild(svg("line", {x1: px(Math.pow(10, e)), y1: T, x2: px(Math.pow(10, e)), y2: H - B, stroke: "#ddd"}));
      s.appendChild(svg("text", {x: px(Math.pow(10, e)) - 8, y: H - B + 14}, L.pow10(e)));
    }
    for (e = Y0; e <= Y1; e++) {
      s.appendChild(svg("line", {x1: L0, y1: py(Math.pow(10, e)), x2: W - Rm, y2: py(Math.pow(10, e)), stroke: "#ddd"}));
      s.appendChild(svg("text", {x: 8, y: py(Math.pow(10, e)) + 4}, L.pow10(e)));
    }
    s.appendChild(svg("text", {x: L0 + 90, y: H - 4}, L.t("x_axis")));
    for (var j = 0; j <= 200; j++) {
      var st = Math.pow(10, X0 + (X1 - X0) * j / 200);
      pts.push(px(st).toFixed(1) + "," + py(rate(st, d, w)).toFixed(1));
    }
    s.appendChild(svg("polyline", {points: pts.join(" "), fill: "none", stroke: "#111", "stroke-width": 2}));
    s.appendChild(svg("rect", {x: px(w) - 4, y: py(peak) - 4, width: 8, height: 8, fill: "#111"}));
    s.appendChild(svg("text", {x: Math.min(px(w) + 8, W - 120), y: py(peak) - 8}, L.t("peak_label", {peak: L.sci(peak, 2)})));
    F.fill(F.part(root, "plot"), [s]);
    F.part(root, "plot").setAttribute("aria-label", L.t("plot_alt", args));

    var rates = data.steps.map(function (st) { return rate(st, d, w); });
    F.fill(F.part(root, "numbers"), [F.table(L.t("table_caption", args), [L.t("lrate")],
      data.steps.map(function (st, j) { return [L.int(st), [L.sci(rates[j], 3)]]; })
        .concat([[L.t("peak_row", args), [L.sci(peak, 3)]]]), {corner: L.t("step"), L: L})]);
    F.part(root, "summary").textContent = L.t("summary", {d: d, w: w, warmup: L.int(w), peak: L.sci(peak, 3)});
    F.setState(root, {d_model: d, warmup: w, peak: peak, steps: data.steps, rates: rates});
  }
  menu.addEventListener("change", draw);
  slider.addEventListener("input", draw);
  draw();
}
