"""Exercises of chapter 1 (why not recurrence, sections 1 and 2).

Each expected answer is computed here, by building the dependency graph of the
layers and searching it, not typed in.
"""

from __future__ import annotations

import torch

from . import register


def _reads(n: int, offsets) -> torch.Tensor:
    """(n, n) bool: True at [j, i] when output j reads input i = j - o for an offset o."""
    j = torch.arange(n)[:, None]
    i = torch.arange(n)[None, :]
    return torch.isin(j - i, torch.tensor(list(offsets)))


def _layers_to_connect(n: int, offsets_of_layer, max_layers: int = 1000) -> int:
    """Smallest number of stacked layers after which every output j depends on every input i <= j."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    everything = torch.ones(n, n, dtype=torch.bool).tril()
    reach = torch.eye(n, dtype=torch.bool)
    for layer in range(max_layers):
        reach = (_reads(n, offsets_of_layer(layer)).int() @ reach.int()) > 0
        if reach[everything].all():
            return layer + 1
    raise ValueError(f"not connected after {max_layers} layers")


def _stacked_rnn(layers: int, n: int) -> dict:
    """Total recurrent steps and the longest chain of dependent steps in a stack of RNN layers."""
    chain = {}
    for l in range(1, layers + 1):
        for t in range(1, n + 1):
            chain[l, t] = 1 + max(chain.get((l, t - 1), 0), chain.get((l - 1, t), 0))
    return {"steps": len(chain), "chain": max(chain.values())}


@register("1.1", prompt="Layers of contiguous convolutions (k = 5) to connect 50 positions.",
          hint="each layer reaches k - 1 positions further back; the distance is n - 1.")
def ex_1_1():
    return _layers_to_connect(50, lambda layer: range(5))


@register("1.2", prompt="Layers of dilated convolutions (k = 2) to connect 50 positions.",
          hint="after L layers a kernel of width 2 reaches 2**L - 1 positions back.")
def ex_1_2():
    return _layers_to_connect(50, lambda layer: [m * 2**layer for m in range(2)])


@register("1.3", prompt="3 stacked recurrent layers over 20 tokens: total steps and longest chain.",
          hint="step (l, t) waits for (l, t - 1) and (l - 1, t); its chain is 1 + the longer of theirs.")
def ex_1_3():
    return _stacked_rnn(3, 20)
