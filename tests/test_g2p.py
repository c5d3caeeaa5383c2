"""Tests of the G2P task (chapter 15): data split, vocabulary, metrics, batched beam
search, training reproducibility and the shipped model."""

import json
import zlib

import pytest
import torch

from utils.core.numerics import REPLAY_TOLERANCE
from utils.model.decoding import beam_search, beam_search_batch, greedy_decode
from utils.tasks import g2p
from utils.training.batching import collate


@pytest.fixture(scope="module")
def lexicon():
    return g2p.load_lexicon()


@pytest.fixture(scope="module")
def vocab():
    return g2p.G2PVocab()


@pytest.fixture(scope="module")
def shipped():
    model, steps = g2p.load_shipped("avg")
    return model, steps


# ---- data ---------------------------------------------------------------------

def test_split_is_deterministic_disjoint_and_by_crc32(lexicon):
    again = g2p.load_lexicon()
    assert again == lexicon
    names = list(lexicon)
    assert names == ["train", "dev", "test"]
    for a in names:
        for b in names:
            if a < b:
                assert not set(lexicon[a]) & set(lexicon[b]), (a, b)
    for name, words in lexicon.items():
        for w in list(words)[::97]:
            bucket = zlib.crc32(w.encode()) % 100
            assert bucket in g2p.SPLITS[name] and g2p.split_of(w) == name


def test_split_counts(lexicon):
    counts = {k: (len(v), sum(len(r) for r in v.values())) for k, v in lexicon.items()}
    assert counts == {"train": (112602, 120479), "dev": (6165, 6606), "test": (6159, 6582)}


def test_words_and_phones_are_clean(lexicon):
    for words in lexicon.values():
        for w, refs in words.items():
            assert g2p._WORD.match(w)
            assert refs and len(refs) == len({tuple(r) for r in refs})   # distinct pronunciations
            for r in refs:
                assert r and set(r) <= set(g2p.PHONES)
    assert len(g2p.PHONES) == 39 == len(set(g2p.PHONES))
    assert lexicon[g2p.split_of("read")]["read"] == [["R", "EH", "D"], ["R", "IY", "D"]]


def test_max_extra_covers_every_pronunciation_but_fyi(lexicon):
    longer = {w for words in lexicon.values() for w, refs in words.items()
              for r in refs if len(r) > len(w) + g2p.MAX_EXTRA}
    assert longer == {"fyi"}


def test_strip_stress():
    assert g2p.strip_stress(["R", "EH1", "D", "AH0", "EY2"]) == ["R", "EH", "D", "AH", "EY"]


# ---- vocabulary -----------------------------------------------------------------

def test_vocab_layout_and_round_trip(vocab):
    assert len(vocab) == 69 and vocab.itos[:3] == ["<pad>", "<s>", "</s>"]
    assert vocab.encode_word("Read") == [vocab.stoi[c] for c in "read"]
    ids = vocab.encode_phones(["R", "EH", "D"])
    assert ids[-1] == 2 and vocab.decode_phones(ids) == ["R", "EH", "D"]
    # decoding drops letters and padding and stops at </s>
    assert vocab.decode_phones([vocab.stoi["a"], vocab.stoi["K"], 0, 2, vocab.stoi["T"]]) == ["K"]
    assert vocab.decode_phones(torch.tensor([vocab.stoi["T"]])) == ["T"]


@pytest.mark.parametrize("call,error,match", [
    (lambda v: v.encode_word(3), TypeError, "must be a str, got int"),
    (lambda v: v.encode_word(""), ValueError, "at least one character"),
    (lambda v: v.encode_word("naïve"), ValueError, "outside a-z"),
    (lambda v: v.encode_phones("R EH D"), TypeError, "list of strings"),
    (lambda v: v.encode_phones(["R", "EH1"]), ValueError, "unknown phones \\['EH1'\\]"),
    (lambda v: v.decode_phones([5, 69]), ValueError, "int in 0..68, got 69"),
])
def test_vocab_errors(vocab, call, error, match):
    with pytest.raises(error, match=match):
        call(vocab)


# ---- metrics ------------------------------------------------------------------

