"""``python -m utils.tasks.reversal``: retrain the tiny model exactly as chapter 10 does (3,000 steps,
one thread, about 2.5 minutes) and rewrite the shipped checkpoints and the reference run's log.

``python -m utils.tasks.reversal train --workdir W --steps N`` trains the tiny model in a work
folder instead (resumable; nothing shipped is touched), on one process or, launched by
``torchrun --standalone --nproc_per_node=2 -m utils.tasks.reversal train ...``, data-parallel
(``utils.training.distributed``): each process takes a share of every batch of 64 sentences."""

import argparse
import time

import torch

from ...core.env import add_device_option, resolve_device, set_seed
from ...model.transformer import TINY, Transformer
from ...training import loop
from ...training.checkpoints import average_checkpoints
from ...training.recipe import LabelSmoothingLoss, rate
from . import reference_run
from .task import TEST_SEED, exact_match, reversal_batch, save_checkpoints, short_run, train


def _main(device="cpu"):
    """Retrain the tiny model exactly as chapter 10 does; rewrite the shipped checkpoints and the run's log.

    ``device`` ("cpu", the shipped run's, or "cuda") is where the 3,000-step run and its test
    set go; the two 200-step warmup runs stay on the CPU. The checkpoints are written from the CPU.
    """
    device = resolve_device(device)
    set_seed(0)
    test = tuple(x.to(device) for x in reversal_batch(500, torch.Generator().manual_seed(TEST_SEED)))
    model = Transformer(**TINY).to(device)
    start = time.perf_counter()
    history = train(model, 3000, test=test)
    seconds = time.perf_counter() - start
    final = Transformer(**TINY).to(device)
    final.load_state_dict(average_checkpoints(list(history["checkpoints"].values())))
    print(f"exact match, step {max(history['checkpoints'])}: {exact_match(model, *test):.1%}; "
          f"average of the last {len(history['checkpoints'])}: {exact_match(final, *test):.1%}")
    on_cpu = {step: {k: v.cpu() for k, v in weights.items()} for step, weights in history["checkpoints"].items()}
    for path in save_checkpoints(on_cpu):
        print("wrote", path)
    peak = rate(400, 64, 400)
    warmup = {"warmup 400": (peak, history["train_loss"][:200].cpu()),
              "no warmup": (peak, short_run(lambda step: peak)),
              "warmup 40": (rate(40, 64, 40), short_run(lambda step: rate(step, 64, 40)))}
    print("wrote", reference_run.write(history, warmup, seconds))


def train_in_folder(workdir, steps, seed=0, batch_size=64, warmup=400, device="cpu", progress=True):
    """Train ``Transformer(**TINY)`` on the reversal task in ``workdir`` (``loop.Run``: resumable, a save
    point and checkpoint every 100 steps, the last 5 kept); data-parallel under ``torchrun``.

    Returns the ``loop.Run``.

    Raises:
        ValueError: ``workdir`` holds another run (another seed, batch size or number of processes).
    """
    device = resolve_device(device)
    set_seed(seed)
    model = Transformer(**TINY).to(device)
    batches = loop.GeneratorBatches(lambda generator: reversal_batch(batch_size, generator), seed)
    run = loop.Run(model, batches, d_model=TINY["d_model"], warmup=warmup, criterion=LabelSmoothingLoss(0.1),
                   save_every=100, keep_last=5, workdir=workdir, progress=progress, name="utils.tasks.reversal train",
                   config=dict(task="reversal", seed=seed, batch_size=batch_size, warmup=warmup),
                   desc="reversal")
    return run.train(steps)


def _cli(argv=None):
    parser = argparse.ArgumentParser(prog="python -m utils.tasks.reversal", description=__doc__.split("\n\n")[0])
    add_device_option(parser)
    sub = parser.add_subparsers(dest="cmd")
    t = sub.add_parser("train", help="train the tiny model in a work folder (resumable; data-parallel under torchrun)")
    t.add_argument("--workdir", required=True, help="checkpoints, state and log")
    t.add_argument("--steps", type=int, default=3000, help="train until this step (default: %(default)s)")
    t.add_argument("--seed", type=int, default=0, help="initial weights, batches and dropout (default: %(default)s)")
    add_device_option(t)
    args = parser.parse_args(argv)
    if args.cmd == "train":
        run = train_in_folder(args.workdir, args.steps, args.seed, device=args.device)
        if run.main:
            print(f"step {run.step}: mean training loss of the last 100 steps {run.losses[-100:].mean().item():.4f} "
                  f"({run.world.size} process(es)); wrote {args.workdir}")
    else:
        _main(args.device)


if __name__ == "__main__":
    _cli()
