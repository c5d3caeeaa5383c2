"""The book's translation catalogues: make them, update them, hand them to a translator, check them.

    python utils/book/translations.py update          # after an English prose change (bash .ci/translations)
    python utils/book/translations.py status          # how many messages are translated, per page
    python utils/book/translations.py export PO [OUT] # the messages of one catalogue still to translate, as text
    python utils/book/translations.py import PO IN    # put a translated export back into the catalogue
    python utils/book/translations.py check [PO ...]  # the rules below, for every catalogue (or the ones named)
    python utils/book/translations.py pairs PO        # English and French side by side, for a reviewer
    python utils/book/translations.py terms [PO ...]  # the words settled in locales/fr/CONVENTIONS.md (below)

**Where the text comes from.** Sphinx's gettext builder reads the executed notebooks of
the instructor edition (a superset of the student one) and writes one template per page
(``gettext_compact: false`` in ``_config.yml``): every heading, paragraph, list item,
caption, alt text, long description, knowledge check and exercise statement, in its MyST
source form (roles, math and inline code included). Glued values that are words, not
numbers (``{glue:text}`` of "within noise"), are collected here into one more template,
``glue.pot``, with the page as context; the French build looks them up there
(``utils/book/course_book.py``) and writes glued numbers (``french_glued``) and formulas
(``french_math``: ``0{,}3302``) the French way by rule. The interactive figures' texts,
those of their HTML and the templates their scripts write (``figure_texts``), make
``figures.pot``.
``sphinx-intl update`` then merges the templates into ``locales/LANG/LC_MESSAGES/``: a
new message arrives untranslated, a changed one fuzzy (with the old translation kept
as a draft), a removed one is dropped.

**The rules** (``problems``; ``tests/test_translations.py`` applies them to every message):

* every message is translated and none is fuzzy;
* every role (``{glue:text}``, ``{cite:p}``, ``{numref}``...), inline math, inline code
  and link target of the English survives unchanged; the text of a ``{doc}`` or
  ``{ref}`` link may be translated, its target may not; a formula block is copied as is;
* every number of the English is in the translation (``0.841`` may be ``0,841``; ``14,672``
  may be ``14 672``; ``3.3e18`` must be ``3,3 × 10¹⁸``), a product of sizes takes ×
  (``4 000 × 128``) and a unit after a number below 2 the singular (« 0,66 seconde »);
* French typography outside code and math: the apostrophe ’, « » quotes (no ``"``), a no-break space
  (U+00A0) before ``:`` and inside « », a narrow one (U+202F) before ``;``, ``?``, ``!``
  and ``%``. ``import`` puts these spaces in for the translator (``french_typography``),
  except inside a quotation of the English ("I have no clue!"), which keeps its spacing.

**The edition's words** (``terms``; tested in ``tests/test_translations.py``): the tables
of ``locales/fr/CONVENTIONS.md`` settle one French word per English one (« étape » for a
training step, « préchauffage (warmup) » glossed at its first use in a chapter...) and list
calques to avoid; ``term_problems`` finds a form those tables forbid, the impersonal « on »,
a parenthesis inside a parenthesis and a quotation of the paper translated another way,
``english_quote_problems`` quoted English with French spaces, ``gloss_problems`` a term's
first use in a chapter without its gloss.
"""

from __future__ import annotations

import ast
import collections
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOCALES = ROOT / "locales"
LANGUAGES = ("fr",)
GLUE_DOMAIN = "glue"
#: The answer checkers' feedback (``utils/exercises``: ``check(..., lang="fr")``).
CHECKERS_DOMAIN = "checkers"
#: The texts of the interactive figures (``utils/figures``) that a reader or a screen reader
#: meets before touching them: caption, description, alt texts (aria-label), control labels.
FIGURES_DOMAIN = "figures"
#: The texts with words of the static (matplotlib) figures, which ``french_plots.py`` draws again
#: in French and lists in ``locales/fr/plots/manifest.json``.
PLOTS_DOMAIN = "plots"
#: The words of the printed output tables that a French page shows in French, per page (the
#: verdicts of chapter 12's tables: ``french_outputs.OUTPUT_TABLES``).
OUTPUTS_DOMAIN = "outputs"
#: The citations' and the bibliography's phrases (``french_citations.bibliography_messages``).
BIBLIOGRAPHY_DOMAIN = "bibliography"
#: Buttons whose text is interface (a head, a layer, next/previous), not data (a word, a token).
_UI_BUTTONS = ("data-head", "data-layer", "data-part")
# The French way of writing one glued value (french_numbers.py, which imports nothing of the book's
# own: french_outputs.py uses it too, and this module imports french_outputs). Re-exported here.
try:
    from . import french_numbers
except ImportError:  # loaded as a file (Sphinx, the tests' spec loader): utils/book is beside it
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import french_numbers
NBSP, NNBSP, MINUS = french_numbers.NBSP, french_numbers.NNBSP, french_numbers.MINUS
SUPERSCRIPTS, FROM_SUPERSCRIPTS = french_numbers.SUPERSCRIPTS, french_numbers.FROM_SUPERSCRIPTS
french_number, french_glued, french_scientific = (french_numbers.french_number, french_numbers.french_glued,
                                                  french_numbers.french_scientific)
is_range, french_range = french_numbers.is_range, french_numbers.french_range

# ----------------------------------------------------------------------------- spans

# Protected spans: kept verbatim by a translation (or, for {doc}/{ref}/{numref} and
# Markdown links, their target is). Order matters: a role swallows its backticks first.
_ROLE = re.compile(r"(?<!`)\{(?P<name>[a-z][\w:-]*)\}`(?P<body>[^`]*)`")
_CODE = re.compile(r"(?P<ticks>`+)(?P<body>.+?)(?P=ticks)")
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)
_LINK = re.compile(r"\]\((?P<url>[^)\s]+)\)")
_URL = re.compile(r"https?://[^\s)>\]]+")
_HTML = re.compile(r"</?[a-zA-Z][^>\n]*>")
_AUTOLINK = re.compile(r"<https?://[^>]+>")
_FIELD = re.compile(r"\{[a-z_]+\}")
#: Roles whose text a translation may change; only the target (``<target>``, or the whole
#: body when there is no ``<...>``) must survive.
TEXT_ROLES = ("doc", "ref", "numref", "term")


