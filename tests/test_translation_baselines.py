"""Tests of chapter 16's word-by-word baselines (utils/tasks/translation/baselines.py) and of the
paired bootstrap that compares systems (``train.paired_bootstrap``).

IBM Model 1 is checked on a three-pair corpus worked by hand, and on the train split against
its scores; the bootstrap against sacrebleu's corpus scores and its own seed.
"""

import numpy as np
import pytest

from utils.tasks.translation import baselines as bl
from utils.tasks.translation import data as tr
from utils.tasks.translation import train as mt

HAVE_DATA = tr.DATA.is_file()
needs_data = pytest.mark.skipif(not HAVE_DATA, reason=f"{tr.DATA} is missing: `{tr.INSTALL}`")

#: Three pairs a learner can work by hand (chapter 16's exercise uses them too).
TOY = [("das Haus", "the house"), ("das Buch", "the book"), ("ein Buch", "a book")]


def _t(table, f, e):
    for fi, ei, t in zip(table["f"], table["e"], table["t"]):
        if table["german"][fi] == f and table["english"][ei] == e:
            return t
    return 0.0


def test_words_and_join_words():
    assert bl.words("Ich hab’s, sagte er: „Nein!“") == ["Ich", "hab’s", ",", "sagte", "er", ":", "„", "Nein", "!", "“"]
    assert bl.words("I don't know.") == ["I", "don't", "know", "."]
    assert bl.join_words(["i", "don't", "know", ",", "do", "you", "?"]) == "I don't know, do you?"
    assert bl.join_words([]) == ""
    with pytest.raises(TypeError, match="text must be a str, got bytes"):
        bl.words(b"Haus")


def test_one_em_step_by_hand():
    """After one iteration from equal t: in 'das Haus / the house', 'the' is explained by NULL,
    'das' and 'Haus' a third each; 'das' meets 'the' twice and 'house' and 'book' once each."""
    table = bl.ibm1(TOY, iterations=1)
    # counts for f = 'das': the 1/3 (pair 1) + 1/3 (pair 2), house 1/3, book 1/3 -> t(the|das) = 2/4
    assert _t(table, "das", "the") == pytest.approx(0.5)
    assert _t(table, "das", "house") == pytest.approx(0.25)
    # 'buch' meets book twice (1/3 each) and the, a once each (1/3 each): t(book|buch) = 2/4
    assert _t(table, "buch", "book") == pytest.approx(0.5)
    for f in table["german"]:  # every t(. | f) sums to 1
        assert sum(t for fi, t in zip(table["f"], table["t"]) if table["german"][fi] == f) == pytest.approx(1.0)


def test_em_learns_the_toy_dictionary_and_raises_the_likelihood():
    table = bl.ibm1(TOY, iterations=20)
    assert all(b > a for a, b in zip(table["log_likelihood"], table["log_likelihood"][1:]))
    best = bl.best_translations(table)
    assert best == {"das": "the", "haus": "house", "buch": "book", "ein": "a"}
    assert bl.word_by_word(["Das Buch.", "Ein Auto!"], best) == ["The book.", "A Auto!"]
    assert bl.word_by_word(["Ein Auto!"], best, {"auto": "car"}) == ["A car!"]


@pytest.mark.parametrize("args, error, match", [
    (([],), ValueError, "at least one"),
    ((TOY, 0), ValueError, "iterations must be an int >= 1, got int 0"),
    (([("Haus", 3)],), TypeError, r"pair 0 must be a \(German, English\) tuple of strs"),
])
def test_ibm1_refuses_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        bl.ibm1(*args)


