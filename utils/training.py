"""Training the Transformer (paper section 5): the reversal task's data,
batching by length, the learning-rate schedule, label smoothing, the training
step, chapter 10's training run and the shipped checkpoints of the tiny model.

The loop that repeats ``train_step`` (progress bar, evaluation, checkpoints, a
resumable work folder) is ``utils.loop.Run``, shared by every task of the course."""

from __future__ import annotations

import math
import numbers
import pathlib
import re
from collections.abc import Iterable, Mapping

import torch
import torch.nn.functional as F
from torch import nn

from . import loop
from .checks import check_ids, check_probability, is_int
from .env import set_seed
from .masks import BOS_ID, EOS_ID, PAD_ID, padding_mask, shift_right, target_mask
from .model import TINY, Transformer


def _check_positive_int(**values):
    for name, value in values.items():
        if not is_int(value) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


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


def _check_step_logits(logits, tgt):
    """Raise unless the model's output is logits (batch, tgt_len, vocab) for a target ``tgt`` (batch, tgt_len)."""
    expected = f"logits (batch, tgt_len, vocab) = ({tgt.size(0)}, {tgt.size(1)}, vocab)"
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        got = f"{type(logits).__name__}" + (f" of dtype {logits.dtype}" if isinstance(logits, torch.Tensor) else "")
        raise TypeError(f"model(src, tgt_in, src_mask, tgt_mask) must return {expected}, a float tensor, got {got}")
    if logits.dim() != 3 or logits.shape[:2] != tgt.shape:
        raise ValueError(f"model(src, tgt_in, src_mask, tgt_mask) must return {expected}, got shape {tuple(logits.shape)}")


def _check_generator(generator):
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, such as torch.Generator().manual_seed(0), "
                        f"got {type(generator).__name__} {generator!r}")


def _check_lengths(lengths):
    """The lengths as a list of Python ints; raise unless each is a positive int."""
    if (isinstance(lengths, (str, bytes)) or not isinstance(lengths, Iterable)
            or isinstance(lengths, torch.Tensor) and lengths.dim() != 1):
        raise TypeError(f"lengths must be a list of positive ints (one per example), got {type(lengths).__name__} {lengths!r}")
    out = []
    for i, n in enumerate(lengths):
        if isinstance(n, torch.Tensor) and n.dim() == 0 and n.dtype in (torch.int64, torch.int32, torch.int16, torch.uint8):
            n = int(n)
        if not is_int(n):
            raise TypeError(f"lengths must be positive ints (one per example), got {type(n).__name__} {n!r} at index {i}")
        if n < 1:
            raise ValueError(f"lengths must be positive ints (one per example), got {n!r} at index {i}")
        out.append(int(n))
    return out


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


def _check_transformer(model):
    if not isinstance(model, nn.Module) or not is_int(getattr(getattr(model, "embed", None), "d_model", None)):
        raise TypeError(f"model must be a utils.model.Transformer (an nn.Module whose embed has d_model), "
                        f"got {type(model).__name__}")


def _check_src_tgt(src, tgt, where=""):
    check_ids(src, f"{where}src")
    check_ids(tgt, f"{where}tgt")
    if src.size(0) != tgt.size(0):
        raise ValueError(f"{where}src and {where}tgt need the same batch size, got {src.size(0)} and {tgt.size(0)}")


def _check_train(seed, test, keep_last):
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {type(seed).__name__} {seed!r}")
    if not is_int(keep_last) or keep_last < 0:
        raise ValueError(f"keep_last must be an int >= 0 (0 keeps no checkpoint), got {type(keep_last).__name__} {keep_last!r}")
    if test is not None:
        if not isinstance(test, (tuple, list)) or len(test) != 2:
            got = f"{type(test).__name__} of length {len(test)}" if isinstance(test, (tuple, list)) else type(test).__name__
            raise TypeError(f"test must be None or a (src, tgt) pair of id tensors, as from reversal_batch, got {got}")
        _check_src_tgt(*test, where="test ")


def _check_checkpoints(checkpoints):
    if not isinstance(checkpoints, Mapping):
        raise TypeError(f"checkpoints must be a dict {{step: state_dict}} such as train(...)['checkpoints'], "
                        f"got {type(checkpoints).__name__}")
    for step, state in checkpoints.items():
        if not is_int(step) or step < 0:
            raise ValueError(f"checkpoints must be keyed by step, an int >= 0, got key {step!r}")
        if not isinstance(state, Mapping) or not all(isinstance(v, torch.Tensor) for v in state.values()):
            raise TypeError(f"checkpoint {step} must be a state_dict (a mapping of names to tensors), got {type(state).__name__}")


