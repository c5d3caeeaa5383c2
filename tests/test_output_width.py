"""Printed output fits the book's text column, without a browser.

``tests/test_browser.py`` measures every output block of the built book in
Chromium. This test checks the same thing where no browser is installed, on the
stored notebooks: every line of text the book shows in a monospace block (printed
output, and a result's ``text/plain`` form when it has no HTML or image form) holds at
most ``MAX_CHARS`` characters. At 1280 px the column of an output block is 656 px
wide inside its padding; the book's monospace font is 14 px, 8.4 px a character in
DejaVu Sans Mono and Menlo (measured 8.43 in Chromium), so 77 characters fit, and
``MAX_CHARS`` leaves one for fonts a little wider. Results tables are shown as HTML
(``utils.book.layout.Table``), which the browser wraps, so only their text form is exempt.

It also checks ``utils.book.layout`` itself: both forms of a table, and the escaping.
"""

from __future__ import annotations

import json

import pytest
from notebooks import ROOT, all_ipynb

from utils.book.layout import Table, WrappedText

MAX_CHARS = 76
RICH = ("text/html", "image/png", "image/svg+xml", "image/jpeg", "text/markdown", "text/latex")


def shown_text(cell) -> list[str]:
    """The monospace text the book shows for a code cell (hidden cells included: a reader opens them)."""
    tags = set(cell.get("metadata", {}).get("tags", []))
    if tags & {"remove-cell", "remove-output"}:
        return []
    texts = []
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            if f"remove-{out['name']}" not in tags:
                texts.append("".join(out["text"]))
        elif out["output_type"] in ("execute_result", "display_data"):
            data = out.get("data", {})
            if "scrapbook" in out.get("metadata", {}) or any(m in data for m in RICH):
                continue  # glued values (shown in the prose) and rich outputs
            texts.append("".join(data.get("text/plain", "")))
        elif out["output_type"] == "error":
            texts.append("\n".join(out.get("traceback", [])))
    return texts


@pytest.mark.parametrize("nb_path", all_ipynb(), ids=lambda p: str(p.relative_to(ROOT)))
def test_printed_lines_fit_the_column(nb_path):
    nb = json.loads(nb_path.read_text())
    long = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        for text in shown_text(cell):
            long += [f"cell {i}: {len(line)} chars: {line[:90]}" for line in text.splitlines() if len(line) > MAX_CHARS]
    assert not long, (f"{len(long)} printed lines are longer than {MAX_CHARS} characters and would be cut at the "
                      "page width (wrap them with textwrap, split them, or show a utils.book.layout.Table):\n"
                      + "\n".join(long[:20]))


@pytest.mark.parametrize("nb_path", all_ipynb(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_figure_cell_shows_no_html_table(nb_path):
    """myst-nb makes every rich output of a cell with ``mystnb: figure`` metadata a figure:
    a Table there would get the plot's caption and number too. Print its rows instead."""
    nb = json.loads(nb_path.read_text())
    bad = [i for i, cell in enumerate(nb["cells"]) if cell["cell_type"] == "code"
           and "figure" in cell.get("metadata", {}).get("mystnb", {})
           and any("text/html" in out.get("data", {}) for out in cell.get("outputs", [])
                   if "scrapbook" not in out.get("metadata", {}))]
    assert not bad, f"figure cells {bad} also show HTML, which the book would caption as a second figure"


def test_a_table_has_a_text_form_and_an_html_form():
    t = Table([["base", "0.9077", "(1, 4, 6, 5)"], ["a<b", "12.5", "-"]], ["row", "value", "shape"],
              title="A & B")
    text = repr(t)
    assert text == str(t) == t.text()
    assert text.splitlines() == ["A & B",  # the title, then the columns (text left, numbers right)
                                 "row      value         shape",
                                 "-----  -------  ------------",
                                 "base    0.9077  (1, 4, 6, 5)",
                                 "a<b       12.5             -"]
    html = t._repr_html_()
    assert html == t._repr_html_(), "the HTML must be deterministic (nbval compares it)"
    assert html.startswith('<div class="course-table" style="overflow-x: auto;">')
    assert "<caption>A &amp; B</caption>" in html and "a&lt;b" in html and "a<b" not in html
    assert "(1,\u00a04,\u00a06,\u00a05)" in html, "a shape must not wrap inside its parentheses"
    assert "</td><td" not in html and "</th><th" not in html, "cells' text must stay apart in the page's text"
    assert "(1, 4, 6, 5)" in text, "the text form keeps plain spaces"


@pytest.mark.parametrize("kwargs, match", [
    (dict(rows=[["a"]], headers=["x", "y"]), "every row needs 2 cells"),
    (dict(rows=[["a", "b"]], headers=["x", "y"], align=["left"]), "align needs"),
    (dict(rows=[["a", "b"]], headers=["x", "y"], align=["left", "middle"]), "align needs"),
])
def test_a_malformed_table_is_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Table(**kwargs)


def test_wrapped_text_keeps_the_text_and_lets_the_browser_wrap():
    source = "def f(x):\n    return x < 1  # " + "long " * 30 + "\n"
    w = WrappedText(source)
    assert repr(w) == source
    assert w._repr_html_() == ('<pre class="course-wrapped" style="white-space: pre-wrap;">'
                               + source.replace("<", "&lt;") + "</pre>")
    with pytest.raises(TypeError):
        WrappedText(b"bytes")
