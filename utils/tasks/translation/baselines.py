"""Word-by-word baselines for chapter 16, built from the same train pairs as the Transformer.

Three systems, each simpler than the last is clever:

- ``copy_source``: the German sentence itself (many names, numbers and loanwords are shared).
- IBM Model 1 (Brown et al. 1993, "The Mathematics of Statistical Machine Translation",
  section 4.1): a table t(e | f) of how likely German word f is to be translated by English
  word e, learned by expectation-maximisation from sentence pairs alone, with no word
  alignment given. Each English word of a pair is explained as a mixture over the pair's
  German words (and a NULL word for English words with no German source); EM counts each
  (f, e) co-occurrence by its share of that mixture and renormalises. Its posteriors are
  soft alignments: the ancestor of cross-attention. ``ibm1`` learns it; ``word_by_word``
  translates with it, one German word at a time.
- IBM Model 1, then the dictionary's single-word entries (``single_word_entries``: none
  holds a dev or test sentence, on either side) for German words never seen in train.

``words`` splits text as all three see it; ``join_words`` puts English words back together.
"""

from __future__ import annotations

import re

import numpy as np

from ...core.checks import is_int
from . import data as tr

#: A word is a run of letters and digits, with inner apostrophes ("don't", "I’m"); every
#: other visible character is a word of its own.
_WORD = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")
#: The German word that stands for "no German source" (IBM Model 1's empty word).
NULL = "<null>"
#: EM iterations of ``ibm1`` (the train split's log-likelihood changes by under 0.1% a word after 10).
IBM1_ITERATIONS = 10
_NO_SPACE_BEFORE = set(".,!?;:%)]}’”\"'")
_NO_SPACE_AFTER = set("([{„“‘")


def words(text: str) -> list[str]:
    """The words and punctuation marks of ``text``: 'Ich hab’s!' -> ['Ich', 'hab’s', '!'].

    Raises:
        TypeError: ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return _WORD.findall(text)


def word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each of ``words(text)`` in ``text``: 'Ich hab’s!' -> [(0, 3), (4, 9), (9, 10)].

    Raises:
        TypeError: ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return [m.span() for m in _WORD.finditer(text)]


def join_words(tokens) -> str:
    """English words back into a sentence: no space before ``. , ! ? ; :`` and closing
    marks, none after opening marks; the first letter and the pronoun 'i' ('i’m', ...)
    capitalised (the model learns lowercased English). ['so', 'i', 'am', 'here', '.'] -> 'So I am here.'"""
    out = ""
    for w in tokens:
        if out and w not in _NO_SPACE_BEFORE and out[-1] not in _NO_SPACE_AFTER:
            out += " "
        out += "I" + w[1:] if w == "i" or w[:2] in ("i'", "i’") else w
    return out[:1].upper() + out[1:]


def copy_source(sentences) -> list[str]:
    """The simplest baseline: each German sentence as its own translation."""
    return list(sentences)


def ibm1(pairs, iterations: int = IBM1_ITERATIONS) -> dict:
    """IBM Model 1's translation table t(e | f), learned by EM from (German, English) pairs.

    Both sides are lowercased and split by ``words``; each German sentence gets the word
    ``NULL``. Start from t(e | f) equal for every pair of words that co-occur in a
    sentence pair. Then each iteration, for every sentence pair (f_0 = NULL, f_1..f_m;
    e_1..e_l):

        E step: p(a_j = i) = t(e_j | f_i) / sum_i' t(e_j | f_i')   (who wrote e_j?)
        M step: t(e | f) = sum of p over every (f, e) met / sum of p over every f met

    Every (sentence, English position, German position) triple is one entry of flat
    arrays, so an iteration is two ``np.bincount`` calls; 10 iterations over the 11,962
    train pairs take about a second.

    Args:
        pairs: (German, English) sentence pairs.
        iterations: EM iterations (an int >= 1).

    Returns:
        dict(german=[German words], english=[English words], f=(k,) int64, e=(k,) int64,
        t=(k,) float64, log_likelihood=[per English word, after each iteration]): t[i]
        is t(english[e[i]] | german[f[i]]) for the k word pairs that co-occur.

    Raises:
        ValueError: ``iterations`` is not an int >= 1; ``pairs`` is empty.
        TypeError: a pair is not two strs.
    """
    if not is_int(iterations) or iterations < 1:
        raise ValueError(f"iterations must be an int >= 1, got {type(iterations).__name__} {iterations!r}")
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs must hold at least one (German, English) pair, got none")
    german, english = {NULL: 0}, {}
    f_ids, e_ids, group = [], [], []  # one entry per (sentence, English position, German position)
    position = 0  # English positions of all sentences, numbered in turn
    for s, pair in enumerate(pairs):
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            raise TypeError(f"pair {s} must be a (German, English) tuple of strs, got {pair!r:.80}")
        fs = [0] + [german.setdefault(w, len(german)) for w in words(pair[0].lower())]
        for e in words(pair[1].lower()):
            e_id = english.setdefault(e, len(english))
            f_ids += fs
            e_ids += [e_id] * len(fs)
            group += [position] * len(fs)
            position += 1
    f_ids, e_ids, group = np.array(f_ids), np.array(e_ids), np.array(group)
    # the distinct (f, e) pairs: t is stored once per pair, looked up per triple
    pair_key, pair_of = np.unique(f_ids * len(english) + e_ids, return_inverse=True)
    pf, pe = pair_key // len(english), pair_key % len(english)
    t = np.ones(len(pair_key))
    log_likelihood = []
    for _ in range(iterations):
        p = t[pair_of]
        total = np.bincount(group, p)                    # sum_i t(e_j | f_i), per English position
        posterior = p / total[group]                     # E step
        count = np.bincount(pair_of, posterior, len(pair_key))
        t = count / np.bincount(pf, count)[pf]           # M step: normalise over e for each f
        p = t[pair_of]
        log_likelihood.append(float(np.log(np.bincount(group, p) / np.bincount(group)).mean()))
    return dict(german=list(german), english=list(english), f=pf, e=pe, t=t, log_likelihood=log_likelihood)


def best_translations(table: dict) -> dict[str, str]:
    """{German word: its most likely English word, argmax_e t(e | f)} (ties: the English
    word met first in the data), for every German word of ``ibm1``'s table but ``NULL``."""
    order = np.lexsort((table["e"], -table["t"], table["f"]))  # by f, then t falling, then e
    first = order[np.r_[True, np.diff(table["f"][order]) != 0]]
    return {table["german"][f]: table["english"][e] for f, e in zip(table["f"][first], table["e"][first]) if f != 0}


