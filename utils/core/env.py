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


#: The devices a training or decoding command accepts (``--device``); the shipped runs used "cpu".
DEVICE_KINDS = ("cpu", "cuda")


def resolve_device(device="cpu") -> torch.device:
    """The ``torch.device`` a training or decoding command runs on, checked.

    Args:
        device: "cpu" (the default, the device of every shipped run), "cuda" or "cuda:N"
            (a CUDA GPU, when PyTorch sees one), as a str or a ``torch.device``.

    Returns:
        The ``torch.device``; "cuda" in a process that ``torchrun`` started among
        several is "cuda:LOCAL_RANK", its own GPU. Choosing "cuda" also sets ``CUBLAS_WORKSPACE_CONFIG=:4096:8``
        unless it is set, so that cuBLAS runs deterministically under ``set_seed``'s
        ``torch.use_deterministic_algorithms``. A run's numbers on a GPU are not its
        numbers on the CPU: another order of additions, another random generator for dropout.

    Raises:
        TypeError: ``device`` is neither a str nor a ``torch.device``.
        ValueError: ``device`` names no device, or a device other than the CPU or a CUDA GPU.
        RuntimeError: a CUDA GPU is asked for and PyTorch sees none (a CPU-only build of
            PyTorch, or no GPU visible), or ``cuda:N`` names a GPU beyond those it sees.
    """
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"device must be a str such as 'cpu' or 'cuda' (or a torch.device), "
                        f"got {type(device).__name__} {device!r}")
    try:
        chosen = torch.device(device)
    except RuntimeError:
        chosen = None
    if chosen is None or chosen.type not in DEVICE_KINDS:
        raise ValueError(f"device must be 'cpu' or 'cuda' (or 'cuda:N', a GPU's index), got {str(device)!r}")
    if chosen.type == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        why = (f"this PyTorch ({torch.__version__}) is a CPU-only build" if torch.version.cuda is None
               else f"PyTorch {torch.__version__} (built for CUDA {torch.version.cuda}) sees no GPU")
        raise RuntimeError(f"device {str(device)!r} asks for a CUDA GPU, but {why}: use device 'cpu' (--device cpu, "
                           f"the default), or run where a GPU is (in Colab: Runtime > Change runtime type > GPU)")
    if chosen.index is not None and chosen.index >= torch.cuda.device_count():
        raise RuntimeError(f"device {str(device)!r} names GPU {chosen.index}, but PyTorch sees "
                           f"{torch.cuda.device_count()} (cuda:0 to cuda:{torch.cuda.device_count() - 1})")
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    if chosen.index is None and int(os.environ.get("WORLD_SIZE", "1")) > 1 and "LOCAL_RANK" in os.environ:
        chosen = torch.device("cuda", int(os.environ["LOCAL_RANK"]))  # torchrun: process r uses GPU r
        if chosen.index >= torch.cuda.device_count():
            raise RuntimeError(f"torchrun started process {chosen.index} of this machine with --device cuda, but PyTorch "
                               f"sees {torch.cuda.device_count()} GPU(s): start at most one process per GPU "
                               f"(--nproc_per_node={torch.cuda.device_count()})")
    return chosen


def add_device_option(parser) -> None:
    """Add ``--device`` (default "cpu") to an ``argparse`` parser of a training or decoding command.

    The value is checked by ``resolve_device`` as the arguments are parsed, so a GPU that is
    not there stops the command at once with the reason (``error: argument --device: ...``).
    The parsed value is the str given ("cpu", "cuda" or "cuda:N").
    """
    import argparse

    def device_arg(text: str) -> str:
        try:
            resolve_device(text)
        except (ValueError, RuntimeError) as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        return text

    parser.add_argument("--device", type=device_arg, default="cpu",
                        help="where to run: cpu (the default; every shipped run's device) or cuda (a CUDA GPU, "
                             "when there is one); the device never enters a run's config or log, and a run "
                             "resumed on another device is the same run, but its numbers are not bit for bit "
                             "those of the CPU")


def add_cache_option(parser) -> None:
    """Add ``--no-cache`` to an ``argparse`` parser of a decoding command: ``args.cache`` is None
    (decode with a KV cache when the model is a Transformer, ``utils.model.kv_cache``) or, given
    ``--no-cache``, False (re-read the whole prefix at every step; the same tokens, more slowly)."""
    parser.add_argument("--no-cache", dest="cache", action="store_const", const=False, default=None,
                        help="decode without the KV cache: every step re-reads the whole prefix "
                             "(the same tokens, more slowly)")
