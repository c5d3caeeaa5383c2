"""Exercises of chapter 8 (encoder and decoder stacks, section 3.1).

Every expected answer, and the wrong answer of every likely mistake, is computed with
the course's own code when checked. Modules that are only counted are built on the
"meta" device: shapes without storage, so the big sizes cost nothing.
"""

from __future__ import annotations

import torch

from ..core.masks import EOS_ID, padding_mask, shift_right, target_mask
from ..model.attention import MultiHeadAttention
from ..model.embeddings import Tokenizer
from ..model.layers import DecoderLayer, EncoderLayer, LayerNorm
from ..model.transformer import TINY, Transformer, count_parameters
from . import mistake, register


def _seven_letter_example():
    """Source ids (1, 7) for 'a b c d e f g' and the decoder input (1, 8) '<s> g f e d c b a'."""
    tok = Tokenizer()
    src = torch.tensor([tok.encode("a b c d e f g")])
    tgt = torch.tensor([tok.encode("g f e d c b a") + [EOS_ID]])
    return src, shift_right(tgt)


_X = [2.0, 4, 4, 4, 5, 5, 7, 9]


@register("8.1", prompt="Give LayerNorm(2, 4, 4, 4, 5, 5, 7, 9) (gain 1, bias 0, eps 1e-5) as a tensor "
          "of shape (8,), to 4 decimals.",
          decimals=4,
          hint="subtract the mean, then divide by the square root of the variance (plus eps); "
               "the variance is the mean of the squared deviations.",
          minutes=10,
          full="The mean, the variance (divided by d) and each `(x - mean) / sqrt(var + eps)`, checked against "
               "`nn.LayerNorm`.",
          partial="The variance divided by d - 1, a division by the variance, or the mean not subtracted.")
def _layer_norm_by_hand():
    return LayerNorm(8)(torch.tensor(_X)).detach()


@mistake("8.1", "The variance was divided by d - 1; LayerNorm divides the summed squared deviations by d")
def _ex_8_1_unbiased():
    x = torch.tensor(_X)
    return (x - x.mean()) / torch.sqrt(x.var(unbiased=True) + 1e-5)


@mistake("8.1", "This divides by the variance; LayerNorm divides by its square root, the standard deviation")
def _ex_8_1_by_variance():
    x = torch.tensor(_X)
    return (x - x.mean()) / (x.var(unbiased=False) + 1e-5)


@mistake("8.1", "The mean was not subtracted before dividing")
def _ex_8_1_no_centring():
    x = torch.tensor(_X)
    return x / torch.sqrt(x.var(unbiased=False) + 1e-5)


def _trace(config: dict) -> dict:
    """Every shape of the 7-letter example through a model of ``config``."""
    src, dec_in = _seven_letter_example()
    with torch.random.fork_rng():  # building a model must not move the learner's random stream
        model = Transformer(**config).eval()
    hidden = []
    for module in model.modules():
        if isinstance(module, MultiHeadAttention):
            module.keep_weights = True
    hook = model.encoder_layers[0].ffn.w_1.register_forward_hook(lambda m, i, o: hidden.append(o.shape))
    with torch.no_grad():
        src_mask, tgt_mask = padding_mask(src), target_mask(dec_in)
        embedded = model.embed_positions(src)
        memory = model.encode(src, src_mask)
        y = model.decode(dec_in, memory, src_mask, tgt_mask)
        logits = model.generator(y)
    hook.remove()
    dec = model.decoder_layers[0]
    return {
        "src": tuple(src.shape),
        "src_embedded": tuple(embedded.shape),
        "encoder_self_attention": tuple(model.encoder_layers[0].self_attn.weights.shape),
        "ffn_hidden": tuple(hidden[0]),
        "memory": tuple(memory.shape),
        "tgt": tuple(dec_in.shape),
        "decoder_self_attention": tuple(dec.self_attn.weights.shape),
        "cross_attention": tuple(dec.cross_attn.weights.shape),
        "decoder_output": tuple(y.shape),
        "logits": tuple(logits.shape),
    }


@register("8.2", prompt="Give a dict mapping each named stage to its shape tuple.",
          hint="attention weights are (batch, h, q_len, k_len); cross-attention takes its queries "
               "from the decoder and its keys from the encoder.",
          minutes=15,
          full="All ten shapes, traced through `Transformer(**TINY)` or reasoned out, and the cross-attention named as "
               "not square.",
          partial="Most shapes; the cross-attention's axes swapped, the base model's heads, or d_model for "
                  "`ffn_hidden` or `logits`.")
def _shape_trace():
    return _trace(TINY)


@mistake("8.2", "Cross_attention has its queries and keys swapped: one row per decoder position "
         "(the queries), one column per source position (the keys)")
def _ex_8_2_cross_swapped():
    shapes = _trace(TINY)
    b, h, q, k = shapes["cross_attention"]
    return {**shapes, "cross_attention": (b, h, k, q)}


@mistake("8.2", "The attention shapes use the base model's 8 heads; the tiny model has fewer")
def _ex_8_2_base_heads():
    return _trace({**TINY, "h": 8})


