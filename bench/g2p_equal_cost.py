"""Issue 22's budget: at which step does the recurrent G2P model reach the training FLOPs of
the Transformer's 18,000 steps (run on demand, not collected by pytest)?

    PYTHONPATH=. .venv/bin/python bench/g2p_equal_cost.py [--seed 0]

Replays the batch order of a seed (``loop.EpochBatches``, as ``train_g2p`` draws it; no
model is run) and adds up, step by step, each model's FLOPs by the formulas of
``utils/flops.py`` (checked against ``FlopCounterMode`` by tests/test_recurrent.py). Takes
a few minutes: it pads every batch.
"""

import argparse
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from utils import g2p, loop  # noqa: E402
from utils.flops import recurrent_step_flops, transformer_step_flops  # noqa: E402
from utils.masks import PAD_ID  # noqa: E402
from utils.recurrent import G2P_RECURRENT  # noqa: E402


def step_flops(seed: int, steps: int, arch: str) -> list[int]:
    """FLOPs of each of the first ``steps`` training steps of ``arch`` with ``seed``'s batch order."""
    pairs, _, batches = g2p._training_data(g2p.G2P_TRAIN["max_tokens"])
    source = loop.EpochBatches(batches, lambda idx: g2p.collate([pairs[i] for i in idx]), seed)
    vocab = len(g2p.G2PVocab())
    out = []
    for _ in range(steps):
        src, tgt = next(source)
        if arch == "transformer":
            out.append(transformer_step_flops(src.size(0), src.size(1), tgt.size(1), vocab, **g2p.G2P_MODEL))
        else:
            out.append(recurrent_step_flops((src != PAD_ID).sum(1).tolist(), tgt.size(1), vocab, **G2P_RECURRENT))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    budget = g2p.G2P_TRAIN["steps"]
    total = sum(step_flops(args.seed, budget, "transformer"))
    cumulative = list(itertools.accumulate(step_flops(args.seed, budget + budget // 6, "recurrent")))
    equal = next(i + 1 for i, c in enumerate(cumulative) if c >= total)
    print(f"seed {args.seed}: the Transformer's {budget:,} steps take {total:.4e} FLOPs; "
          f"the recurrent model reaches them at step {equal:,}")
    for steps in (budget, 19_000, 20_000):
        print(f"  recurrent {steps:,} steps: {cumulative[steps - 1]:.4e} = {cumulative[steps - 1] / total:.4f} of it")


if __name__ == "__main__":
    main()
