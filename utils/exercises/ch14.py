"""Exercises of chapter 14 (what changed since 2017).

Expected answers are computed here from a configuration's sizes, with the same
formulas the chapter checks against a model built on the meta device.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from . import register

#: SmolLM2-135M's published sizes (as in COURSE.md).
SMOLLM2_135M = dict(vocab_size=49_152, d_model=576, N=30, h_q=9, h_kv=3, d_head=64, d_ff=1536,
                    eps=1e-5, theta=100_000.0, context=8192)


def _decoder_lm_params(vocab_size, d_model, N, h_q, h_kv, d_head, d_ff, **_) -> int:
    """Parameters of a SmolLM2-like decoder: tied embedding, N pre-norm blocks
    (bias-free grouped-query attention, SwiGLU, two RMSNorm weights), a final RMSNorm."""
    attention = d_model * d_head * (2 * h_q + 2 * h_kv)
    per_layer = attention + 3 * d_model * d_ff + 2 * d_model
    return vocab_size * d_model + N * per_layer + d_model


def _kv_cache_bytes(N, h_kv, d_head, context, bytes_per_number=2, **_) -> int:
    """Bytes of the key-value cache: keys and values for every token, head and layer."""
    return 2 * h_kv * d_head * N * context * bytes_per_number


@register("14.1", prompt="SmolLM2-135M's KV cache in bytes for 8,192 tokens in bfloat16.",
          hint="per token and layer: 2 (keys and values) x h_kv x d_head numbers, 2 bytes each.")
def ex_13_1():
    return _kv_cache_bytes(**SMOLLM2_135M)


@register("14.2", prompt="RMSNorm of (2, -1, 2, 1) with weight 1 and eps 0.",
          hint="divide by the root of the mean of the squares; the mean is not subtracted.")
def ex_13_2():
    return F.rms_norm(torch.tensor([2.0, -1.0, 2.0, 1.0]), (4,), eps=0.0)


@register("14.3", prompt="Parameters of SmolLM2-135M with 9 key-value heads instead of 3.",
          hint="only W_K and W_V change size, in each of the 30 layers.")
def ex_13_3():
    return _decoder_lm_params(**{**SMOLLM2_135M, "h_kv": 9})
