// Chapter 2: attention over one sentence (see utils/figures/sentence.py).
function aiaynFigure_sentence(root, data) {
  var F = window.aiaynFig, L = F.locale(root), n = data.words.length, sqrtD = Math.sqrt(data.d_k);
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
    var i = state.query, hs = heads(), res = {}, matrix = {}, word = data.words[i], both = hs.length === 2;
    hs.forEach(function (h) {
      res[h] = attend(h, i);
      matrix[h] = data.words.map(function (_, r) { return attend(h, r).weights; });
    });
    var head = [L.t("key_vector")], rows;
    hs.forEach(function (h) {  // both heads: score h1, weight h1, score h2, weight h2
      head.push(both ? L.t("score_of_head", {head: h}) : L.t("score"),
                both ? L.t("weight_of_head", {head: h}) : L.t("weight"));
    });
    rows = data.words.map(function (w, j) {
      var cells = [L.vec(data.keys[j].map(function (x) { return L.num(x, 1); }))];
      hs.forEach(function (h) {
        cells.push(res[h].keep[j] ? L.num(res[h].scores[j], 4) : L.t("masked"));
        cells.push(res[h].keep[j] ? L.pct(100 * res[h].weights[j], 1) : L.t("masked"));
      });
      return [w, cells];
    });
    F.fill(F.part(root, "keys"), [F.table(
      both ? L.t("keys_caption_both", {word: word}) : L.t("keys_caption", {word: word, head: hs[0]}),
      head, rows, {corner: L.t("key"), L: L})]);

    var output = [];
    hs.forEach(function (h) { output = output.concat(res[h].output); });
    F.fill(F.part(root, "output"), [F.el("p", {}, [
      F.el("strong", {text: L.t("output_of", {word: word}) + " "}),
      F.el("span", {"data-part": "outvec", text: L.vec(output, 4)}),
      F.el("br"), F.el("span", {text: both ? L.t("output_both") : L.t("output_head", {head: hs[0]})})])]);

    F.fill(F.part(root, "heatmaps"), hs.map(function (h) {
      var t = F.table(L.t(state.mask ? "heatmap_caption_mask" : "heatmap_caption", {head: h}),
        data.words.concat([L.t("row_sum")]),
        matrix[h].map(function (w, r) {
          var sum = w.reduce(function (a, b) { return a + b; }, 0);
          return [data.words[r], w.map(function (x) { return 100 * x; }).concat([L.pct(100 * sum, 1)])];
        }),
        {digits: 1, selected: i, corner: L.t("query_key"), L: L,
         masked: function (r, c) { return state.mask && c > r && c < n; },
         onrow: function (r) { state.query = r; draw(); }});
      t.setAttribute("data-head", h);
      t.querySelectorAll("tbody td[data-value]").forEach(function (td) {
        if (td.getAttribute("data-value") !== "masked") F.shade(td, Number(td.getAttribute("data-value")) / 100);
      });
      return t;
    }));

    F.part(root, "summary").textContent = L.t("summary", {
      word: word, heads: both ? L.t("both_heads") : L.t("head_n", {head: hs[0]}),
      mask: L.t(state.mask ? "mask_on" : "mask_off")});
    root.querySelectorAll("button[data-word]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(Number(b.getAttribute("data-word")) === i));
    });
    root.querySelectorAll("button[data-head]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-head") === state.head));
    });
    var st = {query: i, word: word, head: state.head, mask: state.mask, output: output,
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
