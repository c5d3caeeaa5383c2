"""Answer checkers for chapter 13 (parity with torch.nn.Transformer).

Every expected answer, and the wrong answer each registered likely mistake gives, is
computed with the course's own code (or PyTorch's modules) when checked.
"""

import torch
from torch import nn

from ..core.masks import causal_mask, target_mask
from ..model.attention import MultiHeadAttention
from ..model.transformer import BASE, TINY
from . import mistake, register

# ---------------------------------------------------------------- 13.1, one head's rows of W_V

HEAD = 3  # counted from 1


def _value_rows() -> tuple[int, int]:
    """(first, last + 1) rows of ``in_proj_weight`` that act on the value input (W_V).

    Asks PyTorch: make one block of d_model rows in turn the identity (the others zero)
    and see when the output follows the values; only W_V passes them through.
    """
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
            if out.abs().sum() > 0:
                return (block * d_model, (block + 1) * d_model)
    raise AssertionError("no block of in_proj_weight carried the values")


def _head_rows(head: int) -> tuple[int, int]:
    """(first, last + 1) output features, hence rows of our w_v.weight, of ``head`` (from 1)."""
    mha = MultiHeadAttention(TINY["d_model"], TINY["h"])
    features = torch.arange(TINY["d_model"], dtype=torch.float32).view(1, 1, -1)
    mine = mha.split_heads(features)[0, head - 1, 0].long()
    return (int(mine[0]), int(mine[-1]) + 1)


def _rows(head: int = HEAD, blocks_up: int = 0) -> tuple[int, int]:
    """Rows of in_proj_weight for ``head`` of W_V, or of the block ``blocks_up`` blocks above W_V."""
    start = _value_rows()[0] - blocks_up * TINY["d_model"]
    first, end = _head_rows(head)
    return (start + first, start + end)


@register("13.1", prompt="Give (first_row, last_row_plus_1): the rows of multihead_attn.in_proj_weight that "
          "compute head 3's values (heads counted from 1), a tuple of two ints.",
          hint="two steps: where does W_V sit in the stacked in_proj_weight, and which rows of W_V "
               "(d_model x d_model) belong to which head, in the order split_heads cuts its output.",
          minutes=10,
          full="Where `W_V` sits in `in_proj_weight` (after `W_Q` and `W_K`), then head 3's rows within it as a slice, "
               "checked on the copied weights.",
          partial="The rows within our `w_v`, the whole of `W_V`, the next head, or the last row instead of last + 1.")
def _w_v_head_rows():
    return _rows()


@mistake("13.1", "These are the rows of the whole of W_V; the exercise asks for head 3's rows within it")
def _ex_13_1_whole_block():
    return _value_rows()


@mistake("13.1", "These are the rows of the head after head 3: the heads are counted from 1 here")
def _ex_13_1_from_zero():
    return _rows(head=HEAD + 1)


@mistake("13.1", "These rows belong to W_K (keys); in_proj_weight stacks W_Q, W_K, W_V in that order")
def _ex_13_1_keys():
    return _rows(blocks_up=1)  # W_K sits just above W_V


@mistake("13.1", "These are head 3's rows inside our w_v.weight; in in_proj_weight, W_Q and W_K come "
         "above W_V")
def _ex_13_1_no_offset():
    return _head_rows(HEAD)


@mistake("13.1", "The second number is the last row itself; the exercise asks for last row + 1, as a "
         "slice's end")
def _ex_13_1_inclusive():
    first, end = _rows()
    return (first, end - 1)


# ---------------------------------------------------------------- 13.2, PyTorch's combined mask

TGT = torch.tensor([[1, 6, 7, 2, 0, 0]])


@register("13.2", prompt="Give the (6, 6) bool tensor, True = blocked, for '<s> d e </s>' plus two padding tokens.",
          hint="a key is blocked for a query if it lies in the query's future or if it is padding; "
               "build each of the two conditions as a (6, 6) or broadcastable bool tensor and combine them.",
          minutes=10,
          full="The future keys and the padding keys both blocked (True = blocked), built from the two masks PyTorch "
               "takes.",
          partial="Our convention (True = may attend), one of the two conditions only, or padding rows instead of "
                  "columns.")
def _combined_mask():
    blocked = ~target_mask(TGT)[0, 0]
    assert torch.equal(blocked, ~causal_mask(6) | (TGT == 0))
    return blocked


@mistake("13.2", "This is True where attention is allowed (our convention); PyTorch's masks are True "
         "where a key is blocked")
def _ex_13_2_allowed():
    return target_mask(TGT)[0, 0]


@mistake("13.2", "This blocks only the future; the padding keys are blocked too")
def _ex_13_2_causal_only():
    return ~causal_mask(6)


@mistake("13.2", "This blocks only the padding; the future keys are blocked too")
def _ex_13_2_padding_only():
    return (TGT == 0).expand(6, 6)


@mistake("13.2", "This blocks the padding rows (queries) instead of the padding columns (keys)")
def _ex_13_2_padding_rows():
    return ~causal_mask(6) | (TGT == 0)[0][:, None]


# ---------------------------------------------------------------- 13.3, nn.Transformer at d_model = 1024

def _nn_transformer(d_model=1024, final_norms=True) -> tuple[int, int]:
    """(parameters, parameters of the final norms) of nn.Transformer with 8 heads, 6 + 6 layers, d_ff 2048."""
    with torch.device("meta"):
        pt = nn.Transformer(d_model=d_model, nhead=BASE["h"], num_encoder_layers=BASE["N"],
                            num_decoder_layers=BASE["N"], dim_feedforward=BASE["d_ff"], batch_first=True)
    total = sum(p.numel() for p in pt.parameters())
    extra = sum(p.numel() for p in pt.encoder.norm.parameters()) + sum(p.numel() for p in pt.decoder.norm.parameters())
    return (total, extra) if final_norms else (total - extra, 0)


@register("13.3", prompt="Give (parameters of nn.Transformer with d_model 1024, 8 heads, 6 + 6 layers and d_ff "
          "2048, parameters left over after copying our layers of that size in), a tuple of two ints.",
          hint="nn.Transformer holds the same layers as ours, plus modules the paper's model does not have; "
               "list its top-level submodules (named_children of pt.encoder and pt.decoder) and count each.",
          minutes=10,
          full="`nn.Transformer` counted with its two final LayerNorms, and the leftover identified as those norms.",
          partial="No final norms, one of the two, or the base width.")
def _wide_nn_transformer():
    return _nn_transformer()


@mistake("13.3", "This counts no final LayerNorms: nn.Transformer adds one after each of its two stacks "
         "by default")
def _ex_13_3_no_norms():
    return _nn_transformer(final_norms=False)


@mistake("13.3", "This counts half of the final norms' parameters: there are two final LayerNorms "
         "(encoder and decoder), each with a gain and a shift of d_model values")
def _ex_13_3_half_norms():
    total, extra = _nn_transformer()
    return (total - extra // 2, extra // 2)


@mistake("13.3", "This is nn.Transformer at the paper's base width, d_model 512; the exercise uses d_model 1024")
def _ex_13_3_base_width():
    return _nn_transformer(d_model=BASE["d_model"])
