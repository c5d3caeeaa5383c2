"""Scaled dot-product attention and multi-head attention (paper section 3.2).

Mask convention, used everywhere in the course: a mask is a ``torch.bool``
tensor that broadcasts to the scores ``(..., q_len, k_len)``; ``True`` means
the query may attend to that key, ``False`` means the key is hidden.

A mask whose reading is ambiguous is refused (``utils.core.checks.check_mask``): with
batched scores ``(batch, h, q_len, k_len)``, a 2-D mask is read as ``(q_len, k_len)``,
so one whose first dimension equals the batch size could be a ``(batch, k_len)``
padding mask that broadcasting would silently misread. Give padding masks as
``padding_mask(ids)`` ``(batch, 1, 1, k_len)``, target masks as ``target_mask(ids)``
``(batch, 1, q_len, k_len)``, and a mask shared by the batch as ``(q_len, k_len)``
(when q_len differs from the batch size) or ``mask[None, None]``.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..core.checks import check_mask, check_positive_int, check_qkv, check_tensor


def scaled_dot_product_attention(q, k, v, mask=None):
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V  (section 3.2.1, equation 1).

    Args:
        q: queries, shape (..., q_len, d_k).
        k: keys, shape (..., k_len, d_k).
        v: values, shape (..., k_len, d_v).
        mask: optional ``torch.bool`` tensor broadcastable to (..., q_len, k_len);
            True = may attend, False = blocked. With batched scores, a mask of
            fewer dimensions whose first one equals the batch size is refused as
            ambiguous (see ``check_mask``).

    Returns:
        (output, weights): output (..., q_len, d_v) and attention weights
        (..., q_len, k_len), each row summing to 1. A query row whose keys are
        all blocked has no defined softmax (0/0): its weights and its output
        are all zeros, never NaN.

    Raises:
        TypeError: an input is not a floating-point tensor; the dtypes differ;
            the mask is not boolean.
        ValueError: d_k of q and k differ; k and v differ in length; the batch
            dimensions do not broadcast; the mask does not broadcast to the
            scores or its reading is ambiguous.
    """
    check_qkv(q, k, v)
    d_k = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        check_mask(mask, scores.shape)
        # The most negative float, not -inf: exp() of it is exactly 0, and a
        # row that is blocked everywhere gives no NaN on the way.
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        # A row with no visible key gets zero weights (and so a zero output).
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return weights @ v, weights


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O  (section 3.2.2).

    head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V). The h per-head projections of
    size d_model x d_k are stored side by side in one ``nn.Linear`` each
    (``w_q``, ``w_k``, ``w_v``), so d_k = d_v = d_model / h. Like PyTorch's
    ``nn.MultiheadAttention``, every projection has a bias.

    Args:
        d_model: model width (512 in the base model).
        h: number of heads (8 in the base model); must divide d_model.

    Shapes (``batch_first``):
        query (batch, q_len, d_model), key and value (batch, k_len, d_model),
        mask broadcastable to (batch, h, q_len, k_len) (True = may attend);
        output (batch, q_len, d_model).

    After each call, ``self.weights`` holds the per-head attention weights
    (batch, h, q_len, k_len) when ``self.keep_weights`` is True, else None.

    Raises:
        TypeError: d_model or h is not an int.
        ValueError: d_model or h is below 1; h does not divide d_model; inputs
            of the wrong shape.
    """

    def __init__(self, d_model: int, h: int):
        super().__init__()
        check_positive_int(d_model=d_model, h=h)
        if d_model % h != 0:
            raise ValueError(f"h={h} must divide d_model={d_model}")
        self.d_model, self.h, self.d_k = d_model, h, d_model // h
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.keep_weights = False
        self.weights = None

    def split_heads(self, x):
        """(batch, len, d_model) -> (batch, h, len, d_k)."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.h, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        for name, x in (("query", query), ("key", key), ("value", value)):
            check_tensor(x, name, ndim_min=3)
            if x.dim() != 3 or x.size(-1) != self.d_model:
                raise ValueError(
                    f"{name} must have shape (batch, len, d_model={self.d_model}), "
                    f"got {tuple(x.shape)}"
                )
        q = self.split_heads(self.w_q(query))
        k = self.split_heads(self.w_k(key))
        v = self.split_heads(self.w_v(value))
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        self.weights = weights.detach() if self.keep_weights else None
        batch, _, q_len, _ = out.shape
        out = out.transpose(1, 2).reshape(batch, q_len, self.d_model)  # concat heads
        return self.w_o(out)
