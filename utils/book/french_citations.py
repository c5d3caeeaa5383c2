"""The French edition's citations and bibliography: « Kudo et Richardson, 2018 », « s. d. », the notes in French.

sphinxcontrib-bibtex writes a citation's label (``author_year``: "Kudo and Richardson, 2018")
and the bibliography's entries (pybtex's ``alpha`` style) in English. On French pages:

* the author lists join their last two names with « et » in the labels and in the entries:
  two styles registered with pybtex's plugin system (``register``), a referencing style
  ``author_year_fr`` (sphinxcontrib-bibtex's ``author_year`` with its ``PersonStyle``'s
  separators changed) and a formatting style ``alpha_fr`` (pybtex's ``alpha`` with the
  separators of ``format_names`` changed); ``editions.language_config`` selects them;
* the rest is data of ``chapters/references.bib`` or a fixed word of those styles: each
  note (``note = {...}``), "arXiv preprint" (a journal field), "n.d." (no year) and "URL:"
  are read from the catalogue ``locales/fr/LC_MESSAGES/bibliography.po``
  (``translate_citations``, hooked on ``doctree-resolved``), in the labels, the tooltips
  that repeat an entry and the entries themselves. A phrase the catalogue lacks is a build
  warning. Titles of works stay as published.

``bibliography.pot`` (``translations.EXTRA_TEMPLATES``) holds those phrases (``bibliography_messages``).
"""

from __future__ import annotations

import functools
import pathlib
import re
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parents[2]
LANG = "fr"
#: The catalogue's domain: ``locales/fr/LC_MESSAGES/bibliography.po``.
DOMAIN = "bibliography"
BIB = ROOT / "chapters" / "references.bib"
#: The words the styles write themselves (not data of the .bib file) that a French page changes;
#: "others" is the name pybtex writes for ``and others`` (« et al. »).
FIXED = ("n.d.", "URL:", "others")
#: How the French names join: « A, B et C », « A et B »; two citations in one bracket: « ; ».
SEP2 = LAST_SEP = " et "
CITATION_SEP = "\u202f; "
#: The names of the French styles (``editions.language_config``).
REFERENCE_STYLE, FORMAT_STYLE = "author_year_fr", "alpha_fr"


def register() -> None:
    """Register ``author_year_fr`` with sphinxcontrib-bibtex and ``alpha_fr`` with pybtex (idempotent)."""
    import pybtex.plugin
    import sphinxcontrib.bibtex.plugin
    from pybtex.style.formatting.alpha import Style as Alpha
    from pybtex.style.template import names, sentence
    from sphinxcontrib.bibtex.style.referencing import BracketStyle, PersonStyle
    from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

    @dataclass
    class FrenchAuthorYear(AuthorYearReferenceStyle):
        """``author_year`` with « et » between the last two names, « ; » between two citations."""
        person: PersonStyle = field(default_factory=lambda: PersonStyle(sep2=SEP2, last_sep=LAST_SEP))
        bracket_parenthetical: BracketStyle = field(default_factory=lambda: BracketStyle(sep=CITATION_SEP))
        bracket_textual: BracketStyle = field(default_factory=lambda: BracketStyle(sep=CITATION_SEP))

    class FrenchAlpha(Alpha):
        """pybtex's ``alpha`` with « et » between the last two names."""
        default_sorting_style = Alpha.default_sorting_style
        default_label_style = Alpha.default_label_style

        def format_names(self, role, as_sentence=True):
            formatted = names(role, sep=", ", sep2=SEP2, last_sep=LAST_SEP)
            return sentence[formatted] if as_sentence else formatted

    try:
        sphinxcontrib.bibtex.plugin.find_plugin("sphinxcontrib.bibtex.style.referencing", REFERENCE_STYLE)
    except ImportError:
        sphinxcontrib.bibtex.plugin.register_plugin("sphinxcontrib.bibtex.style.referencing", REFERENCE_STYLE,
                                                    FrenchAuthorYear)
    try:
        pybtex.plugin.find_plugin("pybtex.style.formatting", FORMAT_STYLE)
    except pybtex.plugin.PluginNotFound:
        pybtex.plugin.register_plugin("pybtex.style.formatting", FORMAT_STYLE, FrenchAlpha)


def bibliography_messages(bib: pathlib.Path = BIB) -> list[tuple[str, str]]:
    """(context, phrase) of the template ``bibliography.pot``: each note of ``bib``, each distinct
    "arXiv preprint" of its journal fields, and ``FIXED``."""
    from pybtex.database import parse_file

    out = []
    for entry in parse_file(str(bib)).entries.values():
        note = entry.fields.get("note")
        if note and ("bibliography", note) not in out:
            out.append(("bibliography", note))
        journal = entry.fields.get("journal", "")
        if journal.startswith("arXiv preprint") and ("bibliography", "arXiv preprint") not in out:
            out.append(("bibliography", "arXiv preprint"))
    return out + [("bibliography", w) for w in FIXED]


@functools.lru_cache(maxsize=1)
def _by_length() -> tuple[str, ...]:
    return tuple(sorted({p for _, p in bibliography_messages()}, key=len, reverse=True))


def translate_text(text: str, phrases: dict[str, str]) -> tuple[str, list[str]]:
    """``text`` (a label, a tooltip or a piece of an entry) with each phrase of the template
    replaced by its French from ``phrases`` (longest first; "n.d." only as a whole word);
    returns (the text, the phrases found that ``phrases`` lacks)."""
    missing = []
    for english in _by_length():
        pattern = {"n.d.": r"(?<!\w)n\.d\.", "others": r"(?<= et )others\b"}.get(english, re.escape(english))
        if re.search(pattern, text):
            if english not in phrases:
                missing.append(english)
                continue
            text = re.sub(pattern, phrases[english].replace("\\", "\\\\"), text)
    return text, missing


def _phrases(app) -> dict[str, str]:
    cache = app.__dict__.setdefault("_course_bibliography_phrases", {})
    if "table" not in cache:
        from french_outputs import phrase_table  # utils/book is on the path of a local extension

        path = pathlib.Path(app.srcdir) / app.config.locale_dirs[0] / LANG / "LC_MESSAGES" / f"{DOMAIN}.po"
        cache["table"] = phrase_table(path).get("bibliography", {})
    return cache["table"]


def translate_citations(app, doctree, docname) -> None:
    """French edition (``doctree-resolved``): the phrases of ``bibliography_messages`` in French in
    the citations' labels and tooltips and in the bibliography's entries; a phrase without a
    translation is a build warning."""
    if (app.config.language or "en") != LANG or app.builder.format != "html":
        return
    from docutils import nodes
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    phrases, missing = _phrases(app), []
    for node in doctree.findall(nodes.reference):
        if "reftitle" in node:  # a citation's tooltip: its bibliography entry
            node["reftitle"], lost = translate_text(node["reftitle"], phrases)
            missing += lost
    for root in list(doctree.findall(nodes.citation)) + [
            r for r in doctree.findall(nodes.reference) if "reftitle" in r]:
        for text in list(root.findall(nodes.Text)):
            french, lost = translate_text(str(text), phrases)
            missing += lost
            if french != str(text):
                text.parent.replace(text, nodes.Text(french))
    for phrase in dict.fromkeys(missing):
        logger.warning(f"the bibliography's phrase {phrase!r} has no {LANG} translation in "
                       f"locales/{LANG}/LC_MESSAGES/{DOMAIN}.po (run bash .ci/translations update)", location=docname)
