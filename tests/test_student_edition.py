"""The student edition holds no answer, and no exercise's answer is already on its page.

- The scan: every file of the built student edition (pages, search index, the
  downloadable .ipynb and .md sources, alt texts inside the pages) is searched for the
  expected answer of every exercise (``utils.exercises.EXERCISES``), in every form the
  book prints numbers (2 to 6 decimals, 3 to 6 significant digits, ints with and
  without thousands separators), keeping forms of 4 significant digits or more: shorter
  ones (13, 0.5, 0.212) turn up by coincidence somewhere in sixteen chapters. The page
  test below also searches 3-digit forms, on the exercise's own chapter.
- The page test: an exercise's answer may not appear in its own chapter's page, in the
  student edition (prose, printed outputs and figures' texts), at the precision the
  book prints it.
- Hidden cells that compute the values worked solutions quote are tagged
  ``solution-values`` and glue only names that appear inside solutions; the student
  edition drops them from its downloads (utils/book/course_book.py).
"""

from __future__ import annotations

import re

import pytest
from bookbuild import STUDENT_HTML
from notebooks import paired_markdown, read
from test_checkers import _numbers, forms

from utils.exercises import EXERCISES, _load_all

_load_all()
IDS = sorted(EXERCISES, key=lambda i: tuple(int(x) for x in i.split(".")))
TEXT_SUFFIXES = {".html", ".js", ".ipynb", ".md", ".txt", ".json", ".svg", ".inv"}


def _significant(form: str) -> int:
    """Significant digits of a printed number: 0.5000 has 1, 0.2119 has 4, 16,640 has 5."""
    text = form.replace(",", "").lstrip("-")
    if "." in text:
        text = text.rstrip("0")
    return len(text.replace(".", "").lstrip("0"))


def answer_forms(id, min_digits: int = 3) -> set[str]:
    """The printed forms of exercise ``id``'s answer with at least ``min_digits`` significant digits.

    A composite answer of ints (a shape, a pair of indices) is searched as a whole, in
    Python's and NumPy's print forms; its items alone are searched only when they have
    5 digits or more (a lone 256 or 2048 is a model size, printed everywhere).
    """
    expected = EXERCISES[id].expected()
    out = set()
    composite = isinstance(expected, (tuple, list, dict))
    if composite:
        items = list(expected.values()) if isinstance(expected, dict) else list(expected)
        if all(isinstance(x, int) for x in items):
            out |= {str(tuple(items)), str(list(items)), " ".join(map(str, items))}
    for n in _numbers(expected):
        if composite and isinstance(n, int) and abs(n) < 10_000:
            continue
        out |= {f for f in forms(n) if _significant(f) >= min_digits
                and not (isinstance(n, float) and "e" not in f and "." not in f)}
    return out


def found(form: str, text: str) -> bool:
    """``form`` in ``text`` as a whole number (not part of a longer one). An unsigned form
    preceded by a sign is a signed difference (a table's "-6.84"), not that answer."""
    if form not in text:  # the common case, found fast; the pattern then rules out longer numbers
        return False
    return re.search(rf"(?<![\d.,+\-−]){re.escape(form)}(?![\d]|[.,]\d)", text) is not None


@pytest.mark.parametrize("form, text, hit", [("6.84", "BLEU 6.84.", True), ("6.84", "chrF -6.84", False),
                                             ("6.84", "+6.84", False), ("6.84", "16.84", False),
                                             ("6.84", "6.845", False), ("-6.84", "a - b: -6.84", True)])
def test_found_reads_whole_unsigned_numbers(form, text, hit):
    assert found(form, text) is hit


def text_files(root) -> dict[str, str]:
    """{path relative to ``root``: text} of every text file of a built edition but its _static."""
    files = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in TEXT_SUFFIXES and "_static" not in path.parts:
            files[str(path.relative_to(root))] = path.read_text(encoding="utf-8", errors="replace")
    return files


@pytest.fixture(scope="module")
def student_files(student_book):
    code, log = student_book
    assert code == 0, log[-3000:]
    return text_files(STUDENT_HTML)


def test_the_student_edition_holds_no_answer(student_files):
    leaks = []
    for id in IDS:
        for form in sorted(answer_forms(id, min_digits=4)):  # 3-digit coincidences across 16 chapters are common
            where = [name for name, text in student_files.items() if found(form, text)]
            if where:
                leaks.append(f"Exercise {id}: {form} in {', '.join(where[:3])}{' ...' if len(where) > 3 else ''}")
    assert not leaks, f"{len(leaks)} answer(s) found in the student edition:\n  " + "\n  ".join(leaks)


def test_no_exercise_answer_is_on_its_own_chapter_page(student_files):
    on_page = []
    for id in IDS:
        chapter = int(id.split(".")[0])
        pages = [name for name in student_files
                 if re.match(rf"chapters/{chapter:02d}_[^/]*\.html$", name)]
        assert len(pages) == 1, (id, pages)
        text = student_files[pages[0]]
        hits = [f for f in sorted(answer_forms(id)) if found(f, text)]
        if hits:
            on_page.append(f"Exercise {id}: {', '.join(hits)} on {pages[0]}")
    assert not on_page, "answers already printed on their chapter's page:\n  " + "\n  ".join(on_page)


GLUE_USE = re.compile(r"\{glue(?::text)?\}`([^`]+)`")
GLUE_DEF = re.compile(r"""glue\(\s*(?:f?["'])([A-Za-z0-9_{}]+)["']""")
SOLUTION = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution\}.*?^(?P=fence)\s*$", re.M | re.S)


@pytest.mark.parametrize("md", [m for m in paired_markdown() if m.parent.name == "chapters"], ids=lambda p: p.name)
def test_solution_values_cells_glue_only_what_solutions_quote(md):
    text = md.read_text()
    in_solutions = {n for block in SOLUTION.finditer(text) for n in GLUE_USE.findall(block.group(0))}
    elsewhere = set(GLUE_USE.findall(SOLUTION.sub("", text)))
    only_solutions = in_solutions - elsewhere
    for cell in read(md).cells:
        if cell.cell_type != "code":
            continue
        tagged = "solution-values" in cell.metadata.get("tags", [])
        names = set(GLUE_DEF.findall(cell.source))
        if tagged:
            assert "remove-cell" in cell.metadata.get("tags", []), f"{md.name}: a solution-values cell must be hidden"
            shown = {n for n in names if "{" not in n} & elsewhere
            assert not shown, f"{md.name}: a solution-values cell glues {sorted(shown)}, used outside solutions"
        else:
            quoted = {n for n in names if "{" not in n} & only_solutions
            assert not quoted, (f"{md.name}: {sorted(quoted)} are quoted only by solutions; glue them in a "
                                "hidden cell tagged solution-values, which the student edition drops")
