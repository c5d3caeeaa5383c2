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
    Tokenizer,
    Transformer,
    average_checkpoints,
    beam_search,
    beam_search_core,
    causal_mask,
    count_parameters,
    greedy_decode,
    heatmap,
    length_batches,
    padding_mask,
    scaled_dot_product_attention,
    set_seed,
    shift_right,
    target_mask,
)
from utils.core.checks import check_mask
from utils.model.decoding import beam_search_batch, length_penalty
from utils.tasks import g2p
from utils.tasks.reversal.task import exact_match, load_checkpoint, reversal_batch, save_checkpoints, train
from utils.training.batching import collate
from utils.training.recipe import dev_loss, make_optimizer, rate


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
    lambda m: beam_search_batch(m, torch.zeros(2, 0, dtype=torch.long)),
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
    with pytest.raises(TypeError, match="model must be a utils.model.transformer.Transformer.*got Linear"):
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
    (lambda m, v: g2p.greedy_phones(m, ["cat"], None), TypeError, "vocab must have an encode_word method"),
    (lambda m, v: dev_loss(m, [], LabelSmoothingLoss()), ValueError, "at least one"),
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


# ---------------------------------------------------------------- chapter 10: data, schedule, loop, checkpoints

@pytest.mark.parametrize("lengths,error,match", [
    ([3, -2], ValueError, r"lengths must be positive ints .*got -2 at index 1"),
    ([0, 4], ValueError, r"lengths must be positive ints .*got 0 at index 0"),
    ([2.5, 4], TypeError, r"lengths must be positive ints .*got float 2\.5 at index 0"),
    (["3"], TypeError, r"got str '3' at index 0"),
    (5, TypeError, "lengths must be a list of positive ints.*got int 5"),
    (torch.tensor(5), TypeError, "lengths must be a list of positive ints.*got Tensor"),
], ids=["negative", "zero", "float", "str", "int", "0-d-tensor"])
def test_length_batches_rejects_bad_lengths(lengths, error, match):
    with pytest.raises(error, match=match):
        length_batches(lengths, 10)


def test_length_batches_still_takes_tensors_and_iterators():
    assert length_batches(torch.tensor([3, 4, 5]), 10) == length_batches([3, 4, 5], 10) == [[0, 1], [2]]
    assert length_batches(iter([3, 4]), 10) == [[0, 1]]


@pytest.mark.parametrize("args,error,match", [
    (("5", 64, 400), TypeError, "step must be an int >= 0.*got str '5'"),
    ((float("nan"), 64, 400), TypeError, "step must be an int >= 0.*got float nan"),
    ((2.5, 64, 400), TypeError, r"step must be an int >= 0.*got float 2\.5"),
    ((-1, 64, 400), ValueError, "step must be an int >= 0.*got -1"),
    ((5, 64.0, 400), ValueError, "d_model must be a positive int, got float 64.0"),
    ((5, 64, 0), ValueError, "warmup must be a positive int, got int 0"),
    ((5, 64, 400, -1.0), ValueError, r"factor must be a finite number > 0.*got float -1\.0"),
    ((5, 64, 400, float("nan")), ValueError, "factor must be a finite number > 0.*got float nan"),
    ((5, 64, 400, "2"), ValueError, "factor must be a finite number > 0.*got str '2'"),
], ids=["str", "nan", "float", "negative", "d_model-float", "warmup-0", "factor-negative", "factor-nan", "factor-str"])
def test_rate_rejects_bad_arguments(args, error, match):
    with pytest.raises(error, match=match):
        rate(*args)


def test_make_optimizer_and_train_name_a_model_that_is_not_a_transformer():
    with pytest.raises(TypeError, match="model must be a utils.model.transformer.Transformer.*got Linear"):
        make_optimizer(torch.nn.Linear(2, 2), 400)
    with pytest.raises(TypeError, match="model must be a utils.model.transformer.Transformer.*got Linear"):
        train(torch.nn.Linear(2, 2), 1, progress=False)


def test_make_optimizer_refuses_a_negative_factor():
    with pytest.raises(ValueError, match="factor must be a finite number > 0"):
        make_optimizer(Transformer(**TINY), 400, factor=-2.0)