def _role_key(m: re.Match) -> str:
    name, body = m.group("name"), m.group("body")
    if name in TEXT_ROLES:
        target = re.search(r"<([^<>]+)>\s*$", body)
        return f"{{{name}}}<{target.group(1) if target else body}>"
    return m.group(0)


def _protect(text: str) -> tuple[list[str], list[str], str]:
    """(the protected spans of ``text`` as written, their keys, ``text`` with each span
    replaced by ``\\x00``), spans in text order. A span's key is what a translation must
    keep: the span itself, or for a ``{doc}``-like role ``{doc}<target>`` and for a
    Markdown link ``](url)``."""
    items: list[tuple[int, str, str]] = []
    passes = [(_ROLE, _role_key), (_AUTOLINK, None), (_MATH, None), (_CODE, None),
              (_LINK, lambda m: f"]({m.group('url')})"), (_URL, None), (_HTML, None), (_FIELD, None)]
    taken = bytearray(len(text))
    for rx, key in passes:
        for m in rx.finditer(text):
            if any(taken[m.start():m.end()]):
                continue
            taken[m.start():m.end()] = b"\x01" * (m.end() - m.start())
            items.append((m.start(), m.group(0), key(m) if key else m.group(0)))
    items.sort()
    masked, pos = [], 0
    for start, span, _ in items:
        masked += [text[pos:start], "\x00"]
        pos = start + len(span)
    masked.append(text[pos:])
    return [i[1] for i in items], [i[2] for i in items], "".join(masked)


def protected(text: str) -> tuple[list[str], str]:
    """(the keys of the protected spans of ``text`` in order, the masked text)."""
    _, keys, masked = _protect(text)
    return keys, masked


def _unmask(masked: str, spans: list[str]) -> str:
    it = iter(spans)
    return re.sub("\x00", lambda m: next(it), masked)


def is_formula(msgid: str) -> bool:
    """A display-math block (extracted as its LaTeX): copied unchanged."""
    return msgid.startswith("\n") or msgid.lstrip().startswith("\\begin")


# ----------------------------------------------------------------------------- numbers

_SECTION_NUMBER = r"(?<![\w.])\d+(?:\.\d+){2,}(?![\w])"
_EN_NUMBER = re.compile(_SECTION_NUMBER + r"|(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d])"
                        r"|(?<![\w.,])\d+(?:\.\d+)?(?![\d])")
_FR_NUMBER = re.compile(_SECTION_NUMBER + r"|(?<![\w.,])\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?(?![\d])"
                        r"|(?<![\w.,])\d+(?:[.,]\d+)?(?![\d])")
#: Scientific notation as code writes it: 3.3e18, 1e-9, 2.703e-06 (English; in French prose a slip).
_E_NOTATION = re.compile(r"(?<![\w.,])(\d+(?:[.,]\d+)?)[eE]([-+]?\d+)(?!\w|[.,]\d)")
#: Scientific notation as French prose writes it: 3,3 × 10¹⁸, 10⁻⁹ (and, in an English glued value, 3.2 × 10¹⁴).
_TIMES_TEN = re.compile(r"(?:(?<![\w.,])(\d+(?:[.,]\d+)?)[ \u00a0\u202f]?×[ \u00a0\u202f]?)?(?<![\w.,])10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")


def _sci_key(mantissa: str, exponent: str) -> str:
    """One number in scientific notation, whichever way it is written: ``sci:3.3e+18``."""
    return f"sci:{float(mantissa.replace(',', '.')) * 10 ** int(exponent):.6g}"


def _numbers(masked: str, forms: tuple) -> tuple[list[str], str]:
    """(the scientific values of ``masked`` written in any of ``forms`` as ``sci:`` keys,
    ``masked`` without them)."""
    found = []

    def take(m):
        found.append(_sci_key(m.group(1) or "1", m.group(2).translate(FROM_SUPERSCRIPTS)))
        return " "
    for rx in forms:
        masked = rx.sub(take, masked)
    return found, masked


_SUFFIXED = re.compile(r"(?<![\w.,-])(\d+(?:\.\d+)?)([KM])(?![\w])")


def english_numbers(text: str) -> list[str]:
    """The numbers of English prose (outside protected spans), thousands separators removed
    (``40K`` gives ``40``; see ``english_number_options``; ``3.3e18`` gives ``sci:3.3e+18``,
    which a translation may write ``3,3 × 10¹⁸``)."""
    sci, masked = _numbers(protected(text)[1], (_E_NOTATION, _TIMES_TEN))
    return sorted(sci + [n.replace(",", "") for n in _EN_NUMBER.findall(masked)])


def english_number_options(text: str) -> list[set[str]]:
    """For each number of English prose, the forms a translation may give it: itself, and
    for ``40K`` or ``63.1M`` also ``40000`` or ``63100000`` (written out in French)."""
    masked = protected(text)[1]
    out = [{n} for n in english_numbers(text)]
    for m in _SUFFIXED.finditer(masked):
        value = float(m.group(1)) * (1000 if m.group(2) == "K" else 1_000_000)
        if value.is_integer():
            for options in out:
                if options == {m.group(1)}:
                    options.add(str(int(value)))
                    break
    return out


def french_numbers(text: str) -> list[str]:
    """The numbers of French prose, written the English way (``14 672,5`` -> ``14672.5``;
    ``3,3 × 10¹⁸`` -> ``sci:3.3e+18``)."""
    sci, masked = _numbers(protected(text)[1], (_TIMES_TEN, _E_NOTATION))
    out = sci
    for n in _FR_NUMBER.findall(masked):
        if n.count(".") >= 2:  # a section number, 3.2.1
            out.append(n)
        else:
            out.append(re.sub(r"[ \u00a0\u202f]", "", n).replace(",", "."))
    return sorted(out)


#: Words that follow a number in the French prose and take the singular below 2 (« 0,66 seconde »,
#: « 1,5 heure »): {plural: singular}.
UNITS_BELOW_TWO = {w + "s": w for w in (
    "seconde", "milliseconde", "minute", "heure", "jour", "semaine", "mois", "point", "million", "milliard",
    "étape", "époque", "paramètre", "jeton", "mot", "sous-mot", "paire", "phrase", "couche", "tête", "lettre",
    "ligne", "valeur", "exemple", "erreur", "graine", "cœur", "octet", "mégaoctet", "gigaoctet")}
