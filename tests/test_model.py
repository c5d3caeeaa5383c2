"""Properties of the full model (utils.model.transformer, utils.model.layers, utils.model.embeddings).

These check behaviour that must hold for any weights: padding and the future
never leak into real outputs, the batch order does not matter, no NaN appears,
and bad inputs fail with clear errors. Plus parity of each layer with PyTorch.
"""

import math

import pytest
import torch
from torch import nn

from utils import (
    BASE,
    PAD_ID,
    TINY,
    DecoderLayer,
    EncoderLayer,
    LayerNorm,
    Transformer,
    causal_mask,
    count_parameters,
    padding_mask,
    positional_encoding,
    set_seed,
    target_mask,
)

TOL = 1e-5


@pytest.fixture
def model():
    set_seed(0)
    return Transformer(**TINY).eval()


def pad_to(rows, length):
    """List of id lists -> (batch, length) long tensor, right-padded with PAD_ID."""
    return torch.tensor([r + [PAD_ID] * (length - len(r)) for r in rows])


# Two sentence pairs of different lengths (ids 3..12 are letters, 1 = <s>, 2 = </s>).
SHORT_SRC, SHORT_TGT = [5, 3, 4, 7], [1, 7, 4, 3]
LONG_SRC, LONG_TGT = [6, 8, 3, 12, 9, 4, 10], [1, 10, 4, 9, 12, 3, 8]


def test_parameter_count_of_the_tiny_model(model):
    assert count_parameters(model) == 234_304


def test_parameter_counts_at_base_size():
    set_seed(0)
    d, h, d_ff = BASE["d_model"], BASE["h"], BASE["d_ff"]
    assert count_parameters(EncoderLayer(d, h, d_ff)) == 3_152_384
    assert count_parameters(DecoderLayer(d, h, d_ff)) == 4_204_032


def test_tied_table_counts_once(model):
    assert model.generator(torch.zeros(1, TINY["d_model"])).shape == (1, TINY["vocab_size"])
    names = [n for n, _ in model.named_parameters()]
    assert sum(n.startswith("embed.") for n in names) == 1


def test_padding_never_changes_a_real_output(model):
    """A sentence alone and batched (padded) with a longer one gives the same logits."""
    with torch.no_grad():
        alone = model(torch.tensor([SHORT_SRC]), torch.tensor([SHORT_TGT]))
        batched = model(pad_to([SHORT_SRC, LONG_SRC], 7), pad_to([SHORT_TGT, LONG_TGT], 7))
    t = len(SHORT_TGT)
    diff = (batched[0, :t] - alone[0]).abs().max().item()
    assert diff < TOL, diff
    # The longer sentence is not padded, so it is unaffected by the short one too.
    with torch.no_grad():
        long_alone = model(torch.tensor([LONG_SRC]), torch.tensor([LONG_TGT]))
    assert (batched[1] - long_alone[0]).abs().max().item() < TOL


def test_masked_source_tokens_are_invisible(model):
    """Whatever token sits at a masked source position, real outputs do not change."""
    src = torch.tensor([SHORT_SRC + [PAD_ID] * 3])
    tgt = torch.tensor([SHORT_TGT])
    src_mask = padding_mask(src)
    junk = src.clone()
    junk[0, len(SHORT_SRC):] = torch.tensor([9, 12, 3])  # letters where the mask says "padding"
    with torch.no_grad():
        a = model(src, tgt, src_mask=src_mask)
        b = model(junk, tgt, src_mask=src_mask)
    assert (a - b).abs().max().item() < TOL


def test_a_later_target_token_never_changes_an_earlier_output(model):
    tgt = torch.tensor([LONG_TGT])
    src = torch.tensor([LONG_SRC])
    with torch.no_grad():
        base = model(src, tgt)
        for j in range(1, tgt.size(1)):
            changed = tgt.clone()
            changed[0, j] = 3 + (changed[0, j] - 3 + 5) % 10  # a different letter at position j
            out = model(src, changed)
            assert (out[0, :j] - base[0, :j]).abs().max().item() < TOL, j
            assert (out[0, j] - base[0, j]).abs().max().item() > 1e-3, "position j must see its own token"


