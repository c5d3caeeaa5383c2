"""What every interactive figure shares: deterministic JSON, the HTML frame, the styles.

A figure's output is one ``<figure>`` element followed by one ``<script>``. The figure
holds the labelled controls, empty places for the live numbers, a caption and a text
description of the default state (which is also what a reader without scripts sees).
The script is ``js/common.js`` plus the figure's own ``js/<name>.js``, inlined; it finds
its figure as ``document.currentScript.previousElementSibling`` (falling back to the
figure's id), draws the numbers and writes them to the figure's ``data-state``
attribute as JSON, where the browser test reads them.

Every word a script writes (table headers, live summaries, labels drawn in a plot) comes
from the figure's *strings*: a table {key: English template with {name} places} that the
figure's Python passes and ``InteractiveFigure`` writes into the figure's ``data-strings``
attribute. The French edition replaces each template by its translation from
``locales/fr/LC_MESSAGES/figures.po`` and marks the figure ``lang="fr"``
(``utils/book/translations.py``, ``translate_figures``); the script then writes its
numbers the French way too (``aiaynFig.locale`` in ``js/common.js``).
"""

from __future__ import annotations

import html
import json
import math
import numbers
import pathlib
import re

import torch

from ..core.checks import is_int

JS_DIR = pathlib.Path(__file__).resolve().parent / "js"
ID_PATTERN = re.compile(r"^[a-z][a-z0-9-]*$")

STYLE_FILE = pathlib.Path(__file__).resolve().parent / "figures.css"


def figure_json(data, digits: int = 6) -> str:
    """Serialise ``data`` for a figure: floats rounded to ``digits`` decimals, keys sorted.

    The same inputs always give the same text, so nbval can compare the output.

    Raises:
        ValueError: a number is NaN or infinite (JSON has no such values).
        TypeError: a value is not a dict, list, tuple, str, bool, int or float.
    """

    def clean(x, where):
        if isinstance(x, bool) or x is None or isinstance(x, str):
            return x
        if is_int(x):
            return int(x)  # NumPy integers too
        if isinstance(x, numbers.Real):
            x = float(x)
            if not math.isfinite(x):
                raise ValueError(f"figure data {where} is {x}: expected a finite number")
            r = round(x, digits)
            return 0.0 if r == 0 else r  # no "-0.0"
        if isinstance(x, dict):
            return {str(k): clean(v, f"{where}.{k}") for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v, f"{where}[{i}]") for i, v in enumerate(x)]
        raise TypeError(f"figure data {where} has type {type(x).__name__}: expected numbers, strings, lists, dicts")

    text = json.dumps(clean(data, "data"), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text.replace("</", "<\\/")  # never close the <script> early


def check_figure_id(figure_id: str) -> str:
    """Return ``figure_id`` if it can be an HTML id prefix, else raise ValueError."""
    if not isinstance(figure_id, str) or not ID_PATTERN.match(figure_id):
        raise ValueError(f"figure_id must be lower-case letters, digits and '-', starting with a letter; got {figure_id!r}")
    return figure_id


#: A template's places: ``{name}``, lower-case letters and "_" (what the catalogue checks keep).
PLACE = re.compile(r"\{([a-z_]+)\}")


def check_strings(strings) -> dict[str, str]:
    """``strings`` if it is a table {key: template} of non-empty strings whose places are
    ``{name}`` with lower-case letters and "_"; else raise TypeError or ValueError."""
    if not isinstance(strings, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in strings.items()):
        raise TypeError(f"strings must be a dict of str to str (key: English template), got {strings!r:.80}")
    for key, text in strings.items():
        if not text.strip():
            raise ValueError(f"strings[{key!r}] is empty")
        bad = [b for b in re.findall(r"\{[^{}]*\}", text) if not PLACE.fullmatch(b)]
        if bad:
            raise ValueError(f"strings[{key!r}] has places {bad}: write {{name}} with lower-case letters and '_'")
    return dict(strings)


def _attribute(text: str) -> str:
    """``text`` escaped for an HTML attribute in single quotes (JSON's double quotes stay as they are)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;")


def style() -> str:
    """The figures' CSS (figures.css without its comment and line breaks)."""
    text = re.sub(r"/\*.*?\*/", "", STYLE_FILE.read_text(), flags=re.S)
    return "".join(line.strip() for line in text.splitlines())


def script(name: str) -> str:
    """The browser code of figure ``name``: js/common.js then js/<name>.js."""
    path = JS_DIR / f"{name}.js"
    if not path.is_file():
        raise FileNotFoundError(f"no browser code for figure {name!r}: expected {path}")
    return (JS_DIR / "common.js").read_text() + "\n" + path.read_text()


class InteractiveFigure:
    """An interactive figure: shown as HTML by Jupyter and by the book (``_repr_html_``).

    Args:
        name: the figure's kind (its script is ``js/<name>.js``).
        figure_id: the HTML id of the ``<figure>``; every inner id starts with it.
        body: inner HTML (controls and places for the numbers).
        caption: the caption (plain text).
        description: what the figure shows in its default state (plain text, with numbers).
        data: what the script needs (numbers rounded, keys sorted by ``figure_json``).
        digits: decimals kept in ``data``.
        strings: {key: English template} of every text the script writes (``{name}`` marks
            a place the script fills: a number, a word of the data); see the module's docstring.

    ``str(fig)`` is the whole HTML; ``fig.nbytes`` its size in bytes (UTF-8).
    """

    def __init__(self, name, figure_id, body, caption, description, data, digits=6, strings=None):
        self.name = name
        self.figure_id = check_figure_id(figure_id)
        self.caption = caption
        self.description = description
        fid = self.figure_id
        self.strings = check_strings(strings or {})
        self.html = (
            f'<figure class="aiayn-fig" id="{fid}" data-figure="{name}" role="figure" '
            f'aria-labelledby="{fid}-cap" aria-describedby="{fid}-desc" '
            f"data-strings='{_attribute(figure_json(self.strings))}'>"
            f"<style>{style()}</style>"
            f"{body}"
            f'<figcaption id="{fid}-cap">{html.escape(caption)}</figcaption>'
            f'<p class="fig-desc" id="{fid}-desc">{html.escape(description)}</p>'
            f"</figure>"
            f"<script>{script(name)}\n"
            f"aiaynFigure_{name.replace('-', '_')}(document.currentScript.previousElementSibling"
            f' || document.getElementById("{fid}"), {figure_json(data, digits)});</script>'
        )
        self.nbytes = len(self.html.encode("utf-8"))

    def _repr_html_(self):
        return self.html

    def __str__(self):
        return self.html

    def __repr__(self):
        return f"<interactive figure {self.name!r} #{self.figure_id}: {self.nbytes:,} bytes of HTML>"


def float_matrix(x, name, shape=None):
    """``x`` as a float64 copy, detached; raise unless it is a 2-D floating-point tensor (of ``shape``, if given).

    Raises:
        TypeError: ``x`` is not a 2-D floating-point tensor (the message names it ``name``).
        ValueError: its shape is not ``shape``.
    """
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.dim() != 2:
        got = f"a {x.dim()}-D {x.dtype} tensor" if isinstance(x, torch.Tensor) else type(x).__name__
        raise TypeError(f"{name} must be a 2-D floating-point tensor, got {got}")
    if shape is not None and tuple(x.shape) != shape:
        raise ValueError(f"{name} must have shape {shape}, got {tuple(x.shape)}")
    return x.detach().double()
