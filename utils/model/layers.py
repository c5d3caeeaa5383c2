"""Feed-forward network, layer normalisation and the encoder and decoder layers
(paper sections 3.1 and 3.3)."""

from __future__ import annotations

import torch
from torch import nn

from ..core.checks import check_positive_int, check_tensor, check_width
from ..core.masks import causal_mask
from .attention import MultiHeadAttention


class PositionwiseFeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2, applied to each position alone (section 3.3, eq. 2).

    Args:
        d_model: input and output width (512 in the base model).
        d_ff: hidden width (2048 in the base model).

    Shapes: x (..., d_model) -> (..., d_model); hidden layer (..., d_ff).

    Raises:
        TypeError, ValueError: a size is not a positive int; x is not a
            floating-point tensor (..., d_model).
    """

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        check_positive_int(d_model=d_model, d_ff=d_ff)
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        check_width(x, self.w_1.in_features)
        return self.w_2(torch.relu(self.w_1(x)))


class LayerNorm(nn.Module):
    """LayerNorm(x) = gain * (x - mean) / sqrt(var + eps) + bias over the last dimension.

    The variance divides by d (not d - 1), as in ``nn.LayerNorm``; ``weight``
    is the gain, ``bias`` the shift (Ba et al. 2016, used in section 3.1).

    Args:
        d_model: size of the last dimension.
        eps: added to the variance (1e-5, PyTorch's default).

    Shapes: x (..., d_model) -> (..., d_model).

    Raises:
        TypeError, ValueError: d_model is not a positive int, eps is not > 0,
            or x is not a floating-point tensor (..., d_model).
    """

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        check_positive_int(d_model=d_model)
        if not eps > 0:
            raise ValueError(f"eps must be a number > 0, got {eps!r}")
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        check_width(x, self.weight.size(0))
        mean = x.mean(dim=-1, keepdim=True)
        centred = x - mean
        var = (centred * centred).mean(dim=-1, keepdim=True)  # divide by d
        return centred * torch.rsqrt(var + self.eps) * self.weight + self.bias


class EncoderLayer(nn.Module):
    """One encoder layer: self-attention, then the feed-forward network (section 3.1).

    Each sublayer is post-norm: x = LayerNorm(x + Dropout(Sublayer(x))).

    Args:
        d_model, h, d_ff: sizes; p_drop: residual dropout rate (0.1 in the paper).

    Shapes: x (batch, src_len, d_model); src_mask broadcastable to
    (batch, h, src_len, src_len), True = may attend; output like x.
    """

    def __init__(self, d_model: int, h: int, d_ff: int, p_drop: float = 0.1):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, h)
        self.ffn = PositionwiseFeedForward(d_model, d_ff)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.dropout = nn.Dropout(p_drop)

    def forward(self, x, src_mask=None):
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, src_mask)))
        x = self.norm2(x + self.dropout(self.ffn(x)))
        return x


class DecoderLayer(nn.Module):
    """One decoder layer: masked self-attention, cross-attention, feed-forward (section 3.1).

    Cross-attention takes its queries from the decoder and its keys and values
    from the encoder output ``memory``. Each sublayer is post-norm.

    Shapes: x (batch, tgt_len, d_model); memory (batch, src_len, d_model);
    tgt_mask broadcastable to (batch, h, tgt_len, tgt_len); src_mask
    broadcastable to (batch, h, tgt_len, src_len); output like x.

    Without a ``tgt_mask`` the self-attention is causal: the layer builds
    ``causal_mask(tgt_len)``, so position i never sees a later one. Pass
    ``target_mask(tgt)`` to hide padding as well.
    """

    def __init__(self, d_model: int, h: int, d_ff: int, p_drop: float = 0.1):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, h)
        self.cross_attn = MultiHeadAttention(d_model, h)
        self.ffn = PositionwiseFeedForward(d_model, d_ff)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.norm3 = LayerNorm(d_model)
        self.dropout = nn.Dropout(p_drop)

    def forward(self, x, memory, src_mask=None, tgt_mask=None):
        check_tensor(x, "x", ndim_min=3)  # (batch, tgt_len, d_model) floats
        if tgt_mask is None:  # masked self-attention: causal unless told otherwise
            tgt_mask = causal_mask(x.size(1)).to(x.device)[None, None]  # (1, 1, tgt_len, tgt_len)
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, src_mask)))
        x = self.norm3(x + self.dropout(self.ffn(x)))
        return x
