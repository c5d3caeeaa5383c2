"""Benchmark (run on demand, not collected by pytest):

    .venv/bin/python bench/training.py [--repeats 5] [--steps 200] [--threads 1] [--sizes tiny,large] [--full]

Measures, in one run, the time of one training step (forward, label-smoothed
loss, backward, Adam) of the course's ``Transformer`` and of
``torch.nn.Transformer`` with the same configuration, wrapped in the same shared
embedding, positions and tied output layer, on the same batches, at two sizes:

* ``tiny``: ``TINY`` (d_model 64, 4 heads, 2 + 2 layers, d_ff 256, dropout 0.1),
  batches of 64 reversal sequences (at most 64 x 9 = 576 target tokens);
* ``large``: d_model 256, 4 heads, 3 + 3 layers, d_ff 1024, batches of 333
  sequences (at most 333 x 9 = 2,997 target tokens, the "3,000-token batches").

For each size it alternates the two models ``--repeats`` times and reports the
medians and their ratio (the machine is shared, so alternation spreads its noise
over both). A progress bar on stderr counts the repeats of each size.
With ``--full`` it also times the whole 3,000-step ``train`` of chapter 10.
With ``--variants`` it also times our model with candidate speed-ups patched in
(for the maintainers to weigh; nothing in ``utils`` is changed).
"""

from __future__ import annotations

import argparse
import math
import pathlib
import statistics
import sys
import time

import torch
from torch import nn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import utils.model.attention  # noqa: E402
import utils.model.layers  # noqa: E402
from utils import TINY, Transformer, padding_mask, positional_encoding, set_seed, shift_right, target_mask  # noqa: E402
from utils.tasks.reversal.task import reversal_batch, train
from utils.training.recipe import LabelSmoothingLoss, make_optimizer  # noqa: E402

#: name: (model configuration, sequences per batch, timed steps per repeat = --steps x factor)
SIZES = {
    "tiny": (TINY, 64, 1.0),
    "large": (dict(vocab_size=13, d_model=256, h=4, d_ff=1024, N=3, p_drop=0.1), 333, 0.1),
}


class TorchTransformer(nn.Module):
    """nn.Transformer inside the course's shared embedding, positions and tied output layer."""

    def __init__(self, vocab_size=13, d_model=64, h=4, d_ff=256, N=2, p_drop=0.1):
        """The arguments of the course's ``Transformer`` (``TINY`` by default)."""
        super().__init__()
        self.d_model = d_model
        self.embed = nn.Embedding(vocab_size, d_model)
        self.register_buffer("pe", positional_encoding(512, d_model), persistent=False)
        self.dropout = nn.Dropout(p_drop)
        self.transformer = nn.Transformer(d_model, h, N, N, d_ff, p_drop, batch_first=True)

    def forward(self, src, tgt):
        x = self.dropout(self.embed(src) * math.sqrt(self.d_model) + self.pe[: src.size(1)])
        y = self.dropout(self.embed(tgt) * math.sqrt(self.d_model) + self.pe[: tgt.size(1)])
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.size(1), dtype=torch.bool)
        out = self.transformer(x, y, tgt_mask=causal, src_key_padding_mask=src == 0,
                               tgt_key_padding_mask=tgt == 0, memory_key_padding_mask=src == 0,
                               tgt_is_causal=True)
        return out @ self.embed.weight.T


def _layer_norm_two_means(self, x):
    mean = x.mean(dim=-1, keepdim=True)
    centred = x - mean
    var = (centred * centred).mean(dim=-1, keepdim=True)
    return centred * torch.rsqrt(var + self.eps) * self.weight + self.bias


def _layer_norm_fused(self, x):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)


def _sdpa_fused(q, k, v, mask=None):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask), None


