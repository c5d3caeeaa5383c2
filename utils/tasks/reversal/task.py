"""The toy task of chapter 10: reverse a short sequence of letters. Its data, its training
run with the paper's recipe, exact match, and the shipped checkpoints of the tiny model.

``python -m utils.tasks.reversal`` makes the course's reference run (``reference_run``)."""

from __future__ import annotations

import pathlib
from collections.abc import Mapping

import torch
import torch.nn.functional as F

from ...core.checks import check_counts, check_ids, is_int
from ...core.env import CHECKPOINTS, set_seed
from ...core.masks import BOS_ID, EOS_ID, PAD_ID, padding_mask, shift_right, target_mask
from ...model.transformer import TINY, Transformer
from ...training import loop
from ...training.checkpoints import checkpoint_steps, torch_load
from ...training.recipe import LabelSmoothingLoss, check_transformer


def _check_generator(generator):
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, such as torch.Generator().manual_seed(0), "
                        f"got {type(generator).__name__} {generator!r}")


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


def _checkpoint_path(step, directory):
    """directory/tiny_step{step}.pt; raise unless ``step`` is an int >= 0."""
    if not is_int(step):
        raise TypeError(f"step must be an int >= 0 (a training step such as 3000), got {type(step).__name__} {step!r}")
    if step < 0:
        raise ValueError(f"step must be an int >= 0 (a training step such as 3000), got {step!r}")
    return pathlib.Path(directory) / f"tiny_step{int(step)}.pt"


def _check_checkpoint_file(path, model):
    """Raise unless ``path`` holds a state_dict that fits ``model``, naming the file."""
    state = torch_load(path, "a checkpoint saved by save_checkpoints (a torch.save'd state_dict)",
                        "delete it, or rewrite the checkpoints with: PYTHONPATH=. python -m utils.tasks.reversal")
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
CHECKPOINT_DIR = CHECKPOINTS
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
    check_counts(batch_size=batch_size, min_len=min_len, max_len=max_len)
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


def train(model, steps, batch_size=64, warmup=400, eps_ls=0.1, seed=0,
          test=None, eval_every=100, log_every=500, keep_last=5, progress=True):
    """Train on the reversal task with the paper's recipe (section 5).

    Each step draws a fresh batch (``reversal_batch``, its generator seeded
    with ``seed``; dropout uses PyTorch's global generator) and takes one
    ``train_step``: the label-smoothed loss (section 5.4, ``eps_ls``) of the
    shifted decoder input, then one Adam step at ``rate`` (section 5.3,
    ``warmup``). The loop is ``utils.training.loop.Run``, kept in memory. Every
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
    check_counts(steps=steps, eval_every=eval_every, log_every=log_every)
    _check_train(seed, test, keep_last)
    check_transformer(model)
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


def greedy_ids(model, src, max_extra=1):
    """Greedy decoding for scoring: src (batch, S) -> ids (batch, S + max_extra) after <s>.

    Appends the most probable token S + max_extra times (enough for a
    reversal and its </s>); chapter 11 teaches decoding in full. The ids
    lie on the device of ``src``, which must be the model's.
    """
    src_mask = padding_mask(src)
    memory = model.encode(src, src_mask)
    ys = torch.full((src.size(0), 1), BOS_ID, device=src.device)
    for _ in range(src.size(1) + max_extra):
        logits = model.generator(model.decode(ys, memory, src_mask, target_mask(ys))[:, -1])
        ys = torch.cat([ys, logits.argmax(-1, keepdim=True)], dim=1)
    return ys[:, 1:]


def exact_match(model, src, tgt, decode=greedy_ids):
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
    utils.tasks.reversal``; steps 2,600 to 3,000, every 100) in ``utils/checkpoints/``;
    chapters 11 and 13 load them.

    Raises:
        TypeError, ValueError: ``step`` is not an int >= 0.
        FileNotFoundError: no checkpoint for that step (the message lists those present).
        ValueError: the file is not a checkpoint of ``Transformer(**TINY)`` (the message names it).
    """
    path = _checkpoint_path(step, directory)  # directory/tiny_step{step}.pt, for an int step >= 0
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint for step {step} in {directory}; "
                                f"steps present: {checkpoint_steps(directory)}")
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
