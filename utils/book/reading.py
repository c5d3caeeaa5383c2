"""How much prose a built page asks a learner to read: the word budgets of issue 54.

    python -m utils.book.reading _build/html            # every chapter and lab page of a built book

``prose_words`` counts the words of the paragraphs and list items of a page's article, as a
reader meets them: code, printed outputs, tables and math are left out; dropdowns are
counted (an answer, a "more on this" box), except a figure's long description, which
is there for readers who cannot see the figure. Solutions count too: the instructor
edition, the book's main build, shows them. A word is what whitespace separates.
"""

from __future__ import annotations

import pathlib
import re
import sys

#: The most words of prose a chapter may have (``prose_words`` on the built English book):
#: the capstones (chapters 15 to 17) and every other chapter. Lab pages have no budget.
CAPSTONE_BUDGET = 4500
CHAPTER_BUDGET = 5000
CAPSTONES = ("15", "16", "17")


def budget(stem: str) -> int | None:
    """The word budget of the page ``stem`` (``"16_translation"``), or None for a page that
    has none (a lab page, the start page, references)."""
    if not re.fullmatch(r"\d\d_\w+", stem):
        return None
    return CAPSTONE_BUDGET if stem[:2] in CAPSTONES else CHAPTER_BUDGET


def prose_words(html: str) -> int:
    """Words of prose in the ``<article>`` of one built page (the module's docstring says
    what counts).

    Raises:
        ValueError: the page has no ``<article>`` (not a page of the built book).
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    article = soup.find("article")
    if article is None:
        raise ValueError("no <article> in this HTML: pass a page of the built book")
    for sel in ("div.cell_output", "pre", "table", "div.math", "span.math", "script", "style", "div.highlight",
                "details.hide", "div.cell_input"):
        for el in article.select(sel):
            el.decompose()
    for el in article.select("details"):
        summary = el.find("summary")
        if summary is not None and "Long description" in summary.get_text(" ", strip=True):
            el.decompose()
    words = 0
    for el in article.find_all(["p", "li"]):
        if el.find_parent(["p", "li"]) is None:
            words += len(el.get_text(" ", strip=True).split())
    return words


def counts(html_root) -> dict[str, int]:
    """{page stem: prose words} of every page under ``html_root``/chapters."""
    return {p.stem: prose_words(p.read_text(encoding="utf-8"))
            for p in sorted(pathlib.Path(html_root, "chapters").glob("*.html"))}


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else "_build/html"
    for stem, n in counts(root).items():
        b = budget(stem)
        print(f"{stem:40} {n:6,}" + (f"  (budget {b:,}{', OVER' if n > b else ''})" if b else ""))
