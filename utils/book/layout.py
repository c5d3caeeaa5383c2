"""Outputs that fit the page: results tables, and long text the browser wraps.

No output of the book may be wider than its text column (about 77 characters of
monospace at 1280 px; ``tests/test_browser.py`` measures every page). Printed
lines are kept short with ``textwrap`` or line breaks; two kinds of output need more:

* :class:`Table`, a results table. A chapter builds it from rows of strings it has
  formatted itself (it chooses the digits) and shows it as a cell's last expression or
  with ``display``. Jupyter, Colab and the book then show the HTML form: a real
  ``<table>`` that wraps its cells to the width of the page (and scrolls inside its own
  box on a phone, not the page), where printed text would run off the column. A
  terminal, ``print`` and nbval's comparison see the text form, made from the same
  rows. Both forms are made by `tabulate <https://pypi.org/project/tabulate/>`_ and
  are deterministic, so nbval compares them digit for digit.
* :class:`WrappedText`, text whose lines must not be changed (source code): the
  text form is the text as it is, the HTML form a ``<pre>`` whose long lines the
  browser wraps at the column's edge, as an editor does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

from tabulate import tabulate

__all__ = ["Table", "WrappedText"]

_ALIGN = {"left", "right", "center"}
_GROUP = re.compile(r"\([^()]*\)")  # a bracketed group: a shape such as (1, 4, 6, 5), a pair


def unbreakable_groups(cell: str) -> str:
    """The cell with no-break spaces inside each (...) group: HTML wraps between shapes, not inside one."""
    return _GROUP.sub(lambda m: m[0].replace(" ", "\u00a0"), cell)


class Table:
    """A table of pre-formatted cells, shown as HTML in a notebook and as text elsewhere.

    Args:
        rows: the body, one sequence of cells per row; each cell is shown as ``str(cell)``
            (format numbers in the chapter: ``f"{loss:.3f}"``).
        headers: one header per column.
        align: ``"left"``, ``"right"`` or ``"center"`` per column; by default the first
            column is left-aligned and the others (numbers) right-aligned.
        title: an optional caption, the table's first line in text.

    Raises:
        ValueError: a row or ``align`` has not one entry per header, or an alignment
            is unknown.
    """

    def __init__(self, rows: Sequence[Sequence], headers: Sequence[str],
                 align: Sequence[str] | None = None, title: str | None = None):
        self.headers = [str(h) for h in headers]
        self.rows = [[str(c) for c in row] for row in rows]
        n = len(self.headers)
        self.align = list(align) if align is not None else ["left"] + ["right"] * (n - 1)
        bad = [i for i, row in enumerate(self.rows) if len(row) != n]
        if bad:
            raise ValueError(f"every row needs {n} cells (one per header); row {bad[0]} has {len(self.rows[bad[0]])}")
        if len(self.align) != n or not set(self.align) <= _ALIGN:
            raise ValueError(f"align needs one of {sorted(_ALIGN)} per column ({n}), got {self.align}")
        self.title = title

    def _tabulate(self, fmt: str, rows=None) -> str:
        return tabulate(self.rows if rows is None else rows, self.headers, tablefmt=fmt, colalign=self.align,
                        disable_numparse=True)

    def text(self) -> str:
        """The plain-text form: the title (if any), then aligned columns under a rule."""
        body = self._tabulate("simple")
        return f"{self.title}\n{body}" if self.title else body

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        """The HTML form: a ``<table>`` (cells escaped) in a box that scrolls sideways if it must.

        The browser wraps long cells at their spaces, except inside a bracketed group
        (a shape such as ``(1, 4, 6, 5)`` stays on one line).
        """
        html = self._tabulate("html", [[unbreakable_groups(c) for c in row] for row in self.rows])
        # a space between cells, so that the page's text (search, copy, a screen reader) keeps them apart
        html = html.replace("</td><td", "</td> <td").replace("</th><th", "</th> <th")
        if self.title:
            html = html.replace("<table>", f"<table>\n<caption>{escape(self.title)}</caption>", 1)
        return f'<div class="course-table" style="overflow-x: auto;">\n{html}\n</div>'


class WrappedText:
    """Text shown unchanged, whose long lines the browser wraps instead of cutting.

    ``WrappedText(inspect.getsource(f))`` as a cell's last expression shows ``f``'s
    source: as it is in a terminal, and in a ``<pre>`` with ``white-space: pre-wrap``
    in Jupyter and the book, where a line longer than the column continues on the next.

    Raises:
        TypeError: ``text`` is not a str.
    """

    def __init__(self, text: str):
        if not isinstance(text, str):
            raise TypeError(f"WrappedText shows a str, got {type(text).__name__}")
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return f'<pre class="course-wrapped" style="white-space: pre-wrap;">{escape(self.text)}</pre>'
