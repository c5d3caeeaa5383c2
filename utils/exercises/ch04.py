"""Exercises of chapter 4, attention in the model (section 3.2.3).

Every expected answer is computed with the course's own code when checked.
"""

from __future__ import annotations

import torch

from ..attention import MultiHeadAttention
from ..embeddings import Tokenizer
from ..layers import DecoderLayer
from ..masks import EOS_ID, causal_mask, shift_right
from ..model import TINY, Transformer
from . import register


@register(
    "4.1",
    prompt="Where do the queries, keys and values of the decoder's cross-attention come from? "
    'A dict {"Q": ..., "K": ..., "V": ...}, each value "encoder" or "decoder".',
    hint="Read DecoderLayer.forward: the first argument of an attention call is the query, "
    "and `memory` is the encoder's output.",
)
def _ex_4_1():
    # Run one decoder layer and record which tensor the cross-attention receives as
    # query, key and value: the decoder's own state or the encoder's output (memory).
    layer = DecoderLayer(d_model=8, h=2, d_ff=16, p_drop=0.0)
    x, memory = torch.randn(1, 3, 8), torch.randn(1, 2, 8)
    seen = {}

    def record(module, args):
        for name, arg in zip("QKV", args[:3]):
            seen[name] = "encoder" if arg is memory else "decoder"

    handle = layer.cross_attn.register_forward_pre_hook(record)
    try:
        layer(x, memory)
    finally:
        handle.remove()
    return seen


@register(
    "4.2",
    prompt="Blocked cells per head in the self-attention mask of an 8-token decoder input "
    "without padding: an int.",
    hint="The causal mask blocks the cells above the diagonal; count them for n = 8.",
)
def _ex_4_2():
    return int((~causal_mask(8)).sum())


@register(
    "4.3",
    prompt='Attention weight shapes in the tiny model for a 7-letter source and an 8-token decoder '
    'input: a dict with keys "encoder_self", "decoder_self", "cross", each a tuple '
    "(batch, h, q_len, k_len) with batch = 1.",
    hint="Queries give the rows, keys the columns; cross-attention's queries are decoder positions.",
)
def _ex_4_3():
    model = Transformer(**TINY).eval()
    for module in model.modules():
        if isinstance(module, MultiHeadAttention):
            module.keep_weights = True
    src = torch.randint(3, TINY["vocab_size"], (1, 7))
    tgt = torch.randint(3, TINY["vocab_size"], (1, 8))
    with torch.no_grad():
        model(src, tgt)
    enc, dec = model.encoder_layers[0], model.decoder_layers[0]
    return {
        "encoder_self": tuple(enc.self_attn.weights.shape),
        "decoder_self": tuple(dec.self_attn.weights.shape),
        "cross": tuple(dec.cross_attn.weights.shape),
    }


@register(
    "4.4",
    prompt="The decoder input (a list of ints) for the target 'b a d' followed by </s>.",
    hint="Encode the target, add </s> (id 2), put <s> (id 1) in front and drop the last id.",
)
def _ex_4_4():
    tgt = torch.tensor([Tokenizer().encode("b a d") + [EOS_ID]])
    return shift_right(tgt)[0].tolist()
