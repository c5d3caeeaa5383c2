"""Exercises of chapter 6, embeddings and the shared output layer (section 3.4).

Every expected answer is computed with the course's own code when checked.
"""

from __future__ import annotations

import math

import torch

from ..embeddings import Embeddings, Tokenizer
from ..model import BASE, TINY, Transformer
from . import register


def _count(module):
    return sum(p.numel() for p in module.parameters())


@register(
    "6.1",
    prompt="The factor by which Embeddings multiplies the table's rows when d_model = 1024: a float.",
    hint="Embeddings returns lut(ids) * sqrt(d_model).",
)
def _ex_6_1():
    emb = Embeddings(13, 1024)
    ids = torch.tensor([[3]])
    return (emb(ids)[0, 0] / emb.lut.weight[3]).mean().item()


@register(
    "6.2",
    prompt="What Tokenizer().decode([1, 7, 3, 2, 5, 0]) returns: a string.",
    hint="decode drops <s> and <pad> and stops at </s> (id 2).",
)
def _ex_6_2():
    return Tokenizer().decode([1, 7, 3, 2, 5, 0])


@register(
    "6.3",
    prompt="Parameters saved in the base model (d_model 512) by tying the output layer to a "
    "shared 37,000-token embedding table: an int.",
    hint="An untied output layer would be one more vocab_size x d_model matrix, without bias.",
)
def _ex_6_3():
    return _count(Embeddings(37_000, BASE["d_model"]))


@register(
    "6.4",
    prompt="The Xavier-uniform bound a of the tiny model's feed-forward matrix w_1: a float.",
    hint="a = sqrt(6 / (fan_in + fan_out)); w_1 maps 64 inputs to 256 outputs.",
)
def _ex_6_4():
    w = Transformer(**TINY).encoder_layers[0].ffn.w_1.weight
    fan_out, fan_in = w.shape
    return math.sqrt(6 / (fan_in + fan_out))