UNITS_BELOW_TWO.pop("moiss")
_PLURAL_AFTER = re.compile(r"([ \u00a0\u202f]+)(" + "|".join(sorted(map(re.escape, UNITS_BELOW_TWO), key=len,
                                                                   reverse=True)) + r")(?![\w-])")


def _french_value(number: str) -> float | None:
    try:
        return float(re.sub(r"[ \u00a0\u202f]", "", number).replace(",", ".").replace("\u2212", "-"))
    except ValueError:
        return None


def singular_below_two(number: str, following: str) -> str:
    """``following`` (the text after a number written the French way) with a plural unit that
    starts it made singular when the number is below 2 in absolute value (« 0,66 secondes »
    -> « 0,66 seconde »), else unchanged."""
    value = _french_value(number)
    m = _PLURAL_AFTER.match(following)
    if value is None or abs(value) >= 2 or not m:
        return following
    return m.group(1) + UNITS_BELOW_TWO[m.group(2)] + following[m.end():]


def plural_below_two(text: str) -> list[str]:
    """The places of French ``text`` (its prose) where a number below 2 is followed by a plural
    unit of ``UNITS_BELOW_TWO`` (« 0,66 secondes »)."""
    out = []
    for m in _FR_NUMBER.finditer(text):
        if re.search(r"[-+\u2212×/*][ \u00a0\u202f]*$", text[:m.start()]):
            continue  # a term of a sum (« V - 1 jetons »), not a quantity below 2
        if m.group(0).count(".") < 2 and singular_below_two(m.group(0), text[m.end():]) != text[m.end():]:
            out.append(text[m.start():m.end() + 20])
    return out


# ----------------------------------------------------------------------------- formulas

_MATH_DECIMAL = re.compile(r"(?<![\w.\\])(\d+)\.(\d+)(?![\d.])")
_MATH_THOUSANDS = re.compile(r"(?<=\d)\{,\}(?=\d{3}(?!\d))")


def french_math(latex: str) -> str:
    """A formula (LaTeX, as in ``$...$`` or a display block) written the French way: a decimal
    comma in braces, so TeX adds no space after it (``0.3302`` -> ``0{,}3302``); thousands set
    off by a thin space (``33{,}088`` -> ``33\\,088``); and in a formula that holds a decimal
    number, the commas that separate items at the top level of the braces written ``\\,;``
    (``[0.7071, 0, 0.7071]`` -> ``[0{,}7071\\,; 0\\,; 0{,}7071]``: « 0,7071 ; 0 ; 0,7071 »).
    Commas inside braces (``x_{i,j}``) and TeX's ``\\,`` are not touched. Apply it once, to
    the English formula: in French ``{,}`` is the decimal comma."""
    out = _MATH_THOUSANDS.sub(r"\\,", latex)
    out, decimals = _MATH_DECIMAL.subn(r"\1{,}\2", out)
    if not decimals:
        return out
    text, depth = [], 0
    for i, ch in enumerate(out):
        if ch == "{" and (i == 0 or out[i - 1] != "\\"):
            depth += 1
        elif ch == "}" and (i == 0 or out[i - 1] != "\\"):
            depth -= 1
        elif ch == "," and depth == 0 and (i == 0 or out[i - 1] != "\\"):
            text.append("\\,;")
            continue
        text.append(ch)
    return "".join(text)


# ----------------------------------------------------------------------------- typography

def _link_text_typography(span: str) -> str:
    """The French spaces in the text of a ``{doc}`text <target>``` role (its target untouched)."""
    m = re.fullmatch(r"\{(doc|ref|numref|term)\}`([^`<]*?)(\s*<[^<>]+>)`", span)
    if not m:
        return span
    return f"{{{m.group(1)}}}`{french_typography(m.group(2))}{m.group(3)}`"


def french_typography(text: str) -> str:
    """Put the French spaces into a translation, outside protected spans: U+00A0 before
    ``:`` and inside « » (straight double quotes become « ») and around ``×`` between numbers,
    U+202F before ``;``, ``?``, ``!`` and ``%`` and between the thousands of a number
    (``14 672``). Idempotent."""
    spans, _, s = _protect(text)
    spans = [_link_text_typography(span) for span in spans]
    # the typographic apostrophe: Sphinx's smart quotes would turn l'*entropie* into l”entropie
    s = re.sub(r"(?<=[^\W\d_])'(?=[^\W\d]|[*_])", "\u2019", s)
    s = re.sub(r'"([^"\n]*)"', "«\\1»", s)
    s = re.sub("«[ \u00a0\u202f]*", "«" + NBSP, s)
    s = re.sub("[ \u00a0\u202f]*»", NBSP + "»", s)
    # a colon that ends a word (not 12:30, not ::) gets a no-break space before it
    s = re.sub(r"(?<=[^\s\d:])[ \u202f]?:(?=[\s*_»)]|$)", NBSP + ":", s)
    s = re.sub(r"(?<=\d)[ \u202f]:(?=\s|$)", NBSP + ":", s)
    s = re.sub(r"(?<=[^\s;?!])[ \u00a0]?([;?!])(?=[\s*_»)]|$)", NNBSP + r"\1", s)
    s = re.sub(r"(?<=\d)[ \u00a0]?%", NNBSP + "%", s)
    s = re.sub(r"(?<=\d)[ \u00a0\u202f]?×[ \u00a0\u202f]?(?=\d)", NBSP + "×" + NBSP, s)  # 4 000 × 128, 3,2 × 10¹⁴
    s = re.sub(r"(?<![\w.,])(\d{1,3})((?:[ \u00a0]\d{3})+)(?![\d])",
               lambda m: m.group(1) + re.sub("[ \u00a0]", NNBSP, m.group(2)), s)
    return _unmask(s, spans)


# ----------------------------------------------------------------------------- the rules

#: Words after which a number keeps its decimal point in French prose (it is a name, not a quantity).
_POINT_OK = re.compile(r"(?:section|sections|§|tableau|table|figure|fig\.|équation|exercice|exercices|"
                       r"version|python|torch|pytorch|chapitre|étape|cuda|sphinx|jupyter-book|sacrebleu|arxiv:|"
                       r"cc by|gpl-|mathjax|numpy)"
                       r"[\s\u00a0\u202f]*(?:\d+(?:[.,]\d+)*[\s\u00a0\u202f]*(?:,|et|à|ou)[\s\u00a0\u202f]*)*$",
                       re.I)
