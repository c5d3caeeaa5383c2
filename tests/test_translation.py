"""Tests of the German-English data and subwords (utils/tasks/translation/data.py): the sentence
filter and its exact counts, the split (disjoint, near-duplicates included), phrase pairs
that never hold a dev or test sentence, BPE by hand against sentencepiece, the shipped
shared vocabulary and its round trip, batches, and the errors of bad input.

The exact counts hold for Debian's trans-de-en 1.9-6 (the file's header says
``# Version :: devel 2023-01-30``); the tests that need the file skip, naming the apt
command, where it is missing.
"""

import collections
import shutil
import subprocess
import zlib

import pytest
import torch

from utils.core.masks import BOS_ID, EOS_ID, PAD_ID
from utils.tasks.translation import data as tr
from utils.training.batching import collate, make_batches

HAVE_DATA = tr.DATA.is_file()
needs_data = pytest.mark.skipif(not HAVE_DATA, reason=f"{tr.DATA} is missing: `{tr.INSTALL}` (Debian's trans-de-en 1.9-6)")


@pytest.fixture(scope="module")
def pairs():
    if not HAVE_DATA:
        pytest.skip(f"{tr.DATA} is missing: `{tr.INSTALL}` (Debian's trans-de-en 1.9-6)")
    return tr.load_pairs()


@pytest.fixture(scope="module")
def version_1_9_6():
    if not HAVE_DATA:
        pytest.skip(f"{tr.DATA} is missing: `{tr.INSTALL}` (Debian's trans-de-en 1.9-6)")
    if tr.data_version() != tr.DATA_VERSION:
        pytest.skip(f"the exact counts hold for trans-de-en 1.9-6 ({tr.DATA_VERSION!r}), this file is {tr.data_version()!r}")


@pytest.fixture(scope="module")
def phrases(pairs):
    counts = collections.Counter()
    return tr.phrase_pairs(counts=counts), counts


@pytest.fixture(scope="module")
def sp():
    return tr.load_vocab()


# ---- the data -------------------------------------------------------------------

@needs_data
def test_the_package_version_is_the_one_the_counts_hold_for():
    assert tr.data_version() == tr.DATA_VERSION
    if shutil.which("dpkg-query"):
        got = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "trans-de-en"], capture_output=True, text=True)
        if got.returncode == 0:  # installed by dpkg (not a copied file)
            assert got.stdout == "1.9-6"


def test_filter_counts_are_exact(version_1_9_6):
    counts = collections.Counter()
    pairs = tr.sentence_pairs(counts=counts)
    assert dict(counts) == {"comment or blank lines": 5, "entries": 206_233, "aligned parts": 391_763,
                            "dropped: no sentence end": 372_505, "dropped: too short": 448,
                            "dropped: annotation": 4_134, "dropped: repeated pair": 4, "sentence pairs": 14_672}
    assert 391_763 - 372_505 - 448 - 4_134 - 4 == len(pairs) == 14_672
    assert len({de for de, _ in pairs}) == 14_619
    assert len(pairs) == len(set(pairs))
    assert all(tr.normalize(de) == de and tr.normalize(en) == en for de, en in pairs)
    assert all(tr.sentence_reject(de, en) is None for de, en in pairs)
    assert pairs[0] == ("Ich habe am ursprünglichen Entwurf ein paar Änderungen vorgenommen.",
                        "I’ve made one or two modifications to the original design.")


def test_split_sizes_are_exact_and_test_has_over_1000(version_1_9_6, pairs):
    assert {k: len(v) for k, v in pairs.items()} == {"train": 11_962, "dev": 1_414, "test": 1_296}
    assert {k: len(tr.references(v)) for k, v in pairs.items()} == {"train": 11_913, "dev": 1_413, "test": 1_293}
    sources, streams = tr.reference_streams(pairs["test"])
    assert len(sources) == 1_293 and len(streams) == 2 and sum(r is not None for r in streams[1]) == 3


def test_split_is_by_crc32_of_the_key_then_by_twin_group(pairs):
    groups = tr.twin_groups(de for split in pairs.values() for de, _ in split)
    members = collections.defaultdict(list)
    for key, root in groups.items():
        members[root].append(key)
    order = list(tr.SPLITS)
    for name, split in pairs.items():
        for de, _ in split[:200]:
            bucket = zlib.crc32(tr.split_key(de).encode("utf-8")) % 100
            assert bucket in tr.SPLITS[name] and tr.split_of_german(de) == name or len(members[groups[tr.split_key(de)]]) > 1
            first = min(order.index(tr.split_of_german(k)) for k in members[groups[tr.split_key(de)]])
            assert order[first] == name
    moved = collections.Counter((tr.split_of_german(de), name) for name, split in pairs.items()
                                for de in tr.references(split) if tr.split_of_german(de) != name)
    assert moved == {("dev", "train"): 41, ("test", "train"): 38, ("test", "dev"): 5}
    assert tr.split_key(" Ich habe  keine Ahnung! ") == tr.split_key("ich habe keine ahnung.") == "ich habe keine ahnung"
    assert tr.split_key("Er heißt „Groß“.") == "er heisst gross"
    assert tr.load_pairs() == pairs  # deterministic