def test_wer_with_several_references():
    refs = [[["R", "EH", "D"], ["R", "IY", "D"]], [["K", "AE", "T"]]]
    assert g2p.wer([["R", "IY", "D"], ["K", "AE", "T"]], refs) == 0.0
    assert g2p.wer([["R", "IY", "T"], ["K", "AE", "T"]], refs) == 0.5


def test_per_uses_the_closest_reference_and_its_length():
    refs = [[["AH", "B"], ["R", "IY", "D", "Z"]]]
    # 1 edit from R IY D Z (length 4), 2 from AH B: the closest is the long one
    assert g2p.per([["R", "IY", "D"]], refs) == 1 / 4
    assert g2p.closest_reference(["R", "IY", "D"], refs[0]) == (1, ["R", "IY", "D", "Z"])


def test_per_empty_output_and_output_longer_than_every_reference():
    refs = [[["K", "AE", "T"], ["K", "AA", "T", "S"]]]
    assert g2p.per([[]], refs) == 1.0            # 3 deletions against the shorter reference
    assert g2p.wer([[]], refs) == 1.0
    # 6 phones: 3 insertions from K AE T, 4 edits from K AA T S
    long = ["K", "AE", "T", "K", "AE", "T"]
    assert g2p.closest_reference(long, refs[0]) == (3, ["K", "AE", "T"])
    assert g2p.per([long], refs) == 1.0
    assert g2p.per([long + ["T"]], refs) == 4 / 3   # PER is not capped at 100%
    assert g2p.wer([long], refs) == 1.0


@pytest.mark.parametrize("hyps,refs,error,match", [
    ([["K"]], [], ValueError, "one output per word"),
    ([], [], ValueError, "no words to score"),
    ([["K"]], [[]], ValueError, "one or more non-empty reference"),
    ([["K"]], [[[]]], ValueError, "one or more non-empty reference"),
    ([["K"]], [["K"]], ValueError, "one or more non-empty reference"),      # references not nested
    (["K"], [[["K"]]], TypeError, "output 0 must be a list of phone strings"),  # an output given as a string
    ("K", [[["K"]]], TypeError, "must be lists"),
])
def test_metric_errors(hyps, refs, error, match):
    for metric in (g2p.wer, g2p.per):
        with pytest.raises(error, match=match):
            metric(hyps, refs)


# ---- batched beam search ------------------------------------------------------------

def test_beam_search_batch_equals_one_search_per_word(lexicon, vocab, shipped):
    model, _ = shipped
    words = list(lexicon["test"])[::150] + ["a", "supercalifragilistic"]
    src, _ = collate([(vocab.encode_word(w), [2]) for w in words])
    batch = beam_search_batch(model, src, max_extra=g2p.MAX_EXTRA)
    for w, hyps in zip(words, batch):
        alone = beam_search(model, torch.tensor([vocab.encode_word(w)]), max_extra=g2p.MAX_EXTRA)
        assert [h.tokens for h in hyps] == [h.tokens for h in alone], w
        assert [h.finished for h in hyps] == [h.finished for h in alone], w
        assert max(abs(a.score - b.score) for a, b in zip(hyps, alone)) < 1e-4, w


def test_beam_search_batch_beam_one_is_greedy(lexicon, vocab, shipped):
    model, _ = shipped
    words = list(lexicon["dev"])[::300]
    src, _ = collate([(vocab.encode_word(w), [2]) for w in words])
    beams = beam_search_batch(model, src, beam_size=1, max_extra=g2p.MAX_EXTRA)
    for w, hyps in zip(words, beams):
        ids = greedy_decode(model, torch.tensor([vocab.encode_word(w)]), max_len=len(w) + g2p.MAX_EXTRA)[0].tolist()
        assert list(hyps[0].tokens) == ids[: len(hyps[0].tokens)], w


def test_beam_search_batch_errors(shipped):
    model, _ = shipped
    with pytest.raises(ValueError, match="row 1 of src is all padding"):
        beam_search_batch(model, torch.tensor([[5, 6], [0, 0]]))
    with pytest.raises(ValueError, match="max_extra must be an int >= 0"):
        beam_search_batch(model, torch.tensor([[5, 6]]), max_extra=-1)
    with pytest.raises(TypeError, match="integer token ids"):
        beam_search_batch(model, torch.tensor([[5.0, 6.0]]))
    model.train()
    try:
        with pytest.raises(RuntimeError, match="training mode"):
            beam_search_batch(model, torch.tensor([[5, 6]]))
    finally:
        model.eval()


