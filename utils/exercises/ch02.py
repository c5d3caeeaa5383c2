"""Exercises of chapter 2, scaled dot-product attention (section 3.2.1).

Every expected answer, and the wrong answer of every likely mistake, is computed with
the course's own code when checked.
"""

from __future__ import annotations

import math

import torch

from ..core.masks import causal_mask
from ..model.attention import scaled_dot_product_attention
from . import mistake, register


def _worked_example():
    """The chapter's three tokens: Q = K = [[1,0],[0,1],[1,1]], V = [[1,0],[0,2],[3,1]]."""
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    v = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]])
    return q, q.clone(), v


def _undivided_weights():
    """The worked example's weights when the scores are not divided by sqrt(d_k)."""
    q, k, v = _worked_example()
    # Multiplying the queries by sqrt(d_k) cancels the division inside attention.
    _, weights = scaled_dot_product_attention(q * math.sqrt(q.size(-1)), k, v)
    return weights


@register(
    "2.1",
    prompt="Weights of query 1 = [0, 1] (positions from 0) over the three keys of the "
    "worked example when the scores are NOT divided by sqrt(d_k): a tensor of shape (3,), "
    "to 4 decimals.",
    decimals=4,
    hint="Take the raw scores of query 1, Q[1] @ K.T, and apply the softmax to them as they are.",
    unit="share",
    minutes=5,
    full="The softmax of the raw scores of the second row of Q, three weights to 4 decimals.",
    partial="The method right on query 0, or the scaled weights; the raw scores without the softmax earn little.",
)
def _ex_2_1():
    return _undivided_weights()[1]


@mistake("2.1", "These are the weights with the division by sqrt(d_k); the exercise asks for them without it")
def _ex_2_1_divided():
    q, k, v = _worked_example()
    return scaled_dot_product_attention(q, k, v)[1][1]


@mistake("2.1", "These are the weights of the first query, [1, 0]; positions count from 0, so "
         "query 1 is the second row of Q")
def _ex_2_1_query_0():
    return _undivided_weights()[0]


@mistake("2.1", "These are the raw scores; the weights are their softmax")
def _ex_2_1_scores():
    q, k, _ = _worked_example()
    return q[1] @ k.T


def _key_0_hidden():
    """(3, 3) bool mask: query 2 may not see key 0; the other queries see every key."""
    mask = torch.ones(3, 3, dtype=torch.bool)
    mask[2, 0] = False
    return mask


@register(
    "2.2",
    prompt="Output of query 2 (positions from 0) of the worked example when a mask hides key 0 "
    "from it (it sees keys 1 and 2 only): a tensor of shape (2,), to 3 decimals.",
    decimals=3,
    hint="Take the scaled scores of query 2 for keys 1 and 2 only, their softmax, and mix "
    "V[1] and V[2] with those two weights.",
    minutes=10,
    full="The scaled scores of keys 1 and 2 only, their softmax, and the mix of `V[1]` and `V[2]` with those weights.",
    partial="A mask applied after the softmax (weights that no longer sum to 1), or the mask the wrong way round, the "
            "rest right.",
)
def _ex_2_2():
    q, k, v = _worked_example()
    out, _ = scaled_dot_product_attention(q, k, v, _key_0_hidden())
    return out[2]


@mistake("2.2", "This is query 2's output without the mask; key 0 must get no weight")
def _ex_2_2_unmasked():
    q, k, v = _worked_example()
    return scaled_dot_product_attention(q, k, v)[0][2]


@mistake("2.2", "This output uses the mask the other way round (only key 0 visible); in this "
         "course True means 'may attend'")
def _ex_2_2_inverted():
    q, k, v = _worked_example()
    return scaled_dot_product_attention(q, k, v, ~_key_0_hidden())[0][2]


@mistake("2.2", "The weight of key 0 was set to 0 after the softmax, so the other two no longer "
         "sum to 1; the mask acts on the scores, before the softmax")
def _ex_2_2_zeroed_after():
    q, k, v = _worked_example()
    weights = scaled_dot_product_attention(q, k, v)[1][2] * _key_0_hidden()[2]
    return weights @ v