def test_splits_are_disjoint_even_for_near_duplicates(version_1_9_6, pairs):
    german = {name: {de for de, _ in split} for name, split in pairs.items()}
    keys = {name: {tr.split_key(de) for de in g} for name, g in german.items()}
    for a, b in (("train", "dev"), ("train", "test"), ("dev", "test")):
        assert not german[a] & german[b], f"{a} and {b} share German sentences"
        assert not keys[a] & keys[b], f"{a} and {b} share near-duplicate German sentences"
    # 8 keys have two spellings ('Ich habe keine Ahnung!' and '... Ahnung.'); hashing the
    # sentence itself would put 2 of these pairs of near-duplicates on both sides
    groups = collections.defaultdict(set)
    for g in german.values():
        for de in g:
            groups[tr.split_key(de)].add(de)
    near = [g for g in groups.values() if len(g) > 1]
    assert len(near) == 8
    exact = lambda s: next(n for n, r in tr.SPLITS.items() if zlib.crc32(s.encode("utf-8")) % 100 in r)  # noqa: E731
    assert sum(len({exact(s) for s in g}) > 1 for g in near) == 2


def test_no_sentence_is_one_word_from_a_sentence_of_another_split(pairs):
    """No two splits share a twin form: no sentence of one is a word replaced, added,
    removed or moved away from a sentence of another."""
    forms = {name: {f for de, _ in split for f in tr.twin_forms(tr.split_key(de))} for name, split in pairs.items()}
    for a, b in (("train", "dev"), ("train", "test"), ("dev", "test")):
        assert not forms[a] & forms[b], f"{a} and {b} hold one-word twins"
    assert tr.twin_forms("sie wollte helfen") == {("sie", "wollte", "helfen"), ("wollte", "helfen"),
                                                  ("sie", "helfen"), ("sie", "wollte")}
    assert tr.twin_groups(["Ich wollte nur helfen.", "Sie wollte nur helfen!", "Ich wollte helfen.", "Gut so."]) == {
        "gut so": "gut so", "ich wollte helfen": "ich wollte helfen", "ich wollte nur helfen": "ich wollte helfen",
        "sie wollte nur helfen": "ich wollte helfen"}


def test_every_translation_of_a_sentence_stays_in_its_split(pairs):
    for split in pairs.values():
        for de, refs in tr.references(split).items():
            assert all((de, en) in split for en in refs)
    two = tr.references(pairs["train"] + pairs["dev"] + pairs["test"])["Halt den Mund!"]
    assert two == ["Hold your tongue!", "Hold your noise!"]


# ---- phrase pairs ---------------------------------------------------------------

def _holds(words, protected):
    """Whether a contiguous run of ``words`` is a protected key (every run is tried)."""
    return any(" ".join(words[i:j]) in protected for i in range(len(words)) for j in range(i + 1, len(words) + 1))


def test_phrase_pair_counts_and_examples(version_1_9_6, phrases):
    out, counts = phrases
    assert dict(counts) == {"non-sentence parts": 377_087, "dropped: empty after cleaning": 60,
                            "dropped: unbalanced brackets": 5, "dropped: sentence-like": 6_419,
                            "dropped: repeated pair": 3_231, "dropped: holds a protected sentence": 14,
                            "phrase pairs": 367_358}
    assert ("Haus", "house") in set(out)
    assert all(not any(c in "{}[]()" for c in d + e) for d, e in out)


def test_phrase_pairs_never_hold_a_dev_or_test_sentence(pairs, phrases):
    out, _ = phrases
    protected = {tr.split_key(s) for name in ("dev", "test") for pair in pairs[name] for s in pair}
    assert not [p for p in out if any(_holds(tr.split_key(s).split(), protected) for s in p)]
    # the check can fail: a phrase that holds a test sentence is one it finds (the 18 such
    # pairs that phrase_pairs dropped are counted in test_phrase_pair_counts_and_examples)
    test_sentence = pairs["test"][0][0]
    assert _holds(tr.split_key("oh, " + test_sentence).split(), protected)


def test_clean_phrase():
    assert tr.clean_phrase("Haus {n} [arch.]; Gebäude {n}") == "Haus"
    assert tr.clean_phrase("Abhilfe {f} (gegen etw. (bes.))") == "Abhilfe"
    assert tr.clean_phrase("{n} [ugs.]") == ""


