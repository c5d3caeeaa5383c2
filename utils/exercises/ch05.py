"""Exercises of chapter 5, the position-wise feed-forward network (section 3.3).

Every expected answer is computed with the course's own code when checked.
"""

from __future__ import annotations

from ..layers import DecoderLayer, PositionwiseFeedForward
from ..model import BASE, TINY, Transformer
from . import register


@register(
    "5.1",
    prompt="Weights (no biases) in W1 and W2 of one feed-forward sublayer of the big model, "
    "d_model = 1024, d_ff = 4096: an int.",
    hint="W1 is d_model x d_ff and W2 is d_ff x d_model.",
)
def _ex_5_1():
    ffn = PositionwiseFeedForward(1024, 4096)
    return sum(p.numel() for p in ffn.parameters() if p.dim() == 2)


@register(
    "5.2",
    prompt="Parameters (weights and biases) of all feed-forward sublayers of the tiny model "
    "together: an int.",
    hint="One sublayer has 2 * 64 * 256 weights plus 256 + 64 biases; count the layers of both stacks.",
)
def _ex_5_2():
    model = Transformer(**TINY)
    return sum(p.numel() for name, p in model.named_parameters() if ".ffn." in name)


@register(
    "5.3",
    prompt="Fraction of a base decoder layer's parameters (d_model 512, h 8, d_ff 2048) that "
    "lies in its feed-forward sublayer: a float.",
    atol=1e-3,
    hint="A decoder layer has two attention sublayers, one FFN and three LayerNorms.",
)
def _ex_5_3():
    layer = DecoderLayer(BASE["d_model"], BASE["h"], BASE["d_ff"])
    total = sum(p.numel() for p in layer.parameters())
    return sum(p.numel() for p in layer.ffn.parameters()) / total


@register(
    "5.4",
    prompt="Shape of the weight of an nn.Conv1d with kernel size 1 equal to the tiny model's w_2: "
    "a tuple of 3 ints.",
    hint="nn.Conv1d weights are (out_channels, in_channels, kernel_size).",
)
def _ex_5_4():
    ffn = PositionwiseFeedForward(TINY["d_model"], TINY["d_ff"])
    return tuple(ffn.w_2.weight[:, :, None].shape)
