"""Exercises of chapter 7 (positional encoding, section 3.5).

Every expected answer, and the wrong answer of every likely mistake, is read from the
course's table ``positional_encoding`` when checked.
"""

from __future__ import annotations

import math

import torch

from ..model.embeddings import positional_encoding
from . import mistake, register


def _pe(pos: int, cols, d_model: int = 8) -> tuple:
    """The entries of the d_model-wide table at position ``pos`` and columns ``cols``, as floats."""
    pe = positional_encoding(pos + 1, d_model).double()
    return tuple(float(pe[pos, c]) for c in cols)


@register("7.1", prompt="Give (PE(2, 2), PE(2, 3)) at d_model = 8 as a tuple of two floats, to 4 decimals.",
          decimals=4,
          hint="columns 2 and 3 are pair i = 1; find its omega_1 = 10000^(-2i / d_model), then the "
               "angle at position 2, and take its sine and cosine (in radians).",
          minutes=10,
          full="omega_1 at d_model = 8, the angle at position 2 in radians, its sine (even column) and cosine (odd "
               "column).",
          partial="Pair 0 or the column index used as i, degrees, sine and cosine swapped, or position 1.")
def _pe_pair_1_at_position_2():
    return _pe(2, (2, 3))


@mistake("7.1", "This is pair 0 (columns 0 and 1); columns 2 and 3 are pair 1")
def _ex_7_1_pair_0():
    return _pe(2, (0, 1))


@mistake("7.1", "This uses the column index 2 as the pair index i; columns 2 and 3 are pair i = 1, "
         "so the exponent is 2i / d_model = 2 / 8")
def _ex_7_1_column_as_pair():
    return _pe(2, (4, 5))


@mistake("7.1", "The exponent's sign is flipped: the angle is pos divided by 10000^(2i / d_model), "
         "not multiplied by it")
def _ex_7_1_sign():
    angle = 2 * 10000 ** (2 / 8)
    return math.sin(angle), math.cos(angle)


@mistake("7.1", "The angle was taken in degrees; sin and cos here take radians")
def _ex_7_1_degrees():
    angle = math.radians(2 * 10000 ** (-2 / 8))
    return math.sin(angle), math.cos(angle)


@mistake("7.1", "Sine and cosine are swapped: the even column holds the sine, the odd column the cosine")
def _ex_7_1_swapped():
    return _pe(2, (3, 2))


@mistake("7.1", "This is position 1; positions count from 0 in the formula, so position 2 is the third row")
def _ex_7_1_position_1():
    return _pe(1, (2, 3))


def _wavelength(pair: int, d_model: int = 512) -> float:
    """Recover omega from the table itself: at position 1 the pair holds (sin omega, cos omega)."""
    pe = positional_encoding(2, d_model).double()
    omega = math.atan2(pe[1, 2 * pair].item(), pe[1, 2 * pair + 1].item())
    return 2 * math.pi / omega


@register("7.2", prompt="Give the wavelength of pair 64 (columns 128 and 129) at d_model = 512, in "
          "positions, as a float to 2 decimals.",
          decimals=2, hint="wavelength = 2 pi / omega_i = 2 pi * 10000^(2i / d_model); simplify the "
          "exponent first.",
          minutes=5,
          full="`2 pi / omega_i` with the exponent `2i / d_model` simplified for pair 64.",
          partial="The exponent `i / d_model`, the column index as i, `1 / omega` without the 2 pi, or omega itself.")
def _wavelength_pair_64():
    return _wavelength(64)


@mistake("7.2", "The exponent is 2i / d_model, not i / d_model")
def _ex_7_2_i_over_d():
    return _wavelength(32)


@mistake("7.2", "This uses the column index 128 as the pair index; pair 64 holds columns 128 and 129")
def _ex_7_2_column_as_pair():
    return _wavelength(128)


@mistake("7.2", "This is 1 / omega, the positions per radian; a full period is 2 pi radians")
def _ex_7_2_per_radian():
    return _wavelength(64) / (2 * math.pi)


@mistake("7.2", "This is the angular frequency omega; the wavelength is the number of positions "
         "in one full turn, 2 pi / omega")
def _ex_7_2_omega():
    return 2 * math.pi / _wavelength(64)


def _shift_matrix(pair: int, k: int, d_model: int = 64) -> torch.Tensor:
    """The 2x2 M with pair(pos + k) = M @ pair(pos), fitted on the table by least squares."""
    pe = positional_encoding(60, d_model).double()
    cols = slice(2 * pair, 2 * pair + 2)
    a, b = pe[:-k, cols], pe[k:, cols]  # rows: the pair at pos and at pos + k
    m_t = torch.linalg.lstsq(a, b).solution  # b = a @ M^T
    return m_t.T.float()


@register("7.3", prompt="Give the 2x2 rotation matrix M with pair4(pos + 2) = M @ pair4(pos) at d_model = 64 "
          "(pair 4: columns 8 and 9), as a tensor of shape (2, 2), to 4 decimals.",
          decimals=4,
          hint="a rotation by the angle k * omega_i: [[cos, sin], [-sin, cos]]; check the sign of the "
               "sines on position 0, where the pair is (0, 1).",
          minutes=15,
          full="The rotation by 2 omega_4, the signs of its sines checked at position 0, and M found a second way, "
               "from rows of the table alone.",
          partial="One of the two ways; the inverse rotation, a shift of one position, or the column index as the "
                  "pair.")
def _shift_matrix_pair_4():
    return _shift_matrix(4, 2)


@mistake("7.3", "This matrix rotates the other way, from pos + 2 back to pos; check the sign of the "
         "sines on position 0, where the pair is (0, 1)")
def _ex_7_3_backwards():
    return _shift_matrix(4, 2).T


@mistake("7.3", "This uses the column index 8 as the pair index; pair 4 holds columns 8 and 9")
def _ex_7_3_column_as_pair():
    return _shift_matrix(8, 2)


@mistake("7.3", "This rotates by omega_4, a shift of one position; a shift of k turns by k omega_4")
def _ex_7_3_one_step():
    return _shift_matrix(4, 1)


@mistake("7.3", "This is the chapter's matrix, for pair 5 and a shift of 3")
def _ex_7_3_chapter():
    return _shift_matrix(5, 3)
