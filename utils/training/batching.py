"""Batching by length (paper section 5.1): group examples of similar length under a token budget.

Task-free: any task whose examples are (source ids, target ids) pairs uses ``make_batches``
to group them and ``collate`` to pad a batch into tensors."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

from ..core.checks import check_counts, is_int
from ..core.masks import PAD_ID


def _check_lengths(lengths):
    """The lengths as a list of Python ints; raise unless each is a positive int."""
    if (isinstance(lengths, (str, bytes)) or not isinstance(lengths, Iterable)
            or isinstance(lengths, torch.Tensor) and lengths.dim() != 1):
        raise TypeError(f"lengths must be a list of positive ints (one per example), got {type(lengths).__name__} {lengths!r}")
    out = []
    for i, n in enumerate(lengths):
        if isinstance(n, torch.Tensor) and n.dim() == 0 and n.dtype in (torch.int64, torch.int32, torch.int16, torch.uint8):
            n = int(n)
        if not is_int(n):
            raise TypeError(f"lengths must be positive ints (one per example), got {type(n).__name__} {n!r} at index {i}")
        if n < 1:
            raise ValueError(f"lengths must be positive ints (one per example), got {n!r} at index {i}")
        out.append(int(n))
    return out


def length_batches(lengths, max_tokens, sort=True):
    """Group examples of similar length into batches of at most ``max_tokens`` (section 5.1).

    Sort the examples by length, then fill each batch until one more example
    would make (examples x longest length) exceed the budget: padded tokens
    count, so similar lengths waste little.

    Args:
        lengths: sequence of positive ints, one per example.
        max_tokens: token budget per batch (25,000 in the paper).
        sort: False keeps the given order (random batching, for comparison).

    Returns:
        A list of batches, each a list of example indices.

    Raises:
        TypeError: ``lengths`` is not a list of ints.
        ValueError: a length is below 1, ``max_tokens`` is not a positive
            int or is smaller than the longest example.
    """
    lengths = _check_lengths(lengths)  # a list of positive ints
    check_counts(max_tokens=max_tokens)
    if lengths and max(lengths) > max_tokens:
        raise ValueError(f"an example of length {max(lengths)} does not fit max_tokens={max_tokens}")
    batches, batch, longest = [], [], 0
    order = sorted(range(len(lengths)), key=lambda i: lengths[i]) if sort else range(len(lengths))
    for i in order:
        if batch and (len(batch) + 1) * max(longest, lengths[i]) > max_tokens:
            batches.append(batch)
            batch, longest = [], 0
        batch.append(i)
        longest = max(longest, lengths[i])
    if batch:
        batches.append(batch)
    return batches


def _is_id_list(ids) -> bool:
    """A non-empty list or tuple of ints (Python's or NumPy's), or a non-empty 1-D NumPy integer array."""
    if isinstance(ids, np.ndarray):
        return ids.ndim == 1 and len(ids) > 0 and np.issubdtype(ids.dtype, np.integer)
    return isinstance(ids, (list, tuple)) and len(ids) > 0 and all(is_int(t) for t in ids)


def _check_pairs(pairs):
    if not isinstance(pairs, (list, tuple)):
        raise TypeError(f"pairs must be a list of (source ids, target ids), got {type(pairs).__name__}")
    if not pairs:
        raise ValueError("pairs must hold at least one (source ids, target ids) pair, got an empty list")
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(_is_id_list(ids) for ids in pair)):
            raise ValueError(f"pair {i} must be (source ids, target ids), two non-empty lists of ints (or 1-D "
                             f"integer arrays) such as ([21, 8, 4, 7], [57, 40, 38, 2]) for 'read', got {pair!r}")


def collate(pairs) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad a list of (src ids, tgt ids) into src (batch, S) and tgt (batch, T) long tensors."""
    _check_pairs(pairs)
    S = max(len(s) for s, _ in pairs)
    T = max(len(t) for _, t in pairs)
    src = torch.full((len(pairs), S), PAD_ID, dtype=torch.long)
    tgt = torch.full((len(pairs), T), PAD_ID, dtype=torch.long)
    for i, (s, t) in enumerate(pairs):
        src[i, : len(s)] = torch.tensor(s)
        tgt[i, : len(t)] = torch.tensor(t)
    return src, tgt


def make_batches(pairs, max_tokens) -> list[list[int]]:
    """``length_batches`` over max(source length, target length): section 5.1 in miniature."""
    return length_batches([max(len(s), len(t)) for s, t in pairs], max_tokens)
