"""The paper's own task in miniature: German to English translation, data and subwords.

The sentences come from Debian's ``trans-de-en`` package (version 1.9-6: the Ding
German-English dictionary of TU Chemnitz, GPL-2+), whose entries end with real
human translations of example sentences. Install it once (Debian, Ubuntu, Colab,
Kaggle)::

    sudo apt-get install trans-de-en      # writes /usr/share/trans/de-en

or point ``TRANS_DE_EN`` (or the ``path`` argument) at a copy of that file. Each line
reads ``German | German | ... :: English | English | ...``; the ``|``-separated parts
are aligned one to one.

The subwords follow section 5.1: byte-pair encoding (Sennrich et al. 2016) with one
vocabulary shared by both languages, so the model can tie its two embeddings and its
output layer (section 3.4). ``learn_bpe`` is the algorithm by hand; ``train_vocab``
trains the real vocabulary with ``sentencepiece``, which learns the same merges on
a small corpus (``bpe_merges_agree``).

Ship the vocabulary, measure the sizes; train, ship and score the model (``utils.tasks.translation.train``)::

    .venv/bin/python -m utils.tasks.translation vocab       # utils/checkpoints/translation/de_en_bpe.model
    .venv/bin/python -m utils.tasks.translation measure     # tokens per sentence and rare dev tokens per size
    .venv/bin/python -m utils.tasks.translation train --workdir _build_mt --steps 9500 --threads 1 [--phrases] [--size base] [--seed 0]
    .venv/bin/python -m utils.tasks.translation ship --workdir _build_mt --out utils/checkpoints/translation/de_en_avg.pt
    .venv/bin/python -m utils.tasks.translation score       # test BLEU and chrF of the shipped average, beam 4
    .venv/bin/python -m utils.tasks.translation decode --out utils/checkpoints/translation/de_en_test_outputs.json
"""

from __future__ import annotations

import collections
import functools
import io
import os
import pathlib
import re
import tempfile
import unicodedata
import zlib

from ...core.checks import id_list, is_int
from ...core.env import CHECKPOINTS
from ...core.masks import BOS_ID, EOS_ID, PAD_ID

#: Where Debian's package puts the dictionary; ``TRANS_DE_EN`` or ``path=`` override it.
DATA = pathlib.Path("/usr/share/trans/de-en")
ENV_VAR = "TRANS_DE_EN"
INSTALL = "sudo apt-get install trans-de-en"
#: The header line ``# Version :: ...`` of the file Debian's trans-de-en 1.9-6 ships;
#: the counts quoted in this module and asserted by the tests hold for it.
DATA_VERSION = "devel 2023-01-30"

#: A sentence's own bucket is ``zlib.crc32(split_key(german)) % 100``: 0-79 train, 80-89 dev,
#: 90-99 test. Sentences one word apart (``twin_groups``) then go together to the first of
#: train, dev, test that one of them names (``load_pairs``).
SPLITS = {"train": range(0, 80), "dev": range(80, 90), "test": range(90, 100)}
#: How ``load_pairs`` splits: "twins" (the course's rule: one-word twins together) or
#: "buckets" (each sentence by its own bucket: the rule of the runs made before twins
#: were grouped, kept so that their logs still replay).
SPLIT_RULES = ("twins", "buckets")

#: A sentence ends with one of these, on both sides.
SENTENCE_END = ".?!"
#: A kept sentence holds none of these (the dictionary's grammar and usage notes).
ANNOTATION_CHARS = "{}[]();/"
#: A kept sentence has at least this many words on each side.
MIN_WORDS = 3
#: Dictionary placeholders that end a German phrase with a dot without making it a sentence.
ABBREVIATIONS = ("etw.", "jdm.", "jdn.", "jds.", "jd.", "usw.", "etc.")
_ANNOTATION = re.compile(r"\{[^{}]*\}|\[[^\[\]]*\]|\([^()]*\)")
_PUNCT = re.compile(r"[^\w\s]")

