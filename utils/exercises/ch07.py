"""Answer checkers for chapter 7 (positional encoding, section 3.5)."""

import math

import torch

from ..embeddings import positional_encoding
from . import register


@register("7.1", prompt="Give (PE(2, 0), PE(2, 1)) as a tuple of two floats.",
          hint="pair 0 has omega = 1, so the angle at position 2 is 2 radians: sin 2 and cos 2.")
def _pe_at_position_2():
    pe = positional_encoding(3, 4)
    return (float(pe[2, 0]), float(pe[2, 1]))


@register("7.2", prompt="Give the wavelength of pair 128 at d_model = 512, in positions, as a float.",
          atol=1e-2, hint="wavelength = 2 pi * 10000^(2i / d_model), and 2i / d_model = 1/2 here.")
def _wavelength_pair_128():
    # Recover omega from the table itself: at position 1 the pair holds (sin omega, cos omega).
    pe = positional_encoding(2, 512).double()
    omega = math.atan2(pe[1, 256].item(), pe[1, 257].item())
    return 2 * math.pi / omega


@register("7.3", prompt="Give the 2x2 rotation matrix M with pair5(pos + 3) = M @ pair5(pos) at d_model = 64, "
          "as a tensor of shape (2, 2).",
          hint="a rotation by the angle 3 * omega_5: [[cos, sin], [-sin, cos]]; check the sign of the sines.")
def _shift_matrix():
    pe = positional_encoding(60, 64).double()
    a, b = pe[:-3, 10:12], pe[3:, 10:12]  # rows: pair 5 at pos and at pos + 3
    m_t = torch.linalg.lstsq(a, b).solution  # b = a @ M^T
    return m_t.T.float()
