"""Unit tests for utils.model.attention and utils.core.masks, including bad inputs."""

import math

import pytest
import torch
import torch.nn.functional as F

from utils import MultiHeadAttention, causal_mask, padding_mask, scaled_dot_product_attention, set_seed, shift_right, target_mask


def qkv(*shape_q, k_len=None, d_v=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    *lead, q_len, d_k = shape_q
    k_len = k_len or q_len
    d_v = d_v or d_k
    return (torch.randn(*lead, q_len, d_k, generator=g), torch.randn(*lead, k_len, d_k, generator=g),
            torch.randn(*lead, k_len, d_v, generator=g))


def test_worked_example_by_hand():
    Q = K = torch.tensor([[1.0, 0], [0, 1], [1, 1]])
    V = torch.tensor([[1.0, 0], [0, 2], [3, 1]])
    out, A = scaled_dot_product_attention(Q, K, V)
    e = math.exp(1 / math.sqrt(2))
    assert A[0, 0].item() == pytest.approx(e / (2 * e + 1), abs=1e-6)
    assert A.sum(-1).allclose(torch.ones(3))
    assert out[2].tolist() == pytest.approx([1.7587, 1.0], abs=1e-4)


@pytest.mark.parametrize("causal", [False, True])
def test_matches_torch_sdpa(causal):
    q, k, v = qkv(2, 3, 7, 8, d_v=5)
    mask = causal_mask(7) if causal else None
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert (out - ref).abs().max().item() < 1e-6


def test_padding_mask_hides_keys():
    q, k, v = qkv(2, 4, 8)
    ids = torch.tensor([[5, 6, 7, 0], [3, 4, 0, 0]])
    _, w = scaled_dot_product_attention(q, k, v, padding_mask(ids)[:, 0])
    assert w[0, :, 3].abs().max() == 0 and w[1, :, 2:].abs().max() == 0 and w[1, :, :2].sum() > 0


def test_fully_masked_row_gives_zeros_not_nan():
    q, k, v = qkv(3, 4)
    mask = torch.tensor([[True, False, False], [False, False, False], [True, True, True]])
    q.requires_grad_(True)
    out, w = scaled_dot_product_attention(q, k, v, mask)
    assert not torch.isnan(out).any() and not torch.isnan(w).any()
    assert w[1].abs().max() == 0 and out[1].abs().max() == 0
    assert w[0].tolist() == [1.0, 0.0, 0.0]
    out.sum().backward()
    assert not torch.isnan(q.grad).any()


def test_mismatched_d_k_raises():
    q, k, v = qkv(3, 4)
    with pytest.raises(ValueError, match="same last dimension d_k"):
        scaled_dot_product_attention(q, k[:, :3], v)


def test_mismatched_k_v_lengths_raise():
    q, k, v = qkv(3, 4)
    with pytest.raises(ValueError, match="same number of positions"):
        scaled_dot_product_attention(q, k, v[:2])


def test_mask_that_does_not_broadcast_raises():
    q, k, v = qkv(3, 4)
    with pytest.raises(ValueError, match=r"does not broadcast to the attention scores of shape \(3, 3\)"):
        scaled_dot_product_attention(q, k, v, torch.ones(4, 4, dtype=torch.bool))


def test_float_mask_raises_and_names_the_convention():
    q, k, v = qkv(3, 4)
    with pytest.raises(TypeError, match="True = may attend"):
        scaled_dot_product_attention(q, k, v, torch.ones(3, 3))


def test_non_tensor_and_integer_inputs_raise():
    q, k, v = qkv(3, 4)
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        scaled_dot_product_attention(q.tolist(), k, v)
    with pytest.raises(TypeError, match="floating-point"):
        scaled_dot_product_attention(q.long(), k, v)


def test_multi_head_matches_torch_with_its_weights():
    set_seed(0)
    d_model, h = 16, 4
    ref = torch.nn.MultiheadAttention(d_model, h, batch_first=True)
    ours = MultiHeadAttention(d_model, h)
    W = ref.in_proj_weight.detach().chunk(3)
    b = ref.in_proj_bias.detach().chunk(3)
    with torch.no_grad():
        for lin, w_, b_ in zip((ours.w_q, ours.w_k, ours.w_v), W, b):
            lin.weight.copy_(w_)
            lin.bias.copy_(b_)
        ours.w_o.weight.copy_(ref.out_proj.weight)
        ours.w_o.bias.copy_(ref.out_proj.bias)
    x = torch.randn(2, 5, d_model)
    mem = torch.randn(2, 7, d_model)
    ids = torch.tensor([[3] * 7, [3] * 4 + [0] * 3])
    ours.keep_weights = True
    out = ours(x, mem, mem, padding_mask(ids))
    ref_out, ref_w = ref(x, mem, mem, key_padding_mask=~(ids != 0), average_attn_weights=False)
    assert (out - ref_out).abs().max().item() < 1e-6
    assert (ours.weights - ref_w).abs().max().item() < 1e-6


def test_multi_head_rejects_bad_shapes():
    mha = MultiHeadAttention(16, 4)
    with pytest.raises(ValueError, match=r"d_model=16"):
        mha(torch.randn(2, 5, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 8))
    with pytest.raises(ValueError, match="must divide"):
        MultiHeadAttention(10, 4)


def test_masks_and_shift_right():
    assert causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    ids = torch.tensor([[6, 7, 2, 0]])
    assert padding_mask(ids).shape == (1, 1, 1, 4)
    assert target_mask(ids).shape == (1, 1, 4, 4)
    assert target_mask(ids)[0, 0, 3].tolist() == [True, True, True, False]
    assert shift_right(ids).tolist() == [[1, 6, 7, 2]]
    with pytest.raises(TypeError, match="integer token ids"):
        padding_mask(ids.float())
    with pytest.raises(ValueError, match="positive int"):
        causal_mask(0)