def test_shuffling_the_batch_shuffles_the_outputs(model):
    srcs = [SHORT_SRC, LONG_SRC, [3, 4], [12, 11, 10, 9, 8]]
    tgts = [SHORT_TGT, LONG_TGT, [1, 4, 3], [1, 8, 9, 10]]
    src, tgt = pad_to(srcs, 7), pad_to(tgts, 7)
    perm = torch.tensor([2, 0, 3, 1])
    with torch.no_grad():
        out = model(src, tgt)
        out_perm = model(src[perm], tgt[perm])
    assert (out_perm - out[perm]).abs().max().item() < TOL


def test_no_nan_in_forward_or_gradients_with_padding():
    set_seed(0)
    model = Transformer(**TINY).train()  # dropout on, as in training
    src = pad_to([LONG_SRC, [3], SHORT_SRC], 7)
    tgt = pad_to([LONG_TGT, [1], SHORT_TGT], 7)
    logits = model(src, tgt)
    assert torch.isfinite(logits).all()
    loss = nn.functional.cross_entropy(logits.reshape(-1, TINY["vocab_size"]), tgt.reshape(-1),
                                       ignore_index=PAD_ID)
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None, name
        assert torch.isfinite(p.grad).all(), name


def test_no_nan_when_a_source_is_all_padding(model):
    """A row whose keys are all masked must give zeros, not NaN, forward and backward."""
    src = pad_to([SHORT_SRC, []], 4)
    tgt = pad_to([SHORT_TGT, [1]], 4)
    logits = model.train()(src, tgt)
    assert torch.isfinite(logits).all()
    logits.sum().backward()
    for name, p in model.named_parameters():
        assert torch.isfinite(p.grad).all(), name


# --- positional encoding ----------------------------------------------------


def test_positional_encoding_values():
    pe = positional_encoding(50, 64)
    assert pe.shape == (50, 64) and pe.dtype == torch.float32
    w1 = 10000 ** (-2 / 64)
    expected = [math.sin(1), math.cos(1), math.sin(w1), math.cos(w1)]
    assert pe[1, :4].tolist() == pytest.approx(expected, abs=1e-6)
    assert pe[1, :4].tolist() == pytest.approx([0.841, 0.540, 0.682, 0.732], abs=5e-4)
    assert pe[0, 0::2].abs().max() == 0 and (pe[0, 1::2] == 1).all()


def test_a_fixed_offset_is_a_rotation():
    d_model, i, k = 64, 5, 3
    angle = k * 10000 ** (-2 * i / d_model)
    M = torch.tensor([[math.cos(angle), math.sin(angle)], [-math.sin(angle), math.cos(angle)]])
    pe = positional_encoding(60, d_model)
    pairs = pe[:, 2 * i:2 * i + 2]
    assert (pairs[:-k] @ M.T - pairs[k:]).abs().max().item() < 1e-6


@pytest.mark.parametrize("d_model", [63, 1, 7])
def test_odd_d_model_raises(d_model):
    with pytest.raises(ValueError, match="d_model must be even"):
        positional_encoding(10, d_model)


@pytest.mark.parametrize("max_len,d_model", [(0, 8), (-1, 8), (10, 0), (10.0, 8), (True, 8), (10, "8")])
def test_bad_sizes_raise(max_len, d_model):
    with pytest.raises(ValueError, match="must be a positive int"):
        positional_encoding(max_len, d_model)


# --- bad inputs to the model -------------------------------------------------


def test_float_ids_raise(model):
    with pytest.raises(TypeError, match="integer token ids"):
        model(torch.tensor([SHORT_SRC]).float(), torch.tensor([SHORT_TGT]))
    with pytest.raises(TypeError, match="integer token ids"):
        model(torch.tensor([SHORT_SRC]), torch.tensor([SHORT_TGT]).float())


def test_ids_outside_the_vocabulary_raise(model):
    with pytest.raises(IndexError, match=r"0\.\.12"):
        model(torch.tensor([[5, 13]]), torch.tensor([SHORT_TGT]))


def test_too_long_sequence_raises():
    set_seed(0)
    small = Transformer(**TINY, max_len=8).eval()
    with pytest.raises(ValueError, match="exceeds max_len=8"):
        small(torch.tensor([[3] * 9]), torch.tensor([SHORT_TGT]))
    with pytest.raises(ValueError, match="exceeds max_len=8"):
        small(torch.tensor([SHORT_SRC]), torch.tensor([[1] + [3] * 8]))
    with torch.no_grad():  # exactly max_len is fine
        assert small(torch.tensor([[3] * 8]), torch.tensor([[1] * 8])).shape == (1, 8, 13)