@mistake("2.2", "The scores were not divided by sqrt(d_k)")
def _ex_2_2_undivided():
    q, k, v = _worked_example()
    return scaled_dot_product_attention(q * math.sqrt(2), k, v, _key_0_hidden())[0][2]


def _simulated_dot_products(d_k: int = 16, n: int = 200_000) -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    q = torch.randn(n, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(n, d_k, generator=g, dtype=torch.float64)
    return (q * k).sum(-1)


@register(
    "2.3",
    prompt="For d_k = 16 and vectors q, k whose entries are independent with mean 0 and "
    "variance 1: the variance of q . k (an int) and the standard deviation of the scaled "
    "score q . k / sqrt(d_k) (a float, to 2 decimals), as a tuple (variance, std).",
    decimals=2,
    hint="q . k is a sum of d_k independent products, each of variance 1 x 1; variances of "
    "independent terms add up.",
    minutes=10,
    full="The variance as a sum of d_k independent products of variance 1, and the standard deviation after the "
         "division by `sqrt(d_k)`.",
    partial="One of the two items; the standard deviation divided by d_k, or taken before the division.",
)
def _ex_2_3():
    scores = _simulated_dot_products()
    return round(scores.var().item()), round((scores / math.sqrt(16)).std().item(), 2)


@mistake("2.3", "The first item is the standard deviation of q . k; the exercise asks for its variance")
def _ex_2_3_std_for_var():
    scores = _simulated_dot_products()
    return round(scores.std().item()), round((scores / math.sqrt(16)).std().item(), 1)


@mistake("2.3", "The second item divides the standard deviation by d_k; the score is divided by "
         "sqrt(d_k), and so is its standard deviation")
def _ex_2_3_divided_by_d_k():
    scores = _simulated_dot_products()
    return round(scores.var().item()), round((scores / 16).std().item(), 2)


@mistake("2.3", "The second item is the standard deviation of q . k before the division by sqrt(d_k)")
def _ex_2_3_unscaled():
    scores = _simulated_dot_products()
    return round(scores.var().item()), round(scores.std().item(), 1)


_PRONOUN_KEYS = [[0.2, 0.0], [2.0, 0.4], [0.3, 1.6], [0.0, 0.2], [1.0, 0.3], [0.1, 0.5], [0.4, 1.4]]


def _weight_on_cat(query, mask=None, divided=True):
    keys = torch.tensor(_PRONOUN_KEYS)
    q = torch.tensor([query]) * (1.0 if divided else math.sqrt(2))
    _, weights = scaled_dot_product_attention(q, keys, keys, mask)
    return weights[0, 1].item()


@register(
    "2.4",
    prompt="In the pronoun example, double the query of 'it' to [4.4, 0] (no mask): the "
    "weight that 'it' then gives to 'cat', a float to 4 decimals.",
    decimals=4,
    hint="Every score doubles; take the softmax of the doubled scaled scores over all seven words.",
    unit="share",
    minutes=5,
    full="The doubled scaled scores over all seven words, their softmax, and the weight of *cat* read off.",
    partial="The original query's weight, unscaled scores, the causal mask, or the weight itself doubled.",
)
def _ex_2_4():
    return _weight_on_cat([4.4, 0.0])


@mistake("2.4", "This is the weight of the original query [2.2, 0]; double the query first")
def _ex_2_4_original():
    return _weight_on_cat([2.2, 0.0])


@mistake("2.4", "The scores were not divided by sqrt(d_k)")
def _ex_2_4_undivided():
    return _weight_on_cat([4.4, 0.0], divided=False)


@mistake("2.4", "This is the weight under the causal mask; the exercise has no mask")
def _ex_2_4_causal():
    return _weight_on_cat([4.4, 0.0], mask=causal_mask(7)[4:5])


@mistake("2.4", "This doubles the weight itself; doubling the query doubles the scores, and the "
         "softmax turns them into weights that still sum to 1")
def _ex_2_4_doubled_weight():
    return 2 * _weight_on_cat([2.2, 0.0])