def _torch_load(path, expected, remedy):
    """``torch.load(path, weights_only=True)``; a file it cannot read raises a ValueError that names
    ``path``, what was ``expected`` there and the ``remedy``, and nothing of PyTorch's own message
    (which would advise ``weights_only=False``: never load an unknown file that way)."""
    try:
        return torch.load(path, weights_only=True)
    except OSError:
        raise  # an unreadable file (permissions, disk) says so itself, with its path
    except Exception:  # garbage bytes fail in many ways: UnpicklingError, EOFError, RuntimeError, ...
        kind = ("an empty file, which torch.load cannot read" if pathlib.Path(path).stat().st_size == 0 else
                "a file that torch.load cannot read as plain tensors (truncated, not written by torch.save, "
                "or holding other objects)")
        raise ValueError(f"{path} must be {expected}, got {kind}; {remedy}") from None


def _checkpoint_path(step, directory):
    """directory/tiny_step{step}.pt; raise unless ``step`` is an int >= 0."""
    if not is_int(step):
        raise TypeError(f"step must be an int >= 0 (a training step such as 3000), got {type(step).__name__} {step!r}")
    if step < 0:
        raise ValueError(f"step must be an int >= 0 (a training step such as 3000), got {step!r}")
    return pathlib.Path(directory) / f"tiny_step{int(step)}.pt"


def _checkpoint_steps(directory, prefix="tiny_step"):
    """The steps of the files ``{prefix}{step}.pt`` in ``directory``, sorted; other names
    (``tiny_stepX.pt``, ``tiny_step5_backup.pt``, ``tiny_step007.pt``) and folders are passed over."""
    pattern = re.compile(re.escape(prefix) + r"(0|[1-9][0-9]*)\.pt")
    return sorted(int(m[1]) for p in pathlib.Path(directory).glob(f"{prefix}*.pt")
                  if (m := pattern.fullmatch(p.name)) and p.is_file())


def _check_checkpoint_file(path, model):
    """Raise unless ``path`` holds a state_dict that fits ``model``, naming the file."""
    state = _torch_load(path, "a checkpoint saved by save_checkpoints (a torch.save'd state_dict)",
                        "delete it, or rewrite the checkpoints with: PYTHONPATH=. python -m utils.training")
    if not isinstance(state, Mapping) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{path} must hold a state_dict of {type(model).__name__}(**TINY), got {type(state).__name__}")
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in state.items()}
    if got != expected:
        differences = {
            "missing": sorted(expected.keys() - got.keys()),
            "unexpected": sorted(got.keys() - expected.keys()),
            "of other shapes": sorted(f"{k} {got[k]} instead of {expected[k]}"
                                      for k in expected.keys() & got.keys() if got[k] != expected[k]),
        }
        found = "; ".join(f"{len(v)} {kind} {v[:3]}" for kind, v in differences.items() if v)
        raise ValueError(f"{path} must hold the weights of {type(model).__name__}(**TINY), "
                         f"got those of another model: {found}")


#: Where the tiny model's trained weights are shipped (float32 state_dicts).
CHECKPOINT_DIR = pathlib.Path(__file__).resolve().parent / "checkpoints"
#: Chapter 10's 500 held-out test sequences come from this seed (training uses seed 0).
TEST_SEED = 1


def reversal_batch(batch_size, generator, min_len=3, max_len=8):
    """A batch of the reversal task: source letters and their reversal plus </s>.

    Each row has a length drawn uniformly from min_len..max_len and letters
    drawn uniformly from ids 3..12 (a..j). ``src`` is padded with PAD_ID to
    the longest row; ``tgt`` is the reversed source followed by EOS_ID, one
    position longer. The decoder reads ``shift_right(tgt)``.

    Shapes: src (batch_size, L) and tgt (batch_size, L + 1), dtype long, where
    L is the longest length drawn. Same generator state, same batch.

    Raises:
        ValueError: a size is not a positive int, or min_len > max_len.
        TypeError: ``generator`` is not a ``torch.Generator``.
    """
    _check_positive_int(batch_size=batch_size, min_len=min_len, max_len=max_len)
    _check_generator(generator)
    if min_len > max_len:
        raise ValueError(f"min_len={min_len} must not exceed max_len={max_len}")
    lengths = torch.randint(min_len, max_len + 1, (batch_size,), generator=generator)
    L = int(lengths.max())
    letters = torch.randint(3, 13, (batch_size, L), generator=generator)
    pos = torch.arange(L)
    real = pos < lengths[:, None]  # (batch, L): True on real tokens
    src = letters.masked_fill(~real, PAD_ID)
    mirror = (lengths[:, None] - 1 - pos).clamp(min=0)  # target position i reads source n - 1 - i
    tgt = torch.full((batch_size, L + 1), PAD_ID)
    tgt[:, :L] = src.gather(1, mirror).masked_fill(~real, PAD_ID)
    tgt[torch.arange(batch_size), lengths] = EOS_ID
    return src, tgt


