"""The learner's path (issue 54): chapters a learner can finish, their full record on lab pages.

- Every chapter keeps within its word budget of prose (``utils/book/reading.py``), counted
  on the built English book: 4,500 words for the capstones (15 to 17), 5,000 for the rest.
- Each capstone has a lab page (``chapters/lab_<chapter>.md``) in the table of contents'
  "Lab notes" part, after the chapters, and the chapter links to it.
- Nothing measured was lost in the split: every glue name and every assert the capstones had
  before it (``tests/capstone_record.json``) is glued or asserted by the chapter or its lab
  page, unless the record lists it as retired, with the reason.
- Glued numbers read like the text around them (not bold).
"""

from __future__ import annotations

import json
import re

import pytest
import yaml
from bookbuild import HTML
from notebooks import ROOT, toc_files

from utils.book import reading, record

RECORD = json.loads((ROOT / "tests" / "capstone_record.json").read_text())
CAPSTONES = sorted(RECORD["pages"])


def lab(stem: str):
    return ROOT / "chapters" / f"lab_{stem}.md"


@pytest.mark.parametrize("stem", CAPSTONES)
@pytest.mark.parametrize("kind", ["glue", "asserts"])
def test_nothing_measured_is_lost_in_the_split(stem, kind):
    pages = [ROOT / "chapters" / f"{stem}.md", lab(stem)]
    have = set().union(*((record.glue_names if kind == "glue" else record.asserts)(p) for p in pages))
    retired = RECORD["retired"].get(stem, {}).get(kind, {})
    assert all(isinstance(why, str) and len(why) > 20 for why in retired.values()), \
        f"a retired {kind} entry of {stem} needs its reason"
    missing = [x for x in RECORD["pages"][stem][kind] if x not in have and x not in retired]
    assert not missing, (f"{stem}: {len(missing)} {kind} of the record are neither in the chapter nor on its lab "
                         f"page (nor retired with a reason in tests/capstone_record.json):\n" + "\n".join(missing[:20]))


def test_the_record_is_read_from_the_code():
    """The extraction sees what a page glues and asserts (a check that could not fail would not)."""
    md = ROOT / "chapters" / "02_scaled_dot_product_attention.md"
    assert record.glue_names(md) and record.asserts(md)
    assert all(isinstance(a, str) and a for a in record.asserts(md))


def test_lab_pages_follow_the_chapters_in_the_table_of_contents():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    captions = [p["caption"] for p in toc["parts"]]
    assert "Lab notes" in captions, captions
    labs = [e["file"] for e in toc["parts"][captions.index("Lab notes")]["chapters"]]
    assert labs == [f"chapters/lab_{s}" for s in CAPSTONES]
    order = toc_files()
    last_chapter = max(order.index(f"chapters/{s}") for s in CAPSTONES)
    assert all(order.index(p) > last_chapter for p in labs), "lab pages come after the chapters"


@pytest.mark.parametrize("stem", CAPSTONES)
def test_each_capstone_links_to_its_lab_page_and_back(stem):
    chapter, notes = (ROOT / "chapters" / f"{stem}.md").read_text(), lab(stem).read_text()
    assert re.search(rf"\{{doc\}}`[^`]*<lab_{stem}>`", chapter), f"chapter {stem} never links to its lab page"
    assert re.search(rf"\{{doc\}}`[^`]*<{stem}>`", notes), f"lab page of {stem} never links back to its chapter"


def test_every_chapter_keeps_within_its_word_budget(built_book):
    over = []
    for page in sorted((HTML / "chapters").glob("*.html")):
        limit = reading.budget(page.stem)
        if limit is not None:
            words = reading.prose_words(page.read_text(encoding="utf-8"))
            if words > limit:
                over.append(f"{page.stem}: {words:,} words of prose, budget {limit:,}")
    assert not over, "\n".join(over)


def test_the_word_count_reads_prose_only():
    html = ("<article><p>one two three</p><ul><li>four five</li></ul><pre>x y z</pre>"
            "<div class='cell_output'><p>not me</p></div><table><tr><td><p>nor me</p></td></tr></table>"
            "<details class='sd-dropdown'><summary>Answer</summary><p>six seven</p></details>"
            "<details class='sd-dropdown'><summary>Long description of the figure</summary><p>skipped</p></details>"
            "<p>eight <span class='math'>\\(a+b\\)</span></p></article>")
    assert reading.prose_words(html) == 8
    with pytest.raises(ValueError, match="no <article>"):
        reading.prose_words("<p>no article</p>")
    assert reading.budget("16_translation") == 4500 and reading.budget("10_training") == 5000
    assert reading.budget("lab_16_translation") is None


def test_glued_numbers_are_in_the_body_weight(built_book):
    css = (ROOT / "utils" / "book" / "static" / "course_book.css").read_text()
    assert re.search(r"span\.pasted-text\s*\{\s*font-weight:\s*normal;\s*\}", css)
    page = (HTML / "chapters" / "16_translation.html").read_text(encoding="utf-8")
    assert "course_book.css" in page and "pasted-text" in page


def test_the_start_page_gives_each_chapter_its_study_time():
    """The start page's "Study time" column says what each chapter's own **Time:** line says,
    and its reading path names every lab page."""
    index = (ROOT / "chapters" / "index.md").read_text()
    rows = re.findall(r"^\| \{doc\}`[^<]*<(\d\d_\w+)>` \|.*\| (\d+) min \| [^|]*\|$", index, re.M)
    chapters = sorted(p.stem for p in (ROOT / "chapters").glob("[0-9][0-9]_*.md"))
    assert sorted(stem for stem, _ in rows) == chapters
    wrong = []
    for stem, said in rows:
        stated = re.search(r"\*\*Time:\*\* about (\d+) minutes", (ROOT / "chapters" / f"{stem}.md").read_text()).group(1)
        if said != stated:
            wrong.append(f"{stem}: start page says {said} min, the chapter {stated}")
    assert not wrong, "\n".join(wrong)
    reading_path = index[index.index("## A reading path"):]
    assert all(f"<lab_{s}>" in reading_path for s in CAPSTONES)
