"""N processes against one: the data-parallel check of chapter 10 and tests/test_distributed.py.

    torchrun --standalone --nproc_per_node=N -m utils.experiments.ddp_check OUTDIR STEPS JOB [JOB ...]
    python -m utils.experiments.ddp_check OUTDIR STEPS JOB [JOB ...]      # one process: the reference

Each JOB, TASK:MODE, trains a small Transformer (d_model 32, float64, dropout off) for STEPS
steps on TASK's batches: "toy", the reversal task, 8 sentences a batch; "translation", batches of
6 German-English pairs of the shipped data. Shares of these batches hold unequal token counts.
MODE "global" or "local" is a loop of ``distributed.data_parallel_step`` whose loss is normalised
by the whole batch's tokens or by each share's own; MODE "run" trains with
``utils.training.loop.Run`` in the work folder OUTDIR/run. Process 0 writes the final weights to
OUTDIR/TASK-MODE.pt. float64 keeps rounding far below the differences that matter, so that "the
same update" can be checked against ``distributed.SAME_UPDATE_TOLERANCE``.
"""

from __future__ import annotations

import pathlib
import sys

import torch

from ..core.env import set_seed
from ..model.transformer import Transformer
from ..training import distributed, loop
from ..training.recipe import LabelSmoothingLoss, rate

#: The warm-up of the check's schedule (equation 3), in steps: short, so that a few steps reach large rates.
WARMUP = 4
#: The tasks and modes a job may name.
TASKS, MODES = ("toy", "translation"), ("global", "local", "run")


def batches(task: str):
    """(vocabulary size, batch source) of ``task``: "toy" or "translation" (see the module's docstring)."""
    if task == "toy":
        from ..tasks.reversal.task import reversal_batch
        return 13, loop.GeneratorBatches(lambda g: reversal_batch(8, g), seed=0)
    from ..tasks.translation import data as tr
    from ..training.batching import collate
    pairs = tr.encode_pairs(tr.cached_pairs(tr.data_path())["train"][:60], tr.shipped_vocab())
    return tr.VOCAB_SIZE, loop.EpochBatches([list(range(i, i + 6)) for i in range(0, 60, 6)],
                                            lambda indices: collate([pairs[i] for i in indices]), seed=0)


def job(task: str, mode: str, steps: int, outdir) -> None:
    """Train one job (module docstring) on this process's share of each batch; process 0 writes OUTDIR/TASK-MODE.pt.

    Raises:
        ValueError: ``task`` or ``mode`` is not one of ``TASKS`` or ``MODES``.
    """
    if task not in TASKS or mode not in MODES:
        raise ValueError(f"a job is TASK:MODE with TASK in {TASKS} and MODE in {MODES}, got {task}:{mode}")
    set_seed(0)
    vocab, source = batches(task)
    model = Transformer(vocab, d_model=32, h=2, d_ff=64, N=2, p_drop=0.0).double()
    criterion = LabelSmoothingLoss(0.1)
    if mode == "run":
        run = loop.Run(model, source, d_model=32, warmup=WARMUP, criterion=criterion, progress=False,
                       save_every=2, keep_last=2, workdir=pathlib.Path(outdir) / "run", config=dict(task=task))
        run.train(steps)
        world = run.world
    else:
        world = distributed.start("cpu")  # N > 1 under torchrun: the gloo process group
        stepper = model if world.size == 1 else torch.nn.parallel.DistributedDataParallel(model)
        optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: rate(step, 32, WARMUP))
        for _ in range(steps):
            src, tgt = distributed.shard(*next(source), world)  # every process draws the batch, keeps its rows
            distributed.data_parallel_step(stepper, src, tgt, criterion, optimizer, scheduler, world, mode)
    if world.rank == 0:
        torch.save(model.state_dict(), pathlib.Path(outdir) / f"{task}-{mode}.pt")


def main(argv=None) -> None:
    """The command in the module's docstring."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 3:
        raise SystemExit(__doc__)
    outdir, steps, *jobs = args
    for spec in jobs:
        task, _, mode = spec.partition(":")
        job(task, mode, int(steps), outdir)


if __name__ == "__main__":
    main()
