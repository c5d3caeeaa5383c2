"""Incremental decoding with a key-value cache (the decoder of paper section 3.1, at generation time).

During generation the decoder's input grows by one token per step. Without a cache every step
re-reads the whole prefix through every decoder layer. The causal mask (section 3.2.3) means that
the keys and values of an earlier position never depend on a later one, so they are the same at
every later step: ``KVCache`` keeps them and each step computes only the newest position.
``utils.model.decoding`` uses it in greedy and beam search (``cache=None`` or ``True``).
"""

from __future__ import annotations

import torch

from ..core.checks import check_ids, check_mask, check_tensor
from .attention import scaled_dot_product_attention
from .transformer import Transformer


class KVCache:
    """Keys and values of the positions decoded so far, for one search with a ``Transformer``.

    ``cache.step(prefixes)`` returns what ``model.decode(prefixes, memory, src_mask)[:, -1]``
    returns, the decoder's output at each prefix's last position, but computes only that
    position. For each decoder layer the cache holds

    * the masked self-attention's keys and values of every position decoded so far,
      ``keys[i]`` and ``values[i]`` (n, h, t, d_k), one position longer after each step;
    * the encoder-decoder attention's keys and values, computed from ``memory`` once per
      sentence, ``memory_keys[i]`` and ``memory_values[i]`` (batch, h, src_len, d_k).

    So a step costs one position per layer instead of t, and the cache costs 2 x N x d_model
    numbers per decoded token of each row (section 3.2.2: h heads of d_k = d_model / h).

    Each call passes every row's whole prefix, as ``model.decode`` takes it: row j must be a
    row that the cache held at the previous step plus one token. The cache finds that parent
    row (same sentence, same tokens) and reorders its keys and values to follow it, which is
    what beam search needs when its best hypotheses change from one step to the next.

    Args:
        model: the course's ``Transformer``, in eval mode.
        memory: the encoder's output, (batch, src_len, d_model).
        src_mask: None or the padding mask of the sources, (batch, 1, 1, src_len), True = a token.

    ``step(prefixes, rows=None)``: prefixes (n, t) token ids, ``<s>`` first; rows (n,) the
    sentence (row of ``memory``) of each prefix, by default every row of ``memory`` in order
    (n = batch) or, with a single sentence, that sentence for all n. Returns (n, d_model).

    Raises:
        TypeError: ``model`` is not a ``Transformer`` (the recurrent model carries its own
            state); ``memory`` is not a float tensor or ``src_mask`` not boolean; ids or rows
            are not integer tensors.
        ValueError: ``memory`` is not the model's width; a mask of the wrong shape; a prefix
            that is not one token longer than the cached ones or that extends none of them
            (a cache follows one search: another batch or beam size is refused); a step past
            the model's ``max_len``; rows outside ``memory``.
        RuntimeError: the model is in training mode (dropout would make steps differ).
    """

    def __init__(self, model, memory, src_mask=None):
        _check_cache(model, memory, src_mask)
        self.model, self.memory_rows, self.src_mask = model, memory.size(0), src_mask
        self.ids = self.rows = None  # the prefixes held and the sentence of each
        self.keys = [None] * len(model.decoder_layers)  # per layer: (n, h, t, d_k)
        self.values = [None] * len(model.decoder_layers)
        with torch.no_grad():  # once per sentence: keys and values of the encoder output
            self.memory_keys = [layer.cross_attn.split_heads(layer.cross_attn.w_k(memory))
                                for layer in model.decoder_layers]
            self.memory_values = [layer.cross_attn.split_heads(layer.cross_attn.w_v(memory))
                                  for layer in model.decoder_layers]

    def step(self, prefixes, rows=None):
        model = self.model
        rows = _check_step(self, prefixes, rows)
        t = prefixes.size(1)  # the newest token sits at position t - 1
        parents = self.parents(prefixes, rows) if t > 1 else None
        if self.rows is None or not torch.equal(rows, self.rows):  # memory's keys and values, a row per prefix
            self.row_keys = [k[rows] for k in self.memory_keys]
            self.row_values = [v[rows] for v in self.memory_values]
            self.row_mask = None if self.src_mask is None else self.src_mask[rows]
        with torch.no_grad():
            x = model.embed(prefixes[:, -1:]) + model.pe[t - 1]  # (n, 1, d_model); dropout is off
            for i, layer in enumerate(model.decoder_layers):
                a = layer.self_attn
                k, v = a.split_heads(a.w_k(x)), a.split_heads(a.w_v(x))  # the newest position's (n, h, 1, d_k)
                if t > 1:  # after those of the earlier positions, taken from each prefix's parent row
                    k = torch.cat([self.keys[i][parents], k], dim=2)
                    v = torch.cat([self.values[i][parents], v], dim=2)
                self.keys[i], self.values[i] = k, v
                x = layer.norm1(x + _attend(a, x, k, v))  # it may see every position so far: no mask
                c = layer.cross_attn
                x = layer.norm2(x + _attend(c, x, self.row_keys[i], self.row_values[i], self.row_mask))
                x = layer.norm3(x + layer.ffn(x))
        self.ids, self.rows = prefixes, rows
        return x[:, 0]

    def parents(self, prefixes, rows):
        """For each prefix (n, t), the cached row (of n_old, t - 1 tokens) of the same sentence that it extends."""
        if prefixes.size(0) == self.ids.size(0) and torch.equal(rows, self.rows) \
                and torch.equal(prefixes[:, :-1], self.ids):  # row j extends row j (greedy)
            return torch.arange(prefixes.size(0), device=prefixes.device)
        same = (rows[:, None] == self.rows[None]) & (prefixes[:, None, :-1] == self.ids[None]).all(-1)
        found = same.any(1)
        if not found.all():
            j = int((~found).nonzero()[0])
            raise ValueError(f"prefix {j} ({prefixes[j].tolist()}) extends no prefix this cache holds: a cache "
                             f"follows one search, each step one token longer (another batch or beam is refused)")
        return same.int().argmax(1)


