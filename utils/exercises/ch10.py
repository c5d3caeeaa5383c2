"""Exercises of chapter 10, training (section 5).

Every expected answer is computed with the course's own code when checked.
"""

from __future__ import annotations

import torch

from ..masks import PAD_ID
from ..training import LabelSmoothingLoss, rate
from . import register


@register(
    "10.1",
    prompt="The tiny model's learning rate (d_model = 64, warmup = 400) at steps 100 and 1,600: "
           "a tuple of two floats (rate at 100, rate at 1,600).",
    atol=1e-7,
    hint="lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5); step 100 is still in the warm-up, "
         "step 1,600 is past it.",
)
def _ex_10_1():
    return (rate(100, 64, 400), rate(1600, 64, 400))


def _smoothing_floor(eps_ls, vocab_size=13):
    # The best a model can do is predict the smoothed target q itself: feed log q as logits.
    q = torch.full((vocab_size,), eps_ls / vocab_size, dtype=torch.float64)
    q[3] += 1 - eps_ls
    return LabelSmoothingLoss(eps_ls)(q.log()[None], torch.tensor([3])).item()


@register(
    "10.2",
    prompt="The lowest label-smoothed loss any model can reach over 13 tokens, for eps_ls = 0.1 and "
           "for eps_ls = 0.2: a tuple of two floats (floor at 0.1, floor at 0.2).",
    atol=1e-3,
    hint="The loss is the cross-entropy H(q, p) = H(q) + KL(q || p), smallest when p = q: "
         "compute the entropy of the smoothed target q (0.9 + 0.1/13 on the right token, 0.1/13 on each other).",
)
def _ex_10_2():
    return (_smoothing_floor(0.1), _smoothing_floor(0.2))


@register(
    "10.3",
    prompt="The label-smoothed loss (eps_ls = 0.1) of an untrained model that gives all 13 tokens "
           "the same probability: a float.",
    atol=1e-4,
    hint="With p = 1/13 everywhere, every log p is the same number, whatever the target.",
)
def _ex_10_3():
    logits = torch.zeros(1, 13)
    return LabelSmoothingLoss(0.1, ignore_index=PAD_ID)(logits, torch.tensor([5])).item()
