"""German to English translation, trained, shipped and scored: the paper's own task (sections 5 and 6.1).

The data and the shared subword vocabulary are ``utils.tasks.translation.data``'s (Debian's
``trans-de-en``: 11,962 train, 1,414 dev and 1,296 test sentence pairs; 4,000 BPE
pieces). The model is the course's ``Transformer`` with its one embedding table tied
to the output layer (section 3.4); the loop is the course's one loop,
``utils.training.loop.Run``, exactly as ``utils.tasks.g2p.train_g2p`` uses it: batches by length with a
token budget (section 5.1), Adam with the warmup schedule of equation 3 (5.3),
dropout and label smoothing (5.4), a work folder that a second call resumes bit for
bit. Every ``eval_every`` steps the run measures the dev loss and the *greedy* dev
BLEU and chrF (``sacrebleu`` on detokenised text: the ids are decoded back to
sentences and scored against the dev split's references). Shipping averages the last
``keep_last`` checkpoints (section 6.1); scoring decodes the test split with beam
search (beam 4, alpha 0.6)::

    .venv/bin/python -m utils.tasks.translation train --workdir _build_mt --threads 1 --steps 9500
    .venv/bin/python -m utils.tasks.translation ship --workdir _build_mt --out utils/checkpoints/translation/de_en_avg.pt
    .venv/bin/python -m utils.tasks.translation score                      # test BLEU and chrF, sacrebleu's signatures
    .venv/bin/python -m utils.tasks.translation decode --out utils/checkpoints/translation/de_en_test_outputs.json   # for chapter 16

Run ``train`` again with the same arguments (and a larger ``--steps`` if wanted) to go on.
``ship`` and ``decode`` overwrite a shipped file only when ``--out`` names it.

Measured on one thread of an AMD EPYC (the other core busy): 63 batches an epoch, 1.14 s a
step; the dev evaluation (dev loss and greedy decoding of the 1,449 dev sources of the split before one-word twins moved) took 65 s
at step 500, as long as for an untrained model (64 s: nearly every output runs to
``MAX_EXTRA`` pieces past its source); it shortens as the model learns to stop.
"""

from __future__ import annotations

import functools
import importlib.metadata as md
import json
import pathlib
import platform
import time

import torch
from torch import nn
from tqdm import tqdm

from ...core.checks import is_int
from ...core.env import ROOT, resolve_device
from ...model.decoding import beam_search_batch, decode_by_length, greedy_decode
from ...model.recurrent import RecurrentSeq2Seq
from ...model.transformer import Transformer
from ...training import loop
from ...training.batching import collate, make_batches
from ...training.checkpoints import average_checkpoints, checkpoint_steps, torch_load
from ...training.recipe import LabelSmoothingLoss, dev_loss, rate
from . import data as tr

#: The model (1.9M parameters with the 4,000-piece vocabulary). ``max_len`` is the
#: positional table (not a weight): the longest encoded sequence is 90 pieces (a train
#: target with its ``</s>``; test sources reach 87), and decoding goes ``MAX_EXTRA``
#: past the source, so 256 leaves room for any sentence of the data.
MT_MODEL = dict(d_model=128, h=4, d_ff=512, N=3, p_drop=0.2, max_len=256)
#: The recurrent baseline of chapter 17 on this task (``arch="recurrent"``): ``RecurrentSeq2Seq``
#: with chapter 17's widths, which on this vocabulary give 1,891,644 parameters against the
#: Transformer's 1,900,544 (0.5% fewer), and the Transformer's dropout rate. Its optional
#: dropout sites (``p_memory``, ``p_input``, ``p_state``) are off unless a run sets them.
MT_RECURRENT = dict(d_embed=128, d_hidden=220, d_attn=220, p_drop=0.2)
#: The recurrent model's optional dropout sites, off (0.0) unless a run's recipe names them.
RECURRENT_SITES = ("p_memory", "p_input", "p_state")
#: The models ``train_translation`` can train (``arch``).
ARCHS = ("transformer", "recurrent")
#: Other sizes, measured against ``MT_MODEL`` (``--size``): the fields they change.
MT_SIZES = {"base": {}, "small": dict(d_model=64, d_ff=256), "large": dict(d_model=256, d_ff=1024)}
#: The training recipe (section 5): tokens per batch (padding included), warmup steps,
#: label smoothing, seed, the step to train until, save points, evaluations, checkpoints kept.
MT_TRAIN = dict(max_tokens=3000, warmup=800, eps_ls=0.1, seed=0, steps=9500,
                save_every=500, eval_every=500, keep_last=5)
#: Recipe changes beyond the paper's, for the small-data ablations of chapter 16, with the
#: values that leave the paper's recipe as it is (a run's config names one only when it
#: differs): ``lr_factor`` scales the rate of equation 3 (``recipe.rate``'s ``factor``);
#: ``p_word_src`` and ``p_word_tgt`` are token dropout (``token_dropout``): each piece of the
#: source, or of the decoder's input, becomes ``<unk>`` with that probability in training;
#: ``entry_ratio`` mixes the dictionary's phrase pairs in: each epoch adds that many batches of
#: entries per batch of sentences (``MixedBatches``; 0.25 is about 1 entry token per 4 sentence tokens);
#: ``entry_epochs`` is a curriculum instead of a mix: the run first goes that many times through
#: all the dictionary's entries, alone (``CurriculumBatches``), then through the sentences only;
#: ``vocab_size`` is the shared BPE vocabulary's size: other than the shipped 4,000 it is a
#: vocabulary trained on the same train sentences by ``data.train_vocab`` (``run_vocab``).
#: ``train_share`` trains on that share of the train pairs only (``train_subset``): the
#: data-size curve.
MT_EXTRA = dict(lr_factor=1.0, p_word_src=0.0, p_word_tgt=0.0, entry_ratio=0.0, vocab_size=tr.VOCAB_SIZE,
                train_share=1.0, entry_epochs=0)

#: Outputs may be this many pieces longer than their source: no English sentence of the
#: train split is more than 19 pieces longer than its German (dev 15, test 16;
#: ``tests/test_translation_train.py`` checks it). The paper allows 50 (section 6.1); 20
#: keeps a babbling early model from decoding 50 pieces past every dev sentence.
MAX_EXTRA = 20
#: The ways ``translate`` decodes.
DECODES = ("greedy", "beam")

WORKDIR = ROOT / "_build_mt"
AVG_FILE = tr.SHIPPED / "de_en_avg.pt"
#: The run's last checkpoint alone (``ship --keep-last 1``), to show what averaging adds.
LAST_FILE = tr.SHIPPED / "de_en_last.pt"
#: The shipped models' decodes of the test split (``python -m utils.tasks.translation decode``).
OUTPUTS_FILE = tr.SHIPPED / "de_en_test_outputs.json"
#: The logs of the short runs that chose the model's size and whether to add the phrase
#: entries (``small.jsonl``, ``large.jsonl``, ``phrases.jsonl``: copies of the runs'
#: ``log.jsonl``; chapter 16 compares them with the shipped run).
MEASURE_DIR = tr.SHIPPED / "measure"
#: The recipe ablations of chapter 16 (``experiments.translation``'s ``measure-run`` ships each into ``MEASURE_DIR``): name ->
#: (the change from the paper's recipe, the fields ``train_translation`` gets). Each trains
#: ``ABLATION_STEPS`` steps with seed 0 on the twin-aware split, one thread.
MT_ABLATIONS = {
    "paper": ("none: the paper's recipe as scaled here", {}),
    "tokens1500": ("batches of 1,500 tokens instead of 3,000", dict(max_tokens=1500)),
    "word0.1": ("token dropout 0.1 on the source and the decoder's input", dict(p_word_src=0.1, p_word_tgt=0.1)),
    "pdrop0.3": ("dropout 0.3 instead of 0.2", dict(p_drop=0.3)),
    "ls0.2": ("label smoothing 0.2 instead of 0.1", dict(eps_ls=0.2)),
    "entries0.25": ("the dictionary's entries mixed in: 1 batch per 4 of sentences", dict(entry_ratio=0.25)),
    "reg": ("dropout 0.3 and token dropout 0.1 together", dict(p_drop=0.3, p_word_src=0.1, p_word_tgt=0.1)),
    "bpe2000": ("a shared vocabulary of 2,000 pieces instead of 4,000", dict(vocab_size=2000)),
    "bpe1000": ("a shared vocabulary of 1,000 pieces instead of 4,000", dict(vocab_size=1000)),
    "lr2": ("twice the learning rate of equation 3 at every step", dict(lr_factor=2.0)),
    "lr0.5": ("half the learning rate of equation 3 at every step", dict(lr_factor=0.5)),
}
ABLATION_STEPS = 3500
#: The second budget: runs of ``MT_ABLATIONS`` resumed from their state at ``ABLATION_STEPS`` to
#: ``LONG_STEPS`` (the same runs, trained on), shipped by ``measure-run`` as ``NAME@LONG_STEPS``;
#: chapter 16 reads the changes again there, past the step where the paper's recipe turns.
LONG_STEPS = 7000
MT_LONG_RUNS = ("paper", "pdrop0.3", "reg")
#: Runs that ask other questions than the one-change ablations, each with its own budget, shipped
#: by ``measure-run`` like them: name -> (the change from the paper's recipe, the fields
#: ``train_translation`` gets, the step trained until). The data-size curve trains the paper's
#: recipe on a share of the train pairs (a smaller share overfits sooner, so it needs fewer
#: steps to pass its lowest dev loss); the curriculum goes once through the dictionary's entries
#: alone before the sentences, so it trains the entries' steps more than the ablations.
MT_MORE_RUNS = {
    "share0.5": ("half of the train pairs, drawn at random", dict(train_share=0.5), 3500),
    "share0.25": ("a quarter of the train pairs, inside that half", dict(train_share=0.25), 1500),
    "entries1st": ("one epoch of the dictionary's entries alone, then the sentences", dict(entry_epochs=1), 4500),
}

