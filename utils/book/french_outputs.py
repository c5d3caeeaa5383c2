"""The French edition's printed outputs: the answer checkers' messages, and the results tables.

The book shows the outputs stored in the executed notebooks, which the English code
printed. On a French page (``translate_outputs``, hooked on ``doctree-resolved`` by
``course_book.py``; nothing is executed by a build):

* every message of the answer checker in a printed output ("Exercise 2.1: not yet. ...")
  is written as ``check(..., lang="fr")`` prints it: ``utils.exercises.translate_output``
  reads the message back against the checker's own sentences and has the checker's
  functions write it again from ``checkers.po``. A line that starts as a message of the
  checker but that none of its sentences gives is a build warning (``-W`` fails): the
  notebook's outputs are older than its checker; re-execute it (``bash .ci/sync``).
* every results table (``utils.book.layout.Table``) is written in French: each header,
  caption and cell with words from ``outputs.po`` (context: the page; a name, such as a
  run's or a system's, is translated as itself), every other cell by rule (``french_cell``:
  « 0,5 », « 14 672 », « −3,1 », « 2,3 à 3,3 »; code such as ``p_drop=0.1`` as printed),
  each column padded again to its new width. A cell without a translation is a build warning.
  Other printed text (``print`` lines, tensors) stays as the English code printed it.

``outputs.pot`` (``translations.EXTRA_TEMPLATES``) holds the tables' words as the notebooks'
stored outputs show them (``table_messages``), so ``bash .ci/translations update`` gives the
translator each new one.
"""

from __future__ import annotations

import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
LANG = "fr"
#: The catalogue of the tables' words, ``locales/fr/LC_MESSAGES/outputs.po``
#: (``translations.OUTPUTS_DOMAIN``; read here with babel, so that this module imports
#: nothing of ``translations``, which imports it).
DOMAIN = "outputs"


#: A cell that is code, kept as printed: a name such as ``decoder_layers.0.norm1`` or ``d_ff``.
_CODE_NAME = re.compile(r"[A-Za-z_][\w]*(?:[._\[\]][\w\]]+)+")
#: A number as a table prints it: ``14,672``, ``-0.54``, ``+1.53``, ``26.2%``, ``3.3e18``.
_NUMBER = re.compile(r"(?<![\w.])(?P<pre>x(?=\d))?[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
                     r"(?P<unit>%|x)?(?![\w]|\.\d)")
#: The columns whose cells are names written with digits (« 3.2.1 », an alignment « 2-2 »): kept as printed.
KEEP_COLUMNS = ("section", "alignment")
#: A section number, 3.2.1: kept as it is.
_SECTION = re.compile(r"\d+(?:\.\d+){2,}")
#: The words that join numbers in a cell without other words: « 2,3 à 3,3 », « 1 293 sur 1 293 ».
CONNECTIVES = {"to": "à", "of": "sur"}


def has_words(text: str) -> bool:
    """Whether a cell of a printed table is words a French page translates (``outputs.po``): two
    letters in a row, outside settings written as code (``p_drop=0.1``) and outside code names
    (``decoder_layers.0.norm1``), and other than the connectives between numbers (``CONNECTIVES``)."""
    if _CODE_NAME.fullmatch(text.strip()):
        return False
    rest = re.sub(r"(?<![\w.])[A-Za-z_]\w*=[\w.+-]*", "", text)
    joined = "|".join([*CONNECTIVES, *CONNECTIVES.values()])
    rest = re.sub(rf"\b(?:{joined})\b", "", _NUMBER.sub("", rest))
    return re.search(r"[A-Za-z]{2,}", rest) is not None


def french_cell(text: str) -> str:
    """A printed table's cell without words written the French way: each number by
    ``numbers.french_number`` (decimal comma, thin spaces, U+2212 for a minus), a range
    ``9-11`` as « 9 à 11 », a bracketed list with « ; » (``numbers.french_glued``), the
    connectives of ``CONNECTIVES`` in French; code (``p_drop=0.1``, ``d_ff``) as printed."""
    numbers = _numbers()
    stripped = text.strip()
    if not stripped or _CODE_NAME.fullmatch(stripped) or _SECTION.fullmatch(stripped):
        return text
    glued = numbers.french_glued(stripped)
    if glued is not None:
        return glued
    parts = re.split(r"((?<![\w.])[A-Za-z_]\w*=[\w.+-]*)", stripped)  # settings stay as code
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(part)
            continue
        part = re.sub(r"\[([^\[\]]*)\]", lambda m: numbers.french_glued(m.group(0)) or m.group(0), part)
        part = _NUMBER.sub(lambda m: _french_number(m, numbers), part)
        part = re.sub(r"(?<=[\d)]) x (?=[\d(])", "\u00a0\u00d7\u00a0", part)  # 4 × (512 × 512 + 512)
        if re.search(r"\d,\d", part):  # decimal commas: items are separated by « ; » (×0,5 ; 1 000 ; 0,1)
            part = re.sub(r"(?<=[\d%×)]), (?=[-+\u2212×(]?\d)", "\u202f; ", part)
        part = re.sub(rf"\b({'|'.join(CONNECTIVES)})\b", lambda m: CONNECTIVES[m.group(1)], part)
        out.append(part)
    return "".join(out)


