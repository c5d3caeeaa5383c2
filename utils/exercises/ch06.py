"""Exercises of chapter 6, embeddings and the shared output layer (section 3.4).

Every expected answer, and the wrong answer of every likely mistake, is computed with
the course's own code when checked. Modules that are only counted or measured are
built on the "meta" device: shapes without storage, so the big sizes cost nothing.
"""

from __future__ import annotations

import math

import torch

from ..model.embeddings import Embeddings, Tokenizer
from ..model.layers import PositionwiseFeedForward
from ..model.transformer import BASE, TINY
from . import mistake, register


def _meta(cls, *args, **kwargs):
    with torch.device("meta"):
        return cls(*args, **kwargs)


def _count(module):
    return sum(p.numel() for p in module.parameters())


def _embedding_factor(d_model: int) -> float:
    emb = Embeddings(13, d_model)
    ids = torch.tensor([[3]])
    return (emb(ids)[0, 0] / emb.lut.weight[3]).mean().item()


@register(
    "6.1",
    prompt="The factor by which Embeddings multiplies the table's rows when d_model = 1024: "
    "a float, to 4 decimals.",
    decimals=4,
    hint="Read Embeddings.forward: what multiplies lut(ids)?",
    minutes=3,
    full="The factor read off `Embeddings.forward`, at d_model = 1024.",
    partial="d_model itself, the inverse of the factor, or the base model's factor.",
)
def _ex_6_1():
    return _embedding_factor(1024)


@mistake("6.1", "This is d_model itself; look again at what Embeddings.forward multiplies by")
def _ex_6_1_d_model():
    return float(Embeddings(13, 1024).lut.embedding_dim)


@mistake("6.1", "This is the inverse of the factor: Embeddings multiplies the rows, it does not divide them")
def _ex_6_1_inverse():
    return 1 / _embedding_factor(1024)


@mistake("6.1", "This is the factor of the base model (d_model = 512); the exercise has d_model = 1024")
def _ex_6_1_base():
    return _embedding_factor(BASE["d_model"])


_IDS = [1, 7, 3, 2, 5, 0]


@register(
    "6.2",
    prompt="What Tokenizer().decode([1, 7, 3, 2, 5, 0]) returns: a string.",
    hint="decode drops <s> and <pad> and stops at </s> (id 2).",
    minutes=5,
    full="The string, with `<s>` and `<pad>` dropped and decoding stopped at `</s>`.",
    partial="The letters right but special tokens kept or read past `</s>`; letters shifted by the three special ids.",
)
def _ex_6_2():
    return Tokenizer().decode(_IDS)


@mistake("6.2", "Decoding went on past </s> (id 2); it stops there, so what follows is never read")
def _ex_6_2_past_eos():
    return Tokenizer().decode([i for i in _IDS if i != 2])


@mistake("6.2", "This keeps the special tokens, as decode(..., strip=False) does; by default "
         "decode drops <s> and <pad> and stops at </s>")
def _ex_6_2_unstripped():
    return Tokenizer().decode(_IDS, strip=False)


@mistake("6.2", "The letters do not start at id 1: ids 0, 1 and 2 are <pad>, <s> and </s>, and "
         "'a' is id 3 (see Tokenizer().itos)")
def _ex_6_2_letters_from_1():
    letters = [i for i in _IDS[: _IDS.index(2)] if i > 2]  # read up to </s>, skip <s>
    return " ".join(chr(ord("a") + i - 1) for i in letters)


def _table(vocab: int, d_model: int) -> int:
    return _count(_meta(Embeddings, vocab, d_model))


@register(
    "6.3",
    prompt="Parameters saved in the big model (d_model 1024) by tying the output layer to a "
    "shared 37,000-token embedding table: an int.",
    hint="An untied output layer would be one more matrix that maps d_model features to one "
    "score per token, without bias.",
    minutes=5,
    full="One output matrix of one row per token and d_model columns, no bias, the shared table counted once.",
    partial="The base model's width, two tables, or an output bias.",
)
def _ex_6_3():
    return _table(37_000, 1024)


@mistake("6.3", "This is the saving at the base model's width (d_model = 512); the big model "
         "has d_model = 1024")
def _ex_6_3_base():
    return _table(37_000, BASE["d_model"])


@mistake("6.3", "This counts two tables; the encoder and the decoder already share one table, "
         "and tying removes only the output layer's")
def _ex_6_3_two_tables():
    return 2 * _table(37_000, 1024)


@mistake("6.3", "This adds an output bias; the paper's pre-softmax linear map has none")
def _ex_6_3_bias():
    return _table(37_000, 1024) + 37_000


def _xavier_bound(fan_in: int, fan_out: int) -> float:
    return math.sqrt(6 / (fan_in + fan_out))


def _w_1_fans(d_model: int, d_ff: int) -> tuple[int, int]:
    fan_out, fan_in = _meta(PositionwiseFeedForward, d_model, d_ff).w_1.weight.shape  # (out, in)
    return fan_in, fan_out


@register(
    "6.4",
    prompt="The Xavier-uniform bound a of the base model's feed-forward matrix w_1 "
    "(d_model 512, d_ff 2048): a float, to 4 decimals.",
    decimals=4,
    hint="a = sqrt(6 / (fan_in + fan_out)); read fan_in and fan_out from the shape of w_1.",
    minutes=5,
    full="`sqrt(6 / (fan_in + fan_out))`, with fan_in and fan_out read from the shape of `w_1`.",
    partial="fan_in alone, no square root, the standard deviation instead of the bound, or the tiny model's sizes.",
)
def _ex_6_4():
    return _xavier_bound(*_w_1_fans(BASE["d_model"], BASE["d_ff"]))


@mistake("6.4", "These are the tiny model's sizes (d_model 64, d_ff 256); the exercise asks for the base model's")
def _ex_6_4_tiny():
    return _xavier_bound(*_w_1_fans(TINY["d_model"], TINY["d_ff"]))


@mistake("6.4", "This uses fan_in alone; Xavier's bound divides 6 by fan_in + fan_out")
def _ex_6_4_fan_in():
    fan_in, _ = _w_1_fans(BASE["d_model"], BASE["d_ff"])
    return math.sqrt(6 / fan_in)


@mistake("6.4", "This is the standard deviation of the weights, a / sqrt(3); the exercise asks for the bound a")
def _ex_6_4_std():
    return _xavier_bound(*_w_1_fans(BASE["d_model"], BASE["d_ff"])) / math.sqrt(3)


@mistake("6.4", "The square root is missing: a = sqrt(6 / (fan_in + fan_out))")
def _ex_6_4_no_sqrt():
    return _xavier_bound(*_w_1_fans(BASE["d_model"], BASE["d_ff"])) ** 2