#: Issue 34's translation comparison gives the two models the same tries: the paper's recipe,
#: half and twice its rate (equation 3), and more dropout (0.3 at every place the model drops:
#: the Transformer's 17, the recurrent model's ``p_drop`` and its ``RECURRENT_SITES``). Each trains
#: ``ABLATION_STEPS`` steps with seed 0 on the twin-aware split, one thread, and the best greedy dev
#: chrF chooses each model's recipe. The Transformer's tries are the runs of ``MT_ABLATIONS`` of
#: the same names; the recurrent model's train with ``--arch recurrent`` and these fields, and
#: ``measure-run`` ships them as ``RECURRENT_PREFIX + name`` (``rnn-lr0.5``).
MT_RECURRENT_TRIES = {
    "paper": {},
    "lr0.5": dict(lr_factor=0.5),
    "lr2": dict(lr_factor=2.0),
    "pdrop0.3": dict(p_drop=0.3, p_memory=0.3, p_input=0.3, p_state=0.3),
}
RECURRENT_PREFIX = "rnn-"


def long_name(name: str) -> str:
    """The shipped name of ablation ``name`` at the second budget: ``reg`` -> ``reg@7000``."""
    return f"{name}@{LONG_STEPS}"
#: The short runs that chose the model's size and whether to add the phrase pairs (their logs
#: are in ``MEASURE_DIR``), and the file of their training FLOPs at each evaluation
#: (``experiments.translation.write_run_flops``; counting them encodes the 367,358 phrase pairs, about 30 s, so chapter
#: 16 reads the file and a test recounts).
SIZE_RUNS = ("small", "large", "phrases")
RUN_FLOPS_FILE = MEASURE_DIR / "flops.json"
#: The shipped average's beam translations of the test split with unseen words looked up
#: through cross-attention (``replace_test_outputs``; ``replace.replace_unseen``).
REPLACED_FILE = tr.SHIPPED / "de_en_test_replaced.json"
#: A person's verdicts on everyday sentences (``load_judged``): each stored with the translation judged.
JUDGED_FILE = tr.SHIPPED / "everyday_judged.json"
#: (weights, decoding) pairs of the shipped test outputs.
OUTPUT_KINDS = (("last", "greedy"), ("last", "beam"), ("avg", "greedy"), ("avg", "beam"))
LOG_FILE = tr.SHIPPED / "de_en_log.jsonl"
#: The largest shipped file ``ship`` writes (bytes).
MAX_SHIPPED_BYTES = 10 * 1024 * 1024
NAME = "train_translation"


def new_model(model=None, vocab_size: int = tr.VOCAB_SIZE) -> Transformer | RecurrentSeq2Seq:
    """The model of a run's config, freshly initialised: ``Transformer(vocab_size, **model)``
    (the sizes of ``MT_MODEL`` by default) or, for a dict with the fields of ``MT_RECURRENT``
    (and any of ``RECURRENT_SITES``), ``RecurrentSeq2Seq(vocab_size, **model)``.

    Raises:
        TypeError: ``model`` is not a dict with exactly the fields of ``MT_MODEL``, or with
            those of ``MT_RECURRENT`` and optionally some of ``RECURRENT_SITES``.
    """
    model = MT_MODEL if model is None else model
    if isinstance(model, dict) and set(MT_RECURRENT) <= set(model) <= set(MT_RECURRENT) | set(RECURRENT_SITES):
        return RecurrentSeq2Seq(vocab_size, **model)
    if not isinstance(model, dict) or set(model) != set(MT_MODEL):
        raise TypeError(f"model must be a dict with the fields {sorted(MT_MODEL)} (the Transformer) or "
                        f"{sorted(MT_RECURRENT)} (the recurrent model), got {model!r:.120}")
    return Transformer(vocab_size, **model)


@functools.lru_cache(maxsize=2)
def run_vocab_file(vocab_size: int = tr.VOCAB_SIZE) -> pathlib.Path:
    """The file of a run's shared vocabulary: the shipped ``data.VOCAB_FILE`` for its size
    (4,000 pieces), else ``MEASURE_DIR / f"de_en_bpe{vocab_size}.model"`` (the ablations' own).

    Raises:
        ValueError: ``vocab_size`` is not an int >= 100.
    """
    if not is_int(vocab_size) or vocab_size < 100:
        raise ValueError(f"vocab_size must be an int >= 100 (pieces, specials included), got {vocab_size!r}")
    return tr.VOCAB_FILE if vocab_size == tr.VOCAB_SIZE else MEASURE_DIR / f"de_en_bpe{int(vocab_size)}.model"


@functools.lru_cache(maxsize=4)
def run_vocab(vocab_size: int = tr.VOCAB_SIZE):
    """The sentencepiece vocabulary of ``vocab_size`` pieces (``run_vocab_file``), loaded once per
    process. A size other than the shipped one is trained on the train split by
    ``data.train_vocab`` when its file is missing (a few seconds; two trainings write the same
    bytes), so an ablation's vocabulary is remade from its size alone.

    Raises:
        ValueError: as ``run_vocab_file``, or as ``data.train_vocab``.
    """
    path = run_vocab_file(vocab_size)
    if vocab_size == tr.VOCAB_SIZE:
        return tr.shipped_vocab()
    if not path.is_file():
        tr.train_vocab(path, vocab_size)
    return tr.load_vocab(path)


def config_vocab(config: dict):
    """The vocabulary of a run from its log header's "start" (``recipe.vocab_size``, the shipped
    4,000 pieces when the recipe names none): what its checkpoints encode and decode with."""
    return run_vocab(config["recipe"].get("vocab_size", tr.VOCAB_SIZE))


def config_model(config: dict) -> Transformer:
    """A fresh ``Transformer`` shaped as the run of log header "start" ``config``: its model
    fields and its vocabulary's size (to load the run's checkpoints into)."""
    return new_model(config["model"], vocab_size=config_vocab(config).get_piece_size())


#: The seed of the fixed order ``train_subset`` takes its shares from.
SUBSET_SEED = 20170612


def train_subset(pairs, share: float) -> list:
    """The first ``round(share * len(pairs))`` pairs of one fixed random order of ``pairs``
    (seeded by ``SUBSET_SEED``), in their original order: a smaller share is always part of a
    larger one, so a data-size curve adds data and changes nothing else. ``share`` 1.0 is
    ``pairs`` itself.

    Raises:
        ValueError: ``share`` is not a number in (0, 1], or keeps no pair.
    """
    if not _number(share) or not 0 < share <= 1:
        raise ValueError(f"train_share must be a number in (0, 1], got {share!r}")
    if share == 1:
        return list(pairs)
    keep = round(share * len(pairs))
    if keep < 1:
        raise ValueError(f"train_share {share!r} keeps no pair of {len(pairs):,}")
    order = torch.randperm(len(pairs), generator=torch.Generator().manual_seed(SUBSET_SEED)).tolist()
    return [pairs[i] for i in sorted(order[:keep])]


