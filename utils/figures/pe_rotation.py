"""Chapter 7's figure: a shift by k positions rotates each (sin, cos) pair (section 3.5).

For pair i with frequency omega_i = 10000^(-2i/d_model), the pair at position pos + k
is the pair at position pos turned by the angle omega_i k, whatever pos is. Sliders
choose the shift k, the pair i and the position; the figure draws both points on the
unit circle and prints the rotation, the two pairs and their difference. The browser
computes the encoding with the formula in float64, so the difference it prints is
float64 rounding; the description's numbers come from ``positional_encoding``, whose
float32 table leaves a difference of float32 rounding, and the description says so.
"""

from __future__ import annotations

import math

import torch

from ..core.checks import is_int
from ..core.numerics import within
from ..model.embeddings import positional_encoding
from .base import InteractiveFigure

#: Every text the script writes (``js/pe_rotation.js``), in English; ``{name}`` is filled by the script.
STRINGS = {
    "plot_legend": "\u25cb pos {pos}   \u25a0 pos {later}", "plot_axes": "x: sin, y: cos (columns {a}, {b})",
    "plot_alt": "Unit circle with the pair at position {pos} (ring) and at position {later} (square); "
                "angle between them {angle} rad",
    "rotation_caption": "Rotation M, angle {angle}", "column": "col {c}", "row": "row {r}",
    "pairs_caption": "Pairs (columns {a}, {b})",
    "difference": "max |M\u00b7PE(pos) \u2212 PE(pos + k)| = {diff} (float64 rounding: the browser computes in "
                  "float64; the chapter's float32 table differs by float32 rounding, below {bound})",
    "summary": "omega_{i} = 10000^(\u22122\u00b7{i}/{d}) = {omega}; angle omega\u00b7k = {angle} rad = {degrees}\u00b0; "
               "wavelength {wavelength} positions.",
}


def _int(value, name, lo, hi):
    if not is_int(value) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an int in {lo}..{hi}, got {value!r}")
    return int(value)


def pe_rotation_figure(d_model=64, k=3, i=5, pos=10, max_pos=50, figure_id="fig-pe-rotation"):
    """Interactive check that PE(pos + k) is PE(pos) rotated by omega_i k, pair by pair.

    Args:
        d_model: model width (even); the pairs are i = 0 .. d_model/2 - 1.
        k, i, pos: the shift, the pair and the position of the default state.
        max_pos: largest position and shift the sliders offer.
        figure_id: HTML id of the figure.

    Raises:
        ValueError: d_model odd or not positive; k, i, pos or max_pos out of range.
    """
    if not is_int(d_model) or d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be an even int >= 2, got {d_model!r}")
    d_model = int(d_model)
    max_pos = _int(max_pos, "max_pos", 1, 10_000)
    k, pos = _int(k, "k", 0, max_pos), _int(pos, "pos", 0, max_pos)
    i = _int(i, "i", 0, d_model // 2 - 1)
    omega = 10000 ** (-2 * i / d_model)
    table = positional_encoding(pos + k + 1, d_model).double()
    here, later = table[pos, 2 * i:2 * i + 2], table[pos + k, 2 * i:2 * i + 2]
    M = torch.tensor([[math.cos(omega * k), math.sin(omega * k)], [-math.sin(omega * k), math.cos(omega * k)]],
                     dtype=torch.float64)
    diff = (M @ here - later).abs().max().item()
    description = (
        f"Default state: d_model = {d_model}, pair i = {i} (columns {2 * i} and {2 * i + 1}), shift k = {k}, "
        f"position {pos}. omega_{i} = {omega:.5f}, so the rotation angle is omega·k = {omega * k:.5f} rad "
        f"({math.degrees(omega * k):.2f}°). The pair at position {pos} is ({here[0]:.4f}, {here[1]:.4f}); "
        f"turned by that angle it lands on the pair at position {pos + k}, ({later[0]:.4f}, {later[1]:.4f}). "
        f"In the course's float32 table the two differ by {within(diff, 1e-6)}, float32 rounding; the figure "
        "computes both pairs from the formula in float64, so the difference it prints is float64 rounding, "
        f"far smaller. Both points are drawn on the unit circle: a ring for position {pos}, "
        f"a square for position {pos + k}."
    )
    fid = figure_id
    sliders = "".join(
        f'<span class="fig-ctl"><label for="{fid}-{name}">'
        f'{label}: <output data-part="{name}-out" for="{fid}-{name}">{value}</output></label>'
        f'<input type="range" id="{fid}-{name}" data-part="{name}" min="0" max="{hi}" step="1" value="{value}"></span>'
        for name, label, value, hi in (("k", "shift k", k, max_pos), ("i", "pair i", i, d_model // 2 - 1),
                                       ("pos", "position", pos, max_pos)))
    body = (
        f'<div class="fig-controls">{sliders}</div>'
        '<p class="fig-note" data-part="summary" aria-live="polite"></p>'
        '<div class="fig-row"><div data-part="plot" role="img" aria-label="Unit circle with the pair of columns 2i and '
        '2i+1 at position pos (a ring) and at position pos + k (a square); the angle between them is omega_i k">'
        '</div><div data-part="numbers"></div></div>'
    )
    data = {"d_model": d_model, "k": k, "i": i, "pos": pos}
    caption = ("A shift is a rotation. Move k, i and the position: the pair of columns 2i and 2i+1 at position "
               "pos + k is always the pair at pos turned by the angle omega_i·k, which does not depend on pos.")
    return InteractiveFigure("pe_rotation", fid, body, caption, description, data, strings=STRINGS)
