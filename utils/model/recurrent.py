"""A recurrent encoder-decoder with additive attention (Bahdanau, Cho and Bengio 2015),
the kind of model the paper's Table 2 compares the Transformer with.

"Neural machine translation by jointly learning to align and translate" (ICLR 2015),
section 3 and appendix A: a bidirectional GRU reads the source into annotations
h_j = [h_j forward; h_j backward]; a GRU decoder, at output step i, scores every
annotation against its previous state s_{i-1} with a small feed-forward network
(the "alignment model", additive attention), takes their weighted sum as the context
c_i, and updates its state from the previous output token and c_i.

The model has the Transformer's interface (``utils.model.transformer.Transformer``): ``encode``,
``decode``, ``generator``, ``forward``, ``pad_id`` and ``embed`` (with ``d_model``),
so the course's decoders (``utils.model.decoding.greedy_decode``, ``utils.model.decoding.beam_search_batch``)
and optimizer (``utils.training.recipe.make_optimizer``) take it unchanged. Like the Transformer
there, ``decode`` recomputes the whole prefix from ``<s>`` at every call (no cache).

Where it departs from Bahdanau et al., for a fair comparison with the course's
Transformer on one task:

* One vocabulary and one embedding table for source, target and output layer, the
  Transformer's ``Embeddings`` (section 3.4 of Vaswani et al.; Bahdanau et al. have
  separate source and target tables and an untied output matrix W_o).
* The maxout readout has d_embed outputs (their l = 500 with m = 620), so that its
  output can meet the tied table.
* Dropout on the embeddings and on the readout, as the Transformer drops its embeddings.
* Optional dropout on the annotations, the context in the decoder's input and the decoder's
  state where it meets the readout (``p_memory``, ``p_input``, ``p_state``), sites the
  recurrent literature adds; off unless given, so the shipped runs are unchanged by them.
* PyTorch's GRU applies the reset gate after the hidden product,
  tanh(W x + b + r * (U h + b')), where Cho et al. write tanh(W x + U (r * h)):
  the same products, a common variant (cuDNN's).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..core.checks import check_ids, check_mask, check_memory, check_positive_int, check_probability, check_tensor, is_int
from ..core.masks import PAD_ID, padding_mask
from .embeddings import Embeddings
from .transformer import Transformer

#: The recurrent model compared with the G2P Transformer (``utils.tasks.g2p.G2P_MODEL``): the
#: same embedding width (so ``make_optimizer`` gives it the same learning-rate schedule)
#: and, with the 69-token G2P vocabulary, within 1% of its parameter count
#: (1,388,476 against 1,397,376, ratio 0.9936; ``tests/test_recurrent.py`` checks the ratio).
G2P_RECURRENT = dict(d_embed=128, d_hidden=220, d_attn=220, p_drop=0.1)


def additive_attention(query, keys, v, values, mask=None):
    """alpha_j = softmax_j(v^T tanh(query + keys_j)), context = sum_j alpha_j values_j.

    Bahdanau et al. 2015, equations 5 and 6 and appendix A.1.2: with query = W_a s_{i-1}
    and keys_j = U_a h_j, the score e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j) says how
    well the annotation h_j fits output step i.

    Args:
        query: (batch, d_attn), the projected decoder state W_a s_{i-1}.
        keys: (batch, src_len, d_attn), the projected annotations U_a h_j (+ bias).
        v: an ``nn.Linear(d_attn, 1, bias=False)``, the vector v_a.
        values: (batch, src_len, d_value), the annotations h_j.
        mask: optional bool (batch, src_len) or a shape that broadcasts to it; True =
            may attend, False = padding.

    Returns:
        (context (batch, d_value), weights (batch, src_len)), each row of weights
        summing to 1. A row whose positions are all masked gets zero weights and a
        zero context, never NaN.

    Raises:
        TypeError: an input is not a floating-point tensor; the mask is not boolean.
        ValueError: the shapes do not fit together; the mask does not broadcast to
            (batch, src_len).
    """
    check_tensor(query, "query", ndim_min=2)
    check_tensor(keys, "keys", ndim_min=3)
    check_tensor(values, "values", ndim_min=3)
    batch, src_len, d_attn = keys.shape if keys.dim() == 3 else (None, None, None)
    if (keys.dim() != 3 or query.dim() != 2 or values.dim() != 3 or query.shape != (batch, d_attn)
            or values.shape[:2] != (batch, src_len)):
        raise ValueError(
            "additive attention needs query (batch, d_attn), keys (batch, src_len, d_attn) and values "
            f"(batch, src_len, d_value), got query {tuple(query.shape)}, keys {tuple(keys.shape)}, "
            f"values {tuple(values.shape)}"
        )
    scores = v(torch.tanh(query[:, None, :] + keys))[..., 0]  # (batch, src_len)
    # From here on, the masked softmax of scaled_dot_product_attention (utils/model/attention.py).
    if mask is not None:
        check_mask(mask, scores.shape)
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return (weights[:, None, :] @ values)[:, 0], weights


class AdditiveAttention(nn.Module):
    """The alignment model of Bahdanau et al. 2015 (appendix A.1.2): a one-hidden-layer
    network scores each annotation h_j against the decoder state s_{i-1}.

    e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j); alpha_ij = softmax_j e_ij; c_i = sum_j alpha_ij h_j.
    ``w_a`` has no bias and ``u_a`` one (a single bias suffices inside the tanh); ``v_a``
    has none. U_a h_j does not depend on i: ``keys(memory)`` computes it once per source.

    Args:
        d_query: decoder state width n (1000 in the paper).
        d_key: annotation width 2n (forward and backward states).
        d_attn: hidden width n' of the alignment model (1000 in the paper).

    Shapes: query (batch, d_query); memory (batch, src_len, d_key); keys (batch,
    src_len, d_attn); mask bool (batch, src_len); returns context (batch, d_key).
    With ``keep_weights`` True, ``self.weights`` holds the last call's weights
    (batch, src_len).

    Raises:
        TypeError, ValueError: a size is not a positive int; inputs as for
            ``additive_attention``.
    """

    def __init__(self, d_query: int, d_key: int, d_attn: int):
        super().__init__()
        check_positive_int(d_query=d_query, d_key=d_key, d_attn=d_attn)
        self.w_a = nn.Linear(d_query, d_attn, bias=False)
        self.u_a = nn.Linear(d_key, d_attn)
        self.v_a = nn.Linear(d_attn, 1, bias=False)
        self.keep_weights = False
        self.weights = None

    def keys(self, memory):
        """U_a h_j + b for every source position: (batch, src_len, d_key) -> (batch, src_len, d_attn)."""
        return self.u_a(memory)

    def forward(self, query, memory, keys=None, mask=None):
        check_tensor(query, "query", ndim_min=2)
        if query.size(-1) != self.w_a.in_features:
            raise ValueError(f"query must have shape (batch, d_query={self.w_a.in_features}), got {tuple(query.shape)}")
        check_tensor(memory, "memory", ndim_min=3)
        if memory.size(-1) != self.u_a.in_features:
            raise ValueError(f"memory must have shape (batch, src_len, d_key={self.u_a.in_features}), "
                             f"got {tuple(memory.shape)}")
        keys = self.keys(memory) if keys is None else keys
        context, weights = additive_attention(self.w_a(query), keys, self.v_a, memory, mask)
        self.weights = weights.detach() if self.keep_weights else None
        return context


def _source_lengths(src_mask, batch, src_len):
    """The number of real tokens of each row, from a padding mask that broadcasts to
    (batch, 1, 1, src_len) and is, in every row, True on a prefix of one or more
    positions and False after it (the encoder reads the first n_i tokens of row i)."""
    check_mask(src_mask, (batch, 1, 1, src_len))
    keep = src_mask.expand(batch, 1, 1, src_len).reshape(batch, src_len)
    lengths = keep.sum(dim=-1)
    prefix = torch.arange(src_len, device=keep.device) < lengths[:, None]
    bad = ((keep != prefix) | (lengths == 0)[:, None]).any(dim=-1)
    if bad.any():
        row = int(bad.nonzero()[0])
        raise ValueError(
            "src_mask must mark each row's real tokens as a prefix, True on the first n >= 1 positions "
            "and False after them (the recurrent encoder reads the first n tokens of each row), "
            f"got {keep[row].int().tolist()} in row {row}"
        )
    return lengths


class RecurrentSeq2Seq(nn.Module):
    """Bidirectional GRU encoder, GRU decoder with additive attention (Bahdanau et al.
    2015, section 3 and appendix A), with one shared embedding table.

    Encoder (section 3.2): the source embeddings run through a bidirectional GRU; the
    annotation h_j = [forward state; backward state] (2 * d_hidden). Sequences are
    packed by length, so padding never enters a recurrence and changes nothing.

    Decoder (section 3.1, appendix A.2.2): s_0 = tanh(W_s h_1 backward); at step i
    (i = 1..tgt_len), c_i = AdditiveAttention(s_{i-1}, h), s_i = GRU([E y_{i-1}; c_i],
    s_{i-1}) and the readout t_i = maxout(W_t [s_i; c_i; E y_{i-1}]) (pools of 2, width
    d_embed); logits = t_i E^T with the embedding table E (tied as in the Transformer's
    section 3.4). The output uses s_i, as equation 4 writes it (the appendix writes s_{i-1}).

    Initialisation as appendix B.1: recurrent matrices orthogonal, W_a and U_a normal with
    standard deviation 0.001, v_a and the biases zero, other matrices normal with standard
    deviation 0.01; the embedding table as the Transformer's.

    Args:
        vocab_size: shared vocabulary size (69 for G2P).
        d_embed: embedding width m, also the readout width (the paper: m = 620 and a
            readout of l = 500).
        d_hidden: GRU state width n of each encoder direction and of the decoder (1000).
        d_attn: hidden width n' of the alignment model (1000).
        p_drop: dropout on the embeddings and on the readout.
        pad_id: padding token id, used to build masks when none are given.
        p_memory, p_input, p_state: optional dropout at the sites the recurrent literature
            adds, each 0.0 (off) unless given: the annotations h_j (the encoder's outputs);
            the decoder's input, at every step, on its context half c_i (its other half,
            E y_{i-1}, is an embedding, dropped at p_drop); and the decoder state s_i where
            it leaves the recurrence for the readout. Zaremba et al. (2014) drop only such
            non-recurrent connections: the recurrence carries s_i whole. A site that is off
            is skipped and draws no random numbers, so a model without them computes, and
            trains, exactly as before they existed.

    Shapes (``batch_first``): src (batch, src_len) and tgt (batch, tgt_len) long ids,
    lengths >= 1; memory (batch, src_len, 2 * d_hidden); src_mask bool broadcastable to
    (batch, 1, 1, src_len), True on the real tokens, which must come first in every row;
    tgt_mask bool broadcastable to (batch, 1, tgt_len, tgt_len), checked but otherwise
    unused: the recurrence already keeps step i from seeing tokens after y_{i-1}, and the
    outputs at padded target positions are left for the loss to ignore.

    Raises:
        TypeError, ValueError: a size is not a positive int, a dropout rate is outside
            [0, 1) or pad_id outside the vocabulary; ids that are not (batch, len >= 1) integer
            tensors; memory of the wrong shape or batch size; masks that are not bool or
            do not broadcast; a src_mask that is not a prefix of one or more positions.
        IndexError: a token id outside the vocabulary.
    """

    def __init__(self, vocab_size, d_embed=128, d_hidden=220, d_attn=220, p_drop=0.1, pad_id=PAD_ID,
                 p_memory=0.0, p_input=0.0, p_state=0.0):
        super().__init__()
        check_positive_int(vocab_size=vocab_size, d_embed=d_embed, d_hidden=d_hidden, d_attn=d_attn)
        for name, p in dict(p_drop=p_drop, p_memory=p_memory, p_input=p_input, p_state=p_state).items():
            check_probability(p, name)
        if not is_int(pad_id) or not 0 <= pad_id < vocab_size:
            raise ValueError(f"pad_id must be a token id in 0..{vocab_size - 1}, got {pad_id!r}")
        self.pad_id, self.d_hidden = pad_id, d_hidden
        self.embed = Embeddings(vocab_size, d_embed)
        self.dropout = nn.Dropout(p_drop)
        # The optional sites (no parameters: the state_dict is the same with or without them).
        self.drop_memory, self.drop_input, self.drop_state = nn.Dropout(p_memory), nn.Dropout(p_input), nn.Dropout(p_state)
        self.encoder = nn.GRU(d_embed, d_hidden, batch_first=True, bidirectional=True)
        self.init_state = nn.Linear(d_hidden, d_hidden)  # W_s
        self.attention = AdditiveAttention(d_hidden, 2 * d_hidden, d_attn)
        self.decoder_cell = nn.GRUCell(d_embed + 2 * d_hidden, d_hidden)
        self.readout = nn.Linear(d_hidden + 2 * d_hidden + d_embed, 2 * d_embed)  # maxout pools of 2
        self._init_weights()

    def _init_weights(self):
        for name, p in self.named_parameters():
            if name.startswith("embed."):
                continue
            if "bias" in name or name.startswith("attention.v_a"):
                nn.init.zeros_(p)
            elif "weight_hh" in name:  # (3 d_hidden, d_hidden): gates r, z and candidate, each orthogonal
                for block in p.data.chunk(3, dim=0):
                    nn.init.orthogonal_(block)
            elif name.startswith(("attention.w_a", "attention.u_a")):
                nn.init.normal_(p, std=0.001)
            else:
                nn.init.normal_(p, std=0.01)

    def encode(self, src, src_mask=None):
        """Bidirectional GRU: src (batch, src_len) -> annotations (batch, src_len, 2 * d_hidden).

        Row i is read over its first n_i tokens, n_i from ``src_mask`` (default
        ``padding_mask(src, pad_id)``); its annotations after n_i are zeros.
        """
        check_ids(src, "src")
        if src_mask is None:
            src_mask = padding_mask(src, self.pad_id)
        lengths = _source_lengths(src_mask, *src.shape)
        x = self.dropout(self.embed(src))
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        memory, _ = pad_packed_sequence(self.encoder(packed)[0], batch_first=True, total_length=src.size(1))
        return self.drop_memory(memory) if self.drop_memory.p else memory  # a site that is off draws nothing

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None):
        """GRU decoder: tgt (batch, tgt_len) and memory -> readout (batch, tgt_len, d_embed).

        Position i of the output predicts the token after tgt[:, i]; ``generator`` turns
        it into logits. Without a src_mask every memory position is attended to (as in
        the Transformer's ``decode``); tgt_mask is checked and otherwise unused.
        """
        check_memory(memory, tgt, 2 * self.d_hidden)
        batch, src_len, _ = memory.shape
        tgt_len = tgt.size(1)
        if tgt_mask is not None:
            check_mask(tgt_mask, (batch, 1, tgt_len, tgt_len))
        keep = None
        if src_mask is not None:
            check_mask(src_mask, (batch, 1, 1, src_len))
            keep = src_mask.expand(batch, 1, 1, src_len).reshape(batch, src_len)
        y = self.dropout(self.embed(tgt))  # E y_{i-1}: (batch, tgt_len, d_embed)
        keys = self.attention.keys(memory)  # U_a h_j, once
        s = torch.tanh(self.init_state(memory[:, 0, self.d_hidden:]))  # s_0 from the backward h_1
        states, contexts, weights = [], [], []
        for i in range(tgt_len):
            c = self.attention(s, memory, keys, keep)  # c_i from s_{i-1}
            s = self.decoder_cell(torch.cat([y[:, i], self.drop_input(c) if self.drop_input.p else c], dim=-1), s)  # s_i
            states.append(self.drop_state(s) if self.drop_state.p else s)  # to the readout; the recurrence keeps s
            contexts.append(c)
            weights.append(self.attention.weights)
        if self.attention.keep_weights:  # (batch, tgt_len, src_len), for plots of the alignment
            self.attention.weights = torch.stack(weights, dim=1)
        t = self.readout(torch.cat([torch.stack(states, 1), torch.stack(contexts, 1), y], dim=-1))
        t = t.unflatten(-1, (-1, 2)).amax(dim=-1)  # maxout: (batch, tgt_len, d_embed)
        return self.dropout(t)

    def generator(self, t):
        """Output layer tied to the embedding: (..., d_embed) -> logits (..., vocab_size)."""
        return F.linear(t, self.embed.lut.weight)

    # Logits (batch, tgt_len, vocab_size) for decoder input ``tgt``: the Transformer's forward,
    # word for word (masks left as None built from pad_id, encode, decode, generator).
    forward = Transformer.forward


def new_recurrent_model(vocab_size: int = 69, **overrides) -> RecurrentSeq2Seq:
    """``RecurrentSeq2Seq(vocab_size, **G2P_RECURRENT)``, with ``overrides`` replacing fields.

    ``overrides`` may also turn on the optional dropout sites (``p_memory``, ``p_input``,
    ``p_state``), which ``G2P_RECURRENT`` leaves off.

    Raises:
        TypeError: an override is neither a field of ``G2P_RECURRENT`` nor an optional dropout site.
    """
    fields = [*G2P_RECURRENT, "p_memory", "p_input", "p_state"]
    unknown = set(overrides) - set(fields)
    if unknown:
        raise TypeError(f"unknown model fields {sorted(unknown)}; the fields are {sorted(fields)}")
    return RecurrentSeq2Seq(vocab_size, **{**G2P_RECURRENT, **overrides})

