// Helpers shared by the course's interactive figures (inlined before each figure's script).
// Only `var` and function declarations at the top level: a page may inline this file
// several times, and a second `const` or `let` of the same name would be an error. Each copy
// writes its helpers over the page's (in a notebook an older figure's copy may be there first).
var aiaynFig = window.aiaynFig = Object.assign(window.aiaynFig || {}, {
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
  // opts.shade (weights), opts.masked(i, j) marks hidden cells, opts.selected row index,
  // opts.L the figure's locale (F.locale: numbers and the word "masked" in its language)
  table: function (caption, head, rows, opts) {
    var F = window.aiaynFig, o = opts || {};
    var num = o.L ? o.L.num : F.fmt, maskedText = o.L ? o.L.t("masked") : "masked";
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
          td = F.el("td", {class: "fig-masked", text: maskedText, "data-value": "masked"});
        } else if (typeof v === "string") {
          td = F.el("td", {text: v});
        } else {
          td = F.el("td", {text: num(v, o.digits === undefined ? 4 : o.digits), "data-value": String(v)});
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
  // The figure's language and words. The page passes the strings a script writes as a table
  // {key: template} in the figure's data-strings attribute (English, from the figure's Python;
  // the French edition writes the catalogue's translation there and lang="fr" on the figure).
  // L.t(key, {name: value}) fills a template's {name} places; L.num, L.pct, L.int, L.sci,
  // L.pow10 and L.vec write numbers the way the language does: 0.4011, 4.0%, 1,000, 6.988e-4,
  // [1, 2] in English; 0,4011, 4,0 %, 1 000, 6,988 × 10⁻⁴, [1 ; 2] in French (narrow no-break
  // spaces, U+202F, before % and ; and between thousands; no-break spaces around ×).
  locale: function (root) {
    var F = window.aiaynFig, holder = root.closest("[lang]");
    var lang = ((holder && holder.getAttribute("lang")) || "en").slice(0, 2).toLowerCase();
    var strings = JSON.parse(root.getAttribute("data-strings") || "{}"), fr = lang === "fr";
    var NNBSP = "\u202f", NBSP = "\u00a0", SUP = "⁰¹²³⁴⁵⁶⁷⁸⁹";
    function group(intPart, sep) {  // "-1234567" -> "-1" + sep + "234" + sep + "567"
      var sign = intPart.charAt(0) === "-" ? "-" : "", d = intPart.slice(sign.length), out = "";
      while (d.length > 3) { out = sep + d.slice(-3) + out; d = d.slice(0, -3); }
      return sign + d + out;
    }
    function sup(n) {
      return String(n).split("").map(function (c) { return c === "-" ? "⁻" : SUP.charAt(Number(c)); }).join("");
    }
    var L = {lang: lang, strings: strings};
    L.t = function (key, args) {
      var s = Object.prototype.hasOwnProperty.call(strings, key) ? strings[key] : key;
      return s.replace(/\{([a-z0-9_]+)\}/g, function (m, k) {
        return args && Object.prototype.hasOwnProperty.call(args, k) ? String(args[k]) : m;
      });
    };
    L.num = function (x, digits) { var s = F.fmt(x, digits); return fr ? s.replace(".", ",") : s; };
    L.pct = function (x, digits) { return L.num(x, digits) + (fr ? NNBSP : "") + "%"; };
    L.int = function (n) { return group(String(Math.round(n)), fr ? NNBSP : ","); };
    L.sci = function (x, digits) {
      var s = x.toExponential(digits);
      if (!fr) return s;
      var m = s.split("e"), e = Number(m[1]);
      return (m[0] === "1" ? "" : m[0].replace(".", ",") + NBSP + "×" + NBSP) + "10" + sup(e);
    };
    L.pow10 = function (e) { return fr ? "10" + sup(e) : "1e" + e; };
    L.vec = function (xs, digits) {
      return "[" + xs.map(function (x) { return typeof x === "string" ? x : L.num(x, digits); })
        .join(fr ? NNBSP + "; " : ", ") + "]";
    };
    return L;
  },
  // replace the children of `box` by `nodes`
  fill: function (box, nodes) {
    while (box.firstChild) box.removeChild(box.firstChild);
    nodes.forEach(function (n) { box.appendChild(n); });
  },
  part: function (root, name) { return root.querySelector('[data-part="' + name + '"]'); },
  setState: function (root, state) { root.setAttribute("data-state", JSON.stringify(state)); }
});