SAME_ON_PURPOSE = "same in French"


def problems(msgid: str, msgstr: str, fuzzy: bool = False, comments: str = "") -> list[str]:
    """What is wrong with ``msgstr`` as the French of ``msgid`` (empty: nothing)."""
    if not msgstr:
        return ["not translated"]
    out = ["fuzzy (the English changed: check the translation, then remove the flag)"] if fuzzy else []
    if is_formula(msgid):
        return out + ([] if msgstr == msgid else ["a formula block must be copied unchanged"])
    if re.match(r"\d+\. ", msgstr):
        out.append("starts with '2. ' (a numbered list for MyST): write '2\\. '")
    en_keys, en_masked = protected(msgid)
    fr_keys, fr_masked = protected(msgstr)
    missing = collections.Counter(en_keys) - collections.Counter(fr_keys)
    if missing:
        out.append("lost or changed: " + ", ".join(repr(k) for k in missing))
    extra = collections.Counter(fr_keys) - collections.Counter(en_keys)
    extra = [k for k in extra if k.startswith("{") and not k.startswith("{doc}")]
    if extra:
        out.append("roles not in the English: " + ", ".join(map(repr, extra)))
    fr_nums = collections.Counter(french_numbers(msgstr))
    lost = []
    for options in english_number_options(msgid):
        hit = next((n for n in sorted(options) if fr_nums[n] > 0), None)
        if hit is None:
            lost.append(min(options, key=len))
        else:
            fr_nums[hit] -= 1
    if lost:
        out.append("numbers of the English missing: " + ", ".join(sorted(lost)))
    # the typography rules apply to the prose and to the text of {doc}-like links
    link_texts = [m.group(1) for m in re.finditer(r"(?<!`)\{(?:doc|ref|numref|term)\}`([^`<]*?)\s*<[^<>]+>`", msgstr)]
    # a quotation of the English ("I have no clue!") keeps the English spacing inside its « »
    s = "\x00".join([_without_english_quotes(msgid, fr_masked), *link_texts])
    if re.search(r'["“”]', s):
        out.append('quotes must be « » (found " or “ ”)')
    if re.search(r"(?<=[^\W\d_])'(?=[^\W\d]|[*_])", s):
        out.append("apostrophe must be ’ (l’article), not '")
    if re.search(r"«(?!\u00a0)|(?<!\u00a0)»", s):
        out.append("« » need a no-break space (U+00A0) inside")
    for m in re.finditer(r"(?<!\d):(?!\d)", s):
        before = s[:m.start()]
        if before and before[-1] != NBSP and not before.endswith(":") and not s[m.end():].startswith(":"):
            out.append(f"no no-break space (U+00A0) before ':' in …{s[max(0, m.start() - 20):m.end()]!r}")
            break
    for m in re.finditer(r"[;?!]", s):
        before = s[:m.start()]
        if before and before[-1] not in (NNBSP, NBSP) and before[-1] != "\x00" and before[-1] not in ";?!":
            out.append(f"no narrow no-break space (U+202F) before {m.group(0)!r} in …{s[max(0, m.start() - 20):m.end()]!r}")
            break
    if re.search(r"\d[ ]?%", s):
        out.append("a narrow no-break space (U+202F) goes before %")
    for m in re.finditer(r"(?<![\w.,=])\d+\.\d+(?!\d|\.\d)", s):  # p_drop=0.1: a setting, as code writes it
        if not _POINT_OK.search(s[:m.start()][-40:]):
            out.append(f"decimal point in prose (French writes {m.group(0).replace('.', ',')}): "
                       f"…{s[max(0, m.start() - 20):m.end()]!r}")
            break
    m = _E_NOTATION.search(s)
    if m:
        out.append(f"scientific notation as code writes it ({m.group(0)}): French prose writes "
                   f"{french_scientific(m.group(1).replace(',', '.'), m.group(2))}")
    m = re.search(r"\d+(?:[ \u00a0\u202f]\d{3})*[ \u00a0\u202f]?x[ \u00a0\u202f]?\d+", s)
    if m:
        out.append(f"a product of sizes is written with × ({m.group(0).replace('x', '×')}), not x")
    for place in plural_below_two(s):
        out.append(f"singular below 2 (« 0,66 seconde », « 1,5 heure »): …{place!r}")
    if msgstr == msgid and SAME_ON_PURPOSE not in comments and len(re.findall(r"[A-Za-z]{3,}", en_masked)) >= 3:
        out.append(f"identical to the English (if on purpose, add the translator comment '# {SAME_ON_PURPOSE}')")
    return out


# ----------------------------------------------------------------------------- the edition's words

#: The conventions of the French edition; its tables of settled terms and of phrases to
#: avoid are what ``term_problems`` and ``gloss_problems`` apply (one source for both).
CONVENTIONS = LOCALES / "fr" / "CONVENTIONS.md"
_SPACE = "[ \u00a0\u202f]+"
_FRENCH_SPACE_BEFORE = re.compile("[\u00a0\u202f](?=[:;?!»%])")


def _english_quotes(msgid: str) -> set[str]:
    """The quotations of an English message ("I have no clue!"), outside protected spans."""
    masked = protected(msgid)[1]
    return {(straight or curly).strip() for straight, curly in re.findall(r'"([^"\n\x00]+)"|“([^”\n\x00]+)”', masked)}


def english_quotes(msgid: str, msgstr: str) -> list[re.Match]:
    """The « » quotations of a translation that quote its English, modulo the French spaces
    a translator or ``french_typography`` put in (« I have no clue ! » for "I have no clue!")."""
    quotes = _english_quotes(msgid)
    return [m for m in re.finditer("«\u00a0([^«»]*?)\u00a0»", msgstr)
            if _FRENCH_SPACE_BEFORE.sub("", m.group(1)) in quotes]


def keep_english_quotes(msgid: str, msgstr: str) -> str:
    """``msgstr`` with each quotation of its English written with the English spacing."""
    for m in reversed(english_quotes(msgid, msgstr)):
        msgstr = msgstr[:m.start(1)] + _FRENCH_SPACE_BEFORE.sub("", m.group(1)) + msgstr[m.end(1):]
    return msgstr


def _without_english_quotes(msgid: str, text: str) -> str:
    """``text`` with the inside of each quotation of the English masked (``\x00``)."""
    for m in reversed(english_quotes(msgid, text)):
        text = text[:m.start(1)] + "\x00" + text[m.end(1):]
    return text


