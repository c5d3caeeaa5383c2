// Chapter 11: one example through the trained model, step by step (see utils/figures/explorer.py).
// A step's title, note and row labels are strings of the figure's table (keys "s<step>.title",
// "s<step>.note", "s<step>.row<r>"), so that they follow the page's language.
function aiaynFigure_explorer(root, data) {
  var F = window.aiaynFig, L = F.locale(root), steps = data.steps, n = steps.length, cur = data.step;
  var slider = F.part(root, "step"), phases = ["input", "encoder", "decoder", "output"];

  function shape(s) { return "(" + s.shape.join(", ") + ")"; }
  function text(what) { return L.t("s" + cur + "." + what); }
  function phase(p) { return L.t("phase_" + p); }

  function view(s) {
    var nodes = [F.el("p", {}, [
      F.el("strong", {"data-part": "phase", text: phase(s.phase).toUpperCase()}),
      F.el("span", {text: " \u2014 " + L.t("heading", {step: cur + 1, steps: n, title: text("title")}) + " "}),
      F.el("code", {"data-part": "shape", text: shape(s)})])];
    var rows = (s.rows || []).map(function (r, i) { return [text("row" + i), r]; });
    if (s.kind === "ids") {
      nodes.push(F.table(L.t("ids_caption"), s.tokens, [[L.t("id"), s.ids.map(String)]], {L: L}));
    } else if (s.kind === "vector") {
      var cols = [];
      for (var c = 0; c < s.rows[0].length; c++) cols.push("[" + c + "]");
      nodes.push(F.table(L.t("vector_caption", {shown: cols.length, width: s.width}), cols, rows, {digits: 4, L: L}));
    } else if (s.kind === "matrix") {
      nodes.push(F.table(L.t("matrix_caption", {head: s.head, layer: s.layer}),
        s.cols, s.labels.map(function (r, i) { return [r, s.matrix[i]]; }),
        {digits: 4, shade: true, corner: L.t("query_key"), L: L, masked: function (i, j) { return s.masked[i][j]; }}));
    } else if (s.kind === "top") {
      nodes.push(F.table(L.t("top_caption"), [L.t("rank_one"), L.t("rank_two"), L.t("rank_three")].slice(0, s.rows[0].length),
        rows.map(function (r) {
          return [r[0], r[1].map(function (tp) { return tp[0] + "  " + L.num(tp[1], 4); })];
        }), {L: L}));
    }
    nodes.push(F.el("p", {class: "fig-note", text: text("note")}));
    return nodes;
  }

  function draw() {
    var s = steps[cur];
    slider.value = String(cur + 1);
    F.part(root, "step-out").textContent = String(cur + 1);
    F.fill(F.part(root, "phases"), [F.el("p", {class: "fig-note", text: phases.map(function (p) {
      return p === s.phase ? "[" + phase(p).toUpperCase() + "]" : phase(p); }).join("  \u2192  ")})]);
    F.fill(F.part(root, "view"), view(s));
    F.setState(root, {step: cur + 1, phase: s.phase, title: text("title"), shape: s.shape, kind: s.kind});
  }

  function go(i) { cur = Math.max(0, Math.min(n - 1, i)); draw(); }
  F.part(root, "prev").addEventListener("click", function () { go(cur - 1); });
  F.part(root, "next").addEventListener("click", function () { go(cur + 1); });
  slider.addEventListener("input", function () { go(Number(slider.value) - 1); });
  root.addEventListener("keydown", function (e) {
    if (e.target === slider) return;  // the slider moves itself with the arrow keys
    if (e.key === "ArrowRight" || e.key === "ArrowDown") { go(cur + 1); e.preventDefault(); }
    if (e.key === "ArrowLeft" || e.key === "ArrowUp") { go(cur - 1); e.preventDefault(); }
    if (e.key === "Home") { go(0); e.preventDefault(); }
    if (e.key === "End") { go(n - 1); e.preventDefault(); }
  });
  draw();
}
