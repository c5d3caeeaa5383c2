// Chapter 2: attention over one sentence (see utils/figures/sentence.py).
function aiaynFigure_sentence(root, data) {
  var F = window.aiaynFig, n = data.words.length, sqrtD = Math.sqrt(data.d_k);
  var state = {query: data.query, head: "1", mask: false};

  // scaled scores and weights of query i in head h (keys after i hidden under the mask)
  function attend(h, i) {
    var q = data.queries[h][i];
    var scores = data.keys.map(function (k) { return F.dot(q, k) / sqrtD; });
    var keep = scores.map(function (_, j) { return !state.mask || j <= i; });
    var w = F.softmax(scores, keep);
    var o = data.values[0].map(function (_, c) {
      return w.reduce(function (s, wj, j) { return s + wj * data.values[j][c]; }, 0);
    });
    return {scores: scores, keep: keep, weights: w, output: o};
  }

  function heads() { return state.head === "both" ? ["1", "2"] : [state.head]; }

  function draw() {
    var i = state.query, hs = heads(), res = {}, matrix = {};
    hs.forEach(function (h) {
      res[h] = attend(h, i);
      matrix[h] = data.words.map(function (_, r) { return attend(h, r).weights; });
    });
    var head = ["key vector"], rows;
    hs.forEach(function (h) {
    var tag = hs.length === 2 ? " h" + h : "";  // both heads: h1, h2
    head.push("score" + tag, "weight" + tag);
  });
    rows = data.words.map(function (word, j) {
      var cells = ["[" + data.keys[j].map(function (x) { return F.fmt(x, 1); }).join(", ") + "]"];
      hs.forEach(function (h) {
        cells.push(res[h].keep[j] ? F.fmt(res[h].scores[j], 4) : "masked");
        cells.push(res[h].keep[j] ? F.fmt(100 * res[h].weights[j], 1) + "%" : "masked");
      });
      return [word, cells];
    });
    F.fill(F.part(root, "keys"), [F.table('Keys seen by the query "' + data.words[i] + '"' + (hs.length === 2 ? " (h1, h2: head 1, head 2)" : ", head " + hs[0]), head, rows, {corner: "key"})]);

    var output = [];
    hs.forEach(function (h) { output = output.concat(res[h].output); });
    var label = hs.length === 2 ? "o = [o(head 1), o(head 2)], concatenated" : "o = Σ w·v, head " + hs[0];
    F.fill(F.part(root, "output"), [F.el("p", {}, [
      F.el("strong", {text: "Output of \u201c" + data.words[i] + "\u201d: "}),
      F.el("span", {"data-part": "outvec", text: "[" + output.map(function (x) { return F.fmt(x, 4); }).join(", ") + "]"}),
      F.el("br"), F.el("span", {text: label})])]);

    F.fill(F.part(root, "heatmaps"), hs.map(function (h) {
      var t = F.table("Weights in %, head " + h + (state.mask ? ", causal mask" : "") + " (rows: queries)",
        data.words.concat(["row sum"]),
        matrix[h].map(function (w, r) {
          var sum = w.reduce(function (a, b) { return a + b; }, 0);
          return [data.words[r], w.map(function (x) { return 100 * x; }).concat([F.fmt(100 * sum, 1) + "%"])];
        }),
        {digits: 1, selected: i, corner: "query \\ key",
         masked: function (r, c) { return state.mask && c > r && c < n; },
         onrow: function (r) { state.query = r; draw(); }});
      t.setAttribute("data-head", h);
      t.querySelectorAll("tbody td[data-value]").forEach(function (td) {
        if (td.getAttribute("data-value") !== "masked") F.shade(td, Number(td.getAttribute("data-value")) / 100);
      });
      return t;
    }));

    F.part(root, "summary").textContent = 'Query "' + data.words[i] + '", ' +
      (hs.length === 2 ? "both heads" : "head " + hs[0]) + (state.mask ? ", causal mask on" : ", no mask") + ".";
    root.querySelectorAll("button[data-word]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(Number(b.getAttribute("data-word")) === i));
    });
    root.querySelectorAll("button[data-head]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-head") === state.head));
    });
    var st = {query: i, word: data.words[i], head: state.head, mask: state.mask, output: output,
              scores: {}, weights: {}, matrix: matrix};
    hs.forEach(function (h) { st.scores[h] = res[h].scores; st.weights[h] = res[h].weights; });
    F.setState(root, st);
  }

  root.querySelectorAll("button[data-word]").forEach(function (b) {
    b.addEventListener("click", function () { state.query = Number(b.getAttribute("data-word")); draw(); });
  });
  root.querySelectorAll("button[data-head]").forEach(function (b) {
    b.addEventListener("click", function () { state.head = b.getAttribute("data-head"); draw(); });
  });
  F.part(root, "mask").addEventListener("change", function (e) { state.mask = e.target.checked; draw(); });
  draw();
}