@functools.lru_cache(maxsize=2)
def training_data(max_tokens: int, phrases: bool, split_rule: str = "twins",
                  vocab_size: int = tr.VOCAB_SIZE, train_share: float = 1.0) -> tuple[list, list, list]:
    """(train examples, dev pairs (text), ``make_batches`` of the train examples), made once per
    process for ``train_translation`` (read only: never mutate them). An example is (German ids,
    English ids + ``</s>``) in the vocabulary of ``vocab_size`` pieces (``run_vocab``), of the
    share ``train_share`` of the train pairs (``train_subset``); with ``phrases`` the
    dictionary's 367,358 phrase pairs follow the 11,962 sentence pairs (reading and encoding
    them takes about 20 s)."""
    sp = run_vocab(vocab_size)
    by_split = tr.cached_pairs(tr.data_path(), split_rule)
    pairs = tr.encode_pairs(train_subset(by_split["train"], train_share), sp)
    if phrases:
        pairs += tr.encode_pairs(tr.phrase_pairs(split_rule=split_rule), sp)
    return pairs, by_split["dev"], make_batches(pairs, max_tokens)


@functools.lru_cache(maxsize=1)
def entry_data(max_tokens: int, split_rule: str = "twins", vocab_size: int = tr.VOCAB_SIZE) -> tuple[list, list]:
    """(the dictionary's phrase pairs as examples, ``make_batches`` of them on their own): what
    ``MixedBatches`` mixes into a run with ``entry_ratio`` > 0 (read only; about 20 s once per process)."""
    entries = tr.encode_pairs(tr.phrase_pairs(split_rule=split_rule), run_vocab(vocab_size))
    return entries, make_batches(entries, max_tokens)


class MixedBatches(loop.EpochBatches):
    """Every batch of sentences once per epoch, plus ``round(ratio * len(batches))`` batches of
    dictionary entries, all in one random order.

    The entry batches come in turns: a fixed random order of all of them (seeded by ``seed``)
    is walked ``per_epoch`` at a time, so the run sees every entry before it sees one twice,
    while each epoch stays mostly sentences. Epoch e's order is a ``torch.randperm`` seeded with
    ``seed * 100003 + e``, as in ``loop.EpochBatches``, so the state (epoch, position) is all a
    resumed run needs. ``make_batch`` gets example indices: those of ``extra`` must already
    point past the sentence examples (the run's example list is sentences, then entries).

    Raises:
        ValueError: ``extra`` is empty, or ``ratio`` is not a finite number > 0; as
            ``EpochBatches`` for the rest.
    """

    def __init__(self, batches, extra, ratio: float, make_batch, seed: int = 0):
        if not _number(ratio) or not 0 < ratio < float("inf"):
            raise ValueError(f"ratio must be a finite number > 0 (entry batches per sentence batch), got {ratio!r}")
        if len(extra) == 0:
            raise ValueError("extra must hold at least one batch of entries, got none")
        self.sentence_batches, self.per_epoch = len(batches), max(1, round(ratio * len(batches)))
        if not is_int(seed) or seed < 0:
            raise ValueError(f"seed must be an int >= 0, got {seed!r}")
        generator = torch.Generator().manual_seed(int(seed) * 100003 + 100002)
        self._turns = torch.randperm(len(extra), generator=generator).tolist()
        super().__init__(list(batches) + list(extra), make_batch, seed)

    def _shuffle(self, epoch):
        first = epoch * self.per_epoch
        chosen = [self.sentence_batches + self._turns[(first + j) % len(self._turns)] for j in range(self.per_epoch)]
        ids = list(range(self.sentence_batches)) + chosen
        generator = torch.Generator().manual_seed(self.seed * 100003 + epoch)
        return [ids[i] for i in torch.randperm(len(ids), generator=generator).tolist()]


class CurriculumBatches(loop.EpochBatches):
    """A curriculum: the first ``entry_epochs`` epochs are the dictionary's entry batches alone
    (each epoch all of them, in a new random order), every later epoch is the sentence batches
    alone, in a new random order.

    Epoch e's order is a ``torch.randperm`` seeded with ``seed * 100003 + e``, as in
    ``loop.EpochBatches``, so the state (epoch, position) is all a resumed run needs; the
    sentence epochs number on from ``entry_epochs``. ``make_batch`` gets example indices: those
    of ``extra`` must already point past the sentence examples (the run's example list is
    sentences, then entries), as in ``MixedBatches``.

    Raises:
        ValueError: ``extra`` is empty, or ``entry_epochs`` is not an int >= 1; as
            ``EpochBatches`` for the rest.
    """

    def __init__(self, batches, extra, entry_epochs: int, make_batch, seed: int = 0):
        if not is_int(entry_epochs) or entry_epochs < 1:
            raise ValueError(f"entry_epochs must be an int >= 1 (epochs of entries before the sentences), "
                             f"got {entry_epochs!r}")
        if len(extra) == 0:
            raise ValueError("extra must hold at least one batch of entries, got none")
        self.sentence_batches, self.entry_epochs = len(batches), int(entry_epochs)
        super().__init__(list(batches) + list(extra), make_batch, seed)

    def _shuffle(self, epoch):
        first, count = ((self.sentence_batches, len(self.batches) - self.sentence_batches) if epoch < self.entry_epochs
                        else (0, self.sentence_batches))
        generator = torch.Generator().manual_seed(self.seed * 100003 + epoch)
        return [first + i for i in torch.randperm(count, generator=generator).tolist()]


def run_batches(recipe: dict, split_rule: str, make_batch) -> tuple[list, loop.EpochBatches]:
    """(the run's examples, the batches it draws in its order): ``loop.EpochBatches`` over the
    sentence pairs (with the phrase pairs among them when ``recipe["phrases"]``),
    ``MixedBatches`` when ``recipe["entry_ratio"]`` > 0, or ``CurriculumBatches`` when
    ``recipe["entry_epochs"]`` > 0. ``make_batch(examples, indices)`` makes a step's batch.
    Training and ``experiments.flops`` draw from the same source."""
    vocab_size = recipe.get("vocab_size", tr.VOCAB_SIZE)
    pairs, _, batches = training_data(recipe["max_tokens"], recipe.get("phrases", False), split_rule, vocab_size,
                                      recipe.get("train_share", 1.0))
    ratio, entry_epochs = recipe.get("entry_ratio", 0.0), recipe.get("entry_epochs", 0)
    if not ratio and not entry_epochs:
        return pairs, loop.EpochBatches(batches, lambda indices: make_batch(pairs, indices), recipe["seed"])
    entries, entry_batches = entry_data(recipe["max_tokens"], split_rule, vocab_size)
    examples = pairs + entries
    extra = [[len(pairs) + i for i in b] for b in entry_batches]
    if entry_epochs:
        return examples, CurriculumBatches(batches, extra, entry_epochs,
                                           lambda indices: make_batch(examples, indices), recipe["seed"])
    return examples, MixedBatches(batches, extra, ratio, lambda indices: make_batch(examples, indices), recipe["seed"])


# ---------------------------------------------------------------- decoding and scoring

class SourceText:
    """German sentences in: the ``encode_word`` that ``decoding.decode_by_length`` calls, for text.

    ``SourceText(sp).encode_word(sentence)`` gives the sentence's piece ids under the
    sentencepiece model ``sp``; it raises ValueError for a sentence that encodes to no piece."""

    def __init__(self, sp):
        self.sp = sp

    def encode_word(self, sentence):  # German -> ids (an empty sentence fails: a source needs a token)
        ids = tr.encode(sentence, self.sp)
        if not ids:
            raise ValueError(f"a source sentence needs at least one piece, got {sentence!r}")
        return ids


