"""What a page measures and checks: the glue names and the asserts of a MyST notebook.

The learner's-path split (issue 54) moved the capstones' full record (chapters 15 to 17)
onto lab pages. ``tests/test_learners_path.py`` compares what each capstone glued and
asserted before the split (``tests/capstone_record.json``, written by ``snapshot``) with
what its teaching chapter and its lab page glue and assert now: nothing measured may be
lost on the way.

    python -m utils.book.record chapters/16_translation.md   # print the page's glue names and asserts
"""

from __future__ import annotations

import ast
import pathlib
import re
import sys

import jupytext


def _code_cells(md: pathlib.Path) -> list[str]:
    nb = jupytext.read(md)
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        # IPython lines (magics, shell escapes) are not Python
        out.append("\n".join("" if l.lstrip().startswith(("%", "!")) else l for l in cell.source.splitlines()))
    return out


def _normal(node: ast.AST) -> str:
    return re.sub(r"\s+", " ", ast.unparse(node)).strip()


def glue_names(md) -> set[str]:
    """The first argument of every ``glue(...)`` call in the code cells of ``md``, as source
    (a literal name as itself, ``'ratio'``; an f-string as written, ``f'{key}_gap'``).

    Raises:
        SyntaxError: a code cell is not Python.
    """
    names = set()
    for src in _code_cells(pathlib.Path(md)):
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "glue" \
                    and node.args:
                arg = node.args[0]
                names.add(arg.value if isinstance(arg, ast.Constant) else _normal(arg))
    return names


def asserts(md) -> set[str]:
    """The condition of every ``assert`` statement in the code cells of ``md``, as normalised
    source (``ast.unparse``, whitespace collapsed; the message is left out, so rewording a
    message keeps the check).

    Raises:
        SyntaxError: a code cell is not Python.
    """
    out = set()
    for src in _code_cells(pathlib.Path(md)):
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Assert):
                out.add(_normal(node.test))
    return out


def snapshot(mds) -> dict:
    """{page stem: {"glue": sorted names, "asserts": sorted conditions}} of the given pages."""
    return {pathlib.Path(md).stem: dict(glue=sorted(glue_names(md)), asserts=sorted(asserts(md))) for md in mds}


if __name__ == "__main__":
    import json

    print(json.dumps(snapshot(sys.argv[1:]), indent=1, ensure_ascii=False))
