"""The French edition's printed outputs: the answer checkers' messages, and the words of named tables.

The book shows the outputs stored in the executed notebooks, which the English code
printed. On a French page (``translate_outputs``, hooked on ``doctree-resolved`` by
``course_book.py``; nothing is executed by a build):

* every message of the answer checker in a printed output ("Exercise 2.1: not yet. ...")
  is written as ``check(..., lang="fr")`` prints it: ``utils.exercises.translate_output``
  reads the message back against the checker's own sentences and has the checker's
  functions write it again from ``checkers.po``. A line that starts as a message of the
  checker but that none of its sentences gives is a build warning (``-W`` fails): the
  notebook's outputs are older than its checker; re-execute it (``bash .ci/sync``).
* the cells of the columns that ``OUTPUT_TABLES`` names, in the results tables it names
  (``utils.book.layout.Table``), are translated from ``outputs.po`` (context: the page),
  and each such column is padded again to its new width. Only those: the rest of a table
  (numbers, names of runs, headers) and every other output stay as printed. A cell
  without a translation is a build warning, and so is a named table the page no longer shows.

``outputs.pot`` (``translations.EXTRA_TEMPLATES``) holds the words of those columns as the
notebooks' stored tables show them (``table_messages``), so ``bash .ci/translations update``
gives the translator each new one.
"""

from __future__ import annotations

import json
import pathlib
import sys
from typing import NamedTuple

ROOT = pathlib.Path(__file__).resolve().parents[2]
LANG = "fr"
#: The catalogue of the named tables' words, ``locales/fr/LC_MESSAGES/outputs.po``
#: (``translations.OUTPUTS_DOMAIN``; read here with babel, so that this module imports
#: nothing of ``translations``, which imports it).
DOMAIN = "outputs"


class OutputTable(NamedTuple):
    """Results tables of a page whose words in some columns a French page shows in French.

    ``headers`` are the table's first headers, which pick it out among the page's tables;
    ``columns`` the headers of the columns whose cells are translated (every column of that
    header, when two share it).
    """

    page: str
    headers: tuple[str, ...]
    columns: tuple[str, ...]


#: The named output tables (the verdicts of chapter 12, in the words its French prose uses).
OUTPUT_TABLES = (
    # "Our Table 3": each row's verdicts against its reference, beside the paper's row
    OutputTable("chapters/12_variations", ("row", "vs", "exact", "perplexity", "paper: row"), ("exact", "perplexity")),
    # the same verdicts, group by group ((A) to (D)) and for the rows that follow
    OutputTable("chapters/12_variations", ("row", "vs", "exact match (range)", "verdict", "perplexity (range)", "verdict"),
                ("verdict",)),
)


def _named(headers: list[str], page: str) -> list[OutputTable]:
    return [t for t in OUTPUT_TABLES if t.page == page and tuple(headers[:len(t.headers)]) == t.headers]


