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

    ``cache.step(prefixes)`` returns what ``model.decode(prefixes, memory,
    src_mask)[:, -1]`` returns, the decoder's output at each prefix's last
    position, but computes only that position. Per decoder layer it holds

    * the self-attention's keys and values of every position decoded so far,
      ``keys[i]``, ``values[i]`` (n, h, t, d_k), one position longer per step;
    * the encoder-decoder attention's keys and values, computed from
      ``memory`` once per sentence: ``memory_keys[i]``, ``memory_values[i]``
      (batch, h, src_len, d_k).

    So a step runs the layers on one position instead of t. The cache costs
    2 x N x d_model numbers per decoded token of each row, and as many per
    source token of each sentence (section 3.2.2: h heads of d_k = d_model / h).

    Each call passes every row's whole prefix, as ``model.decode`` takes it:
    row j must extend, by one token, a row the cache held at the previous
    step, its parent. The cache finds the parents (same sentence, same tokens)
    or takes them from ``parents``, and reorders its keys and values to follow
    them: beam search's best hypotheses change from one step to the next.

    Args:
        model: the course's ``Transformer``, in eval mode.
        memory: the encoder's output, (batch, src_len, d_model).
        src_mask: None or the sources' padding mask (batch, 1, 1, src_len).

    ``step(prefixes, rows=None, parents=None)``: prefixes (n, t) token ids,
    ``<s>`` first; rows (n,) the sentence (row of ``memory``) of each prefix,
    by default every row in order (n = batch) or, with one sentence, that one;
    parents (n,) the row of the previous step that each prefix extends (found
    when None). Returns (n, d_model). Padding in a prefix (a row that has
    ended) is hidden from attention, as ``target_mask`` hides it.

    Raises:
        TypeError: ``model`` is not the course's ``Transformer``; ``memory`` is
            not a float tensor or ``src_mask`` not boolean; ids, rows or
            parents are not integer tensors.
        ValueError: ``memory`` is not the model's width; a mask of the wrong
            shape; prefixes that are not one token longer than the cached ones
            or that extend none of them (a cache follows one search: another
            batch is refused); a step past the model's ``max_len``; rows or
            parents out of range.
        RuntimeError: the model is in training mode (dropout is active).
    """

    def __init__(self, model, memory, src_mask=None):
        _check_cache(model, memory, src_mask)
        self.model, self.memory_rows, self.src_mask = model, memory.size(0), src_mask
        self.ids = self.rows = None  # the prefixes held, the sentence of each
        self.keys = [None] * len(model.decoder_layers)  # per layer (n, h, t, d_k)
        self.values = [None] * len(model.decoder_layers)
        with torch.no_grad():  # once per sentence: keys and values of memory
            self.memory_keys, self.memory_values = [], []
            for layer in model.decoder_layers:
                a = layer.cross_attn
                self.memory_keys.append(a.split_heads(a.w_k(memory)))
                self.memory_values.append(a.split_heads(a.w_v(memory)))

    def step(self, prefixes, rows=None, parents=None):
        model = self.model
        rows = _check_step(self, prefixes, rows)
        t = prefixes.size(1)  # the newest token is at position t - 1
        if t > 1:
            parents = self.parents(prefixes, rows, parents)
        if self.rows is None or not torch.equal(rows, self.rows):
            # memory's keys and values, one row per prefix
            self.row_keys = [_per_row(k, rows) for k in self.memory_keys]
            self.row_values = [_per_row(v, rows) for v in self.memory_values]
            self.row_mask = None if self.src_mask is None else _per_row(self.src_mask, rows)
        visible = (prefixes != model.pad_id)[:, None, None, :]  # (n, 1, 1, t)
        with torch.no_grad():
            x = model.embed(prefixes[:, -1:]) + model.pe[t - 1]  # (n, 1, d_model)
            for i, layer in enumerate(model.decoder_layers):
                a = layer.self_attn
                k = a.split_heads(a.w_k(x))  # the newest position's (n, h, 1, d_k)
                v = a.split_heads(a.w_v(x))
                if t > 1:  # after those of the earlier positions, from each parent
                    k = torch.cat([self.keys[i][parents], k], dim=2)
                    v = torch.cat([self.values[i][parents], v], dim=2)
                self.keys[i], self.values[i] = k, v
                # every earlier position is visible: no causal mask, padding only
                x = layer.norm1(x + _attend(a, x, k, v, visible))
                c = layer.cross_attn
                x = layer.norm2(x + _attend(c, x, self.row_keys[i], self.row_values[i], self.row_mask))
                x = layer.norm3(x + layer.ffn(x))
        self.ids, self.rows = prefixes, rows
        return x[:, 0]

    def parents(self, prefixes, rows, parents=None):
        """For each prefix (n, t), the row it extends among those held (n_old, t - 1)."""
        n, held, given = prefixes.size(0), self.ids.size(0), parents is not None
        if not given and n == held and torch.equal(rows, self.rows) \
                and torch.equal(prefixes[:, :-1], self.ids):  # row j extends row j
            return torch.arange(n, device=prefixes.device)
        if not given:  # search: same sentence, same tokens
            same = (rows[:, None] == self.rows[None]) & (prefixes[:, None, :-1] == self.ids[None]).all(-1)
            found = same.any(1)
            parents = same.int().argmax(1)
        else:
            _check_parents(parents, n, held)
            found = (self.rows[parents] == rows) & (self.ids[parents] == prefixes[:, :-1]).all(-1)
        if not found.all():
            j = int((~found).nonzero()[0])
            raise ValueError(f"prefix {j} ({prefixes[j].tolist()}) extends no prefix this cache holds"
                             f"{' at the parent given' if given else ''}: a cache follows one "
                             f"search, each step one token longer (another batch is refused)")
        return parents


def _attend(attn, x, k, v, mask=None):
    """MultiHeadAttention ``attn`` with keys and values already projected: x (n, 1, d_model)."""
    out, _ = scaled_dot_product_attention(attn.split_heads(attn.w_q(x)), k, v, mask)
    return attn.w_o(out.transpose(1, 2).reshape(x.size(0), x.size(1), attn.d_model))


def _per_row(x, rows):
    """One row of ``x`` (sentences first) per prefix: a view where no copy is needed."""
    if x.size(0) == 1:  # one sentence: every prefix reads it
        return x.expand(len(rows), *x.shape[1:])
    if len(rows) == x.size(0) and torch.equal(rows, torch.arange(len(rows), device=rows.device)):
        return x  # one prefix per sentence, in order (greedy)
    return x[rows]


def _check_eval(model):
    if model.training:
        raise RuntimeError("model is in training mode (dropout is active): call model.eval() before decoding")


def _check_cache(model, memory, src_mask):
    if not isinstance(model, Transformer):
        raise TypeError(f"KVCache needs the course's Transformer (utils.model.transformer.Transformer), "
                        f"got {type(model).__module__}.{type(model).__name__}; chapter 17's recurrent "
                        f"model keeps a state instead and decodes without a KV cache")
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


def _check_parents(parents, n, held):
    if not isinstance(parents, torch.Tensor) or parents.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"parents must be an integer tensor, got {getattr(parents, 'dtype', type(parents).__name__)}")
    if parents.shape != (n,) or int(parents.min()) < 0 or int(parents.max()) >= held:
        raise ValueError(f"parents must hold one row in 0..{held - 1} per prefix, shape ({n},), "
                         f"got {tuple(parents.shape)} with values {parents.tolist()!r:.60}")


def _check_step(cache, prefixes, rows):
    """The rows (n,) of a step's prefixes (n, t), checked against what ``cache`` holds."""
    _check_eval(cache.model)
    check_ids(prefixes, "prefixes")
    n, t = prefixes.shape
    held = 0 if cache.ids is None else cache.ids.size(1)
    if t != held + 1:
        raise ValueError(f"the cache holds {held} position(s), so prefixes must have {held + 1} token(s), "
                         f"the whole prefix with <s> first; got shape {tuple(prefixes.shape)}")
    if t > cache.model.pe.size(0):
        raise ValueError(f"step {t} is past the model's max_len={cache.model.pe.size(0)} positions")
    if rows is None:
        if n != cache.memory_rows and cache.memory_rows != 1:
            raise ValueError(f"{n} prefix(es) for {cache.memory_rows} sentences: pass rows, the sentence of each")
        return torch.arange(n, device=prefixes.device) if n == cache.memory_rows else prefixes.new_zeros(n)
    if not isinstance(rows, torch.Tensor) or rows.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"rows must be an integer tensor, got {getattr(rows, 'dtype', type(rows).__name__)}")
    if rows.shape != (n,) or int(rows.min()) < 0 or int(rows.max()) >= cache.memory_rows:
        raise ValueError(f"rows must hold one sentence index in 0..{cache.memory_rows - 1} per prefix, "
                         f"shape ({n},), got {tuple(rows.shape)} with values {rows.tolist()!r:.60}")
    return rows
