"""Exercises of chapter 14 (what changed since 2017).

Expected answers are computed here from a configuration's sizes, with the same
formulas the chapter checks against a model built on the meta device, and so are the
wrong answers each registered likely mistake gives.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from . import mistake, register

#: SmolLM2-135M's published sizes (as in COURSE.md).
SMOLLM2_135M = dict(vocab_size=49_152, d_model=576, N=30, h_q=9, h_kv=3, d_head=64, d_ff=1536,
                    eps=1e-5, theta=100_000.0, context=8192)


def _decoder_lm_params(vocab_size, d_model, N, h_q, h_kv, d_head, d_ff, grown=("k", "v"), tied=True, **_) -> int:
    """Parameters of a SmolLM2-like decoder: tied embedding, N pre-norm blocks
    (bias-free grouped-query attention, SwiGLU, two RMSNorm weights), a final RMSNorm.
    ``h_kv`` applies to the projections named in ``grown`` ("k", "v"); the others keep 3 heads."""
    kv_heads = {name: (h_kv if name in grown else SMOLLM2_135M["h_kv"]) for name in ("k", "v")}
    attention = d_model * d_head * (2 * h_q + kv_heads["k"] + kv_heads["v"])
    per_layer = attention + 3 * d_model * d_ff + 2 * d_model
    return vocab_size * d_model * (1 if tied else 2) + N * per_layer + d_model


# ---------------------------------------------------------------- 14.1, a batch's KV cache

BATCH, TOKENS = 8, 1000


def _kv_cache_bytes(N, h_kv, d_head, context, bytes_per_number=2, batch=1, tensors=2, **_) -> int:
    """Bytes of the key-value cache: keys and values (``tensors``) for every token of ``context``,
    head and layer, for ``batch`` sequences."""
    return tensors * h_kv * d_head * N * context * batch * bytes_per_number


def _batch_cache(**changes) -> int:
    """The cache of exercise 14.1: a batch of BATCH sequences of TOKENS tokens, with ``changes``."""
    return _kv_cache_bytes(**{**SMOLLM2_135M, "context": TOKENS, "batch": BATCH, **changes})


@register("14.1", prompt="SmolLM2-135M's KV cache in bytes, in bfloat16, for a batch of 8 sequences of "
          "1,000 tokens each: an int.",
          hint="per token and layer the cache stores keys and values for each key-value head; count the "
               "numbers, then the bytes, over every layer, token and sequence of the batch.",
          minutes=10,
          full="Keys and values, for each key-value head, layer, token and sequence, at 2 bytes a number.",
          partial="One sequence, one layer, numbers instead of bytes, keys only, or a key-value head per query head.")
def ex_14_1():
    return _batch_cache()


@mistake("14.1", "This caches one key-value head per query head (9); SmolLM2's grouped-query attention "
         "caches its 3 key-value heads")
def _ex_14_1_query_heads():
    return _batch_cache(h_kv=SMOLLM2_135M["h_q"])


@mistake("14.1", "This is half the cache: it counts numbers instead of bytes (a bfloat16 number takes 2 bytes), "
         "or caches the keys only (the values are cached too)")
def _ex_14_1_half():
    return _batch_cache(tensors=1)


@mistake("14.1", "This is the cache of one sequence; the batch holds 8, each with its own keys and values")
def _ex_14_1_one_sequence():
    return _batch_cache(batch=1)


@mistake("14.1", "This is the cache of one layer; each of the 30 layers keeps its own keys and values")
def _ex_14_1_one_layer():
    return _batch_cache(N=1)


# ---------------------------------------------------------------- 14.2, RMSNorm by hand

X = (1.0, -2.0, 2.0, 4.0)


def _x() -> torch.Tensor:
    return torch.tensor(X)


@register("14.2", prompt="RMSNorm of (1, -2, 2, 4) with weight 1 and eps 0: a float tensor of shape (4,), "
          "each value to 4 decimals.", decimals=4,
          hint="RMSNorm divides x by one number computed from its values; the formula is in the chapter. "
               "Compare it with LayerNorm: which step does RMSNorm leave out?",
          minutes=5,
          full="x divided by the root of the mean of its squares, by hand, and the step of LayerNorm that RMSNorm "
               "leaves out (the mean).",
          partial="LayerNorm instead, the root of the sum of the squares, or no square root.")
def ex_14_2():
    return F.rms_norm(_x(), (4,), eps=0.0)


@mistake("14.2", "This is LayerNorm: it subtracts the mean first; RMSNorm does not")
def _ex_14_2_layer_norm():
    return F.layer_norm(_x(), (4,), eps=0.0)


@mistake("14.2", "This divides by the root of the sum of the squares (the length of x); RMSNorm divides "
         "by the root of their mean")
def _ex_14_2_l2():
    return _x() / _x().norm()


@mistake("14.2", "This divides by the mean of the squares without its square root")
def _ex_14_2_no_root():
    return _x() / _x().pow(2).mean()


# ---------------------------------------------------------------- 14.3, nine key-value heads

@register("14.3", prompt="Parameters of SmolLM2-135M with 9 key-value heads instead of 3: an int.",
          hint="find which weight matrices have a size that depends on the number of key-value heads; "
               "compute how much each grows, in each of the 30 layers.",
          minutes=10,
          full="Only `W_K` and `W_V` grow; by how much in each of the 30 layers, added to SmolLM2-135M's count, its "
               "output layer tied.",
          partial="`W_K` alone grown, an output matrix of its own, or the model's own count.")
def ex_14_3():
    return _decoder_lm_params(**{**SMOLLM2_135M, "h_kv": 9})


@mistake("14.3", "This is SmolLM2-135M's own count, with 3 key-value heads; W_K and W_V grow with 9")
def _ex_14_3_unchanged():
    return _decoder_lm_params(**SMOLLM2_135M)


@mistake("14.3", "This grows W_K only; W_V has one head of values per key head, so it grows too")
def _ex_14_3_keys_only():
    return _decoder_lm_params(**{**SMOLLM2_135M, "h_kv": 9}, grown=("k",))


@mistake("14.3", "This counts an output matrix of its own; SmolLM2 ties it to the embedding table")
def _ex_14_3_untied():
    return _decoder_lm_params(**{**SMOLLM2_135M, "h_kv": 9}, tied=False)
