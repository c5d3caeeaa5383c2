"""Benchmark (run on demand, not collected by pytest):

    .venv/bin/python bench/recurrent_step.py [--steps 5] [--threads 1]

For issue 22 (Table 2 on G2P: the recurrent model of Bahdanau et al. 2015 against the
Transformer at equal training FLOPs). On the G2P training batches of ``make_batches``
(max_tokens 3000), for the G2P Transformer (``utils.g2p.new_model``) and the recurrent
model (``utils.recurrent.new_recurrent_model``):

* their parameter counts and ratio;
* the FLOPs of one training step (forward, label-smoothed loss, backward), from the
  formulas of ``utils.flops`` (checked against ``FlopCounterMode`` by
  ``tests/test_recurrent.py``), averaged over every batch of an epoch: the number that
  turns a FLOP budget into a number of steps;
* seconds per training step (forward, loss, backward, Adam) on ``--threads`` threads:
  the median over ``--steps`` batches drawn at random (seed 0), the two models
  alternating on the same batches (the machine is shared: alternation spreads its noise
  over both).
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from utils.env import set_seed  # noqa: E402
from utils.flops import recurrent_step_flops, transformer_step_flops  # noqa: E402
from utils.g2p import G2P_MODEL, G2P_TRAIN, G2PVocab, _lexicon_once, collate, examples, make_batches, new_model  # noqa: E402
from utils.masks import PAD_ID, padding_mask, shift_right, target_mask  # noqa: E402
from utils.model import count_parameters  # noqa: E402
from utils.recurrent import G2P_RECURRENT, new_recurrent_model  # noqa: E402
from utils.training import LabelSmoothingLoss, make_optimizer  # noqa: E402


def train_step(model, optimizer, criterion, src, tgt):
    tgt_in = shift_right(tgt)
    loss = criterion(model(src, tgt_in, padding_mask(src), target_mask(tgt_in)), tgt)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    set_seed(0, threads=args.threads)
    vocab = G2PVocab()
    pairs = examples(_lexicon_once()["train"], vocab)
    batches = make_batches(pairs, G2P_TRAIN["max_tokens"])
    models = {"transformer": new_model(len(vocab)), "recurrent": new_recurrent_model(len(vocab))}
    counts = {name: count_parameters(m) for name, m in models.items()}
    print(f"parameters: transformer {counts['transformer']:,}, recurrent {counts['recurrent']:,}, "
          f"ratio {counts['recurrent'] / counts['transformer']:.4f}")

    flops = {"transformer": 0, "recurrent": 0}
    for batch in batches:
        src, tgt = collate([pairs[i] for i in batch])
        flops["transformer"] += transformer_step_flops(src.size(0), src.size(1), tgt.size(1), len(vocab), **G2P_MODEL)
        flops["recurrent"] += recurrent_step_flops((src != PAD_ID).sum(1), tgt.size(1), len(vocab), **G2P_RECURRENT)
    mean = {name: f / len(batches) for name, f in flops.items()}
    print(f"FLOPs per training step, mean over the {len(batches):,} batches of an epoch: "
          f"transformer {mean['transformer']:.4g}, recurrent {mean['recurrent']:.4g}, "
          f"ratio {mean['recurrent'] / mean['transformer']:.4f}")

    criterion = LabelSmoothingLoss(G2P_TRAIN["eps_ls"])
    optimizers = {name: make_optimizer(m, G2P_TRAIN["warmup"])[0] for name, m in models.items()}
    chosen = torch.randperm(len(batches), generator=torch.Generator().manual_seed(0))[: args.steps + 1].tolist()
    seconds = {name: [] for name in models}
    for k, b in enumerate(chosen):
        src, tgt = collate([pairs[i] for i in batches[b]])
        for name, model in models.items():
            model.train()
            t0 = time.perf_counter()
            train_step(model, optimizers[name], criterion, src, tgt)
            if k:  # the first step warms up
                seconds[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(s) for name, s in seconds.items()}
    print(f"seconds per training step on {args.threads} thread(s), median of {args.steps} batches: "
          f"transformer {med['transformer']:.3f}, recurrent {med['recurrent']:.3f}, "
          f"ratio {med['recurrent'] / med['transformer']:.2f}")


if __name__ == "__main__":
    main()