def english_quote_problems(msgid: str, msgstr: str) -> list[str]:
    """A quotation of the English that got French spaces (« I have no clue ! »)."""
    return [f"quoted English keeps its English spacing: « {m.group(1)} » should be "
            f"« {_FRENCH_SPACE_BEFORE.sub('', m.group(1))} »"
            for m in english_quotes(msgid, msgstr) if _FRENCH_SPACE_BEFORE.search(m.group(1))]


def markdown_tables(text: str) -> dict[str, list[dict[str, str]]]:
    """{heading: rows} of the Markdown tables of ``text``, each row {column header: cell},
    the heading being the last ``##`` heading above the table."""
    out: dict[str, list[dict[str, str]]] = {}
    heading, header = "", None
    for line in text.splitlines():
        if line.startswith("#"):
            heading, header = line.lstrip("#").strip(), None
        elif line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if header is None:
                header = cells
            elif not all(re.fullmatch(r":?-+:?", c) for c in cells):
                out.setdefault(heading, []).append(dict(zip(header, cells)))
        else:
            header = None
    return out


def _form_regex(form: str) -> str:
    """The pattern of a form of the conventions' tables: words (case ignored), ``’`` or ``'``,
    any French space between words, ``N`` for a number or a glued value, ``…`` for a few words."""
    parts = []
    for word in form.split():
        if word == "N":
            parts.append(r"(?:\d+(?:[\u00a0\u202f ,.]\d+)*|\x00)")
        elif word == "…":
            parts.append(r"[^.;:!?\x00]{0,60}?")
        else:
            parts.append(re.sub("[’']", "['’]", re.escape(word)))
    return r"(?<![\w-])" + _SPACE.join(parts) + r"(?![\w-])"


def _code_cells(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def settled_terms(path: pathlib.Path = CONVENTIONS) -> dict[str, list]:
    """What the conventions' tables require: ``never`` [(form, pattern, what to write
    instead)], ``glosses`` [(French word pattern, gloss pattern, gloss as written)],
    ``quotations`` [(English, French)] of the paper."""
    tables = markdown_tables(path.read_text(encoding="utf-8"))
    never, glosses, quotations = [], [], []
    for row in tables.get("Settled terms", []) + tables.get("Phrases to avoid", []):
        instead = row.get("français") or row.get("write instead", "")
        for form in _code_cells(row.get("never", "")):
            never.append((form, re.compile(_form_regex(form), re.I), instead))
        for gloss in _code_cells(row.get("first use in a chapter", "")):
            french, _, english = gloss.partition(" (")
            words = french.split()
            head = [re.escape(words[0]) + "s?", *map(re.escape, words[1:])]
            word = (r"(?<![\w-])" + _SPACE.join(head) + r"(?![\w-])").replace("’", "['’]")
            en = english.rstrip(")")
            full = word[:-len(r"(?![\w-])")] + r"[*_]*" + _SPACE + r"\(" + re.escape(en) + r"s?\)"
            glosses.append((re.compile(word, re.I), re.compile(full, re.I), gloss))
    for row in tables.get("Quotations of the paper", []):
        quotations.append((row["English"], row["français"]))
    return {"never": never, "glosses": glosses, "quotations": quotations}


def _prose(msgid: str, msgstr: str) -> str:
    """The prose of a translation as the term rules read it: protected spans, quotations
    of the English and English titles in italics (``*On Layer Normalization*``) masked."""
    masked = _without_english_quotes(msgid, protected(msgstr)[1])
    return re.sub(r"\*([^*\x00]+)\*", lambda m: "\x00" if m.group(1) in msgid else m.group(0), masked)


def _nested_parentheses(text: str) -> int:
    """How many parentheses of ``text`` open inside another."""
    depth, nested = 0, 0
    for ch in text:
        if ch == "(":
            depth += 1
            nested += depth > 1
        elif ch == ")" and depth:
            depth -= 1
    return nested


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace(NBSP, " ").replace(NNBSP, " ").replace("’", "'"))


_ON = re.compile(r"(?<![\w’'])(?:l[’'])?on(?![\w’'-])", re.I)


def term_problems(msgid: str, msgstr: str, terms: dict[str, list] | None = None) -> list[str]:
    """What a translation writes that the conventions settled otherwise: a form of the
    column *never* (outside the glosses of the column *first use*), the impersonal « on »
    (the chapters say « nous »), parentheses nested in parentheses, a quotation of the paper
    translated otherwise than in the table (quoted English: ``english_quote_problems``)."""
    terms = settled_terms() if terms is None else terms
    if not msgstr or is_formula(msgid):
        return []
    prose = _prose(msgid, msgstr)
    out = []
    if _nested_parentheses(prose) > _nested_parentheses(protected(msgid)[1]):
        out.append("parentheses inside parentheses: use a comma, a dash or a new sentence")
    for _, gloss, _ in terms["glosses"]:  # « préchauffage (warmup) » may name the English
        prose = gloss.sub(lambda m: m.group(0)[:m.group(0).index("(")], prose)
    out += [f"« {m.group(0)} »: write {instead}" for form, rx, instead in terms["never"] for m in rx.finditer(prose)]
    out += [f"impersonal « {m.group(0)} »: the book says « nous » (or « vous »)" for m in _ON.finditer(prose)]
    for english, french in terms["quotations"]:
        if _flat(english) in _flat(msgid) and _flat(french) not in _flat(msgstr):
            out.append(f"the paper's sentence {english[:40]!r}… is translated as in the conventions: {french[:60]!r}…")
    return out


def gloss_problems(messages: list[tuple[str, str]], headings: set[str] = frozenset(),
                   terms: dict[str, list] | None = None) -> list[str]:
    """For the messages of one chapter in page order [(msgid, msgstr)]: each term of the
    column *first use in a chapter* is glossed the first time the prose uses it (headings,
    whose English is in ``headings``, aside)."""
    terms = settled_terms() if terms is None else terms
    out = []
    for word, gloss, written in terms["glosses"]:
        for msgid, msgstr in messages:
            if msgid.strip() in headings or not msgstr:
                continue
            prose = _prose(msgid, msgstr)
            first = word.search(prose)
            if first:
                if not gloss.match(prose, first.start()):
                    out.append(f"first use of « {first.group(0)} » without its gloss « {written} »: "
                               f"…{prose[max(0, first.start() - 30):first.end() + 30]!r}")
                break
    return out


