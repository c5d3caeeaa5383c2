"""Benchmark (run on demand, not collected by pytest): decoding with a KV cache against without.

    .venv/bin/python bench/kv_cache.py [--repeats 3] [--items N]

On one thread, in one run, alternating uncached and cached repeats so that a change of the
machine's load falls on both alike, it times

* greedy and beam 4 (alpha 0.6) decoding of the whole test split of each task with its
  shipped averaged model (chapter 16's 1,293 German sources, chapter 15's 6,159 words), in the
  batches the tasks decode with (``utils.experiments.kv_cache.task_inputs``);
* a length sweep: chapter 10's tiny model (``load_checkpoint(3000)``) made to generate exactly
  16, 32, 64, 128 and 256 tokens for a batch of ``SWEEP_BATCH`` copies of one source (``<s>``
  then the argmax at every step, never stopping at ``</s>``), with ``model.decode`` on the whole
  prefix at each step or with ``KVCache.step``: the time per generated token (per step). With a
  single sentence the tiny model's fixed cost per step hides the growth up to about 128 tokens.

It writes ``bench/kv_cache.json`` (the machine, versions, the load average before, every
repeat's seconds, and the ratio of the median uncached to the median cached time). Chapter 11
reads the ratios, never the seconds, and draws the sweep. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import pathlib
import platform
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from bench.chapter_times import machine  # noqa: E402
from utils.core.masks import BOS_ID, target_mask  # noqa: E402
from utils.experiments.kv_cache import task_inputs  # noqa: E402
from utils.model.decoding import beam_search_batch, decode_by_length, greedy_decode  # noqa: E402
from utils.model.kv_cache import KVCache  # noqa: E402
from utils.tasks.reversal.task import load_checkpoint  # noqa: E402

TABLE = ROOT / "bench" / "kv_cache.json"
LENGTHS = (16, 32, 64, 128, 256)
#: The sweep's source: the running example's "c a b e d" (chapter 10), 7 ids with <s> and </s>.
SWEEP_SOURCE = [1, 5, 3, 4, 7, 6, 2]
#: Sentences decoded at once in the sweep.
SWEEP_BATCH = 8


@functools.cache
def _inputs(task, items):
    return task_inputs(task, items)


def time_task(task, decode, cache, items=None) -> float:
    """Seconds to decode ``task``'s test inputs (the first ``items``) with or without the cache."""
    model, vocab, inputs, greedy_batch, beam_batch, max_extra = _inputs(task, items)

    def batch(src):
        if decode == "greedy":
            return greedy_decode(model, src, max_len=src.size(1) + max_extra, cache=cache).tolist()
        return [hyps[0].tokens for hyps in beam_search_batch(model, src, 4, 0.6, max_extra, cache=cache)]
    start = time.perf_counter()
    decode_by_length(inputs, vocab, greedy_batch if decode == "greedy" else beam_batch, batch)
    return time.perf_counter() - start


def generate(model, length: int, cache: bool) -> float:
    """Seconds for the tiny model to generate exactly ``length`` tokens after ``<s>``, ``SWEEP_BATCH`` rows."""
    src = torch.tensor([SWEEP_SOURCE] * SWEEP_BATCH)
    start = time.perf_counter()
    with torch.no_grad():
        memory = model.encode(src)
        kv = KVCache(model, memory) if cache else None
        ys = torch.full((SWEEP_BATCH, 1), BOS_ID)
        for _ in range(length):
            y = kv.step(ys) if cache else model.decode(ys, memory, None, target_mask(ys, model.pad_id))[:, -1]
            ys = torch.cat([ys, model.generator(y).argmax(-1, keepdim=True)], dim=1)
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="repeats of each measurement (default: %(default)s)")
    parser.add_argument("--items", type=int, default=None, metavar="N", help="only the first N test items of each task")
    parser.add_argument("--out", default=str(TABLE), help="the JSON written (default: %(default)s)")
    parser.add_argument("--sweep-only", action="store_true", help="measure the length sweep again, keep the "
                        "tasks' times of --out")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    load = os.getloadavg()[0]
    seconds = {}
    kept = json.loads(pathlib.Path(args.out).read_text()) if args.sweep_only else None
    for task in () if kept else ("translation", "g2p"):
        for decode in ("greedy", "beam"):
            name, times = f"{task} {decode}", {"uncached": [], "cached": []}
            for r in range(args.repeats):
                for kind in ("uncached", "cached"):
                    times[kind].append(round(time_task(task, decode, kind == "cached", args.items), 3))
                print(f"{name} repeat {r + 1}: uncached {times['uncached'][-1]:.1f} s, cached {times['cached'][-1]:.1f} s",
                      flush=True)
            seconds[name] = times
    model = load_checkpoint(3000)
    generate(model, 16, True), generate(model, 16, False)  # warm up
    sweep = {"uncached": {}, "cached": {}}
    for _ in range(args.repeats):
        for length in LENGTHS:
            for kind in ("uncached", "cached"):
                sweep[kind].setdefault(str(length), []).append(round(generate(model, length, kind == "cached"), 5))
    ratio = lambda t: round(statistics.median(t["uncached"]) / statistics.median(t["cached"]), 2)
    table = dict(machine=machine(), measured=datetime.date.today().isoformat(),
                 versions=dict(python=platform.python_version(), torch=torch.__version__), threads=1,
                 load_before=round(load, 2), repeats=args.repeats, items=args.items,
                 seconds=seconds, ratio={name: ratio(t) for name, t in seconds.items()})
    if kept:
        table = {**kept, "sweep_measured": table["measured"], "sweep_load_before": table["load_before"],
                 "sweep_repeats": args.repeats}
    table.update(sweep=dict(lengths=list(LENGTHS), batch=SWEEP_BATCH, seconds=sweep,
                            ms_per_token={kind: [round(1000 * statistics.median(sweep[kind][str(n)]) / n, 4)
                                                 for n in LENGTHS] for kind in sweep}))
    pathlib.Path(args.out).write_text(json.dumps(table, indent=1) + "\n")
    print(json.dumps(dict(ratio=table["ratio"], ms_per_token=table["sweep"]["ms_per_token"]), indent=1))


if __name__ == "__main__":
    main()
