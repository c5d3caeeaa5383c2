"""The complete encoder-decoder Transformer (paper section 3, Figure 1)."""

from __future__ import annotations

import torch.nn.functional as F
from torch import nn

from ..core.checks import check_ids, check_memory, check_model_config, check_module
from ..core.masks import PAD_ID, padding_mask, target_mask
from .embeddings import Embeddings, positional_encoding
from .layers import DecoderLayer, EncoderLayer

#: The running example's tiny model (234,304 parameters).
TINY = dict(vocab_size=13, d_model=64, h=4, d_ff=256, N=2, p_drop=0.1)
#: The paper's base model, without the vocabulary (37,000 shared BPE tokens for EN-DE).
BASE = dict(d_model=512, h=8, d_ff=2048, N=6, p_drop=0.1)


class Transformer(nn.Module):
    """Encoder-decoder Transformer with one shared embedding table (section 3).

    The table embeds source and target tokens and is also the output layer:
    logits = y E^T (section 3.4). No final LayerNorm after either stack, as in
    the paper's post-norm model.

    Args:
        vocab_size: shared vocabulary size (13 for the running example).
        d_model, h, d_ff, N, p_drop: as in the paper (Table 3).
        max_len: longest sequence the positional table covers.
        pad_id: padding token id, used to build masks when none are given.

    Shapes (``batch_first``): src (batch, src_len) and tgt (batch, tgt_len) long
    ids, src_len and tgt_len >= 1; src_mask broadcastable to (batch, h, 1 or
    tgt_len, src_len) and tgt_mask to (batch, h, tgt_len, tgt_len), both bool
    with True = may attend. A mask left as None is built from ``pad_id``.

    Raises:
        TypeError, ValueError: a size is not a positive int, h does not divide
            d_model, p_drop is outside [0, 1) or pad_id outside the vocabulary;
            ids that are not (batch, len >= 1) integer tensors of the vocabulary;
            memory of the wrong shape or batch size.
    """

    def __init__(self, vocab_size, d_model=512, h=8, d_ff=2048, N=6, p_drop=0.1,
                 max_len=512, pad_id=PAD_ID):
        super().__init__()
        check_model_config(vocab_size, d_model, h, d_ff, N, p_drop, max_len, pad_id)
        self.pad_id = pad_id
        self.embed = Embeddings(vocab_size, d_model)
        self.register_buffer("pe", positional_encoding(max_len, d_model), persistent=False)
        self.dropout = nn.Dropout(p_drop)
        self.encoder_layers = nn.ModuleList(EncoderLayer(d_model, h, d_ff, p_drop) for _ in range(N))
        self.decoder_layers = nn.ModuleList(DecoderLayer(d_model, h, d_ff, p_drop) for _ in range(N))
        for name, p in self.named_parameters():
            if p.dim() > 1 and not name.startswith("embed."):
                nn.init.xavier_uniform_(p)

    def embed_positions(self, ids):
        """Dropout(Embeddings(ids) * sqrt(d_model) + PE): (batch, len) -> (batch, len, d_model)."""
        if ids.size(1) > self.pe.size(0):
            raise ValueError(f"sequence of length {ids.size(1)} exceeds max_len={self.pe.size(0)}")
        return self.dropout(self.embed(ids) + self.pe[: ids.size(1)])

    def encode(self, src, src_mask=None):
        """Encoder stack: src (batch, src_len) -> memory (batch, src_len, d_model).

        Without a src_mask, padding_mask(src) hides the padding.
        """
        check_ids(src, "src")  # an empty source (src_len 0) is an error
        if src_mask is None:
            src_mask = padding_mask(src, self.pad_id)
        x = self.embed_positions(src)
        for layer in self.encoder_layers:
            x = layer(x, src_mask)
        return x

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None):
        """Decoder stack: tgt (batch, tgt_len) and memory -> (batch, tgt_len, d_model).

        Without a tgt_mask, target_mask(tgt) (padding and causal) keeps the
        self-attention masked; without a src_mask, every memory position is seen.
        """
        check_memory(memory, tgt, self.embed.d_model)
        if tgt_mask is None:
            tgt_mask = target_mask(tgt, self.pad_id)
        y = self.embed_positions(tgt)
        for layer in self.decoder_layers:
            y = layer(y, memory, src_mask, tgt_mask)
        return y

    def generator(self, y):
        """Output layer tied to the embedding: (..., d_model) -> logits (..., vocab_size)."""
        return F.linear(y, self.embed.lut.weight)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        """Logits (batch, tgt_len, vocab_size) for decoder input ``tgt``.

        Masks left as None are built from ``pad_id``: src_mask =
        padding_mask(src), tgt_mask = target_mask(tgt) (padding and causal).
        """
        if src_mask is None:
            src_mask = padding_mask(src, self.pad_id)
        if tgt_mask is None:
            tgt_mask = target_mask(tgt, self.pad_id)
        memory = self.encode(src, src_mask)
        return self.generator(self.decode(tgt, memory, src_mask, tgt_mask))


def count_parameters(module: nn.Module) -> int:
    """Number of distinct trainable parameters (a tied matrix counts once)."""
    check_module(module)
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