# ---- BPE by hand and by sentencepiece -------------------------------------------

SENNRICH = {"low": 5, "lower": 2, "newest": 6, "widest": 3}  # Sennrich et al. 2016, section 3.2


def test_learn_bpe_by_hand_on_numbers_a_reader_can_check():
    merges = tr.learn_bpe(SENNRICH, 6)
    # 'es' 9 times (newest 6 + widest 3); then 'est' and 't▁' both 9: the shorter wins;
    # then 'lo' and 'ow' both 7: the alphabetically first wins; after 'low', 'ew' beats 'ne' (6 each)
    assert merges == [("e", "s"), ("t", "▁"), ("es", "t▁"), ("l", "o"), ("lo", "w"), ("e", "w")]
    assert tr.apply_bpe("lowest", tr.learn_bpe(SENNRICH, 10)) == ["low", "est▁"]
    assert len(tr.learn_bpe(SENNRICH, 100)) == 15  # every word is one symbol after 15 merges
    assert tr.learn_bpe(SENNRICH, 0) == []


@pytest.mark.parametrize("words, n", [(tr.TINY_WORDS, 13), (SENNRICH, 10)])
def test_sentencepiece_learns_the_same_merges(words, n):
    pytest.importorskip("sentencepiece")
    hand, library = tr.bpe_merges_agree(words, n)
    assert hand == library
    if words is tr.TINY_WORDS:
        assert hand[:10] == ["us", "use", "ouse", "aus", "aus▁", "house", "house▁", "Haus▁", "Maus▁", "s▁"]


def test_another_tie_break_would_disagree():
    """The comparison can fail: breaking ties by first appearance (subword-nmt's order) differs."""
    pytest.importorskip("sentencepiece")
    vocab = {tuple(w) + (tr.END,): c for w, c in SENNRICH.items()}
    pairs = collections.Counter()
    for symbols, c in vocab.items():
        for p in zip(symbols, symbols[1:]):
            pairs[p] += c
    first = max(pairs, key=pairs.get)  # the first of the most frequent, in order of appearance
    assert first == ("e", "s")  # same first merge, but ...
    vocab = {tr.merge_pair(s, first): c for s, c in vocab.items()}
    pairs = collections.Counter(p for s, c in vocab.items() for p in zip(s, s[1:]) for _ in range(c))
    assert max(pairs, key=pairs.get) == ("es", "t") != tuple(tr.learn_bpe(SENNRICH, 2)[1])
    assert tr.sentencepiece_merges(SENNRICH, 2)[1] == "t▁"


@pytest.mark.parametrize("words, n, error", [
    ({}, 1, TypeError), (["low"], 1, TypeError), ({"lo w": 1}, 1, ValueError), ({"": 1}, 1, ValueError),
    ({"low": 0}, 1, ValueError), ({"low": 1.5}, 1, ValueError), ({"low": 1}, -1, ValueError),
    ({"low": 1}, 2.0, ValueError)])
def test_learn_bpe_refuses_bad_input(words, n, error):
    with pytest.raises(error, match="must"):
        tr.learn_bpe(words, n)


# ---- the shared vocabulary ------------------------------------------------------

def test_shipped_vocabulary_has_the_course_ids(sp):
    assert sp.get_piece_size() == tr.VOCAB_SIZE == 4000
    assert [sp.id_to_piece(i) for i in range(4)] == ["<pad>", "<s>", "</s>", "<unk>"]
    assert (sp.pad_id(), sp.bos_id(), sp.eos_id(), sp.unk_id()) == (PAD_ID, BOS_ID, EOS_ID, tr.UNK_ID)
    assert tr.VOCAB_FILE.stat().st_size < 100_000


def test_training_is_deterministic_and_gives_the_shipped_file(version_1_9_6, tmp_path):
    a = tr.train_vocab(tmp_path / "a.model")
    b = tr.train_vocab(tmp_path / "sub" / "b.model")
    assert a.read_bytes() == b.read_bytes() == tr.VOCAB_FILE.read_bytes(), (
        "the shipped vocabulary differs from a fresh training: run `python -m utils.tasks.translation vocab`")


def test_round_trip_of_every_test_sentence(version_1_9_6, pairs, sp):
    for de, en in pairs["test"]:
        for s in (de, en):
            ids = tr.encode(s)
            assert tr.UNK_ID not in ids and tr.decode(ids + [EOS_ID, 7]) == s
    # the one exception in dev: 'è' never occurs in train, so it is <unk>
    bad = [s for pair in pairs["dev"] for s in pair if tr.decode(tr.encode(s, sp), sp) != s]
    assert bad == ["On this occasion I will première three preludes by a young composer."]
    assert tr.UNK_ID in tr.encode(bad[0], sp)


