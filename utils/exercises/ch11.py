"""Answer checkers for chapter 11 (decoding and results, section 6).

Every expected answer, and the wrong answer each registered likely mistake gives, is
computed with the course's own code when checked.
"""

import functools
import math

import torch

from ..core.masks import BOS_ID, EOS_ID
from ..model.decoding import beam_search_core, length_penalty
from ..model.layers import DecoderLayer, EncoderLayer
from ..model.transformer import BASE, count_parameters
from ..training.checkpoints import average_checkpoints
from . import mistake, register

# ---------------------------------------------------------------- 11.1, the length penalty

LENGTH, ALPHA, LOG_P = 12, 0.3, -3.0  # section 6.3's parsing setting: alpha = 0.3


def _penalised(length=LENGTH, alpha=ALPHA, log_p=LOG_P):
    lp = length_penalty(length, alpha)
    return (lp, log_p / lp)


@register("11.1", prompt="Give (lp, score) for |Y| = 12, alpha = 0.3 and log P = -3.0, as a tuple of two floats, "
          "each to 4 decimals.", decimals=4,
          hint="lp = ((5 + |Y|) / 6) ** alpha, where |Y| counts the output's tokens including </s>; the "
               "score is log P divided by lp.",
          minutes=5,
          full="`lp = ((5 + len(Y)) / 6) ** alpha` with `</s>` counted in `len(Y)`, and the score `log P / lp`.",
          partial="lp right and the score multiplied by it; 11 tokens, alpha = 0.6, or no power.")
def _length_penalty_12():
    return _penalised()


@mistake("11.1", "This is alpha = 0, no penalty at all; the exercise uses alpha = 0.3")
def _ex_11_1_alpha_0():
    return _penalised(alpha=0.0)


@mistake("11.1", "This uses alpha = 0.6, the translation setting; the exercise uses parsing's alpha = 0.3")
def _ex_11_1_alpha_06():
    return _penalised(alpha=0.6)


@mistake("11.1", "This counts 11 tokens; |Y| includes </s>, so it is 12")
def _ex_11_1_without_eos():
    return _penalised(length=LENGTH - 1)


@mistake("11.1", "This leaves out the power alpha: lp is ((5 + |Y|) / 6) raised to alpha")
def _ex_11_1_no_power():
    return _penalised(alpha=1.0)


@mistake("11.1", "The score multiplies log P by lp; the score divides log P by lp")
def _ex_11_1_multiplied():
    lp = length_penalty(LENGTH, ALPHA)
    return (lp, LOG_P * lp)


# ---------------------------------------------------------------- 11.2, beam search by hand

def toy_table():
    """The bigram table of exercise 11.2: log P(next | last token), 5 tokens."""
    p = torch.zeros(5, 5, dtype=torch.float64)
    p[BOS_ID, [3, 4, EOS_ID]] = torch.tensor([0.5, 0.4, 0.1], dtype=torch.float64)
    p[3, [EOS_ID, 3, 4]] = torch.tensor([0.3, 0.4, 0.3], dtype=torch.float64)
    p[4, [EOS_ID, 3, 4]] = torch.tensor([0.9, 0.05, 0.05], dtype=torch.float64)
    p[[0, 2]] = 0.2  # never reached
    return torch.log(p)


def _best_of_beam(alpha=0.0):
    table = toy_table()
    return beam_search_core(lambda prefixes: table[prefixes[:, -1]], 3, beam_size=2, alpha=alpha)[0]


@register("11.2", prompt="Give (tokens, score): the best output of beam 2, alpha 0, max length 3, "
          "tokens as a tuple of ints ending in 2, the score (a float) to 4 decimals.", decimals=4,
          hint="at each step extend every live prefix by every token, keep the 2 best by their summed "
               "log-probabilities; a prefix that ends in </s> is finished and leaves the beam, and the "
               "search stops when no live prefix can still beat the best finished one.",
          minutes=15,
          full="The beam worked step by step (live and finished prefixes, summed log-probabilities), the winner and "
               "its score, checked with `beam_search_core` and compared with greedy decoding.",
          partial="The right winner with a probability or a base-10 score, or a search stopped too early.")
def _beam_by_hand():
    best = _best_of_beam()
    return (best.tokens, best.score)


@mistake("11.2", "The score is a probability; beam search scores an output by its log-probability "
         "(natural log)")
def _ex_11_2_probability():
    best = _best_of_beam()
    return (best.tokens, math.exp(best.score))


@mistake("11.2", "The score uses log base 10; the log-probabilities are natural logs")
def _ex_11_2_log10():
    best = _best_of_beam()
    return (best.tokens, best.score / math.log(10))


@mistake("11.2", "The score is divided by the length penalty of alpha = 0.6; with alpha = 0 the score "
         "is the log-probability itself")
def _ex_11_2_alpha_06():
    best = _best_of_beam()
    return (best.tokens, best.score / length_penalty(len(best.tokens), 0.6))


# ---------------------------------------------------------------- 11.3, separate vocabularies

TABLE = 32_000 * BASE["d_model"]


def _base_layers() -> int:
    d_model, h, d_ff, N = BASE["d_model"], BASE["h"], BASE["d_ff"], BASE["N"]
    return N * count_parameters(EncoderLayer(d_model, h, d_ff)) + N * count_parameters(DecoderLayer(d_model, h, d_ff))