def length_batches(lengths, max_tokens, sort=True):
    """Group examples of similar length into batches of at most ``max_tokens`` (section 5.1).

    Sort the examples by length, then fill each batch until one more example
    would make (examples x longest length) exceed the budget: padded tokens
    count, so similar lengths waste little.

    Args:
        lengths: sequence of positive ints, one per example.
        max_tokens: token budget per batch (25,000 in the paper).
        sort: False keeps the given order (random batching, for comparison).

    Returns:
        A list of batches, each a list of example indices.

    Raises:
        TypeError: ``lengths`` is not a list of ints.
        ValueError: a length is below 1, ``max_tokens`` is not a positive
            int or is smaller than the longest example.
    """
    lengths = _check_lengths(lengths)  # a list of positive ints
    _check_positive_int(max_tokens=max_tokens)
    if lengths and max(lengths) > max_tokens:
        raise ValueError(f"an example of length {max(lengths)} does not fit max_tokens={max_tokens}")
    batches, batch, longest = [], [], 0
    order = sorted(range(len(lengths)), key=lambda i: lengths[i]) if sort else range(len(lengths))
    for i in order:
        if batch and (len(batch) + 1) * max(longest, lengths[i]) > max_tokens:
            batches.append(batch)
            batch, longest = [], 0
        batch.append(i)
        longest = max(longest, lengths[i])
    if batch:
        batches.append(batch)
    return batches


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
    _check_transformer(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9, fused=True)
    d_model = model.embed.d_model
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: rate(step, d_model, warmup, factor))
    return optimizer, scheduler


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


def train(model, steps, batch_size=64, warmup=400, eps_ls=0.1, seed=0,
          test=None, eval_every=100, log_every=500, keep_last=5, progress=True):
    """Train on the reversal task with the paper's recipe (section 5).

    Each step draws a fresh batch (``reversal_batch``, its generator seeded
    with ``seed``; dropout uses PyTorch's global generator) and takes one
    ``train_step``: the label-smoothed loss (section 5.4, ``eps_ls``) of the
    shifted decoder input, then one Adam step at ``rate`` (section 5.3,
    ``warmup``). The loop is ``utils.loop.Run``, kept in memory. Every
    ``eval_every`` steps the label-smoothed loss on ``test`` = (src, tgt) is
    measured in eval mode; every ``log_every`` steps a line is printed; the
    weights at the last ``keep_last`` multiples of ``eval_every`` are kept.
    With ``progress``, a tqdm bar on stderr counts the steps (the printed lines
    stay on stdout). Leaves the model in eval mode.

    Returns:
        dict with "train_loss" (a (steps,) tensor), "test_step" and
        "test_loss" (lists), and "checkpoints" {step: state_dict copy}.

    Raises:
        ValueError: ``steps``, ``eval_every`` or ``log_every`` is not a positive
            int; ``keep_last`` or ``seed`` is not an int >= 0.
        TypeError: ``model`` is not a ``Transformer``; ``test`` is not None
            or a (src, tgt) pair of id tensors.
    """
    _check_positive_int(steps=steps, eval_every=eval_every, log_every=log_every)
    _check_train(seed, test, keep_last)
    _check_transformer(model)
    criterion = LabelSmoothingLoss(eps_ls)

    def test_loss(model, step):  # the loop calls it in eval mode, without gradients
        return dict(test_loss=criterion(model(test[0], shift_right(test[1])), test[1]).item())

    batches = loop.GeneratorBatches(lambda generator: reversal_batch(batch_size, generator), seed)
    run = loop.Run(model, batches, d_model=model.embed.d_model, warmup=warmup, criterion=criterion,
                   evaluate=None if test is None else test_loss, save_every=eval_every,
                   keep_last=keep_last, print_every=log_every, progress=progress)
    run.train(steps)
    model.eval()
    tested = [record for record in run.log if "test_loss" in record]
    return dict(train_loss=run.losses, test_step=[r["step"] for r in tested],
                test_loss=[r["test_loss"] for r in tested], checkpoints=run.checkpoints)


