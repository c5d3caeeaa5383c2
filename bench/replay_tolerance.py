"""How far does a replay of each shipped training log drift on this machine's numeric path?

The tests and chapters 10, 12 and 15 rerun the first steps of runs whose losses are
shipped, and compare. A run made on another CPU (or another PyTorch kernel path)
rounds some sums differently, so the rerun's losses differ at the rounding level and
the gap grows a little with each step. This script measures that gap, the largest
|rerun - logged| over each prefix, for every replay the course makes. Run it on as
many numeric paths as you have; the tolerance in ``utils/core/numerics.py`` is the largest
gap measured, times a margin:

    PYTHONPATH=. .venv/bin/python bench/replay_tolerance.py
    ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE PYTHONPATH=. .venv/bin/python bench/replay_tolerance.py

With ``--live`` it measures instead chapter 10's live run (the reference run's first
``LIVE_STEPS`` steps): the largest gap, over the losses the chapter compares (the first
step, each 100-step mean of the training loss, the test loss every 100 steps), from
which the chapter's ``LIVE_BAND`` is set.
"""

import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from utils.core.env import set_seed  # noqa: E402
from utils.experiments import variations as V  # noqa: E402
from utils.model.transformer import TINY, Transformer  # noqa: E402
from utils.tasks import g2p  # noqa: E402  (utils pins the arithmetic first)
from utils.tasks.reversal import reference_run
from utils.tasks.reversal.task import train  # noqa: E402

VARIATION_REPLAYS = [("base", 0), ("base", 2), ("d_k=4", 1), ("positions=learned", 0),
                     ("norm=pre", 2), ("scale=False", 1), ("warmup=0", 0), ("N=1", 2)]


def gap(rerun, logged):
    return max(abs(float(a) - float(b)) for a, b in zip(rerun, logged, strict=True))


def main():
    print(f"path: ATEN_CPU_CAPABILITY={os.environ.get('ATEN_CPU_CAPABILITY')} MKL_CBWR={os.environ.get('MKL_CBWR')} "
          f"(PyTorch uses {torch.backends.cpu.get_cpu_capability()}); {reference_run.machine()['cpu']}")
    gaps = {}
    set_seed(0)
    model = Transformer(**TINY)
    losses = train(model, 20, progress=False)["train_loss"].tolist()
    gaps["tiny reference run, 20 steps"] = gap(losses, reference_run.load()["train_loss"][:20].tolist())
    records = {(r["row"], r["seed"]): r for r in V.read_results(V.RESULTS)[1]}
    torch.set_num_threads(1)
    for name, seed in VARIATION_REPLAYS + [("base", 0)]:
        steps = 20 if (name, seed) == ("base", 0) else 15
        rerun = V.run_row(name, seed, steps=steps)["losses"]
        gaps[f"variations {name} seed {seed}, {steps} steps"] = gap(rerun, records[(name, seed)]["losses"][:steps])
    header, log = g2p.read_log(g2p.SHIPPED / "log.jsonl")
    with tempfile.TemporaryDirectory() as folder:
        g2p.train_g2p(folder, steps=20, threads=header["versions"]["threads"], progress=False, dev_eval=False)
        _, mine = g2p.read_log(os.path.join(folder, "log.jsonl"))
    gaps["G2P, 20 steps"] = gap(mine[0]["losses"][:20], log[0]["losses"][:20])
    for what, value in gaps.items():
        print(f"{what:<48} max |rerun - logged| = {value:.2e}")
    print(f"largest: {max(gaps.values()):.2e}")


LIVE_STEPS = 200  # chapter 10's


def live():
    """Chapter 10's live run against the reference run, on this path: the largest gap."""
    from utils.tasks.reversal.task import TEST_SEED, reversal_batch

    print(f"path: ATEN_CPU_CAPABILITY={os.environ.get('ATEN_CPU_CAPABILITY')} MKL_CBWR={os.environ.get('MKL_CBWR')} "
          f"(PyTorch uses {torch.backends.cpu.get_cpu_capability()}); {reference_run.machine()['cpu']}")
    reference = reference_run.load()
    set_seed(0)
    test = reversal_batch(500, torch.Generator().manual_seed(TEST_SEED))
    history = train(Transformer(**TINY), LIVE_STEPS, test=test, progress=False, log_every=LIVE_STEPS)
    mine, ref = history["train_loss"], reference["train_loss"]
    gaps = {"train loss, step 1": abs(mine[0] - ref[0]).item()}
    for lo in range(0, LIVE_STEPS, 100):
        gaps[f"mean train loss, steps {lo + 1}-{lo + 100}"] = abs(mine[lo:lo + 100].mean() - ref[lo:lo + 100].mean()).item()
    reference_test = dict(zip(reference["test_step"], reference["test_loss"]))
    for step, loss in zip(history["test_step"], history["test_loss"]):
        gaps[f"test loss, step {step}"] = abs(loss - reference_test[step])
    for what, value in gaps.items():
        print(f"chapter 10 live run, {what:<32} |yours - reference| = {value:.4f}")
    print(f"largest: {max(gaps.values()):.4f}")


if __name__ == "__main__":
    live() if "--live" in sys.argv[1:] else main()
