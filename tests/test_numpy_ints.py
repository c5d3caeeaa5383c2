"""NumPy integers are integers: every public API that takes an int (a size, a step, a
length, a seed, a thread count, a beam size, a token id) takes ``np.int64(5)`` as it takes
``5``, and one that takes a list of token ids takes a 1-D NumPy integer array. Bools and
floats are still refused, with a message that says what was expected and what arrived.
"""

import json

import numpy as np
import pytest
import torch

from utils import (
    TINY,
    DecoderLayer,
    Embeddings,
    EncoderLayer,
    LayerNorm,
    MultiHeadAttention,
    PositionwiseFeedForward,
    Tokenizer,
    Transformer,
    beam_search,
    beam_search_core,
    causal_mask,
    greedy_decode,
    length_batches,
    padding_mask,
    positional_encoding,
    set_seed,
    shift_right,
    target_mask,
)
from utils.core.checks import id_list, is_int
from utils.exercises import Exercise, diagnose
from utils.experiments import variations as V
from utils.figures import (
    explorer_figure,
    explorer_steps,
    figure_json,
    pe_rotation_figure,
    schedule_figure,
    sentence_figure,
    sqrt_dk_figure,
)
from utils.model.decoding import beam_search_batch, length_penalty
from utils.tasks import g2p
from utils.tasks.reversal.task import load_checkpoint, reversal_batch, save_checkpoints, short_run, train
from utils.training.batching import collate
from utils.training.recipe import make_optimizer, rate

I = np.int64  # noqa: E741  (short: every test below wraps ints in it)
SRC = torch.tensor([[5, 3, 4, 7, 6]])


@pytest.fixture(scope="module")
def model():
    set_seed(0)
    return Transformer(**TINY).eval()


# ---------------------------------------------------------------- the checks themselves

@pytest.mark.parametrize("x", [5, I(5), np.int32(5), np.uint8(5), np.int16(-3)])
def test_is_int_takes_python_and_numpy_integers(x):
    assert is_int(x)


@pytest.mark.parametrize("x", [True, np.bool_(True), 5.0, np.float64(5.0), np.float32(5), "5", None, torch.tensor(5)])
def test_is_int_refuses_bools_floats_and_the_rest(x):
    assert not is_int(x)


@pytest.mark.parametrize("ids", [[5, 3], (5, 3), np.array([5, 3]), np.array([5, 3], dtype=np.uint8),
                                 [I(5), np.int32(3)], torch.tensor([5, 3]), iter([5, 3])],
                         ids=["list", "tuple", "array", "uint8-array", "numpy-scalars", "tensor", "iterator"])
def test_id_list_gives_python_ints(ids):
    out = id_list(ids)
    assert out == [5, 3] and all(type(i) is int for i in out)


def test_id_list_leaves_what_is_not_an_int_for_the_caller_to_refuse():
    assert id_list([True, 5.0, np.float64(2)]) == [True, 5.0, 2.0]
    assert [type(i) for i in id_list(np.array([True]))] == [bool]


@pytest.mark.parametrize("ids,error,match", [
    (np.array([[5, 3]]), ValueError, r"ids must be a 1-D tensor or a list of token ids, got a NumPy array of shape \(1, 2\)"),
    (np.int64(5), TypeError, "ids must be a list or 1-D tensor of token ids such as .*got int64"),
], ids=["2-D-array", "scalar"])
def test_id_list_refuses_what_is_not_a_sequence(ids, error, match):
    with pytest.raises(error, match=match):
        id_list(ids)


# ---------------------------------------------------------------- tokenizers (chapters 6 and 15)

def test_tokenizer_decode_takes_numpy_ids():
    tok = Tokenizer()
    assert tok.decode(np.array([5, 3, 2, 4])) == tok.decode([I(5), I(3)]) == tok.decode(np.array([5, 3], np.int32)) == "c a"
    assert tok.decode(np.array([1, 5, 0]), strip=False) == "<s> c <pad>"