@needs_data
def test_the_baselines_score_on_the_test_split():
    """The scores chapter 16 prints (exact results: counts, argmax and sacrebleu, no float sums
    that could reorder; the EM's float64 sums are compared through the words they choose)."""
    pairs = tr.cached_pairs(tr.data_path())
    table = bl.ibm1(pairs["train"])
    assert len(table["log_likelihood"]) == bl.IBM1_ITERATIONS
    assert abs(table["log_likelihood"][-1] / table["log_likelihood"][-2] - 1) < 1e-3
    best = bl.best_translations(table)
    sources, streams = tr.reference_streams(pairs["test"])
    copy = mt.bleu_chrf(bl.copy_source(sources), streams)
    ibm = mt.bleu_chrf(bl.word_by_word(sources, best), streams)
    assert (round(copy["bleu"], 2), round(copy["chrf"], 2)) == (0.44, 15.93)
    assert (round(ibm["bleu"], 2), round(ibm["chrf"], 2)) == (6.47, 30.08)
    assert bl.word_by_word(["Wo ist der Bahnhof?"], best) == ["Where is the station?"]


def test_paired_bootstrap_is_seeded_and_its_full_draw_is_the_corpus_score():
    hyps_a = ["The cat sat on the mat.", "I like tea.", "Where is it?", "He runs fast."]
    hyps_b = ["A cat sat on a mat.", "I like coffee.", "Where is it?", "He walks."]
    streams = [["The cat sat on the mat.", "I like tea.", "Where is it?", "He runs quickly."]]
    r = mt.paired_bootstrap(hyps_a, hyps_b, streams, resamples=200, seed=1)
    plain = mt.bleu_chrf(hyps_a, streams), mt.bleu_chrf(hyps_b, streams)
    for name in ("bleu", "chrf"):
        assert r[name]["a"] == plain[0][name] and r[name]["b"] == plain[1][name]
        assert r[name]["low"] <= r[name]["high"]
        assert 0 <= r[name]["p_a_better"] <= 1
    assert r == mt.paired_bootstrap(hyps_a, hyps_b, streams, resamples=200, seed=1)
    same = mt.paired_bootstrap(hyps_a, hyps_a, streams, resamples=50, seed=0)
    assert same["bleu"]["low"] == same["bleu"]["high"] == 0 and same["bleu"]["p_a_better"] == 0
    assert r["resamples"] == 200 and r["seed"] == 1


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(resamples=0), ValueError, "resamples must be an int >= 1, got int 0"),
    (dict(seed=-1), ValueError, "seed must be an int >= 0"),
    (dict(hyps_b=["x"]), ValueError, "one per hypothesis"),
])
def test_paired_bootstrap_refuses_bad_input(kwargs, error, match):
    args = dict(hyps_a=["a b c.", "d e."], hyps_b=["a b.", "d e."], streams=[["a b c.", "d e f."]])
    with pytest.raises(error, match=match):
        mt.paired_bootstrap(**{**args, **kwargs})


def test_paired_bootstrap_draws_like_numpy_says():
    """One draw, redone by hand: NumPy's default generator with the stated seed picks the
    sentences, and the difference is that of the two systems' corpus scores on them."""
    hyps_a = ["The cat sat on the mat.", "I like tea.", "Where is it?", "He runs fast.", "Good night."]
    hyps_b = ["A cat sat on a mat.", "I like coffee.", "Where is it?", "He walks.", "Good evening."]
    streams = [["The cat sat on the mat.", "I like tea.", "Where is it?", "He runs quickly.", "Good night."]]
    r = mt.paired_bootstrap(hyps_a, hyps_b, streams, resamples=1, seed=7)
    (draw,) = np.random.default_rng(7).integers(0, 5, size=(1, 5))
    pick = [[stream[i] for i in draw] for stream in streams]
    for name in ("bleu", "chrf"):
        diff = mt.bleu_chrf([hyps_a[i] for i in draw], pick)[name] - mt.bleu_chrf([hyps_b[i] for i in draw], pick)[name]
        assert r[name]["low"] == r[name]["high"] == pytest.approx(diff, abs=1e-9)
    assert dict(resamples=1000, seed=12345) == mt.BOOTSTRAP