def _attend(attn, x, k, v, mask=None):
    """``attn`` (a MultiHeadAttention) with its keys and values already projected: x (n, 1, d_model)."""
    out, _ = scaled_dot_product_attention(attn.split_heads(attn.w_q(x)), k, v, mask)
    return attn.w_o(out.transpose(1, 2).reshape(x.size(0), x.size(1), attn.d_model))


def _check_eval(model):
    if model.training:
        raise RuntimeError("model is in training mode (dropout is active): call model.eval() before decoding")


def _check_cache(model, memory, src_mask):
    if not isinstance(model, Transformer):
        raise TypeError(f"KVCache needs the course's Transformer (utils.model.transformer), got "
                        f"{type(model).__name__}: a recurrent decoder keeps its state, not keys and values")
    _check_eval(model)
    check_tensor(memory, "memory", ndim_min=3)
    if memory.dim() != 3 or memory.size(-1) != model.embed.d_model or memory.size(1) == 0:
        raise ValueError(f"memory must be this model's encoder output (batch, src_len >= 1, "
                         f"d_model={model.embed.d_model}), got {tuple(memory.shape)}")
    if src_mask is not None:
        shape = (memory.size(0), 1, 1, memory.size(1))
        check_mask(src_mask, shape)
        if tuple(src_mask.shape) != shape:
            raise ValueError(f"src_mask must be the sources' padding mask (batch, 1, 1, src_len) = {shape}, "
                             f"got {tuple(src_mask.shape)}")


def _check_step(cache, prefixes, rows):
    """The rows (n,) of a step's prefixes (n, t), checked against what ``cache`` holds."""
    _check_eval(cache.model)
    check_ids(prefixes, "prefixes")
    n, t = prefixes.shape
    held = 0 if cache.ids is None else cache.ids.size(1)
    if t != held + 1:
        raise ValueError(f"the cache holds {held} positions, so prefixes must have {held + 1} tokens, "
                         f"got shape {tuple(prefixes.shape)}")
    if t > cache.model.pe.size(0):
        raise ValueError(f"step {t} is past the model's max_len={cache.model.pe.size(0)} positions")
    if rows is None:
        if n != cache.memory_rows and cache.memory_rows != 1:
            raise ValueError(f"{n} prefixes for {cache.memory_rows} sentences: pass rows, the sentence of each")
        return torch.arange(n, device=prefixes.device) if n == cache.memory_rows else prefixes.new_zeros(n)
    if not isinstance(rows, torch.Tensor) or rows.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"rows must be an integer tensor, got {getattr(rows, 'dtype', type(rows).__name__)}")
    if rows.shape != (n,) or int(rows.min()) < 0 or int(rows.max()) >= cache.memory_rows:
        raise ValueError(f"rows must hold one sentence index in 0..{cache.memory_rows - 1} per prefix, "
                         f"shape ({n},), got {tuple(rows.shape)} with values {rows.tolist()!r:.60}")
    return rows