def _greedy(model, src, max_extra=1):
    """Greedy decoding for scoring: src (batch, S) -> ids (batch, S + max_extra) after <s>.

    Appends the most probable token S + max_extra times (enough for a
    reversal and its </s>); chapter 11 teaches decoding in full.
    """
    src_mask = padding_mask(src)
    memory = model.encode(src, src_mask)
    ys = torch.full((src.size(0), 1), BOS_ID)
    for _ in range(src.size(1) + max_extra):
        logits = model.generator(model.decode(ys, memory, src_mask, target_mask(ys))[:, -1])
        ys = torch.cat([ys, logits.argmax(-1, keepdim=True)], dim=1)
    return ys[:, 1:]


def exact_match(model, src, tgt, decode=_greedy):
    """Share of rows whose decoded output equals ``tgt`` up to and including </s>.

    Puts the model in eval mode and calls ``decode(model, src)``, which must
    return (batch, n) ids of the output after <s> (greedy by default); tokens
    after the target's </s> are ignored, missing ones count as wrong.

    Shapes: src (batch, S), tgt (batch, T) as from ``reversal_batch``.
    Returns a float in [0, 1].

    Raises:
        TypeError, ValueError: src or tgt is not a (batch, len) id tensor, or
            their batch sizes differ.
    """
    _check_src_tgt(src, tgt)
    model.eval()
    with torch.no_grad():
        out = decode(model, src)
    n = tgt.size(1)
    out = F.pad(out, (0, max(0, n - out.size(1))), value=PAD_ID)[:, :n]
    right = (out == tgt) | (tgt == PAD_ID)  # padding positions of tgt do not count
    return right.all(dim=1).float().mean().item()


def save_checkpoints(checkpoints, directory=CHECKPOINT_DIR):
    """Write each {step: state_dict} of ``train`` to directory/tiny_step{step}.pt; return the paths."""
    _check_checkpoints(checkpoints)
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for step, state in sorted(checkpoints.items()):
        paths.append(directory / f"tiny_step{step}.pt")
        torch.save(state, paths[-1])
    return paths


def load_checkpoint(step=3000, directory=CHECKPOINT_DIR):
    """The tiny model ``Transformer(**TINY)`` with the weights saved for ``step``, in eval mode.

    The course ships the weights of chapter 10's reference run (``python -m
    utils.training``; steps 2,600 to 3,000, every 100) in ``utils/checkpoints/``;
    chapters 11 and 13 load them.

    Raises:
        TypeError, ValueError: ``step`` is not an int >= 0.
        FileNotFoundError: no checkpoint for that step (the message lists those present).
        ValueError: the file is not a checkpoint of ``Transformer(**TINY)`` (the message names it).
    """
    path = _checkpoint_path(step, directory)  # directory/tiny_step{step}.pt, for an int step >= 0
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint for step {step} in {directory}; "
                                f"steps present: {_checkpoint_steps(directory)}")
    model = Transformer(**TINY)
    _check_checkpoint_file(path, model)
    model.load_state_dict(torch.load(path, weights_only=True))
    return model.eval()


def short_run(schedule, steps=200, seed=0):
    """Train a fresh tiny model for ``steps`` steps, update k at rate schedule(k - 1); return the losses."""
    set_seed(seed)
    batches = loop.GeneratorBatches(lambda generator: reversal_batch(64, generator), seed)
    run = loop.Run(Transformer(**TINY), batches, schedule=schedule, progress=False)
    return run.train(steps).losses


def _main():
    """Retrain the tiny model exactly as chapter 10 does; rewrite the shipped checkpoints and the run's log."""
    import time

    from . import reference_run
    from .decoding import average_checkpoints

    set_seed(0)
    test = reversal_batch(500, torch.Generator().manual_seed(TEST_SEED))
    model = Transformer(**TINY)
    start = time.perf_counter()
    history = train(model, 3000, test=test)
    seconds = time.perf_counter() - start
    final = Transformer(**TINY)
    final.load_state_dict(average_checkpoints(list(history["checkpoints"].values())))
    print(f"exact match, step {max(history['checkpoints'])}: {exact_match(model, *test):.1%}; "
          f"average of the last {len(history['checkpoints'])}: {exact_match(final, *test):.1%}")
    for path in save_checkpoints(history["checkpoints"]):
        print("wrote", path)
    peak = rate(400, 64, 400)
    warmup = {"warmup 400": (peak, history["train_loss"][:200]),
              "no warmup": (peak, short_run(lambda step: peak)),
              "warmup 40": (rate(40, 64, 40), short_run(lambda step: rate(step, 64, 40)))}
    print("wrote", reference_run.write(history, warmup, seconds))


if __name__ == "__main__":
    _main()
