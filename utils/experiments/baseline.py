"""Table 2 in miniature, on G2P: the Transformer against a recurrent encoder-decoder with
additive attention (``utils.model.recurrent``), three seeds each, at equal training FLOPs.

The runs are ``python -m utils.tasks.g2p train`` commands (resumable) with ``--arch`` and
``--seed``; each finished run is shipped (``python -m utils.tasks.g2p ship --workdir W --out
DIR``) into ``RUNS / "<arch>_seed<k>"``, except the Transformer of seed 0, which is the
model chapter 15 ships in ``utils/checkpoints/g2p``. This module measures them, once, into
files that chapter 17 reads::

    .venv/bin/python -m utils.experiments.baseline evaluate --arch recurrent --seed 1
    .venv/bin/python -m utils.experiments.baseline timing

``evaluate`` (``measure``) writes ``RUNS / "<arch>_seed<k>.json"``: the run's training FLOPs at each
logged step (its batch order replayed, each batch counted by ``utils.experiments.flops``' formulas)
and the test split decoded as chapter 15 decodes it (beam 4, alpha 0.6, on the average
of the last 5 checkpoints), with WER and PER. ``timing`` (``time_steps``) writes ``RUNS / "timing.json"``:
seconds per training step of each model on one thread, measured on the same batches.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import time

import torch

from ..core.checks import is_int
from ..core.env import CHECKPOINTS
from ..core.masks import PAD_ID
from ..model.recurrent import G2P_RECURRENT
from ..tasks import g2p
from ..training import loop
from .flops import recurrent_step_flops, transformer_step_flops

#: The folder of the comparison's runs and of their measurements.
RUNS = CHECKPOINTS / "g2p_baseline"
#: The seeds each model is trained with.
SEEDS = (0, 1, 2)
#: Training steps of each model: 18,000 for the Transformer (chapter 15's run); for the
#: recurrent model, the step at which its FLOPs reach the Transformer's 18,000 steps'
#: (``bench/g2p_equal_cost.py``: 0.990 of them at 19,000 steps with seed 0).
STEPS = {"transformer": 18_000, "recurrent": 19_000}
TIMING = RUNS / "timing.json"
RESULTS_KIND = "G2P baseline results"


def _check_run(arch, seed):
    if arch not in g2p.ARCHS:
        raise ValueError(f"arch must be one of {sorted(g2p.ARCHS)}, got {arch!r}")
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")


def run_directory(arch: str, seed: int) -> pathlib.Path:
    """The folder that holds a shipped run's weights and log: ``utils/checkpoints/g2p``
    for the Transformer of seed 0 (chapter 15's model), else ``RUNS / "<arch>_seed<k>"``.

    Raises:
        ValueError: ``arch`` is not in ``g2p.ARCHS`` or ``seed`` is not an int >= 0.
    """
    _check_run(arch, seed)
    return g2p.SHIPPED if (arch, seed) == ("transformer", 0) else RUNS / f"{arch}_seed{seed}"


def results_path(arch: str, seed: int) -> pathlib.Path:
    """``RUNS / "<arch>_seed<k>.json"``, where ``evaluate`` (``measure``) writes a run's measurements."""
    _check_run(arch, seed)
    return RUNS / f"{arch}_seed{seed}.json"


def batch_flops(arch: str) -> list[int]:
    """Training FLOPs of one step on each batch of ``batching.make_batches`` (in their order),
    by the formulas of ``utils.experiments.flops`` (equal to ``FlopCounterMode``'s count).

    Raises:
        ValueError: ``arch`` is not in ``g2p.ARCHS``.
    """
    _check_run(arch, 0)
    pairs, _, batches = g2p.training_data(g2p.G2P_TRAIN["max_tokens"])
    vocab = len(g2p.G2PVocab())
    out = []
    for batch in batches:
        src, tgt = g2p.collate([pairs[i] for i in batch])
        if arch == "transformer":
            out.append(transformer_step_flops(src.size(0), src.size(1), tgt.size(1), vocab, **g2p.G2P_MODEL))
        else:
            out.append(recurrent_step_flops((src != PAD_ID).sum(1).tolist(), tgt.size(1), vocab, **G2P_RECURRENT))
    return out


def batch_order(seed: int, steps: int) -> list[int]:
    """The index (into ``batching.make_batches``' list) of the batch of each of the first
    ``steps`` training steps of a run with ``seed``: ``loop.EpochBatches``' order, replayed
    without building a batch."""
    _check_run("transformer", seed)
    n = len(g2p.training_data(g2p.G2P_TRAIN["max_tokens"])[2])
    source = loop.EpochBatches(list(range(n)), lambda index: index, seed)
    return [next(source) for _ in range(steps)]


def logged_flops(arch: str, seed: int, records: list[dict]) -> list[int]:
    """Cumulative training FLOPs at each record of a run's log (its ``step`` field).

    The replayed batches are checked against the log: the non-pad source and target
    tokens of each stretch must equal the record's ``src_tokens`` and ``tgt_tokens``
    (chapter 15's Transformer, logged before these fields existed, has none to check).

    Raises:
        ValueError: the replay does not give the logged token counts (the log is not
            this arch and seed's run with the G2P recipe).
    """
    pairs, _, batches = g2p.training_data(g2p.G2P_TRAIN["max_tokens"])
    tokens = [(sum(len(pairs[i][0]) for i in b), sum(len(pairs[i][1]) for i in b)) for b in batches]
    flops = batch_flops(arch)
    order = batch_order(seed, records[-1]["step"])
    out, total, done = [], 0, 0
    for record in records:
        stretch = order[done:record["step"]]
        src_tokens, tgt_tokens = (sum(tokens[b][k] for b in stretch) for k in (0, 1))
        if "src_tokens" in record and (src_tokens, tgt_tokens) != (record["src_tokens"], record["tgt_tokens"]):
            raise ValueError(f"the batches replayed for {arch} seed {seed}, steps {done + 1}-{record['step']}, hold "
                             f"{src_tokens:,} source and {tgt_tokens:,} target tokens; the log says "
                             f"{record['src_tokens']:,} and {record['tgt_tokens']:,}")
        total += sum(flops[b] for b in stretch)
        out.append(total)
        done = record["step"]
    return out


def measure(arch: str, seed: int, progress: bool = True) -> pathlib.Path:
    """Measure a shipped run into ``results_path(arch, seed)``; return that path.

    The file (JSON) holds the run's arch, seed, parameters, the steps its averaged
    weights come from, ``steps`` and ``flops`` (each log record's step and the training
    FLOPs up to it), and the test split (``words``) decoded with beam 4 and alpha 0.6 by
    the averaged weights (``outputs``, phones joined by spaces) with its WER and PER.

    Raises:
        FileNotFoundError: the run is not shipped (the message gives the commands).
        ValueError: as ``logged_flops``.
    """
    directory = run_directory(arch, seed)
    if not (directory / "log.jsonl").is_file():
        raise FileNotFoundError(
            f"{directory} holds no shipped run: train it with `python -m utils.tasks.g2p train --arch {arch} --seed {seed} "
            f"--steps {STEPS[arch]} --threads 1 --workdir W`, then `python -m utils.tasks.g2p ship --workdir W --out {directory}`")
    header, records = g2p.read_log(directory / "log.jsonl")
    if g2p.shipped_arch(directory) != arch or header["start"]["recipe"]["seed"] != seed:
        raise ValueError(f"{directory}/log.jsonl is not the log of {arch} seed {seed}")
    model, averaged = g2p.load_shipped("avg", directory)
    lexicon = g2p.load_lexicon()["test"]
    words = list(lexicon)
    start = time.perf_counter()
    hyps = g2p.beam_phones(model, words, g2p.G2PVocab())
    refs = [lexicon[w] for w in words]
    record = dict(kind=RESULTS_KIND, arch=arch, seed=seed, params=header["params"], averaged=averaged,
                  steps=[r["step"] for r in records], flops=logged_flops(arch, seed, records),
                  test_wer=g2p.wer(hyps, refs), test_per=g2p.per(hyps, refs), words=words,
                  outputs=[" ".join(h) for h in hyps], machine=g2p.versions())
    if progress:
        print(f"{arch} seed {seed}: test WER {record['test_wer']:.2%}, PER {record['test_per']:.2%} "
              f"(beam 4, {time.perf_counter() - start:.0f} s); {record['flops'][-1]:.4e} training FLOPs")
    path = results_path(arch, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    return path


def load_results(arch: str, seed: int) -> dict:
    """A run's measurements as ``evaluate`` wrote them, with ``outputs`` split into phones.

    Raises:
        FileNotFoundError: the file is missing (the message gives the command).
        ValueError: the file is not readable JSON or not these results, or its words are
            not the test split's (the message names the file).
    """
    path = results_path(arch, seed)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `python -m utils.experiments.baseline evaluate --arch {arch} --seed {seed}`")
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not readable JSON ({error}); rerun `python -m utils.experiments.baseline evaluate`") from None
    if not isinstance(record, dict) or record.get("kind") != RESULTS_KIND or (record.get("arch"), record.get("seed")) != (arch, seed):
        raise ValueError(f"{path} is not the {RESULTS_KIND} of {arch} seed {seed}")
    if record["words"] != list(g2p.cached_lexicon()["test"]) or len(record["outputs"]) != len(record["words"]):
        raise ValueError(f"{path}: its words or outputs are not one per word of this cmudict's test split; "
                         "rerun `python -m utils.experiments.baseline evaluate`")
    if len(record["steps"]) != len(record["flops"]):
        raise ValueError(f"{path}: 'steps' and 'flops' differ in length")
    return {**record, "outputs": [h.split() for h in record["outputs"]]}


def finished_runs() -> list[tuple[str, int]]:
    """The (arch, seed) pairs, of ``g2p.ARCHS`` x ``SEEDS``, whose measurements are committed."""
    return [(arch, seed) for arch in g2p.ARCHS for seed in SEEDS if results_path(arch, seed).is_file()]


def time_steps(steps: int = 80, progress: bool = True) -> pathlib.Path:
    """Seconds per training step (forward, loss, backward, Adam) of each model, on one thread,
    into ``TIMING``; return its path.

    ``steps`` batches are drawn at random (seed 0) from ``make_batches``; on each, one
    step of the Transformer and one of the recurrent model alternate (a shared machine's
    noise falls on both). The file holds every measured time, the mean and median of
    each model, and the machine (``g2p.versions()``, with the CPU's name when Linux gives it).

    Raises:
        ValueError: ``steps`` is not an int >= 3.
    """
    from ..core.env import set_seed
    from ..model.recurrent import new_recurrent_model
    from ..training.recipe import LabelSmoothingLoss, make_optimizer, train_step

    if not is_int(steps) or steps < 3:
        raise ValueError(f"steps must be an int >= 3, got {steps!r}")
    set_seed(0, threads=1)
    pairs, _, batches = g2p.training_data(g2p.G2P_TRAIN["max_tokens"])
    vocab = len(g2p.G2PVocab())
    models = {"transformer": g2p.new_model(vocab), "recurrent": new_recurrent_model(vocab)}
    criterion = LabelSmoothingLoss(g2p.G2P_TRAIN["eps_ls"])
    optimizers = {name: make_optimizer(m, g2p.G2P_TRAIN["warmup"]) for name, m in models.items()}
    chosen = torch.randperm(len(batches), generator=torch.Generator().manual_seed(0))[: steps + 1].tolist()
    seconds = {name: [] for name in models}
    for k, b in enumerate(chosen):
        src, tgt = g2p.collate([pairs[i] for i in batches[b]])
        for name, model in models.items():
            model.train()
            t0 = time.perf_counter()
            train_step(model, src, tgt, criterion, *optimizers[name])  # chapter 10's step, as the runs take it
            if k:  # the first step warms up
                seconds[name].append(time.perf_counter() - t0)
        if progress and k % 10 == 0:
            print(f"{k}/{steps} batches", flush=True)
    machine = g2p.versions()
    cpuinfo = pathlib.Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if line.startswith("model name")]
        machine["cpu"] = names[0] if names else None
    record = dict(kind="G2P step times", batches=chosen[1:], seconds=seconds, machine=machine,
                  mean={n: statistics.fmean(s) for n, s in seconds.items()},
                  median={n: statistics.median(s) for n, s in seconds.items()})
    TIMING.parent.mkdir(parents=True, exist_ok=True)
    TIMING.write_text(json.dumps(record, indent=1) + "\n")
    if progress:
        print("seconds per step, one thread: " + ", ".join(f"{n} mean {record['mean'][n]:.3f} median "
                                                             f"{record['median'][n]:.3f}" for n in models))
    return TIMING


def _main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m utils.experiments.baseline", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("evaluate", help="training FLOPs and test WER/PER (beam 4, averaged weights) of a shipped run")
    e.add_argument("--arch", choices=g2p.ARCHS, required=True)
    e.add_argument("--seed", type=g2p.seed_arg, required=True)
    t = sub.add_parser("timing", help="seconds per training step of each model on one thread")
    t.add_argument("--steps", type=int, default=80, help="batches to time (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.cmd == "evaluate":
        print("wrote", measure(args.arch, args.seed))
    else:
        print("wrote", time_steps(args.steps))


if __name__ == "__main__":
    _main()
