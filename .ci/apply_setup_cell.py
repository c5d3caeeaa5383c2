"""Make the first code cell of every notebook the canonical setup cell, ``.ci/setup_cell.py``.

    .venv/bin/python .ci/apply_setup_cell.py           # rewrite chapters/*.md, solutions/*.md and their .ipynb
    .venv/bin/python .ci/apply_setup_cell.py --check   # only report notebooks that differ (exit 1 if any)
    .venv/bin/python .ci/apply_setup_cell.py chapters/02_scaled_dot_product_attention.md   # only these notebooks

The URL in the canonical cell must be ``_config.yml``'s ``repository.url``; the script
refuses to run otherwise. In each MyST ``.md`` only the body of the first
``{code-cell}`` is replaced (its options, such as ``:tags: [hide-cell]``, stay). In
the paired ``.ipynb`` only that cell's source is replaced: the setup cell prints
nothing, so the stored outputs and execution counts stay valid and no notebook has
to be executed again (``tests/test_pairing.py`` confirms the pair still matches).
"""

from __future__ import annotations

import pathlib
import re
import sys

import nbformat
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
CANONICAL = ROOT / ".ci" / "setup_cell.py"
CELL = re.compile(r"^(?P<fence>`{3,})\{code-cell\}[^\n]*\n(?P<opts>(?::[^\n]*\n)*\n?)(?P<body>.*?)^(?P=fence)[ \t]*$",
                  re.M | re.S)


def canonical() -> str:
    return CANONICAL.read_text(encoding="utf-8").strip("\n")


def notebooks() -> list[pathlib.Path]:
    """Every MyST notebook in chapters/ and solutions/ (a .md with a jupytext header)."""
    return [md for d in ("chapters", "solutions") for md in sorted((ROOT / d).glob("*.md"))
            if md.read_text(encoding="utf-8").startswith("---\njupytext:")]


def with_setup_cell(text: str, cell: str) -> str:
    """``text`` (a MyST notebook) with the body of its first code cell replaced by ``cell``."""
    m = CELL.search(text)
    if m is None:
        raise ValueError("no {code-cell} found")
    return text[:m.start("body")] + cell + "\n" + text[m.end("body"):]


def first_code_cell(nb):
    return next(c for c in nb.cells if c.cell_type == "code")


def check_url(cell: str) -> None:
    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    if f'COURSE_REPO = "{url}"' not in cell:
        sys.exit(f"{CANONICAL.relative_to(ROOT)} must set COURSE_REPO = \"{url}\" (_config.yml repository.url)")


def main(argv: list[str]) -> int:
    check_only = "--check" in argv
    chosen = [pathlib.Path(a).resolve() for a in argv if a != "--check"]
    known = notebooks()
    unknown = [str(p) for p in chosen if p not in known]
    if unknown:
        sys.exit(f"not a MyST notebook of chapters/ or solutions/: {', '.join(unknown)} (give the .md files)")
    cell = canonical()
    check_url(cell)
    differ = []
    for md in chosen or known:
        text = md.read_text(encoding="utf-8")
        new = with_setup_cell(text, cell)
        ipynb = md.with_suffix(".ipynb")
        nb = nbformat.read(ipynb, as_version=4) if ipynb.exists() else None
        nb_differs = nb is not None and first_code_cell(nb).source != cell
        if new == text and not nb_differs:
            continue
        differ.append(str(md.relative_to(ROOT)))
        if check_only:
            continue
        md.write_text(new, encoding="utf-8")
        if nb_differs:
            first_code_cell(nb).source = cell
            nbformat.write(nb, ipynb)
    verb = "differ from" if check_only else "now use"
    print(f"{len(differ)} notebook(s) {verb} {CANONICAL.relative_to(ROOT)}" + "".join(f"\n  {d}" for d in differ))
    return 1 if check_only and differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
