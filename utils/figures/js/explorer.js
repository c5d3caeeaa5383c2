// Chapter 11: one example through the trained model, step by step (see utils/figures/explorer.py).
function aiaynFigure_explorer(root, data) {
  var F = window.aiaynFig, steps = data.steps, n = steps.length, cur = data.step;
  var slider = F.part(root, "step"), phases = ["input", "encoder", "decoder", "output"];

  function shape(s) { return "(" + s.shape.join(", ") + ")"; }

  function view(s) {
    var nodes = [F.el("p", {}, [
      F.el("strong", {"data-part": "phase", text: s.phase.toUpperCase()}),
      F.el("span", {text: " \u2014 step " + (cur + 1) + " of " + n + ": " + s.title + ", shape "}),
      F.el("code", {"data-part": "shape", text: shape(s)})])];
    if (s.kind === "ids") {
      nodes.push(F.table("Token ids", s.tokens, [["id", s.ids.map(String)]], {}));
    } else if (s.kind === "vector") {
      var cols = [];
      for (var c = 0; c < s.rows[0][1].length; c++) cols.push("[" + c + "]");
      nodes.push(F.table("First " + cols.length + " of " + s.width + " numbers", cols, s.rows, {digits: 4}));
    } else if (s.kind === "matrix") {
      nodes.push(F.table("Weights of head " + s.head + ", layer " + s.layer + " (rows: queries, columns: keys)",
        s.cols, s.rows.map(function (r, i) { return [r, s.matrix[i]]; }),
        {digits: 4, shade: true, corner: "query \\ key", masked: function (i, j) { return s.masked[i][j]; }}));
    } else if (s.kind === "top") {
      nodes.push(F.table("Most probable next tokens", ["1st", "2nd", "3rd"].slice(0, s.rows[0][1].length),
        s.rows.map(function (r) {
          return [r[0], r[1].map(function (tp) { return tp[0] + "  " + F.fmt(tp[1], 4); })];
        }), {}));
    }
    nodes.push(F.el("p", {class: "fig-note", text: s.note}));
    return nodes;
  }

  function draw() {
    var s = steps[cur];
    slider.value = String(cur + 1);
    F.part(root, "step-out").textContent = String(cur + 1);
    F.fill(F.part(root, "phases"), [F.el("p", {class: "fig-note", text: phases.map(function (p) {
      return p === s.phase ? "[" + p.toUpperCase() + "]" : p; }).join("  \u2192  ")})]);
    F.fill(F.part(root, "view"), view(s));
    F.setState(root, {step: cur + 1, phase: s.phase, title: s.title, shape: s.shape, kind: s.kind});
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
