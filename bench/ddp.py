"""Benchmark (run on demand, not collected by pytest): a training step on 1 process against 2 (data-parallel).

    .venv/bin/python bench/ddp.py [--steps 30] [--repeats 2]

Chapter 16's translation model (``mt.new_model()``, the base size) trains ``--steps`` steps of the
paper's recipe on its own batches of about 3,000 tokens (``mt.training_data``), once on one process and
once on two gloo processes launched by ``torchrun --standalone --nproc_per_node=2`` (each process one
thread, its share of every batch), alternating, ``--repeats`` times each, in one run. A worker times
its steps after two warm-up steps; process 0 reports. It writes ``bench/ddp.json``: the machine, the
versions, the load before, the seconds per step of each repeat, the ratio of the median one-process
step to the median two-process step, and the bytes all-reduced per step (the float32 gradient of every
parameter, as ``DistributedDataParallel`` sums it, plus the token count and the loss that
``distributed.data_parallel_step`` sums). Chapter 10 reads the ratio and the bytes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from bench.chapter_times import machine  # noqa: E402

TABLE = ROOT / "bench" / "ddp.json"
WARMUP_STEPS = 2


def worker(steps: int, out: str) -> None:
    """Run inside each process: time ``steps`` steps after the warm-up; process 0 writes the JSON ``out``."""
    from utils.core.env import set_seed
    from utils.model.transformer import count_parameters
    from utils.tasks.translation import train as mt
    from utils.training import loop
    from utils.training.recipe import LabelSmoothingLoss

    set_seed(0)
    pairs, _, batches = mt.training_data(3000, False)
    model = mt.new_model()
    from utils.training.batching import collate
    source = loop.EpochBatches(batches, lambda indices: collate([pairs[i] for i in indices]), seed=0)
    run = loop.Run(model, source, d_model=model.embed.d_model, warmup=800, criterion=LabelSmoothingLoss(0.1),
                   progress=False)
    run.train(WARMUP_STEPS)
    start = time.perf_counter()
    run.train(WARMUP_STEPS + steps)
    seconds = (time.perf_counter() - start) / steps
    if run.main:
        params = count_parameters(model)
        pathlib.Path(out).write_text(json.dumps(dict(
            processes=run.world.size, seconds_per_step=seconds, parameters=params,
            allreduce_bytes=4 * params + 8 + 4 if run.world.size > 1 else 0)))  # + the int64 count, the float32 loss


def launch(nproc: int, steps: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "out.json"
        prefix = [sys.executable] if nproc == 1 else [
            sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"]
        env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
        subprocess.run([*prefix, __file__, "--worker", str(steps), str(out)], check=True, cwd=ROOT,
                       env=dict(env, OMP_NUM_THREADS="1"), capture_output=True)
        return json.loads(out.read_text())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30, help="timed steps per measurement (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=2, help="measurements of each (default: %(default)s)")
    parser.add_argument("--out", default=str(TABLE), help="the JSON written (default: %(default)s)")
    parser.add_argument("--worker", nargs=2, metavar=("STEPS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(int(args.worker[0]), args.worker[1])
    load = os.getloadavg()[0]
    seconds = {"1": [], "2": []}
    last = {}
    for r in range(args.repeats):
        for nproc in (1, 2):
            last[nproc] = launch(nproc, args.steps)
            seconds[str(nproc)].append(round(last[nproc]["seconds_per_step"], 4))
        print(f"repeat {r + 1}: {seconds['1'][-1]:.3f} s a step on 1 process, {seconds['2'][-1]:.3f} s on 2", flush=True)
    table = dict(machine=machine(), measured=datetime.date.today().isoformat(),
                 versions=dict(python=platform.python_version(), torch=torch.__version__), threads_per_process=1,
                 load_before=round(load, 2), steps=args.steps, repeats=args.repeats, seconds_per_step=seconds,
                 ratio=round(statistics.median(seconds["1"]) / statistics.median(seconds["2"]), 2),
                 parameters=last[2]["parameters"], allreduce_bytes=last[2]["allreduce_bytes"])
    pathlib.Path(args.out).write_text(json.dumps(table, indent=1) + "\n")
    print(json.dumps({k: table[k] for k in ("ratio", "parameters", "allreduce_bytes")}))


if __name__ == "__main__":
    main()