def test_encode_decode_examples(sp):
    ids = tr.encode("Guten  Morgen!", sp)
    assert [sp.id_to_piece(i) for i in ids] == ["▁G", "uten", "▁Morgen", "!"]
    assert tr.decode([BOS_ID] + ids + [EOS_ID, PAD_ID]) == "Guten Morgen!"
    assert tr.decode(torch.tensor(ids)) == "Guten Morgen!"
    (src, tgt), = tr.encode_pairs([("Guten Morgen!", "Good morning!")], sp)
    assert src == ids and tgt[-1] == EOS_ID and tr.decode(tgt) == "Good morning!"


def test_encode_decode_refuse_bad_input(sp, tmp_path):
    with pytest.raises(TypeError, match="text must be a str"):
        tr.encode(["Guten Morgen!"], sp)
    with pytest.raises(ValueError, match="0..3999"):
        tr.decode([5, 4000], sp)
    with pytest.raises(ValueError, match="0..3999"):
        tr.decode([5, 2.0], sp)
    with pytest.raises(FileNotFoundError, match="python -m utils.tasks.translation vocab"):
        tr.load_vocab(tmp_path / "none.model")
    (tmp_path / "bad.model").write_text("not a model")
    with pytest.raises(ValueError, match="not a sentencepiece model"):
        tr.load_vocab(tmp_path / "bad.model")
    with pytest.raises(ValueError, match="vocab_size must be an int >= 100"):
        tr.train_vocab(tmp_path / "v.model", 50)
    with pytest.raises(ValueError, match="must end in .model"):
        tr.train_vocab(tmp_path / "v", 1000)


# ---- batches --------------------------------------------------------------------

def test_collate_and_make_batches():
    pairs = [([5, 6, 7], [8, 2]), ([5], [9, 10, 11, 2]), ([5, 6], [2])]
    src, tgt = collate(pairs)
    assert src.tolist() == [[5, 6, 7], [5, 0, 0], [5, 6, 0]] and tgt.shape == (3, 4) and tgt.dtype == torch.long
    batches = make_batches(pairs, max_tokens=8)
    assert sorted(i for b in batches for i in b) == [0, 1, 2]
    assert all(len(b) * max(max(len(pairs[i][0]), len(pairs[i][1])) for i in b) <= 8 for b in batches)
    with pytest.raises(ValueError, match="does not fit max_tokens"):
        make_batches(pairs, max_tokens=3)


# ---- another file, a missing file, a wrong file ---------------------------------

FAKE = """# Version :: test
Haus {n} | Das Haus ist alt. | Wo ist das Haus? :: house | The house is old. | Where is the house?
Katze {f} | Die Katze (Hauskatze) schläft. :: cat | The cat sleeps.
Ja. | Ich   bin da. :: Yes. | I am here.
"""


def test_another_path_by_argument_or_environment(tmp_path, monkeypatch):
    f = tmp_path / "de-en"
    f.write_text(FAKE.replace("Ich   bin", "Ich bin").replace("bin da.", "bin\u00a0da."), encoding="utf-8")
    counts = collections.Counter()
    assert tr.sentence_pairs(f, counts) == [("Das Haus ist alt.", "The house is old."),
                                            ("Wo ist das Haus?", "Where is the house?"),
                                            ("Ich bin da.", "I am here.")]
    assert counts["dropped: annotation"] == 1 and counts["dropped: too short"] == 1
    monkeypatch.setenv(tr.ENV_VAR, str(f))
    assert tr.data_path() == f and tr.data_version() == "test"
    assert sum(map(len, tr.load_pairs().values())) == 3
    assert tr.phrase_pairs(f, protect=()) == [("Haus", "house"), ("Katze", "cat")]


def test_missing_and_wrong_files_say_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv(tr.ENV_VAR, str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="sudo apt-get install trans-de-en"):
        tr.load_pairs()
    wrong = tmp_path / "words.txt"
    wrong.write_text("just\nsome words\n")
    with pytest.raises(ValueError, match="not the Ding dictionary"):
        tr.sentence_pairs(wrong)
    with pytest.raises(TypeError, match="must be a str"):
        tr.split_of_german(b"Haus")
    with pytest.raises(ValueError, match="protect must be"):
        tr.phrase_pairs(protect="test")


def test_the_bucket_rule_is_the_split_of_the_earlier_runs(version_1_9_6):
    old = tr.load_pairs(split_rule="buckets")
    assert {k: len(v) for k, v in old.items()} == {"train": 11_881, "dev": 1_451, "test": 1_340}
    assert all(tr.split_of_german(de) == name for name, split in old.items() for de, _ in split)
    assert tr.vocab_pairs() == old["train"]
    with pytest.raises(ValueError, match=r"split_rule must be one of \('twins', 'buckets'\), got 'hash'"):
        tr.load_pairs(split_rule="hash")
