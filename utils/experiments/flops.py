"""Floating-point operations of one training step, counted and written out by hand.

Table 2 of the paper compares models by their training cost in FLOPs. Here the cost of
one step (forward, label-smoothed loss, backward; not the optimizer's update) is

* counted by PyTorch's ``torch.utils.flop_counter.FlopCounterMode`` (``step_flops``),
  which sees every matrix product (``mm``, ``addmm``, ``bmm``, ...) and counts
  2 * m * n * k for an (m, k) by (k, n) product, and nothing else (softmax, tanh,
  gates, additions and the loss count 0);
* written as a formula of the sizes, one term per product (``transformer_step_flops``,
  ``recurrent_step_flops``).

The two agree exactly (``tests/test_recurrent.py``). The backward pass of a product
A B computes dL/dA = G B^T and dL/dB = A^T G, two products of the forward's size, so a
step costs 3 times the forward's products, less the gradients nobody needs: the
recurrent encoder's first step multiplies the initial state h_0 = 0, a constant, so the
gradient for it is never computed.

``nn.GRU`` and ``nn.GRUCell`` on the CPU (PyTorch 2.x) are built from ``addmm`` and ``mm``
calls that the counter sees: no product is hidden in a fused kernel, and none is added
to the count by hand. (A fused kernel, such as cuDNN's on a GPU, would hide them: on a
GPU, use the formula.)
"""

from __future__ import annotations

import torch
from torch.utils.flop_counter import FlopCounterMode

from ..core.checks import check_ids, check_module, check_positive_int, is_int
from ..core.masks import PAD_ID, padding_mask, shift_right, target_mask
from ..tasks.translation import train as mt
from ..training.batching import collate
from ..training.recipe import LabelSmoothingLoss


def step_flops(model, src, tgt, eps_ls=0.1) -> int:
    """FLOPs of one training step of ``model`` on (src, tgt), counted by ``FlopCounterMode``.

    The step: logits = model(src, shift_right(tgt), padding_mask(src), target_mask(...)),
    the label-smoothed loss against ``tgt`` and the gradients of every trainable
    parameter (``torch.autograd.grad``, so the model's ``.grad`` fields are left as
    they were). Dropout changes no product, so the mode (train or eval) does not matter.

    Args:
        model: a model with ``forward(src, tgt_in, src_mask, tgt_mask) -> logits`` and ``pad_id``.
        src: (batch, src_len) source ids; tgt: (batch, tgt_len) target ids ending in ``</s>``.

    Returns:
        The number of floating-point operations, an int.

    Raises:
        TypeError: ``model`` is not an ``nn.Module``; ids are not integer tensors.
        ValueError: ids are not (batch, len >= 1), or their batch sizes differ.
    """
    check_module(model, "model")
    check_ids(src, "src")
    check_ids(tgt, "tgt")
    if src.size(0) != tgt.size(0):
        raise ValueError(f"src and tgt need the same batch size, got {tuple(src.shape)} and {tuple(tgt.shape)}")
    tgt_in = shift_right(tgt)
    params = [p for p in model.parameters() if p.requires_grad]
    with FlopCounterMode(display=False) as counter:
        logits = model(src, tgt_in, padding_mask(src, model.pad_id), target_mask(tgt_in, model.pad_id))
        loss = LabelSmoothingLoss(eps_ls)(logits, tgt)
        torch.autograd.grad(loss, params, allow_unused=True)
    return counter.get_total_flops()


def transformer_step_flops(batch, src_len, tgt_len, vocab_size, d_model, d_ff, N, **_) -> int:
    """FLOPs of one training step of ``utils.model.transformer.Transformer``, by hand: 3 x the forward's products.

    With B = batch, S = src_len, T = tgt_len (padded lengths: every position is
    computed), d = d_model, V = vocab_size, the forward's products are

    * per encoder layer: Q, K, V and output projections 4 * 2BSd^2; Q K^T and the
      weights times V 2 * 2BS^2 d (h heads of width d/h); the feed-forward network
      2 * 2BSd d_ff;
    * per decoder layer: self-attention 8BTd^2 + 4BT^2 d; encoder-decoder attention,
      Q and output projections on the target 2 * 2BTd^2, K and V on the memory
      2 * 2BSd^2, scores and weighted sum 2 * 2BTSd; the feed-forward network 4BTd d_ff;
    * the output layer (tied embedding) 2BTdV.

    Every product's operands need gradients (the first layer's input is the embedding
    plus the positions), so backward = 2 x forward. Extra keyword arguments (h, p_drop,
    max_len of ``G2P_MODEL``) are ignored: they change no product's size.

    Raises:
        TypeError, ValueError: a size is not a positive int.
    """
    check_positive_int(batch=batch, src_len=src_len, tgt_len=tgt_len, vocab_size=vocab_size,
                       d_model=d_model, d_ff=d_ff, N=N)
    B, S, T, d = batch, src_len, tgt_len, d_model
    encoder = 8 * B * S * d * d + 4 * B * S * S * d + 4 * B * S * d * d_ff
    decoder = (8 * B * T * d * d + 4 * B * T * T * d) + (4 * B * T * d * d + 4 * B * S * d * d + 4 * B * T * S * d) \
        + 4 * B * T * d * d_ff
    forward = N * (encoder + decoder) + 2 * B * T * d * vocab_size
    return 3 * forward


