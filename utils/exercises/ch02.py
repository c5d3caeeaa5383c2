"""Exercises of chapter 2, scaled dot-product attention (section 3.2.1).

Every expected answer is computed with the course's own code when checked.
"""

from __future__ import annotations

import math

import torch

from ..attention import scaled_dot_product_attention
from ..masks import causal_mask
from . import register


def _worked_example():
    """The chapter's three tokens: Q = K = [[1,0],[0,1],[1,1]], V = [[1,0],[0,2],[3,1]]."""
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    v = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]])
    return q, q.clone(), v


@register(
    "2.1",
    prompt="Weights of query 2 = [1, 1] (positions from 0) over the three keys of the "
    "worked example when the scores are NOT divided by sqrt(d_k): a tensor of shape (3,).",
    hint="The raw scores of query 2 are Q[2] @ K.T = [1, 1, 2]; take their softmax.",
)
def _ex_2_1():
    q, k, v = _worked_example()
    # Multiplying the queries by sqrt(d_k) cancels the division inside attention.
    _, weights = scaled_dot_product_attention(q * math.sqrt(q.size(-1)), k, v)
    return weights[2]


@register(
    "2.2",
    prompt="Output of query 1 (positions from 0) of the worked example under the causal "
    "mask (it sees keys 0 and 1 only): a tensor of shape (2,).",
    hint="Its weights are 0.3302 and 0.6698; mix the values V[0] = [1, 0] and V[1] = [0, 2].",
)
def _ex_2_2():
    q, k, v = _worked_example()
    out, _ = scaled_dot_product_attention(q, k, v, causal_mask(3))
    return out[1]


@register(
    "2.3",
    prompt="For d_k = 16 and vectors q, k whose entries are independent with mean 0 and "
    "variance 1: the variance of q . k (an int) and the standard deviation of the scaled "
    "score q . k / sqrt(d_k) (a float), as a tuple (variance, std).",
    atol=0.05,
    hint="q . k is a sum of d_k independent products, each of variance 1 x 1.",
)
def _ex_2_3():
    d_k, n = 16, 200_000
    g = torch.Generator().manual_seed(0)
    q = torch.randn(n, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(n, d_k, generator=g, dtype=torch.float64)
    scores = (q * k).sum(-1)
    return round(scores.var().item()), round((scores / math.sqrt(d_k)).std().item(), 1)


@register(
    "2.4",
    prompt="In the pronoun example, double the query of 'it' to [4.4, 0] (no mask): the "
    "weight that 'it' then gives to 'cat', a float.",
    hint="Every score doubles; the softmax of doubled scores is sharper.",
)
def _ex_2_4():
    keys = torch.tensor([[0.2, 0.0], [2.0, 0.4], [0.3, 1.6], [0.0, 0.2],
                         [1.0, 0.3], [0.1, 0.5], [0.4, 1.4]])
    query = torch.tensor([[4.4, 0.0]])
    _, weights = scaled_dot_product_attention(query, keys, keys)
    return weights[0, 1].item()
