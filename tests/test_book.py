"""The book builds with warnings as errors, from the committed, executed .ipynb files
(nothing is executed at build time: nbval executes and compares every notebook)."""

import re

from bookbuild import HTML, sphinx_warnings
from notebooks import toc_files

# The session fixture `built_book` (conftest.py) builds the book once, with
# `jupyter-book build . -W -n --keep-going` via utils/book/editions.py (= bash .ci/build).


def test_the_book_renders_the_stored_outputs():
    """Execution is off and the pages come from the .ipynb, not from the paired .md."""
    from notebooks import config

    cfg = config()
    assert cfg["execute"]["execute_notebooks"] == "off", cfg["execute"]
    assert {"chapters/[0-9]*.md", "solutions/*.md"} <= set(cfg["exclude_patterns"]), cfg["exclude_patterns"]


def test_book_builds_without_warnings(built_book):
    rc, log = built_book
    warnings = sphinx_warnings(log)
    assert rc == 0 and not warnings, "book build failed:\n" + "\n".join(warnings or log.splitlines()[-40:])


def test_every_toc_page_is_built(built_book):
    for name in toc_files():
        page = HTML / f"{name}.html"
        assert page.exists(), f"{page} was not built"


def test_math_and_figures_are_in_the_html(built_book):
    page = (HTML / "chapters" / "02_scaled_dot_product_attention.html").read_text()
    assert "\\sqrt{d_k}" in page, "the attention formula is missing from chapter 2"
    assert "<img" in page, "chapter 2 should show its figures"


def test_math_pages_load_the_shipped_mathjax(built_book):
    """Every page with math loads MathJax 3 from the book itself (utils/book/offline_math.py),
    never from a CDN, and the script it names is in the build. (The browser test checks that
    it typesets, offline and from file://; this check runs where Chromium is missing.)"""
    shipped = HTML / "_static" / "mathjax"
    assert (shipped / "tex-mml-svg.js").is_file() and (shipped / "NOTICE.txt").is_file(), f"no MathJax in {shipped}"
    pages = sorted(HTML.rglob("*.html"))
    with_math = [p for p in pages if 'class="math' in p.read_text(encoding="utf-8")]
    assert with_math, "no page with math"
    bad = []
    for page in pages:
        html = page.read_text(encoding="utf-8")
        srcs = re.findall(r'<script[^>]*\bsrc="([^"]+)"', html)
        bad += [f"{page.relative_to(HTML)}: script from another host: {s}" for s in srcs if "://" in s]
        if page in with_math:
            mathjax = [s for s in srcs if "mathjax" in s.lower()]
            if not mathjax:
                bad.append(f"{page.relative_to(HTML)}: has math but loads no MathJax")
            for s in mathjax:
                if not (page.parent / s.split("?")[0]).resolve().is_file():
                    bad.append(f"{page.relative_to(HTML)}: {s} is not in the build")
    assert not bad, "\n".join(bad[:30])
