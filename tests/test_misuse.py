"""Hostile inputs: every wrong input gets an error that names what was expected and what arrived.

One parametrised case per misuse found in the audit of issue 11 (part 3); each used to
pass silently or to fail deep inside PyTorch with a message about something else.
"""

import json

import pytest
import torch

from utils import (
    TINY,
    DecoderLayer,
    Embeddings,
    LabelSmoothingLoss,
    LayerNorm,
    MultiHeadAttention,
    PositionwiseFeedForward,
    Transformer,
    average_checkpoints,
    beam_search,
    beam_search_core,
    causal_mask,
    g2p,
    greedy_decode,
    heatmap,
    padding_mask,
    scaled_dot_product_attention,
    set_seed,
    shift_right,
    target_mask,
)
from utils.checks import check_mask


@pytest.fixture(scope="module")
def model():
    set_seed(0)
    return Transformer(**TINY).eval()


def _qkv(*shape):
    return torch.randn(*shape), torch.randn(*shape), torch.randn(*shape)


# ---------------------------------------------------------------- masks

def test_a_batch_by_len_padding_mask_is_refused_when_batch_equals_len():
    q, k, v = _qkv(5, 4, 5, 8)  # batch 5, 4 heads, 5 positions
    with pytest.raises(ValueError, match=r"\(5, 5\) is ambiguous.*padding_mask\(ids\)"):
        scaled_dot_product_attention(q, k, v, torch.ones(5, 5, dtype=torch.bool))


def test_a_batch_by_len_mask_names_the_accepted_shapes_when_it_does_not_broadcast():
    q, k, v = _qkv(3, 4, 5, 8)
    with pytest.raises(ValueError, match=r"does not broadcast.*accepted: \(batch=3, 1, 1, k_len=5\)"):
        scaled_dot_product_attention(q, k, v, torch.ones(3, 5, dtype=torch.bool))


def test_cross_attention_padding_mask_in_2d_is_refused():
    # scores (batch 3, h, q_len 3, k_len 5): a (batch, k_len) mask broadcasts as (q_len, k_len)
    with pytest.raises(ValueError, match="ambiguous"):
        check_mask(torch.ones(3, 5, dtype=torch.bool), (3, 4, 3, 5))


def test_a_batch_by_q_by_k_mask_is_refused_when_batch_equals_heads():
    with pytest.raises(ValueError, match=r"reads it as \(h, q_len, k_len\)"):
        check_mask(torch.ones(4, 5, 5, dtype=torch.bool), (4, 4, 5, 5))


@pytest.mark.parametrize("mask_shape,scores_shape", [
    ((5, 5), (2, 4, 5, 5)),        # causal_mask(n) shared by a batch of 2
    ((1, 5), (2, 4, 5, 5)),        # a row of causal_mask, as chapter 2 uses
    ((5, 5), (5, 5)),              # unbatched scores
    ((3, 3), (1, 3, 3)),           # batch of one
    ((1, 1, 5, 5), (5, 4, 5, 5)),  # causal_mask(5)[None, None]: always unambiguous
    ((5, 1, 1, 5), (5, 4, 5, 5)),  # padding_mask
    ((5, 1, 5, 5), (5, 4, 5, 5)),  # target_mask
    ((5,), (5, 4, 5, 5)),          # one key mask for everything
])
def test_unambiguous_masks_stay_legal(mask_shape, scores_shape):
    check_mask(torch.ones(mask_shape, dtype=torch.bool), scores_shape)


def test_decoder_layer_without_tgt_mask_is_causal():
    set_seed(0)
    layer = DecoderLayer(16, 2, 32, p_drop=0.0).eval()
    for batch, n in ((2, 6), (6, 6)):  # also batch == tgt_len, where a bare (n, n) mask is ambiguous
        x, memory = torch.randn(batch, n, 16), torch.randn(batch, 4, 16)
        with torch.no_grad():
            default = layer(x, memory)
            causal = layer(x, memory, tgt_mask=causal_mask(n)[None, None])
            open_ = layer(x, memory, tgt_mask=torch.ones(1, 1, n, n, dtype=torch.bool))
        assert torch.equal(default, causal)
        assert not torch.allclose(default, open_)


