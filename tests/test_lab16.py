"""Chapter 16 and its lab page: every run of a figure's table is drawn.

Issue 54 found Figure 16.2 (the recipe ablations) drawing 10 of its table's 11 runs: its
grey shades were ``["black", "0.45"] * (len(styles) // 2)``, 10 shades for 11 styles, and
``zip`` stopped at the shorter list, so ``lr0.5``, the run the section's conclusion rests
on, was neither drawn nor in the legend. Here each figure that plots a table's runs is
drawn again from the shipped data, by the page's own code, and every panel must hold one
labelled line per row of the table (and, where the rows are the points of each line, one
point per row). The chapter's own data-size figure (three lines over the same ``curve``, one point per
share) is not drawn again here: executing the chapter too would cost CI a minute and a half.
"""

from __future__ import annotations

import contextlib
import io
import os

import matplotlib
import pytest
from notebooks import ROOT, read

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

#: Per page: the figures that plot a table's runs -> what must be drawn, as an expression in
#: the page's namespace after the figure's cell: ("lines", names) for one labelled line per
#: run of the table in every panel, in the table's order; ("points", n) for n points on
#: every labelled line (the table's rows are the x values).
FIGURES = {
    "chapters/lab_16_translation.md": {
        "fig-lab16-ablations": ("lines", "list(ablations)"),
        "fig-lab16-long-runs": ("lines", "list(long_runs)"),
        "fig-lab16-data-size": ("points", "len(curve)"),
        "fig-lab16-curriculum": ("lines", "['paper', 'entries1st']"),
        "fig-lab16-final": ("lines", "['paper recipe'] + [f'final, seed {s}' for s in final]"),
    },
}


def figure_name(cell) -> str | None:
    return cell.metadata.get("mystnb", {}).get("figure", {}).get("name")


def drawn(md, figures: dict) -> dict[str, tuple]:
    """Execute the code cells of MyST notebook ``md`` in order (in chapters/, as Jupyter does;
    glue and ``plt.show`` silenced) until every figure of ``figures`` is drawn; return, for
    each, (what the table says must be drawn, what each panel drew: its labelled lines'
    labels or their numbers of points, the entries of each legend)."""
    import myst_nb

    found, ns = {}, {"__name__": "__main__"}
    show, glue, cwd = plt.show, myst_nb.glue, os.getcwd()
    plt.show, myst_nb.glue = (lambda *a, **k: None), (lambda *a, **k: None)
    try:
        os.chdir(ROOT / "chapters")
        for cell in read(md).cells:
            if cell.cell_type != "code":
                continue
            source = "\n".join(l for l in cell.source.splitlines() if not l.lstrip().startswith(("%", "!")))
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(source, f"{md.name} cell", "exec"), ns)
            name = figure_name(cell)
            if name in figures:
                kind, expression = figures[name]
                panels = [[line for line in ax.get_lines() if not line.get_label().startswith("_")]
                          for ax in plt.gcf().axes]
                got = [[line.get_label() for line in lines] if kind == "lines" else
                       [len(line.get_xdata()) for line in lines] for lines in panels if lines]
                legends = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in plt.gcf().axes
                           if ax.get_legend() is not None]
                found[name] = (eval(expression, ns), got, legends)
            plt.close("all")
            if set(found) == set(figures):
                break
    finally:
        plt.show, myst_nb.glue = show, glue
        os.chdir(cwd)
    return found


@pytest.mark.parametrize("page", sorted(FIGURES))
def test_every_run_of_a_figures_table_is_drawn(page):
    figures = FIGURES[page]
    found = drawn(ROOT / page, figures)
    assert set(found) == set(figures), f"{page}: figures not found: {sorted(set(figures) - set(found))}"
    for name, (want, panels, legends) in found.items():
        assert panels and legends, f"{name}: no labelled line or no legend drawn"
        for got in panels:
            if figures[name][0] == "lines":
                assert got == want, f"{name}: a panel draws {got}, its table has the runs {want}"
            else:
                assert got == [want] * len(got), f"{name}: lines of {got} points, the table has {want} rows"
        if figures[name][0] == "lines":
            assert all(entries == want for entries in legends), f"{name}: legend {legends}, table's runs {want}"