@pytest.mark.parametrize("ids,match", [
    (np.array([5, 13]), r"token id must be an int in 0\.\.12, got 13"),
    ([I(-1)], r"token id must be an int in 0\.\.12, got -1"),
    ([True, 5], r"token id must be an int in 0\.\.12, got True"),
    (np.array([True]), r"token id must be an int in 0\.\.12, got True"),
    ([5.0], r"token id must be an int in 0\.\.12, got 5\.0"),
    (np.array([5.0]), r"token id must be an int in 0\.\.12, got 5\.0"),
    (torch.tensor([5.0]), r"token id must be an int in 0\.\.12, got 5\.0"),
    ([np.float64(5)], r"token id must be an int in 0\.\.12, got np.float64\(5\.0\)"),
], ids=["too-big", "negative", "bool", "bool-array", "float", "float-array", "float-tensor", "np-float"])
def test_tokenizer_decode_still_refuses_bad_ids(ids, match):
    with pytest.raises(ValueError, match=match):
        Tokenizer().decode(ids)


def test_g2p_vocab_and_collate_take_numpy_ids():
    vocab = g2p.G2PVocab()
    ids = vocab.encode_phones(["R", "EH", "D"])
    assert vocab.decode_phones(np.array(ids)) == vocab.decode_phones([I(i) for i in ids]) == ["R", "EH", "D"]
    with pytest.raises(ValueError, match=r"token id must be an int in 0\.\.68, got True"):
        vocab.decode_phones([True])
    with pytest.raises(ValueError, match=r"token id must be an int in 0\.\.68, got 69"):
        vocab.decode_phones(np.array([69]))
    word = vocab.encode_word("read")
    src, tgt = collate([(np.array(word), np.array(ids)), ([I(i) for i in word[:2]], tuple(ids[-2:]))])
    assert src.tolist() == [word, word[:2] + [0, 0]] and tgt.tolist() == [ids, ids[-2:] + [0, 0]]
    with pytest.raises(ValueError, match=r"pair 0 must be \(source ids, target ids\), two non-empty lists of ints"):
        collate([(np.array([1.5]), ids)])
    with pytest.raises(ValueError, match="pair 0 must be"):
        collate([([True], ids)])


# ---------------------------------------------------------------- masks, positions, layers, the model

def test_masks_and_positions_take_numpy_ints():
    assert torch.equal(causal_mask(I(4)), causal_mask(4))
    assert torch.equal(positional_encoding(I(10), np.int32(16)), positional_encoding(10, 16))
    ids = torch.tensor([[5, 3, 0]])
    assert torch.equal(padding_mask(ids, I(0)), padding_mask(ids, 0))
    assert torch.equal(target_mask(ids, I(0)), target_mask(ids))
    assert torch.equal(shift_right(ids, I(1)), shift_right(ids, 1))


@pytest.mark.parametrize("call,error,match", [
    (lambda: causal_mask(True), ValueError, "n must be a positive int, got True"),
    (lambda: causal_mask(4.0), ValueError, "n must be a positive int, got 4.0"),
    (lambda: causal_mask(I(0)), ValueError, r"n must be a positive int, got np.int64\(0\)"),
    (lambda: positional_encoding(10.0, 16), ValueError, "max_len must be a positive int, got 10.0"),
    (lambda: positional_encoding(10, True), ValueError, "d_model must be a positive int, got True"),
    (lambda: padding_mask(SRC, np.float64(0)), TypeError, r"pad_id must be a token id \(an int >= 0\), got float64"),
    (lambda: shift_right(SRC, np.bool_(True)), TypeError, r"bos_id must be a token id \(an int >= 0\), got bool"),
    (lambda: Embeddings(I(13), 8.0), TypeError, "d_model must be a positive int, got float 8.0"),
    (lambda: MultiHeadAttention(I(8), True), TypeError, "h must be a positive int, got bool True"),
    (lambda: Transformer(13, 64, 4, 256, N=I(0)), ValueError, r"N must be a positive int, got np.int64\(0\)"),
], ids=["causal-bool", "causal-float", "causal-np-zero", "pe-float", "pe-bool", "pad-np-float", "bos-np-bool",
        "embed-float", "mha-bool", "model-np-zero"])
