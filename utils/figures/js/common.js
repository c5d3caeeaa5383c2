// Helpers shared by the course's interactive figures (inlined before each figure's script).
// Only `var` and function declarations at the top level: a page may inline this file
// several times, and a second `const` or `let` of the same name would be an error.
var aiaynFig = window.aiaynFig || (window.aiaynFig = {
  // an element: el("td", {class: "x", text: "1.0"}, [children])
  el: function (tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { e.appendChild(c); });
    return e;
  },
  // fixed decimals, never "-0.000"
  fmt: function (x, digits) {
    var s = x.toFixed(digits);
    return /^-0\.?0*$/.test(s) ? s.slice(1) : s;
  },
  // softmax of one row; keep[j] false hides key j (weight 0, the rest renormalised)
  softmax: function (row, keep) {
    var m = -Infinity, i, out = [], sum = 0;
    for (i = 0; i < row.length; i++) if (!keep || keep[i]) m = Math.max(m, row[i]);
    for (i = 0; i < row.length; i++) {
      out.push(!keep || keep[i] ? Math.exp(row[i] - m) : 0);
      sum += out[i];
    }
    return out.map(function (x) { return x / sum; });
  },
  dot: function (a, b) {
    var s = 0;
    for (var i = 0; i < a.length; i++) s += a[i] * b[i];
    return s;
  },
  // grey background for a weight in [0, 1]; the text colour keeps the contrast
  shade: function (td, w) {
    var g = Math.round(255 - 200 * Math.max(0, Math.min(1, w)));
    td.style.background = "rgb(" + g + "," + g + "," + g + ")";
    td.style.color = g < 140 ? "#fff" : "#111";
  },
  // a table of numbers: head = column labels, rows = [[label, [values]]], opts.digits,
  // opts.shade (weights), opts.masked(i, j) marks hidden cells, opts.selected row index
  table: function (caption, head, rows, opts) {
    var F = window.aiaynFig, o = opts || {};
    var t = F.el("table", {class: "fig-num"});
    if (caption) t.appendChild(F.el("caption", {text: caption}));
    var tr = F.el("tr", {}, [F.el("th", {text: o.corner || "", scope: "col"})]);
    head.forEach(function (h) { tr.appendChild(F.el("th", {text: h, scope: "col"})); });
    t.appendChild(F.el("thead", {}, [tr]));
    var body = F.el("tbody");
    rows.forEach(function (r, i) {
      var row = F.el("tr", {}, [F.el("th", {text: r[0], scope: "row"})]);
      if (o.selected === i) row.className = "fig-sel";
      r[1].forEach(function (v, j) {
        var td;
        if (o.masked && o.masked(i, j)) {
          td = F.el("td", {class: "fig-masked", text: "masked", "data-value": "masked"});
        } else if (typeof v === "string") {
          td = F.el("td", {text: v});
        } else {
          td = F.el("td", {text: F.fmt(v, o.digits === undefined ? 4 : o.digits), "data-value": String(v)});
          if (o.shade) F.shade(td, v);
        }
        row.appendChild(td);
      });
      if (o.onrow) row.addEventListener("click", function () { o.onrow(i); });
      body.appendChild(row);
    });
    t.appendChild(body);
    return t;
  },
  // replace the children of `box` by `nodes`
  fill: function (box, nodes) {
    while (box.firstChild) box.removeChild(box.firstChild);
    nodes.forEach(function (n) { box.appendChild(n); });
  },
  part: function (root, name) { return root.querySelector('[data-part="' + name + '"]'); },
  setState: function (root, state) { root.setAttribute("data-state", JSON.stringify(state)); }
});
