"""Model variations (paper section 6.2, Table 3), measured on the course's own model.

Every row of the sweep changes one field of the base configuration (the tiny
model of the course with chapter 10's recipe) and trains it on the reversal task
for a fixed budget, with several seeds. The rows follow Table 3's groups (A)-(E)
and add four claims the paper argues without a row: no positional encoding, no
1/sqrt(d_k) scaling, and post-norm against pre-norm with and without warmup
(Xiong et al. 2020).

Run the whole sweep (two worker processes of one thread each; resumable: finished
runs are kept in the results file and skipped when the command is run again)::

    .venv/bin/python -m utils.experiments.variations run --workers 2

The results are one JSON Lines file, ``utils/checkpoints/variations/results.jsonl``:
a header line (the task, the base configuration, the versions), then one line per
(row, seed) with the row's full configuration, the loss of every training step,
the final metrics and the seconds the run took. ``python -m utils.experiments.variations
status`` says which runs are done.

The model pieces here reuse the course's modules and change one thing each:
``VariantAttention`` (a d_k other than d_model / h, or no scaling),
``PreLNEncoderLayer`` and ``PreLNDecoderLayer`` (pre-norm), and
``VariantTransformer`` (learned positions or none, and the pre-norm stacks with
their final LayerNorm). With the base configuration ``VariantTransformer`` is the
course's ``Transformer``, parameter for parameter and draw for draw.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import platform
import time

import torch
import torch.nn.functional as F
from torch import nn

from ..core.checks import check_positive_int, check_tensor, is_int
from ..core.env import CHECKPOINTS, add_device_option, resolve_device
from ..core.masks import PAD_ID, causal_mask, shift_right
from ..model.attention import MultiHeadAttention, scaled_dot_product_attention
from ..model.layers import DecoderLayer, EncoderLayer, LayerNorm
from ..model.transformer import Transformer, count_parameters
from ..tasks.reversal.task import greedy_ids, reversal_batch
from ..training.loop import GeneratorBatches, Run
from ..training.recipe import LabelSmoothingLoss, rate

#: The base row: the course's tiny model (utils.TINY) and chapter 10's recipe.
BASE_CONFIG = dict(d_model=64, h=4, d_k=None, d_ff=256, N=2, p_drop=0.1, eps_ls=0.1,
                   positions="sinusoid", scale=True, norm="post", warmup=400)

#: The task and the budget every row gets. Training draws fresh batches of the
#: reversal task with lengths TRAIN_LENGTHS; "test" is 500 held-out sequences of
#: the same lengths, "long" 500 sequences longer than any seen in training.
TASK = dict(vocab_size=13, steps=1000, batch_size=64, train_lengths=(3, 12),
            test_lengths=(3, 12), long_lengths=(13, 16), n_test=500,
            test_seed=1, long_seed=2, max_len=32)

#: Seeds run for every row.
SEEDS = (0, 1, 2)

#: The rows: (name, group, reference row, changes to the reference's config).
#: A name "field=value" changes exactly that field of its reference row.
ROWS = [
    ("base", "base", None, {}),
    *[(f"h={h}", "A", "base", dict(h=h)) for h in (1, 2, 8, 16)],
    *[(f"d_k={d}", "B", "base", dict(d_k=d)) for d in (4, 8)],
    *[(f"N={n}", "C", "base", dict(N=n)) for n in (1, 3, 4)],
    *[(f"d_model={d}", "C", "base", dict(d_model=d)) for d in (32, 128)],
    *[(f"d_ff={d}", "C", "base", dict(d_ff=d)) for d in (64, 128, 512)],
    *[(f"p_drop={p}", "D", "base", dict(p_drop=p)) for p in (0.0, 0.2, 0.3)],
    *[(f"eps_ls={e}", "D", "base", dict(eps_ls=e)) for e in (0.0, 0.2)],
    ("positions=learned", "E", "base", dict(positions="learned")),
    ("positions=none", "no positions", "base", dict(positions="none")),
    ("scale=False", "no scaling", "base", dict(scale=False)),
    ("h=1, scale=False", "no scaling", "h=1", dict(scale=False)),
    ("warmup=0", "norm and warmup", "base", dict(warmup=0)),
    ("norm=pre", "norm and warmup", "base", dict(norm="pre")),
    ("warmup=0, norm=pre", "norm and warmup", "warmup=0", dict(norm="pre")),
]

RESULTS = CHECKPOINTS / "variations" / "results.jsonl"


def row_config(name: str) -> dict:
    """The full configuration of the row called ``name`` (its reference's, plus its change).

    Raises:
        KeyError: no row has that name (the message lists the names).
    """
    rows = {r[0]: r for r in ROWS}
    if name not in rows:
        raise KeyError(f"no row named {name!r}; the rows are {list(rows)}")
    _, _, reference, changes = rows[name]
    config = dict(BASE_CONFIG) if reference is None else row_config(reference)
    config.update(changes)
    return config


def check_config(config: dict) -> None:
    """Reject a configuration the sweep cannot build, naming the field and the value.

    Raises:
        KeyError: a field is missing or unknown.
        TypeError: a size is not an int.
        ValueError: a value is out of range (h must divide d_model, d_model must be
            even, positions one of sinusoid / learned / none, norm post or pre).
    """
    missing, unknown = set(BASE_CONFIG) - set(config), set(config) - set(BASE_CONFIG)
    if missing or unknown:
        raise KeyError(f"a configuration needs exactly the fields {sorted(BASE_CONFIG)}; "
                       f"missing {sorted(missing)}, unknown {sorted(unknown)}")
    check_positive_int(**{name: config[name] for name in ("d_model", "h", "d_ff", "N")})
    if config["d_model"] % 2 or config["d_model"] % config["h"]:
        raise ValueError(f"d_model must be even and divisible by h, got d_model={config['d_model']}, h={config['h']}")
    if config["d_k"] is not None and (not is_int(config["d_k"]) or config["d_k"] < 1):
        raise ValueError(f"d_k must be None (d_model / h) or a positive int, got {config['d_k']!r}")
    if not 0.0 <= config["p_drop"] < 1.0 or not 0.0 <= config["eps_ls"] < 1.0:
        raise ValueError(f"p_drop and eps_ls must lie in [0, 1), got {config['p_drop']} and {config['eps_ls']}")
    if config["positions"] not in ("sinusoid", "learned", "none"):
        raise ValueError(f"positions must be 'sinusoid', 'learned' or 'none', got {config['positions']!r}")
    if config["norm"] not in ("post", "pre"):
        raise ValueError(f"norm must be 'post' or 'pre', got {config['norm']!r}")
    if not isinstance(config["scale"], bool):
        raise ValueError(f"scale must be True or False, got {config['scale']!r}")
    if not is_int(config["warmup"]) or config["warmup"] < 0:
        raise ValueError(f"warmup must be an int >= 0 (0 = no warmup), got {config['warmup']!r}")


class VariantAttention(MultiHeadAttention):
    """Multi-head attention with its own d_k (Table 3 row B) and optional scaling.

    Queries and keys are projected to h heads of ``d_k`` each; values keep
    d_v = d_model / h, so the output projection is unchanged (as in row B, which
    changes d_k only). With ``scale=False`` the scores are Q K^T without the
    division by sqrt(d_k): the queries are multiplied by sqrt(d_k) before the
    course's ``scaled_dot_product_attention``, whose division then cancels.

    Shapes as ``MultiHeadAttention``: query (batch, q_len, d_model), key and
    value (batch, k_len, d_model) -> (batch, q_len, d_model).

    Raises:
        ValueError: h does not divide d_model; d_k is not positive; inputs of the
            wrong shape.
    """

    def __init__(self, d_model: int, h: int, d_k: int | None = None, scale: bool = True):
        super().__init__(d_model, h)
        d_k = d_model // h if d_k is None else d_k
        if not is_int(d_k) or d_k < 1:
            raise ValueError(f"d_k must be a positive int, got {d_k!r}")
        self.d_k, self.d_v, self.scale = d_k, d_model // h, scale
        self.w_q = nn.Linear(d_model, h * d_k)
        self.w_k = nn.Linear(d_model, h * d_k)

    def forward(self, query, key, value, mask=None):
        for name, x in (("query", query), ("key", key), ("value", value)):
            check_tensor(x, name, ndim_min=3)
            if x.dim() != 3 or x.size(-1) != self.d_model:
                raise ValueError(f"{name} must have shape (batch, len, d_model={self.d_model}), got {tuple(x.shape)}")

        def heads(x, size):  # (batch, len, h * size) -> (batch, h, len, size)
            return x.view(x.size(0), x.size(1), self.h, size).transpose(1, 2)

        q = heads(self.w_q(query), self.d_k)
        if not self.scale:
            q = q * math.sqrt(self.d_k)  # cancels the division inside equation 1
        out, weights = scaled_dot_product_attention(q, heads(self.w_k(key), self.d_k), heads(self.w_v(value), self.d_v), mask)
        self.weights = weights.detach() if self.keep_weights else None
        return self.w_o(out.transpose(1, 2).reshape(out.size(0), out.size(2), self.d_model))


class PreLNEncoderLayer(EncoderLayer):
    """Encoder layer with pre-norm sublayers: x = x + Dropout(Sublayer(LayerNorm(x))).

    The parameters are those of ``EncoderLayer``; only their order of use
    differs (Xiong et al. 2020). Shapes as ``EncoderLayer``.
    """

    def forward(self, x, src_mask=None):
        y = self.norm1(x)
        x = x + self.dropout(self.self_attn(y, y, y, src_mask))
        return x + self.dropout(self.ffn(self.norm2(x)))


class PreLNDecoderLayer(DecoderLayer):
    """Decoder layer with pre-norm sublayers; parameters and shapes as ``DecoderLayer``."""

    def forward(self, x, memory, src_mask=None, tgt_mask=None):
        if tgt_mask is None:  # masked self-attention: causal unless told otherwise, as DecoderLayer
            tgt_mask = causal_mask(x.size(1))[None, None]
        y = self.norm1(x)
        x = x + self.dropout(self.self_attn(y, y, y, tgt_mask))
        y = self.norm2(x)
        x = x + self.dropout(self.cross_attn(y, memory, memory, src_mask))
        return x + self.dropout(self.ffn(self.norm3(x)))


class VariantTransformer(Transformer):
    """The course's ``Transformer`` with one of Table 3's changes.

    Args:
        vocab_size, d_model, h, d_ff, N, p_drop, max_len: as ``Transformer``.
        d_k: query/key size per head (None: d_model / h).
        scale: divide the scores by sqrt(d_k) (equation 1) or not.
        positions: "sinusoid" (section 3.5), "learned" (a trained (max_len,
            d_model) table, Table 3 row E, started with the sinusoid's root mean
            square 1/sqrt(2)), or "none" (no positional information at all).
        norm: "post" (the paper) or "pre" (Xiong et al. 2020: pre-norm layers and
            one final LayerNorm after each stack).

    Shapes and masks as ``Transformer``. With every argument at its default this
    is ``Transformer``: the same parameters, drawn in the same order.

    Raises:
        ValueError: an argument outside the values above.
    """

    def __init__(self, vocab_size, d_model=64, h=4, d_ff=256, N=2, p_drop=0.1, max_len=512,
                 d_k=None, scale=True, positions="sinusoid", norm="post"):
        check_config(dict(BASE_CONFIG, d_model=d_model, h=h, d_ff=d_ff, N=N, p_drop=p_drop,
                          d_k=d_k, scale=scale, positions=positions, norm=norm))
        super().__init__(vocab_size, d_model, h, d_ff, N, p_drop, max_len)
        self.positions, self.norm = positions, norm
        if norm == "pre":
            self.encoder_layers = nn.ModuleList(PreLNEncoderLayer(d_model, h, d_ff, p_drop) for _ in range(N))
            self.decoder_layers = nn.ModuleList(PreLNDecoderLayer(d_model, h, d_ff, p_drop) for _ in range(N))
            self.encoder_norm, self.decoder_norm = LayerNorm(d_model), LayerNorm(d_model)
        if d_k is not None or not scale:
            for layer in (*self.encoder_layers, *self.decoder_layers):
                for name in ("self_attn", "cross_attn"):
                    if hasattr(layer, name):
                        setattr(layer, name, VariantAttention(d_model, h, d_k, scale))
        if norm == "pre" or d_k is not None or not scale:
            for name, p in self.named_parameters():
                if p.dim() > 1 and not name.startswith("embed."):
                    nn.init.xavier_uniform_(p)
        if positions == "learned":
            del self.pe
            self.pe = nn.Parameter(torch.randn(max_len, d_model) / math.sqrt(2))
        elif positions == "none":
            self.pe.zero_()

    def encode(self, src, src_mask=None):
        x = super().encode(src, src_mask)
        return self.encoder_norm(x) if self.norm == "pre" else x

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None):
        y = super().decode(tgt, memory, src_mask, tgt_mask)
        return self.decoder_norm(y) if self.norm == "pre" else y


def build_model(config: dict, seed: int, task: dict | None = None) -> VariantTransformer:
    """The row's model, its weights drawn after ``torch.manual_seed(seed)``.

    ``task`` (default ``TASK``) gives the vocabulary size and the longest sequence.

    Raises:
        KeyError, ValueError: as ``check_config``.
    """
    check_config(config)
    task = TASK if task is None else task
    torch.manual_seed(seed)
    arch = {k: config[k] for k in ("d_model", "h", "d_ff", "N", "p_drop", "d_k", "scale", "positions", "norm")}
    return VariantTransformer(task["vocab_size"], max_len=task["max_len"], **arch)


def schedule(step: int, d_model: int, warmup: int) -> float:
    """The learning rate of a row at ``step``: ``rate`` (section 5.3, eq. 3), or with warmup=0
    the same curve without its ramp: the base's peak rate from step 1, then the same
    1/sqrt(step) decay (d_model^-0.5 * max(step, 400)^-0.5)."""
    if warmup == 0:
        base = BASE_CONFIG["warmup"]
        return rate(max(step, base), d_model, base)
    return rate(step, d_model, warmup)


def held_out(which: str, task: dict | None = None):
    """(src, tgt) of the held-out set ``which``: "test" (training lengths) or "long".

    Raises:
        ValueError: ``which`` is neither "test" nor "long".
    """
    if which not in ("test", "long"):
        raise ValueError(f"which must be 'test' or 'long', got {which!r}")
    task = TASK if task is None else task
    lo, hi = task[f"{which}_lengths"]
    generator = torch.Generator().manual_seed(task[f"{which}_seed"])
    return reversal_batch(task["n_test"], generator, min_len=lo, max_len=hi)


def metrics_on(model, src, tgt) -> dict:
    """Exact match (greedy decoding), per-token perplexity and token accuracy on one held-out set.

    Perplexity is exp(mean negative log-likelihood of each target token, ``</s>``
    included, padding excluded), with the decoder reading the true previous tokens
    and no label smoothing: the paper's PPL, per token instead of per word piece.
    Token accuracy is the share of target tokens that are the most probable
    token, on the same teacher-forced pass.

    Shapes: src (batch, S), tgt (batch, S + 1) as from ``reversal_batch``; they go to the model's device.
    Returns {"exact": float in [0, 1], "ppl": float >= 1, "token_acc": float in [0, 1],
    "exact_by_length": {source length: exact match of the rows of that length}}.
    """
    device = next(model.parameters()).device
    src, tgt = src.to(device), tgt.to(device)
    model.eval()
    with torch.no_grad():
        logits = model(src, shift_right(tgt))
        nll = F.cross_entropy(logits.transpose(1, 2), tgt, ignore_index=PAD_ID)
        out = greedy_ids(model, src)
    real = tgt != PAD_ID
    right = (out[:, : tgt.size(1)] == tgt) | ~real
    token = (logits.argmax(-1) == tgt)[real].float().mean()
    exact = right.all(dim=1).float()
    lengths = real.sum(dim=1) - 1  # source lengths (the target adds </s>)
    by_length = {int(n): exact[lengths == n].mean().item() for n in lengths.unique()}
    return dict(exact=exact.mean().item(), ppl=math.exp(nll.item()), token_acc=token.item(),
                exact_by_length=by_length)


def run_row(name: str, seed: int, steps: int | None = None, task: dict | None = None, device="cpu") -> dict:
    """Train row ``name`` with ``seed`` on the task's budget; return its record.

    The record holds the row's name, group, reference and configuration, the seed,
    the parameter count, the loss of every step (``losses``), the metrics on both
    held-out sets and the seconds it took. With ``steps`` only that prefix is run
    and no metrics are computed (the tests use it). ``task`` replaces ``TASK``
    (a smaller budget, for the tests). Call with one PyTorch thread for the
    shipped numbers. The loop is chapter 10's, ``utils.training.loop.Run``, in memory:
    each step is ``recipe.train_step`` on a fresh batch of the reversal task. ``device``
    ("cpu", the shipped runs', or "cuda") is where the model and its batches go; it is not
    in the record (the numbers of a GPU are not the CPU's to the bit).

    Raises:
        KeyError: no such row.
        ValueError: ``steps`` is not a positive int, or ``seed`` not an int >= 0; ``device``
            is not "cpu" or "cuda".
        RuntimeError: ``device`` is "cuda" and PyTorch sees no GPU.
    """
    if steps is not None and (not is_int(steps) or steps < 1):
        raise ValueError(f"steps must be None (the whole budget) or a positive int, got {steps!r}")
    seed = _check_seed(seed)
    device = resolve_device(device)
    task = TASK if task is None else task
    config = row_config(name)
    _, group, reference, _ = {r[0]: r for r in ROWS}[name]
    start = time.perf_counter()
    model = build_model(config, seed, task).to(device)
    lo, hi = task["train_lengths"]
    batches = GeneratorBatches(lambda g: reversal_batch(task["batch_size"], g, min_len=lo, max_len=hi), seed)
    run = Run(model, batches, schedule=lambda step: schedule(step, config["d_model"], config["warmup"]),
              criterion=LabelSmoothingLoss(config["eps_ls"]), progress=False)
    losses = run.train(task["steps"] if steps is None else steps).losses.tolist()
    record = dict(row=name, group=group, reference=reference, config=config, seed=seed,
                  params=count_parameters(model), steps=len(losses), losses=losses)
    if steps is None:
        record["metrics"] = {which: metrics_on(model, *held_out(which, task)) for which in ("test", "long")}
    record["seconds"] = round(time.perf_counter() - start, 1)
    return record


# ---------------------------------------------------------------- the sweep command


def versions() -> dict:
    """Python, PyTorch and machine, for the results file's header."""
    return dict(python=platform.python_version(), torch=torch.__version__, machine=platform.machine(),
                processor=platform.processor() or platform.machine())


def header(task: dict | None = None, seeds=SEEDS) -> dict:
    """The results file's first line: what every run of the sweep shares."""
    return dict(task=TASK if task is None else task, base=BASE_CONFIG, seeds=list(seeds), threads_per_worker=1,
                rows=[dict(row=n, group=g, reference=r, changes=c) for n, g, r, c in ROWS])


def read_results(path=RESULTS) -> tuple[dict, list[dict]]:
    """(header, run records) of a results file; invocation lines are skipped.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file is not text, a line is not a JSON object, or the file does
            not start with a header line (the message names the file).
    """
    path = pathlib.Path(path)
    what = "a results file of utils.experiments.variations (JSON lines: a header, then one run per line)"
    if not path.is_file():
        raise FileNotFoundError(f"no results file at {path}; expected {what}, made by `python -m utils.experiments.variations run`")
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not text; expected {what}") from None
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: line {number} is not JSON ({err.msg}); expected {what}") from None
        if not isinstance(lines[-1], dict):
            raise ValueError(f"{path}: line {number} is not a JSON object ({{...}}); expected {what}")
    if not lines or not isinstance(lines[0].get("header"), dict):
        raise ValueError(f"{path} does not start with a header line; is it a results file of utils.experiments.variations?")
    records = [line for line in lines[1:] if "row" in line]
    bad = next((r for r in records if not isinstance(r.get("seed"), int) or not isinstance(r.get("losses"), list)), None)
    if bad is not None:
        raise ValueError(f"{path}: the run of row {bad['row']!r} lacks its 'seed' or 'losses'; expected {what}")
    return lines[0]["header"], records


def _check_seed(seed) -> int:
    """``seed`` as a Python int; raise unless it is an int >= 0 (Python's or NumPy's)."""
    if not is_int(seed) or seed < 0:
        raise ValueError(f"a seed must be an int >= 0, got {seed!r}")
    return int(seed)


def _order(record) -> tuple[int, int]:
    names = [r[0] for r in ROWS]
    return names.index(record["row"]), record["seed"]


def _worker_init():
    torch.set_num_threads(1)


def _work(job):
    name, seed, task, device = job
    return run_row(name, seed, task=task, device=device)


def sweep(path=RESULTS, workers: int = 2, rows=None, seeds=SEEDS, progress: bool = True,
          task: dict | None = None, device="cpu") -> list[dict]:
    """Run every (row, seed) not yet in the results file at ``path``; return all records.

    Each finished run is appended to the file at once, so an interrupted sweep
    loses only the runs in progress; run it again to continue. When every run is
    done, the file is rewritten in row and seed order. ``workers`` processes run
    one run each, with one PyTorch thread. ``rows`` (names) and ``seeds`` select
    a part of the sweep; ``task`` replaces ``TASK`` (the tests use a tiny budget).
    ``device`` ("cpu" or "cuda") is where every run trains; the file does not record it,
    so a sweep may go on on another device (its numbers are not the CPU's to the bit).

    Raises:
        ValueError: the file at ``path`` was written for another task, base or set
            of rows (delete it, or pass another path), or cannot be read; ``workers``
            is not a positive int, or a seed not an int >= 0; ``device`` is not "cpu" or "cuda".
        RuntimeError: ``device`` is "cuda" and PyTorch sees no GPU.
    """
    device = str(resolve_device(device))  # checked here, sent to the workers by name
    if not is_int(workers) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    workers = int(workers)
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
        raise TypeError(f"seeds must be a list of ints >= 0 such as (0, 1, 2), got {type(seeds).__name__} {seeds!r}")
    seeds = tuple(_check_seed(s) for s in seeds)  # NumPy integers become ints: the file is JSON
    path = pathlib.Path(path)
    rows = [r[0] for r in ROWS] if rows is None else list(rows)
    for name in rows:
        row_config(name)  # KeyError for an unknown row
    want = header(task, seeds)
    if path.is_file():
        have, records = read_results(path)
        if json.loads(json.dumps(want)) != have:
            changed = sorted(k for k in want if json.loads(json.dumps(want[k])) != have.get(k))
            raise ValueError(f"{path} was written by a different sweep (differs in {changed}); "
                             "delete it or pass another path")
        lines = path.read_text().splitlines()
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        records, lines = [], [json.dumps(dict(header=want, versions=versions()))]
        path.write_text(lines[0] + "\n")
    done = {(r["row"], r["seed"]) for r in records}
    todo = [(name, seed, task, device) for name in rows for seed in seeds if (name, seed) not in done]
    # Longest runs first, so the two workers finish together.
    todo.sort(key=lambda t: -_cost(row_config(t[0])))
    start = time.perf_counter()
    if todo:
        import multiprocessing

        from tqdm.auto import tqdm

        if progress and done:
            print(f"{len(done)} runs already in {path}: skipped; {len(todo)} to run")
        finished = 0
        bar = tqdm(total=len(todo), desc="Table 3 sweep", unit="run", disable=not progress, dynamic_ncols=True)
        try:
            with multiprocessing.get_context("spawn").Pool(workers, initializer=_worker_init) as pool, \
                    path.open("a") as f:
                for record in pool.imap_unordered(_work, todo):
                    f.write(json.dumps(record) + "\n")
                    f.flush()
                    records.append(record)
                    finished += 1
                    bar.write(f"{record['row']}, seed {record['seed']}: exact match "
                              f"{record['metrics']['test']['exact']:.1%} ({record['seconds']:.0f} s)")
                    bar.update(1)
        except KeyboardInterrupt:
            bar.close()
            print(f"interrupted: {finished} new runs saved in {path}; run the same command again to continue")
            raise
        finally:
            bar.close()
            with path.open("a") as f:  # the wall clock of this invocation, finished or not
                f.write(json.dumps(dict(invocation=dict(runs=finished, workers=workers,
                                                        wall_seconds=round(time.perf_counter() - start, 1)))) + "\n")
    all_done = {(r["row"], r["seed"]) for r in records} >= {(n, s) for n in rows for s in seeds}
    if all_done:
        lines = path.read_text().splitlines()
        invocations = [line for line in lines[1:] if line.strip() and "invocation" in json.loads(line)]
        records.sort(key=_order)
        path.write_text("\n".join([lines[0], *(json.dumps(r) for r in records), *invocations]) + "\n")
    return sorted(records, key=_order)


def _cost(config) -> float:
    """A rough cost of a run, to schedule the long ones first."""
    d, n = config["d_model"], config["N"]
    return n * (d * d * 4 * (1 + config["h"] / 8) + d * config["d_ff"] * 2) + 1


def _main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m utils.experiments.variations", description=__doc__.split("\n\n")[0],
        epilog="Row names hold '=' and some a comma and a space: quote them, e.g. --rows base 'h=1, scale=False'. "
               "To try the command without touching the shipped file: run --results /tmp/try.jsonl --rows base")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run every (row, seed) not yet in the results file")
    run.add_argument("--workers", type=int, default=2, help="worker processes, one thread each (default 2)")
    run.add_argument("--results", type=pathlib.Path, default=RESULTS,
                     help=f"the results file to fill or continue (default {RESULTS.relative_to(RESULTS.parents[3])})")
    run.add_argument("--rows", nargs="*", help="only these rows (default: all); quote names with spaces")
    add_device_option(run)
    status = sub.add_parser("status", help="say which runs are done")
    status.add_argument("--results", type=pathlib.Path, default=RESULTS, help="the results file to read")
    args = parser.parse_args(argv)
    names = [r[0] for r in ROWS]
    if args.command == "run":
        if args.workers < 1:
            parser.error(f"--workers must be at least 1, got {args.workers}")
        unknown = [r for r in args.rows or [] if r not in names]
        if unknown:
            parser.error(f"unknown rows {unknown}; the rows are {names}")
        try:
            records = sweep(args.results, args.workers, rows=args.rows, device=args.device)
        except KeyboardInterrupt:
            raise SystemExit(130) from None
        except ValueError as error:
            parser.error(str(error))
        print(f"{len(records)} runs in {args.results}")
    else:
        if not args.results.is_file():
            parser.error(f"no results file at {args.results}")
        _, records = read_results(args.results)
        done = {(r["row"], r["seed"]) for r in records}
        for name in names:
            seeds = [s for s in SEEDS if (name, s) in done]
            print(f"{name:22s} {len(seeds)}/{len(SEEDS)} seeds done")
        print(f"{len(done)} of {len(names) * len(SEEDS)} runs done")


if __name__ == "__main__":
    _main()


# ---------------------------------------------------------------- reading the results


def seed_values(records, name, metric, split="test"):
    """One number per seed, in seed order: ``metric`` of row ``name`` on ``split``.

    ``metric`` is "exact", "ppl" or "token_acc"; ``split`` is "test" or "long".

    Raises:
        KeyError: no record of that row, or an unknown metric or split.
    """
    runs = sorted((r for r in records if r["row"] == name), key=lambda r: r["seed"])
    if not runs:
        raise KeyError(f"no run of row {name!r} in the records")
    if split not in runs[0]["metrics"] or metric not in runs[0]["metrics"][split]:
        raise KeyError(f"split must be 'test' or 'long' and metric 'exact', 'ppl' or 'token_acc'; got {split!r}, {metric!r}")
    return [r["metrics"][split][metric] for r in runs]


def verdict(records, name, reference, metric, split="test"):
    """'better', 'worse' or 'within noise' for row ``name`` against row ``reference``.

    A row differs only if the ranges of the two rows' seeds do not overlap. Higher is
    better for exact match and token accuracy, lower for perplexity.
    """
    a, b = seed_values(records, name, metric, split), seed_values(records, reference, metric, split)
    if min(a) > max(b):
        higher = True
    elif max(a) < min(b):
        higher = False
    else:
        return "within noise"
    return "better" if higher == (metric != "ppl") else "worse"
