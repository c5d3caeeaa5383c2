"""Input checks shared by the model code.

Every check raises an error whose message says what was expected and what
arrived, so a learner who passes the wrong tensor learns why at once.

Masks (``check_mask``) follow broadcasting, with one rule more. A mask with fewer
dimensions than the scores is read from the right, as broadcasting reads it: a 2-D
mask is ``(q_len, k_len)``. When the scores are batched, ``(batch, ..., q_len,
k_len)`` with batch > 1, a mask of 2 or more dimensions but fewer than the scores
whose first dimension equals the batch size is refused as ambiguous: a
``(batch, k_len)`` padding mask with batch == q_len would broadcast as
``(q_len, k_len)`` and silently let every sequence attend to padding. The shapes
accepted for scores ``(batch, h, q_len, k_len)`` are ``(batch, 1, 1, k_len)``
(``padding_mask``), ``(batch, 1, q_len, k_len)`` (``target_mask``), anything else
of four dimensions that broadcasts, and ``(q_len, k_len)`` (``causal_mask``, shared
by the batch) when q_len differs from the batch size; ``mask[None, None]`` says
"shared by the batch" for any batch size.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np
import torch
from torch import nn

_INT_DTYPES = (torch.int64, torch.int32)


def is_int(x) -> bool:
    """True for an integer: a Python int or a NumPy integer scalar such as ``np.int64(5)``.

    Bools are not ints here (Python counts ``True`` as 1), nor are floats, even ``5.0``.
    """
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


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
    ``v`` (..., k_len, d_v), with leading dimensions that broadcast and one
    floating-point dtype. NaN passes on purpose: chapter 4 shows how it spreads.

    Raises:
        TypeError: an input is not a floating-point tensor, or the dtypes differ.
        ValueError: fewer than 2 dimensions, ``d_k`` of q and k differ, k
            and v have a different number of positions, or the leading (batch,
            head) dimensions do not broadcast.
    """
    for name, x in (("q", q), ("k", k), ("v", v)):
        check_tensor(x, name, ndim_min=2)
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must have one dtype, got {q.dtype}, {k.dtype} and {v.dtype}")
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
    try:
        torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "q, k and v must have leading (batch, head) dimensions that broadcast, got q "
            f"{tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)}"
        ) from None


def _accepted_masks(scores_shape) -> str:
    """The mask shapes accepted for ``scores_shape``, in words, for error messages."""
    *lead, q_len, k_len = scores_shape
    if len(lead) == 2:
        batch, h = lead
        return (f"accepted: (batch={batch}, 1, 1, k_len={k_len}) from padding_mask(ids), "
                f"(batch={batch}, 1, q_len={q_len}, k_len={k_len}) from target_mask(ids), "
                f"any 4-D shape that broadcasts to {tuple(scores_shape)}, "
                f"or (q_len={q_len}, k_len={k_len}) such as causal_mask({q_len}) for a mask shared by the batch"
                + (f" (write it mask[None, None] when q_len equals batch={batch})" if q_len == batch else ""))
    if lead and lead[0] > 1:
        return (f"accepted: a mask of {len(scores_shape)} dimensions that broadcasts to {tuple(scores_shape)}, "
                f"or (q_len={q_len}, k_len={k_len}) shared by the batch when q_len differs from batch={lead[0]}")
    return f"accepted: a mask that broadcasts to {tuple(scores_shape)}, such as (q_len={q_len}, k_len={k_len})"