@register("11.3", prompt="Give the number of parameters (an int) of the base model with separate "
          "32,000-token English and German vocabularies, the German table tied to the output layer.",
          hint="the layers do not depend on the vocabulary; then count the tables the model stores, and "
               "ask whether the output layer has a matrix of its own.",
          minutes=10,
          full="The base layers' count plus two 32,000-row tables, the output layer tied to the German one.",
          partial="One table, an output matrix of its own, or the shared 37,000-token vocabulary.")
def _separate_vocabularies():
    return _base_layers() + 2 * TABLE


@mistake("11.3", "This counts the output layer as a matrix of its own; it is tied to the German "
         "embedding table and adds nothing")
def _ex_11_3_untied():
    return _base_layers() + 3 * TABLE


@mistake("11.3", "This counts one embedding table; with separate vocabularies the English and the "
         "German tables are two matrices")
def _ex_11_3_one_table():
    return _base_layers() + TABLE


@mistake("11.3", "This is the paper's model with one shared 37,000-token vocabulary; the exercise has two "
         "separate 32,000-token vocabularies")
def _ex_11_3_shared():
    return _base_layers() + 37_000 * BASE["d_model"]


# ---------------------------------------------------------------- 11.4, averaging two checkpoints

@functools.cache
def _embedding_entry(steps: tuple, row: int = 2, col: int = 0) -> float:
    """embed.lut.weight[row, col] of the average of the checkpoints of ``steps``."""
    from ..tasks.reversal.task import load_checkpoint

    avg = average_checkpoints([load_checkpoint(s).state_dict() for s in steps])
    return float(avg["embed.lut.weight"][row, col])


@register("11.4", prompt="Give embed.lut.weight[2, 0] of the average of the step-2,600 and step-3,000 "
          "checkpoints, as a float, to 4 decimals.", decimals=4,
          hint="load both checkpoints with load_checkpoint(step), hand their state_dict()s to "
               "average_checkpoints, and read the entry from the result.",
          minutes=10,
          full="Both checkpoints loaded and averaged with `average_checkpoints`, and entry `[2, 0]` read.",
          partial="One checkpoint alone, all five averaged, the sum, or entry `[0, 2]`.")
def _average_two():
    return _embedding_entry((2600, 3000))


@mistake("11.4", "This is the step-3,000 checkpoint alone; the exercise averages it with step 2,600")
def _ex_11_4_last():
    return _embedding_entry((3000,))


@mistake("11.4", "This is the step-2,600 checkpoint alone; the exercise averages it with step 3,000")
def _ex_11_4_first():
    return _embedding_entry((2600,))


@mistake("11.4", "This averages all five checkpoints, as the chapter does; the exercise averages only "
         "steps 2,600 and 3,000")
def _ex_11_4_five():
    return _embedding_entry(tuple(range(2600, 3001, 100)))


@mistake("11.4", "This is the sum of the two entries; averaging divides by the number of checkpoints")
def _ex_11_4_sum():
    return 2 * _embedding_entry((2600, 3000))


@mistake("11.4", "This is entry [0, 2] (row 0, the padding token); the exercise asks for row 2 (</s>), "
         "column 0")
def _ex_11_4_swapped_index():
    return _embedding_entry((2600, 3000), row=0, col=2)


# ---------------------------------------------------------------- 11.5, positions with and without a KV cache

KV_LENGTH = 20  # tokens generated, </s> included


def _positions(n=KV_LENGTH, layers=BASE["N"], first=1):
    """(without, with): positions through a decoder layer, over ``layers`` layers and steps ``first``..``n``."""
    steps = range(first, n + 1)
    return (layers * sum(steps), layers * len(steps))


@register("11.5", prompt="Give (without, with): positions through a decoder layer, over the 6 layers and all "
          "steps of a 20-token output, re-reading the prefix and with a KV cache, as a tuple of two ints.",
          hint="at step t, how many positions does one layer process without the cache, and how many with it? "
               "Count that for every step and every layer.",
          minutes=5,
          full="`6 * (1 + 2 + ... + 20)` without the cache and `6 * 20` with it, and why: the prefix re-read "
               "at each step against one new position.",
          partial="The count of one layer only, the square `20 * 20` instead of the triangle, or one step short.")
def _kv_positions():
    return _positions()


@mistake("11.5", "This counts one layer; each of the N = 6 layers processes those positions, so multiply by 6")
def _ex_11_5_one_layer():
    return _positions(layers=1)


@mistake("11.5", "This counts 20 positions at every step; at step t the prefix holds t positions, "
         "1 at the first step and 20 at the last")
def _ex_11_5_square():
    return (BASE["N"] * KV_LENGTH * KV_LENGTH, BASE["N"] * KV_LENGTH)


@mistake("11.5", "This leaves out one step; the 20 tokens take 20 steps, the first one reading <s> alone")
def _ex_11_5_one_step_short():
    return _positions(n=KV_LENGTH - 1)


@mistake("11.5", "This counts one step too many; the 20 tokens take 20 steps, from <s> alone at step 1 to "
         "the 20-token prefix at step 20")
def _ex_11_5_one_step_long():
    return _positions(n=KV_LENGTH + 1)


@mistake("11.5", "The two counts are swapped: re-reading the prefix processes more positions than the cache")
def _ex_11_5_swapped():
    without, with_cache = _positions()
    return (with_cache, without)
