"""Answer checkers for chapter 12 (model variations, Table 3 on our own model).

Every expected answer is computed with the course's own code when checked.
"""

from __future__ import annotations

from ..model import count_parameters
from . import register


@register("12.1", prompt="Give the number of parameters (an int) of the tiny model with d_k = 2 "
          "(h = 4, d_v = 16), a row the sweep did not run.",
          hint="Only W_Q, W_K and their biases shrink: from 64 x 64 + 64 to 64 x 8 + 8 each, in each of "
               "the 6 attention sublayers (2 in the encoder, 4 in the decoder).")
def _ex_12_1():
    from ..variations import build_model, row_config

    return count_parameters(build_model(dict(row_config("base"), d_k=2), 0))


@register("12.2", prompt="Give the number of parameters (an int) of the base model with d_k = 16 "
          "(h = 8, d_v = 64) and a shared 37,000-token vocabulary.",
          hint="Start from the base model's 63,082,496 and remove, in each of the 18 attention sublayers, "
               "the rows of W_Q and W_K (and their biases) that d_k = 16 no longer needs.")
def _ex_12_2():
    import torch

    from ..variations import VariantTransformer

    with torch.device("meta"):
        return count_parameters(VariantTransformer(37000, 512, 8, 2048, 6, d_k=16))


@register("12.3", prompt="Give (verdict in exact match, verdict in perplexity) for row 'p_drop=0.3' "
          "against row 'p_drop=0.2': a tuple of two str, each 'better', 'worse' or 'within noise'.",
          hint="verdict(records, 'p_drop=0.3', 'p_drop=0.2', 'exact') and the same with 'ppl'; the rule: "
               "different only if the two rows' ranges over the seeds do not overlap.")
def _ex_12_3():
    from ..variations import RESULTS, read_results, verdict

    _, records = read_results(RESULTS)
    return tuple(verdict(records, "p_drop=0.3", "p_drop=0.2", metric) for metric in ("exact", "ppl"))
