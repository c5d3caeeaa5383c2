"""Chapter 11's KV cache, measured: cached decoding against the old way on every test item of both tasks.

    .venv/bin/python -m utils.experiments.kv_cache check [--out utils/checkpoints/kv_cache_check.json]

decodes the whole test split of each task (1,293 German sources of chapter 16's translation model,
6,159 words of chapter 15's G2P model; the shipped averaged weights), greedy and beam 4 (alpha 0.6),
once re-reading the prefix at every step (``cache=False``) and once with a ``KVCache``
(``cache=True``), in the batches the tasks' own decoding uses, on one thread. For each of the
four (task, decoding) parts it records how many outputs are identical token for token (for
beam, every kept hypothesis, not only the best) and the largest differences of the numbers the
search compared: greedy, the probabilities of every step up to the output's ``</s>`` (the whole
distribution; after it a row is padded, which the old way hides from attention and the cache
need not) and the log-probability of each chosen token; beam, each hypothesis's log P(Y). Each part is written as
soon as it is done, so an interrupted run resumes at the next part. Chapter 11 reads the file
(``load_check``) and ``tests/test_kv_cache.py`` replays a prefix of each part.

The timing of cached against uncached decoding is a benchmark, ``bench/kv_cache.py``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import torch
from tqdm import tqdm

from ..core.env import ROOT
from ..core.masks import EOS_ID
from ..model.decoding import beam_search_batch, decode_by_length, greedy_decode

#: The committed result of ``check``.
CHECK_FILE = ROOT / "utils" / "checkpoints" / "kv_cache_check.json"
#: The largest difference allowed between cached and uncached decoding (float32): the probabilities of a
#: step, the log-probability of a chosen token, a beam hypothesis's log P(Y). Each is about five times
#: the largest found on all test items of both tasks (``CHECK_FILE``); chapter 11 and the tests assert it.
TOLERANCE = dict(probs=1e-5, log_prob_chosen=5e-5, log_prob=1e-4)
#: The four parts, in the order ``check`` runs them.
PARTS = (("translation", "greedy"), ("translation", "beam"), ("g2p", "greedy"), ("g2p", "beam"))


def task_inputs(task: str, items: int | None = None):
    """(model, vocabulary with ``encode_word``, test inputs, batch size of greedy, of beam, max_extra)
    for ``task`` ("translation" or "g2p"): the shipped averaged model, in eval mode, and the first
    ``items`` test inputs (all by default), as each task decodes them.

    Raises:
        ValueError: ``task`` is neither; ``items`` is not None or an int >= 1.
    """
    if items is not None and (isinstance(items, bool) or not isinstance(items, int) or items < 1):
        raise ValueError(f"items must be None (all) or an int >= 1, got {items!r}")
    if task == "translation":
        from ..tasks.translation import data as tr
        from ..tasks.translation import train as mt
        model, _ = mt.load_shipped(mt.shipped_path("avg"))
        sources, _ = tr.reference_streams(tr.cached_pairs(tr.data_path())["test"])
        return model, mt.SourceText(tr.shipped_vocab()), sources[:items], 200, 100, mt.MAX_EXTRA
    if task == "g2p":
        from ..tasks import g2p
        model, _ = g2p.load_shipped("avg")
        return model, g2p.G2PVocab(), list(g2p.load_lexicon()["test"])[:items], 500, 250, g2p.MAX_EXTRA
    raise ValueError(f"task must be 'translation' or 'g2p', got {task!r}")


def compare_decoding(task: str, decode: str, items: int | None = None, progress: bool = False) -> dict:
    """One part of ``check``: ``task``'s first ``items`` test inputs decoded with and without the cache.

    Returns a dict: items, identical (outputs equal token for token), first_difference (the
    index of the first input whose outputs differ, or None), max_abs_diff (greedy: "probs" and
    "log_prob_chosen"; beam: "log_prob"), and seconds {"uncached", "cached"} (one thread, loaded
    machine or not: ``bench/kv_cache.py`` times them properly).

    Raises:
        ValueError: an unknown task or decode.
    """
    if decode not in ("greedy", "beam"):
        raise ValueError(f"decode must be 'greedy' or 'beam', got {decode!r}")
    model, vocab, inputs, greedy_batch, beam_batch, max_extra = task_inputs(task, items)
    bar = tqdm(total=2 * len(inputs), desc=f"{task} {decode}", unit="item", ncols=80, disable=not progress)

    def run(cache):
        def batch(src):
            bar.update(src.size(0))
            if decode == "greedy":
                ids, probs = greedy_decode(model, src, max_len=src.size(1) + max_extra, return_probs=True, cache=cache)
                return [(row, p) for row, p in zip(ids, probs)]
            return [[(h.tokens, h.log_prob) for h in hyps]
                    for hyps in beam_search_batch(model, src, 4, 0.6, max_extra, cache=cache)]
        start = time.perf_counter()
        out = decode_by_length(inputs, vocab, greedy_batch if decode == "greedy" else beam_batch, batch)
        return out, time.perf_counter() - start

    (old, t_old), (new, t_new) = run(False), run(True)
    bar.close()
    same, first, diffs = 0, None, {}
    for i, (a, b) in enumerate(zip(old, new)):
        if decode == "greedy":
            (ids_a, p_a), (ids_b, p_b) = a, b
            equal = torch.equal(ids_a, ids_b)
            if equal:  # the row's steps up to its </s> (then it is padded): the whole distribution,
                # and the chosen token's log-probability
                ended = (ids_a == EOS_ID).nonzero()
                steps = int(ended[0]) + 1 if len(ended) else len(ids_a)
                ids_a, p_a, p_b = ids_a[:steps], p_a[:steps], p_b[:steps]
                _max(diffs, "probs", (p_a - p_b).abs().max().item())
                chosen = ids_a[:, None]
                _max(diffs, "log_prob_chosen", (p_a.gather(1, chosen).log() - p_b.gather(1, chosen).log()).abs().max().item())
        else:
            equal = [h for h, _ in a] == [h for h, _ in b]
            if equal:
                _max(diffs, "log_prob", max(abs(x - y) for (_, x), (_, y) in zip(a, b)))
        same += bool(equal)
        if not equal and first is None:
            first = i
    return dict(items=len(inputs), identical=same, first_difference=first, max_abs_diff=diffs,
                seconds=dict(uncached=round(t_old, 1), cached=round(t_new, 1)))


def _max(d, key, value):
    d[key] = max(d.get(key, 0.0), value)


def check(out=CHECK_FILE, items: int | None = None, progress: bool = True) -> pathlib.Path:
    """Run every part of ``PARTS`` not yet in ``out`` (resumable) on one thread; write ``out`` after each.

    The file: {"kind", "versions", "parts": {"translation greedy": compare_decoding(...), ...}}.

    Raises:
        ValueError: ``out`` holds a check of another ``items`` count.
    """
    import platform

    out = pathlib.Path(out)
    record = json.loads(out.read_text()) if out.is_file() else dict(
        kind="KV cache check", items=items, versions=dict(python=platform.python_version(), torch=torch.__version__,
                                                          machine=platform.machine(), threads=1), parts={})
    if record.get("items") != items:
        raise ValueError(f"{out} holds a check of items={record.get('items')}, not {items}: delete it to start again")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for task, decode in PARTS:
            name = f"{task} {decode}"
            if name in record["parts"]:
                continue
            record["parts"][name] = compare_decoding(task, decode, items, progress)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(record, indent=1) + "\n")
    finally:
        torch.set_num_threads(threads)
    return out


def load_check(path=CHECK_FILE) -> dict:
    """The committed check: {"translation greedy": {...}, ...} (see ``compare_decoding``), all four parts.

    Raises:
        FileNotFoundError: the file is missing (the message gives the command that makes it).
        ValueError: it lacks a part (the run was interrupted: run the command again to finish it).
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `python -m utils.experiments.kv_cache check`")
    parts = json.loads(path.read_text())["parts"]
    missing = [f"{t} {d}" for t, d in PARTS if f"{t} {d}" not in parts]
    if missing:
        raise ValueError(f"{path} lacks {missing}: run `python -m utils.experiments.kv_cache check` to finish it")
    return parts


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m utils.experiments.kv_cache", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="cached against uncached decoding on every test item of both tasks")
    c.add_argument("--out", default=str(CHECK_FILE), help="the result's file (default: %(default)s)")
    c.add_argument("--items", type=int, default=None, metavar="N", help="only the first N test items of each task")
    args = parser.parse_args(argv)
    if args.cmd == "check":
        print(check(args.out, args.items))


if __name__ == "__main__":
    main()
