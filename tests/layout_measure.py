"""No output is cut at the page width: what ``tests/test_browser.py`` measures on every page.

While ``tests/test_browser.py`` opens every page of the served instructor edition in
Debian's Chromium (Playwright, ``executable_path``) at a 1280 x 900 window, it runs ``MEASURE``:
the width of a laptop, where the book's text column is about 690 px wide. Every output
block is measured: each cell's output container and, inside it, each output, ``<pre>``,
table and image. A block is *cut* when its content is wider than its box
(``scrollWidth > clientWidth + 1``: it scrolls sideways, hiding the numbers on the right)
or when it reaches past its output container. At 1280 px none may be cut. Every visible
table of the article is measured too: the narrowest gap between the texts of two cells side
by side in a row, and the pairs closer than ``GAP_PX``.

The same loaded page is then resized to a phone's width (390 x 844) and measured again
(one load per page serves both widths). There the count of cut
blocks is printed, not required to be zero: a phone's column holds about 40 characters
of output, fewer than a tensor's printed row. What is required at both widths is that
no page scrolls sideways as a whole: a wide block scrolls inside its own box (the
theme's ``<pre>``, the box around a ``utils.book.layout.Table``), and on a phone a long
identifier in the prose breaks (``utils/book/static/course_book.css``).

Every request that leaves 127.0.0.1 is aborted; MathJax ships with the book
(``utils/book/offline_math.py``), so typeset formulas are measured too. Needs Chromium (``apt-get install chromium``; ``bash .ci/test``
installs it when run as root) and the ``playwright`` package; without them the test is
skipped with the reason. Run them alone:
``.venv/bin/python -m pytest -c tests/pytest.ini --rootdir . -n 0 tests/test_browser.py -s -k "cut or sideways"``
(``-s`` shows the per-page counts).
"""

from __future__ import annotations

DESKTOP = {"width": 1280, "height": 900}
#: The least space between the texts of two cells side by side in any table of a page (px):
#: less, and two numbers read as one ("018,000" for a seed 0 beside 18,000 steps).
GAP_PX = 6
PHONE = {"width": 390, "height": 844}

# Every output block on the page, measured in the page as laid out. The output
# container (div.cell_output) and each output, <pre>, table and image in it: cut when
# its content is wider than its box, or when it reaches past its container's right edge.
MEASURE = """async () => {
  const GAP_PX = GAP_PX_VALUE;
  await new Promise(r => requestAnimationFrame(() => r()));  // after a resize, a fresh layout
  if (document.querySelector('article .math')) {  // let MathJax typeset, if it loads
    const t0 = Date.now();
    while (!(window.MathJax && MathJax.startup && MathJax.startup.promise) && Date.now() - t0 < 5000)
      await new Promise(r => setTimeout(r, 100));
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  }
  const cut = [];
  const outputs = [...document.querySelectorAll('article div.cell_output')];
  outputs.forEach((box, i) => {
    const right = box.getBoundingClientRect().right;
    const parts = [box, ...box.querySelectorAll('div.output, pre, table, img, figure')];
    const over = parts.filter(el => el.scrollWidth > el.clientWidth + 1
                                    || el.getBoundingClientRect().right > right + 1);
    if (over.length) {
      const el = over[over.length - 1];
      cut.push({index: i, tag: el.tagName.toLowerCase(), content: el.scrollWidth, box: el.clientWidth,
                text: (box.innerText || '').trim().split('\\n')[0].slice(0, 70)});
    }
  });
  // Every table of the article: the narrowest gap between the texts of two cells side by side.
  const close = [];
  let tables = 0, narrowest = null;
  const textBox = cell => {
    const range = document.createRange();
    range.selectNodeContents(cell);
    const r = range.getBoundingClientRect();
    return (cell.innerText || '').trim() && r.width > 0 ? r : null;
  };
  document.querySelectorAll('article table').forEach(table => {
    if (!table.offsetParent) return;  // hidden (a closed dropdown)
    tables += 1;
    table.querySelectorAll('tr').forEach(tr => {
      const boxes = [...tr.children].map(textBox);
      for (let i = 0; i + 1 < boxes.length; i++) {
        if (!boxes[i] || !boxes[i + 1]) continue;
        const gap = boxes[i + 1].left - boxes[i].right;
        if (narrowest === null || gap < narrowest) narrowest = gap;
        if (gap < GAP_PX && close.length < 5)
          close.push({gap: Math.round(gap * 10) / 10, text: tr.children[i].innerText.trim().slice(0, 30) + ' | ' +
                      tr.children[i + 1].innerText.trim().slice(0, 30)});
      }
    });
  });
  // Code cells whose lines run past their box (hidden behind a sideways scrollbar), and words of
  // a table cell split across two lines anywhere but after a hyphen or a slash ("W|ER").
  const code = [...document.querySelectorAll('article div.cell_input pre')]
    .filter(pre => pre.offsetParent && pre.scrollWidth > pre.clientWidth + 1)
    .map(pre => pre.textContent.split('\\n').reduce((a, b) => b.length > a.length ? b : a, '').slice(0, 70));
  const broken = [];
  document.querySelectorAll('article table th, article table td').forEach(cell => {
    if (!cell.offsetParent) return;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const words = /\\S+/g;
      for (let m = words.exec(node.textContent); m; m = words.exec(node.textContent)) {
        const top = k => { const r = document.createRange(); r.setStart(node, m.index + k); r.setEnd(node, m.index + k + 1);
                           const rects = r.getClientRects(); return rects.length ? Math.round(rects[0].top) : null; };
        for (let k = 1; k < m[0].length; k++) {
          const a = top(k - 1), b = top(k);
          if (a !== null && b !== null && b > a) {
            if (!/[-\\/\\u2011]/.test(m[0][k - 1]) && broken.length < 5) broken.push(m[0] + ' in ' + cell.textContent.trim().slice(0, 40));
            break;
          }
        }
      }
    }
  });
  const column = document.querySelector('article');
  const root = document.scrollingElement;
  return {outputs: outputs.length, cut: cut, column: column ? column.clientWidth : 0, tables: tables,
          code_clipped: code, broken_words: broken,
          narrowest_gap: narrowest, close: close,
          math: document.querySelectorAll('article mjx-container').length,
          page_overflow: root.scrollWidth > root.clientWidth + 1 ? root.scrollWidth - root.clientWidth : 0};
}""".replace("GAP_PX_VALUE", str(GAP_PX))


def summary(reports, viewport) -> str:
    """The count of cut blocks and sideways-scrolling pages at ``viewport``, then each cut block."""
    total = sum(len(r["cut"]) for r in reports.values())
    pages = sum(bool(r["cut"]) for r in reports.values())
    outputs = sum(r["outputs"] for r in reports.values())
    wide = [name for name, r in reports.items() if r["page_overflow"]]
    math = sum(r["math"] for r in reports.values())
    lines = [f"at {viewport['width']} px: {total} of {outputs} output blocks cut, on {pages} pages; "
             f"{len(wide)} pages scroll sideways{': ' + ', '.join(wide) if wide else ''} "
             f"({math} typeset formulas{'' if math else ': MathJax did not load'})"]
    for name, r in reports.items():
        if r["cut"]:
            lines.append(f"  {name}: {len(r['cut'])} of {r['outputs']} (column {r['column']} px)")
            lines += [f"    #{c['index']} <{c['tag']}> {c['content']} > {c['box']} px: {c['text']}" for c in r["cut"]]
    return "\n".join(lines)
