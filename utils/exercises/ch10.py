"""Exercises of chapter 10, training (section 5).

Every expected answer is computed with the course's own code when checked, and so is
the wrong answer each registered likely mistake gives.
"""

from __future__ import annotations

import math

import torch

from ..core.masks import PAD_ID
from ..training.recipe import LabelSmoothingLoss, rate
from . import mistake, register

# ---------------------------------------------------------------- 10.1, the schedule

TINY_D_MODEL, TINY_WARMUP = 64, 400
STEPS = (100, 1600)


def _schedule(d_model=TINY_D_MODEL, warmup=TINY_WARMUP, pick=min):
    """Equation 3 at STEPS; ``pick`` chooses between step^-0.5 and step * warmup^-1.5."""
    return tuple(d_model**-0.5 * pick(s**-0.5, s * warmup**-1.5) for s in STEPS)


@register(
    "10.1",
    prompt="The tiny model's learning rate (d_model = 64, warmup = 400) at steps 100 and 1,600: "
           "a tuple of two floats (rate at 100, rate at 1,600), each to 6 decimals.",
    decimals=6,
    hint="equation 3 has two branches inside its min; decide for each step which of the two is "
         "smaller, and do not forget the factor in front.",
    minutes=15,
    full="Both rates from equation 3 by hand, the branch of the min chosen at each step and the factor in front kept, "
         "then checked with the course's schedule.",
    partial="One of the two rates, the wrong branch of the min, or the factor `d_model ** -0.5` left out.",
)
def _ex_10_1():
    return tuple(rate(s, TINY_D_MODEL, TINY_WARMUP) for s in STEPS)


@mistake("10.1", "This puts each step on the other branch of the schedule (max instead of min), or leaves out "
         "the factor d_model^-0.5: the two mistakes give the same numbers here. Step 100 is still in the "
         "warm-up, step 1,600 past it, and both rates carry the factor d_model^-0.5")
def _ex_10_1_branch():
    return _schedule(pick=max)  # equals _schedule(d_model=1) at these two steps


@mistake("10.1", "This uses the base model's d_model = 512; the tiny model has d_model = 64")
def _ex_10_1_base_width():
    return _schedule(d_model=512)


@mistake("10.1", "This uses the paper's warmup of 4,000 steps; the tiny model warms up for 400")
def _ex_10_1_base_warmup():
    return _schedule(warmup=4000)


# ---------------------------------------------------------------- 10.2, the floor

def _smoothing_floor(eps_ls, vocab_size):
    """Lowest label-smoothed loss: the loss of a model that predicts the smoothed target q itself."""
    q = torch.full((vocab_size,), eps_ls / vocab_size, dtype=torch.float64)
    q[3] += 1 - eps_ls
    return LabelSmoothingLoss(eps_ls)(q.log()[None], torch.tensor([3])).item()


def _entropy(right, other, vocab_size, others=None, log=math.log):
    """-(right log right + others * other log other), others = vocab_size - 1 by default."""
    others = vocab_size - 1 if others is None else others
    return -(right * log(right) + others * other * log(other))


CASES = ((0.2, 13), (0.1, 37_000))  # (eps_ls, vocabulary): the tiny model's tokens, the paper's vocabulary


@register(
    "10.2",
    prompt="The lowest label-smoothed loss any model can reach, for eps_ls = 0.2 over the tiny model's "
           "13 tokens and for eps_ls = 0.1 over the paper's 37,000 tokens: a tuple of two floats "
           "(floor at 0.2 with 13 tokens, floor at 0.1 with 37,000 tokens), each to 4 decimals.",
    decimals=4,
    hint="The loss is the cross-entropy H(q, p) = H(q) + KL(q || p), smallest when p = q: compute the "
         "entropy of the smoothed target q, with natural logs. Write down q first: every token gets "
         "eps_ls / V, and the right token 1 - eps_ls on top.",
    minutes=20,
    full="The explanation (the smoothed target has an entropy that no prediction goes below) and both floors, from "
         "that entropy in natural logs.",
    partial="The explanation or one floor; a target that does not sum to 1, eps_ls over V - 1 tokens, or another log "
            "base.",
)
def _ex_10_2():
    return tuple(_smoothing_floor(eps, V) for eps, V in CASES)


@mistake("10.2", "This target gives the right token 1 - eps_ls without its own share eps_ls / V, so it "
         "does not sum to 1: every token, the right one included, gets eps_ls / V")
def _ex_10_2_no_share_on_right():
    return tuple(_entropy(1 - eps, eps / V, V) for eps, V in CASES)


@mistake("10.2", "This spreads eps_ls over the V - 1 wrong tokens only; the course's (and PyTorch's) "
         "smoothing spreads it over all V tokens, the right one included")
def _ex_10_2_spread_over_others():
    return tuple(_entropy(1 - eps, eps / (V - 1), V) for eps, V in CASES)


@mistake("10.2", "This is the entropy in log base 10; the loss uses natural logs")
def _ex_10_2_log10():
    return tuple(_entropy(1 - eps + eps / V, eps / V, V, log=math.log10) for eps, V in CASES)


