// Chapter 16: the cross-attention of one sentence pair (see utils/figures/cross_attention.py).
function aiaynFigure_cross_attention(root, data) {
  var F = window.aiaynFig, L = F.locale(root), W = data.weights, nL = W.length, nH = W[0].length;
  var T = data.tgt.length, S = data.src.length;
  var state = {layer: data.layer, head: data.head, query: data.query};

  function mean(rows) {  // element-wise, summed in order (as utils/figures/cross_attention.py does)
    return rows[0].map(function (_, j) {
      return rows.reduce(function (s, r) { return s + r[j]; }, 0) / rows.length;
    });
  }
  // the (T, S) matrix of one layer ("avg": the layers averaged) and one head ("avg": the heads averaged)
  function matrix(layer, head) {
    var heads = [], k, l;
    for (k = 0; k < nH; k++) {
      if (layer === "avg") {
        var per = [];
        for (l = 0; l < nL; l++) per.push(W[l][k]);
        heads.push(W[0][k].map(function (_, t) { return mean(per.map(function (m) { return m[t]; })); }));
      } else heads.push(W[Number(layer) - 1][k]);
    }
    if (head !== "avg") return heads[Number(head) - 1];
    return heads[0].map(function (_, t) { return mean(heads.map(function (m) { return m[t]; })); });
  }
  function pct(x) { return L.pct(100 * x, 1); }
  function inputOf(t) { return t === 0 ? "<s>" : data.tgt[t - 1]; }

  // the words "scroll it sideways" while the heat map is wider than its box, and only then
  function showScrollCue() {
    var box = F.part(root, "heatmap");
    F.part(root, "scrollcue").hidden = box.scrollWidth <= box.clientWidth + 1;
  }
  window.addEventListener("resize", showScrollCue);

  function draw() {
    var m = matrix(state.layer, state.head), i = state.query, row = m[i];
    var order = row.map(function (_, j) { return j; });
    order.sort(function (a, b) { return row[b] - row[a] || a - b; });
    var top = order[0];
    var where = L.t("where", {
      layer: state.layer === "avg" ? L.t("layers_averaged") : L.t("layer_n", {layer: state.layer}),
      head: state.head === "avg" ? L.t("heads_averaged") : L.t("head_n", {head: state.head})});
    var piece = {piece: data.tgt[i], input: inputOf(i), where: where};

    F.fill(F.part(root, "sorted"), [F.table(L.t("sorted_caption", piece),
      [L.t("german_piece"), L.t("position"), L.t("weight")],
      order.map(function (j, r) { return [L.t("rank_n", {rank: r + 1}), [data.src[j], String(j + 1), pct(row[j])]]; }),
      {corner: L.t("rank"), selected: 0, L: L})]);

    // The title sits above the table, not in a <caption>: in the box that scrolls sideways on a
    // phone a caption is as wide as the table and was cut mid-word; a paragraph wraps at the box.
    var title = L.t("heatmap_title", piece);
    var t = F.table("",
      data.src.concat([L.t("row_sum")]),
      m.map(function (w, r) {
        var sum = w.reduce(function (a, b) { return a + b; }, 0);
        return ["\u2192 " + data.tgt[r], w.map(function (x) { return 100 * x; }).concat([pct(sum)])];
      }),
      {digits: 1, selected: i, corner: L.t("heatmap_corner"), L: L,
       onrow: function (r) { state.query = r; draw(); }});
    t.querySelectorAll("tbody td[data-value]").forEach(function (td) {
      F.shade(td, Number(td.getAttribute("data-value")) / 100);
    });
    t.setAttribute("aria-label", title);
    F.fill(F.part(root, "heatmap"), [F.el("p", {class: "fig-table-title", text: title}), t]);
    showScrollCue();

    F.part(root, "summary").textContent = L.t("summary", {
      where: where.charAt(0).toUpperCase() + where.slice(1), piece: data.tgt[i], input: inputOf(i),
      top: data.src[top], position: top + 1, pieces: S, weight: pct(row[top])});
    root.querySelectorAll("button[data-layer]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-layer") === state.layer));
    });
    root.querySelectorAll("button[data-head]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-head") === state.head));
    });
    root.querySelectorAll("button[data-query]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(Number(b.getAttribute("data-query")) === i));
    });
    F.setState(root, {layer: state.layer, head: state.head, query: i, piece: data.tgt[i], input: inputOf(i),
                      weights: row, order: order, top: top, top_piece: data.src[top], matrix: m});
  }

  root.querySelectorAll("button[data-layer]").forEach(function (b) {
    b.addEventListener("click", function () { state.layer = b.getAttribute("data-layer"); draw(); });
  });
  root.querySelectorAll("button[data-head]").forEach(function (b) {
    b.addEventListener("click", function () { state.head = b.getAttribute("data-head"); draw(); });
  });
  root.querySelectorAll("button[data-query]").forEach(function (b) {
    b.addEventListener("click", function () { state.query = Number(b.getAttribute("data-query")); draw(); });
  });
  F.part(root, "heatmap").addEventListener("keydown", function (e) {
    var go = {ArrowDown: state.query + 1, ArrowUp: state.query - 1, Home: 0, End: T - 1}[e.key];
    if (go === undefined) return;
    state.query = Math.max(0, Math.min(T - 1, go));
    e.preventDefault();
    draw();
  });
  draw();
}
