"""The training recipe of paper section 5, task-free: the learning-rate schedule and
Adam (5.3), label smoothing (5.4), one training step, and the loss on held-out pairs.

Chapter 10 teaches each piece line for line; ``utils.training.loop.Run`` repeats
``train_step`` for every task of the course."""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn.functional as F
from torch import nn

from ..core.checks import check_probability, is_int
from ..core.masks import PAD_ID, padding_mask, shift_right, target_mask
from .batching import collate, make_batches


def _check_rate(step, d_model, warmup, factor):
    if not is_int(step):
        raise TypeError(f"step must be an int >= 0 (a count of updates), got {type(step).__name__} {step!r}")
    if step < 0:
        raise ValueError(f"step must be an int >= 0 (a count of updates), got {step!r}")
    for name, value in (("d_model", d_model), ("warmup", warmup)):
        if not is_int(value) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {type(value).__name__} {value!r}")
    if isinstance(factor, bool) or not isinstance(factor, numbers.Real) or not 0 < factor < math.inf:
        raise ValueError(f"factor must be a finite number > 0 (it scales the learning rate), got {type(factor).__name__} {factor!r}")


def check_transformer(model):
    """Raise a TypeError unless ``model`` is a ``Transformer`` (an ``nn.Module`` whose ``embed`` has an int ``d_model``)."""
    if not isinstance(model, nn.Module) or not is_int(getattr(getattr(model, "embed", None), "d_model", None)):
        raise TypeError(f"model must be a utils.model.transformer.Transformer (an nn.Module whose embed has d_model), "
                        f"got {type(model).__name__}")


def rate(step, d_model, warmup, factor=1.0):
    """lrate = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)  (section 5.3, eq. 3).

    The rate rises linearly for ``warmup`` steps, peaks at
    d_model^-0.5 * warmup^-0.5, then decays as 1/sqrt(step).
    Step 0 is treated as step 1: ``LambdaLR`` calls this function with step 0
    when it is built, and 0^-0.5 would be infinite. So the first two updates
    both use rate(1).

    Raises:
        TypeError: ``step`` is not an int.
        ValueError: ``step`` is negative, d_model / warmup is not a positive
            int, or ``factor`` is not a finite number > 0.
    """
    _check_rate(step, d_model, warmup, factor)
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def make_optimizer(model, warmup, factor=1.0):
    """Adam(beta1=0.9, beta2=0.98, eps=1e-9) driven by ``rate`` (section 5.3).

    Adam's own lr is 1, so LambdaLR's multiplier *is* the learning rate.
    Returns (optimizer, scheduler); call scheduler.step() after each optimizer.step().

    Raises:
        TypeError: ``model`` is not a ``Transformer``.
        ValueError: ``warmup`` or ``factor`` is refused by ``rate``.
    """
    check_transformer(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9, fused=True)
    d_model = model.embed.d_model
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: rate(step, d_model, warmup, factor))
    return optimizer, scheduler


def _check_logits_target(logits, target):
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        raise TypeError(f"logits must be a floating-point tensor (..., V), got {getattr(logits, 'dtype', type(logits).__name__)}")
    if not isinstance(target, torch.Tensor) or target.dtype != torch.long:
        raise TypeError(f"target must be a torch.long tensor of class ids, got {getattr(target, 'dtype', type(target).__name__)}")
    if logits.shape[:-1] != target.shape:
        raise ValueError(f"logits (..., V) must match target (...): got logits {tuple(logits.shape)}, target {tuple(target.shape)}")
    V = logits.size(-1)
    if target.numel() and (target.min() < 0 or target.max() >= V):
        raise ValueError(f"target ids must lie in 0..{V - 1} (the {V} classes of logits), "
                         f"got min {int(target.min())}, max {int(target.max())}")
    if not torch.isfinite(logits).all():
        raise ValueError(f"logits must hold finite numbers, got {int((~torch.isfinite(logits)).sum())} NaN or "
                         "infinite entries (has training diverged?)")


