"""Every chapter has the same frame: what you will learn and how long it takes, one to
three knowledge checks with hidden answers, and a summary that points to the next page.

The conventions (MyST, colon fences):

* Right after the setup cell, a box ``:::{admonition} In this chapter`` holding
  ``**You will learn**`` (a list) and ``**Time:**`` (reading and running).
* One to three boxes ``::::{admonition} Check your understanding``, each with its answer
  in a ``:::{dropdown} Answer`` (hidden until clicked). The preface has none.
* A section ``## Summary`` (the recap), before ``## Exercises`` where a chapter has
  exercises, whose last paragraph links to the next page of the book with {doc}.
"""

from __future__ import annotations

import re

import pytest
from notebooks import ROOT, read, toc_files

CHAPTERS = sorted(ROOT.glob("chapters/[0-9]*.md"))
CHECK = re.compile(r"^(::::+)\{admonition\} Check your understanding\s*$", re.M)


def markdown_cells(md):
    return [c.source for c in read(md).cells if c.cell_type == "markdown"]


def next_page(md) -> str | None:
    names = toc_files()
    name = str(md.relative_to(ROOT).with_suffix(""))
    i = names.index(name)
    return names[i + 1] if i + 1 < len(names) else None


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.stem)
def test_opens_with_what_you_will_learn_and_the_time(md):
    nb = read(md)
    kinds = [c.cell_type for c in nb.cells]
    first_code = kinds.index("code")
    after_setup = next(c.source for c in nb.cells[first_code + 1 :] if c.cell_type == "markdown")
    assert ":::{admonition} In this chapter" in after_setup, (
        f"{md.name}: the markdown right after the setup cell must open with ':::{{admonition}} In this chapter'")
    box = after_setup.split(":::{admonition} In this chapter", 1)[1].split("\n:::", 1)[0]
    assert "**You will learn**" in box and re.search(r"^\s*[-*] ", box, re.M), f"{md.name}: no 'You will learn' list"
    assert re.search(r"\*\*Time:\*\*.*\bminutes?\b", box), f"{md.name}: no '**Time:** ... minutes' line"


@pytest.mark.parametrize("md", [m for m in CHAPTERS if not m.stem.startswith("00_")], ids=lambda p: p.stem)
def test_has_one_to_three_knowledge_checks_with_hidden_answers(md):
    text = "\n".join(markdown_cells(md))
    boxes = list(CHECK.finditer(text))
    assert 1 <= len(boxes) <= 3, f"{md.name}: {len(boxes)} 'Check your understanding' boxes, expected 1 to 3"
    for m in boxes:
        fence = m.group(1)
        body = text[m.end() :].split("\n" + fence + "\n", 1)[0]
        assert ":::{dropdown} Answer" in body, f"{md.name}: a knowledge check without a ':::{{dropdown}} Answer'"
        question = body.split(":::{dropdown} Answer", 1)[0]
        assert "?" in question, f"{md.name}: a knowledge check that asks no question: {question.strip()[:80]!r}"


@pytest.mark.parametrize("md", CHAPTERS, ids=lambda p: p.stem)
def test_ends_with_a_summary_that_points_to_the_next_page(md):
    text = "\n".join(markdown_cells(md))
    assert "\n## Summary\n" in "\n" + text, f"{md.name}: no '## Summary' section"
    summary = text.split("## Summary", 1)[1].split("\n## ", 1)[0]
    if "## Exercises" in text:
        assert text.index("## Summary") < text.index("## Exercises"), f"{md.name}: the summary must come before the exercises"
    nxt = next_page(md)
    assert nxt is not None
    target = pathlib_name(nxt, md)
    last = summary.strip().split("\n\n")[-1]
    assert f"<{target}>" in last or f"`{target}`" in last, (
        f"{md.name}: the summary's last paragraph must link to the next page with {{doc}}`... <{target}>`; got {last[:120]!r}")


def pathlib_name(docname: str, md) -> str:
    """How a {doc} link from ``md`` names ``docname``: a sibling by its stem, else by a relative path."""
    here = md.relative_to(ROOT).parent.as_posix()
    folder, _, stem = docname.rpartition("/")
    return stem if folder == here else f"../{docname}"
