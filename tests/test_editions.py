"""The student edition contains no solution text; the instructor edition contains all of it.

Solution text is found by parsing the sources: every ``{solution}`` block of the
chapters, and the prose and code of the solution notebooks in ``solutions/``. For each
block the test picks phrases that occur in the instructor edition but nowhere else in
the course's chapter text, so finding one in the student edition can only mean a leak.
Every file of the student output is searched: pages, search index, downloadable sources.
"""

from __future__ import annotations

import json
import re

import pytest
from bookbuild import HTML, STUDENT_HTML, editions, sphinx_warnings
from bs4 import BeautifulSoup
from notebooks import ROOT, read, toc_files

OPEN = re.compile(r"^\s*(?P<fence>`{3,}|:{3,})\{solution\}")
WORD_RUN = 3  # a phrase is this many consecutive plain words


def solution_blocks(text: str):
    """[(label, body)] for each ``{solution}`` block of a MyST file."""
    blocks, fence, label, body = [], None, None, []
    for line in text.splitlines():
        if fence is None:
            m = OPEN.match(line)
            if m:
                fence, label, body = m.group("fence"), line[m.end():].strip(), []
        elif re.match(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$", line):
            blocks.append((label, "\n".join(body)))
            fence = None
        else:
            body.append(line)
    return blocks


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def candidates(prose: str, code: str = "") -> list[str]:
    """Strings that identify a solution: runs of WORD_RUN plain words of its prose, its
    numbers with at least three digits (also inside math), and its longer code lines."""
    lines = [l for l in prose.splitlines() if not l.lstrip().startswith((":", "```", "#", "|"))]
    text = " ".join(lines).replace("{,}", ",")  # LaTeX digit grouping: 16{,}640
    # numbers distinctive enough to identify a solution: 1,234,567 / 0.1369 / 18944000
    out = re.findall(r"\d{1,3}(?:,\d{3})+(?![\d,])|\d+\.\d{3,}|\d{5,}", text)
    text = re.sub(r"\$[^$]*\$|`[^`]*`|\{[^}]*\}|\[[^\]]*\]\([^)]*\)", " | ", text)
    for chunk in re.split(r"[^A-Za-z ]+", text):
        words = chunk.split()
        out += [" ".join(words[i:i + WORD_RUN]) for i in range(len(words) - WORD_RUN + 1)]
    out += [l.strip() for l in code.splitlines() if len(l.strip()) >= 30 and not l.strip().startswith("#")]
    return list(dict.fromkeys(norm(c) for c in out))


def occurs(needle: str, haystack: str) -> bool:
    """``needle`` in ``haystack`` as a whole phrase: not preceded by a word character or a dot,
    not followed by a word character. (str.find, then the two neighbours: much faster than
    one regular expression per phrase over the whole book.)"""
    start = haystack.find(needle)
    while start != -1:
        before = haystack[start - 1] if start else " "
        end = start + len(needle)
        after = haystack[end] if end < len(haystack) else " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
            return True
        start = haystack.find(needle, start + 1)
    return False


def html_text(path, drop_solutions=False) -> str:
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    if drop_solutions:
        for div in soup.select("div.solution"):
            div.decompose()
    alts = " ".join(img.get("alt", "") for img in soup.find_all("img"))  # alt text is read too
    # an interactive figure's script holds the numbers and notes it shows (utils/figures)
    shown = " ".join(s.get_text() for s in soup.select("figure.aiayn-fig + script"))
    return soup.get_text() + " " + alts + " " + shown


def notebook_text(nb):
    """Cell sources and text outputs of a notebook (not its metadata, not base64 images)."""
    for cell in nb.get("cells", []):
        yield "".join(cell.get("source", ""))
        for out in cell.get("outputs", []):
            yield "".join(out.get("text", ""))
            for mime, data in out.get("data", {}).items():
                if mime.startswith("text/"):
                    yield "".join(data)


def output_text(html_root) -> str:
    """All text a reader of ``html_root`` can get at: page text, search index, sources."""
    parts = []
    for path in sorted(html_root.rglob("*")):
        if not path.is_file() or path.suffix not in (".html", ".js", ".txt", ".md", ".ipynb", ".json"):
            continue
        if "_static" in path.relative_to(html_root).parts:
            continue
        if path.suffix == ".html":
            parts.append(html_text(path))
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb":  # what a reader sees: cell sources and text outputs
            raw = "\n".join(notebook_text(json.loads(raw)))
        parts.append(raw)
    return norm(" ".join(parts))


def public_text() -> str:
    """The instructor edition's pages without their solution dropdowns and solution notebooks."""
    pages = [p for p in sorted(HTML.rglob("*.html"))
             if "_static" not in p.relative_to(HTML).parts and p.relative_to(HTML).parts[0] != "solutions"]
    return norm(" ".join(html_text(p, drop_solutions=True) for p in pages))


@pytest.fixture(scope="module")
def texts(built_book, student_book):
    rc, log = student_book
    assert rc == 0 and not sphinx_warnings(log), "student edition build failed:\n" + "\n".join(
        sphinx_warnings(log) or log.splitlines()[-40:])
    return output_text(HTML), public_text(), output_text(STUDENT_HTML)


def chapter_sources():
    return sorted((ROOT / "chapters").glob("[0-9]*.md"))


def solution_sources():
    """{where: (prose, code)} for each solution block of a chapter and each solution notebook."""
    found = {}
    for md in chapter_sources():
        for label, body in solution_blocks(md.read_text(encoding="utf-8")):
            found[f"{md.name} {{solution}} {label}"] = (body, "")
    for md in sorted((ROOT / "solutions").glob("*.md")):
        cells = read(md).cells
        prose = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        code = "\n".join(c.source for c in cells[1:] if c.cell_type == "code")
        found[md.name] = (prose, code)
    return found


def test_student_edition_has_no_solution_pages(texts):
    solution_pages = [n for n in toc_files() if n.startswith("solutions/")]
    assert solution_pages, "the instructor toc should list the solution notebooks"
    for name in solution_pages:
        assert (HTML / f"{name}.html").is_file(), f"instructor edition lacks {name}"
        assert not (STUDENT_HTML / f"{name}.html").exists(), f"student edition contains {name}"
    assert not (STUDENT_HTML / "solutions").exists(), "student edition has a solutions/ folder"
    for page in STUDENT_HTML.rglob("*.html"):
        assert 'solutions/' not in "".join(
            a.get("href", "") for a in BeautifulSoup(page.read_text(), "html.parser").find_all("a")), (
            f"{page.relative_to(STUDENT_HTML)} links to a solution page")


def test_student_edition_contains_no_solution_text(texts):
    instructor, public, student = texts
    checked, undetectable, leaks = 0, [], []
    for where, (prose, code) in solution_sources().items():
        # Distinctive: shown by the instructor edition, and only inside solutions there.
        marks = [c for c in candidates(prose, code) if occurs(c, instructor) and not occurs(c, public)]
        if not marks:
            undetectable.append(where)
            continue
        checked += 1
        leaks += [f"{where}: {c!r}" for c in marks if occurs(c, student)]
    assert not leaks, "solution text in the student edition:\n" + "\n".join(leaks[:20])
    # Each solution block must be recognisable in the instructor edition, or this test proves nothing.
    blocks = [w for w in undetectable if "{solution}" in w]
    assert not blocks, ("no distinctive text of these solutions was found in the instructor edition "
                        f"(give them a sentence or a number of their own): {blocks}")
    print(f"checked {checked} solutions; solution notebooks without distinctive text: {undetectable}")


def test_student_edition_has_the_chapters_and_exercises(texts):
    for name in toc_files():
        if name.startswith("chapters/") and name not in editions.INSTRUCTOR_PAGES:
            assert (STUDENT_HTML / f"{name}.html").is_file(), f"student edition lacks {name}"
    for name in editions.INSTRUCTOR_PAGES:
        assert not (STUDENT_HTML / f"{name}.html").is_file(), f"the student edition has {name}"
    for md in chapter_sources():
        for label in re.findall(r"^:label:\s*(ex-\S+)", md.read_text(), flags=re.M):
            page = (STUDENT_HTML / "chapters" / f"{md.stem}.html").read_text()
            assert f'id="{label}"' in page, f"student edition lost exercise {label} of {md.name}"


def test_edition_configs_are_derived_from_the_instructor_ones():
    import yaml

    cfg = editions.student_config(yaml.safe_load((ROOT / "_config.yml").read_text()))
    assert cfg["sphinx"]["config"]["hide_solutions"] is True
    assert cfg["repository"] == yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    toc = editions.student_toc(yaml.safe_load((ROOT / "_toc.yml").read_text()))
    names = [e["file"] for p in toc["parts"] for e in p["chapters"]]
    assert names and not [n for n in names if n.startswith("solutions/")]
    assert [n for n in toc_files() if n.startswith("chapters/") and n not in editions.INSTRUCTOR_PAGES] == [
        toc["root"], *names]
    assert not set(editions.INSTRUCTOR_PAGES) & set(names), "the instructors' page is for the instructor edition only"


def test_strip_solutions_removes_only_solution_blocks():
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_book", ROOT / "utils" / "book" / "course_book.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = ("Intro\n```{exercise}\n:label: ex-1\nDo it.\n```\n```{solution} ex-1\n:class: dropdown\n"
            "The answer is 42.\n```\n::::{solution} ex-2\nAlso ```` hidden\n::::\nOutro\n")
    assert mod.strip_solutions(text) == "Intro\n```{exercise}\n:label: ex-1\nDo it.\n```\nOutro\n"
    assert [b for _, b in solution_blocks(text)] == [":class: dropdown\nThe answer is 42.", "Also ```` hidden"]
    assert candidates("The answer is $e^2 / 12.834$ or 0.5761 (or 76,906,496), see\nthe scaled weights above.") == [
        "12.834", "0.5761", "76,906,496", "the answer is", "see the scaled", "the scaled weights", "scaled weights above"]


def test_exercise_numbers_match_their_answer_checkers(built_book):
    """Exercise k of chapter NN is titled "Exercise NN.k" (utils/book/course_book.py numbers
    them per chapter), and the checker its cell calls is check("NN.k", ...)."""
    bad = []
    for md in chapter_sources():
        page = HTML / "chapters" / f"{md.stem}.html"
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        titles = [s.get_text(strip=True) for s in soup.select("div.exercise .admonition-title .caption-number")]
        shown = [t.removeprefix("Exercise").strip() for t in titles]
        chapter = int(md.stem.split("_", 1)[0])
        if not shown and "{exercise}" not in md.read_text(encoding="utf-8"):
            continue  # no exercises (the preface only demonstrates the checker)
        if shown != [f"{chapter}.{k}" for k in range(1, len(shown) + 1)]:
            bad.append(f"{md.name}: exercises numbered {shown}")
        checked = re.findall(r'check\(\s*"([^"]+)"', md.read_text(encoding="utf-8"))
        if checked != shown:
            bad.append(f"{md.name}: exercises {shown} but checkers called {checked}")
    assert not bad, "\n".join(bad)


def test_occurs_matches_whole_phrases_only():
    cases = [("0.5761", "the floor is 0.5761.", True), ("0.5761", "x10.5761 y", False), ("0.5761", "a.0.5761", False),
             ("scaled weights", "the scaled weights above", True), ("scaled weights", "unscaled weights", False),
             ("scaled weights", "scaled weightsum", False), ("scaled weights", "scaled weights", True),
             ("ab", "xab ab_ (ab)", True), ("ab", "xab ab_ _ab", False)]
    for needle, haystack, want in cases:
        regex = re.search(r"(?<![\w.])" + re.escape(needle) + r"(?![\w])", haystack) is not None
        assert occurs(needle, haystack) is want is regex, (needle, haystack)