def translate(model, sentences, sp=None, decode="greedy", beam_size=4, alpha=0.6, max_extra=MAX_EXTRA,
              batch_size=None, cache=None) -> list[str]:
    """German sentences -> English sentences (detokenised text), in the order given.

    Sentences are decoded ``batch_size`` at a time, grouped by length (little padding), on the model's device:
    ``greedy`` by ``decoding.greedy_decode`` (at most ``max_extra`` pieces past the
    longest source of the batch), ``beam`` by ``decoding.beam_search_batch`` (section 6.1;
    each sentence at most ``max_extra`` pieces past its own source), best hypothesis.

    Args:
        model: a ``Transformer`` over the shared vocabulary (put in eval mode here).
        sentences: a list of German strings.
        sp: the sentencepiece vocabulary (default: the shipped one).
        batch_size: sentences per batch (default 200 greedy, 100 beam).
        cache: as in ``decoding.greedy_decode`` (a KV cache for the Transformer by default;
            False re-reads every prefix; the same tokens either way).

    Raises:
        TypeError: ``sentences`` is not a list of strings.
        ValueError: ``decode`` is not 'greedy' or 'beam'; a sentence encodes to no piece;
            bad ``batch_size``, ``beam_size``, ``alpha`` or ``max_extra``.
    """
    if isinstance(sentences, str) or not isinstance(sentences, (list, tuple)) or not all(isinstance(s, str) for s in sentences):
        raise TypeError(f"sentences must be a list of German strings such as ['Guten Morgen!'], got {sentences!r:.80}")
    if decode not in DECODES:
        raise ValueError(f"decode must be one of {DECODES}, got {decode!r}")
    if not is_int(max_extra) or max_extra < 0:
        raise ValueError(f"max_extra must be an int >= 0 (pieces past the source), got {max_extra!r}")
    batch_size = (200 if decode == "greedy" else 100) if batch_size is None else batch_size
    sp = sp or tr.shipped_vocab()
    model.eval()
    device = next(model.parameters()).device
    if decode == "greedy":
        def decode_batch(src):
            return [tr.decode(row, sp) for row in greedy_decode(model, src.to(device), max_len=src.size(1) + max_extra,
                                                                cache=cache).cpu()]
    else:
        def decode_batch(src):
            return [tr.decode(hyps[0].tokens, sp)
                    for hyps in beam_search_batch(model, src.to(device), beam_size, alpha, max_extra, cache=cache)]
    return decode_by_length(sentences, SourceText(sp), batch_size, decode_batch)


def bleu_chrf(hyps, streams) -> dict:
    """Corpus BLEU and chrF (sacrebleu's defaults) of detokenised ``hyps`` against reference ``streams``.

    Args:
        hyps: one English string per source.
        streams: reference streams as ``data.reference_streams`` gives them (stream
            k holds each source's k-th reference or None): several references per source
            are allowed, and sacrebleu's signature then says ``nrefs:var``.

    Returns:
        {"bleu", "chrf"} (0 to 100) and {"bleu_signature", "chrf_signature"} (sacrebleu's
        strings, e.g. ``nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0``).

    Raises:
        TypeError: ``hyps`` is not a list of strings.
        ValueError: no hypotheses, or a stream's length is not the number of hypotheses.
    """
    _check_hyps(hyps, streams)
    return dict(_corpus_scores(tuple(hyps), tuple(tuple(stream) for stream in streams)))


def _check_hyps(hyps, streams):
    if not isinstance(hyps, (list, tuple)) or not all(isinstance(h, str) for h in hyps):
        raise TypeError(f"hyps must be a list of English strings, got {hyps!r:.80}")
    if not hyps or not streams or any(len(s) != len(hyps) for s in streams):
        raise ValueError(f"need one or more reference streams of {len(hyps)} entries (one per hypothesis, at least "
                         f"one), got lengths {[len(s) for s in streams]}")


@functools.lru_cache(maxsize=64)
def _corpus_scores(hyps: tuple, refs: tuple) -> dict:
    """``bleu_chrf``'s scores and signatures, kept per process: a chapter scores one system's
    output again in each comparison it enters (``paired_bootstrap``)."""
    from sacrebleu.metrics import BLEU, CHRF

    bleu, chrf, streams = BLEU(), CHRF(), [list(r) for r in refs]
    scores = dict(bleu=bleu.corpus_score(list(hyps), streams).score, chrf=chrf.corpus_score(list(hyps), streams).score)
    return dict(scores, bleu_signature=str(bleu.get_signature()), chrf_signature=str(chrf.get_signature()))


#: Paired bootstrap: resamples and the seed of NumPy's generator (``paired_bootstrap``).
BOOTSTRAP = dict(resamples=1000, seed=12345)


@functools.lru_cache(maxsize=64)
def _sentence_statistics(metric: str, hyps: tuple, refs: tuple):
    """sacrebleu's per-sentence statistics of ``hyps`` against reference streams ``refs`` for
    ``metric`` ("bleu" or "chrf"), as a read-only (sentences, statistics) int64 array; kept
    per process, since a chapter compares one system's output with several others."""
    import numpy as np
    from sacrebleu.metrics import BLEU, CHRF

    metric = BLEU() if metric == "bleu" else CHRF()
    stats = np.array(metric._extract_corpus_statistics(list(hyps), [list(r) for r in refs]), dtype=np.int64)
    stats.setflags(write=False)
    return stats


def paired_bootstrap(hyps_a, hyps_b, streams, resamples=BOOTSTRAP["resamples"], seed=BOOTSTRAP["seed"]) -> dict:
    """Paired bootstrap resampling over test sentences (Koehn 2004): is system a better than b?

    Draw ``resamples`` test sets of n sentences with replacement (the same draws for both
    systems: they are paired), score both on each with corpus BLEU and chrF (sacrebleu's
    settings, as ``bleu_chrf``) and look at the differences a - b. The sentence statistics
    are sacrebleu's own (n-gram matches and lengths), summed per draw, as its
    ``--paired-bs`` does; on the draw that is the test set itself they give ``bleu_chrf``'s
    scores exactly (``tests/test_translation_train.py`` checks it).

    Returns:
        {"bleu": {...}, "chrf": {...}}, each with "a", "b" (the scores on the test set),
        "diff" (a - b), "low", "high" (the 2.5th and 97.5th percentiles of the resampled
        differences: a 95% interval) and "p_a_better" (the share of draws where a scores
        higher); and "resamples", "seed".

    Raises:
        TypeError, ValueError: as for ``bleu_chrf``; ``hyps_b``'s length differs from
            ``hyps_a``'s; ``resamples`` is not an int >= 1 or ``seed`` not an int >= 0.
    """
    import numpy as np
    from sacrebleu.metrics import BLEU, CHRF

    _check_hyps(hyps_a, streams)
    _check_hyps(hyps_b, streams)
    if not is_int(resamples) or resamples < 1:
        raise ValueError(f"resamples must be an int >= 1, got {type(resamples).__name__} {resamples!r}")
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {type(seed).__name__} {seed!r}")
    n = len(hyps_a)
    draws = np.random.default_rng(int(seed)).integers(0, n, size=(int(resamples), n))
    # times[k, i]: how often draw k took sentence i; a draw's statistics are then one product
    times = np.zeros((int(resamples), n), dtype=np.int64)
    np.add.at(times, (np.arange(int(resamples))[:, None], draws), 1)
    refs = tuple(tuple(stream) for stream in streams)
    out = dict(resamples=int(resamples), seed=int(seed))
    for name, metric in (("bleu", BLEU()), ("chrf", CHRF())):
        stats = [_sentence_statistics(name, tuple(h), refs) for h in (hyps_a, hyps_b)]
        a, b = (float(metric._compute_score_from_stats(list(s.sum(0))).score) for s in stats)  # = bleu_chrf's (tested)
        sums = [times @ s for s in stats]  # (resamples, statistics): integers, as summing each draw's rows
        diffs = np.array([metric._compute_score_from_stats(list(x)).score - metric._compute_score_from_stats(list(y)).score
                          for x, y in zip(*sums)])
        low, high = np.percentile(diffs, [2.5, 97.5])
        out[name] = dict(a=a, b=b, diff=a - b, low=float(low), high=float(high),
                         p_a_better=float((diffs > 0).mean()))
    return out


def score_pairs(model, pairs, sp=None, decode="greedy", **kwargs) -> dict:
    """BLEU and chrF of ``model`` on (German, English) pairs: each distinct German sentence is
    translated once and scored against all its references (``reference_streams``).

    Returns:
        ``bleu_chrf``'s dict, with "sources" (the German sentences) and "hyps" (their translations).

    Raises:
        ValueError: ``pairs`` is empty; as for ``translate`` and ``bleu_chrf``.
        TypeError: ``pairs`` is not a list of (str, str).
    """
    sources, streams = tr.reference_streams(pairs)
    if not sources:
        raise ValueError("score_pairs needs at least one (German, English) pair, got none")
    hyps = translate(model, sources, sp, decode=decode, **kwargs)
    return dict(bleu_chrf(hyps, streams), sources=sources, hyps=hyps)


# ---------------------------------------------------------------- training