#: The shipped shared vocabulary (the size chosen in ``VOCAB_SIZE``, trained on the train split).
#: ``python -m utils.tasks.translation measure`` on 1.9-6's dev split (tokens per sentence; share of
#: dev tokens that are <unk>, or pieces seen fewer than 10 times in the encoded train split):
#:
#:   size  German  English   <unk>  rare
#:   1000   18.65    17.50  0.002%  0.02%
#:   2000   16.11    15.26  0.002%  0.06%
#:   4000   14.19    13.38  0.003%  0.39%
#:   8000   12.59    12.04  0.003%  6.97%
#:
#: 4000 keeps sequences short (about 1.8 pieces per word) while almost every piece is
#: seen often enough in training to learn its embedding; at 8000, 7% of dev tokens are rare.
#: (Chapter 16 reruns this measurement.)
SHIPPED = CHECKPOINTS / "translation"
VOCAB_SIZE = 4000
VOCAB_FILE = SHIPPED / "de_en_bpe.model"
#: The course's special ids (``utils.core.masks``) and sentencepiece's unknown piece after them.
UNK_ID = 3


# ---------------------------------------------------------------- reading the dictionary

def data_path(path=None) -> pathlib.Path:
    """The dictionary file: ``path`` if given, else ``$TRANS_DE_EN``, else ``/usr/share/trans/de-en``.

    Raises:
        FileNotFoundError: the file is missing (the message gives the install command).
    """
    chosen = pathlib.Path(path if path is not None else os.environ.get(ENV_VAR) or DATA)
    if not chosen.is_file():
        raise FileNotFoundError(f"{chosen} is missing: the German-English sentences come from Debian's trans-de-en "
                                f"package; install it with `{INSTALL}` (Debian, Ubuntu, Colab, Kaggle), or set "
                                f"{ENV_VAR} (or pass path=) to a copy of its file de-en")
    return chosen


