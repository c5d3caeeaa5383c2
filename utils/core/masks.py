"""Masks and the shifted decoder input (paper section 3.2.3).

Convention: boolean masks, True = may attend, False = blocked, broadcastable
to the attention scores (batch, h, q_len, k_len).
"""

from __future__ import annotations

import torch

from .checks import check_ids, check_token_id, is_int

PAD_ID = 0
BOS_ID = 1
EOS_ID = 2


def _check_ids(ids, name="ids", **token_ids):
    check_ids(ids, name)  # (batch, len >= 1) integer ids
    check_token_id(**token_ids)  # pad_id / bos_id: an int >= 0


def padding_mask(ids, pad_id: int = PAD_ID):
    """Hide padding keys: (batch, len) token ids -> (batch, 1, 1, len) bool mask.

    True where the token is real (may be attended to), False at ``pad_id``.
    The two singleton dimensions broadcast over heads and query positions.

    Raises:
        TypeError: ``ids`` is not an integer tensor, or ``pad_id`` not an int.
        ValueError: ``ids`` is not 2-D, or has no position (len 0); ``pad_id`` is negative.
    """
    _check_ids(ids, pad_id=pad_id)
    return (ids != pad_id)[:, None, None, :]


def causal_mask(n: int):
    """Hide the future: an (n, n) bool mask, True on and below the diagonal.

    Row i (a query position) may attend to columns 0..i only.

    Raises:
        ValueError: ``n`` is not a positive int.
    """
    if not is_int(n) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    return torch.ones(n, n, dtype=torch.bool).tril()


def target_mask(tgt, pad_id: int = PAD_ID):
    """Padding and causal masks together: (batch, len) -> (batch, 1, len, len).

    The mask lies on the device of ``tgt`` (the CPU, or a GPU).

    Raises:
        TypeError, ValueError: as for ``padding_mask``.
    """
    return padding_mask(tgt, pad_id) & causal_mask(tgt.size(1)).to(tgt.device)


def shift_right(tgt, bos_id: int = BOS_ID):
    """Decoder input from the target: [y1, ..., yn] -> [<s>, y1, ..., y(n-1)].

    Args:
        tgt: (batch, len) target ids, ending in ``</s>`` (and maybe padding).

    Returns:
        (batch, len) ids, the target delayed by one step behind ``bos_id``.

    Raises:
        TypeError, ValueError: as for ``padding_mask``.
    """
    _check_ids(tgt, "tgt", bos_id=bos_id)
    bos = torch.full_like(tgt[:, :1], bos_id)
    return torch.cat([bos, tgt[:, :-1]], dim=1)
