"""Chapter 15 and its lab page (issue 54): the lab page sets the chapter's model against the
same published results as the chapter, so the two pages' ``PUBLISHED`` lists must be equal."""

from __future__ import annotations

import ast

from notebooks import ROOT, read


def published(md) -> list[dict]:
    """The value of the ``PUBLISHED = [...]`` assignment in the code cells of ``md``."""
    for cell in read(md).cells:
        if cell.cell_type != "code" or "PUBLISHED = [" not in cell.source:
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "PUBLISHED":
                return eval(compile(ast.Expression(node.value), str(md), "eval"), {"dict": dict})
    raise AssertionError(f"{md.name} assigns no PUBLISHED list")


def test_chapter_and_lab_page_quote_the_same_published_results():
    chapter = published(ROOT / "chapters" / "15_g2p.md")
    lab = published(ROOT / "chapters" / "lab_15_g2p.md")
    assert len(chapter) == 4 and all(isinstance(p["wer"], float) for p in chapter)
    assert chapter == lab