def _french_number(m: re.Match, numbers) -> str:
    """One number of a cell the French way; a factor « 5.7x » or « x0.5 » takes the sign ×."""
    text = m.group(0)[1:] if m.group("pre") else m.group(0)
    if m.group("unit") == "x":
        return (numbers.french_number(text[:-1]) or text[:-1]) + "\u00d7"
    french = numbers.french_number(text) or text
    return "\u00d7" + french if m.group("pre") else french


def _numbers():
    """``utils.book.french_numbers``, the French way of writing one number (Sphinx loads this file
    outside the package)."""
    try:
        from . import french_numbers
    except ImportError:
        import french_numbers
    return french_numbers


def _layout():
    """``utils.book.layout`` (Sphinx loads this file outside the package)."""
    try:
        from . import layout
    except ImportError:
        import layout
    return layout


def _pad(cell, text: str, width: int) -> str:
    """``text`` padded to ``width`` as tabulate pads the cell: by its alignment."""
    style = cell.get("style", "").replace(" ", "")
    if "text-align:right" in style:
        return text.rjust(width)
    if "text-align:center" in style:
        return text.center(width)
    return text.ljust(width)


def _tables(html_text: str):
    """(soup, the results tables ``utils.book.layout.Table`` printed in ``html_text``)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html_text, "html.parser")
    return soup, soup.select("div.course-table table")


def _columns(table) -> list[list]:
    """The cells of ``table`` column by column, the header first."""
    heads = table.select("thead th")
    rows = [tr.find_all("td") for tr in table.select("tbody tr")]
    return [[h] + [row[i] for row in rows if i < len(row)] for i, h in enumerate(heads)]


def translate_tables(html_text: str, phrases: dict[str, str]) -> tuple[str, list[str]]:
    """The results tables of one output (HTML) in French: each header, caption and cell with
    words from ``phrases``, every other cell by rule (``french_cell``), each column padded
    again to its new width.

    Args:
        html_text: the HTML of an output (a ``Table``'s ``<div class="course-table">``).
        phrases: {English: translation} of the page's table words (``outputs.po``).

    Returns:
        (the HTML, unchanged if it holds no such table; the English words that ``phrases`` lacks).
    """
    if "course-table" not in html_text:
        return html_text, []
    soup, tables = _tables(html_text)
    missing = []

    def french(english: str) -> str:
        if not has_words(english):
            return french_cell(english)
        if english not in phrases:
            missing.append(english)
        return phrases.get(english, english)

    for table in tables:
        caption = table.find("caption")
        if caption is not None and caption.get_text().strip():
            caption.string = french(caption.get_text().strip())
        for cells in _columns(table):
            if cells[0].get_text().strip() in KEEP_COLUMNS:
                cells[0].string = _pad(cells[0], french(cells[0].get_text().strip()), len(cells[0].get_text()))
                continue
            # as Table writes its body: no-break spaces inside each (...) group
            texts = [french(cell.get_text().strip()) for cell in cells[:1]] + [
                _layout().unbreakable_groups(french(cell.get_text().strip())) for cell in cells[1:]]
            width = max(len(t) for t in texts)
            for cell, text in zip(cells, texts):
                cell.string = _pad(cell, text, width)
    return (str(soup) if tables else html_text), missing


def _pages(root: pathlib.Path) -> list[pathlib.Path]:
    return sorted([*root.glob("chapters/*.ipynb"), *root.glob("solutions/*.ipynb")])


def table_messages(root: pathlib.Path = ROOT) -> list[tuple[str, str]]:
    """(page, words) of every header, caption and cell with words (``has_words``) of the results
    tables that the notebooks' stored outputs show (the messages of the template ``outputs.pot``),
    each once per page."""
    out: list[tuple[str, str]] = []
    for path in _pages(root):
        page = path.relative_to(root).with_suffix("").as_posix()
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            for o in cell.get("outputs", []):
                html_text = "".join(o.get("data", {}).get("text/html", ""))
                if "course-table" not in html_text:
                    continue
                for table in _tables(html_text)[1]:
                    caption = table.find("caption")
                    texts = [caption.get_text().strip()] if caption is not None else []
                    texts += [c.get_text().strip() for col in _columns(table) for c in col]
                    for word in texts:
                        if word and has_words(word) and (page, word) not in out:
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
    for node in list(doctree.findall(nodes.raw)):
        if "html" not in node.get("format", ""):
            continue
        html_text, missing = translate_tables(node.astext(), phrases)
        for word in dict.fromkeys(missing):
            logger.warning(f"the printed table's word {word!r} has no {LANG} translation in "
                           f"locales/{LANG}/LC_MESSAGES/{DOMAIN}.po (run bash .ci/translations update)",
                           location=docname)
        if html_text != node.astext():
            node.replace_self(nodes.raw("", html_text, format=node["format"], classes=node.get("classes", [])))