def test_bools_and_floats_are_still_refused(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_layers_and_the_model_take_numpy_sizes():
    x = torch.randn(2, 3, 8)
    for make in (lambda: MultiHeadAttention(I(8), I(2)), lambda: PositionwiseFeedForward(I(8), I(16)),
                 lambda: LayerNorm(I(8)), lambda: EncoderLayer(I(8), I(2), I(16), 0.0),
                 lambda: Embeddings(I(13), I(8))):
        torch.manual_seed(0)
        assert make() is not None
    torch.manual_seed(0)
    layer = DecoderLayer(I(8), I(2), I(16), 0.0).eval()
    assert layer(x, x).shape == (2, 3, 8)
    sizes = {k: I(v) if is_int(v) else v for k, v in TINY.items()}
    torch.manual_seed(0)
    ours = Transformer(**sizes).eval()
    torch.manual_seed(0)
    plain = Transformer(**TINY).eval()
    tgt = shift_right(torch.tensor([[6, 7, 4, 3, 5, 2]]))
    assert torch.equal(ours(SRC, tgt), plain(SRC, tgt))


# ---------------------------------------------------------------- training (chapter 10)

def test_seed_threads_rate_batches_and_lengths_take_numpy_ints():
    threads = torch.get_num_threads()
    try:
        set_seed(I(3), threads=I(1))
        a = torch.rand(3)
        set_seed(3)
        assert torch.equal(a, torch.rand(3))
    finally:
        torch.set_num_threads(threads)
    assert rate(I(100), I(64), I(400)) == rate(100, 64, 400)
    assert rate(np.int32(5000), 64, np.int16(400), factor=np.float32(2.0)) == pytest.approx(rate(5000, 64, 400, 2.0))
    one = reversal_batch(I(4), torch.Generator().manual_seed(0), I(3), I(8))
    two = reversal_batch(4, torch.Generator().manual_seed(0), 3, 8)
    assert all(torch.equal(a, b) for a, b in zip(one, two))
    assert length_batches(np.array([3, 5, 2, 8]), I(10)) == length_batches([3, 5, 2, 8], 10)


@pytest.mark.parametrize("call,error,match", [
    (lambda: set_seed(True), TypeError, "seed must be an int, got bool True"),
    (lambda: set_seed(0.0), TypeError, "seed must be an int, got float 0.0"),
    (lambda: set_seed(0, threads=np.float64(1)), TypeError, "threads must be an int, got float64"),
    (lambda: rate(np.float64(5), 64, 400), TypeError, r"step must be an int >= 0 \(a count of updates\), got float64"),
    (lambda: rate(5, 64, True), ValueError, "warmup must be a positive int, got bool True"),
    (lambda: reversal_batch(4.0, torch.Generator()), ValueError, "batch_size must be a positive int, got 4.0"),
    (lambda: length_batches(np.array([3.0, 5.0]), 10), TypeError, "lengths must be positive ints .*got float64"),
    (lambda: load_checkpoint(True), TypeError, r"step must be an int >= 0 \(a training step such as 3000\), got bool True"),
    (lambda: load_checkpoint(3000.0), TypeError, "step must be an int >= 0.*got float 3000.0"),
    (lambda: load_checkpoint(I(-1)), ValueError, r"step must be an int >= 0.*got np.int64\(-1\)"),
], ids=["seed-bool", "seed-float", "threads-np-float", "step-np-float", "warmup-bool", "batch-float",
        "lengths-float-array", "load-bool", "load-float", "load-negative"])
def test_training_still_refuses_bools_and_floats(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_train_save_and_load_take_numpy_ints(tmp_path):
    set_seed(0)
    m = Transformer(**TINY)
    make_optimizer(m, I(400))
    history = train(m, I(2), batch_size=I(4), warmup=I(10), seed=I(0), eval_every=I(1), log_every=I(1),
                    keep_last=I(1), progress=False, test=reversal_batch(4, torch.Generator().manual_seed(1)))
    assert list(history["checkpoints"]) == [2] and history["train_loss"].shape == (2,)
    paths = save_checkpoints({I(2): history["checkpoints"][2]}, tmp_path)
    assert [p.name for p in paths] == ["tiny_step2.pt"]
    loaded = load_checkpoint(I(2), tmp_path)
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), m.state_dict().values()))
    assert torch.equal(short_run(lambda step: 1e-3, steps=I(1), seed=I(0)), short_run(lambda step: 1e-3, steps=1, seed=0))