def _pair():
    return reversal_batch(4, torch.Generator().manual_seed(0))


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(keep_last=-1), ValueError, r"keep_last must be an int >= 0 \(0 keeps no checkpoint\), got int -1"),
    (dict(keep_last=2.5), ValueError, "keep_last must be an int >= 0.*got float 2.5"),
    (dict(seed="0"), ValueError, "seed must be an int >= 0, got str '0'"),
    (dict(test=(_pair()[0],)), TypeError, r"test must be None or a \(src, tgt\) pair.*got tuple of length 1"),
    (dict(test=_pair()[0]), TypeError, r"test must be None or a \(src, tgt\) pair.*got Tensor"),
    (dict(test=(_pair()[0], _pair()[1][:3])), ValueError, "test src and test tgt need the same batch size, got 4 and 3"),
    (dict(test=(_pair()[0], _pair()[1].float())), TypeError, "test tgt must hold integer token ids"),
], ids=["keep_last-negative", "keep_last-float", "seed-str", "test-short", "test-tensor", "test-batch", "test-float"])
def test_train_rejects_bad_arguments_before_training(kwargs, error, match):
    with pytest.raises(error, match=match):
        train(Transformer(**TINY), 1, eval_every=1, progress=False, **kwargs)


def test_train_keeps_no_checkpoint_with_keep_last_0():
    set_seed(0)
    history = train(Transformer(**TINY), 2, batch_size=4, eval_every=1, keep_last=0, progress=False)
    assert history["checkpoints"] == {}


@pytest.mark.parametrize("tgt,error,match", [
    (lambda t: t.tolist(), TypeError, "tgt must be a torch.Tensor of token ids, got list"),
    (lambda t: t[0], ValueError, r"tgt must have shape \(batch, len\), got \(9,\)"),
    (lambda t: t[:3], ValueError, "src and tgt need the same batch size, got 4 and 3"),
], ids=["list", "1-D", "batch"])
def test_exact_match_rejects_bad_targets(model, tgt, error, match):
    src, target = _pair()
    with pytest.raises(error, match=match):
        exact_match(model, src, tgt(target))


@pytest.mark.parametrize("checkpoints,error,match", [
    ([{"a": torch.ones(1)}], TypeError, r"checkpoints must be a dict \{step: state_dict\}.*got list"),
    ({"last": {"a": torch.ones(1)}}, ValueError, "keyed by step, an int >= 0, got key 'last'"),
    ({100: torch.nn.Linear(2, 2)}, TypeError, "checkpoint 100 must be a state_dict.*got Linear"),
], ids=["list", "key", "module"])
def test_save_checkpoints_rejects_bad_input(tmp_path, checkpoints, error, match):
    with pytest.raises(error, match=match):
        save_checkpoints(checkpoints, tmp_path)
    assert not list(tmp_path.glob("*.pt"))


def test_load_checkpoint_names_a_file_of_another_model(tmp_path):
    torch.save(Transformer(20, 32, 2, 64, 1).state_dict(), tmp_path / "tiny_step7.pt")
    with pytest.raises(ValueError, match=r"tiny_step7\.pt must hold the weights of Transformer\(\*\*TINY\), "
                                         r"got those of another model: \d+ missing"):
        load_checkpoint(7, tmp_path)


def test_load_checkpoint_names_a_file_of_other_shapes(tmp_path):
    state = Transformer(**TINY).state_dict()
    state["encoder_layers.0.ffn.w_1.bias"] = torch.zeros(5)
    del state["encoder_layers.0.ffn.w_2.bias"]
    torch.save(state, tmp_path / "tiny_step7.pt")
    with pytest.raises(ValueError, match=r"another model: 1 missing \['encoder_layers.0.ffn.w_2.bias'\]; "
                                         r"1 of other shapes \['encoder_layers.0.ffn.w_1.bias \(5,\) instead of \(256,\)'\]$"):
        load_checkpoint(7, tmp_path)


