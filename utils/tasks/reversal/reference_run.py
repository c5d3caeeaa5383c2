"""The reference run of chapter 10, shipped as files: a result of training.

``python -m utils.tasks.reversal`` trains ``Transformer(**TINY)`` for 3,000 steps exactly as
chapter 10 does, with one thread and fixed seeds, and writes

- the weights of steps 2,600 to 3,000 (``utils/checkpoints/tiny_step*.pt``), which
  chapters 11 and 13 load, and
- its log, ``utils/checkpoints/tiny_run.json``: the training loss of every step, the
  test loss every 100 steps, the losses of the two 200-step warmup runs of chapter 10,
  and the machine, versions and seconds it took.

Chapter 10 prints the reference numbers from these files, so they are the same on
every machine. The learner's own live run, made by the same code on their CPU, rounds
differently and drifts from the reference; the chapter prints it beside the reference
and checks only what holds on any machine (``tests/uncompared_outputs.yml``).
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import platform

import torch

from .task import CHECKPOINT_DIR

#: The shipped log of the reference run.
LOG = CHECKPOINT_DIR / "tiny_run.json"
KIND = "course reference run of chapter 10"


def machine() -> dict:
    """What made a run: CPU model, PyTorch's kernel level, the pins, versions and threads."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return dict(cpu=cpu, machine=platform.machine(), capability=torch.backends.cpu.get_cpu_capability(),
                ATEN_CPU_CAPABILITY=os.environ.get("ATEN_CPU_CAPABILITY"), MKL_CBWR=os.environ.get("MKL_CBWR"),
                python=platform.python_version(), torch=torch.__version__, threads=torch.get_num_threads())


def write(history: dict, warmup: dict, seconds: float, path=LOG) -> pathlib.Path:
    """Write the log of a run of ``tasks.reversal.task.train`` and of the warmup runs to ``path`` (JSON).

    Args:
        history: what ``train`` returns ("train_loss" tensor, "test_step", "test_loss").
        warmup: {name: (peak rate, (200,) loss tensor)} of chapter 10's warmup runs.
        seconds: wall-clock time of the 3,000-step run.
    """
    path = pathlib.Path(path)
    record = dict(kind=KIND, machine=machine(), seconds=round(seconds, 1),
                  train_loss=history["train_loss"].tolist(), test_step=list(history["test_step"]),
                  test_loss=list(history["test_loss"]),
                  warmup={name: dict(peak=peak, losses=losses.tolist()) for name, (peak, losses) in warmup.items()})
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


def load(path=LOG) -> dict:
    """The shipped log as a dict: "train_loss" a (steps,) float32 tensor, "test_step",
    "test_loss" lists, "warmup" {name: (peak, (200,) tensor)}, "machine", "seconds".

    Raises:
        FileNotFoundError: no log at ``path`` (the message says how to make it).
        ValueError: the file is not JSON, or not a log of this run (the message names the file).
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no reference run at {path}; make it with: PYTHONPATH=. python -m utils.tasks.reversal")
    remake = "remake it with: PYTHONPATH=. python -m utils.tasks.reversal (or restore it with git)"
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not a readable JSON log ({error}); expected the log of the {KIND}; "
                         f"{remake}") from None
    if not isinstance(record, dict) or record.get("kind") != KIND:
        raise ValueError(f"{path} is not a log of the {KIND} (its 'kind' field differs); {remake}")
    missing = sorted({"train_loss", "test_step", "test_loss", "warmup", "machine", "seconds"} - record.keys())
    if missing:
        raise ValueError(f"{path}: the log lacks the fields {missing}; {remake}")
    losses = record["train_loss"]
    if not isinstance(losses, list) or not losses or not all(_is_finite(x) for x in losses):
        raise ValueError(f"{path}: train_loss must be a non-empty list of finite numbers; {remake}")
    warmup = record["warmup"]
    if not isinstance(warmup, dict) or not all(
            isinstance(w, dict) and _is_finite(w.get("peak")) and isinstance(w.get("losses"), list)
            and all(_is_finite(x) for x in w["losses"]) for w in warmup.values()):
        raise ValueError(f"{path}: warmup must map each run's name to {{'peak': rate, 'losses': [numbers]}}; {remake}")
    record["train_loss"] = torch.tensor(losses)
    record["warmup"] = {name: (w["peak"], torch.tensor(w["losses"])) for name, w in warmup.items()}
    return record


def _is_finite(x) -> bool:
    return isinstance(x, float) and math.isfinite(x)