def chapter_headings(po: pathlib.Path) -> set[str] | None:
    """The English headings of the page of a catalogue ``chapters/NN_name.po`` (its ``#``
    lines), or None for a catalogue that is not a numbered chapter."""
    rel = po.relative_to(LOCALES / "fr" / "LC_MESSAGES").as_posix() if po.is_relative_to(LOCALES) else po.name
    if not re.fullmatch(r"chapters/\d\d_\w+\.po", rel):
        return None
    md = ROOT / rel.replace(".po", ".md")
    return {re.sub(r"^#+\s*", "", line).strip() for line in md.read_text(encoding="utf-8").splitlines()
            if re.match(r"#+ ", line)}


def word_problems(path: pathlib.Path) -> list[str]:
    """``term_problems``, ``english_quote_problems`` and, for a chapter, ``gloss_problems``
    of one catalogue, as ``path: message: problem`` lines (``translations.py terms``)."""
    rel = path.relative_to(LOCALES) if path.is_relative_to(LOCALES) else path
    terms = settled_terms()
    msgs = entries(read_catalog(path))
    out = [f"{rel}: {m.id[:70]!r}: {p}" for m in msgs
           for p in term_problems(m.id, m.string, terms) + english_quote_problems(m.id, m.string)]
    headings = chapter_headings(path)
    if headings is not None:
        out += [f"{rel}: {p}" for p in gloss_problems([(m.id, m.string) for m in msgs], headings, terms)]
    return out


# ----------------------------------------------------------------------------- catalogues

def read_catalog(path: pathlib.Path):
    from babel.messages.pofile import read_po

    with open(path, "rb") as f:
        return read_po(f)


def write_catalog(path: pathlib.Path, catalog) -> None:
    from babel.messages.pofile import write_po

    with open(path, "wb") as f:
        write_po(f, catalog, width=0, omit_header=False)


def catalogs(lang: str = "fr") -> list[pathlib.Path]:
    """Every catalogue of ``lang``, pages first, then ``glue.po``."""
    base = LOCALES / lang / "LC_MESSAGES"
    return sorted(p for p in base.rglob("*.po"))


def entries(catalog):
    """The messages of a catalogue (not its header)."""
    return [m for m in catalog if m.id]


def check_catalog(path: pathlib.Path) -> list[str]:
    """Every problem of one catalogue, as ``path: message: problem`` lines."""
    rel = path.relative_to(LOCALES) if path.is_relative_to(LOCALES) else path
    out = []
    for m in entries(read_catalog(path)):
        comments = " ".join(m.user_comments + m.auto_comments)
        for p in problems(m.id, m.string, m.fuzzy, comments):
            out.append(f"{rel}: {m.id[:70]!r}: {p}")
    return out


def _key(m) -> str:
    return hashlib.sha1(((m.context or "") + "\x04" + m.id).encode()).hexdigest()[:8]


def export(path: pathlib.Path, everything: bool = False) -> str:
    """The messages of ``path`` still to translate (untranslated or fuzzy; all with
    ``everything``) as text: ``### N KEY`` then the English. A fuzzy one shows its draft
    after a ``### draft`` line. Translate the English in place and ``import`` the file."""
    out = []
    for n, m in enumerate(entries(read_catalog(path))):
        if not everything and m.string and not m.fuzzy:
            continue
        head = f"### {n} {_key(m)}" + (f" context={m.context}" if m.context else "")
        out.append(head + "\n" + m.id)
        if m.fuzzy and m.string:
            out.append("### draft (the old translation; delete this block)\n" + m.string)
    return "\n".join(out) + ("\n" if out else "")


def parse_export(text: str) -> dict[int, tuple[str, str]]:
    """{N: (KEY, translated text)} from an export file filled in by a translator."""
    found: dict[int, tuple[str, str]] = {}
    blocks = re.split(r"^### ", text, flags=re.M)
    for block in blocks[1:]:
        head, _, body = block.partition("\n")
        if head.startswith("draft"):
            continue
        parts = head.split()
        n, key = int(parts[0]), parts[1]
        found[n] = (key, body[:-1] if body.endswith("\n") else body)
    return found


def import_(path: pathlib.Path, text: str) -> list[str]:
    """Set the translations of ``path`` from an export file; return the problems left."""
    catalog = read_catalog(path)
    msgs = entries(catalog)
    for n, (key, body) in parse_export(text).items():
        if n >= len(msgs) or _key(msgs[n]) != key:
            raise ValueError(f"{path.name}: message {n} is not the one exported as {key}: "
                             "the catalogue changed since; export it again")
        m = msgs[n]
        if is_formula(m.id):
            m.string = body
        else:
            text = french_typography(body.strip("\n") if "\n" not in m.id.strip("\n") else body)
            text = keep_english_quotes(m.id, text)
            # "2. Title" alone would parse as a numbered list, not as the heading it translates.
            m.string = re.sub(r"^(\d+)\. ", r"\1\\. ", text)
        m.flags.discard("fuzzy")
        m.previous_id = []
    write_catalog(path, catalog)
    return check_catalog(path)


# ----------------------------------------------------------------------------- extraction

def glue_messages(root: pathlib.Path = ROOT) -> list[tuple[str, str]]:
    """(page, value) of every glued value that the prose of a toc page shows with
    ``{glue:text}`` and that holds words (numbers and lists of numbers are written the
    French way by rule, ``french_glued``)."""
    out = []
    for name, nb in _toc_notebooks(root):
        prose = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        used = {k.split(":")[0] for k in re.findall(r"\{glue:text\}`([^`]+)`", prose)}
        for cell in nb["cells"]:
            for o in cell.get("outputs", []):
                for mime, value in o.get("data", {}).items():
                    if not mime.startswith("application/papermill.record/text/plain"):
                        continue
                    key = o.get("metadata", {}).get("scrapbook", {}).get("name")
                    text = str(ast.literal_eval("".join(value) if isinstance(value, list) else value))
                    words = french_glued(text) is None and re.search(r"[A-Za-z]{2,}", text)
                    if key in used and words and (name, text) not in out:
                        out.append((name, text))
    return out


