"""A data-parallel training run for tests/test_distributed.py (not collected by pytest).

    torchrun --standalone --nproc_per_node=N tests/ddp_worker.py OUTDIR STEPS JOB [JOB ...]

Each JOB, TASK:MODE, trains a small Transformer (float64, dropout off) for STEPS steps on TASK's
batches ("toy": the reversal task, 8 sentences a batch; "translation": batches of 6
German-English pairs of the shipped data, of unequal token counts) by a loop of
``distributed.data_parallel_step`` whose loss is normalised by the whole batch's tokens
(MODE "global") or by each share's own ("local"), or by ``utils.training.loop.Run`` with the
folder OUTDIR/run as its workdir (MODE "run"). Process 0 writes the weights to
OUTDIR/TASK-MODE.pt. With one process (plain ``python``) the same code is the reference run.
A process other than 0 records every file it would write (``open`` for writing, ``torch.save``,
``os.replace``, ``mkdir``, ``unlink``) and prints them on a line ``writes of rank R: [...]``.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from utils.core.env import set_seed  # noqa: E402
from utils.model.transformer import Transformer  # noqa: E402
from utils.training import distributed, loop  # noqa: E402
from utils.training.recipe import LabelSmoothingLoss, rate  # noqa: E402

WARMUP = 4


def batches(task):
    if task == "toy":
        from utils.tasks.reversal.task import reversal_batch
        return 13, loop.GeneratorBatches(lambda g: reversal_batch(8, g), seed=0)
    from utils.tasks.translation import data as tr
    from utils.training.batching import collate
    pairs = tr.encode_pairs(tr.cached_pairs(tr.data_path())["train"][:60], tr.shipped_vocab())
    return tr.VOCAB_SIZE, loop.EpochBatches([list(range(i, i + 6)) for i in range(0, 60, 6)],
                                            lambda indices: collate([pairs[i] for i in indices]), seed=0)


def job(task, mode, steps, outdir):
    set_seed(0)
    vocab, source = batches(task)
    model = Transformer(vocab, d_model=32, h=2, d_ff=64, N=2, p_drop=0.0).double()  # float64: see the test
    criterion = LabelSmoothingLoss(0.1)
    if mode == "run":
        run = loop.Run(model, source, d_model=32, warmup=WARMUP, criterion=criterion, progress=False,
                       save_every=2, keep_last=2, workdir=pathlib.Path(outdir) / "run", config=dict(task=task))
        run.train(steps)
        world = run.world
    else:
        world = distributed.start("cpu")
        stepper = model
        if world.size > 1:
            stepper = torch.nn.parallel.DistributedDataParallel(model)
        optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: rate(step, 32, WARMUP))
        for _ in range(steps):
            src, tgt = distributed.shard(*next(source), world)
            distributed.data_parallel_step(stepper, src, tgt, criterion, optimizer, scheduler, world, mode)
    if world.rank == 0:
        torch.save(model.state_dict(), pathlib.Path(outdir) / f"{task}-{mode}.pt")


def record_writes():
    """Make every write of this process append its path to the list returned, instead of writing."""
    import builtins
    import os
    writes = []
    real_open = builtins.open

    def fake_open(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+"):
            writes.append(str(file))
            return real_open(os.devnull, mode, *args, **kwargs)
        return real_open(file, mode, *args, **kwargs)
    builtins.open = fake_open
    real_save = torch.save

    def fake_save(obj, f, *args, **kwargs):  # a file is recorded; a buffer (all_gather_object's) is written
        if isinstance(f, (str, os.PathLike)):
            return writes.append(str(f))
        return real_save(obj, f, *args, **kwargs)
    torch.save = fake_save
    os.replace = lambda a, b: writes.append(str(b))
    pathlib.Path.mkdir = lambda self, *a, **k: writes.append(str(self))
    pathlib.Path.unlink = lambda self, *a, **k: writes.append(str(self))
    pathlib.Path.write_text = lambda self, *a, **k: writes.append(str(self))
    return writes


def main(outdir, steps, *jobs):
    import os
    rank = int(os.environ.get("RANK", "0"))
    writes = record_writes() if rank > 0 else None
    for spec in jobs:
        task, mode = spec.split(":")
        job(task, mode, int(steps), outdir)
    if writes is not None:
        print(f"writes of rank {rank}: {writes}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