# ---- training ------------------------------------------------------------------------

def _shipped_log():
    return g2p.read_log(g2p.SHIPPED / "log.jsonl")


def test_short_run_reproduces_the_shipped_log_within_the_replay_tolerance(tmp_path):
    """The shipped log was made on another machine: a rerun agrees within the measured
    replay tolerance (utils/core/numerics.py), not to the bit."""
    header, records = _shipped_log()
    threads = header["versions"]["threads"]
    first = records[0]["losses"][:10]
    g2p.train_g2p(tmp_path, steps=10, threads=threads, progress=False, dev_eval=False)
    _, mine = g2p.read_log(tmp_path / "log.jsonl")
    gap = max(abs(a - b) for a, b in zip(mine[0]["losses"], first, strict=True))
    assert gap < REPLAY_TOLERANCE, f"rerun drifts {gap:.2e} from the shipped log (tolerance {REPLAY_TOLERANCE:.0e})"


def test_resume_continues_exactly(tmp_path):
    """On one machine, an interrupted and resumed run equals an uninterrupted one, bit for bit."""
    threads = _shipped_log()[0]["versions"]["threads"]
    g2p.train_g2p(tmp_path / "whole", steps=6, threads=threads, progress=False, dev_eval=False, save_every=3)
    _, whole = g2p.read_log(tmp_path / "whole" / "log.jsonl")
    # stop after 3 steps (as an interruption would), then run the same command to 6
    g2p.train_g2p(tmp_path / "cut", steps=3, threads=threads, progress=False, dev_eval=False, save_every=3)
    assert torch.load(tmp_path / "cut" / "state.pt", weights_only=False)["step"] == 3
    g2p.train_g2p(tmp_path / "cut", steps=6, threads=threads, progress=False, dev_eval=False, save_every=3)
    _, resumed = g2p.read_log(tmp_path / "cut" / "log.jsonl")
    assert [r["step"] for r in resumed] == [3, 6]
    assert [x for r in resumed for x in r["losses"]] == [x for r in whole for x in r["losses"]]


def test_the_recurrent_model_trains_with_the_same_loop_and_resumes_exactly(tmp_path):
    """arch="recurrent" (issue 22's baseline): the same batches and recipe, its own config in the
    log, and an interrupted run resumed equals the uninterrupted one bit for bit."""
    kw = dict(threads=1, progress=False, dev_eval=False, save_every=2, arch="recurrent")
    g2p.train_g2p(tmp_path / "whole", steps=4, **kw)
    header, whole = g2p.read_log(tmp_path / "whole" / "log.jsonl")
    assert header["start"]["arch"] == "recurrent" and header["start"]["model"] == g2p.G2P_RECURRENT
    assert header["params"] == 1_388_476
    g2p.train_g2p(tmp_path / "cut", steps=2, **kw)
    g2p.train_g2p(tmp_path / "cut", steps=4, **kw)
    _, resumed = g2p.read_log(tmp_path / "cut" / "log.jsonl")
    assert [x for r in resumed for x in r["losses"]] == [x for r in whole for x in r["losses"]]
    # the same batches as the Transformer's run of the same seed: the same tokens
    g2p.train_g2p(tmp_path / "transformer", steps=4, **{**kw, "arch": "transformer"})
    _, transformer = g2p.read_log(tmp_path / "transformer" / "log.jsonl")
    assert [(r["src_tokens"], r["tgt_tokens"]) for r in transformer] == [(r["src_tokens"], r["tgt_tokens"]) for r in whole]
    with pytest.raises(ValueError, match="another configuration"):
        g2p.train_g2p(tmp_path / "whole", steps=6, **{**kw, "arch": "transformer"})
    with pytest.raises(ValueError, match="arch must be one of"):
        g2p.train_g2p(tmp_path / "x", steps=2, arch="lstm")
    # its weights never replace the shipped Transformer's that chapter 15 reads
    with pytest.raises(ValueError, match="holds a recurrent run"):
        g2p.ship(tmp_path / "whole", keep_last=2)
    assert g2p.ship(tmp_path / "whole", out=tmp_path / "shipped", keep_last=2).is_file()