#: The attribute in which a figure's Python passes its script the texts the script writes
#: ({key: template}; ``utils/figures/base.py``).
FIGURE_STRINGS = "data-strings"


def figure_texts(soup) -> list[tuple]:
    """The translatable texts of every interactive figure (``figure.aiayn-fig``) of a parsed
    HTML output: (node, attribute or None, text). The node is an element whose whole text
    it is, or with an attribute the element that carries it, or with ``"string"`` a text
    node of a label (beside its inputs and outputs), or with ``("data-strings", key)`` the
    figure whose script writes that template (its table of strings, in page order)."""
    import bs4

    out = []
    for fig in soup.select("figure.aiayn-fig"):
        desc = fig.get("aria-describedby")
        plain = [fig.find("figcaption"), fig.find(id=desc) if desc else None, *fig.find_all("legend"),
                 *[b for b in fig.find_all("button") if any(a in b.attrs for a in _UI_BUTTONS)],
                 *fig.select(".fig-note")]  # a note written in the HTML (one the script fills is empty)
        for el in plain:
            if el is not None and el.find(True) is None and re.search(r"[A-Za-z]{2,}", el.get_text()):
                out.append((el, None, el.get_text()))
        for el in fig.find_all(attrs={"aria-label": True}):
            out.append((el, "aria-label", el["aria-label"]))
        for label in fig.find_all("label"):
            for child in label.children:
                if isinstance(child, bs4.NavigableString) and re.search(r"[A-Za-z]{2,}", child):
                    out.append((child, "string", child.strip()))
        for key, text in json.loads(fig.get(FIGURE_STRINGS) or "{}").items():
            if re.search(r"[A-Za-z]{2,}", PLACE.sub("", text)):
                out.append((fig, (FIGURE_STRINGS, key), text))
    return out


#: A place in a figure's template, ``{name}``, that its script fills (kept by a translation).
PLACE = re.compile(r"\{[a-z_]+\}")


def translate_figures(html_text: str, table: dict[str, str], lang: str | None = None) -> tuple[str, list[str]]:
    """(``html_text`` with its interactive figures' texts replaced from ``table``
    {English: translation}, the English texts that ``table`` lacks). With ``lang``, each
    figure is marked ``lang=LANG``: its script then writes numbers the way that language
    does (``js/common.js``, ``aiaynFig.locale``)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html_text, "html.parser")
    missing = []
    strings: dict = {}
    for node, attr, text in figure_texts(soup):
        if isinstance(attr, tuple):
            table_of = strings.setdefault(id(node), (node, json.loads(node[FIGURE_STRINGS])))[1]
            if text in table:
                table_of[attr[1]] = table[text]
            else:
                missing.append(text)
        elif text not in table:
            missing.append(text)
        elif attr is None:
            node.string = table[text]
        elif attr == "string":
            lead, trail = node[:len(node) - len(node.lstrip())], node[len(node.rstrip()):]
            node.replace_with(lead + table[text] + trail)
        else:
            node[attr] = table[text]
    for node, table_of in strings.values():
        node[FIGURE_STRINGS] = json.dumps(table_of, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    if lang:
        for fig in soup.select("figure.aiayn-fig"):
            fig["lang"] = lang
    return str(soup), missing


def figure_templates() -> dict[str, dict[str, str]]:
    """{figure kind: {key: English template}} of the templates each kind's script writes, from
    ``utils.figures`` (the code, not a stored output: a page whose notebook still holds an
    older figure has the current templates in its catalogue all the same)."""
    sys.path.insert(0, str(ROOT))
    try:
        from utils.figures import STRINGS  # absolute: Sphinx loads this file outside the package
    finally:
        sys.path.pop(0)
    return STRINGS


def figure_messages(root: pathlib.Path = ROOT) -> list[tuple[str, str]]:
    """(page, text) of every translatable text of the interactive figures of the toc pages:
    those of their stored HTML, and the current templates of each kind of figure shown."""
    from bs4 import BeautifulSoup

    out = []
    templates = figure_templates()
    for name, nb in _toc_notebooks(root):
        for cell in nb["cells"]:
            for o in cell.get("outputs", []):
                html_text = "".join(o.get("data", {}).get("text/html", ""))
                if "aiayn-fig" not in html_text:
                    continue
                soup = BeautifulSoup(html_text, "html.parser")
                texts = [text for _, _, text in figure_texts(soup)]
                for fig in soup.select("figure.aiayn-fig"):
                    texts += [t for t in templates.get(fig.get("data-figure"), {}).values()
                              if re.search(r"[A-Za-z]{2,}", PLACE.sub("", t))]
                for text in texts:
                    if (name, text) not in out:
                        out.append((name, text))
    return out


def _toc_notebooks(root: pathlib.Path):
    sys.path.insert(0, str(root / "tests"))
    try:
        from notebooks import toc_files
    finally:
        sys.path.pop(0)
    for name in toc_files():
        path = root / f"{name}.ipynb"
        if path.is_file():
            yield name, json.loads(path.read_text(encoding="utf-8"))


def checker_messages() -> list[tuple[str, str]]:
    """(context, sentence) of everything the answer checkers can print (``checker`` for the
    feedback's templates, ``exercise N.k`` for an exercise's own), from ``utils.exercises``."""
    sys.path.insert(0, str(ROOT))
    try:
        from utils.exercises import messages  # absolute: Sphinx loads this file outside the package
    finally:
        sys.path.pop(0)
    return messages()


def plot_messages(manifest: pathlib.Path = LOCALES / "fr" / "plots" / "manifest.json") -> list[tuple[str, str]]:
    """(page, text) of every text with words that the static figures show, as the last run of
    ``python -m utils.book.french_plots`` met them (its manifest), each once per page."""
    pages = json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else {}
    out: list[tuple[str, str]] = []
    for page, figures in pages.items():
        for figure in figures:
            out += [(page, text) for text in figure["texts"] if (page, text) not in out]
    return out


def output_messages() -> list[tuple[str, str]]:
    """(page, word) of the cells of the named output tables (``french_outputs.table_messages``)."""
    sys.path.insert(0, str(ROOT))
    try:
        from utils.book.french_outputs import table_messages  # absolute: Sphinx loads this file outside the package
    finally:
        sys.path.pop(0)
    return table_messages()


def bibliography_messages() -> list[tuple[str, str]]:
    """("bibliography", phrase) of the references' notes and style words (``french_citations``)."""
    sys.path.insert(0, str(ROOT))
    try:
        from utils.book.french_citations import bibliography_messages as messages
    finally:
        sys.path.pop(0)
    return messages()


