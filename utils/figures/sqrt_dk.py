"""Chapter 2's figure on the division by sqrt(d_k) (section 3.2.1, footnote 4).

The three-token example as a live weight matrix. One slider turns the query of one
token in the plane (keys and values stay, so only that token's row changes). A second
slider raises the dimension d from 2 to 512 by *lifting* every query and key: the
2-D vector is repeated d/2 times and multiplied by (d/2)^(-1/4). A dot product of two
lifted vectors is then the 2-D one times sqrt(d/2): it grows like sqrt(d), as the dot
product of random vectors does, and dividing by sqrt(d) gives back exactly the 2-D
scaled score. A switch removes the division, and the softmax saturates as d grows.
The values keep their two coordinates: they do not enter the scores.
"""

from __future__ import annotations

import math

from ..core.checks import is_int
from ..model.attention import scaled_dot_product_attention
from .base import InteractiveFigure, float_matrix

D_MIN, D_MAX = 2, 512
#: Every text the script writes (``js/sqrt_dk.js``), in English; ``{name}`` is filled by the script.
STRINGS = {
    "token": "token {i}", "query_key": "query \\ key", "row_sum": "row sum", "column": "col {c}",
    "scores_divided": "Scores q\u00b7k/\u221a{d}", "scores_not_divided": "Scores q\u00b7k (not divided)",
    "weights_caption": "Weights A (rows sum to 1)", "output_caption": "Output A V",
    "summary_d2": "Query of token {t} = {query} at d = 2, the worked example itself (no lifting); {scaling}. "
                  "Largest weight in row {t}: {top}.",
    "summary_lifted": "Query of token {t} = {query}, lifted to d = {d}: its two numbers repeated {copies} times "
                      "and multiplied by {copies}^(-1/4) = {factor}, giving {lifted}; {scaling}. "
                      "Largest weight in row {t}: {top}.",
    "scaling_on": "scores divided by \u221a{d}", "scaling_off": "scores not divided",
}


def sqrt_dk_figure(Q, K, V, token=2, figure_id="fig-sqrt-dk"):
    """Interactive weights of a small example as a query turns and the dimension grows.

    Args:
        Q, K: (n, 2) queries and keys (2-D, so a query can turn in their plane).
        V: (n, d_v) values.
        token: index of the token whose query the angle slider turns; it starts at
            the angle of ``Q[token]`` and keeps its length.
        figure_id: HTML id of the figure (unique on its page).

    Returns:
        An :class:`~utils.figures.base.InteractiveFigure` whose default state is d = 2
        with the division, i.e. ``scaled_dot_product_attention(Q, K, V)``.

    Raises:
        TypeError, ValueError: an input of the wrong kind or shape, ``token`` out of range,
            or a zero query (it has no angle).
    """
    Q = float_matrix(Q, "Q")
    n = Q.size(0)
    if Q.size(1) != 2:
        raise ValueError(f"Q must have shape (n, 2): the slider turns a query in a plane; got {tuple(Q.shape)}")
    K = float_matrix(K, "K", (n, 2))
    V = float_matrix(V, "V")
    if V.size(0) != n:
        raise ValueError(f"V must have one row per token ({n}), got shape {tuple(V.shape)}")
    if not is_int(token) or not 0 <= token < n:
        raise ValueError(f"token must be an index in 0..{n - 1}, got {token!r}")
    token = int(token)
    radius = Q[token].norm().item()
    if radius == 0:
        raise ValueError(f"Q[{token}] is zero: it has no angle to turn")
    angle = round(math.degrees(math.atan2(Q[token, 1].item(), Q[token, 0].item())))

    out, A = scaled_dot_product_attention(Q, K, V)
    rows = "; ".join(f"row {i}: " + ", ".join(f"{x:.4f}" for x in r) for i, r in enumerate(A.tolist()))
    description = (
        f"Default state: d = 2, divided by √d, token {token}'s query at {angle}° (length {radius:.4f}). "
        f"The weights are {rows}; each row sums to 1. The output rows are "
        + "; ".join("[" + ", ".join(f"{x:.4f}" for x in r) + "]" for r in out.tolist())
        + f". With the division the matrix stays the same at every d; without it, row {token} puts almost all "
        "its weight on one token by d = 512."
    )
    fid = figure_id
    body = (
        '<div class="fig-controls">'
        f'<span class="fig-ctl"><label for="{fid}-angle">angle of token {token}\'s query: <output data-part="angle-out" '
        f'for="{fid}-angle">{angle}°</output></label>'
        f'<input type="range" id="{fid}-angle" data-part="angle" min="-180" max="180" step="1" value="{angle}"></span>'
        f'<span class="fig-ctl"><label for="{fid}-d">dimension d: <output data-part="d-out" for="{fid}-d">{D_MIN}</output></label>'
        f'<input type="range" id="{fid}-d" data-part="d" min="{D_MIN}" max="{D_MAX}" step="2" value="{D_MIN}"></span>'
        f'<label for="{fid}-scale"><input type="checkbox" id="{fid}-scale" data-part="scale" checked> '
        "divide the scores by √d</label>"
        "</div>"
        '<p class="fig-note" data-part="summary" aria-live="polite"></p>'
        '<div class="fig-row"><div data-part="scores"></div><div data-part="weights" role="img" '
        'aria-label="The weight matrix: rows are queries, columns are keys, each cell holds its number"></div>'
        '<div data-part="output"></div></div>'
    )
    data = {"Q": Q.tolist(), "K": K.tolist(), "V": V.tolist(), "token": token, "radius": radius, "angle": angle}
    caption = (f"Why divide by √d_k. Turn token {token}'s query: only row {token} changes. Raise d: with the "
               "division the weights stay put; switch the division off and the row collapses onto one key.")
    return InteractiveFigure("sqrt_dk", fid, body, caption, description, data, strings=STRINGS)