def run_versions() -> dict:
    """Python, PyTorch, sacrebleu, sentencepiece, the data, the machine and the thread count of
    this process: what a run's log and each shipped file of translations record."""
    return dict(python=platform.python_version(), torch=torch.__version__, sacrebleu=md.version("sacrebleu"),
                sentencepiece=md.version("sentencepiece"), data=tr.data_version(), machine=platform.machine(),
                threads=torch.get_num_threads())


def _config(steps, threads, phrases, recipe, size="base", split_rule="twins", arch="transformer") -> tuple[dict, dict]:
    """(the recipe with ``steps``, the run's config: model and recipe without steps,
    ``split_rule`` unless it is "buckets", which the configs of the runs made before the
    rule existed mean by saying none, and ``arch`` unless it is "transformer"), checked."""
    tr.check_split_rule(split_rule)
    if not isinstance(arch, str) or arch not in ARCHS:
        raise ValueError(f"arch must be one of {list(ARCHS)}, got {arch!r}")
    if not isinstance(size, str) or size not in MT_SIZES:
        raise ValueError(f"size must be one of {sorted(MT_SIZES)}, got {size!r}")
    if arch == "recurrent" and size != "base":
        raise ValueError(f"size {size!r} is one of the Transformer's sizes; the recurrent model has MT_RECURRENT's "
                         f"(change its fields with the recipe: {sorted(MT_RECURRENT)})")
    model_fields = set(MT_MODEL) - {"max_len"} if arch == "transformer" else set(MT_RECURRENT) | set(RECURRENT_SITES)
    unknown = set(recipe) - set(MT_TRAIN) - set(MT_EXTRA) - model_fields
    if unknown:
        raise ValueError(f"unknown recipe fields {sorted(unknown)}; the fields are {sorted(MT_TRAIN)}, "
                         f"{sorted(MT_EXTRA)}, the {arch} model's {sorted(model_fields)} (and phrases)")
    changed = {k: v for k, v in recipe.items() if k in model_fields}
    model = {**MT_MODEL, **MT_SIZES[size], **changed} if arch == "transformer" else {**MT_RECURRENT, **changed}
    sizes = ("d_model", "h", "d_ff", "N") if arch == "transformer" else ("d_embed", "d_hidden", "d_attn")
    for name in sizes:
        if not is_int(model[name]) or model[name] < 1:
            raise ValueError(f"{name} must be an int >= 1, got {type(model[name]).__name__} {model[name]!r}")
        model[name] = int(model[name])
    for name in ("p_drop", *(k for k in RECURRENT_SITES if k in model)):
        if not _number(model[name]) or not 0 <= model[name] < 1:
            raise ValueError(f"{name} must be a number in [0, 1), got {model[name]!r}")
    recipe = {k: v for k, v in recipe.items() if k not in model_fields}
    cfg = {**MT_TRAIN, **recipe, **({} if steps is None else dict(steps=steps))}
    lowest = dict(steps=1, save_every=1, eval_every=1, max_tokens=1, warmup=1, keep_last=1, seed=0)
    for name, low in {**lowest, "threads": 1}.items():
        value = threads if name == "threads" else cfg[name]
        if not is_int(value) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {type(value).__name__} {value!r}")
        if name != "threads":
            cfg[name] = int(value)  # NumPy integers are welcome; the log (JSON) and the state hold Python ints
    if not isinstance(cfg["eps_ls"], (int, float)) or isinstance(cfg["eps_ls"], bool) or not 0 <= cfg["eps_ls"] < 1:
        raise ValueError(f"eps_ls must be a number in [0, 1), got {cfg['eps_ls']!r}")
    for name in ("p_word_src", "p_word_tgt"):
        if not _number(cfg.get(name, 0.0)) or not 0 <= cfg.get(name, 0.0) < 1:
            raise ValueError(f"{name} must be a number in [0, 1), got {cfg[name]!r}")
    if not _number(cfg.get("lr_factor", 1.0)) or not 0 < cfg.get("lr_factor", 1.0) < float("inf"):
        raise ValueError(f"lr_factor must be a finite number > 0, got {cfg['lr_factor']!r}")
    if not isinstance(phrases, bool):
        raise TypeError(f"phrases must be True or False (add the dictionary's phrase pairs), got {phrases!r}")
    if not _number(cfg.get("entry_ratio", 0.0)) or not 0 <= cfg.get("entry_ratio", 0.0) < float("inf"):
        raise ValueError(f"entry_ratio must be a finite number >= 0, got {cfg['entry_ratio']!r}")
    if not is_int(cfg.get("vocab_size", tr.VOCAB_SIZE)) or cfg.get("vocab_size", tr.VOCAB_SIZE) < 100:
        raise ValueError(f"vocab_size must be an int >= 100 (pieces, specials included), got {cfg['vocab_size']!r}")
    if "vocab_size" in cfg:
        cfg["vocab_size"] = int(cfg["vocab_size"])
    if not _number(cfg.get("train_share", 1.0)) or not 0 < cfg.get("train_share", 1.0) <= 1:
        raise ValueError(f"train_share must be a number in (0, 1], got {cfg['train_share']!r}")
    if not is_int(cfg.get("entry_epochs", 0)) or cfg.get("entry_epochs", 0) < 0:
        raise ValueError(f"entry_epochs must be an int >= 0, got {cfg['entry_epochs']!r}")
    if "entry_epochs" in cfg:
        cfg["entry_epochs"] = int(cfg["entry_epochs"])
    if cfg.get("entry_epochs", 0) and (phrases or cfg.get("entry_ratio", 0.0)):
        raise ValueError("entry_epochs puts the dictionary's entries first, alone: it goes with neither phrases "
                         f"nor entry_ratio (got phrases={phrases!r}, entry_ratio={cfg.get('entry_ratio', 0.0)!r})")
    if phrases and cfg.get("entry_ratio", 0.0):
        raise ValueError("phrases and entry_ratio both add the dictionary's phrase pairs: choose one "
                         f"(phrases=True puts them all in every epoch; entry_ratio={cfg['entry_ratio']!r} mixes some in)")
    cfg = {k: v for k, v in cfg.items() if k not in MT_EXTRA or v != MT_EXTRA[k]}  # the paper's recipe names none
    recipe_cfg = {k: v for k, v in cfg.items() if k != "steps"}
    vocab = run_vocab_file(cfg.get("vocab_size", tr.VOCAB_SIZE)).name
    return cfg, dict(model=model, vocab=vocab, recipe=dict(recipe_cfg, phrases=phrases),
                     **({} if split_rule == "buckets" else dict(split=split_rule)),
                     **({} if arch == "transformer" else dict(arch=arch)))


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def token_dropout(p_src: float, p_tgt: float):
    """A forward pre-hook for ``Transformer``: in training mode, each piece of ``src`` (batch, S)
    with probability ``p_src``, and of ``tgt_in`` (batch, T) with probability ``p_tgt``, is
    replaced by ``<unk>`` (``data.UNK_ID``); ``<pad>``, ``<s>`` and ``</s>`` are kept. The
    labels are untouched: the model must predict the next piece from a context with holes,
    as it must at test time for words it never saw. A piece-level form of the word dropout
    of Sennrich and Zhang (2019) for small data. Draws from PyTorch's global generator,
    which ``loop.Run`` saves and restores, so a resumed run is unchanged. In eval mode, or
    with both rates 0, the model's input is untouched.

    Raises:
        ValueError: a rate is not a number in [0, 1).
    """
    for name, p in (("p_src", p_src), ("p_tgt", p_tgt)):
        if not _number(p) or not 0 <= p < 1:
            raise ValueError(f"{name} must be a number in [0, 1), got {p!r}")

    def drop(ids, p):
        if p == 0:
            return ids
        holes = (torch.rand(ids.shape, device=ids.device) < p) & (ids > tr.UNK_ID)
        return ids.masked_fill(holes, tr.UNK_ID)

    def hook(module, args):
        if not module.training:
            return None
        src, tgt_in, *rest = args
        return (drop(src, p_src), drop(tgt_in, p_tgt), *rest)

    return hook


def run_config(recipe: dict, arch: str = "transformer", size: str = "base", phrases: bool = False,
               split_rule: str = "twins") -> dict:
    """The config that a run of ``train_translation`` with these recipe fields (``--set``) logs as
    its header's "start": the model and the recipe without the steps.

    Raises:
        ValueError: as ``train_translation`` (an unknown field, arch, size or split rule).
    """
    return _config(None, 1, phrases, dict(recipe), size, split_rule, arch)[1]