class LabelSmoothingLoss(nn.Module):
    """Cross-entropy against a smoothed target (section 5.4, eps_ls = 0.1).

    The target distribution gives every one of the V classes eps_ls / V and
    the right class 1 - eps_ls on top: with V = 13, 0.9077 and 0.0077. The
    loss is -sum_c q_c log p_c, averaged over the positions whose target is
    not ``ignore_index`` (padding adds nothing, whatever its logits). This is
    ``nn.CrossEntropyLoss(label_smoothing=eps_ls, ignore_index=ignore_index)``
    (which also returns NaN when every target is ignored).

    Shapes: logits (..., V) float; target (...) long ids; returns a scalar.

    Raises:
        TypeError, ValueError: ``eps_ls`` is not a number in [0, 1); logits
            and target do not fit together.
    """

    def __init__(self, eps_ls=0.1, ignore_index=PAD_ID):
        super().__init__()
        check_probability(eps_ls, "eps_ls")
        self.eps_ls, self.ignore_index = eps_ls, ignore_index

    def forward(self, logits, target):
        _check_logits_target(logits, target)
        keep = target != self.ignore_index  # positions that count
        log_p = F.log_softmax(logits[keep], dim=-1)  # (n, V)
        nll = -log_p.gather(-1, target[keep][:, None])[:, 0]  # -log p(right token)
        uniform = -log_p.mean(dim=-1)  # -(1/V) sum_c log p_c
        return ((1 - self.eps_ls) * nll + self.eps_ls * uniform).mean()


def _check_step_logits(logits, tgt):
    """Raise unless the model's output is logits (batch, tgt_len, vocab) for a target ``tgt`` (batch, tgt_len)."""
    expected = f"logits (batch, tgt_len, vocab) = ({tgt.size(0)}, {tgt.size(1)}, vocab)"
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        got = f"{type(logits).__name__}" + (f" of dtype {logits.dtype}" if isinstance(logits, torch.Tensor) else "")
        raise TypeError(f"model(src, tgt_in, src_mask, tgt_mask) must return {expected}, a float tensor, got {got}")
    if logits.dim() != 3 or logits.shape[:2] != tgt.shape:
        raise ValueError(f"model(src, tgt_in, src_mask, tgt_mask) must return {expected}, got shape {tuple(logits.shape)}")


def train_step(model, src, tgt, criterion, optimizer, scheduler):
    """One update of the paper's recipe (section 5): forward, loss, backward, Adam, schedule.

    The decoder reads ``shift_right(tgt)`` (teacher forcing); the masks are
    built once for the batch; ``criterion`` compares the logits with ``tgt``
    (the label-smoothed loss of section 5.4); ``optimizer.step()`` takes one
    Adam step and ``scheduler.step()`` moves the rate on (section 5.3). Works
    for any model called as ``model(src, tgt_in, src_mask, tgt_mask)``.

    Shapes: src (batch, S) and tgt (batch, T) long ids; the model must return
    logits (batch, T, vocab).

    Returns:
        The loss, a 0-d float tensor detached from the graph (no ``.item()``:
        reading it would make the loop wait for the number).

    Raises:
        TypeError, ValueError: src or tgt is not a (batch, len) id tensor; the
            model's output is not a float tensor (batch, T, vocab); the criterion
            refuses the logits (as ``LabelSmoothingLoss`` does NaN or inf).
    """
    tgt_in = shift_right(tgt)  # <s> y1 ... y(n-1); masks built once per batch:
    logits = model(src, tgt_in, padding_mask(src), target_mask(tgt_in))
    _check_step_logits(logits, tgt)  # (batch, T, vocab)
    loss = criterion(logits, tgt)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    scheduler.step()
    return loss.detach()


def dev_loss(model, pairs, criterion, max_tokens=6000) -> float:
    """Label-smoothed loss per target token on ``pairs`` in eval mode.

    ``pairs`` are (source ids, target ids) lists; each batch of at most ``max_tokens``
    tokens goes to the model's device.

    Raises:
        ValueError: ``pairs`` is empty.
    """
    if not pairs:
        raise ValueError("dev_loss needs at least one (source ids, target ids) pair, got none")
    model.eval()
    device = next(model.parameters()).device
    total = count = 0.0
    with torch.no_grad():
        for batch in make_batches(pairs, max_tokens):
            src, tgt = collate([pairs[i] for i in batch])
            n = int((tgt != PAD_ID).sum())
            src, tgt = src.to(device), tgt.to(device)
            total += criterion(model(src, shift_right(tgt)), tgt).item() * n
            count += n
    return total / count
