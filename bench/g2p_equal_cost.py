"""Issue 22's budget: at which step does the recurrent G2P model reach the training FLOPs of
the Transformer's 18,000 steps (run on demand, not collected by pytest)?

    PYTHONPATH=. .venv/bin/python bench/g2p_equal_cost.py [--seed 0]

Replays the batch order of a seed (``utils.experiments.baseline.batch_order``; no model is run) and adds
up, step by step, each model's FLOPs by the formulas of ``utils/experiments/flops.py``
(``utils.experiments.baseline.batch_flops``, checked against ``FlopCounterMode`` by
tests/test_recurrent.py). Chapter 17 reads the result as ``utils.experiments.baseline.STEPS``.
"""

import argparse
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from utils.experiments.baseline import batch_flops, batch_order  # noqa: E402
from utils.tasks import g2p  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    budget = g2p.G2P_TRAIN["steps"]
    order = batch_order(args.seed, budget + budget // 6)
    flops = {arch: batch_flops(arch) for arch in g2p.ARCHS}
    total = sum(flops["transformer"][b] for b in order[:budget])
    cumulative = list(itertools.accumulate(flops["recurrent"][b] for b in order))
    equal = next(i + 1 for i, c in enumerate(cumulative) if c >= total)
    print(f"seed {args.seed}: the Transformer's {budget:,} steps take {total:.4e} FLOPs; "
          f"the recurrent model reaches them at step {equal:,}")
    for steps in (budget, 19_000, 20_000):
        print(f"  recurrent {steps:,} steps: {cumulative[steps - 1]:.4e} = {cumulative[steps - 1] / total:.4f} of it")


if __name__ == "__main__":
    main()
