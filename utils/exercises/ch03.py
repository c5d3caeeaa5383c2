"""Exercises of chapter 3, multi-head attention (section 3.2.2).

Every expected answer, and the wrong answer of every likely mistake, is computed with
the course's own code when checked.
"""

from __future__ import annotations

import torch

from ..model.attention import MultiHeadAttention
from ..model.transformer import count_parameters
from . import mistake, register


def _projection_weights(mha: MultiHeadAttention) -> int:
    """Weights (not biases) of W^Q, W^K, W^V and W^O together."""
    return sum(layer.weight.numel() for layer in (mha.w_q, mha.w_k, mha.w_v, mha.w_o))


@register(
    "3.1",
    prompt="How many weights (biases not counted) do the four projection matrices W^Q, W^K, "
    "W^V and W^O hold in the paper's big model, d_model = 1024 and h = 16? An int.",
    hint="Each of the four matrices maps d_model features to d_model features, whatever h is.",
    minutes=5,
    full="Four matrices of d_model x d_model, with the remark that h does not change the count.",
    partial="Biases counted, `W^O` left out, one head's slice, or the base model's sizes.",
)
def _ex_3_1():
    return _projection_weights(MultiHeadAttention(1024, 16))


@mistake("3.1", "This counts the biases too; the exercise asks for the weights only")
def _ex_3_1_biases():
    return count_parameters(MultiHeadAttention(1024, 16))


@mistake("3.1", "This counts one head's slice of each matrix (d_model x d_k); the h heads "
         "together span d_model x d_model")
def _ex_3_1_one_head():
    mha = MultiHeadAttention(1024, 16)
    return 4 * mha.d_model * mha.d_k


@mistake("3.1", "This leaves out the output projection W^O")
def _ex_3_1_no_w_o():
    mha = MultiHeadAttention(1024, 16)
    return sum(layer.weight.numel() for layer in (mha.w_q, mha.w_k, mha.w_v))


@mistake("3.1", "These are the base model's sizes (d_model = 512); the big model has d_model = 1024")
def _ex_3_1_base():
    return _projection_weights(MultiHeadAttention(512, 8))


def _weights_shape(batch: int, q_len: int, k_len: int, d_model: int = 64, h: int = 8) -> tuple:
    mha = MultiHeadAttention(d_model, h)
    mha.keep_weights = True
    query, memory = torch.zeros(batch, q_len, d_model), torch.zeros(batch, k_len, d_model)
    mha(query, memory, memory)
    return tuple(mha.weights.shape)


@register(
    "3.2",
    prompt="The shape of the per-head attention weights (MultiHeadAttention.weights) when "
    "6 queries attend to 5 keys in a batch of 3, with d_model = 64 and h = 8: a tuple of 4 ints.",
    hint="The order is (batch, h, q_len, k_len); a query row has one weight per key.",
    minutes=5,
    full="`(batch, h, q_len, k_len)`, with the queries (rows) and the keys (columns) told apart.",
    partial="The right four numbers in another order, or a square q_len x q_len.",
)
def _ex_3_2():
    return _weights_shape(3, 6, 5)


@mistake("3.2", "The last two axes are swapped: rows are queries and columns are keys")
def _ex_3_2_swapped():
    b, h, q, k = _weights_shape(3, 6, 5)
    return (b, h, k, q)


@mistake("3.2", "Attention weights are square only when the queries and keys come from the same "
         "sequence; here a query row has one weight per key")
def _ex_3_2_square():
    return _weights_shape(3, 6, 6)


@mistake("3.2", "The head axis comes second, right after the batch: (batch, h, q_len, k_len)")
def _ex_3_2_heads_last():
    b, h, q, k = _weights_shape(3, 6, 5)
    return (b, q, k, h)


@register(
    "3.3",
    prompt="Row (A) of Table 3 tries h = 16 at d_model = 512: what is d_k (= d_v) per head? An int.",
    hint="The heads share d_model equally.",
    minutes=3,
    full="d_model divided by h.",
    partial="The base model's d_k (h = 8), or d_model multiplied by h.",
)
def _ex_3_3():
    return MultiHeadAttention(512, 16).d_k


@mistake("3.3", "This is d_k of the base model, which has h = 8 heads; recompute for h = 16")
def _ex_3_3_base():
    return MultiHeadAttention(512, 8).d_k


@mistake("3.3", "The heads split d_model between them; d_model is divided by h, not multiplied")
def _ex_3_3_multiplied():
    return 512 * 16


@register(
    "3.4",
    prompt="How many trainable parameters, biases included, does one MultiHeadAttention with "
    "d_model = 96 and h = 8 hold? An int.",
    hint="Count the weights and the biases of the four projections W^Q, W^K, W^V and W^O; "
    "does h change their sizes?",
    minutes=5,
    full="The weights and biases of the four projections, which h does not change, checked with `count_parameters`.",
    partial="Biases or `W^O` left out, one head's slice, or the tiny model's sizes.",
)
def _ex_3_4():
    return count_parameters(MultiHeadAttention(96, 8))


@mistake("3.4", "This leaves out the biases")
def _ex_3_4_no_biases():
    return _projection_weights(MultiHeadAttention(96, 8))


@mistake("3.4", "This counts one head's slice of each projection (d_model x d_k and d_k biases); "
         "the h heads together span d_model x d_model")
def _ex_3_4_one_head():
    mha = MultiHeadAttention(96, 8)
    return 4 * (mha.d_model * mha.d_k + mha.d_k)


@mistake("3.4", "This leaves out the output projection W^O")
def _ex_3_4_no_w_o():
    mha = MultiHeadAttention(96, 8)
    return sum(count_parameters(layer) for layer in (mha.w_q, mha.w_k, mha.w_v))


@mistake("3.4", "This is the tiny model's MultiHeadAttention (d_model = 64); the exercise asks for d_model = 96")
def _ex_3_4_tiny():
    return count_parameters(MultiHeadAttention(64, 4))