@mistake("8.2", "Ffn_hidden is the inner layer of the feed-forward network, d_ff wide, not d_model")
def _ex_8_2_ffn_width():
    shapes = _trace(TINY)
    return {**shapes, "ffn_hidden": shapes["memory"]}


@mistake("8.2", "The logits hold one score per token of the vocabulary, not d_model numbers")
def _ex_8_2_logits_width():
    shapes = _trace(TINY)
    return {**shapes, "logits": shapes["decoder_output"]}


def _masked(encoder_causal: bool = False, cross_causal: bool = False, visible: bool = False,
            heads: int = 1) -> dict:
    """Masked (or, with ``visible``, visible) cells of ``heads`` heads in each attention."""
    src, dec_in = _seven_letter_example()
    h, s, t = TINY["h"], src.size(1), dec_in.size(1)

    def count(mask, q_len, k_len, causal):
        mask = mask.expand(1, h, q_len, k_len)[0, :heads]
        if causal:  # a wrong extra causal mask over this grid
            mask = mask & torch.ones(q_len, k_len, dtype=torch.bool).tril()
        return int((mask if visible else ~mask).sum())

    return {
        "encoder_self_attention": count(padding_mask(src), s, s, encoder_causal),
        "decoder_self_attention": count(target_mask(dec_in), t, t, False),
        "cross_attention": count(padding_mask(src), t, s, cross_causal),
    }


@register("8.3", prompt="Give a dict with the number of masked cells per head in each attention (ints).",
          hint="ask for each attention which mask it uses, a padding mask or a causal one, and count "
               "the hidden cells of its q_len x k_len grid; no token is padding.",
          minutes=5,
          full="Which mask each attention uses (padding or causal) and the cells it hides in one head's grid.",
          partial="The visible cells, every head counted, or a causal mask given to the encoder or the "
                  "cross-attention.")
def _masked_cells():
    return _masked()


@mistake("8.3", "These are the visible cells; the exercise asks for the masked ones")
def _ex_8_3_visible():
    return _masked(visible=True)


@mistake("8.3", "This counts the cells of all the heads; the exercise asks per head")
def _ex_8_3_all_heads():
    return _masked(heads=TINY["h"])


@mistake("8.3", "The encoder's self-attention has no causal mask: every source position sees the "
         "whole source")
def _ex_8_3_encoder_causal():
    return _masked(encoder_causal=True)


@mistake("8.3", "Cross-attention has no causal mask: every decoder position may read the whole source")
def _ex_8_3_cross_causal():
    return _masked(cross_causal=True)


_BIG = dict(d_model=1024, h=16, d_ff=4096)  # Table 3, "big"


def _meta_layer(cls, d_model: int, h: int, d_ff: int):
    with torch.device("meta"):
        return cls(d_model, h, d_ff)


def _count(layer, linear_biases: bool = True, norms: bool = True) -> int:
    total = 0
    for module in layer.modules():
        if isinstance(module, LayerNorm):
            total += count_parameters(module) if norms else 0
        elif isinstance(module, torch.nn.Linear):
            total += module.weight.numel() + (module.bias.numel() if linear_biases else 0)
    return total


@register("8.4", prompt="Give the number of parameters of one decoder layer of the paper's big model "
          "(d_model 1024, h 16, d_ff 4096), as an int.",
          hint="list the layer's sublayers (attention, feed-forward, LayerNorms) and count the weights "
               "and biases of each.",
          minutes=10,
          full="The two attention sublayers, the FFN and the three LayerNorms of the big model's decoder layer, "
               "weights and biases.",
          partial="An encoder layer, the biases or the LayerNorms left out, a LayerNorm with one vector, or the tiny "
                  "sizes.")
def _decoder_layer_parameters():
    return count_parameters(_meta_layer(DecoderLayer, **_BIG))


@mistake("8.4", "These are the sizes of the tiny model; the exercise asks for the big model's layer")
def _ex_8_4_tiny():
    return count_parameters(_meta_layer(DecoderLayer, TINY["d_model"], TINY["h"], TINY["d_ff"]))


@mistake("8.4", "This is an encoder layer; a decoder layer also has a cross-attention sublayer "
         "and a third LayerNorm")
def _ex_8_4_encoder():
    return count_parameters(_meta_layer(EncoderLayer, **_BIG))


@mistake("8.4", "This leaves out the three LayerNorms")
def _ex_8_4_no_norms():
    return _count(_meta_layer(DecoderLayer, **_BIG), norms=False)


@mistake("8.4", "This leaves out the biases of the linear maps")
def _ex_8_4_no_biases():
    return _count(_meta_layer(DecoderLayer, **_BIG), linear_biases=False)


@mistake("8.4", "Each LayerNorm holds two vectors of d_model, a gain and a bias; this counts one")
def _ex_8_4_norm_gain_only():
    layer = _meta_layer(DecoderLayer, **_BIG)
    return count_parameters(layer) - sum(m.bias.numel() for m in layer.modules() if isinstance(m, LayerNorm))