def train_translation(workdir=WORKDIR, steps=None, threads=1, progress=True, dev_eval=True, phrases=False,
                      dev_size=None, size="base", split_rule="twins", device="cpu", arch="transformer",
                      **recipe) -> nn.Module:
    """Train the German to English Transformer with the paper's recipe (or, with
    ``arch="recurrent"``, chapter 17's recurrent model with the same recipe); resumable.

    The loop is ``utils.training.loop.Run`` with a work folder, as in ``utils.tasks.g2p.train_g2p``. It writes
    under ``workdir``: ``state.pt`` (model, Adam, schedule, random state, epoch and
    position in the data; rewritten at each save point), ``step{N}.pt`` (the weights every
    ``save_every`` steps, the last ``keep_last`` kept) and ``log.jsonl`` (a header: the
    config, versions, data sizes and sacrebleu's signatures; then one JSON line per save
    point: step, epoch, rate, training seconds, the per-step losses, the non-pad source
    and target tokens since the previous line, and every ``eval_every`` steps and at the
    last step unless ``dev_eval`` is False: dev loss (label-smoothed, per target token),
    greedy dev BLEU and chrF, and the seconds they took). Run it again on the same folder
    with the same recipe and it continues from ``state.pt`` exactly as if it had never
    stopped; ``steps`` is a total, so a larger one trains further.

    Args:
        workdir: the run's folder (made if missing).
        steps: the step to train until (default ``MT_TRAIN["steps"]``).
        threads: PyTorch's CPU threads (1 is reproducible to the bit on one machine).
        progress: a progress bar and a line per evaluation.
        dev_eval: evaluate on the dev split (False: no evaluation, for quick runs).
        phrases: also train on the dictionary's phrase pairs (``data.phrase_pairs``,
            which never hold a dev or test sentence). Part of the recipe: a folder trained
            with one setting refuses the other.
        dev_size: evaluate on the first ``dev_size`` dev pairs only (default: all 1,414;
            not part of the recipe, it changes no weight).
        size: a key of ``MT_SIZES``: "base" (``MT_MODEL``), or "small" / "large" (half and
            twice its ``d_model`` and ``d_ff``), the sizes measured against it. Part of the config.
        split_rule: "twins" (the course's split) or "buckets" (the split of the runs made
            before one-word twins were grouped: to replay their logs); ``data.load_pairs``.
            Part of the config.
        device: "cpu" (the shipped runs') or "cuda": where the model and its batches go. Not
            part of the config: a run resumed on another device is the same run (its numbers
            are not the CPU's to the bit).
        arch: "transformer" or "recurrent" (``MT_RECURRENT``, ``size`` "base" only): the
            model. Part of the config (a Transformer run's config names none).
        **recipe: fields of ``MT_TRAIN`` to change (``max_tokens``, ``warmup``, ``eps_ls``,
            ``seed``, ``save_every``, ``eval_every``, ``keep_last``), of ``MT_EXTRA`` (``lr_factor``,
            ``p_word_src``, ``p_word_tgt``, ``entry_ratio``, ``vocab_size``, ``train_share``,
            ``entry_epochs``), or of the model: ``MT_MODEL``'s (``d_model``, ``h``, ``d_ff``, ``N``,
            ``p_drop``; applied after ``size``) or, for the recurrent model, ``MT_RECURRENT``'s and
            ``RECURRENT_SITES``: the recipe ablations of chapters 16 and 17.

    Returns:
        The trained model (eval mode).

    Raises:
        ValueError: ``arch`` is not in ``ARCHS``; ``size`` is not a key of ``MT_SIZES``, or not
            "base" for the recurrent model; ``split_rule`` is not in
            ``data.SPLIT_RULES``; ``steps``, ``threads``, ``dev_size`` or a recipe field is not an int in
            its range (``seed`` >= 0, the others >= 1; ``eps_ls``, ``p_word_src``, ``p_word_tgt``
            in [0, 1); ``lr_factor`` finite and > 0; ``entry_ratio`` finite and >= 0, and 0 with
            ``phrases``; ``vocab_size`` an int >= 100; ``train_share`` in (0, 1]; ``entry_epochs`` an
            int >= 0, and 0 with ``phrases`` or ``entry_ratio``); an unknown
            recipe field; the folder holds a run with another config (the message shows
            both; checked before any data is read) or a ``state.pt`` or log that cannot be
            read (the message names the file and says to delete it or use another folder);
            ``device`` is not "cpu" or "cuda".
        RuntimeError: ``device`` is "cuda" and PyTorch sees no GPU.
        TypeError: ``phrases`` is not a bool.
        FileNotFoundError: the dictionary is missing (the message gives the install command).
    """
    cfg, run_cfg = _config(steps, threads, phrases, recipe, size, split_rule, arch)
    device = resolve_device(device)
    if dev_size is not None and (not is_int(dev_size) or dev_size < 1):
        raise ValueError(f"dev_size must be None (all dev pairs) or an int >= 1, got {type(dev_size).__name__} {dev_size!r}")
    state_path = pathlib.Path(workdir) / "state.pt"
    if state_path.is_file():  # refuse another config before spending seconds on the data
        saved = loop.read_state(state_path, NAME)["config"]
        if saved != run_cfg:
            raise ValueError(f"{state_path} holds a run with another configuration: {saved} (this one: {run_cfg}); "
                             f"use another workdir")
    from ...core.env import set_seed

    set_seed(cfg["seed"], threads=threads)
    sp = run_vocab(cfg.get("vocab_size", tr.VOCAB_SIZE))
    pairs, dev_text, batches = training_data(cfg["max_tokens"], phrases, split_rule, cfg.get("vocab_size", tr.VOCAB_SIZE),
                                             cfg.get("train_share", 1.0))
    examples, source = run_batches(run_cfg["recipe"], split_rule, lambda ex, indices: collate([ex[i] for i in indices]))
    dev_text = dev_text[:dev_size]
    dev_examples = tr.encode_pairs(dev_text, sp)
    model = new_model(run_cfg["model"], vocab_size=sp.get_piece_size()).to(device)
    if cfg.get("p_word_src", 0) or cfg.get("p_word_tgt", 0):
        model.register_forward_pre_hook(token_dropout(cfg.get("p_word_src", 0.0), cfg.get("p_word_tgt", 0.0)))
    criterion = LabelSmoothingLoss(cfg["eps_ls"])
    header = dict(versions=run_versions(), train_pairs=len(pairs), train_batches=len(batches), dev_pairs=len(dev_text),
                  params=sum(p.numel() for p in model.parameters()))
    if len(examples) > len(pairs):
        header["entry_pairs"] = len(examples) - len(pairs)
        if isinstance(source, MixedBatches):
            header["entry_batches_per_epoch"] = source.per_epoch
        else:  # a curriculum: all the entry batches, each entry epoch
            header["entry_batches"] = len(source.batches) - source.sentence_batches
    if dev_eval:
        sources, streams = tr.reference_streams(dev_text)
        header["signatures"] = {k: v for k, v in bleu_chrf(list(streams[0]), streams).items() if k.endswith("signature")}

    def evaluate(model, step):  # the loop calls it in eval mode, without gradients
        result = dict(dev_loss=dev_loss(model, dev_examples, criterion))
        hyps = translate(model, sources, sp)
        result.update((f"dev_{k}", v) for k, v in bleu_chrf(hyps, streams).items() if not k.endswith("signature"))
        if progress:
            tqdm.write(f"step {step}: dev loss {result['dev_loss']:.3f}, greedy BLEU {result['dev_bleu']:.2f}, "
                       f"chrF {result['dev_chrf']:.2f} ({run.train_seconds / 60:.1f} min of training)")
        return result

    run = loop.Run(model, source,
                   schedule=functools.partial(rate, d_model=model.embed.d_model, warmup=cfg["warmup"],
                                              factor=cfg.get("lr_factor", 1.0)), criterion=criterion, save_every=cfg["save_every"],
                   keep_last=cfg["keep_last"], evaluate=evaluate if dev_eval else None, eval_every=cfg["eval_every"],
                   workdir=workdir, config=run_cfg, name=NAME, progress=progress, desc="German-English training",
                   header=header)
    run.train(cfg["steps"])
    return model.eval()


def read_log(path) -> tuple[dict, list[dict]]:
    """(header, records) of a log written by ``train_translation``.

    Raises:
        FileNotFoundError, ValueError: as for ``loop.read_log`` (the message names the file).
    """
    return loop.read_log(path, kind="translation training log", owner=NAME)


# ---------------------------------------------------------------- shipping and scoring

