"""Exercises of chapter 9 (why self-attention, section 4).

Expected answers are computed here: the cost ratio from the per-layer counts,
the path length by boolean matrix products of the window mask. Each exercise
registers the answers its likely mistakes give, computed the same way.
"""

from __future__ import annotations

import torch

from . import mistake, register


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


def _cost_ratio(n: int, d: int) -> float:
    """Self-attention's work over the recurrent layer's, n^2 d / (n d^2) (Table 1)."""
    return (n * n * d) / (n * d * d)


@register("9.1", prompt="Ratio n^2 d / (n d^2) for n = 1000, d = 512: a float, to 4 decimals.",
          decimals=4,
          hint="cancel the factors that the numerator and the denominator share before you divide.",
          minutes=5,
          full="The ratio simplified to n / d before dividing, and which layer is cheaper for this n and d.",
          partial="The inverse ratio, or d_k instead of d; the question of the cheaper layer left out.")
def ex_9_1():
    return _cost_ratio(1000, 512)


@mistake("9.1", "This is the inverse ratio, the recurrent layer's work over self-attention's; "
         "the exercise puts self-attention's n^2 d on top")
def _ex_9_1_inverse():
    return 1 / _cost_ratio(1000, 512)


@mistake("9.1", "This uses d = 64, the size of one head (d_k); the width d of the layer is d_model = 512")
def _ex_9_1_head_size():
    return _cost_ratio(1000, 64)


@register("9.2", prompt="Layers of restricted attention (r = 4) to connect 100 positions: an int.",
          hint="follow how far the information of position 0 can travel after 1, 2, 3 ... layers; "
               "the two positions farthest apart decide.",
          minutes=5,
          full="r positions per layer in each direction, n - 1 to cover, the division rounded up.",
          partial="2r positions per layer, or the division rounded down.")
def ex_9_2():
    return _layers_until_all_connected(_window_mask(100, 4))


@mistake("9.2", "This rounds the number of layers down; the last layer must still cover the rest "
         "of the distance, so round up")
def _ex_9_2_floor():
    return (100 - 1) // 4


@mistake("9.2", "This lets one layer move information 2r positions; it moves it at most r positions "
         "in one direction (the window's 2r + 1 keys lie on both sides of the query)")
def _ex_9_2_both_sides():
    return -(-(100 - 1) // (2 * 4))


@register("9.3", prompt="Number of True cells in window_mask(10, 2): an int.",
          hint="count the diagonal and the off-diagonals within distance 2; the queries near the ends "
               "see fewer keys.",
          minutes=5,
          full="The diagonal and the off-diagonals within distance 2, with fewer keys near the ends, checked with "
               "`window_mask`.",
          partial="Every query given 2r + 1 keys, or the keys of one side only.")
def ex_9_3():
    return int(_window_mask(10, 2).sum())


@mistake("9.3", "This gives every query the full 2r + 1 = 5 keys; the first and last two queries have "
         "fewer keys inside the sequence")
def _ex_9_3_no_edges():
    return 10 * (2 * 2 + 1)


@mistake("9.3", "This counts the keys on one side only (a causal window); the window reaches r "
         "positions before and after the query")
def _ex_9_3_one_side():
    return int(torch.tril(_window_mask(10, 2)).sum())
