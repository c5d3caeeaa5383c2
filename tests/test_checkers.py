"""Every exercise's checker teaches without telling (utils/exercises/__init__.py).

For every registered exercise: the answer and the answer rounded to the stated
precision are accepted; zeros, the answer plus a small error, and each registered
mistake are rejected, and the feedback never contains the expected value in any form
the book prints numbers; each mistake gets its own message; every numeric exercise
states its precision and registers at least one likely mistake.
"""

from __future__ import annotations

import numbers

import numpy as np
import pytest
import torch

from utils.exercises import EXERCISES, _load_all, check

_load_all()
IDS = sorted(EXERCISES, key=lambda i: tuple(int(x) for x in i.split(".")))


def _numbers(x):
    """Every number in an answer (floats and ints), flattened."""
    if isinstance(x, (bool, str)):
        return []
    if isinstance(x, numbers.Real):
        return [x]
    if isinstance(x, (torch.Tensor, np.ndarray)):
        return torch.as_tensor(np.asarray(x.detach() if isinstance(x, torch.Tensor) else x)).flatten().tolist()
    if isinstance(x, dict):
        return [n for v in x.values() for n in _numbers(v)]
    return [n for v in x for n in _numbers(v)]


def forms(value) -> set[str]:
    """The ways the book or a checker could print ``value``, kept when distinctive (3+ digits)."""
    out = set()
    if isinstance(value, numbers.Integral):
        out |= {str(value), f"{value:,}"}
    else:
        v = float(value)
        out |= {f"{v:.{d}f}" for d in range(2, 7)} | {f"{v:.{s}g}" for s in range(3, 7)}
        if v.is_integer():
            out |= {str(int(v)), f"{int(v):,}"}
    return {f for f in out if sum(c.isdigit() for c in f.lstrip("-0.")) >= 3}


def _map(x, fn):
    """Apply ``fn`` to every number of the answer, keeping its structure and types."""
    if isinstance(x, torch.Tensor):
        return fn(x.clone())
    if isinstance(x, np.ndarray):
        return fn(x.copy())
    if isinstance(x, (bool, str)):
        return x
    if isinstance(x, numbers.Real):
        return type(x)(fn(x)) if isinstance(x, numbers.Integral) else fn(x)
    if isinstance(x, dict):
        return {k: _map(v, fn) for k, v in x.items()}
    return type(x)(_map(v, fn) for v in x)


def _zeros(x):
    return _map(x, lambda v: v * 0)


def _nudged(ex, x):
    """The answer with a small error beyond the tolerance (ints off by one)."""
    step = max(ex.atol * 5, 1e-3)
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return x + 1
    return _map(x, lambda v: v + 1 if isinstance(v, numbers.Integral) and not isinstance(v, (bool, torch.Tensor))
                else v + step)


def _feedback(capsys, id, answer) -> tuple[bool, str]:
    ok = bool(check(id, answer))
    return ok, " ".join(capsys.readouterr().out.split())


def _assert_silent_about(expected, text, what):
    leaked = [f for n in _numbers(expected) for f in forms(n) if f in text]
    assert not leaked, f"{what}: the feedback reveals the answer ({leaked[:3]}): {text}"


@pytest.mark.parametrize("id", IDS)
def test_the_answer_and_its_rounded_form_are_accepted(id, capsys):
    ex = EXERCISES[id]
    expected = ex.expected()
    assert _feedback(capsys, id, expected)[0]
    if ex.precision.startswith("to "):
        decimals = int(ex.precision.split()[1])
        rounded = _map(expected, lambda v: round(v, decimals) if not isinstance(v, torch.Tensor) else v.round(decimals=decimals))
        ok, text = _feedback(capsys, id, rounded)
        assert ok, f"{id}: the answer rounded {ex.precision} is refused: {text}"


@pytest.mark.parametrize("id", IDS)
def test_numeric_exercises_state_their_precision_and_register_a_mistake(id):
    ex = EXERCISES[id]
    floats = [n for n in _numbers(ex.expected()) if not isinstance(n, numbers.Integral)]
    if floats:
        assert ex.precision, f"{id}: a float answer must state its precision (register(..., decimals=...))"
        assert ex.precision in ex.prompt or "decimal" in ex.prompt or "within" in ex.prompt, (
            f"{id}: the prompt must say how precise the answer must be ({ex.precision})")
    assert ex.mistakes, f"{id}: register at least one likely mistake (utils.exercises.mistake)"


@pytest.mark.parametrize("id", IDS)
def test_wrong_answers_never_reveal_the_answer(id, capsys):
    ex = EXERCISES[id]
    expected = ex.expected()
    if not _numbers(expected):
        pytest.skip(f"{id}: the answer has no numbers (a word or a choice); its mistakes are tested below")
    for what, answer in (("zeros", _zeros(expected)), ("a small error", _nudged(ex, expected))):
        if what == "zeros" and not [n for n in _numbers(expected) if n]:
            continue  # an answer that is zero itself
        ok, text = _feedback(capsys, id, answer)
        assert not ok, f"{id}: {what} accepted"
        _assert_silent_about(expected, text, f"{id}, {what}")


@pytest.mark.parametrize("id", IDS)
def test_each_registered_mistake_is_rejected_with_its_own_message(id, capsys):
    ex = EXERCISES[id]
    expected = ex.expected()
    messages = [m.message for m in ex.mistakes]
    assert len(set(messages)) == len(messages), f"{id}: two mistakes share a message"
    for m in ex.mistakes:
        wrong = m.answer()
        ok, text = _feedback(capsys, id, wrong)
        assert not ok, f"{id}: the mistake '{m.message}' is accepted: the tolerance is too loose or the mistake is not one"
        message = " ".join(m.message.split())
        assert message in text or message[0].upper() + message[1:] in text, (
            f"{id}: the mistake '{m.message}' gets another message: {text}")
        _assert_silent_about(expected, text, f"{id}, mistake '{m.message}'")
        _assert_silent_about(expected, m.message, f"{id}, the message of a mistake")