# ---------------------------------------------------------------- decoding (chapter 11)

def test_decoding_takes_numpy_ints(model):
    assert torch.equal(greedy_decode(model, SRC, max_len=I(4)), greedy_decode(model, SRC, max_len=4))
    assert beam_search(model, SRC, beam_size=I(2), alpha=I(0), max_extra=I(2)) == \
        beam_search(model, SRC, beam_size=2, alpha=0, max_extra=2)
    assert beam_search(model, SRC, alpha=np.float32(0.6))[0].tokens == beam_search(model, SRC)[0].tokens
    assert length_penalty(I(3), np.float64(0.6)) == length_penalty(3, 0.6)

    def uniform(prefixes):
        return torch.full((prefixes.size(0), 13), -np.log(13.0))

    assert beam_search_core(uniform, I(3), beam_size=I(2)) == beam_search_core(uniform, 3, beam_size=2)


@pytest.mark.parametrize("call,match", [
    (lambda m: greedy_decode(m, SRC, max_len=True), "max_len must be an int >= 1, got True"),
    (lambda m: greedy_decode(m, SRC, max_len=4.0), "max_len must be an int >= 1, got 4.0"),
    (lambda m: beam_search(m, SRC, beam_size=np.float64(2)), r"beam_size must be an int >= 1, got np.float64\(2.0\)"),
    (lambda m: beam_search(m, SRC, max_extra=True), "max_extra must be an int >= 0, got True"),
    (lambda m: beam_search(m, SRC, alpha=True), "alpha must be a number >= 0.*got True"),
    (lambda m: length_penalty(np.float64(3)), r"length must be an int >= 0 \(a number of tokens\), got np.float64"),
], ids=["greedy-bool", "greedy-float", "beam-np-float", "extra-bool", "alpha-bool", "length-np-float"])
def test_decoding_still_refuses_bools_and_floats(model, call, match):
    with pytest.raises(ValueError, match=match):
        call(model)


# ---------------------------------------------------------------- G2P (chapter 15)

def test_g2p_decoding_takes_numpy_ints():
    vocab = g2p.G2PVocab()
    torch.manual_seed(0)
    m = g2p.new_model(d_model=I(16), h=I(2), d_ff=I(32), N=I(1)).eval()
    words = ["read", "cat", "a"]
    assert g2p.greedy_phones(m, words, vocab, batch_size=I(2)) == g2p.greedy_phones(m, words, vocab, batch_size=2)
    assert g2p.beam_phones(m, words, vocab, beam_size=I(2), max_extra=I(2), batch_size=I(2)) == \
        g2p.beam_phones(m, words, vocab, beam_size=2, max_extra=2, batch_size=2)
    src, _ = collate([(vocab.encode_word("cat"), [2])])
    assert beam_search_batch(m, src, max_extra=I(1)) == beam_search_batch(m, src, max_extra=1)
    with pytest.raises(ValueError, match="batch_size must be a positive int, got True"):
        g2p.greedy_phones(m, words, vocab, batch_size=True)
    with pytest.raises(ValueError, match="max_extra must be an int >= 0, got 1.0"):
        beam_search_batch(m, src, max_extra=1.0)


def test_g2p_train_and_ship_take_numpy_ints(tmp_path):
    work = tmp_path / "work"
    g2p.train_g2p(work, steps=I(2), threads=I(1), progress=False, dev_eval=False, save_every=I(1),
                  seed=I(0), max_tokens=I(500))
    header, records = g2p.read_log(work / "log.jsonl")
    assert [r["step"] for r in records] == [1, 2] and header["start"]["recipe"]["max_tokens"] == 500
    out = g2p.ship(work, tmp_path / "out", keep_last=I(2))
    assert torch.load(out, weights_only=True)["steps"] == [1, 2]
    with pytest.raises(ValueError, match="keep_last must be a positive int, got 2.0"):
        g2p.ship(work, tmp_path / "out", keep_last=2.0)
    with pytest.raises(ValueError, match="seed must be an int >= 0, got True"):
        g2p.train_g2p(work, steps=2, seed=True)
    with pytest.raises(ValueError, match="threads must be a positive int, got 1.0"):
        g2p.train_g2p(work, steps=2, threads=1.0)


