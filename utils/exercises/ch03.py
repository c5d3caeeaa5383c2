"""Exercises of chapter 3, multi-head attention (section 3.2.2).

Every expected answer is computed with the course's own code when checked.
"""

from __future__ import annotations

import torch

from ..attention import MultiHeadAttention
from ..model import count_parameters
from . import register


def _projection_weights(mha: MultiHeadAttention) -> int:
    """Weights (not biases) of W^Q, W^K, W^V and W^O together."""
    return sum(layer.weight.numel() for layer in (mha.w_q, mha.w_k, mha.w_v, mha.w_o))


@register(
    "3.1",
    prompt="How many weights (biases not counted) do the four projection matrices W^Q, W^K, "
    "W^V and W^O hold in the paper's big model, d_model = 1024 and h = 16? An int.",
    hint="Each of the four matrices is d_model x d_model, whatever h is.",
)
def _ex_3_1():
    return _projection_weights(MultiHeadAttention(1024, 16))


@register(
    "3.2",
    prompt="The shape of the per-head attention weights (MultiHeadAttention.weights) when "
    "6 queries attend to 5 keys in a batch of 2, with d_model = 64 and h = 4: a tuple of 4 ints.",
    hint="The order is (batch, h, q_len, k_len); a query row has one weight per key.",
)
def _ex_3_2():
    mha = MultiHeadAttention(64, 4)
    mha.keep_weights = True
    query, memory = torch.zeros(2, 6, 64), torch.zeros(2, 5, 64)
    mha(query, memory, memory)
    return tuple(mha.weights.shape)


@register(
    "3.3",
    prompt="Row (A) of Table 3 tries h = 16 at d_model = 512: what is d_k (= d_v) per head? An int.",
    hint="The heads share d_model equally: d_k = d_model / h.",
)
def _ex_3_3():
    return MultiHeadAttention(512, 16).d_k


@register(
    "3.4",
    prompt="How many trainable parameters, biases included, does one MultiHeadAttention of "
    "the tiny model (d_model = 64, h = 4) hold? An int.",
    hint="Four nn.Linear(64, 64): each has a 64 x 64 weight and a bias of 64.",
)
def _ex_3_4():
    return count_parameters(MultiHeadAttention(64, 4))
