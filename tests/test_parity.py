"""The trained tiny model equals torch.nn.Transformer with the same weights (chapter 13).

Uses the shipped checkpoint of chapter 10 (trained weights: a fresh model would hide
the final-LayerNorm mismatch, see test_final_norms_break_parity_only_after_training).
"""

import warnings

import pytest
import torch
from torch import nn

from utils import PAD_ID, TINY, Transformer, causal_mask, padding_mask, set_seed, shift_right
from utils.tasks.reversal.task import load_checkpoint, reversal_batch


def make_pytorch_transformer():
    return nn.Transformer(d_model=TINY["d_model"], nhead=TINY["h"], num_encoder_layers=TINY["N"],
                          num_decoder_layers=TINY["N"], dim_feedforward=TINY["d_ff"], dropout=0.0,
                          activation="relu", batch_first=True, norm_first=False).eval()


def copy_attention(ours, theirs):
    theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
    theirs.out_proj.weight.copy_(ours.w_o.weight)
    theirs.out_proj.bias.copy_(ours.w_o.bias)


def copy_into_pytorch(model, pt):
    with torch.no_grad():
        for o, t in zip(model.encoder_layers, pt.encoder.layers):
            copy_attention(o.self_attn, t.self_attn)
        for o, t in zip(model.decoder_layers, pt.decoder.layers):
            copy_attention(o.self_attn, t.self_attn)
            copy_attention(o.cross_attn, t.multihead_attn)
        for o, t in [*zip(model.encoder_layers, pt.encoder.layers), *zip(model.decoder_layers, pt.decoder.layers)]:
            t.linear1.load_state_dict(o.ffn.w_1.state_dict())
            t.linear2.load_state_dict(o.ffn.w_2.state_dict())
            for k in (1, 2, 3):
                if hasattr(o, f"norm{k}"):
                    getattr(t, f"norm{k}").load_state_dict(getattr(o, f"norm{k}").state_dict())


def pytorch_logits(pt, model, src, tgt_in):
    src_pad = src == PAD_ID
    y = pt(model.embed_positions(src), model.embed_positions(tgt_in), tgt_mask=~causal_mask(tgt_in.size(1)),
           src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_in == PAD_ID, memory_key_padding_mask=src_pad)
    return model.generator(y)


@pytest.fixture(scope="module")
def trained():
    return load_checkpoint(3000)


@pytest.fixture(scope="module")
def batch():
    src, tgt = reversal_batch(16, torch.Generator().manual_seed(12))
    assert (src == PAD_ID).any() and (tgt == PAD_ID).any(), "the batch must contain padding"
    return src, shift_right(tgt)


def parity_model(model):
    pt = make_pytorch_transformer()
    copy_into_pytorch(model, pt)
    pt.encoder.norm = nn.Identity()
    pt.decoder.norm = nn.Identity()
    return pt


@pytest.mark.parametrize("grad", [True, False], ids=["autograd", "no_grad"])
def test_trained_model_equals_nn_transformer(trained, batch, grad):
    src, tgt_in = batch
    pt = parity_model(trained)
    with torch.set_grad_enabled(grad), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")
        diff = (pytorch_logits(pt, trained, src, tgt_in) - trained(src, tgt_in)).abs().max().item()
    print(f"max |logits difference| = {diff:.2e}")
    assert diff < 1e-5


def test_final_norms_break_parity_only_after_training(trained, batch):
    src, tgt_in = batch
    set_seed(1)
    fresh = Transformer(**TINY).eval()
    diffs = {}
    for name, model in (("fresh", fresh), ("trained", trained)):
        pt = make_pytorch_transformer()
        copy_into_pytorch(model, pt)  # final norms left in place
        diffs[name] = (pytorch_logits(pt, model, src, tgt_in) - model(src, tgt_in)).abs().max().item()
    assert diffs["fresh"] < 1e-4
    assert diffs["trained"] > 0.1


def test_fast_path_zeroes_padded_memory(trained, batch):
    src, _ = batch
    pt = parity_model(trained)
    real = src != PAD_ID
    ours = trained.encode(src, padding_mask(src)).detach()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")
        fast = pt.encoder(trained.embed_positions(src), src_key_padding_mask=~real)
        torch.backends.mha.set_fastpath_enabled(False)
        try:
            slow = pt.encoder(trained.embed_positions(src), src_key_padding_mask=~real)
        finally:
            torch.backends.mha.set_fastpath_enabled(True)
    assert (fast[~real] == 0).all()
    assert (fast - ours)[real].abs().max() < 1e-5
    assert (fast - ours).abs().max() > 0.1
    assert (slow - ours).abs().max() < 1e-5


def test_float_masks_give_the_same_logits(trained, batch):
    src, tgt_in = batch
    pt = parity_model(trained)

    def additive(blocked):
        return torch.zeros(blocked.shape).masked_fill(blocked, float("-inf"))

    src_pad = additive(src == PAD_ID)
    y = pt(trained.embed_positions(src), trained.embed_positions(tgt_in),
           tgt_mask=nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1)),
           src_key_padding_mask=src_pad, tgt_key_padding_mask=additive(tgt_in == PAD_ID),
           memory_key_padding_mask=src_pad)
    assert (trained.generator(y) - trained(src, tgt_in)).abs().max() < 1e-5