def single_word_entries(phrases=None) -> dict[str, str]:
    """The dictionary's one-word German entries: {German word, lowercased: its first English
    translation, lowercased}, from ``data.phrase_pairs()`` (which drops every entry that holds
    a dev or test sentence, German or English), in file order."""
    out = {}
    for de, en in tr.phrase_pairs() if phrases is None else phrases:
        if len(words(de)) == 1:
            out.setdefault(de.lower(), en.lower())
    return out


def word_by_word(sentences, best: dict, lexicon=None) -> list[str]:
    """Translate each German sentence one word at a time: a word of ``best`` (lowercased) by
    its English word; else, with ``lexicon``, a word found there (the dictionary's entry,
    which may be several English words); else the German word itself, copied.

    Raises:
        TypeError: a sentence is not a str.
    """
    out = []
    for sentence in sentences:
        tokens = []
        for w in words(sentence):
            key = w.lower()
            if key in best:
                tokens.append(best[key])
            elif lexicon is not None and key in lexicon:
                tokens += words(lexicon[key])
            else:
                tokens.append(w)
        out.append(join_words(tokens))
    return out


def alignment(table: dict, german: str, english: str) -> tuple[list[str], list[str], np.ndarray]:
    """IBM Model 1's soft alignment of one sentence pair: for each English word, how its
    probability is shared among ``NULL`` and the German words (the E step of ``ibm1``).

    Returns:
        (German words with ``NULL`` first, English words, p (len(English), 1 + len(German)))
        where p[j, i] = t(e_j | f_i) / sum_i' t(e_j | f_i'); a row whose every t is 0 (an
        English word never met with these German words) is all 0. Words are lowercased.

    Raises:
        TypeError: ``german`` or ``english`` is not a str.
    """
    fs, es = [NULL] + words(german.lower()), words(english.lower())
    lookup = {(table["german"][f], table["english"][e]): t for f, e, t in zip(table["f"], table["e"], table["t"])}
    p = np.array([[lookup.get((f, e), 0.0) for f in fs] for e in es]).reshape(len(es), len(fs))
    total = p.sum(1, keepdims=True)
    return fs, es, np.divide(p, total, out=np.zeros_like(p), where=total > 0)
