"""Answer checkers for chapter 12 (model variations, Table 3 on our own model).

Every expected answer is computed with the course's own code when checked.
"""

from __future__ import annotations

import statistics

from ..model import count_parameters
from . import register


@register("12.1", prompt="Give the number of parameters (an int) of the tiny model with d_k = 4 "
          "(h = 4, d_v = 16), row 'd_k=4' of the sweep.",
          hint="Only W_Q, W_K and their biases shrink: from 64 x 64 + 64 to 64 x 16 + 16 each, in each of "
               "the 6 attention sublayers (2 in the encoder, 4 in the decoder).")
def _ex_12_1():
    from ..variations import build_model, row_config

    return count_parameters(build_model(row_config("d_k=4"), 0))


@register("12.2", prompt="Give the number of parameters (an int) of the base model with d_k = 16 "
          "(h = 8, d_v = 64) and a shared 37,000-token vocabulary.",
          hint="Start from the base model's 63,082,496 and remove, in each of the 18 attention sublayers, "
               "the rows of W_Q and W_K (and their biases) that d_k = 16 no longer needs.")
def _ex_12_2():
    import torch

    from ..variations import VariantTransformer

    with torch.device("meta"):
        return count_parameters(VariantTransformer(37000, 512, 8, 2048, 6, d_k=16))


@register("12.3", prompt="Give (verdict, mean exact match) for row 'p_drop=0.3' against the base on the "
          "test set: a tuple of a str ('better', 'worse' or 'within noise') and a float between 0 and 1.",
          atol=1e-4,
          hint="verdict(records, 'p_drop=0.3', 'base', 'exact'); the mean is over the three seeds.")
def _ex_12_3():
    from ..variations import RESULTS, read_results, seed_values, verdict

    _, records = read_results(RESULTS)
    return (verdict(records, "p_drop=0.3", "base", "exact"),
            statistics.mean(seed_values(records, "p_drop=0.3", "exact")))
