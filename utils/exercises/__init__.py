"""Answer checkers for the exercises at the end of each chapter.

A learner writes an answer in an exercise cell and calls ``check("2.1", answer)``.
The checker prints what is right or exactly what is wrong (type, shape, which
position holds which wrong value) and returns True or False. Leaving the
placeholder ``...`` in place prints what kind of answer is expected.

Expected answers are computed by the course's own code (``utils``) when the
checker runs; none is typed in. Each chapter registers its exercises in a
module ``chNN.py`` of this package, found automatically.
"""

from __future__ import annotations

import importlib
import math
import numbers
import pkgutil
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["Verdict", "Exercise", "register", "check", "compare", "EXERCISES"]


@dataclass
class Exercise:
    """One checkable exercise: ``expected()`` computes the right answer."""

    id: str
    prompt: str
    expected: Callable[[], Any]
    atol: float = 1e-4
    hint: str = ""


EXERCISES: dict[str, Exercise] = {}


def register(id: str, prompt: str, atol: float = 1e-4, hint: str = ""):
    """Decorator: register the function that computes exercise ``id``'s answer."""

    def wrap(fn):
        if id in EXERCISES:
            raise ValueError(f"exercise {id!r} is registered twice")
        EXERCISES[id] = Exercise(id, prompt, fn, atol, hint)
        return fn

    return wrap


