"""Exercises of chapter 5, the position-wise feed-forward network (section 3.3).

Every expected answer, and the wrong answer of every likely mistake, is computed with
the course's own code when checked. Modules that are only counted are built on the
"meta" device: shapes without storage, so the big sizes cost nothing.
"""

from __future__ import annotations

import torch
from torch import nn

from ..model.layers import DecoderLayer, EncoderLayer, PositionwiseFeedForward
from ..model.transformer import BASE, TINY, Transformer, count_parameters
from . import mistake, register


def _meta(cls, *args, **kwargs):
    with torch.device("meta"):
        return cls(*args, **kwargs)


def _ffn_weights(d_model: int, d_ff: int) -> int:
    """Weights (no biases) of W1 and W2."""
    return sum(p.numel() for p in _meta(PositionwiseFeedForward, d_model, d_ff).parameters() if p.dim() == 2)


@register(
    "5.1",
    prompt="Weights (no biases) in W1 and W2 of one feed-forward sublayer of the big model, "
    "d_model = 1024, d_ff = 4096: an int.",
    hint="W1 maps d_model features to d_ff, and W2 maps them back.",
    minutes=3,
    full="W1 (d_model to d_ff) and W2 (back), without biases.",
    partial="One of the two matrices, biases counted, or the base model's sizes.",
)
def _ex_5_1():
    return _ffn_weights(1024, 4096)


@mistake("5.1", "This counts the biases too; the exercise asks for the weights only")
def _ex_5_1_biases():
    return count_parameters(_meta(PositionwiseFeedForward, 1024, 4096))


@mistake("5.1", "This counts one of the two matrices; the sublayer has W1 and W2")
def _ex_5_1_one_matrix():
    return _meta(PositionwiseFeedForward, 1024, 4096).w_1.weight.numel()


@mistake("5.1", "These are the base model's sizes (d_model = 512, d_ff = 2048)")
def _ex_5_1_base():
    return _ffn_weights(BASE["d_model"], BASE["d_ff"])


def _tiny_ffn_parameters(stacks: int = 2, biases: bool = True) -> int:
    one = _meta(PositionwiseFeedForward, TINY["d_model"], TINY["d_ff"])
    per_layer = sum(p.numel() for p in one.parameters() if biases or p.dim() == 2)
    return stacks * TINY["N"] * per_layer


@register(
    "5.2",
    prompt="Parameters (weights and biases) of all feed-forward sublayers of the tiny model "
    "together: an int.",
    hint="Count one sublayer's weights and biases, then how many sublayers the encoder and "
    "the decoder hold.",
    minutes=5,
    full="One sublayer's weights and biases, times the 2 encoder and 2 decoder layers, checked with "
         "`count_parameters`.",
    partial="One sublayer, the encoder's layers only, or the biases left out.",
)
def _ex_5_2():
    model = _meta(Transformer, **TINY)
    return sum(p.numel() for name, p in model.named_parameters() if ".ffn." in name)


@mistake("5.2", "This is one feed-forward sublayer; every encoder and decoder layer has its own")
def _ex_5_2_one():
    return count_parameters(_meta(PositionwiseFeedForward, TINY["d_model"], TINY["d_ff"]))


@mistake("5.2", "This counts the encoder's layers only; each decoder layer has a feed-forward sublayer too")
def _ex_5_2_encoder_only():
    return _tiny_ffn_parameters(stacks=1)


@mistake("5.2", "This leaves out the biases")
def _ex_5_2_no_biases():
    return _tiny_ffn_parameters(biases=False)


def _share(layer: nn.Module, parts=None, weights_only: bool = False) -> float:
    """The FFN's share of the parameters of ``layer``, or of its ``parts`` only."""
    modules = [layer] if parts is None else [getattr(layer, p) for p in parts]
    total = sum(p.numel() for m in modules for p in m.parameters() if not weights_only or p.dim() == 2)
    ffn = sum(p.numel() for p in layer.ffn.parameters() if not weights_only or p.dim() == 2)
    return ffn / total


def _base(cls):
    return _meta(cls, BASE["d_model"], BASE["h"], BASE["d_ff"])


@register(
    "5.3",
    prompt="Fraction of a base decoder layer's parameters (d_model 512, h 8, d_ff 2048) that "
    "lies in its feed-forward sublayer: a float, to 4 decimals.",
    decimals=4,
    hint="Count every parameter of the layer: its attention sublayers, the FFN and the "
    "LayerNorms, weights and biases.",
    unit="share",
    minutes=10,
    full="Every parameter of a decoder layer (two attention sublayers, the FFN, three LayerNorms, weights and biases), "
         "and the FFN's share of them.",
    partial="An encoder layer's share, the LayerNorms or the biases left out, or the share of everything but the FFN.",
)
def _ex_5_3():
    return _share(_base(DecoderLayer))


@mistake("5.3", "This is an encoder layer's share; a decoder layer has a second attention "
         "sublayer, the cross-attention")
def _ex_5_3_encoder():
    return _share(_base(EncoderLayer))


@mistake("5.3", "This leaves out the three LayerNorms (a gain and a bias of d_model each)")
def _ex_5_3_no_norms():
    return _share(_base(DecoderLayer), parts=("self_attn", "cross_attn", "ffn"))


@mistake("5.3", "This counts the weight matrices only; the biases and the LayerNorms are "
         "parameters too")
def _ex_5_3_weights_only():
    return _share(_base(DecoderLayer), weights_only=True)


@mistake("5.3", "This is the share of everything but the FFN; the exercise asks for the FFN's share")
def _ex_5_3_complement():
    return 1 - _share(_base(DecoderLayer))


def _conv_shape(linear: nn.Linear) -> tuple:
    """The weight shape of the nn.Conv1d (kernel size 1) that computes ``linear``."""
    conv = _meta(nn.Conv1d, linear.in_features, linear.out_features, 1)
    return tuple(conv.weight.shape)


@register(
    "5.4",
    prompt="Shape of the weight of an nn.Conv1d with kernel size 1 equal to the base model's w_1 "
    "(d_model 512, d_ff 2048): a tuple of 3 ints.",
    hint="nn.Conv1d weights are (out_channels, in_channels, kernel_size); w_1 goes from "
    "d_model to d_ff.",
    minutes=3,
    full="The shape in `nn.Conv1d`'s order, `(out_channels, in_channels, kernel_size)`, for `w_1`.",
    partial="In and out channels swapped, the kernel size not last, or the tiny model's sizes.",
)
def _ex_5_4():
    return _conv_shape(_meta(PositionwiseFeedForward, BASE["d_model"], BASE["d_ff"]).w_1)


@mistake("5.4", "In and out channels are swapped: nn.Conv1d weights are (out_channels, "
         "in_channels, kernel_size), and w_1 goes from d_model to d_ff")
def _ex_5_4_swapped():
    out, inp, k = _ex_5_4()
    return (inp, out, k)


@mistake("5.4", "The kernel size comes last: (out_channels, in_channels, kernel_size)")
def _ex_5_4_kernel_first():
    out, inp, k = _ex_5_4()
    return (k, out, inp)


@mistake("5.4", "These are the tiny model's sizes (d_model 64, d_ff 256); the exercise asks "
         "for the base model's")
def _ex_5_4_tiny():
    return _conv_shape(_meta(PositionwiseFeedForward, TINY["d_model"], TINY["d_ff"]).w_1)
