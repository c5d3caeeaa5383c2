"""``python -m utils.tasks.reversal``: retrain the tiny model exactly as chapter 10 does (3,000 steps,
one thread, about 2.5 minutes) and rewrite the shipped checkpoints and the reference run's log."""

import argparse
import time

import torch

from ...core.env import add_device_option, resolve_device, set_seed
from ...model.transformer import TINY, Transformer
from ...training.checkpoints import average_checkpoints
from ...training.recipe import rate
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


def _cli(argv=None):
    parser = argparse.ArgumentParser(prog="python -m utils.tasks.reversal", description=__doc__.split("\n\n")[0])
    add_device_option(parser)
    _main(parser.parse_args(argv).device)


if __name__ == "__main__":
    _cli()