def _a(word: str) -> str:
    """'an int', 'a float': the indefinite article for ``word``."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def _describe(x, value: bool = True) -> str:
    """Say what ``x`` is: type and shape, and with ``value`` the value of a scalar."""
    if isinstance(x, torch.Tensor):
        if x.is_floating_point():  # any float dtype is accepted, so name none
            return f"a floating-point torch.Tensor of shape {tuple(x.shape)}"
        return f"a torch.Tensor of shape {tuple(x.shape)} and dtype {x.dtype}"
    if isinstance(x, np.ndarray):
        return f"a numpy array of shape {x.shape}"
    if isinstance(x, (list, tuple)):
        return f"{_a(type(x).__name__)} of length {len(x)}"
    return _a(type(x).__name__) + (f" ({x!r})" if value else "")


def compare(answer, expected, atol: float = 1e-4, path: str = "answer") -> str | None:
    """Return None if ``answer`` matches ``expected``, else a sentence saying what differs.

    Numbers compare within ``atol``; tensors and arrays compare shape, then
    values (reporting the first wrong position); strings, bools and ints
    compare exactly; lists, tuples and dicts compare item by item.
    """
    if isinstance(expected, (bool, str)):
        if type(answer) is not type(expected):
            return f"{path} should be {_a(type(expected).__name__)}, got {_describe(answer)}"
        if answer != expected:
            return f"{path} is {answer!r}, which is not right"
        return None
    if isinstance(expected, (torch.Tensor, np.ndarray)):
        if not isinstance(answer, (torch.Tensor, np.ndarray)):
            return f"{path} should be {_describe(expected)}, got {_describe(answer)}"
        def floating(t):
            return t.is_floating_point() if isinstance(t, torch.Tensor) else np.issubdtype(t.dtype, np.floating)
        if floating(expected) and not floating(answer):
            return f"{path} should be {_describe(expected)}, got integers ({_describe(answer)}); use floats"
        a = torch.as_tensor(np.asarray(answer.detach().cpu() if isinstance(answer, torch.Tensor) else answer), dtype=torch.float64)
        e = torch.as_tensor(np.asarray(expected.detach().cpu() if isinstance(expected, torch.Tensor) else expected), dtype=torch.float64)
        if a.shape != e.shape:
            return f"{path} has shape {tuple(a.shape)}, expected shape {tuple(e.shape)}"
        if torch.isnan(a).any():
            where = tuple(int(i) for i in torch.nonzero(torch.isnan(a))[0])
            return f"{path} contains NaN, first at position {where}"
        bad = (a - e).abs() > atol
        if bad.any():
            where = tuple(int(i) for i in torch.nonzero(bad)[0])
            return (f"{path} has {int(bad.sum())} wrong value(s); first at position {where}: "
                    f"got {a[where].item():.6g}, expected {e[where].item():.6g}")
        return None
    if isinstance(expected, numbers.Integral):
        if isinstance(answer, bool) or not isinstance(answer, numbers.Integral):
            if isinstance(answer, float) and answer == int(answer):
                answer = int(answer)
            else:
                return f"{path} should be an int, got {_describe(answer)}"
        if answer != expected:
            return f"{path} is {answer}, which is not right (off by {answer - expected:+d})"
        return None
    if isinstance(expected, numbers.Real):
        if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
            if isinstance(answer, torch.Tensor) and answer.numel() == 1:
                answer = answer.item()
            else:
                return f"{path} should be a number, got {_describe(answer)}"
        if math.isnan(answer):
            return f"{path} is NaN, expected a number"
        if abs(answer - expected) > atol:
            return f"{path} is {answer:.6g}, which is not within {atol:g} of the right value"
        return None
    if isinstance(expected, dict):
        if not isinstance(answer, dict):
            return f"{path} should be {_a('dict')}, got {_describe(answer)}"
        missing = [k for k in expected if k not in answer]
        if missing:
            return f"{path} is missing the key(s) {missing}"
        extra = [k for k in answer if k not in expected]
        if extra:
            return f"{path} has unexpected key(s) {extra}"
        for k in expected:
            msg = compare(answer[k], expected[k], atol, f"{path}[{k!r}]")
            if msg:
                return msg
        return None
    if isinstance(expected, (list, tuple)):
        if not isinstance(answer, (list, tuple)):
            return f"{path} should be {_a(type(expected).__name__)}, got {_describe(answer)}"
        if len(answer) != len(expected):
            return f"{path} has {len(answer)} items, expected {len(expected)}"
        for i, (a, e) in enumerate(zip(answer, expected)):
            msg = compare(a, e, atol, f"{path}[{i}]")
            if msg:
                return msg
        return None
    raise TypeError(f"cannot compare expected answers of type {type(expected).__name__}")


def _load_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("ch"):
            importlib.import_module(f"{__name__}.{info.name}")


class Verdict:
    """The result of ``check``: true when the answer is right.

    It displays nothing in a notebook (the printed message is the feedback), so an
    exercise cell ending in ``check(...)`` shows no stray ``True``/``False``.
    """

    __slots__ = ("ok",)

    def __init__(self, ok: bool):
        self.ok = bool(ok)

    def __bool__(self):
        return self.ok

    def __repr__(self):
        return f"Verdict(ok={self.ok})"

    def _ipython_display_(self):
        pass


def _say(text: str) -> None:
    """Print feedback wrapped to 76 columns, so notebook output boxes do not cut it."""
    print(textwrap.fill(text, width=76, subsequent_indent="  ", break_on_hyphens=False))


def check(id: str, answer) -> Verdict:
    """Check the answer to exercise ``id`` (for example ``"2.1"``); print and return the verdict.

    Returns a ``Verdict``, true when the answer is right (``assert check(...)``
    works in solution notebooks).

    Raises:
        KeyError: no exercise has that id (the message lists the known ids).
    """
    _load_all()
    if id not in EXERCISES:
        raise KeyError(f"no exercise {id!r}; known exercises: {sorted(EXERCISES)}")
    ex = EXERCISES[id]
    with torch.random.fork_rng(devices=[]):  # leave the learner's random state alone
        expected = ex.expected()
    if answer is ...:
        _say(f"Exercise {id}: not answered yet. {ex.prompt} "
             f"Expected {_describe(expected, value=False)}.")
        return Verdict(False)
    msg = compare(answer, expected, ex.atol)
    if msg is None:
        _say(f"Exercise {id}: correct.")
        return Verdict(True)
    _say(f"Exercise {id}: not yet. {msg[0].upper() + msg[1:]}." + (f" Hint: {ex.hint}" if ex.hint else ""))
    return Verdict(False)
