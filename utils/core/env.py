"""Reproducibility helpers shared by every chapter, and where the course keeps its files."""

import os
import pathlib
import random

import numpy as np
import torch

from .checks import is_int

#: The repository's root folder (the training commands' default work folders live there).
ROOT = pathlib.Path(__file__).resolve().parents[2]
#: The shipped results of training: weights, logs and measurements (``utils/checkpoints/``).
CHECKPOINTS = ROOT / "utils" / "checkpoints"

#: Thread count used everywhere in the course. One thread makes every reduction
#: run in the same order on any machine, so printed numbers are reproducible.
THREADS = 1


def set_seed(seed: int = 0, threads: int = THREADS) -> None:
    """Seed Python, NumPy and PyTorch, and fix PyTorch's CPU thread count.

    Args:
        seed: a non-negative integer (a Python int or a NumPy integer).
        threads: number of intra-op CPU threads for PyTorch (default 1).

    Raises:
        TypeError: if ``seed`` or ``threads`` is not an int (bools and floats are not).
        ValueError: if ``seed`` is outside 0..2**32 - 1 or ``threads`` is below 1.
    """
    if not is_int(seed):
        raise TypeError(f"seed must be an int, got {type(seed).__name__} {seed!r}")
    if not is_int(threads):
        raise TypeError(f"threads must be an int, got {type(threads).__name__} {threads!r}")
    seed, threads = int(seed), int(threads)  # Python's random.seed takes no NumPy integer
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an int in 0..2**32 - 1 (NumPy's range), got {seed}")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True, warn_only=True)
