"""``python -m utils.tasks.reversal``: retrain the tiny model exactly as chapter 10 does (3,000 steps,
one thread, about 2.5 minutes) and rewrite the shipped checkpoints and the reference run's log."""

import argparse
import time

import torch

from ...core.env import set_seed
from ...model.transformer import TINY, Transformer
from ...training.checkpoints import average_checkpoints
from ...training.recipe import rate
from . import reference_run
from .task import TEST_SEED, exact_match, reversal_batch, save_checkpoints, short_run, train


def _main():
    """Retrain the tiny model exactly as chapter 10 does; rewrite the shipped checkpoints and the run's log."""
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
    argparse.ArgumentParser(prog="python -m utils.tasks.reversal", description=__doc__.split("\n\n")[0]).parse_args()
    _main()