@pytest.mark.parametrize("content", [b"garbage, not a checkpoint", b"", b"junk", b"PK\x03\x04 truncated zip"],
                         ids=["garbage", "empty", "short", "zip"])
def test_load_checkpoint_names_a_file_that_is_not_a_checkpoint(tmp_path, content):
    (tmp_path / "tiny_step8.pt").write_bytes(content)
    with pytest.raises(ValueError, match=r"tiny_step8\.pt must be a checkpoint saved by save_checkpoints.*torch\.load cannot read"):
        load_checkpoint(8, tmp_path)


def test_load_checkpoint_names_a_file_that_holds_no_state_dict(tmp_path):
    torch.save(torch.ones(3), tmp_path / "tiny_step9.pt")
    with pytest.raises(ValueError, match=r"tiny_step9\.pt must hold a state_dict of Transformer\(\*\*TINY\), got Tensor"):
        load_checkpoint(9, tmp_path)


@pytest.mark.parametrize("eps_ls,error,match", [
    ("0.1", TypeError, r"eps_ls must be a number in \[0, 1\), got str '0.1'"),
    (None, TypeError, r"eps_ls must be a number in \[0, 1\), got NoneType"),
    (float("nan"), ValueError, r"eps_ls must lie in \[0, 1\), got nan"),
    (-0.1, ValueError, r"eps_ls must lie in \[0, 1\), got -0.1"),
])
def test_label_smoothing_rejects_a_bad_eps(eps_ls, error, match):
    with pytest.raises(error, match=match):
        LabelSmoothingLoss(eps_ls)


@pytest.mark.parametrize("generator", [0, None, "seed"])
def test_reversal_batch_rejects_a_generator_that_is_not_one(generator):
    with pytest.raises(TypeError, match="generator must be a torch.Generator.*got"):
        reversal_batch(4, generator)


# ---------------------------------------------------------------- chapters 4, 6, 8 and 11: ids, tokens, lengths

@pytest.mark.parametrize("call,error,match", [
    (lambda ids: padding_mask(ids, "0"), TypeError, r"pad_id must be a token id \(an int >= 0\), got str '0'"),
    (lambda ids: padding_mask(ids, -1), ValueError, r"pad_id must be a token id \(an int >= 0\), got -1"),
    (lambda ids: target_mask(ids, 0.0), TypeError, "pad_id must be a token id.*got float 0.0"),
    (lambda ids: shift_right(ids, "1"), TypeError, r"bos_id must be a token id \(an int >= 0\), got str '1'"),
    (lambda ids: shift_right(ids, True), TypeError, "bos_id must be a token id.*got bool True"),
], ids=["pad-str", "pad-negative", "target-float", "bos-str", "bos-bool"])
def test_masks_and_shift_right_reject_bad_token_ids(call, error, match):
    with pytest.raises(error, match=match):
        call(torch.tensor([[5, 3, 0]]))


@pytest.mark.parametrize("ids,error,match", [
    (5, TypeError, r"ids must be a list or 1-D tensor of token ids such as \[5, 3, 4\], got int 5"),
    (None, TypeError, "ids must be a list or 1-D tensor of token ids.*got NoneType"),
    ("5 3", TypeError, "ids must be a list or 1-D tensor of token ids.*got str '5 3'"),
    (torch.tensor(5), ValueError, r"ids must be a 1-D tensor or a list of token ids, got a tensor of shape \(\)"),
    (torch.tensor([[5, 3]]), ValueError, r"got a tensor of shape \(1, 2\)"),
], ids=["int", "none", "str", "0-d", "2-D"])
def test_tokenizer_decode_rejects_what_is_not_a_sequence_of_ids(ids, error, match):
    with pytest.raises(error, match=match):
        Tokenizer().decode(ids)


def test_tokenizer_decode_still_takes_lists_tuples_and_tensors():
    tok = Tokenizer()
    assert tok.decode([5, 3, 2, 4]) == tok.decode((5, 3, 2, 4)) == tok.decode(torch.tensor([5, 3, 2, 4])) == "c a"