def test_transformer_decode_without_tgt_mask_uses_target_mask(model):
    src = torch.tensor([[5, 3, 4, 7], [6, 8, 0, 0]])
    tgt = torch.tensor([[1, 6, 7, 0], [1, 8, 6, 2]])
    with torch.no_grad():
        memory = model.encode(src)
        assert torch.equal(memory, model.encode(src, padding_mask(src)))
        default = model.decode(tgt, memory, padding_mask(src))
        explicit = model.decode(tgt, memory, padding_mask(src), target_mask(tgt))
    assert torch.equal(default, explicit)


# ---------------------------------------------------------------- empty sequences

@pytest.mark.parametrize("call", [
    lambda m: m(torch.zeros(2, 0, dtype=torch.long), torch.ones(2, 3, dtype=torch.long)),
    lambda m: m.encode(torch.zeros(2, 0, dtype=torch.long)),
    lambda m: m(torch.ones(2, 3, dtype=torch.long), torch.zeros(2, 0, dtype=torch.long)),
    lambda m: greedy_decode(m, torch.zeros(1, 0, dtype=torch.long)),
    lambda m: beam_search(m, torch.zeros(1, 0, dtype=torch.long)),
    lambda m: g2p.beam_search_batch(m, torch.zeros(2, 0, dtype=torch.long)),
    lambda m: target_mask(torch.zeros(2, 0, dtype=torch.long)),
    lambda m: shift_right(torch.zeros(2, 0, dtype=torch.long)),
], ids=["forward-src", "encode", "forward-tgt", "greedy", "beam", "beam-batch", "target_mask", "shift_right"])
def test_an_empty_sequence_is_refused(model, call):
    with pytest.raises(ValueError, match=r"len >= 1"):
        call(model)


# ---------------------------------------------------------------- attention inputs

@pytest.mark.parametrize("args,error,match", [
    ((torch.randn(2, 4, 5, 8).double(), torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 8)), TypeError, "one dtype"),
    ((torch.randn(2, 5, 8), torch.randn(3, 5, 8), torch.randn(3, 5, 8)), ValueError, "leading .* broadcast"),
], ids=["dtypes", "batch"])
def test_attention_rejects_bad_inputs(args, error, match):
    with pytest.raises(error, match=match):
        scaled_dot_product_attention(*args)


def test_attention_on_the_meta_device_still_works():
    q = torch.empty(2, 4, 5, 8, device="meta")
    out, _ = scaled_dot_product_attention(q, q, q, causal_mask(5).to("meta"))
    assert out.shape == (2, 4, 5, 8)


# ---------------------------------------------------------------- sizes and configs

@pytest.mark.parametrize("make,error,match", [
    (lambda: MultiHeadAttention(8, 0), ValueError, "h must be a positive int, got 0"),
    (lambda: MultiHeadAttention(8, -2), ValueError, "h must be a positive int, got -2"),
    (lambda: MultiHeadAttention(8, 2.0), TypeError, "h must be a positive int, got float"),
    (lambda: MultiHeadAttention(0, 1), ValueError, "d_model must be a positive int"),
    (lambda: PositionwiseFeedForward(8, 0), ValueError, "d_ff must be a positive int"),
    (lambda: PositionwiseFeedForward(8, -1), ValueError, "d_ff must be a positive int"),
    (lambda: LayerNorm(0), ValueError, "d_model must be a positive int"),
    (lambda: LayerNorm(8, eps=-1), ValueError, "eps must be a number > 0"),
    (lambda: Embeddings(0, 8), ValueError, "vocab_size must be a positive int"),
    (lambda: Transformer(0), ValueError, "vocab_size must be a positive int"),
    (lambda: Transformer(13, 64, 4, 256, N=0), ValueError, "N must be a positive int, got 0"),
    (lambda: Transformer(13, 64, 4, 256, N=-1), ValueError, "N must be a positive int, got -1"),
    (lambda: Transformer(13, 64, 3, 256, 1), ValueError, "h=3 must divide d_model=64"),
    (lambda: Transformer(13, 64, 4, 256, 1, p_drop=1.5), ValueError, r"p_drop must lie in \[0, 1\)"),
    (lambda: Transformer(13, 64, 4, 256, 1, p_drop="0.1"), TypeError, "p_drop must be a number"),
    (lambda: Transformer(13, 64, 4, 256, 1, pad_id=13), ValueError, r"pad_id must be a token id in 0\.\.12"),
    (lambda: Transformer(**TINY, dmodel=3), TypeError, "dmodel"),
    (lambda: g2p.new_model(dmodel=3), TypeError, r"unknown model fields \['dmodel'\]"),
    (lambda: g2p.new_model(0), ValueError, "vocab_size must be a positive int"),
    (lambda: set_seed(2**40), ValueError, r"seed must be an int in 0\.\.2\*\*32 - 1"),
], ids=lambda x: "" if callable(x) or isinstance(x, type) else x[:30])
def test_bad_sizes_and_configs_raise(make, error, match):
    with pytest.raises(error, match=match):
        make()