#: The templates made here beside the pages' own: domain -> (project, its messages).
EXTRA_TEMPLATES = {GLUE_DOMAIN: ("glued values", glue_messages),
                   CHECKERS_DOMAIN: ("answer checkers", checker_messages),
                   FIGURES_DOMAIN: ("interactive figures", figure_messages),
                   PLOTS_DOMAIN: ("static figures", plot_messages),
                   OUTPUTS_DOMAIN: ("printed outputs", output_messages),
                   BIBLIOGRAPHY_DOMAIN: ("bibliography", bibliography_messages)}


def write_template(pot_dir: pathlib.Path, domain: str) -> pathlib.Path:
    """Write ``DOMAIN.pot`` of one of ``EXTRA_TEMPLATES`` under ``pot_dir``."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    project, messages = EXTRA_TEMPLATES[domain]
    cat = Catalog(project=project, charset="utf-8")
    for context, text in messages():
        cat.add(text, context=context)
    path = pot_dir / f"{domain}.pot"
    with open(path, "wb") as f:
        write_po(f, cat, width=0, omit_header=False)
    return path


def extract(pot_dir: pathlib.Path) -> pathlib.Path:
    """Write the templates (.pot) of every page, and those of ``EXTRA_TEMPLATES``, under
    ``pot_dir``; return the folder that holds them. Sphinx's warnings do not stop the
    extraction (a duplicate label on one page must not block the catalogues of the others):
    the book's own build (``bash .ci/build``, tests/test_book.py) treats them as errors."""
    jb = os.path.join(os.path.dirname(sys.executable), "jupyter-book")
    proc = subprocess.run([jb, "build", str(ROOT), "--builder", "custom", "--custom-builder", "gettext",
                           "--path-output", str(pot_dir), "-n", "--keep-going"],
                          cwd=ROOT, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError("the gettext build failed:\n" + (proc.stdout + proc.stderr)[-4000:])
    out = pot_dir / "_build" / "gettext"
    for domain in EXTRA_TEMPLATES:
        write_template(out, domain)
    return out


def update(lang: str = "fr") -> None:
    """Extract the templates and merge them into ``locales/LANG`` (sphinx-intl update)."""
    with tempfile.TemporaryDirectory() as tmp:
        pots = extract(pathlib.Path(tmp))
        sphinx_intl = os.path.join(os.path.dirname(sys.executable), "sphinx-intl")
        subprocess.run([sphinx_intl, "update", "-p", str(pots), "-l", lang, "-d", str(LOCALES),
                        "-w", "0", "--no-obsolete"], check=True, cwd=ROOT)


def stale(pot_dir: pathlib.Path, lang: str = "fr", locale_dir: pathlib.Path = LOCALES) -> list[str]:
    """How the catalogues of ``lang`` differ from the templates in ``pot_dir`` (freshly
    extracted from the book): a page or a message without a catalogue entry, or an
    entry whose English is gone. Empty when ``bash .ci/translations update`` has nothing to do."""
    out = []
    base = locale_dir / lang / "LC_MESSAGES"
    pots = {p.relative_to(pot_dir).with_suffix("").as_posix(): p for p in pot_dir.rglob("*.pot")}
    pos = {p.relative_to(base).with_suffix("").as_posix(): p for p in base.rglob("*.po")}
    for name in sorted(set(pots) - set(pos)):
        out.append(f"{name}: no catalogue {base.name}/{name}.po")
    for name in sorted(set(pos) - set(pots)):
        out.append(f"{name}.po: no such page or message source any more")
    for name in sorted(set(pots) & set(pos)):
        want = {(m.context, m.id) for m in entries(read_catalog(pots[name]))}
        have = {(m.context, m.id) for m in entries(read_catalog(pos[name]))}
        out += [f"{name}.po: new English, not in the catalogue: {i[:70]!r}" for _, i in sorted(want - have, key=str)]
        out += [f"{name}.po: English no longer in the book: {i[:70]!r}" for _, i in sorted(have - want, key=str)]
    return out


def status(lang: str = "fr") -> str:
    rows, totals = [], collections.Counter()
    for path in catalogs(lang):
        msgs = entries(read_catalog(path))
        c = collections.Counter("fuzzy" if m.fuzzy else "done" if m.string else "todo" for m in msgs)
        c["all"] = len(msgs)
        totals.update(c)
        rows.append(f"{str(path.relative_to(LOCALES / lang / 'LC_MESSAGES')):60} {c['done']:5} {c['fuzzy']:5} {c['todo']:5} {c['all']:5}")
    head = f"{'catalogue':60} {'done':>5} {'fuzzy':>5} {'todo':>5} {'all':>5}"
    tail = f"{'all':60} {totals['done']:5} {totals['fuzzy']:5} {totals['todo']:5} {totals['all']:5}"
    return "\n".join([head, *rows, tail])


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    cmd, args = argv[0], argv[1:]
    if cmd == "update":
        update()
        print(status())
    elif cmd == "status":
        print(status())
    elif cmd == "export":
        text = export(pathlib.Path(args[0]), everything="--all" in args)
        outs = [a for a in args[1:] if not a.startswith("--")]
        if outs:
            pathlib.Path(outs[0]).write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
    elif cmd == "import":
        left = import_(pathlib.Path(args[0]), pathlib.Path(args[1]).read_text(encoding="utf-8"))
        print("\n".join(left) or "no problem left")
        return 1 if left else 0
    elif cmd == "pairs":
        for n, m in enumerate(entries(read_catalog(pathlib.Path(args[0])))):
            print(f"### {n} {_key(m)}" + (f" context={m.context}" if m.context else ""))
            print("EN: " + m.id)
            print("FR: " + m.string)
    elif cmd == "terms":
        paths = [pathlib.Path(a) for a in args] or catalogs()
        left = [p for path in paths for p in word_problems(path)]
        print("\n".join(left) or f"{len(paths)} catalogues use the conventions' words")
        return 1 if left else 0
    elif cmd == "check":
        paths = [pathlib.Path(a) for a in args] or catalogs()
        left = [p for path in paths for p in check_catalog(path)]
        print("\n".join(left) or f"{len(paths)} catalogues, no problem")
        return 1 if left else 0
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
