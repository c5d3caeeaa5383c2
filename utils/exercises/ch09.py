"""Exercises of chapter 9 (why self-attention, section 4).

Expected answers are computed here: the cost ratio from the per-layer counts,
the path length by boolean matrix products of the window mask.
"""

from __future__ import annotations

import torch

from . import register


def _window_mask(n: int, r: int) -> torch.Tensor:
    """(n, n) bool: query i may attend to key j when |i - j| <= r."""
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    return (i - j).abs() <= r


def _layers_until_all_connected(mask: torch.Tensor) -> int:
    """Smallest L such that the boolean product of L copies of ``mask`` is True everywhere."""
    reach, layers = mask.clone(), 1
    while not reach.all():
        reach = (reach.int() @ mask.int()) > 0
        layers += 1
        if layers > mask.size(0):
            raise ValueError("the mask never connects all positions")
    return layers


@register("9.1", prompt="Ratio n^2 d / (n d^2) for n = 1000, d = 512.",
          hint="the ratio simplifies to n / d.")
def ex_9_1():
    n, d = 1000, 512
    return (n * n * d) / (n * d * d)


@register("9.2", prompt="Layers of restricted attention (r = 4) to connect 100 positions.",
          hint="one layer moves information at most r positions; the farthest pair is n - 1 apart.")
def ex_9_2():
    return _layers_until_all_connected(_window_mask(100, 4))


@register("9.3", prompt="Number of True cells in window_mask(10, 2).",
          hint="count the diagonal and the off-diagonals within distance 2; the ends see fewer keys.")
def ex_9_3():
    return int(_window_mask(10, 2).sum())
