"""Checkpoint files, task-free: read a file of tensors safely, list the steps saved in a
folder, and average several checkpoints (paper section 6.1)."""

from __future__ import annotations

import pathlib
import re
from collections.abc import Mapping

import torch


def torch_load(path, expected, remedy):
    """``torch.load(path, weights_only=True, map_location="cpu")``; a file it cannot read raises a
    ValueError that names ``path``, what was ``expected`` there and the ``remedy``, and nothing of
    PyTorch's own message (which would advise ``weights_only=False``: never load an unknown file that
    way). Tensors saved on a GPU come back on the CPU (a run trained on a GPU resumes or ships
    anywhere); the caller moves them on (``load_state_dict`` copies into the model's device)."""
    try:
        return torch.load(path, weights_only=True, map_location="cpu")
    except OSError:
        raise  # an unreadable file (permissions, disk) says so itself, with its path
    except Exception:  # garbage bytes fail in many ways: UnpicklingError, EOFError, RuntimeError, ...
        kind = ("an empty file, which torch.load cannot read" if pathlib.Path(path).stat().st_size == 0 else
                "a file that torch.load cannot read as plain tensors (truncated, not written by torch.save, "
                "or holding other objects)")
        raise ValueError(f"{path} must be {expected}, got {kind}; {remedy}") from None


def checkpoint_steps(directory, prefix="tiny_step"):
    """The steps of the files ``{prefix}{step}.pt`` in ``directory``, sorted; other names
    (``tiny_stepX.pt``, ``tiny_step5_backup.pt``, ``tiny_step007.pt``) and folders are passed over."""
    pattern = re.compile(re.escape(prefix) + r"(0|[1-9][0-9]*)\.pt")
    return sorted(int(m[1]) for p in pathlib.Path(directory).glob(f"{prefix}*.pt")
                  if (m := pattern.fullmatch(p.name)) and p.is_file())


def _check_state_dicts(state_dicts):
    if isinstance(state_dicts, Mapping) or not isinstance(state_dicts, (list, tuple)):
        raise TypeError(f"state_dicts must be a list of state_dict()s, got {type(state_dicts).__name__}")
    if not state_dicts:
        raise ValueError("average_checkpoints needs at least one state_dict, got an empty list")
    for i, sd in enumerate(state_dicts):
        if not isinstance(sd, Mapping) or not all(isinstance(v, torch.Tensor) for v in sd.values()):
            raise TypeError(f"state_dict {i} must be a mapping of names to tensors (model.state_dict()), "
                            f"got {type(sd).__name__}")
    first = state_dicts[0]
    for i, sd in enumerate(state_dicts[1:], start=1):
        if sd.keys() != first.keys():
            raise ValueError(f"state_dict {i} has different keys from state_dict 0: {sorted(sd.keys() ^ first.keys())}")
        for key in first:
            if sd[key].shape != first[key].shape or sd[key].dtype != first[key].dtype:
                raise ValueError(f"{key} has shape {tuple(sd[key].shape)} and dtype {sd[key].dtype} in state_dict {i}, "
                                 f"{tuple(first[key].shape)} and {first[key].dtype} in state_dict 0")
    for i, sd in enumerate(state_dicts):
        for key, v in sd.items():
            if v.is_floating_point() and not torch.isfinite(v).all():
                raise ValueError(f"{key} of state_dict {i} holds NaN or inf: that checkpoint diverged")


def average_checkpoints(state_dicts):
    """Average several checkpoints parameter by parameter (section 6.1).

    The paper's base models average the last 5 checkpoints, written 10 minutes
    apart. Load the result with ``model.load_state_dict``.

    Args:
        state_dicts: a non-empty list of ``state_dict()``s with the same keys
            and shapes.

    Returns:
        A new state dict: each floating-point tensor is the mean of the inputs.

    Raises:
        TypeError: not a list of mappings of tensors (a model, one state_dict).
        ValueError: the list is empty; keys, shapes or dtypes differ; a
            floating-point entry holds NaN or inf.
    """
    _check_state_dicts(state_dicts)
    first = state_dicts[0]
    return {key: torch.stack([sd[key].double() for sd in state_dicts]).mean(0).to(first[key].dtype)
            if first[key].is_floating_point() else first[key].clone() for key in first}