# ---------------------------------------------------------------- layer and model inputs

@pytest.mark.parametrize("call,error,match", [
    (lambda: PositionwiseFeedForward(8, 16)(torch.randn(2, 3, 7)), ValueError, r"\(\.\.\., d_model=8\), got \(2, 3, 7\)"),
    (lambda: PositionwiseFeedForward(8, 16)(torch.ones(2, 3, 8, dtype=torch.long)), TypeError, "floating-point"),
    (lambda: LayerNorm(8)(torch.randn(2, 3, 7)), ValueError, r"\(\.\.\., d_model=8\), got \(2, 3, 7\)"),
    (lambda: LayerNorm(8)([[1.0] * 8]), TypeError, "must be a torch.Tensor, got list"),
    (lambda: MultiHeadAttention(8, 2)(torch.randn(2, 3, 8), torch.randn(3, 3, 8), torch.randn(3, 3, 8)),
     ValueError, "leading .* broadcast"),
], ids=["ffn-width", "ffn-int", "norm-width", "norm-list", "mha-batch"])
def test_layers_reject_bad_inputs(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("call,match", [
    (lambda m: m(torch.tensor([[5, 3, 4], [6, 7, 0]]), torch.ones(3, 3, dtype=torch.long)),
     "tgt and memory must have the same batch size"),
    (lambda m: m.decode(torch.ones(2, 3, dtype=torch.long), torch.randn(2, 4, 32)), r"d_model=64"),
    (lambda m: m.decode(torch.ones(2, 3, dtype=torch.long), torch.randn(2, 0, 64)), r"src_len >= 1"),
], ids=["batch", "width", "empty-memory"])
def test_transformer_rejects_bad_memory(model, call, match):
    with pytest.raises(ValueError, match=match):
        call(model)


# ---------------------------------------------------------------- training and decoding

@pytest.mark.parametrize("target,match", [
    (torch.tensor([1, 13]), r"target ids must lie in 0\.\.12.*max 13"),
    (torch.tensor([1, -3]), r"target ids must lie in 0\.\.12.*min -3"),
])
def test_label_smoothing_rejects_ids_outside_the_classes(target, match):
    with pytest.raises(ValueError, match=match):
        LabelSmoothingLoss()(torch.randn(2, 13), target)


def test_label_smoothing_rejects_nan_logits():
    with pytest.raises(ValueError, match="logits must hold finite numbers"):
        LabelSmoothingLoss()(torch.full((2, 13), float("nan")), torch.tensor([1, 3]))


def test_decoders_name_a_model_that_is_not_a_transformer():
    with pytest.raises(TypeError, match="model must be a utils.model.Transformer.*got Linear"):
        greedy_decode(torch.nn.Linear(2, 2), torch.ones(1, 3, dtype=torch.long))


@pytest.mark.parametrize("fn,error,match", [
    (None, TypeError, "next_log_probs must be a function"),
    (lambda p: torch.zeros(3), ValueError, r"shape \(1, vocab\), got \(3,\)"),
    (lambda p: [[0.0] * 5], TypeError, "floating-point tensor"),
    (lambda p: torch.full((p.size(0), 5), float("nan")), ValueError, "NaN"),
], ids=["none", "shape", "list", "nan"])
def test_beam_search_core_checks_next_log_probs(fn, error, match):
    with pytest.raises(error, match=match):
        beam_search_core(fn, 5)


@pytest.mark.parametrize("arg,error,match", [
    ({"a": torch.ones(1)}, TypeError, "must be a list of state_dict"),
    (iter([{"a": torch.ones(1)}]), TypeError, "must be a list of state_dict"),
    ("model", TypeError, "must be a list of state_dict"),
    ([torch.nn.Linear(2, 2)], TypeError, "state_dict 0 must be a mapping.*got Linear"),
    ([{"a": torch.ones(1)}, {"a": torch.ones(1, dtype=torch.long)}], ValueError, "dtype torch.int64 in state_dict 1"),
    ([{"a": torch.ones(1)}, {"a": torch.full((1,), float("nan"))}], ValueError, "a of state_dict 1 holds NaN"),
    ([{"a": torch.ones(1)}, {"b": torch.ones(1)}], ValueError, "different keys"),
], ids=["dict", "iterator", "str", "module", "dtype", "nan", "keys"])
def test_average_checkpoints_rejects_bad_input(arg, error, match):
    with pytest.raises(error, match=match):
        average_checkpoints(arg)


# ---------------------------------------------------------------- plotting

@pytest.mark.parametrize("kwargs,error,match", [
    (dict(data="abc"), TypeError, "2-D matrix of numbers"),
    (dict(data=torch.zeros(0, 3)), ValueError, r"non-empty 2-D matrix, got shape \(0, 3\)"),
    (dict(data=torch.zeros(2, 2), fmt=3), TypeError, "fmt must be a format string"),
])
def test_heatmap_rejects_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        heatmap(**kwargs)


# ---------------------------------------------------------------- G2P files and settings

def test_load_shipped_rejects_a_file_that_is_not_a_shipped_model(tmp_path):
    torch.save({"x": torch.ones(1)}, tmp_path / "g2p_last.pt")
    with pytest.raises(ValueError, match=r"not a shipped G2P model.*got \['x'\]"):
        g2p.load_shipped("last", tmp_path)


def test_load_shipped_rejects_the_weights_of_another_model(tmp_path):
    torch.save(dict(steps=[1], state_dict=Transformer(**TINY).state_dict()), tmp_path / "g2p_avg.pt")
    with pytest.raises(ValueError, match="weights of another model"):
        g2p.load_shipped("avg", tmp_path)


def test_load_shipped_names_a_missing_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="is missing"):
        g2p.load_shipped("avg", tmp_path / "nowhere")