VARIANTS = {  # name: [(object, attribute, replacement)]
    "LayerNorm via mean of squares": [(utils.model.layers.LayerNorm, "forward", _layer_norm_two_means)],
    "LayerNorm via F.layer_norm": [(utils.model.layers.LayerNorm, "forward", _layer_norm_fused)],
    "attention via F.scaled_dot_product_attention": [(utils.model.attention, "scaled_dot_product_attention", _sdpa_fused)],
    "both fused": [(utils.model.layers.LayerNorm, "forward", _layer_norm_fused),
                   (utils.model.attention, "scaled_dot_product_attention", _sdpa_fused)],
}


def patched_step_time(patches, batches, steps):
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]
    try:
        for obj, name, new in patches:
            setattr(obj, name, new)
        set_seed(0)
        return step_times(Transformer(**TINY), True, batches, steps)  # variants: tiny size only
    finally:
        for obj, name, old in saved:
            setattr(obj, name, old)


def step_times(model, course, batches, repeat_steps):
    optimizer, scheduler = make_optimizer(model, 400) if course else (None, None)
    if not course:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9, fused=True)
    criterion = LabelSmoothingLoss(0.1)
    model.train()

    def one(src, tgt):
        tgt_in = shift_right(tgt)
        if course:
            logits = model(src, tgt_in, padding_mask(src), target_mask(tgt_in))
        else:
            logits = model(src, tgt_in)
        loss = criterion(logits, tgt)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()

    for src, tgt in batches[:10]:  # warm-up
        one(src, tgt)
    start = time.perf_counter()
    for i in range(repeat_steps):
        one(*batches[i % len(batches)])
    return (time.perf_counter() - start) / repeat_steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200, help="timed steps per repeat at the tiny size")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--sizes", default="tiny,large", help="comma-separated: " + ", ".join(SIZES))
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--variants", action="store_true")
    args = parser.parse_args()
    sizes = args.sizes.split(",")
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        parser.error(f"unknown sizes {unknown}; choose from {list(SIZES)}")
    from tqdm import tqdm

    ratios = {}
    for size in sizes:
        config, batch_size, factor = SIZES[size]
        steps = max(5, round(args.steps * factor))
        set_seed(0, threads=args.threads)
        generator = torch.Generator().manual_seed(0)
        batches = [reversal_batch(batch_size, generator) for _ in range(50)]
        ours, theirs = [], []
        for r in tqdm(range(args.repeats), desc=f"{size}: repeats", unit="repeat"):
            set_seed(r, threads=args.threads)
            ours.append(step_times(Transformer(**config), True, batches, steps))
            set_seed(r, threads=args.threads)
            theirs.append(step_times(TorchTransformer(**config), False, batches, steps))
            tqdm.write(f"{size} repeat {r}: course {ours[-1] * 1e3:.2f} ms/step, "
                       f"nn.Transformer {theirs[-1] * 1e3:.2f} ms/step")
        a, b = statistics.median(ours), statistics.median(theirs)
        ratios[size] = a / b
        print(f"{size}: median step time ({args.threads} thread(s), {steps} steps x {args.repeats} repeats, "
              f"{batch_size} sequences per batch): course {a * 1e3:.2f} ms, nn.Transformer {b * 1e3:.2f} ms, "
              f"ratio {a / b:.3f}", flush=True)
    print("ratio course / nn.Transformer: " + ", ".join(f"{k} {v:.3f}" for k, v in ratios.items()))
    if args.variants:
        config, batch_size, _ = SIZES["tiny"]
        generator = torch.Generator().manual_seed(0)
        batches = [reversal_batch(batch_size, generator) for _ in range(50)]
        set_seed(0, threads=args.threads)
        a = step_times(Transformer(**TINY), True, batches, args.steps)
        for name, patches in VARIANTS.items():
            times = [patched_step_time(patches, batches, args.steps) for _ in range(args.repeats)]
            t = statistics.median(times)
            print(f"variant {name}: {t * 1e3:.2f} ms/step ({t / a:.3f} x ours at the tiny size)")
    if args.full:
        set_seed(0, threads=args.threads)
        test = reversal_batch(500, torch.Generator().manual_seed(1))
        start = time.perf_counter()
        train(Transformer(**TINY), 3000, test=test)
        print(f"full 3,000-step training: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
