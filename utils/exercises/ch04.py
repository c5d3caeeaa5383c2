"""Exercises of chapter 4, attention in the model (section 3.2.3).

Every expected answer, and the wrong answer of every likely mistake, is computed with
the course's own code when checked.
"""

from __future__ import annotations

import torch

from ..core.masks import BOS_ID, EOS_ID, causal_mask, shift_right
from ..model.attention import MultiHeadAttention
from ..model.embeddings import Tokenizer
from ..model.layers import DecoderLayer
from ..model.transformer import BASE, TINY, Transformer
from . import mistake, register


@register(
    "4.1",
    prompt="Where do the queries, keys and values of the decoder's cross-attention come from? "
    'A dict {"Q": ..., "K": ..., "V": ...}, each value "encoder" or "decoder".',
    hint="Read DecoderLayer.forward: the first argument of an attention call is the query, "
    "and `memory` is the encoder's output.",
    minutes=5,
    full="Where each of Q, K and V comes from, read off `DecoderLayer.forward` (`memory` is the encoder's output).",
    partial="Two of the three; keys and values split between the stacks (they come in pairs).",
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


def _other(side: str) -> str:
    return "decoder" if side == "encoder" else "encoder"


@mistake("4.1", "The two sides are swapped: check which argument of cross_attn is `memory`, "
         "the encoder's output")
def _ex_4_1_swapped():
    return {name: _other(side) for name, side in _ex_4_1().items()}


@mistake("4.1", "Everything comes from one stack here, as in self-attention; cross-attention "
         "mixes the two stacks")
def _ex_4_1_self():
    return {name: _ex_4_1()["Q"] for name in "QKV"}


@mistake("4.1", "All three come from the stack that gives `memory` here; cross-attention takes something "
         "from each of the two stacks")
def _ex_4_1_all_memory():
    return {name: _ex_4_1()["K"] for name in "QKV"}


@mistake("4.1", "Keys and values come in pairs, one value per key, so they come from the same sequence")
def _ex_4_1_split_pair():
    right = _ex_4_1()
    return {"Q": right["Q"], "K": right["K"], "V": _other(right["V"])}


@register(
    "4.2",
    prompt="Blocked cells per head in the self-attention mask of an 8-token decoder input "
    "without padding: an int.",
    hint="The causal mask blocks the cells above the diagonal; count them for n = 8, on a "
    "small grid first if that helps.",
    minutes=5,
    full="The cells above the diagonal of the 8 x 8 causal mask, for one head.",
    partial="The visible cells, the diagonal counted as blocked, or every head counted.",
)
def _ex_4_2():
    return int((~causal_mask(8)).sum())


@mistake("4.2", "These are the cells that may attend; the exercise asks for the blocked ones")
def _ex_4_2_allowed():
    return int(causal_mask(8).sum())


@mistake("4.2", "Half of the 8 x 8 cells counts the diagonal as blocked; each position may "
         "attend to itself")
def _ex_4_2_half():
    return causal_mask(8).numel() // 2


@mistake("4.2", "This counts the cells of all the tiny model's heads; the exercise asks per head")
def _ex_4_2_all_heads():
    return TINY["h"] * int((~causal_mask(8)).sum())


def _attention_shapes(h: int) -> dict:
    config = {**TINY, "h": h}
    with torch.random.fork_rng(devices=[]):
        model = Transformer(**config).eval()
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
    "4.3",
    prompt='Attention weight shapes in the tiny model for a 7-letter source and an 8-token decoder '
    'input: a dict with keys "encoder_self", "decoder_self", "cross", each a tuple '
    "(batch, h, q_len, k_len) with batch = 1.",
    hint="Queries give the rows, keys the columns; cross-attention's queries are decoder positions.",
    minutes=10,
    full="The three shapes with the tiny model's h, and the cross-attention named as the one that is not square.",
    partial="The shapes with the base model's 8 heads, or the cross-attention's queries and keys swapped.",
)
def _ex_4_3():
    return _attention_shapes(TINY["h"])


@mistake("4.3", "The cross-attention shape has its queries and keys swapped: its queries are the "
         "decoder positions, its keys the source positions")
def _ex_4_3_cross_swapped():
    shapes = _attention_shapes(TINY["h"])
    b, h, q, k = shapes["cross"]
    return {**shapes, "cross": (b, h, k, q)}


@mistake("4.3", "These shapes use the base model's 8 heads; the tiny model has fewer")
def _ex_4_3_base_heads():
    return _attention_shapes(BASE["h"])


@mistake("4.3", "Cross-attention is not square: its rows are the decoder positions and its "
         "columns the source positions")
def _ex_4_3_cross_square():
    shapes = _attention_shapes(TINY["h"])
    return {**shapes, "cross": shapes["decoder_self"]}


def _target():
    return torch.tensor([Tokenizer().encode("b a d") + [EOS_ID]])


@register(
    "4.4",
    prompt="The decoder input (a list of ints) for the target 'b a d' followed by </s>.",
    hint="Encode the target, add </s> (id 2), put <s> (id 1) in front and drop the last id.",
    minutes=5,
    full="`<s>` put in front of the encoded target and the last id dropped: the target shifted one place right.",
    partial="The target itself, `</s>` in front, or the first id dropped.",
)
def _ex_4_4():
    return shift_right(_target())[0].tolist()


@mistake("4.4", "This is the target itself; the decoder reads it shifted one place to the right")
def _ex_4_4_unshifted():
    return _target()[0].tolist()


@mistake("4.4", "The decoder input starts with <s> (id 1), not </s> (id 2)")
def _ex_4_4_eos_first():
    return [EOS_ID] + _target()[0, :-1].tolist()


@mistake("4.4", "This drops the first id of the target instead of the last")
def _ex_4_4_drop_first():
    return [BOS_ID] + _target()[0, 1:-1].tolist() + [EOS_ID]