def data_version(path=None) -> str:
    """The file's own version line, ``'devel 2023-01-30'`` for trans-de-en 1.9-6 ('' if it has none)."""
    with data_path(path).open(encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                break
            if line.startswith("# Version :: "):
                return line.split(" :: ", 1)[1].strip()
    return ""


def normalize(text: str) -> str:
    """Unicode NFC, whitespace runs to one space, no space at either end.

    Raises:
        TypeError: ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__} {text!r:.60}")
    return " ".join(unicodedata.normalize("NFC", text).split())


def _aligned_parts(path=None, counts=None):
    """Yield (German part, English part), normalised, for every aligned part of every entry.

    Lines that are comments (``#``), blank, without exactly one `` :: `` or whose two
    sides have different numbers of ``|`` parts are skipped and counted in ``counts``.
    """
    counts = collections.Counter() if counts is None else counts
    path = data_path(path)
    with path.open(encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                counts["comment or blank lines"] += 1
                continue
            sides = line.split(" :: ")
            if len(sides) != 2 or len(de := sides[0].split(" | ")) != len(en := sides[1].split(" | ")):
                counts["unaligned lines"] += 1
                continue
            counts["entries"] += 1
            for d, e in zip(de, en):
                counts["aligned parts"] += 1
                yield normalize(d), normalize(e)
    if not counts["entries"]:
        raise ValueError(f"{path} is not the Ding dictionary: expected lines 'German | ... :: English | ...' "
                         f"(from `{INSTALL}`), found none among {counts['comment or blank lines'] + counts['unaligned lines']} lines")


def sentence_reject(german: str, english: str) -> str | None:
    """Why an aligned part is not kept as a sentence pair, or None when it is kept.

    The filter, in this order (the first failing test names the reason):
    'no sentence end' (either side does not end in ``.``, ``?`` or ``!``), 'too short'
    (either side has fewer than ``MIN_WORDS`` = 3 words), 'annotation' (either side
    holds one of ``{}[]();/``: grammar notes, alternatives, abbreviations).
    """
    if german[-1:] not in SENTENCE_END or english[-1:] not in SENTENCE_END or not german or not english:
        return "no sentence end"
    if len(german.split()) < MIN_WORDS or len(english.split()) < MIN_WORDS:
        return "too short"
    if any(c in ANNOTATION_CHARS for c in german + english):
        return "annotation"
    return None


def sentence_pairs(path=None, counts=None) -> list[tuple[str, str]]:
    """Every (German, English) sentence pair of the dictionary, in file order, each once.

    Each aligned part is normalised (``normalize``: NFC and single spaces), kept if
    ``sentence_reject`` finds no reason against it, and dropped if the same (German,
    English) pair came earlier. A German sentence with two different English
    translations keeps both pairs (53 German sentences in 1.9-6): both are training
    examples, and in dev and test they are two references for one source
    (``references``). Pass a ``collections.Counter`` as ``counts`` to get the count of
    every step; for trans-de-en 1.9-6: 206,233 entries, 391,763 aligned parts, of
    which 372,505 lack a sentence end, 448 are too short and 4,134 hold an annotation;
    14,676 pairs are left, 4 of them repeats: 14,672 pairs (14,619 German sentences).

    Raises:
        FileNotFoundError: the dictionary is missing (the message gives the install command).
        ValueError: the file is not the dictionary.
    """
    counts = collections.Counter() if counts is None else counts
    seen, out = set(), []
    for de, en in _aligned_parts(path, counts):
        reason = sentence_reject(de, en)
        if reason:
            counts[f"dropped: {reason}"] += 1
        elif (de, en) in seen:
            counts["dropped: repeated pair"] += 1
        else:
            seen.add((de, en))
            out.append((de, en))
    counts["sentence pairs"] = len(out)
    return out


def split_key(german: str) -> str:
    """The form of a German sentence that decides its split: normalised, case-folded
    (so ``ß`` -> ``ss``), punctuation removed, single spaces.

    'Ich habe keine Ahnung!' and 'Ich habe keine Ahnung.' share the key
    'ich habe keine ahnung', so near-duplicates land in the same split.

    Raises:
        TypeError: ``german`` is not a str.
    """
    return " ".join(_PUNCT.sub(" ", normalize(german).casefold()).split())


def split_of_german(german: str) -> str:
    """A sentence's own bucket: 'train', 'dev' or 'test' as ``zlib.crc32(split_key(german)) % 100``
    is in 0-79, 80-89, 90-99.

    The bucket is by German sentence (its ``split_key``), so every translation of a
    sentence, and every spelling of it that differs only in case or punctuation, lies on
    one side. ``load_pairs`` then moves sentences one word apart to one side.

    Raises:
        TypeError: ``german`` is not a str.
    """
    bucket = zlib.crc32(split_key(german).encode("utf-8")) % 100
    return next(name for name, r in SPLITS.items() if bucket in r)


def twin_forms(key: str) -> set[tuple[str, ...]]:
    """The words of a ``split_key``, whole and with each one word removed: two sentences are
    one-word twins when their forms meet, that is when removing at most one word from each
    makes them equal ('ich wollte nur helfen' and 'sie wollte nur helfen': a word replaced;
    'ich wollte helfen': a word removed; a word moved elsewhere also counts)."""
    words = tuple(key.split())
    return {words} | {words[:i] + words[i + 1:] for i in range(len(words))}


def twin_groups(germans) -> dict[str, str]:
    """Groups of one-word twins (``twin_forms``): {``split_key``: the group's smallest key}.

    A group is every key reachable by steps from twin to twin (union-find over the keys
    that share a form). For trans-de-en 1.9-6 the 14,611 keys of the sentence pairs form
    14,285 groups, the largest of 16 keys.

    Raises:
        TypeError: an item of ``germans`` is not a str.
    """
    keys = sorted({split_key(de) for de in germans})
    parent = {k: k for k in keys}

    def root(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    sharing = collections.defaultdict(list)
    for k in keys:
        for form in twin_forms(k):
            sharing[form].append(k)
    for group in sharing.values():
        for k in group[1:]:
            a, b = root(group[0]), root(k)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {k: root(k) for k in keys}


def load_pairs(path=None, split_rule: str = "twins") -> dict[str, list[tuple[str, str]]]:
    """``sentence_pairs()`` split by German sentence, one-word twins together:
    {split: [(German, English), ...]}.

    Each sentence's own bucket (``split_of_german``) names a split; a group of sentences
    one word apart (``twin_groups``) goes to the first of train, dev, test that one of its
    members names, so that no test sentence is one word away from a training sentence.
    For trans-de-en 1.9-6 that moves 41 dev and 38 test sentences to train and 5 test
    sentences to dev: train 11,962 pairs (11,913 German sentences), dev 1,414 (1,413),
    test 1,296 (1,293). Pairs keep file order within each split. With ``split_rule="buckets"``
    each sentence stays in its own bucket: train 11,881 pairs (11,834 German sentences), dev
    1,451 (1,449), test 1,340 (1,336), the split of the runs made before.

    Raises:
        FileNotFoundError, ValueError: as for ``sentence_pairs``; ValueError also for a
            ``split_rule`` not in ``SPLIT_RULES``.
    """
    check_split_rule(split_rule)
    pairs = sentence_pairs(path)
    if split_rule == "buckets":
        out = {name: [] for name in SPLITS}
        for de, en in pairs:
            out[split_of_german(de)].append((de, en))
        return out
    groups = twin_groups(de for de, _ in pairs)
    order = list(SPLITS)
    first = {}
    for de, _ in pairs:
        g = groups[split_key(de)]
        own = order.index(split_of_german(de))
        first[g] = min(first.get(g, own), own)
    out = {name: [] for name in SPLITS}
    for de, en in pairs:
        out[order[first[groups[split_key(de)]]]].append((de, en))
    return out


def check_split_rule(split_rule) -> None:
    """Raise ValueError unless ``split_rule`` is one of ``SPLIT_RULES``."""
    if not isinstance(split_rule, str) or split_rule not in SPLIT_RULES:
        raise ValueError(f"split_rule must be one of {SPLIT_RULES}, got {split_rule!r}")


@functools.lru_cache(maxsize=4)
def cached_pairs(path, split_rule: str = "twins") -> dict[str, list[tuple[str, str]]]:
    """``load_pairs(path, split_rule)``, parsed once per process, for code that only reads it (never mutate it)."""
    return load_pairs(path, split_rule)


def references(pairs) -> dict[str, list[str]]:
    """{German: [English, ...]}: the references of each source sentence, in order of first appearance.

    Raises:
        TypeError: ``pairs`` is not a list of (str, str).
    """
    if not isinstance(pairs, (list, tuple)) or not all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(s, str) for s in p) for p in pairs):
        raise TypeError(f"pairs must be a list of (German, English) strings, got {pairs!r:.80}")
    out = {}
    for de, en in pairs:
        out.setdefault(de, []).append(en)
    return out


def reference_streams(pairs) -> tuple[list[str], list[list[str | None]]]:
    """(German sources, reference streams) in the form sacrebleu's ``corpus_score`` takes.

    One source per distinct German sentence; stream k holds each source's k-th English
    reference, or None where it has fewer (sacrebleu then scores with a variable number
    of references and its signature says ``nrefs:var``). For the test split of 1.9-6:
    1,293 sources, 2 streams (3 sources have a second reference).

    Raises:
        TypeError: as for ``references``.
    """
    refs = references(pairs)
    k = max(map(len, refs.values()), default=0)
    return list(refs), [[r[j] if j < len(r) else None for r in refs.values()] for j in range(k)]


# ---------------------------------------------------------------- words and short phrases

def clean_phrase(text: str) -> str:
    """A dictionary part without its ``{...}``, ``[...]`` and ``(...)`` notes, first alternative only.

    'Haus {n} [arch.]; Gebäude {n}' -> 'Haus' (alternatives are separated by ``;``).
    Returns '' when nothing is left.
    """
    previous = None
    while previous != text:  # inner brackets first: 'a (b (c))' -> 'a (b )' -> 'a'
        previous, text = text, _ANNOTATION.sub(" ", text)
    return next((normalize(a) for a in text.split(";") if a.strip()), "")


def _key_words(text) -> tuple[str, ...]:
    return tuple(split_key(text).split())


def _contains(words: tuple, index: dict) -> bool:
    """Whether the word sequence ``words`` contains one of the sentences of ``index`` (first word -> sentences)."""
    for i, w in enumerate(words):
        for sentence in index.get(w, ()):
            if words[i : i + len(sentence)] == sentence:
                return True
    return False


def phrase_pairs(path=None, protect=("dev", "test"), counts=None, split_rule: str = "twins") -> list[tuple[str, str]]:
    """The dictionary's words and short phrases as (German, English) pairs, each once.

    Every aligned part that is not a sentence pair (``sentence_reject``) is cleaned by
    ``clean_phrase`` on both sides ('Haus {n} :: house' -> ('Haus', 'house')); it is
    dropped when a side is empty, still holds a bracket, or the German still ends like
    a sentence (``.``, ``?``, ``!``, unless with a placeholder such as 'etw.'). To keep
    the held-out sentences unseen, a pair is dropped when its German (or English), by
    ``split_key`` words, equals or contains a German (or English) sentence of a split
    in ``protect`` (words such as 'do-it-yourself' that contain the 3-word sentence 'Do
    it yourself!' go too: the check errs on the safe side). For 1.9-6: of 377,087
    non-sentence parts, 60 are empty after cleaning, 5 keep a bracket, 6,419 are
    sentence-like, 3,231 repeat a pair and 14 hold a dev or test sentence: 367,358
    phrase pairs are left (with the sentences of ``split_rule="buckets"``' splits: 18 and
    367,354). Pass a ``collections.Counter`` as ``counts`` for these counts.

    Raises:
        FileNotFoundError, ValueError: as for ``sentence_pairs``; ValueError also for a
            ``protect`` name that is not a split, or a ``split_rule`` not in ``SPLIT_RULES``.
    """
    check_split_rule(split_rule)
    if isinstance(protect, str) or not all(p in SPLITS for p in protect):
        raise ValueError(f"protect must be a tuple of split names from {tuple(SPLITS)}, got {protect!r}")
    counts = collections.Counter() if counts is None else counts
    index = {}  # first key word -> key words of every protected sentence (German and English)
    for name in protect:
        for de, en in cached_pairs(data_path(path), split_rule)[name]:
            for words in (_key_words(de), _key_words(en)):
                index.setdefault(words[0], set()).add(words)
    seen, out = set(), []
    for de, en in _aligned_parts(path, collections.Counter()):
        if sentence_reject(de, en) is None:
            continue
        counts["non-sentence parts"] += 1
        d, e = clean_phrase(de), clean_phrase(en)
        if not d or not e:
            counts["dropped: empty after cleaning"] += 1
        elif any(c in "{}[]()" for c in d + e):
            counts["dropped: unbalanced brackets"] += 1
        elif d[-1] in SENTENCE_END and not d.endswith(ABBREVIATIONS):
            counts["dropped: sentence-like"] += 1
        elif (d, e) in seen:
            counts["dropped: repeated pair"] += 1
        elif seen.add((d, e)) or _contains(_key_words(d), index) or _contains(_key_words(e), index):
            counts["dropped: holds a protected sentence"] += 1
        else:
            out.append((d, e))
    counts["phrase pairs"] = len(out)
    return out


# ---------------------------------------------------------------- BPE by hand (section 5.1)

#: The end-of-word marker of ``learn_bpe``: sentencepiece's U+2581, one character, so
#: a merged symbol's length in characters is the same for both.
END = "\u2581"
#: A corpus a reader can follow by hand (word -> count); ``bpe_merges_agree`` uses it.
TINY_WORDS = {"Haus": 5, "Häuser": 2, "house": 6, "houses": 3, "Maus": 4, "mouse": 3}


def _check_words(words_with_counts):
    if not isinstance(words_with_counts, dict) or not words_with_counts:
        raise TypeError(f"words_with_counts must be a non-empty dict word -> count such as {{'Haus': 5}}, "
                        f"got {words_with_counts!r:.80}")
    for w, c in words_with_counts.items():
        if not isinstance(w, str) or not w or any(ch.isspace() or ch == END for ch in w):
            raise ValueError(f"every word must be a non-empty str without spaces or {END!r}, got {w!r}")
        if not is_int(c) or c < 1:
            raise ValueError(f"every count must be a positive int, got {c!r} for {w!r}")


def merge_pair(symbols: tuple, pair: tuple) -> tuple:
    """Replace every occurrence of ``pair`` in ``symbols``, left to right, by the joined symbol."""
    out, i = [], 0
    while i < len(symbols):
        if symbols[i : i + 2] == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def learn_bpe(words_with_counts, num_merges) -> list[tuple[str, str]]:
    """Byte-pair encoding by hand (Sennrich et al. 2016; paper section 5.1).

    Start with every word as its characters followed by ``END``; then, ``num_merges``
    times, count every adjacent pair of symbols (weighted by the word's count) and
    merge the most frequent pair everywhere. Ties go to the pair whose merged symbol
    is shorter, then to the alphabetically first (by code point), the rule
    sentencepiece uses, so both learn the same merges (``bpe_merges_agree``). Stops
    early when no pair is left.

    Args:
        words_with_counts: dict word -> positive int count, e.g. ``TINY_WORDS``.
        num_merges: the number of merges (int >= 0).

    Returns:
        The merges in order, each a pair of symbols such as ('u', 's').

    Raises:
        TypeError: ``words_with_counts`` is not a non-empty dict.
        ValueError: a word is empty or holds a space or ``END``, a count or ``num_merges``
            is not a (positive) int.
    """
    _check_words(words_with_counts)
    if not is_int(num_merges) or num_merges < 0:
        raise ValueError(f"num_merges must be an int >= 0, got {num_merges!r}")
    vocab = {tuple(word) + (END,): count for word, count in words_with_counts.items()}
    merges = []
    for _ in range(num_merges):
        pairs = collections.Counter()
        for symbols, count in vocab.items():
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] += count
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], len(p[0] + p[1]), p[0] + p[1]))
        merges.append(best)
        vocab = {merge_pair(symbols, best): count for symbols, count in vocab.items()}
    return merges


def apply_bpe(word: str, merges) -> list[str]:
    """Segment one word with learned merges, applied in their order: with the 10 merges
    ``learn_bpe(TINY_WORDS, 10)`` learns, 'Mäuse' -> ['M', 'ä', 'use', '▁']."""
    _check_words({word: 1})
    symbols = tuple(word) + (END,)
    for pair in merges:
        symbols = merge_pair(symbols, tuple(pair))
    return list(symbols)


def sentencepiece_merges(words_with_counts, num_merges) -> list[str]:
    """The merged symbols sentencepiece's BPE trainer learns from the same words, in order.

    The words go in as sentencepiece's ``tsv`` input (word, tab, count) with the
    whitespace marker as a suffix (``treat_whitespace_as_suffix``, like ``END``),
    every character kept (``character_coverage=1.0``) and no text normalisation;
    the vocabulary is the 3 special pieces, the characters and ``num_merges`` merges.
    A merged piece's score is minus its merge step, so the pieces of more than one
    character, in id order, are the merges in order.

    Raises:
        TypeError, ValueError: as for ``learn_bpe``; RuntimeError from sentencepiece when
            fewer than ``num_merges`` merges exist.
    """
    import sentencepiece as spm

    _check_words(words_with_counts)
    if not is_int(num_merges) or num_merges < 1:
        raise ValueError(f"num_merges must be a positive int, got {num_merges!r}")
    chars = set("".join(words_with_counts)) | {END}
    with tempfile.TemporaryDirectory() as tmp:
        tsv = pathlib.Path(tmp) / "words.tsv"
        tsv.write_text("".join(f"{w}\t{c}\n" for w, c in words_with_counts.items()), encoding="utf-8")
        spm.SentencePieceTrainer.train(
            input=str(tsv), input_format="tsv", model_prefix=str(pathlib.Path(tmp) / "bpe"), model_type="bpe",
            vocab_size=3 + len(chars) + num_merges, character_coverage=1.0, treat_whitespace_as_suffix=True,
            normalization_rule_name="identity", num_threads=1, minloglevel=2)
        sp = spm.SentencePieceProcessor(model_file=str(pathlib.Path(tmp) / "bpe.model"))
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if not (sp.is_control(i) or sp.is_unknown(i))]
    return [p for p in pieces if len(p) > 1]


def bpe_merges_agree(words_with_counts=None, num_merges=10) -> tuple[list[str], list[str]]:
    """(merges by hand, merges by sentencepiece), each as merged symbols: equal lists when they agree.

    On ``TINY_WORDS`` with 10 merges both give 'us', 'use', 'ouse', 'aus', 'aus▁',
    'house', 'house▁', 'Haus▁', 'Maus▁', 's▁'.
    """
    words_with_counts = TINY_WORDS if words_with_counts is None else words_with_counts
    hand = [a + b for a, b in learn_bpe(words_with_counts, num_merges)]
    return hand, sentencepiece_merges(words_with_counts, num_merges)


# ---------------------------------------------------------------- the shared vocabulary

def vocab_sentences(pairs) -> list[str]:
    """The text the vocabulary learns from: German then English of each pair, in order."""
    return [s for pair in pairs for s in pair]


def vocab_pairs(path=None) -> list[tuple[str, str]]:
    """The train pairs the vocabulary learns from: the train split of ``split_rule="buckets"``,
    in file order. The one-word twins that ``load_pairs`` moves into train from dev and test
    are left out: the shipped vocabulary was trained before they moved, and this keeps it
    the one ``train_vocab`` makes (it saw no dev or test sentence either way)."""
    return cached_pairs(data_path(path), "buckets")["train"]


def train_vocab(model_file, vocab_size=VOCAB_SIZE, path=None) -> pathlib.Path:
    """Train the shared BPE vocabulary on the train split (both languages; ``vocab_pairs``) with sentencepiece.

    Ids follow ``utils.core.masks``: 0 ``<pad>`` (PAD_ID), 1 ``<s>`` (BOS_ID), 2 ``</s>``
    (EOS_ID), 3 ``<unk>``. Every character of the train split is kept
    (``character_coverage=1.0``), no text normalisation beyond ``normalize``
    (``identity``, so ``decode(encode(s)) == s``), all sentences in file order, one
    thread: two trainings write the same bytes.

    Args:
        model_file: where to write the model (a path ending in ``.model``).
        vocab_size: pieces in all, specials included (an int >= 100).

    Returns:
        The path of the ``.model`` file.

    Raises:
        ValueError: ``vocab_size`` is not an int >= 100 (or too large for the data:
            sentencepiece's message says the largest possible); ``model_file`` does not
            end in ``.model``.
        FileNotFoundError: as for ``sentence_pairs``.
    """
    import sentencepiece as spm

    if not is_int(vocab_size) or vocab_size < 100:
        raise ValueError(f"vocab_size must be an int >= 100, got {vocab_size!r}")
    model = pathlib.Path(model_file)
    if model.suffix != ".model":
        raise ValueError(f"model_file must end in .model, got {str(model)!r}")
    written = io.BytesIO()  # not model_prefix: sentencepiece would store the path in the file
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(vocab_sentences(vocab_pairs(path))), model_writer=written,
            model_type="bpe", vocab_size=int(vocab_size), character_coverage=1.0,
            normalization_rule_name="identity", pad_id=PAD_ID, bos_id=BOS_ID, eos_id=EOS_ID, unk_id=UNK_ID,
            pad_piece="<pad>", bos_piece="<s>", eos_piece="</s>", unk_piece="<unk>",
            input_sentence_size=0, shuffle_input_sentence=False, num_threads=1, minloglevel=2)
    except RuntimeError as error:
        raise ValueError(f"sentencepiece could not train a vocabulary of {vocab_size}: {error}") from None
    model.parent.mkdir(parents=True, exist_ok=True)
    model.write_bytes(written.getvalue())
    return model


def load_vocab(model_file=VOCAB_FILE):
    """The sentencepiece processor of a trained vocabulary (default: the shipped one).

    Raises:
        FileNotFoundError: the file is missing (the message gives the command that makes it).
        ValueError: the file is not a sentencepiece model with the course's special ids.
    """
    import sentencepiece as spm

    model_file = pathlib.Path(model_file)
    if not model_file.is_file():
        raise FileNotFoundError(f"{model_file} is missing: run `python -m utils.tasks.translation vocab`")
    sp = spm.SentencePieceProcessor()
    try:
        sp.load(str(model_file))
    except (RuntimeError, OSError) as error:
        raise ValueError(f"{model_file} is not a sentencepiece model ({error}); remake it with "
                         "`python -m utils.tasks.translation vocab`") from None
    got = (sp.pad_id(), sp.bos_id(), sp.eos_id(), sp.unk_id())
    if got != (PAD_ID, BOS_ID, EOS_ID, UNK_ID):
        raise ValueError(f"{model_file}: special ids (pad, bos, eos, unk) must be {(PAD_ID, BOS_ID, EOS_ID, UNK_ID)} "
                         f"as in utils.core.masks, got {got}")
    return sp


@functools.lru_cache(maxsize=1)
def shipped_vocab():
    """The shipped vocabulary (``load_vocab(VOCAB_FILE)``), loaded once per process."""
    return load_vocab(VOCAB_FILE)


def encode(text: str, sp=None) -> list[int]:
    """A sentence -> its subword ids (no ``<s>``, no ``</s>``), with ``sp`` or the shipped vocabulary.

    The text is normalised first (``normalize``). Characters unseen in training become
    ``UNK_ID`` (3).

    Raises:
        TypeError: ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str such as 'Guten Morgen!', got {type(text).__name__} {text!r:.60}")
    return list((sp or shipped_vocab()).encode(normalize(text)))


def decode(ids, sp=None) -> str:
    """Subword ids -> text, stopping at ``</s>``; ``<pad>`` and ``<s>`` are dropped.

    Raises:
        TypeError: ``ids`` is not a list, 1-D tensor or 1-D NumPy array.
        ValueError: an id is not an int of the vocabulary.
    """
    sp = sp or shipped_vocab()
    out = []
    for i in id_list(ids):
        if not is_int(i) or not 0 <= i < sp.get_piece_size():
            raise ValueError(f"token id must be an int in 0..{sp.get_piece_size() - 1}, got {i!r}")
        if i == EOS_ID:
            break
        if i not in (PAD_ID, BOS_ID):
            out.append(int(i))
    return sp.decode(out)


def encode_pairs(pairs, sp=None) -> list[tuple[list[int], list[int]]]:
    """(German ids, English ids followed by ``</s>``) for every pair."""
    return [(encode(de, sp), encode(en, sp) + [EOS_ID]) for de, en in pairs]


# ---------------------------------------------------------------- choosing the size

def measure_vocab(sp, pairs_by_split, rare=10, split="dev") -> dict:
    """Tokens per sentence (German, English) on a held-out split (the dev split: sizes are
    chosen there, the test split is kept for the final score), and the share of its tokens
    that are ``<unk>`` or rare (a piece seen fewer than ``rare`` times in the encoded train
    split).

    Raises:
        ValueError: ``split`` is not 'dev' or 'test'.
    """
    if split not in ("dev", "test"):
        raise ValueError(f"split must be 'dev' or 'test' (held-out sentences), got {split!r}")
    train = collections.Counter(i for s in vocab_sentences(pairs_by_split["train"]) for i in sp.encode(s))
    test = pairs_by_split[split]
    de = [sp.encode(d) for d, _ in test]
    en = [sp.encode(e) for _, e in test]
    tokens = [i for ids in de + en for i in ids]
    return dict(vocab_size=sp.get_piece_size(), de_tokens=sum(map(len, de)) / len(de),
                en_tokens=sum(map(len, en)) / len(en), unk=sum(i == UNK_ID for i in tokens) / len(tokens),
                rare=sum(train[i] < rare for i in tokens) / len(tokens))
