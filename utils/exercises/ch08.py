"""Answer checkers for chapter 8 (encoder and decoder stacks, section 3.1)."""

import torch

from ..attention import MultiHeadAttention
from ..embeddings import Tokenizer
from ..layers import DecoderLayer, LayerNorm
from ..masks import EOS_ID, padding_mask, shift_right, target_mask
from ..model import TINY, Transformer, count_parameters
from . import register


def _seven_letter_example():
    """Source ids (1, 7) for 'a b c d e f g' and the decoder input (1, 8) '<s> g f e d c b a'."""
    tok = Tokenizer()
    src = torch.tensor([tok.encode("a b c d e f g")])
    tgt = torch.tensor([tok.encode("g f e d c b a") + [EOS_ID]])
    return src, shift_right(tgt)


@register("8.1", prompt="Give LayerNorm(2, 4, 4, 4, 5, 5, 7, 9) (gain 1, bias 0, eps 1e-5) as a tensor of shape (8,).",
          hint="the mean is 5; divide the summed squared deviations by d = 8, not by 7.")
def _layer_norm_by_hand():
    x = torch.tensor([2.0, 4, 4, 4, 5, 5, 7, 9])
    return LayerNorm(8)(x).detach()


@register("8.2", prompt="Give a dict mapping each named stage to its shape tuple.",
          hint="attention weights are (batch, h, q_len, k_len); cross-attention takes its queries "
               "from the decoder and its keys from the encoder.")
def _shape_trace():
    src, dec_in = _seven_letter_example()
    with torch.random.fork_rng():  # building a model must not move the learner's random stream
        model = Transformer(**TINY).eval()
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


@register("8.3", prompt="Give a dict with the number of masked cells per head in each attention (ints).",
          hint="without padding only the causal mask hides anything: the cells above the diagonal.")
def _masked_cells():
    src, dec_in = _seven_letter_example()
    h, s, t = TINY["h"], src.size(1), dec_in.size(1)

    def masked(mask, q_len, k_len):
        return int((~mask.expand(1, h, q_len, k_len))[0, 0].sum())

    return {
        "encoder_self_attention": masked(padding_mask(src), s, s),
        "decoder_self_attention": masked(target_mask(dec_in), t, t),
        "cross_attention": masked(padding_mask(src), t, s),
    }


@register("8.4", prompt="Give the number of parameters of one decoder layer of the tiny model, as an int.",
          hint="two attention sublayers (4 weight matrices and 4 biases each), one FFN and three LayerNorms.")
def _decoder_layer_parameters():
    with torch.random.fork_rng():
        layer = DecoderLayer(TINY["d_model"], TINY["h"], TINY["d_ff"])
    return count_parameters(layer)
