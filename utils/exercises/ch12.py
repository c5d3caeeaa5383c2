"""Answer checkers for chapter 12 (model variations, Table 3 on our own model).

Every expected answer, and the wrong answer each registered likely mistake gives, is
computed with the course's own code when checked.
"""

from __future__ import annotations

import statistics

from ..model.transformer import count_parameters
from . import mistake, register

# ---------------------------------------------------------------- 12.1, d_k = 2 in the tiny model


def _tiny(**changes) -> int:
    """Parameters of the sweep's base row with ``changes`` to its configuration."""
    from ..experiments.variations import build_model, row_config

    return count_parameters(build_model(dict(row_config("base"), **changes), 0))


def _q_and_k_saving(d_k_total: int, biases: bool = True) -> int:
    """Parameters one attention sublayer saves when W_Q and W_K map 64 -> d_k_total instead of 64 -> 64."""
    d_model = 64
    per_matrix = d_model * (d_model - d_k_total) + (d_model - d_k_total if biases else 0)
    return 2 * per_matrix


@register("12.1", prompt="Give the number of parameters (an int) of the tiny model with d_k = 2 "
          "(h = 4, d_v = 16), a row the sweep did not run.",
          hint="find which matrices (and biases) have a size that depends on d_k, and their shapes with "
               "h heads of d_k = 2; then count how many attention sublayers the tiny model has, in the "
               "encoder and in the decoder.",
          minutes=15,
          full="By hand, the base count less what shrinks in `W_Q`, `W_K` and their biases in the 6 attention "
               "sublayers; then the count checked with the code.",
          partial="Biases not shrunk, d_k outputs in all instead of h x d_k, or the cross-attention forgotten.")
def _ex_12_1():
    return _tiny(d_k=2)


@mistake("12.1", "This is the tiny model's own count; d_k = 2 makes W_Q and W_K (and their biases) smaller")
def _ex_12_1_unchanged():
    return _tiny()


@mistake("12.1", "This shrinks the weights of W_Q and W_K but not their biases; a bias has one entry per "
         "output, so it shrinks too")
def _ex_12_1_biases_kept():
    return _tiny() - 6 * _q_and_k_saving(4 * 2, biases=False)


@mistake("12.1", "This gives W_Q and W_K d_k = 2 outputs in all; they have h x d_k outputs, d_k for each "
         "of the 4 heads")
def _ex_12_1_one_head():
    return _tiny() - 6 * _q_and_k_saving(2)


@mistake("12.1", "This shrinks only the 4 self-attention sublayers; the decoder's cross-attention has its "
         "own W_Q and W_K too (6 attention sublayers in all)")
def _ex_12_1_self_only():
    return _tiny() - 4 * _q_and_k_saving(4 * 2)


# ---------------------------------------------------------------- 12.2, Table 3 row (B), d_k = 16


def _paper_size(untied: bool = False, **changes) -> int:
    import torch

    from ..experiments.variations import VariantTransformer

    with torch.device("meta"):
        n = count_parameters(VariantTransformer(37000, 512, 8, 2048, 6, **changes))
    return n + (37000 * 512 if untied else 0)


@register("12.2", prompt="Give the number of parameters (an int) of the base model with d_k = 16 "
          "(h = 8, d_v = 64) and a shared 37,000-token vocabulary.",
          hint="build VariantTransformer(37000, 512, 8, 2048, 6, d_k=16) on the meta device and count its "
               "parameters with count_parameters; by hand, only W_Q and W_K (and their biases) of each "
               "attention sublayer change.",
          minutes=5,
          full="`VariantTransformer` built on the meta device and counted, and compared with the paper's 58 million.",
          partial="The base model's count, or an output matrix of its own.")
def _ex_12_2():
    return _paper_size(d_k=16)


@mistake("12.2", "This is the base model's count, with d_k = 64; pass d_k=16")
def _ex_12_2_base():
    return _paper_size()


@mistake("12.2", "This is Table 3's rounded figure of 58 million, for a model counted in a way the paper "
         "does not give; count the course's model")
def _ex_12_2_table():
    return 58_000_000


@mistake("12.2", "This adds an output matrix of its own; the course's model ties the output layer to the "
         "embedding table")
def _ex_12_2_untied():
    return _paper_size(untied=True, d_k=16)


# ---------------------------------------------------------------- 12.3, a neighbour as reference


def _records():
    from ..experiments.variations import RESULTS, read_results

    return read_results(RESULTS)[1]


@register("12.3", prompt="Give (verdict in exact match, verdict in perplexity) for row 'p_drop=0.3' "
          "against row 'p_drop=0.2': a tuple of two str, each 'better', 'worse' or 'within noise'.",
          hint="verdict(records, 'p_drop=0.3', 'p_drop=0.2', 'exact') and the same with 'ppl'; the rule: "
               "different only if the two rows' ranges over the seeds do not overlap.",
          minutes=10,
          full="The prediction written first, then both verdicts from `verdict`, explained by the rule: rows whose "
               "ranges over the seeds overlap are within noise.",
          partial="The verdicts the other way round, from the means, or against the base row.")
def _ex_12_3():
    from ..experiments.variations import verdict

    return tuple(verdict(_records(), "p_drop=0.3", "p_drop=0.2", metric) for metric in ("exact", "ppl"))


@mistake("12.3", "These are the verdicts of p_drop=0.2 against p_drop=0.3; the exercise asks how "
         "p_drop=0.3 does against p_drop=0.2")
def _ex_12_3_reversed():
    from ..experiments.variations import verdict

    return tuple(verdict(_records(), "p_drop=0.2", "p_drop=0.3", metric) for metric in ("exact", "ppl"))


@mistake("12.3", "These compare the means over the seeds; the rule compares the ranges, and calls rows "
         "whose ranges overlap within noise")
def _ex_12_3_means():
    from ..experiments.variations import seed_values

    out = []
    for metric in ("exact", "ppl"):
        a, b = (statistics.mean(seed_values(_records(), row, metric)) for row in ("p_drop=0.3", "p_drop=0.2"))
        out.append("better" if (a > b) == (metric != "ppl") else "worse")
    return tuple(out)


@mistake("12.3", "These are the verdicts against the base row, the chapter's reference; the exercise "
         "compares p_drop=0.3 with its neighbour p_drop=0.2")
def _ex_12_3_base():
    from ..experiments.variations import verdict

    return tuple(verdict(_records(), "p_drop=0.3", "base", metric) for metric in ("exact", "ppl"))