def test_read_log_rejects_missing_and_garbled_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no training log"):
        g2p.read_log(tmp_path / "log.jsonl")
    (tmp_path / "bad.jsonl").write_text("not json\n")
    with pytest.raises(ValueError, match="line 1 is not JSON"):
        g2p.read_log(tmp_path / "bad.jsonl")
    (tmp_path / "list.jsonl").write_text(json.dumps([1]) + "\n")
    with pytest.raises(ValueError, match="not a G2P training log"):
        g2p.read_log(tmp_path / "list.jsonl")


@pytest.mark.parametrize("keep_last", [0, -1, 2.5])
def test_ship_rejects_bad_keep_last(tmp_path, keep_last):
    with pytest.raises(ValueError, match="keep_last must be a positive int"):
        g2p.ship(tmp_path, tmp_path / "out", keep_last=keep_last)


@pytest.mark.parametrize("call,error,match", [
    (lambda m, v: g2p.score_split(m, {"cat": [["K", "AE", "T"]]}, v, decode="bem"), ValueError, "decode must be 'greedy' or 'beam'"),
    (lambda m, v: g2p.score_split(m, {}, v), ValueError, "non-empty dict"),
    (lambda m, v: g2p.greedy_phones(m, "cat", v), TypeError, "words must be a list of strings"),
    (lambda m, v: g2p.greedy_phones(m, ["cat"], v, batch_size=0), ValueError, "batch_size must be a positive int"),
    (lambda m, v: g2p.greedy_phones(m, ["cat"], None), TypeError, "vocab must be a G2PVocab"),
    (lambda m, v: g2p.dev_loss(m, [], LabelSmoothingLoss()), ValueError, "at least one"),
    (lambda m, v: g2p.train_g2p(threads=True), ValueError, "threads must be a positive int"),
    (lambda m, v: g2p.train_g2p(steps=True), ValueError, "steps must be a positive int"),
    (lambda m, v: g2p.train_g2p(max_tokens=0), ValueError, "max_tokens must be a positive int"),
    (lambda m, v: g2p.train_g2p(warmup=-5), ValueError, "warmup must be a positive int"),
    (lambda m, v: g2p.train_g2p(lr=1), ValueError, r"unknown recipe fields \['lr'\]"),
], ids=["decode", "empty-split", "words-str", "batch-0", "vocab", "dev-empty", "threads-bool", "steps-bool",
        "max_tokens", "warmup", "unknown"])
def test_g2p_entry_points_reject_bad_arguments(model, call, error, match):
    with pytest.raises(error, match=match):
        call(model, g2p.G2PVocab())
