"""Answer checkers for chapter 11 (decoding and results, section 6)."""


import torch

from ..decoding import average_checkpoints, beam_search_core, length_penalty
from ..layers import DecoderLayer, EncoderLayer
from ..masks import BOS_ID, EOS_ID
from ..model import BASE, count_parameters
from . import register


@register("11.1", prompt="Give (lp, score) for |Y| = 10, alpha = 0.6 and log P = -2.0, as a tuple of two floats.",
          hint="lp = ((5 + |Y|) / 6) ** alpha, and the score is log P divided by lp.")
def _length_penalty_10():
    lp = length_penalty(10, 0.6)
    return (lp, -2.0 / lp)


def toy_table():
    """The bigram table of exercise 11.2: log P(next | last token), 5 tokens."""
    p = torch.zeros(5, 5, dtype=torch.float64)
    p[BOS_ID, [3, 4, EOS_ID]] = torch.tensor([0.5, 0.4, 0.1], dtype=torch.float64)
    p[3, [EOS_ID, 3, 4]] = torch.tensor([0.3, 0.4, 0.3], dtype=torch.float64)
    p[4, [EOS_ID, 3, 4]] = torch.tensor([0.9, 0.05, 0.05], dtype=torch.float64)
    p[[0, 2]] = 0.2  # never reached
    return torch.log(p)


@register("11.2", prompt="Give (tokens, score): the best output of beam 2, alpha 0, max length 3, "
          "tokens as a tuple of ints ending in 2.",
          hint="the first step keeps x and y; after y, </s> is almost certain.")
def _beam_by_hand():
    table = toy_table()
    best = beam_search_core(lambda prefixes: table[prefixes[:, -1]], 3, beam_size=2, alpha=0.0)[0]
    return (best.tokens, best.score)


@register("11.3", prompt="Give the number of parameters (an int) of the base model with separate "
          "32,000-token English and German vocabularies, the German table tied to the output layer.",
          hint="6 encoder layers + 6 decoder layers + two embedding tables of 32,000 x 512; the tied "
               "output layer adds nothing.")
def _separate_vocabularies():
    d_model, h, d_ff, N = BASE["d_model"], BASE["h"], BASE["d_ff"], BASE["N"]
    layers = N * count_parameters(EncoderLayer(d_model, h, d_ff)) + N * count_parameters(DecoderLayer(d_model, h, d_ff))
    return layers + 2 * 32000 * d_model


@register("11.4", prompt="Give embed.lut.weight[2, 0] of the average of the step-2,600 and step-3,000 "
          "checkpoints, as a float.",
          hint="average_checkpoints([load_checkpoint(2600).state_dict(), load_checkpoint(3000).state_dict()]).")
def _average_two():
    from ..training import load_checkpoint

    avg = average_checkpoints([load_checkpoint(s).state_dict() for s in (2600, 3000)])
    return float(avg["embed.lut.weight"][2, 0])