def ship(workdir=WORKDIR, out=AVG_FILE, keep_last=None, dtype="float16", end=None) -> pathlib.Path:
    """Average the last ``keep_last`` checkpoints of ``workdir`` (section 6.1) into ``out``; copy
    the run's log beside it (``de_en_log.jsonl``); return ``out``'s path. With ``end`` (a step
    that has a checkpoint), the ``keep_last`` checkpoints up to that step instead: a checkpoint
    chosen by development score (``best_step``) and those before it, as early stopping does.

    The file holds {"steps": averaged steps, "config": the run's config, "state_dict":
    the weights as ``dtype``, "float16" (3.8 MB for ``MT_MODEL``) or "float32" (7.6 MB)}.

    Raises:
        ValueError: ``keep_last`` is not a positive int (or None, the recipe's 5); ``dtype``
            is not 'float16' or 'float32'; ``end`` is not None or a positive int; a checkpoint
            cannot be read, or the file would be larger than ``MAX_SHIPPED_BYTES`` (10 MB).
        FileNotFoundError: ``workdir`` holds fewer than ``keep_last`` checkpoints (up to
            ``end``), no checkpoint of step ``end``, or no log.
    """
    keep_last = MT_TRAIN["keep_last"] if keep_last is None else keep_last
    if not is_int(keep_last) or keep_last < 1:
        raise ValueError(f"keep_last must be a positive int, got {keep_last!r}")
    if dtype not in ("float16", "float32"):
        raise ValueError(f"dtype must be 'float16' or 'float32', got {dtype!r}")
    if end is not None and (not is_int(end) or end < 1):
        raise ValueError(f"end must be None or a positive int (a checkpoint's step), got {end!r}")
    workdir, out = pathlib.Path(workdir), pathlib.Path(out)
    saved = checkpoint_steps(workdir, prefix="step")
    if end is not None and int(end) not in saved:
        raise FileNotFoundError(f"no checkpoint step{end}.pt in {workdir} (it holds steps {saved}): train with a "
                                f"larger keep_last (--set keep_last=N) to keep the checkpoints around the best")
    steps = [s for s in saved if end is None or s <= end][-int(keep_last):]
    if len(steps) < keep_last:
        raise FileNotFoundError(f"need {keep_last} checkpoints step{{N}}.pt in {workdir}"
                                f"{'' if end is None else f' up to step {end}'}, found steps {steps}")
    header, _ = read_log(workdir / "log.jsonl")
    remedy = f"delete it (the other checkpoints of {workdir} are kept) or train again"
    states = [torch_load(workdir / f"step{s}.pt", f"a checkpoint saved by {NAME} (a state_dict)", remedy) for s in steps]
    average = {k: v.to(getattr(torch, dtype)) if v.is_floating_point() else v for k, v in average_checkpoints(states).items()}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    torch.save(dict(steps=steps, config=header["start"], state_dict=average), tmp)
    if tmp.stat().st_size > MAX_SHIPPED_BYTES:
        size = tmp.stat().st_size
        tmp.unlink()
        raise ValueError(f"the averaged weights take {size:,} bytes, more than {MAX_SHIPPED_BYTES:,}; ship float16")
    tmp.replace(out)
    (out.parent / LOG_FILE.name).write_text((workdir / "log.jsonl").read_text())
    return out


def best_step(records: list[dict], metric: str = "dev_chrf") -> int:
    """The step of a run's best development evaluation: the highest ``metric`` (``dev_chrf`` or
    ``dev_bleu``) or, for ``dev_loss``, the lowest; ties go to the earlier step. ``records`` are
    ``read_log``'s; evaluations are the records holding ``metric``.

    Raises:
        ValueError: ``metric`` is not one of those three, or no record holds it.
    """
    if metric not in ("dev_chrf", "dev_bleu", "dev_loss"):
        raise ValueError(f"metric must be 'dev_chrf', 'dev_bleu' or 'dev_loss', got {metric!r}")
    evals = [r for r in records if metric in r]
    if not evals:
        raise ValueError(f"no record holds {metric}: was the run trained with its dev evaluations?")
    sign = 1 if metric == "dev_loss" else -1
    return min(evals, key=lambda r: (sign * r[metric], r["step"]))["step"]