# ---------------------------------------------------------------- variations (chapter 12)

def test_variations_take_numpy_ints():
    config = dict(V.BASE_CONFIG, d_model=I(32), h=I(2), d_k=I(8), d_ff=I(64), N=I(1), warmup=I(0))
    V.check_config(config)
    assert V.build_model(config, I(0)) is not None
    task = dict(V.TASK, steps=2, batch_size=4)
    assert V.run_row("base", I(0), steps=I(2), task=task)["losses"] == V.run_row("base", 0, steps=2, task=task)["losses"]
    assert json.dumps(V.run_row("base", I(1), steps=1, task=task)["seed"]) == "1"
    with pytest.raises(ValueError, match="d_k must be None .* or a positive int, got 8.0"):
        V.check_config(dict(V.BASE_CONFIG, d_k=8.0))
    with pytest.raises(ValueError, match="warmup must be an int >= 0 .*got 4.5"):
        V.check_config(dict(V.BASE_CONFIG, warmup=4.5))
    with pytest.raises(ValueError, match="a seed must be an int >= 0, got True"):
        V.run_row("base", True, steps=1, task=task)
    with pytest.raises(ValueError, match="workers must be a positive int, got 1.0"):
        V.sweep(workers=1.0)
    with pytest.raises(ValueError, match="a seed must be an int >= 0, got 0.0"):
        V.sweep(workers=I(1), seeds=[0.0])


# ---------------------------------------------------------------- figures and answer checkers

def test_figures_take_numpy_ints():
    assert figure_json({"a": I(3), "b": [np.int32(1), np.float32(0.5)]}) == figure_json({"a": 3, "b": [1, 0.5]})
    assert pe_rotation_figure(d_model=I(64), k=I(3), i=I(5), pos=I(10), max_pos=I(50)).html == \
        pe_rotation_figure().html
    assert schedule_figure(d_model=I(512), warmup=I(4000), steps=[I(1), I(4000)], d_models=[I(64), I(512)]).html == \
        schedule_figure(steps=[1, 4000], d_models=[64, 512]).html
    Q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    V_ = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]])
    assert sqrt_dk_figure(Q, Q, V_, token=I(2)).html == sqrt_dk_figure(Q, Q, V_, token=2).html
    keys = torch.randn(3, 2)
    words = ["a", "b", "c"]
    assert sentence_figure(words, keys, V_, [keys, keys], query=I(1)).html == \
        sentence_figure(words, keys, V_, [keys, keys], query=1).html
    with pytest.raises(ValueError, match="query must be a word index in 0..2, got True"):
        sentence_figure(words, keys, V_, [keys, keys], query=True)
    with pytest.raises(ValueError, match="token must be an index in 0..2, got 2.0"):
        sqrt_dk_figure(Q, Q, V_, token=2.0)
    with pytest.raises(ValueError, match="warmup must be a multiple of 100 in 100..10000, got 400.0"):
        schedule_figure(warmup=400.0)
    with pytest.raises(ValueError, match="d_model must be an even int >= 2, got True"):
        pe_rotation_figure(d_model=True)


def test_explorer_takes_a_numpy_step(model):
    steps = explorer_steps(model, SRC, shift_right(torch.tensor([[6, 7, 4, 3, 5, 2]])))
    assert explorer_figure(steps, I(3)).html == explorer_figure(steps, 3).html
    with pytest.raises(ValueError, match="step must be an index in 0..13, got 3.0"):
        explorer_figure(steps, 3.0)


def test_answer_checkers_take_numpy_ints():
    def ex(value):
        return Exercise("0.0", "a toy", lambda: value)
    assert diagnose(I(42), ex(42)) is None and diagnose(np.int32(42), ex(I(42))) is None
    assert "should be an int, got" in diagnose(True, ex(42))