def _tables(html_text: str, page: str):
    """(table element, its header cells, the named tables it is) of each results table of ``html_text``."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html_text, "html.parser")
    out = []
    for table in soup.select("div.course-table table"):
        heads = table.select("thead th")
        named = _named([h.get_text().strip() for h in heads], page)
        if named:
            out.append((table, heads, named))
    return soup, out


def _columns(heads, named: list[OutputTable]) -> list[int]:
    wanted = {c for t in named for c in t.columns}
    return [i for i, h in enumerate(heads) if h.get_text().strip() in wanted]


def _pad(cell, text: str, width: int) -> str:
    """``text`` padded to ``width`` as tabulate pads the cell: by its alignment."""
    style = cell.get("style", "").replace(" ", "")
    if "text-align:right" in style:
        return text.rjust(width)
    if "text-align:center" in style:
        return text.center(width)
    return text.ljust(width)


def translate_tables(html_text: str, page: str, phrases: dict[str, str]) -> tuple[str, list[str], set[OutputTable]]:
    """The results tables of one output (HTML), with the named columns translated.

    Args:
        html_text: the HTML of an output (a ``Table``'s ``<div class="course-table">``).
        page: the page the output is on (``chapters/12_variations``).
        phrases: {English: translation} of the page's output words (``outputs.po``).

    Returns:
        (the HTML, unchanged if it holds no named table; the English words of named columns
        that ``phrases`` lacks; the ``OUTPUT_TABLES`` entries found in it).
    """
    if "course-table" not in html_text:
        return html_text, [], set()
    soup, tables = _tables(html_text, page)
    missing, found = [], set()
    for table, heads, named in tables:
        found |= set(named)
        rows = [tr.find_all("td") for tr in table.select("tbody tr")]
        for i in _columns(heads, named):
            cells = [heads[i]] + [row[i] for row in rows if i < len(row)]
            texts = [heads[i].get_text().strip()]
            for cell in cells[1:]:
                english = cell.get_text().strip()
                if english and english not in phrases:
                    missing.append(english)
                texts.append(phrases.get(english, english))
            width = max(len(t) for t in texts)
            for cell, text in zip(cells, texts):
                cell.string = _pad(cell, text, width)
    return (str(soup) if tables else html_text), missing, found


def table_messages(root: pathlib.Path = ROOT) -> list[tuple[str, str]]:
    """(page, word) of every cell of the named columns of ``OUTPUT_TABLES``, as the notebooks'
    stored outputs show them (the messages of the template ``outputs.pot``), each once per page."""
    out: list[tuple[str, str]] = []
    for page in dict.fromkeys(t.page for t in OUTPUT_TABLES):
        nb = json.loads((root / f"{page}.ipynb").read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            for o in cell.get("outputs", []):
                html_text = "".join(o.get("data", {}).get("text/html", ""))
                if "course-table" not in html_text:
                    continue
                for table, heads, named in _tables(html_text, page)[1]:
                    rows = [tr.find_all("td") for tr in table.select("tbody tr")]
                    for i in _columns(heads, named):
                        for row in rows:
                            word = row[i].get_text().strip() if i < len(row) else ""
                            if word and (page, word) not in out:
                                out.append((page, word))
    return out


def phrase_table(path: pathlib.Path) -> dict[str, dict[str, str]]:
    """{page: {English: translation}} of the catalogue ``path`` (``outputs.po``), without its
    fuzzy or untranslated messages; empty if there is no such file."""
    from babel.messages.pofile import read_po

    table: dict[str, dict[str, str]] = {}
    if path.is_file():
        with open(path, "rb") as f:
            for m in read_po(f):
                if m.id and m.string and not m.fuzzy:
                    table.setdefault(m.context, {})[m.id] = m.string
    return table


def _translate_output():
    """``utils.exercises.translate_output`` (Sphinx loads this file outside the package)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from utils.exercises import translate_output

    return translate_output


def translate_outputs(app, doctree, docname) -> None:
    """French edition (``doctree-resolved``): the answer checkers' messages of the page's printed
    outputs as the French checker prints them, and the named tables' words from ``outputs.po``.
    A message that cannot be read back, a word without a translation and a named table missing
    from its page are build warnings that name the page."""
    if (app.config.language or "en") != LANG or app.builder.format != "html":
        return
    from docutils import nodes
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    translate_output = _translate_output()
    for node in list(doctree.findall(nodes.literal_block)):
        if not {"output", "stream"} <= set(node.get("classes", [])):
            continue
        text = node.astext()
        try:
            french = translate_output(text, LANG)
        except ValueError as e:
            logger.warning(f"a printed message of the answer checker cannot be written in French: {e}; "
                           f"re-execute the notebook (bash .ci/sync {docname}.md)", location=docname)
            continue
        if french != text:
            node.rawsource = french  # the same text as the node's: the HTML writer still highlights it as output
            node[:] = [nodes.Text(french)]
    cache = app.__dict__.setdefault("_course_output_phrases", {})
    if "table" not in cache:
        cache["table"] = phrase_table(pathlib.Path(app.srcdir) / app.config.locale_dirs[0] / LANG / "LC_MESSAGES"
                                      / f"{DOMAIN}.po")
    phrases = cache["table"].get(docname, {})
    found: set[OutputTable] = set()
    for node in list(doctree.findall(nodes.raw)):
        if "html" not in node.get("format", ""):
            continue
        html_text, missing, tables = translate_tables(node.astext(), docname, phrases)
        found |= tables
        for word in dict.fromkeys(missing):
            logger.warning(f"the printed table's word {word!r} has no {LANG} translation in "
                           f"locales/{LANG}/LC_MESSAGES/{DOMAIN}.po (run bash .ci/translations update)",
                           location=docname)
        if html_text != node.astext():
            node.replace_self(nodes.raw("", html_text, format=node["format"], classes=node.get("classes", [])))
    for t in OUTPUT_TABLES:
        if t.page == docname and t not in found:
            logger.warning(f"no output table of this page has the headers {t.headers} that "
                           "utils/book/french_outputs.py OUTPUT_TABLES names", location=docname)