@pytest.mark.parametrize("args,match", [
    ((-10,), r"length must be an int >= 0 \(a number of tokens\), got -10"),
    ((2.5,), "length must be an int >= 0.*got 2.5"),
    (("3",), "length must be an int >= 0.*got '3'"),
    ((3, -0.5), r"alpha must be a number >= 0 \(0 = no length penalty\), got -0.5"),
    ((3, "0.6"), "alpha must be a number >= 0.*got '0.6'"),
], ids=["negative", "float", "str", "alpha-negative", "alpha-str"])
def test_length_penalty_rejects_bad_lengths(args, match):
    with pytest.raises(ValueError, match=match):
        length_penalty(*args)


def test_length_penalty_of_length_0_is_real():
    assert length_penalty(0) == pytest.approx((5 / 6) ** 0.6)


@pytest.mark.parametrize("module", [[1, 2], None, torch.ones(3)], ids=["list", "none", "tensor"])
def test_count_parameters_names_what_is_not_a_module(module):
    with pytest.raises(TypeError, match=r"module must be a torch.nn.Module \(a model or a layer\), got"):
        count_parameters(module)


@pytest.mark.parametrize("x,error,match", [
    ([[1.0] * 16], TypeError, "x must be a torch.Tensor, got list"),
    (torch.ones(2, 3, dtype=torch.long), TypeError, "x must be a floating-point tensor, got dtype torch.int64"),
    (torch.randn(3, 16), ValueError, r"x must have at least 3 dimensions, got shape \(3, 16\)"),
], ids=["list", "ids", "2-D"])
def test_decoder_layer_names_a_bad_x_before_it_reads_its_length(x, error, match):
    layer = DecoderLayer(16, 2, 32, p_drop=0.0).eval()
    with pytest.raises(error, match=match):
        layer(x, torch.randn(1, 4, 16))


# ---------------------------------------------------------------- chapter 15: G2P data and metrics

@pytest.mark.parametrize("call,error,match", [
    (lambda v: v.encode_phones(None), TypeError, r"phones must be a list of strings such as \['R', 'EH', 'D'\], got None"),
    (lambda v: v.encode_phones(5), TypeError, "phones must be a list of strings.*got 5"),
    (lambda v: v.decode_phones(5), TypeError, "ids must be a list or 1-D tensor of token ids.*got int 5"),
    (lambda v: g2p.split_of(3), TypeError, "word must be a str such as 'read', got int 3"),
    (lambda v: g2p.split_of(None), TypeError, "word must be a str such as 'read', got NoneType None"),
    (lambda v: collate([]), ValueError, r"pairs must hold at least one \(source ids, target ids\) pair, got an empty list"),
    (lambda v: collate(None), TypeError, r"pairs must be a list of \(source ids, target ids\), got NoneType"),
    (lambda v: collate([([21, 8], [57, 2]), ([21], [])]), ValueError, r"pair 1 must be \(source ids, target ids\), two non-empty"),
    (lambda v: collate([([21, 8],)]), ValueError, r"pair 0 must be \(source ids, target ids\)"),
    (lambda v: collate([("read", [57, 2])]), ValueError, r"pair 0 must be .* lists of ints"),
    (lambda v: g2p.closest_reference(["K", "AE", "T"], []), ValueError, r"one or more non-empty reference pronunciations.*got \[\]"),
    (lambda v: g2p.closest_reference("K AE T", [["K", "AE", "T"]]), TypeError, "must be a list of phone strings"),
], ids=["encode-none", "encode-int", "decode-int", "split-int", "split-none", "collate-empty", "collate-none",
        "collate-empty-tgt", "collate-single", "collate-str", "closest-empty", "closest-str"])
def test_g2p_data_and_metrics_reject_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call(g2p.G2PVocab())


def test_g2p_collate_and_closest_reference_still_work():
    src, tgt = collate([([21, 8, 4, 7], [57, 40, 38, 2]), ((21,), (57, 2))])
    assert src.tolist() == [[21, 8, 4, 7], [21, 0, 0, 0]] and tgt.tolist() == [[57, 40, 38, 2], [57, 2, 0, 0]]
    assert g2p.closest_reference(["K"], [["K", "AE"], ["K"]]) == (0, ["K"])