@mistake("10.2", "This is the entropy in bits (log base 2); the loss uses natural logs")
def _ex_10_2_log2():
    return tuple(_entropy(1 - eps + eps / V, eps / V, V, log=math.log2) for eps, V in CASES)


@mistake("10.2", "This counts one wrong token; the entropy has a term for each of the V - 1 wrong tokens")
def _ex_10_2_one_other():
    return tuple(_entropy(1 - eps + eps / V, eps / V, V, others=1) for eps, V in CASES)


@mistake("10.2", "The first floor is the one at eps_ls = 0.1 (the chapter's); the exercise asks for "
         "eps_ls = 0.2 with 13 tokens")
def _ex_10_2_chapter_eps():
    return (_smoothing_floor(0.1, 13), _smoothing_floor(*CASES[1]))


# ---------------------------------------------------------------- 10.3, knowing nothing

PAPER_VOCAB = 37_000


def _uniform_loss(vocab_size, eps_ls=0.1):
    """The label-smoothed loss of a model that gives every token the same probability."""
    logits = torch.zeros(1, vocab_size, dtype=torch.float64)
    return LabelSmoothingLoss(eps_ls, ignore_index=PAD_ID)(logits, torch.tensor([5])).item()


@register(
    "10.3",
    prompt="The label-smoothed loss (eps_ls = 0.1) of an untrained model that gives all 37,000 tokens of "
           "the paper's vocabulary the same probability: a float, to 4 decimals.",
    decimals=4,
    hint="With the same p for every token, every log p is the same number, whatever the target; "
         "the weights of the smoothed target add up to 1.",
    minutes=10,
    full="log V whatever the target, since the smoothed target's weights sum to 1, and the answer to whether eps_ls "
         "matters.",
    partial="The 13-token loss, log base 10, or only the right token's share counted.",
)
def _ex_10_3():
    return _uniform_loss(PAPER_VOCAB)


@mistake("10.3", "This is the loss over the tiny model's 13 tokens; the exercise asks for the paper's "
         "37,000-token vocabulary")
def _ex_10_3_tiny():
    return _uniform_loss(13)


@mistake("10.3", "This uses log base 10; the loss uses natural logs")
def _ex_10_3_log10():
    return math.log10(PAPER_VOCAB)


@mistake("10.3", "This counts only the right token's share 1 - eps_ls of the target; the eps_ls spread "
         "over all tokens pays the same -log p on each of them")
def _ex_10_3_right_share_only():
    return (1 - 0.1) * _uniform_loss(PAPER_VOCAB)


# ---------------------------------------------------------------- 10.4, data parallelism

SHARE_TOKENS = (30, 50)  # target tokens of the two processes' shares of one batch


def _scales(tokens):
    """The factor by which each share's mean loss is multiplied, read off the gradients: one process's
    gradient on a token of the whole batch over DDP's (the mean of the N shares' gradients)."""
    x = torch.zeros(sum(tokens), dtype=torch.float64, requires_grad=True)  # the per-token losses
    whole = torch.autograd.grad(x.mean(), x)[0]
    firsts = [sum(tokens[:r]) for r in range(len(tokens))]
    ddp = [torch.autograd.grad(share.mean() / len(tokens), x)[0] for share in x.split(list(tokens))]
    return tuple((whole[i] / g[i]).item() for i, g in zip(firsts, ddp))


@register(
    "10.4",
    prompt="Two processes split a batch: 30 target tokens go to process 0, 50 to process 1. By what factor must each "
           "multiply the mean loss of its rows so that DDP (which averages the two gradients) takes the one-process "
           "update? A tuple of two floats (factor of process 0, factor of process 1), to 4 decimals.",
    decimals=4,
    hint="Write the weight that one token of each share gets in the batch's mean, then the weight it gets when "
         "DDP averages the two shares' means; the factor is their ratio.",
    minutes=10,
    full="N n_r / n for each process, derived from the weight of one token in the batch's mean and in DDP's "
         "average, and checked against the chapter's data_parallel_step.",
    partial="The factor without the N that undoes DDP's average, the two factors swapped, or their inverses.",
)
def _ex_10_4():
    return _scales(SHARE_TOKENS)


@mistake("10.4", "This leaves out the factor N = 2: DDP divides the sum of the two gradients by N, and the "
         "factor must undo that division")
def _ex_10_4_no_n():
    return tuple(s / len(SHARE_TOKENS) for s in _scales(SHARE_TOKENS))


@mistake("10.4", "These are the two factors swapped: the share with fewer tokens gets the smaller factor, "
         "since each of its tokens weighs too much in the mean of the two means")
def _ex_10_4_swapped():
    return _scales(SHARE_TOKENS)[::-1]


@mistake("10.4", "These are the inverses of the factors: the factor is the token's weight in the batch's mean "
         "over its weight in DDP's average, not the other way round")
def _ex_10_4_inverse():
    return tuple(1 / s for s in _scales(SHARE_TOKENS))


@mistake("10.4", "Factors of 1 leave each share divided by its own tokens, the mistake the chapter runs: the "
         "shares hold different numbers of tokens, so the mean of the two means is not the batch's mean")
def _ex_10_4_local():
    return (1.0, 1.0)