def test_train_rejects_another_config(tmp_path):
    g2p.train_g2p(tmp_path, steps=1, progress=False, dev_eval=False, save_every=1)
    with pytest.raises(ValueError, match="another configuration"):
        g2p.train_g2p(tmp_path, steps=2, progress=False, dev_eval=False, save_every=1, eps_ls=0.2)
    with pytest.raises(ValueError, match="unknown recipe fields \\['lr'\\]"):
        g2p.train_g2p(tmp_path, steps=2, lr=1.0)
    with pytest.raises(ValueError, match="threads must be a positive int"):
        g2p.train_g2p(tmp_path, steps=2, threads=0)


def test_ship_averages_the_last_checkpoints(tmp_path):
    work = tmp_path / "work"
    g2p.train_g2p(work, steps=4, progress=False, dev_eval=False, save_every=1)
    out = g2p.ship(work, tmp_path / "out", keep_last=3)
    saved = torch.load(out, weights_only=True)
    assert saved["steps"] == [2, 3, 4]
    states = [torch.load(work / f"step{s}.pt", weights_only=True) for s in (2, 3, 4)]
    key = "embed.lut.weight"
    mean = torch.stack([s[key] for s in states]).mean(0)
    assert torch.allclose(saved["state_dict"][key].float(), mean, atol=1e-3)
    model, steps = g2p.load_shipped("avg", tmp_path / "out")
    assert steps == [2, 3, 4] and not model.training
    with pytest.raises(FileNotFoundError, match="need 9 checkpoints"):
        g2p.ship(work, tmp_path / "out", keep_last=9)
    with pytest.raises(ValueError, match="'avg' or 'last'"):
        g2p.load_shipped("best")
    with pytest.raises(FileNotFoundError, match="python -m utils.tasks.g2p train"):
        g2p.load_shipped("avg", tmp_path / "nowhere")


def test_read_log_rejects_other_files(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text(json.dumps({"step": 1}) + "\n")
    with pytest.raises(ValueError, match="not a G2P training log"):
        g2p.read_log(p)


# ---- the shipped model ------------------------------------------------------------------

def test_shipped_files_are_small_and_match_the_recipe():
    total = sum(p.stat().st_size for p in g2p.SHIPPED.iterdir())
    assert total < 10 * 2**20, total
    header, records = _shipped_log()
    assert header["start"]["model"] == g2p.G2P_MODEL
    assert header["start"]["recipe"] == {k: v for k, v in g2p.G2P_TRAIN.items() if k != "steps"}
    _, steps = g2p.load_shipped("avg")
    assert steps == [r["step"] for r in records][-g2p.G2P_TRAIN["keep_last"]:]
    assert records[-1]["step"] == g2p.G2P_TRAIN["steps"]


def test_shipped_test_outputs_are_what_the_shipped_models_decode(lexicon, vocab):
    """Chapter 15 scores the shipped decodes of the whole test split; decoding a sample
    of its words again (every 40th, all four combinations) gives the same phones.
    Decoded tokens are exact results: they must not depend on the CPU."""
    outputs = g2p.load_test_outputs()
    words = outputs["words"]
    assert words == list(lexicon["test"])
    sample = words[::40]
    for which, decode in g2p.DECODES:
        model, _ = g2p.load_shipped(which)
        again = (g2p.greedy_phones if decode == "greedy" else g2p.beam_phones)(model, sample, vocab)
        stored = outputs[which, decode][::40]
        differ = [w for w, a, b in zip(sample, again, stored) if a != b]
        assert not differ, f"{which} {decode}: {len(differ)} of {len(sample)} words decode otherwise: {differ[:5]}"


def test_load_test_outputs_names_a_bad_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m utils.tasks.g2p decode"):
        g2p.load_test_outputs(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json is not readable JSON"):
        g2p.load_test_outputs(bad)
    bad.write_text(json.dumps({"kind": "something else"}))
    with pytest.raises(ValueError, match="not a file of G2P test outputs"):
        g2p.load_test_outputs(bad)


def test_command_line_score(capsys):
    g2p._main(["score", "--which", "last", "--decode", "greedy", "--split", "dev", "--words", "200"])
    out = capsys.readouterr().out
    assert out.startswith("dev split, last of steps [") and "WER " in out and "(first 200 of 6,165 words)" in out
    with pytest.raises(SystemExit):
        g2p._main(["score", "--split", "everything"])
