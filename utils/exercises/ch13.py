"""Answer checkers for chapter 13 (parity with torch.nn.Transformer)."""

import torch
from torch import nn

from ..masks import causal_mask, target_mask
from ..model import BASE, TINY
from . import register


@register("13.1", prompt="Give (first_row, last_row_plus_1) of W_V inside multihead_attn.in_proj_weight, "
          "a tuple of two ints.",
          hint="in_proj_weight stacks W_Q, W_K and W_V, each d_model = 64 rows tall, in that order.")
def _w_v_rows():
    # Ask PyTorch which block of in_proj_weight acts on the value input: make each
    # block in turn the identity (the others zero) and see when the output follows v.
    d_model = TINY["d_model"]
    attn = nn.MultiheadAttention(d_model, TINY["h"], batch_first=True)
    q = k = torch.zeros(1, 2, d_model)
    v = torch.arange(2 * d_model, dtype=torch.float32).view(1, 2, d_model)
    with torch.no_grad():
        attn.out_proj.weight.copy_(torch.eye(d_model))
        attn.out_proj.bias.zero_()
        attn.in_proj_bias.zero_()
        for block in range(3):
            attn.in_proj_weight.zero_()
            attn.in_proj_weight[block * d_model:(block + 1) * d_model] = torch.eye(d_model)
            out, _ = attn(q, k.clone(), v)
            if out.abs().sum() > 0:  # only W_V passes the values through
                return (block * d_model, (block + 1) * d_model)
    raise AssertionError("no block of in_proj_weight carried the values")


@register("13.2", prompt="Give the (6, 6) bool tensor, True = blocked, for '<s> d e </s>' plus two padding tokens.",
          hint="blocked = in the future OR padding; that is the negation of our target_mask.")
def _combined_mask():
    tgt = torch.tensor([[1, 6, 7, 2, 0, 0]])
    blocked = ~target_mask(tgt)[0, 0]
    assert torch.equal(blocked, ~causal_mask(6) | (tgt == 0))
    return blocked


@register("13.3", prompt="Give (parameters of nn.Transformer at base size, parameters left over after "
          "copying our layers in), a tuple of two ints.",
          hint="nn.Transformer adds one LayerNorm (gain and shift, 512 each) after each stack.")
def _base_nn_transformer():
    d_model = BASE["d_model"]
    pt = nn.Transformer(d_model=d_model, nhead=BASE["h"], num_encoder_layers=BASE["N"],
                        num_decoder_layers=BASE["N"], dim_feedforward=BASE["d_ff"], batch_first=True)
    total = sum(p.numel() for p in pt.parameters())
    extra = sum(p.numel() for p in pt.encoder.norm.parameters()) + sum(p.numel() for p in pt.decoder.norm.parameters())
    return (total, extra)
