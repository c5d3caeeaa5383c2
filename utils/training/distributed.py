"""Data-parallel training with ``torch.distributed`` (paper section 5.2: eight GPUs share each batch).

The paper trained on 8 P100 GPUs, each batch holding about 25,000 source and 25,000 target tokens
spread over them. Here N processes (``torchrun --standalone --nproc_per_node=N``; gloo on the
CPU, NCCL on GPUs) each take a share of every batch: the same batch source runs in every
process, so all draw the same batch, and process r keeps its own rows (``shard``). Each computes
the gradient of its share; ``DistributedDataParallel`` sums the processes' gradients in an
all-reduce and divides by N; then every process takes the same Adam step, so the copies of the
model stay equal.

One trap makes it more than a wrapper. The paper's loss is a mean per target token. Two shares
of one batch rarely hold the same number of tokens, and the mean of two per-share means is not
the mean over the batch. ``data_parallel_step`` therefore scales each share's summed loss by the
whole batch's token count (an all-reduce of the counts), times N to undo DDP's division: the
gradient is then the one-process gradient of the whole batch, up to rounding.

``utils.training.loop.Run`` uses this module when the process was started by ``torchrun`` with
more than one process (``World.from_env``); with one process nothing changes.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import torch
import torch.distributed as dist

from ..core.masks import PAD_ID, padding_mask, shift_right, target_mask

#: How far (max absolute difference of any weight, float64) N processes may end from one process on the
#: whole batches after a few steps of ``data_parallel_step``; measured: about 2e-10 after 5 steps on the toy
#: task and on translation batches, nearly all of it in the attention keys' biases, whose true gradient is
#: zero (softmax ignores a shift of every score of a row), so that Adam scales rounding noise up to a step.
SAME_UPDATE_TOLERANCE = 1e-8
#: The variables ``torchrun`` sets in every process it starts.
TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


class World(NamedTuple):
    """This process's place among the N processes of a data-parallel run: ``rank`` in 0..size-1."""

    rank: int = 0
    size: int = 1

    @classmethod
    def from_env(cls) -> World:
        """The world ``torchrun`` describes in this process's environment (one process without it).

        Raises:
            RuntimeError: ``WORLD_SIZE`` says more than one process but the other variables
                ``torchrun`` sets are missing (the message gives the command to launch with).
            ValueError: ``RANK`` or ``WORLD_SIZE`` is not an int, or the rank is outside 0..size-1.
        """
        size_text = os.environ.get("WORLD_SIZE", "1")
        try:
            size, rank = int(size_text), int(os.environ.get("RANK", "0"))
        except ValueError:
            raise ValueError(f"WORLD_SIZE and RANK must be ints, got {size_text!r} and "
                             f"{os.environ.get('RANK')!r}") from None
        if size > 1:
            missing = [v for v in TORCHRUN_VARIABLES if v not in os.environ]
            if missing:
                raise RuntimeError(f"WORLD_SIZE={size} asks for {size} processes, but {missing} are not set: "
                                   f"launch the command with torchrun, for example `torchrun --standalone "
                                   f"--nproc_per_node={size} -m utils.tasks.reversal train ...`")
        if size < 1 or not 0 <= rank < size:
            raise ValueError(f"RANK must lie in 0..WORLD_SIZE-1, got RANK={rank}, WORLD_SIZE={size}")
        return cls(rank, size)


def start(device="cpu") -> World:
    """This process's ``World``; with more than one process, the process group started (once).

    gloo on the CPU, NCCL on CUDA GPUs (process r uses GPU ``LOCAL_RANK``).

    Raises:
        as ``World.from_env``.
    """
    world = World.from_env()
    if world.size > 1 and not dist.is_initialized():
        backend = "nccl" if torch.device(device).type == "cuda" else "gloo"
        if backend == "nccl":
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        dist.init_process_group(backend)
    return world


def shard(src, tgt, world: World):
    """Process ``world.rank``'s rows of a batch: (src (b, S), tgt (b, T)) -> its contiguous share.

    The b sentences go to the N processes in N contiguous runs whose sizes differ by at most
    one (the first b mod N processes get one more). Padding columns are kept: every share
    has the batch's S and T.

    Raises:
        ValueError: the batch has fewer sentences than there are processes, or src and tgt
            differ in their number of sentences.
    """
    b = src.size(0)
    if tgt.size(0) != b:
        raise ValueError(f"src and tgt must hold the same sentences, got {b} and {tgt.size(0)} rows")
    if b < world.size:
        raise ValueError(f"a batch of {b} sentence{'s' if b != 1 else ''} cannot be shared by {world.size} processes: "
                         f"every process needs at least one sentence (use fewer processes or larger batches)")
    base, extra = divmod(b, world.size)
    begin = world.rank * base + min(world.rank, extra)
    end = begin + base + (world.rank < extra)
    return src[begin:end], tgt[begin:end]


def data_parallel_step(model, src, tgt, criterion, optimizer, scheduler, world: World, normalise="global"):
    """One update of ``recipe.train_step`` on this process's share, the same update as one process on the batch.

    ``model`` is the ``DistributedDataParallel`` wrapper; ``src``, ``tgt`` are this process's
    share (``shard``); ``criterion`` returns the mean loss per non-pad target token (as
    ``LabelSmoothingLoss`` does). The share's summed loss is divided by the whole batch's
    target tokens (an all-reduce of the counts) and multiplied by N, since DDP averages the
    gradients over the N processes. ``normalise="local"`` divides by the share's own tokens
    instead: the mistake that chapter 10 shows, whose update differs when the shares hold
    different numbers of tokens.

    Returns:
        The whole batch's mean loss per target token, a 0-d float tensor on every process.

    Raises:
        ValueError: ``normalise`` is neither "global" nor "local".
    """
    if normalise not in ("global", "local"):
        raise ValueError(f"normalise must be 'global' (the whole batch's tokens) or 'local', got {normalise!r}")
    tgt_in = shift_right(tgt)
    logits = model(src, tgt_in, padding_mask(src), target_mask(tgt_in))
    tokens = (tgt != PAD_ID).sum()
    total = tokens.clone()
    if world.size > 1:
        dist.all_reduce(total)  # the whole batch's target tokens
    mean = criterion(logits, tgt)  # this share's mean per token
    if normalise == "global":
        loss = mean * tokens * world.size / total
    else:
        loss = mean
    optimizer.zero_grad(set_to_none=True)
    loss.backward()  # DDP all-reduces the gradients and divides them by N
    optimizer.step()
    scheduler.step()
    whole = (mean * tokens / total).detach()  # this share's part of the batch's mean
    if world.size > 1:
        dist.all_reduce(whole)
    return whole
