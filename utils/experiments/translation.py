"""Chapter 16's measurement runs, shipped: their logs, dev translations and training FLOPs.

``python -m utils.experiments.translation measure-run --workdir W --name N`` ships an ablation
run into ``utils/checkpoints/translation/measure/`` (``ship_measurement``);
``python -m utils.experiments.translation measure-flops`` counts the FLOPs of the
size-and-phrases runs into ``measure/flops.json`` (``write_run_flops``);
``python -m utils.experiments.translation final --workdir W --out DIR`` ships a seed of the final
recipe (``ship_final``: the checkpoints up to its best dev chrF, averaged, and its test translations). They live here, above
the translation task, because counting FLOPs (``flops.translation_training_flops``) is an
experiment on the task's runs; the task reads the files (``train.load_dev_outputs``,
``train.load_run_flops``).
"""

from __future__ import annotations

import argparse
import json
import pathlib

import torch

from ..core.checks import is_int
from ..core.env import ROOT, add_device_option, resolve_device
from ..tasks.translation import data as tr
from ..tasks.translation import train as mt
from ..training.checkpoints import torch_load
from .flops import translation_training_flops


def ship_measurement(workdir, name: str, out_dir=mt.MEASURE_DIR, device="cpu",
                     step: int | None = None) -> tuple[pathlib.Path, pathlib.Path]:
    """Ship a measurement run of chapter 16: copy its log to ``out_dir / f"{name}.jsonl"`` and write
    ``out_dir / f"{name}.dev.json"``, the dev split translated greedily by the run's last
    checkpoint (as the run's own last evaluation did), so that the chapter can compare runs
    sentence by sentence (``paired_bootstrap``) without shipping their weights; the last
    checkpoint's dev cross-entropy without smoothing (``mt.dev_cross_entropy``), and the
    run's training FLOPs up to that step (``experiments.flops.translation_training_flops``:
    a cost that does not depend on the machine or its load, as minutes do).

    ``step`` ships the run as it stood at an earlier evaluated step (its log up to that step,
    the translations of ``step{step}.pt``): a run resumed to a longer budget ships at each
    budget under its own name (``reg`` at 3,500 steps, ``reg@7000`` at 7,000).

    The translations are checked against the log: their BLEU and chrF must equal what the run
    recorded at that step, to the last digit (one thread, as the run decoded). A run
    decoded on another machine than it trained on may differ in a few sentences; then
    nothing is written. ``device`` ("cpu" or "cuda") is where the model decodes: a run
    trained on one device is best measured on it.

    Raises:
        FileNotFoundError: ``workdir`` lacks the log or the last step's checkpoint.
        ValueError: ``name`` is not a plain file name; ``step`` is not a step the log evaluated;
            the log's last record has no dev evaluation; the translations do not score what the log says; ``device`` is not
            "cpu" or "cuda".
        RuntimeError: ``device`` is "cuda" and PyTorch sees no GPU.
    """
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ValueError(f"name must be a plain file name such as 'pdrop0.3', got {name!r}")
    device = resolve_device(device)
    workdir, out_dir = pathlib.Path(workdir), pathlib.Path(out_dir)
    header, records = mt.read_log(workdir / "log.jsonl")
    if step is not None:
        evaluated = [r["step"] for r in records if "dev_bleu" in r]
        if not is_int(step) or step not in evaluated:
            raise ValueError(f"step must be a step whose dev evaluation the log holds, one of {evaluated}, got {step!r}")
        records = [r for r in records if r["step"] <= step]
    last = records[-1]
    if "dev_bleu" not in last:
        raise ValueError(f"{workdir / 'log.jsonl'}: its last record (step {last['step']}) has no dev evaluation")
    model, sp = mt.config_model(header["start"]), mt.config_vocab(header["start"])
    path = workdir / f"step{last['step']}.pt"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the run's last checkpoint is needed to mt.translate the dev split")
    model.load_state_dict(torch_load(path, f"a checkpoint saved by {mt.NAME} (a state_dict)", "train the run again"))
    model = model.to(device)
    dev = tr.cached_pairs(tr.data_path(), header["start"].get("split", "buckets"))["dev"][: header["dev_pairs"]]
    sources, streams = tr.reference_streams(dev)
    threads = torch.get_num_threads()
    torch.set_num_threads(header["versions"]["threads"])
    try:
        hyps = mt.translate(model.eval(), sources, sp)
    finally:
        torch.set_num_threads(threads)
    scores = mt.bleu_chrf(hyps, streams)
    if (scores["bleu"], scores["chrf"]) != (last["dev_bleu"], last["dev_chrf"]):
        raise ValueError(f"the translations of step {last['step']} score BLEU {scores['bleu']}, chrF {scores['chrf']}; "
                         f"the log says {last['dev_bleu']}, {last['dev_chrf']}: decode on the machine that trained it")
    out_dir.mkdir(parents=True, exist_ok=True)
    log_out, dev_out = out_dir / f"{name}.jsonl", out_dir / f"{name}.dev.json"
    lines = (workdir / "log.jsonl").read_text().splitlines(keepends=True)
    log_out.write_text("".join(lines[: 1 + len(records)]))  # the header, then the records up to the step
    flops = translation_training_flops(header["start"], last["step"])[-1]
    record = dict(kind="translation dev outputs", step=last["step"], train_flops=flops,
                  dev_cross_entropy=mt.dev_cross_entropy(model, dev, sp), versions=mt.run_versions(),
                  sources=sources, hyps=hyps)
    dev_out.write_text(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    return log_out, dev_out


def run_flops(names=mt.SIZE_RUNS, measure_dir=mt.MEASURE_DIR) -> dict[str, dict[int, int]]:
    """{run: {evaluated step: training FLOPs of steps 1 to it}} for the runs ``names`` whose logs
    are in ``measure_dir``, counted by ``experiments.flops.translation_training_flops`` from each
    log's config (the batches replayed, not the machine's time)."""
    out = {}
    for name in names:
        header, records = mt.read_log(pathlib.Path(measure_dir) / f"{name}.jsonl")
        steps = [r["step"] for r in records if "dev_bleu" in r]
        cumulative = translation_training_flops(header["start"], max(steps))
        out[name] = {step: cumulative[step - 1] for step in steps}
    return out


def write_run_flops(path=mt.RUN_FLOPS_FILE) -> pathlib.Path:
    """Write ``run_flops()`` to ``path`` (``python -m utils.tasks.translation measure-flops``)."""
    path = pathlib.Path(path)
    record = dict(kind="translation run flops", runs={n: {str(k): v for k, v in d.items()} for n, d in run_flops().items()})
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


#: Where the final recipe's seeds are shipped: ``FINAL_DIR / f"seed{k}"`` (``ship_final``).
FINAL_DIR = tr.SHIPPED / "final"
FINAL_KIND = "translation final-recipe test outputs"


def ship_final(workdir, out_dir, keep_last: int = 5, metric: str = "dev_chrf", threads: int = 1,
               device="cpu", sentences: int | None = None) -> pathlib.Path:
    """Ship one seed of chapter 16's final recipe into ``out_dir``: early stopping and averaging.

    The run's best development evaluation (``mt.best_step`` by ``metric``, dev chrF by
    default) chooses the checkpoint; the ``keep_last`` checkpoints up to it are averaged
    (section 6.1) into ``out_dir / "avg.pt"`` (``mt.ship`` with ``end``; the run's log is
    copied beside it). The test split is then translated as the paper decodes (beam 4, alpha
    0.6), and the unseen words of those translations looked up through cross-attention
    (``replace.replace_unseen``, chapter 16's PosUnk). ``out_dir / "test_outputs.json"`` holds
    the sources, both translations, the count of words replaced, the steps averaged, the
    training FLOPs and seconds up to the best step, and the versions. The run must keep its
    checkpoints (train it with ``--set keep_last=N`` large enough). A run of chapter 17's
    recurrent model (``--arch recurrent``, issue 34's comparison) ships the same way without the
    lookup, which reads a Transformer's cross-attention: its ``replaced`` and ``n_replaced`` are
    None, and the two models are compared on ``beam``. ``sentences`` translates
    only the first that many test sources (for tests; ``load_final`` refuses such a file).

    Raises:
        FileNotFoundError: ``workdir`` lacks its log, or the checkpoints up to the best step.
        ValueError: ``metric`` as ``mt.best_step``; ``keep_last`` or ``threads`` not an int >= 1,
            ``sentences`` not None or an int >= 1; ``device`` is not "cpu" or "cuda".
    """
    from ..tasks.translation import baselines, replace

    for name, n in dict(keep_last=keep_last, threads=threads, sentences=1 if sentences is None else sentences).items():
        if not is_int(n) or n < 1:
            raise ValueError(f"{name} must be an int >= 1, got {n!r}")
    device = resolve_device(device)
    workdir, out_dir = pathlib.Path(workdir), pathlib.Path(out_dir)
    header, records = mt.read_log(workdir / "log.jsonl")
    lookup = header["start"].get("arch", "transformer") == "transformer"
    best = mt.best_step(records, metric)
    avg = mt.ship(workdir, out_dir / "avg.pt", keep_last=keep_last, end=best)
    model, steps = mt.load_shipped(avg)
    model = model.to(device)
    split = header["start"].get("split", "buckets")
    data = tr.cached_pairs(tr.data_path(), split)
    sources = tr.reference_streams(data["test"])[0][:sentences]
    previous = torch.get_num_threads()
    torch.set_num_threads(int(threads))
    try:
        sp = mt.config_vocab(header["start"])
        beam = mt.translate(model, sources, sp, decode="beam")
        replaced, n_replaced = replace.replace_unseen(model, sources, beam, baselines.single_word_entries(),
                                                      data["train"], sp=sp) if lookup else (None, None)
    finally:
        torch.set_num_threads(previous)
    at_best = next(r for r in records if r["step"] == best)
    record = dict(kind=FINAL_KIND, seed=header["start"]["recipe"]["seed"], metric=metric, best_step=best, steps=steps,
                  best_dev=at_best[metric], train_flops=translation_training_flops(header["start"], best)[-1],
                  train_seconds=at_best["train_seconds"], n_replaced=n_replaced, versions=mt.run_versions(),
                  sources=sources, beam=beam, replaced=replaced)
    out = out_dir / "test_outputs.json"
    out.write_text(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    return out


def steps_at_flops(config: dict, flops: int) -> int:
    """The fewest training steps whose cumulative FLOPs (``translation_training_flops``) reach
    ``flops`` for a run of log header "start" ``config``: issue 34 trains the recurrent model's
    seeds to the training FLOPs of the Transformer's final runs (equal cost, whatever the
    FLOPs of one step).

    Raises:
        ValueError: ``flops`` is not a positive int; as ``translation_training_flops``.
    """
    if not is_int(flops) or flops < 1:
        raise ValueError(f"flops must be a positive int, got {flops!r}")
    first = translation_training_flops(config, 100)
    guess = max(100, int(1.2 * flops * 100 / first[-1]) + 1)
    while True:
        cumulative = translation_training_flops(config, guess)
        if cumulative[-1] >= flops:
            return next(k + 1 for k, f in enumerate(cumulative) if f >= flops)
        guess *= 2


def transformer_final_flops(seed: int, final_dir=None) -> int:
    """Training FLOPs of the whole run of the Transformer's final recipe, seed ``seed`` (shipped in
    ``FINAL_DIR / f"seed{seed}"`` or ``final_dir``): every step it trained, the steps after its
    best checkpoint included, since they were spent to find it.

    Raises:
        FileNotFoundError: that seed's log is not shipped.
        ValueError: as ``final_curve`` (a log without evaluations).
    """
    return final_curve(pathlib.Path(final_dir) if final_dir is not None else FINAL_DIR / f"seed{int(seed)}")[1]


def final_curve(folder) -> tuple[list[dict], int]:
    """(evaluations, total) of a shipped final run in ``folder`` (``FINAL_DIR / "seedK"`` or
    ``RNN_FINAL_DIR / "seedK"``): one dict per development evaluation of its log, with its
    ``step``, ``flops`` (training FLOPs up to that step, ``translation_training_flops``),
    ``dev_loss`` (label-smoothed, nats per target piece), ``dev_bleu`` and ``dev_chrf`` (greedy),
    and the training FLOPs of the whole run (every step it trained). Chapter 17 reads the
    two models' budget curves from it.

    Raises:
        FileNotFoundError: the folder has no log.
        ValueError: the log has no development evaluation.
    """
    header, records = mt.read_log(pathlib.Path(folder) / mt.LOG_FILE.name)
    evals = [r for r in records if "dev_chrf" in r]
    if not evals:
        raise ValueError(f"{folder}: its log has no development evaluation")
    flops = translation_training_flops(header["start"], records[-1]["step"])
    return [dict(step=r["step"], flops=flops[r["step"] - 1], dev_loss=r["dev_loss"], dev_bleu=r["dev_bleu"],
                 dev_chrf=r["dev_chrf"]) for r in evals], flops[-1]


#: Where issue 34's recurrent seeds are shipped: ``RNN_FINAL_DIR / f"seed{k}"`` (``rnn-final``).
RNN_FINAL_DIR = tr.SHIPPED / "final_rnn"
#: Checkpoints a recurrent final run keeps: more than its evaluations (one per ``eval_every``
#: steps), so that ``ship_final`` finds the ones up to its best, wherever that falls.
RNN_FINAL_KEEP = 25


def recurrent_choice(measure_dir=None) -> str:
    """The recurrent model's translation recipe (issue 34): the try of ``mt.MT_RECURRENT_TRIES``
    whose shipped run (``measure_dir``, default ``mt.MEASURE_DIR``: ``rnn-NAME.jsonl``) has the
    best greedy dev chrF at its last evaluation, the first listed on a tie.

    Raises:
        FileNotFoundError: a try is not shipped yet (the message names it and its command).
        ValueError: a shipped try did not reach ``mt.ABLATION_STEPS`` steps.
    """
    folder = mt.MEASURE_DIR if measure_dir is None else pathlib.Path(measure_dir)
    chrf = {}
    for name in mt.MT_RECURRENT_TRIES:
        path = folder / f"{mt.RECURRENT_PREFIX}{name}.jsonl"
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: the recurrent try {name!r} is not shipped yet; train it with "
                                    f"`python -m utils.tasks.translation train --arch recurrent ...` and ship it with "
                                    f"`python -m utils.experiments.translation measure-run --name "
                                    f"{mt.RECURRENT_PREFIX}{name}`")
        _, records = mt.read_log(path)
        end = [r for r in records if "dev_chrf" in r][-1]
        if end["step"] != mt.ABLATION_STEPS:
            raise ValueError(f"{path}: its last evaluation is at step {end['step']}, expected {mt.ABLATION_STEPS}")
        chrf[name] = end["dev_chrf"]
    return max(chrf, key=chrf.get)


def recurrent_final_plan(seed: int, measure_dir=None, final_dir=None) -> tuple[dict, int]:
    """(fields, steps) of seed ``seed``'s recurrent final run (issue 34): the recipe fields of
    ``recurrent_choice`` with ``keep_last=RNN_FINAL_KEEP`` and the seed, and the fewest steps whose
    training FLOPs reach those of the Transformer's final run of the same seed
    (``steps_at_flops``, ``transformer_final_flops``: equal cost).

    Raises:
        ValueError: ``seed`` is not an int >= 0; as ``recurrent_choice``.
        FileNotFoundError: as ``recurrent_choice`` and ``transformer_final_flops``.
    """
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    fields = dict(mt.MT_RECURRENT_TRIES[recurrent_choice(measure_dir)], keep_last=RNN_FINAL_KEEP, seed=seed)
    return fields, steps_at_flops(mt.run_config(fields, arch="recurrent"), transformer_final_flops(seed, final_dir))


def load_final(out_dir) -> dict:
    """The record ``ship_final`` wrote in ``out_dir`` (a dict: see ``ship_final``).

    Raises:
        FileNotFoundError: the file is missing (the message gives the command that makes it).
        ValueError: the file is not readable JSON or not such a record, or its sources are not
            the test split of its run's split rule.
    """
    path = pathlib.Path(out_dir) / "test_outputs.json"
    make = f"run `python -m utils.experiments.translation final --workdir W --out {out_dir}`"
    record = mt.read_record(path, FINAL_KIND, make, make)
    header, _ = mt.read_log(pathlib.Path(out_dir) / mt.LOG_FILE.name)
    split = header["start"].get("split", "buckets")
    if record["sources"] != tr.reference_streams(tr.cached_pairs(tr.data_path(), split)["test"])[0]:
        raise ValueError(f"{path}: its sources are not the test split of its run; {make}")
    return record


def _main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m utils.experiments.translation", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("measure-run", help="ship a measurement run's log and its dev translations into "
                       f"{mt.MEASURE_DIR.relative_to(ROOT)}/NAME.jsonl and NAME.dev.json (chapter 16's ablations)")
    r.add_argument("--workdir", required=True)
    r.add_argument("--name", required=True, help="the files' name, e.g. pdrop0.3, or reg@7000 for a longer budget")
    r.add_argument("--step", type=int, default=None, help="ship the run as it stood at this evaluated step "
                   "(default: its last)")
    add_device_option(r)
    sub.add_parser("measure-flops", help=f"count the training FLOPs of the runs {', '.join(mt.SIZE_RUNS)} at each "
                   f"evaluation into {mt.RUN_FLOPS_FILE.relative_to(ROOT)} (chapter 16 reads it)")
    f = sub.add_parser("final", help="ship a seed of chapter 16's final recipe: the checkpoints up to its best dev "
                       "chrF averaged into DIR/avg.pt, and its test translations (beam 4, and with unseen words looked "
                       "up) into DIR/test_outputs.json")
    f.add_argument("--workdir", required=True)
    f.add_argument("--out", required=True, help=f"the seed's folder, e.g. {FINAL_DIR.relative_to(ROOT)}/seed0")
    f.add_argument("--keep-last", type=int, default=mt.MT_TRAIN["keep_last"], help="checkpoints averaged, up to the "
                   "best (default: %(default)s)")
    f.add_argument("--threads", type=int, default=1, help="PyTorch threads (default: %(default)s)")
    add_device_option(f)
    n = sub.add_parser("rnn-final", help="train seed K of the recurrent model's chosen translation recipe to the "
                       "training FLOPs of the Transformer's final seed K, then ship it like `final` into "
                       f"{RNN_FINAL_DIR.relative_to(ROOT)}/seedK (issue 34; resumable: the same command continues)")
    n.add_argument("--seed", type=int, required=True)
    n.add_argument("--workdir", required=True, help="its own folder per seed")
    n.add_argument("--threads", type=int, default=1, help="PyTorch threads (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.cmd == "rnn-final":
        fields, steps = recurrent_final_plan(args.seed)
        print(f"recurrent seed {args.seed}: {fields}, {steps:,} steps")
        mt.train_translation(args.workdir, steps=steps, threads=args.threads, arch="recurrent", **fields)
        print("wrote", ship_final(args.workdir, RNN_FINAL_DIR / f"seed{args.seed}", threads=args.threads))
        return
    if args.cmd == "measure-run":
        print("wrote", *ship_measurement(args.workdir, args.name, device=args.device, step=args.step))
    elif args.cmd == "final":
        print("wrote", ship_final(args.workdir, args.out, keep_last=args.keep_last, threads=args.threads,
                                  device=args.device))
    else:
        print("wrote", write_run_flops())


if __name__ == "__main__":
    _main()