def recurrent_step_flops(src_lengths, tgt_len, vocab_size, d_embed, d_hidden, d_attn, **_) -> int:
    """FLOPs of one training step of ``utils.model.recurrent.RecurrentSeq2Seq``, by hand.

    With B = len(src_lengths) rows, S = max(src_lengths) (the padded source length),
    L = sum(src_lengths) (the real source tokens: the encoder packs its input), T =
    tgt_len, m = d_embed, n = d_hidden, a = d_attn, V = vocab_size, the forward's
    products are

    * encoder, each of 2 directions: input to the 3 gates 2L m 3n, state to the 3 gates
      2L n 3n, so 12Ln(m + n) in all;
    * s_0 = tanh(W_s h_1): 2Bn^2; the keys U_a h_j once: 2BS(2n)a;
    * each of the T decoder steps: W_a s_{i-1} 2Bna, the scores v_a^T tanh(...) 2BSa,
      the context 2BS(2n), the GRU cell's input [E y; c] to 3 gates 2B(m + 2n)3n and
      its state to 3 gates 2Bn 3n;
    * the readout [s_i; c_i; E y_{i-1}] to 2m maxout units, 2BT(3n + m)2m; the output
      layer (tied embedding) 2BTmV.

    Backward = 2 x forward, less the gradient of the encoder's initial state h_0 = 0,
    which is a constant: each direction's first step skips 2 r n 3n for its r rows
    (the forward direction starts on all B rows, the backward direction on the rows
    of the longest length only, the others join later with a state that already
    carries gradient). Extra keyword arguments (p_drop of ``G2P_RECURRENT``) are ignored.

    Raises:
        TypeError, ValueError: a size is not a positive int; src_lengths is empty
            or holds a length that is not a positive int.
    """
    lengths = src_lengths.tolist() if isinstance(src_lengths, torch.Tensor) else list(src_lengths)
    if not lengths:
        raise ValueError("src_lengths must hold one positive length per row, got none")
    check_positive_int(**{f"src_lengths[{i}]": n for i, n in enumerate(lengths)})
    check_positive_int(tgt_len=tgt_len, vocab_size=vocab_size, d_embed=d_embed, d_hidden=d_hidden, d_attn=d_attn)
    B, S, L, T = len(lengths), max(lengths), sum(lengths), tgt_len
    m, n, a = d_embed, d_hidden, d_attn
    encoder = 2 * (2 * L * m * 3 * n + 2 * L * n * 3 * n)
    start = 2 * B * n * n + 2 * B * S * 2 * n * a
    step = 2 * B * n * a + 2 * B * S * a + 2 * B * S * 2 * n + 2 * B * (m + 2 * n) * 3 * n + 2 * B * n * 3 * n
    out = 2 * B * T * (3 * n + m) * 2 * m + 2 * B * T * m * vocab_size
    forward = encoder + start + T * step + out
    skipped = 2 * (B + lengths.count(S)) * n * 3 * n
    return 3 * forward - skipped


def translation_training_flops(config, steps) -> list[int]:
    """Cumulative training FLOPs of a translation run (chapter 16) after each of its first ``steps``
    steps: entry k-1 is the total of steps 1 to k.

    ``config`` is a log header's "start" (the model, and the recipe's ``max_tokens``, ``seed``,
    ``phrases`` and ``entry_ratio``). Each step is counted by ``transformer_step_flops`` (or
    ``recurrent_step_flops``, for a model with the fields of ``MT_RECURRENT``) on the padded
    batch that the run drew at that step: the batch order is replayed from the run's own
    source (``run_batches``: ``EpochBatches`` or ``MixedBatches``), without running the model
    (chapter 10 counts FLOPs the same way). The counts include padding, as the computation does.

    Raises:
        ValueError: ``steps`` is not an int >= 1; ``config`` lacks "model" or "recipe".
    """
    if not is_int(steps) or steps < 1:
        raise ValueError(f"steps must be an int >= 1, got {steps!r}")
    if not isinstance(config, dict) or not {"model", "recipe"} <= set(config):
        raise ValueError(f"config must be a log header's 'start' (with 'model' and 'recipe'), got {config!r:.120}")
    recipe = config["recipe"]
    vocab_size = mt.config_vocab(config).get_piece_size()
    cache = {}

    def step_flops(examples, indices):  # one count per batch: the batches repeat every epoch
        if id(indices) not in cache:
            src, tgt = collate([examples[i] for i in indices])
            if "d_hidden" in config["model"]:  # the recurrent model (arch="recurrent")
                cache[id(indices)] = recurrent_step_flops((src != PAD_ID).sum(1).tolist(), tgt.size(1), vocab_size,
                                                          **config["model"])
            else:
                cache[id(indices)] = transformer_step_flops(src.size(0), src.size(1), tgt.size(1), vocab_size,
                                                            **config["model"])
        return cache[id(indices)]

    _, order = mt.run_batches(recipe, config.get("split", "buckets"), step_flops)
    total, out = 0, []
    for _ in range(steps):
        total += next(order)
        out.append(total)
    return out