def test_float_mask_raises(model):
    src, tgt = torch.tensor([SHORT_SRC]), torch.tensor([SHORT_TGT])
    with pytest.raises(TypeError, match="torch.bool"):
        model(src, tgt, src_mask=padding_mask(src).float())


# --- layers against PyTorch --------------------------------------------------


def test_layer_norm_matches_torch_with_random_gains():
    set_seed(0)
    ours, ref = LayerNorm(16), nn.LayerNorm(16)
    with torch.no_grad():
        ref.weight.uniform_(0.5, 1.5)
        ref.bias.uniform_(-0.5, 0.5)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(3, 5, 16) * 4 + 2
    assert (ours(x) - ref(x)).abs().max().item() < 1e-5
    by_hand = LayerNorm(4)(torch.tensor([1.0, 2, 3, 6]))
    assert by_hand.tolist() == pytest.approx([-1.069, -0.535, 0.0, 1.604], abs=5e-4)


def _copy_attention(ours, theirs):
    for lin, w, b in zip((ours.w_q, ours.w_k, ours.w_v), theirs.in_proj_weight.chunk(3),
                         theirs.in_proj_bias.chunk(3)):
        lin.weight.copy_(w)
        lin.bias.copy_(b)
    ours.w_o.load_state_dict(theirs.out_proj.state_dict())


def _randomise_norms(layer):
    for m in layer.modules():
        if isinstance(m, nn.LayerNorm):
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.5, 0.5)


def test_encoder_layer_matches_torch():
    set_seed(0)
    d, h, d_ff = 32, 4, 64
    ref = nn.TransformerEncoderLayer(d, h, d_ff, 0.1, batch_first=True, norm_first=False)
    ours = EncoderLayer(d, h, d_ff)
    with torch.no_grad():
        _randomise_norms(ref)
        _copy_attention(ours.self_attn, ref.self_attn)
        ours.ffn.w_1.load_state_dict(ref.linear1.state_dict())
        ours.ffn.w_2.load_state_dict(ref.linear2.state_dict())
        ours.norm1.load_state_dict(ref.norm1.state_dict())
        ours.norm2.load_state_dict(ref.norm2.state_dict())
    ref.eval()
    ours.eval()
    ids = pad_to([SHORT_SRC, LONG_SRC], 7)
    real = ids != PAD_ID
    x = torch.randn(2, 7, d)
    out = ours(x, padding_mask(ids))
    expected = ref(x, src_key_padding_mask=~real)  # with gradients on: no fast path
    assert (out - expected)[real].abs().max().item() < TOL


def test_decoder_layer_matches_torch():
    set_seed(0)
    d, h, d_ff = 32, 4, 64
    ref = nn.TransformerDecoderLayer(d, h, d_ff, 0.1, batch_first=True, norm_first=False)
    ours = DecoderLayer(d, h, d_ff)
    with torch.no_grad():
        _randomise_norms(ref)
        _copy_attention(ours.self_attn, ref.self_attn)
        _copy_attention(ours.cross_attn, ref.multihead_attn)
        ours.ffn.w_1.load_state_dict(ref.linear1.state_dict())
        ours.ffn.w_2.load_state_dict(ref.linear2.state_dict())
        for i in (1, 2, 3):
            getattr(ours, f"norm{i}").load_state_dict(getattr(ref, f"norm{i}").state_dict())
    ref.eval()
    ours.eval()
    src = pad_to([SHORT_SRC, LONG_SRC], 7)
    tgt = pad_to([SHORT_TGT, LONG_TGT], 7)
    y, memory = torch.randn(2, 7, d), torch.randn(2, 7, d)
    out = ours(y, memory, src_mask=padding_mask(src), tgt_mask=target_mask(tgt))
    expected = ref(y, memory, tgt_mask=~causal_mask(7), tgt_key_padding_mask=tgt == PAD_ID,
                   memory_key_padding_mask=src == PAD_ID)
    real = tgt != PAD_ID
    assert (out - expected)[real].abs().max().item() < TOL