def load_shipped(path=AVG_FILE) -> tuple[nn.Module, list[int]]:
    """(model in eval mode, the steps it averages) from a file ``ship`` wrote; weights loaded as float32.

    Raises:
        FileNotFoundError: the file is missing (the message gives the commands that make it).
        ValueError: the file is not a shipped model, or holds the weights of another model.
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `python -m utils.tasks.translation train`, then "
                                "`python -m utils.tasks.translation ship`")
    expected = "a shipped translation model (a dict with keys ['config', 'state_dict', 'steps'])"
    saved = torch_load(path, expected, "remake it with `python -m utils.tasks.translation ship` (or restore it with git)")
    if not isinstance(saved, dict) or set(saved) != {"steps", "config", "state_dict"}:
        got = sorted(saved) if isinstance(saved, dict) else type(saved).__name__
        raise ValueError(f"{path} must be {expected}, got {got}")
    try:
        model = new_model(saved["config"].get("model") if isinstance(saved["config"], dict) else None)
        model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in saved["state_dict"].items()})
    except (RuntimeError, AttributeError, TypeError) as error:
        raise ValueError(f"{path} holds the weights of another model: {str(error)[:200]}") from None
    return model.eval(), list(saved["steps"])


def score_shipped(path=AVG_FILE, split="test", decode="beam", sentences=None, device="cpu", cache=None) -> dict:
    """``score_pairs`` of the shipped model on a split (default: the test split, beam 4, alpha 0.6),
    optionally on its first ``sentences`` pairs only, on ``device`` ("cpu" or "cuda"), ``cache`` as
    in ``translate``; the dict also holds "steps".

    Raises:
        ValueError: ``split`` is not a split; ``sentences`` is not None or an int >= 1; ``device`` is
            not "cpu" or "cuda".
        RuntimeError: ``device`` is "cuda" and PyTorch sees no GPU.
    """
    if split not in tr.SPLITS:
        raise ValueError(f"split must be one of {tuple(tr.SPLITS)}, got {split!r}")
    if sentences is not None and (not is_int(sentences) or sentences < 1):
        raise ValueError(f"sentences must be None (all) or an int >= 1, got {sentences!r}")
    device = resolve_device(device)
    model, steps = load_shipped(path)
    pairs = tr.cached_pairs(tr.data_path())[split][:sentences]
    model = model.to(device)
    return dict(score_pairs(model, pairs, decode=decode, cache=cache), steps=steps)


def shipped_path(which: str) -> pathlib.Path:
    """The file of a shipped model: "avg" (``AVG_FILE``) or "last" (``LAST_FILE``).

    Raises:
        ValueError: ``which`` is neither.
    """
    if which not in ("avg", "last"):
        raise ValueError(f"which must be 'avg' (the averaged checkpoints) or 'last' (the last one), got {which!r}")
    return AVG_FILE if which == "avg" else LAST_FILE


def decode_test_split(path=OUTPUTS_FILE, progress=True, threads=1, device="cpu", cache=None) -> pathlib.Path:
    """Translate the test split with both shipped models, greedy and beam (4, alpha 0.6); write ``path``.

    Chapter 16 reads these outputs instead of translating the test sentences four times (minutes
    on one core), and ``tests/test_translation_train.py`` translates a sample
    again and compares. The file (JSON) holds the distinct German test sentences in order
    (``data.reference_streams``), the steps each model averages, the machine, and
    for each (weights, decoding) of ``OUTPUT_KINDS`` one English sentence per source.
    ``threads`` sets PyTorch's CPU threads: more threads than free cores can make decoding
    many times slower (OpenMP threads wait for each other), and one thread decodes the
    same tokens on every run. ``device`` ("cpu" or "cuda") is where the models run; ``cache`` as
    in ``translate``.

    Raises:
        ValueError: ``threads`` is not an int >= 1; ``device`` is not "cpu" or "cuda".
        RuntimeError: ``device`` is "cuda" and PyTorch sees no GPU.
    """
    if not is_int(threads) or threads < 1:
        raise ValueError(f"threads must be an int >= 1, got {threads!r}")
    device = resolve_device(device)
    torch.set_num_threads(int(threads))
    sources, _ = tr.reference_streams(tr.cached_pairs(tr.data_path())["test"])
    record = dict(kind="translation test outputs", sources=sources, versions=run_versions(), steps={}, outputs={})
    for which, decode in OUTPUT_KINDS:
        model, steps = load_shipped(shipped_path(which))
        model = model.to(device)
        record["steps"][which] = steps
        start = time.perf_counter()
        record["outputs"][f"{which} {decode}"] = translate(model, sources, decode=decode, cache=cache)
        if progress:
            print(f"{which} {decode}: {len(sources):,} sentences in {time.perf_counter() - start:.0f} s")
    path = pathlib.Path(path)
    path.write_text(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    return path


def replace_test_outputs(path=REPLACED_FILE, threads=1, device="cpu") -> pathlib.Path:
    """Apply ``replace.replace_unseen`` (the dictionary's single-word entries, the train split)
    to the shipped average's beam translations of the test split, with that model's
    cross-attention; write ``path`` (JSON: the sources, the translations, the count of German
    words replaced, the rule's ``RARE``). About a minute on one thread; chapter 16 reads the file.
    ``device`` ("cpu" or "cuda") is where the model runs.

    Raises:
        ValueError: ``threads`` is not an int >= 1; ``device`` is not "cpu" or "cuda".
        RuntimeError: ``device`` is "cuda" and PyTorch sees no GPU.
    """
    from . import baselines, replace  # (replace imports baselines, which chapter 16 teaches first)

    if not is_int(threads) or threads < 1:
        raise ValueError(f"threads must be an int >= 1, got {threads!r}")
    device = resolve_device(device)
    torch.set_num_threads(int(threads))
    outputs = load_test_outputs()
    model, steps = load_shipped(AVG_FILE)
    model = model.to(device)
    hyps, replaced = replace.replace_unseen(model, outputs["sources"], outputs["avg", "beam"],
                                            baselines.single_word_entries(), tr.cached_pairs(tr.data_path())["train"])
    record = dict(kind="translation test outputs, unseen words replaced", rare=replace.RARE, steps=steps,
                  replaced=replaced, versions=run_versions(), sources=outputs["sources"], hyps=hyps)
    path = pathlib.Path(path)
    path.write_text(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    return path


def load_replaced_outputs(path=REPLACED_FILE) -> dict:
    """What ``replace_test_outputs`` wrote: {"sources", "hyps", "replaced", "rare", "steps", "versions"}.

    Raises:
        FileNotFoundError: the file is missing.
        ValueError: it is not readable JSON, not these outputs, or not one translation per source.
    """
    path = pathlib.Path(path)
    record = read_record(path, "translation test outputs, unseen words replaced",
                          "run `python -m utils.tasks.translation replace --out PATH`")
    if len(record.get("hyps", ())) != len(record.get("sources", [None])):
        raise ValueError(f"{path} does not hold one translation per source")
    return record


def read_record(path: pathlib.Path, kind: str, missing: str, remake: str | None = None) -> dict:
    """The JSON object of a shipped file whose "kind" field is ``kind``. ``missing`` says how to
    make a missing file; ``remake``, if given, ends the message of an unreadable or foreign one."""
    end = f"; {remake}" if remake else ""
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: {missing}")
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not readable JSON ({error}){end}") from None
    if not isinstance(record, dict) or record.get("kind") != kind:
        raise ValueError(f"{path} is not a file of {kind} (its 'kind' field differs){end}")
    return record


def load_test_outputs(path=OUTPUTS_FILE) -> dict:
    """The shipped translations of the test split: {"sources": [...], "steps": {"avg": [...], "last": [...]},
    (which, decode): [English, ...] for each of ``OUTPUT_KINDS``}.

    Raises:
        FileNotFoundError: the file is missing (the message gives the command that makes it).
        ValueError: the file is not readable JSON or not these outputs (the message names it and
            the command that remakes it), or its sources are not this data's test split.
    """
    path = pathlib.Path(path)
    remake = "rerun `python -m utils.tasks.translation decode`"
    record = read_record(path, "translation test outputs", "run `python -m utils.tasks.translation decode`", remake)
    sources, outputs = record.get("sources"), record.get("outputs")
    kinds = [f"{w} {d}" for w, d in OUTPUT_KINDS]
    if not isinstance(outputs, dict) or not all(
            isinstance(outputs.get(k), list) and all(isinstance(h, str) for h in outputs[k]) for k in kinds):
        raise ValueError(f"{path}: 'outputs' must map each of {kinds} to a list of strings; {remake}")
    if sources != tr.reference_streams(tr.cached_pairs(tr.data_path())["test"])[0]:
        raise ValueError(f"{path}: its sources are not the test split of this dictionary; {remake}")
    out = {"sources": sources, "steps": record.get("steps")}
    for which, decode in OUTPUT_KINDS:
        hyps = outputs[f"{which} {decode}"]
        if len(hyps) != len(sources):
            raise ValueError(f"{path}: {which} {decode} has {len(hyps)} outputs for {len(sources)} sources; {remake}")
        out[which, decode] = hyps
    return out


def load_judged(path=JUDGED_FILE) -> dict[str, dict[str, tuple[str, bool]]]:
    """A person's verdicts on chapter 16's everyday sentences: {system: {German: (the translation
    judged, right?)}}. The file also states the rule (its "rule" field); chapter 16 checks that
    each system still translates each sentence as judged, so a new model cannot inherit old verdicts.

    Raises:
        FileNotFoundError: the file is missing.
        ValueError: the file is not readable JSON or not verdicts of this shape.
    """
    path = pathlib.Path(path)
    judged = read_record(path, "translation verdicts", "restore it with git (it holds a person's verdicts)").get("judged")
    if not isinstance(judged, dict) or not all(
            isinstance(v, dict) and all(isinstance(t, list) and len(t) == 2 and isinstance(t[0], str)
                                        and isinstance(t[1], bool) for t in v.values()) for v in judged.values()):
        raise ValueError(f"{path} must hold judged: {{system: {{German: "
                         f"[translation, true or false]}}}}")
    return {name: {de: (t, ok) for de, (t, ok) in v.items()} for name, v in judged.items()}


def per_word(xent: float, pairs, sp=None) -> float:
    """A cross-entropy per target piece (``dev_cross_entropy``, ``</s>`` included) of text ``pairs``
    in vocabulary ``sp`` (default: the shipped one), as nats per English word: the total over
    the pairs' pieces divided by their words (split at spaces), each sentence's ``</s>``
    counted as one word. Runs with different vocabularies cut the same sentences into
    different numbers of pieces, so only the loss per word compares them.

    Raises:
        ValueError: ``pairs`` is empty.
    """
    if not pairs:
        raise ValueError("per_word needs at least one (German, English) pair, got none")
    pieces = sum(len(tr.encode(en, sp)) + 1 for _, en in pairs)
    words = sum(len(en.split()) + 1 for _, en in pairs)
    return xent * pieces / words


def dev_cross_entropy(model, pairs, sp=None) -> float:
    """Cross-entropy (nats per target piece, ``</s>`` included) of ``model`` on text ``pairs``,
    without label smoothing: a held-out loss that runs trained with different ``eps_ls`` share
    (the loss their logs record is smoothed with their own ``eps_ls``). One thread, eval mode."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return dev_loss(model, tr.encode_pairs(pairs, sp), LabelSmoothingLoss(0.0))
    finally:
        torch.set_num_threads(threads)


def load_run_flops(path=RUN_FLOPS_FILE) -> dict[str, dict[int, int]]:
    """What ``experiments.translation.write_run_flops`` wrote: {run: {evaluated step: training FLOPs}}.

    Raises:
        FileNotFoundError: the file is missing.
        ValueError: it is not readable JSON or not a file of run FLOPs.
    """
    record = read_record(pathlib.Path(path), "translation run flops",
                          "write it with `python -m utils.experiments.translation measure-flops`")
    return {name: {int(k): v for k, v in steps.items()} for name, steps in record["runs"].items()}


def load_dev_outputs(path) -> dict:
    """A file ``experiments.translation.ship_measurement`` wrote: {"step", "train_flops", "dev_cross_entropy", "sources", "hyps",
    "versions"}.

    Raises:
        FileNotFoundError: the file is missing.
        ValueError: it is not readable JSON or not dev outputs.
    """
    path = pathlib.Path(path)
    record = read_record(path, "translation dev outputs",
                          "ship the run with `python -m utils.experiments.translation measure-run`")
    if len(record.get("hyps", ())) != len(record.get("sources", [None])):
        raise ValueError(f"{path} is not a file of translation dev outputs with one translation per source")
    return record