def check_mask(mask, scores_shape) -> None:
    """Check that ``mask`` is a boolean tensor that broadcasts to the scores, unambiguously.

    The course's mask convention: ``True`` means "this query may attend to this
    key", ``False`` means "blocked" (as in
    ``torch.nn.functional.scaled_dot_product_attention``).

    Shapes: the mask broadcasts to ``scores_shape`` (..., q_len, k_len). For
    batched scores (at least 3 dimensions, batch = ``scores_shape[0]`` > 1), a
    mask of 2 or more dimensions but fewer than the scores may not start with
    the batch size: a ``(batch, k_len)`` padding mask would broadcast as
    ``(q_len, k_len)`` when batch == q_len. For scores ``(batch, h, q_len,
    k_len)`` that leaves ``(batch, 1, 1, k_len)`` (``padding_mask``), ``(batch, 1,
    q_len, k_len)`` (``target_mask``), other 4-D masks that broadcast, and
    ``(q_len, k_len)`` (``causal_mask``, shared by the batch) when q_len !=
    batch; ``mask[None, None]`` is always unambiguous.

    Raises:
        TypeError: ``mask`` is not a tensor, or not of dtype ``torch.bool``.
        ValueError: ``mask`` does not broadcast to ``scores_shape``, or its
            reading is ambiguous (the message lists the shapes accepted).
    """
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a torch.Tensor of dtype torch.bool, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"mask must have dtype torch.bool (True = may attend, False = blocked), got {mask.dtype}. "
            "For a 0/1 float mask use mask.bool(); for an additive 0/-inf mask use (mask == 0)."
        )
    scores_shape = torch.Size(scores_shape)
    try:
        shape = torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError:
        shape = None
    if shape != scores_shape:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the attention scores "
            f"of shape {tuple(scores_shape)} (..., q_len, k_len); {_accepted_masks(scores_shape)}"
        )
    batch = scores_shape[0] if len(scores_shape) >= 3 else 1
    if batch > 1 and 2 <= mask.dim() < len(scores_shape) and mask.size(0) == batch:
        middle = {3: [], 4: ["h"]}.get(len(scores_shape), ["..."])
        names = ["batch", *middle, "q_len", "k_len"]
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} is ambiguous for the attention scores of shape "
            f"{tuple(scores_shape)} ({', '.join(names)}): its first dimension equals the batch size "
            f"{batch}, but broadcasting reads it as ({', '.join(names[-mask.dim():])}), so a per-sequence "
            f"mask such as (batch, k_len) would let sequences attend to padding; {_accepted_masks(scores_shape)}"
        )


def check_positive_int(**values) -> None:
    """Raise unless every keyword's value is an int >= 1 (Python's or NumPy's; bools are refused).

    Raises:
        TypeError: a value is not an int (or is a bool).
        ValueError: a value is below 1.
    """
    for name, value in values.items():
        if not is_int(value):
            raise TypeError(f"{name} must be a positive int, got {type(value).__name__} {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def check_counts(**values):
    """Raise a ValueError unless every keyword's value is an int >= 1 (a size or a count of steps).

    Unlike ``check_positive_int``, a value of the wrong type is a ValueError
    too: these are sizes of a batch or a run, read from a recipe.
    """
    for name, value in values.items():
        if not is_int(value) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def check_probability(p, name: str = "p_drop") -> None:
    """Raise unless ``p`` is a real number in [0, 1) (a dropout rate).

    Raises:
        TypeError: ``p`` is not a number.
        ValueError: ``p`` is NaN or outside [0, 1).
    """
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"{name} must be a number in [0, 1), got {type(p).__name__} {p!r}")
    if not (0.0 <= p < 1.0) or math.isnan(p):
        raise ValueError(f"{name} must lie in [0, 1), got {p!r}")


def check_model_config(vocab_size, d_model, h, d_ff, N, p_drop, max_len, pad_id) -> None:
    """Check the arguments of ``Transformer``: sizes positive, h divides d_model,
    dropout in [0, 1), ``pad_id`` a token of the vocabulary.

    Raises:
        TypeError: a size is not an int, or ``p_drop`` not a number.
        ValueError: a size is below 1, h does not divide d_model, d_model is odd,
            p_drop is outside [0, 1), or pad_id is outside 0..vocab_size-1.
    """
    check_positive_int(vocab_size=vocab_size, d_model=d_model, h=h, d_ff=d_ff, N=N, max_len=max_len)
    if d_model % h != 0:
        raise ValueError(f"h={h} must divide d_model={d_model}")
    check_probability(p_drop)
    if not is_int(pad_id) or not 0 <= pad_id < vocab_size:
        raise ValueError(f"pad_id must be a token id in 0..{vocab_size - 1}, got {pad_id!r}")


