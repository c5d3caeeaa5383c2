"""Input checks shared by the model code.

Every check raises an error whose message says what was expected and what
arrived, so a learner who passes the wrong tensor learns why at once.
"""

from __future__ import annotations

import torch


def check_tensor(x, name: str, ndim_min: int = 1, floating: bool = True) -> None:
    """Raise if ``x`` is not a tensor of at least ``ndim_min`` dimensions.

    Raises:
        TypeError: ``x`` is not a ``torch.Tensor``, or not floating point when
            ``floating`` is True.
        ValueError: ``x`` has fewer than ``ndim_min`` dimensions.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if floating and not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if x.dim() < ndim_min:
        raise ValueError(
            f"{name} must have at least {ndim_min} dimensions, got shape {tuple(x.shape)}"
        )


def check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    """Check query, key and value shapes for scaled dot-product attention.

    Expected shapes: ``q`` (..., q_len, d_k), ``k`` (..., k_len, d_k),
    ``v`` (..., k_len, d_v), with leading dimensions that broadcast.

    Raises:
        TypeError: an input is not a floating-point tensor.
        ValueError: fewer than 2 dimensions, ``d_k`` of q and k differ, or k
            and v have a different number of positions.
    """
    for name, x in (("q", q), ("k", k), ("v", v)):
        check_tensor(x, name, ndim_min=2)
    if q.size(-1) != k.size(-1):
        raise ValueError(
            "q and k must have the same last dimension d_k, got q "
            f"{tuple(q.shape)} (d_k={q.size(-1)}) and k {tuple(k.shape)} (d_k={k.size(-1)})"
        )
    if k.size(-2) != v.size(-2):
        raise ValueError(
            "k and v must have the same number of positions (dimension -2), got k "
            f"{tuple(k.shape)} and v {tuple(v.shape)}"
        )


def check_mask(mask, scores_shape) -> None:
    """Check that ``mask`` is a boolean tensor that broadcasts to the scores.

    The course's mask convention: ``True`` means "this query may attend to this
    key", ``False`` means "blocked" (as in
    ``torch.nn.functional.scaled_dot_product_attention``).

    Raises:
        TypeError: ``mask`` is not a tensor, or not of dtype ``torch.bool``.
        ValueError: ``mask`` does not broadcast to ``scores_shape``.
    """
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a torch.Tensor of dtype torch.bool, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"mask must have dtype torch.bool (True = may attend, False = blocked), got {mask.dtype}. "
            "For a 0/1 float mask use mask.bool(); for an additive 0/-inf mask use (mask == 0)."
        )
    try:
        shape = torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError:
        shape = None
    if shape != torch.Size(scores_shape):
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the attention scores "
            f"of shape {tuple(scores_shape)} (..., q_len, k_len)"
        )
