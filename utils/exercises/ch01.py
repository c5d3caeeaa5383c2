"""Exercises of chapter 1 (why not recurrence, sections 1 and 2).

Each expected answer is computed here, by building the dependency graph of the
layers and searching it, not typed in; so are the wrong answers of the likely
mistakes.
"""

from __future__ import annotations

import math

import torch

from . import mistake, register


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


@register("1.1", prompt="Layers of contiguous convolutions (k = 5) to connect 50 positions: an int.",
          hint="each layer reaches k - 1 positions further back; the distance to cover is n - 1.",
          minutes=5,
          full="The distance to cover, n - 1, divided by the reach of one layer, k - 1, rounded up.",
          partial="The right idea with k positions per layer, or the division rounded down.")
def ex_1_1():
    return _layers_to_connect(50, lambda layer: range(5))


@mistake("1.1", "This assumes each layer reaches k positions further back; a kernel of width k "
         "covers offsets 0 to k - 1, so it reaches k - 1 further")
def _ex_1_1_reach_k():
    return _layers_to_connect(50, lambda layer: range(6))


@mistake("1.1", "This rounds the number of layers down; the layers must reach all n - 1 "
         "positions back, so round the division up")
def _ex_1_1_floor():
    return math.floor((50 - 1) / (5 - 1))


@register("1.2", prompt="Layers of dilated convolutions (k = 2, dilations 1, 2, 4, ...) to connect "
          "50 positions: an int.",
          hint="after L layers a kernel of width 2 reaches 2**L - 1 positions back.",
          minutes=5,
          full="The smallest L with `2 ** L - 1 >= n - 1`, found by doubling the reach layer by layer.",
          partial="The doubling right but log2 rounded down, or the count of layers without dilation.")
def ex_1_2():
    return _layers_to_connect(50, lambda layer: [m * 2**layer for m in range(2)])


@mistake("1.2", "This rounds log2(50) down; after L layers an output reaches only 2**L - 1 "
         "positions back, which must be at least n - 1")
def _ex_1_2_floor():
    return math.floor(math.log2(50))


@mistake("1.2", "This is the count without dilation (each layer one position further back); "
         "layer l reads offsets 0 and 2**(l - 1)")
def _ex_1_2_undilated():
    return _layers_to_connect(50, lambda layer: range(2))


@register("1.3", prompt="3 stacked recurrent layers over 20 tokens: total steps and longest chain, "
          'as a dict {"steps": int, "chain": int}.',
          hint="step (l, t) waits for (l, t - 1) and (l - 1, t); its chain is 1 + the longer of theirs.",
          minutes=10,
          full="Both counts: every step (l, t) once, and the longest chain of the pipeline, shown on a small grid.",
          partial="One of the two counts; a chain of one layer only, of every step in a row, or one step too long.")
def ex_1_3():
    return _stacked_rnn(3, 20)


@mistake("1.3", "This chain runs every step one after another; step (l, t) can start as soon as "
         "(l, t - 1) and (l - 1, t) are done, so the layers work as a pipeline")
def _ex_1_3_sequential():
    steps = _stacked_rnn(3, 20)["steps"]
    return {"steps": steps, "chain": steps}


@mistake("1.3", "This chain is that of one layer; the steps of the upper layers also wait "
         "for the layers below")
def _ex_1_3_one_layer():
    return {"steps": _stacked_rnn(3, 20)["steps"], "chain": _stacked_rnn(1, 20)["chain"]}


@mistake("1.3", "This chain is one step too long; count the steps of a chain on a small "
         "case (2 layers, 2 tokens) to fix the count")
def _ex_1_3_one_too_many():
    right = _stacked_rnn(3, 20)
    return {"steps": right["steps"], "chain": right["chain"] + 1}