def check_ids(ids, name: str = "ids", min_len: int = 1) -> None:
    """Raise unless ``ids`` is a (batch, len) integer tensor with len >= ``min_len``.

    Raises:
        TypeError: ``ids`` is not a tensor, or not of an integer dtype.
        ValueError: ``ids`` is not 2-D, or has fewer than ``min_len`` positions.
    """
    if not isinstance(ids, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of token ids, got {type(ids).__name__}")
    if ids.dtype not in _INT_DTYPES:
        raise TypeError(f"{name} must hold integer token ids (torch.long), got dtype {ids.dtype}")
    if ids.dim() != 2:
        raise ValueError(f"{name} must have shape (batch, len), got {tuple(ids.shape)}")
    if ids.size(1) < min_len:
        raise ValueError(
            f"{name} must have shape (batch, len) with len >= {min_len}, got {tuple(ids.shape)}: "
            "an empty sequence has nothing to attend to"
        )


def check_memory(memory, tgt, d_model: int) -> None:
    """Check the decoder's inputs: ``tgt`` (batch, tgt_len) ids and the encoder
    output ``memory`` (batch, src_len, d_model), with the same batch size.

    Raises:
        TypeError: ``tgt`` is not an integer tensor, or ``memory`` not a float tensor.
        ValueError: wrong shapes, an empty sequence, or different batch sizes.
    """
    check_ids(tgt, "tgt")
    check_tensor(memory, "memory", ndim_min=3)
    if memory.dim() != 3 or memory.size(-1) != d_model or memory.size(1) == 0:
        raise ValueError(
            f"memory must have shape (batch, src_len >= 1, d_model={d_model}), got {tuple(memory.shape)}"
        )
    if memory.size(0) != tgt.size(0):
        raise ValueError(
            f"tgt and memory must have the same batch size, got tgt {tuple(tgt.shape)} "
            f"and memory {tuple(memory.shape)}"
        )


def check_width(x, d_model: int, name: str = "x") -> None:
    """Raise unless ``x`` is a floating-point tensor (..., d_model).

    Raises:
        TypeError: ``x`` is not a floating-point tensor.
        ValueError: its last dimension is not ``d_model``.
    """
    check_tensor(x, name)
    if x.size(-1) != d_model:
        raise ValueError(f"{name} must have shape (..., d_model={d_model}), got {tuple(x.shape)}")


def check_token_id(**values) -> None:
    """Raise unless every keyword's value is a token id: an int >= 0 (Python's or NumPy's; bools are refused).

    Raises:
        TypeError: a value is not an int (or is a bool).
        ValueError: a value is negative.
    """
    for name, value in values.items():
        if not is_int(value):
            raise TypeError(f"{name} must be a token id (an int >= 0), got {type(value).__name__} {value!r}")
        if value < 0:
            raise ValueError(f"{name} must be a token id (an int >= 0), got {value!r}")


def check_id_sequence(ids, name: str = "ids") -> None:
    """Raise unless ``ids`` is one sequence of token ids: a list (or other iterable), a 1-D
    tensor or a 1-D NumPy array.

    Raises:
        TypeError: ``ids`` is a single number, a string, or not iterable.
        ValueError: ``ids`` is a tensor or array that is not 1-D.
    """
    if isinstance(ids, (torch.Tensor, np.ndarray)):
        if ids.ndim != 1:
            kind = "tensor" if isinstance(ids, torch.Tensor) else "NumPy array"
            raise ValueError(f"{name} must be a 1-D tensor or a list of token ids, got a {kind} of shape {tuple(ids.shape)}")
    elif isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise TypeError(f"{name} must be a list or 1-D tensor of token ids such as [5, 3, 4], "
                        f"got {type(ids).__name__} {ids!r}")


def id_list(ids, name: str = "ids") -> list:
    """One sequence of token ids as a list, its NumPy integers (``np.int64(5)``) made Python ints.

    Takes a list or tuple (or other iterable), a 1-D tensor or a 1-D NumPy array. The
    elements are not checked further: the caller, who knows the vocabulary, refuses
    what is not a token id (a bool, a float, an id out of range).

    Raises:
        TypeError: ``ids`` is a single number, a string, or not iterable.
        ValueError: ``ids`` is a tensor or array that is not 1-D.
    """
    check_id_sequence(ids, name)
    items = ids.tolist() if isinstance(ids, (torch.Tensor, np.ndarray)) else list(ids)
    return [int(i) if is_int(i) else i for i in items]


def check_module(module, name: str = "module") -> None:
    """Raise unless ``module`` is a ``torch.nn.Module``.

    Raises:
        TypeError: it is not.
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"{name} must be a torch.nn.Module (a model or a layer), got {type(module).__name__}")
