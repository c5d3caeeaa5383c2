"""Answer checkers for the exercises at the end of each chapter.

A learner writes an answer in an exercise cell and calls ``check("2.1", answer)``.
The checker prints whether it is right and, when it is not, what is wrong **in kind**,
without ever telling the right answer: the type, the shape or the dtype is not the one
asked for; the answer is NaN or zero everywhere; its sign is flipped; it is the right
answer times or divided by 10, 100 or 1,000 (a share given as a percentage, or back),
times another constant factor, or transposed; or it is the answer that a known mistake
gives (each exercise registers its likely mistakes, computed by the course's code, with
a message naming the mistake, printed only for an answer equal to that mistake's). An
answer may come in the forms the chapters' code gives it: a tensor, a NumPy array, a
list or a tuple of the numbers asked for. Otherwise it says the answer is not within the
exercise's stated precision, and gives the hint. The feedback never states the expected
value, the difference from it, or which elements of a tensor are right, so a few tries
cannot recover the answer; for an answer made of several separate quantities (a tuple
or a dict) it says which of them is wrong. Leaving the placeholder ``...`` in place
prints what kind of answer is expected and how precise it must be.

**Feedback in French.** ``check("2.1", answer, lang="fr")``, or the environment variable
``COURSE_LANG=fr`` (``%env COURSE_LANG=fr`` in a notebook), prints the feedback, the
exercise's statement, its hint and its mistakes' messages in French, from the catalogue
``locales/fr/LC_MESSAGES/checkers.po`` that the French edition's translators keep
(``bash .ci/translations``; a message missing there is printed in English).

Expected answers and mistakes are computed by the course's own code (``utils``) when the
checker runs; none is typed in. Each chapter registers its exercises in a module
``chNN.py`` of this package, found automatically. How to add an exercise: see the
instructors' page of the book (``chapters/instructors.md``).

Each exercise also registers the minutes a learner needs and a marking note (what a full
answer shows, what earns partial credit); ``python -m utils.exercises marking --write``
puts them into the instructors' page as a table (``marking_table``).
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import itertools
import math
import numbers
import os
import pathlib
import pkgutil
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

__all__ = ["Verdict", "Exercise", "Mistake", "register", "mistake", "check", "diagnose", "EXERCISES", "LANGUAGES",
           "translate_output", "FEEDBACK_LINE",
           "marking_table", "write_marking_table"]

#: Languages of the feedback: English, and French from the catalogue below.
LANGUAGES = ("en", "fr")
CATALOGUE = pathlib.Path(__file__).resolve().parents[2] / "locales" / "{lang}" / "LC_MESSAGES" / "checkers.po"
#: Context of the catalogue's messages that are not an exercise's own.
GENERIC = "checker"
_LANG: contextvars.ContextVar[str] = contextvars.ContextVar("course_checker_language", default="en")
_CATALOGUES: dict[str, dict[tuple[str, str], str]] = {}


def _po_string(lines: list[str]) -> str:
    """The text of a .po string split over quoted lines (``"a\\n" "b"``)."""
    out = []
    for line in lines:
        body = line.strip()[1:-1]
        out.append(re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body))
    return "".join(out)


def read_catalogue(path: pathlib.Path) -> dict[tuple[str, str], str]:
    """{(context, English): translation} of a gettext ``.po`` file, without its untranslated
    and fuzzy messages (a few lines of parsing, so that the checkers need no extra package)."""
    table: dict[tuple[str, str], str] = {}
    if not path.is_file():
        return table
    for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
        fields: dict[str, list[str]] = {}
        current, fuzzy = None, False
        for line in block.splitlines():
            if line.startswith("#,") and "fuzzy" in line:
                fuzzy = True
            elif line.startswith("#"):
                continue
            elif line.startswith('"') and current:
                fields[current].append(line)
            else:
                key, _, rest = line.partition(" ")
                if key in ("msgctxt", "msgid", "msgstr"):
                    current = key
                    fields[key] = [rest]
        msgid, msgstr = _po_string(fields.get("msgid", [])), _po_string(fields.get("msgstr", []))
        if msgid and msgstr and not fuzzy:
            table[(_po_string(fields.get("msgctxt", ['""'])), msgid)] = msgstr
    return table


def _t(text: str, context: str = GENERIC) -> str:
    """``text`` in the language of the feedback being given (English if it has no translation)."""
    lang = _LANG.get()
    if lang == "en" or not text:
        return text
    if lang not in _CATALOGUES:
        _CATALOGUES[lang] = read_catalogue(pathlib.Path(str(CATALOGUE).format(lang=lang)))
    return _CATALOGUES[lang].get((context, text), text)


def messages() -> list[tuple[str, str]]:
    """(context, English) of every message the checkers can print: the generic templates
    (``GENERIC_MESSAGES``) and each exercise's statement, hint and mistakes. The
    translation catalogue ``checkers.po`` is made from this list."""
    _load_all()
    out = [(GENERIC, m) for m in GENERIC_MESSAGES]
    for id in sorted(EXERCISES, key=lambda i: tuple(int(x) for x in i.split("."))):
        ex = EXERCISES[id]
        for text in (ex.prompt, ex.hint, *(m.message for m in ex.mistakes)):
            if text and (f"exercise {id}", text) not in out:
                out.append((f"exercise {id}", text))
    return out


@dataclass
class Mistake:
    """A likely mistake of an exercise: ``answer()`` computes the wrong answer it gives."""

    answer: Callable[[], Any]
    message: str


@dataclass
class Exercise:
    """One checkable exercise: ``expected()`` computes the right answer.

    ``atol`` is the absolute tolerance on every number of the answer; ``precision`` says
    it in words (for example "to 4 decimals"; empty for an exact answer), and the
    checker quotes it. ``unit`` is ``"share"`` (a value from 0 to 1) or ``"percent"`` (from
    0 to 100) where the answer is one, so that a share given as a percentage (or back) is
    named as such. ``minutes``, ``full`` and ``partial`` are for the instructors' page
    (``marking_table``): the time a learner needs, what a full answer shows, and what
    earns partial credit.
    """

    id: str
    prompt: str
    expected: Callable[[], Any]
    atol: float = 0.0
    hint: str = ""
    precision: str = ""
    mistakes: list[Mistake] = field(default_factory=list)
    unit: str | None = None
    minutes: int | None = None
    full: str = ""
    partial: str = ""


EXERCISES: dict[str, Exercise] = {}


#: The kinds of quantity ``register(unit=...)`` knows: a share from 0 to 1, a percentage from 0 to 100.
UNITS = ("share", "percent")


def register(id: str, prompt: str, decimals: int | None = None, atol: float | None = None, hint: str = "",
             unit: str | None = None, minutes: int | None = None, full: str = "", partial: str = ""):
    """Decorator: register the function that computes exercise ``id``'s answer.

    Args:
        id: "chapter.number", for example "2.1".
        prompt: what to compute and in which form (type, shape).
        decimals: the answer is asked to this many decimal places. The tolerance is
            0.6 x 10^-decimals, so an answer rounded to that many decimals (off by at
            most 0.5 x 10^-decimals) is accepted.
        atol: an explicit absolute tolerance instead (for answers estimated by
            sampling); the precision is then stated as "within atol".
        hint: shown after a wrong answer that no registered mistake explains.
        With neither ``decimals`` nor ``atol`` the answer must be exact (ints,
        strings, bools, tuples of ints).
        unit: ``"share"`` if the answer is a value from 0 to 1 (a weight, a fraction, an
            error rate), ``"percent"`` if it is one from 0 to 100 (BLEU): the feedback then
            names a share given as a percentage, or a percentage given as a share.
        minutes: about how long a learner who has read the chapter needs (an int).
        full: for the instructors' page, what a full answer shows.
        partial: for the instructors' page, what earns partial credit.

    Raises:
        ValueError: the id is registered twice; both ``decimals`` and ``atol`` given;
            ``decimals`` is not an int from 0 to 12; ``atol`` is not positive; ``unit``
            is not one of ``UNITS``; ``minutes`` is not a positive int.
    """
    if unit is not None and unit not in UNITS:
        raise ValueError(f"exercise {id!r}: unit must be one of {UNITS}, got {unit!r}")
    if minutes is not None and (not _is_int(minutes) or minutes <= 0):
        raise ValueError(f"exercise {id!r}: minutes must be a positive int, got {minutes!r}")
    if decimals is not None and atol is not None:
        raise ValueError(f"exercise {id!r}: give decimals or atol, not both")
    if decimals is not None:
        if not isinstance(decimals, int) or isinstance(decimals, bool) or not 0 <= decimals <= 12:
            raise ValueError(f"exercise {id!r}: decimals must be an int from 0 to 12, got {decimals!r}")
        tol, precision = 0.6 * 10.0**-decimals, f"to {decimals} decimal{'s' if decimals != 1 else ''}"
    elif atol is not None:
        if not isinstance(atol, (int, float)) or isinstance(atol, bool) or not atol > 0:
            raise ValueError(f"exercise {id!r}: atol must be a positive number, got {atol!r}")
        tol, precision = float(atol), f"within {atol:g}"
    else:
        tol, precision = 0.0, ""

    def wrap(fn):
        if id in EXERCISES:
            raise ValueError(f"exercise {id!r} is registered twice")
        EXERCISES[id] = Exercise(id, prompt, fn, tol, hint, precision, unit=unit, minutes=minutes,
                                 full=full, partial=partial)
        return fn

    return wrap


def mistake(id: str, message: str):
    """Decorator: register a function that computes the answer a likely mistake gives.

    ``message`` names the mistake in the learner's terms, for example "these are the
    weights without the division by sqrt(d_k)". It must not state the right answer.
    Register the exercise first.

    Raises:
        KeyError: exercise ``id`` is not registered (yet).
    """

    def wrap(fn):
        if id not in EXERCISES:
            raise KeyError(f"register exercise {id!r} before its mistakes")
        EXERCISES[id].mistakes.append(Mistake(fn, message))
        return fn

    return wrap


def _a(word: str) -> str:
    """'an int', 'a float': the indefinite article for ``word``."""
    english = f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"
    if _LANG.get() != "en":
        named = _t(english)  # "an int" -> "un entier (int)" where the catalogue has it
        return named if named != english else _t("a {name}").format(name=word)
    return english


#: How ``_describe`` names a tensor or an array.
_FLOAT_TENSOR = "a floating-point torch.Tensor of shape {shape}"
_TENSOR = "a torch.Tensor of shape {shape} and dtype {dtype}"
_ARRAY = "a numpy array of shape {shape}"
_TYPED_ARRAY = "a numpy array of shape {shape} and dtype {dtype}"


def _describe(x, value: bool = True) -> str:
    """Say what ``x`` is: type and shape, and with ``value`` the value of a scalar (the learner's own)."""
    if isinstance(x, torch.Tensor):
        if x.is_floating_point():  # any float dtype is accepted, so name none
            return _t(_FLOAT_TENSOR).format(shape=tuple(x.shape))
        return _t(_TENSOR).format(shape=tuple(x.shape), dtype=x.dtype)
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "USOV":  # strings, bytes or objects: say so
            return _t(_TYPED_ARRAY).format(shape=x.shape, dtype=x.dtype)
        return _t(_ARRAY).format(shape=x.shape)
    if isinstance(x, (list, tuple)):
        return _t("{kind} of length {n}").format(kind=_a(type(x).__name__), n=len(x))
    return _a(type(x).__name__) + (f" ({x!r})" if value else "")


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _as_float_tensor(x) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().to(torch.float64)
    return torch.as_tensor(np.asarray(x), dtype=torch.float64)


def _scalar(x):
    """A one-element tensor or NumPy array as a Python number (anything else unchanged): what
    ``loss.item()`` would give, so that ``window_mask(10, 2).sum()`` counts as an int."""
    if isinstance(x, torch.Tensor) and x.numel() == 1:
        return x.item()
    if isinstance(x, np.ndarray) and x.size == 1:
        return x.item()
    return x


def _flat_numbers(expected) -> bool:
    """Whether ``expected`` is a non-empty list or tuple of numbers (then a tensor or an array
    of that length is accepted for it)."""
    return (isinstance(expected, (list, tuple)) and len(expected) > 0
            and all(isinstance(e, numbers.Real) and not isinstance(e, bool) for e in expected))


def _nested_numbers(x) -> bool:
    """Whether ``x`` is a number or a (nested) list or tuple of numbers (then it may be given
    for a tensor)."""
    if isinstance(x, (list, tuple)):
        return all(_nested_numbers(v) for v in x)
    return isinstance(x, numbers.Real) or (isinstance(x, (torch.Tensor, np.ndarray)) and x.ndim == 0)


def _is_floating(x) -> bool:
    return x.is_floating_point() if isinstance(x, torch.Tensor) else np.issubdtype(x.dtype, np.floating)


def _not_numbers(x) -> bool:
    """A NumPy array of strings, bytes or objects: not numbers at all (reported as the wrong
    kind, not as "integers, use floats"). Boolean arrays and tensors are left to the checks
    that follow (a mask is an answer of booleans)."""
    return isinstance(x, np.ndarray) and x.dtype.kind in "USOV"


def _array_as_list(answer, expected, path: str) -> tuple[Any, str | None]:
    """A tensor or an array given for the list or tuple of numbers ``expected``, as a list:
    its shape must be (n,), or (1, n) as a batch of one gives it."""
    shape, n = tuple(answer.shape), len(expected)
    if _not_numbers(answer):
        return None, _should(path=path, expected=_describe(expected), got=_describe(answer))
    if not shape or shape[-1] != n or any(d != 1 for d in shape[:-1]):
        return None, _t("{path} has shape {shape}, expected shape {expected}").format(
            path=path, shape=shape, expected=(n,))
    if not _is_floating(answer) and not all(_is_int(e) for e in expected):
        return None, _t("{path} should be {expected}, got integers ({got}); use floats").format(
            path=path, expected=_describe(expected), got=_describe(answer))
    values = answer.detach().cpu() if isinstance(answer, torch.Tensor) else answer
    return values.reshape(-1).tolist(), None


def _kind(answer, expected, path: str = "answer") -> tuple[Any, str | None]:
    """(answer made comparable, None) if ``answer`` has the kind of ``expected``; else (None, message).

    The kind is the type, the shape, the float/int dtype, the length and the keys; a
    NaN is reported too. The message never mentions the expected value. What the
    chapters' code gives is accepted where it holds the same numbers: a one-element
    tensor or array for a number, a tensor, an array, a list or a tuple for a tensor,
    and a tensor or an array of shape (n,) (or (1, n)) for a list or tuple of n numbers.
    """
    if isinstance(expected, bool):
        if not isinstance(answer, (bool, np.bool_)):
            return None, _should(path=path, expected=_a(type(expected).__name__), got=_describe(answer))
        return bool(answer), None
    if isinstance(expected, str):
        if not isinstance(answer, str):
            return None, _should(path=path, expected=_a(type(expected).__name__), got=_describe(answer))
        return str(answer), None
    if isinstance(expected, (torch.Tensor, np.ndarray)):
        if isinstance(answer, (list, tuple)) and _nested_numbers(answer):
            with contextlib.suppress(ValueError):  # a ragged list stays a list, refused below
                answer = np.asarray(answer, dtype=np.float64)  # a list of numbers holds a tensor's numbers
        if not isinstance(answer, (torch.Tensor, np.ndarray)) or _not_numbers(answer):
            return None, _should(path=path, expected=_describe(expected), got=_describe(answer))
        if _is_floating(expected) and not _is_floating(answer):
            return None, _t("{path} should be {expected}, got integers ({got}); use floats").format(
                path=path, expected=_describe(expected), got=_describe(answer))
        a = _as_float_tensor(answer)
        if tuple(a.shape) != tuple(expected.shape):
            return None, _t("{path} has shape {shape}, expected shape {expected}").format(
                path=path, shape=tuple(a.shape), expected=tuple(expected.shape))
        if torch.isnan(a).any():
            return None, _t("{path} contains NaN").format(path=path)
        return a, None
    if _is_int(expected):
        value = _scalar(answer)
        if _is_int(value):
            return int(value), None
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and float(value).is_integer():
            return int(value), None
        return None, _should(path=path, expected=_a("int"), got=_describe(answer))
    if isinstance(expected, numbers.Real):
        value = _scalar(answer)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return None, _t("{path} should be a number, got {got}").format(path=path, got=_describe(answer))
        if math.isnan(value):
            return None, _t("{path} is NaN, expected a number").format(path=path)
        return float(value), None
    if isinstance(expected, dict):
        if not isinstance(answer, dict):
            return None, _should(path=path, expected=_a("dict"), got=_describe(answer))
        missing = [k for k in expected if k not in answer]
        if missing:
            return None, _t("{path} is missing the key(s) {keys}").format(path=path, keys=missing)
        extra = [k for k in answer if k not in expected]
        if extra:
            return None, _t("{path} has unexpected key(s) {keys}").format(path=path, keys=extra)
        out = {}
        for k in expected:
            out[k], msg = _kind(answer[k], expected[k], f"{path}[{k!r}]")
            if msg:
                return None, msg
        return out, None
    if isinstance(expected, (list, tuple)):
        if isinstance(answer, (torch.Tensor, np.ndarray)) and _flat_numbers(expected):
            answer, msg = _array_as_list(answer, expected, path)
            if msg:
                return None, msg
        if not isinstance(answer, (list, tuple)):
            return None, _should(path=path, expected=_a(type(expected).__name__), got=_describe(answer))
        if len(answer) != len(expected):
            template = "{path} has {n} item, expected {expected}" if len(answer) == 1 else "{path} has {n} items, expected {expected}"
            return None, _t(template).format(path=path, n=len(answer), expected=len(expected))
        out = []
        for i, (a, e) in enumerate(zip(answer, expected)):
            item, msg = _kind(a, e, f"{path}[{i}]")
            if msg:
                return None, msg
            out.append(item)
        return out, None
    raise TypeError(f"cannot compare expected answers of type {type(expected).__name__}")


def _close(a, e, atol: float) -> bool:
    """Whether the comparable answer ``a`` (from ``_kind``) equals ``e`` within ``atol``."""
    if isinstance(e, (bool, str)) or _is_int(e):
        return a == e
    if isinstance(e, (torch.Tensor, np.ndarray)):
        return bool(((a - _as_float_tensor(e)).abs() <= atol).all())
    if isinstance(e, numbers.Real):
        return abs(a - float(e)) <= atol
    if isinstance(e, dict):
        return all(_close(a[k], e[k], atol) for k in e)
    return all(_close(x, y, atol) for x, y in zip(a, e))


#: The powers of ten a scale slip multiplies by, as (numerator, denominator).
SCALE_FACTORS = ((10, 1), (100, 1), (1000, 1), (1, 10), (1, 100), (1, 1000))


def _power_of_ten(t: torch.Tensor, x: torch.Tensor, atol: float) -> tuple[int, int] | None:
    """(num, den) if the answer ``t`` is the expected ``x`` times num / den, one of
    ``SCALE_FACTORS``, else None (float64 tensors of one shape).

    Every number must match: scaled back, within ``atol`` (the learner kept the digits
    asked for), or within 0.5 % of the scaled value (the learner rounded the scaled
    number, 18.2 for a share of 0.1815...). At least one expected number must stand
    clear of zero.
    """
    if not bool((x.abs() > 10 * atol).any()):
        return None
    for num, den in SCALE_FACTORS:
        scaled = x * num / den
        back = t * den / num
        ok = ((back - x).abs() <= atol + 1e-12 * x.abs()) | ((t - scaled).abs() <= 0.005 * scaled.abs())
        if bool(ok.all()):
            return num, den
    return None


def _thousands(n: int) -> str:
    """``1,000`` in English, ``1 000`` in French (a narrow no-break space)."""
    return f"{n:,}" if _LANG.get() == "en" else f"{n:,}".replace(",", "\u202f")


def _scale_slip(num: int, den: int, unit: str | None) -> str:
    """What the feedback says of an answer that is the right one times ``num / den``."""
    if (num, den) == (100, 1) and unit == "share":
        return _t("is the right answer times 100: the exercise asks for a value from 0 to 1, not a percentage")
    if (num, den) == (1, 100) and unit == "percent":
        return _t("is the right answer divided by 100: the exercise asks for a value from 0 to 100, "
                  "not a share from 0 to 1")
    if den == 1:
        return _t("is the right answer times {factor}: look for an extra power of ten (a unit, a percentage, "
                  "a misplaced decimal point)").format(factor=_thousands(num))
    return _t("is the right answer divided by {factor}: look for a missing power of ten (a unit, a percentage, "
              "a misplaced decimal point)").format(factor=_thousands(den))


#: What ``_generic`` says of a wrong answer, beside a power of ten (``_scale_slip``).
_ZERO = "is zero everywhere"
_SIGN = "has the wrong sign"
_TRANSPOSED = "is transposed: rows and columns are swapped"
_FACTOR = ("is the right answer times a constant factor: look for a scaling that is missing or extra "
           "(a square root, a mean instead of a sum, a count)")


def _generic(a, e, atol: float, unit: str | None = None) -> str | None:
    """A wrong answer's kind of error that needs no registered mistake, or None."""
    if isinstance(e, (bool, str, dict, list, tuple)):
        return None
    if _is_int(e):  # only a power of ten: an int off by one has no direction to name
        scale = _power_of_ten(torch.tensor([float(a)], dtype=torch.float64),
                              torch.tensor([float(e)], dtype=torch.float64), 0.0) if a else None
        return _scale_slip(*scale, unit) if scale else None
    t = a if isinstance(a, torch.Tensor) else torch.tensor([a], dtype=torch.float64)
    x = _as_float_tensor(e) if isinstance(e, (torch.Tensor, np.ndarray)) else torch.tensor([float(e)], dtype=torch.float64)
    if bool((t == 0).all()) and not bool((x.abs() <= atol).all()):
        return _t(_ZERO)
    if bool(((t + x).abs() <= atol).all()):
        return _t(_SIGN)
    if t.dim() == 2 and t.shape[0] == t.shape[1] and bool(((t.T - x).abs() <= atol).all()):
        return _t(_TRANSPOSED)
    scale = _power_of_ten(t, x, atol)
    if scale:
        return _scale_slip(*scale, unit)
    nonzero = x.abs() > 10 * atol
    if int(nonzero.sum()) >= 2 and bool((t[~nonzero].abs() <= atol).all()):
        ratio = t[nonzero] / x[nonzero]
        r = ratio.mean()
        if abs(r - 1) > 1e-3 and bool(((ratio - r).abs() <= 1e-3 * r.abs()).all()):
            return _t(_FACTOR)
    return None


def _numbers_of(a, e) -> tuple[list, list] | None:
    """The numbers of a comparable structured answer ``a`` and of ``e``, in the same order,
    or None if a part that is not a number (a string, a bool) differs."""
    if isinstance(e, (bool, str)):
        return ([], []) if a == e else None
    if isinstance(e, (torch.Tensor, np.ndarray)):
        return a.flatten().tolist(), _as_float_tensor(e).flatten().tolist()
    if isinstance(e, numbers.Real):
        return [float(a)], [float(e)]
    pairs = [(a[k], e[k]) for k in e] if isinstance(e, dict) else list(zip(a, e))
    out_a, out_e = [], []
    for x, y in pairs:
        got = _numbers_of(x, y)
        if got is None:
            return None
        out_a += got[0]
        out_e += got[1]
    return out_a, out_e


def _structure_scale(a, e, atol: float, unit: str | None) -> str | None:
    """The scale slip of a whole tuple, list or dict answer (every number scaled alike), or None."""
    got = _numbers_of(a, e)
    if not got or not got[0]:
        return None
    scale = _power_of_ten(torch.tensor(got[0], dtype=torch.float64), torch.tensor(got[1], dtype=torch.float64), atol)
    return _scale_slip(*scale, unit) if scale else None


def diagnose(answer, ex: Exercise) -> str | None:
    """None if ``answer`` is right for exercise ``ex``, else what is wrong in kind.

    The order: the kind (type, shape, dtype, length, keys, NaN); right within the
    tolerance; a registered mistake, whose output the answer equals; for a tuple, a list
    or a dict, every number the right one times a power of ten, then which items are
    wrong (an item is named by a registered mistake only if that mistake changes that
    item alone and the answer's item equals the mistake's); zero, a flipped sign, a
    transposition, a power of ten (a share as a percentage, or back) or another constant
    factor; else "not within the precision". The expected value is never part of the message.
    """
    with torch.random.fork_rng(devices=[]):  # leave the learner's random state alone
        expected = ex.expected()
        a, msg = _kind(answer, expected)
        if msg:
            return msg
        if _close(a, expected, ex.atol):
            return None
        wrongs = []  # (comparable wrong answer, message) of each registered mistake
        for m in ex.mistakes:
            w, wrong_kind = _kind(m.answer(), expected)
            if wrong_kind is None and not _close(w, expected, ex.atol):
                wrongs.append((w, m.message))
    for w, message in wrongs:
        if _close(a, w, ex.atol):
            return _t(message, f"exercise {ex.id}")
    if isinstance(expected, (list, tuple, dict)):
        keys = list(expected) if isinstance(expected, dict) else range(len(expected))
        whole = _structure_scale(a, expected, ex.atol, ex.unit)
        if whole:
            return _t("answer {kind}").format(kind=whole)
        bad = [k for k in keys if not _close(a[k], expected[k], ex.atol)]
        label = lambda k: f"answer[{k!r}]" if isinstance(expected, dict) else f"answer[{k}]"  # noqa: E731
        # a mistake that changes one item alone names that item when the answer's item is its
        single = [(w, message, changed[0]) for w, message in wrongs
                  for changed in [[k for k in keys if not _close(w[k], expected[k], ex.atol)]] if len(changed) == 1]
        parts = []
        for k in bad:
            named = next((message for w, message, only in single if only == k and _close(a[k], w[k], ex.atol)), None)
            kind = _generic(a[k], expected[k], ex.atol, ex.unit) or _not_right(ex)
            parts.append(_t("{item}: {mistake}").format(item=label(k), mistake=_t(named, f"exercise {ex.id}"))
                         if named else _t("{item} {kind}").format(item=label(k), kind=kind))
        return _t("; ").join(parts)
    kind = _generic(a, expected, ex.atol, ex.unit) or _not_right(ex)
    return _t("answer {kind}").format(kind=kind)


def _precision(ex: Exercise) -> str:
    """The exercise's precision ("to 4 decimals", "within 0.05") in the feedback's language."""
    m = re.fullmatch(r"to (\d+) decimals?", ex.precision)
    if m:
        template = "to {n} decimal" if m.group(1) == "1" else "to {n} decimals"
        return _t(template).format(n=m.group(1))
    m = re.fullmatch(r"within (\S+)", ex.precision)
    if m:
        value = m.group(1) if _LANG.get() == "en" else m.group(1).replace(".", ",")
        return _t("within {atol}").format(atol=value)
    return ex.precision


def _not_right(ex: Exercise) -> str:
    return _t("is not right {precision}").format(precision=_precision(ex)) if ex.precision else _t("is not right")


#: The instructors' page, and the comments that fence its table of exercises (``marking_table``).
INSTRUCTORS_PAGE = pathlib.Path(__file__).resolve().parents[2] / "chapters" / "instructors.md"
TABLE_START = "<!-- marking table: made by `python -m utils.exercises marking --write` from utils/exercises; do not edit -->"
TABLE_END = "<!-- end of the marking table -->"


def exercise_ids() -> list[str]:
    """Every registered exercise's id, in the book's order ("2.1", ..., "10.1", ...)."""
    _load_all()
    return sorted(EXERCISES, key=lambda i: tuple(int(x) for x in i.split(".")))


def marking_table() -> str:
    """The instructors' page's table of exercises, made from the registry: one row per exercise
    with a link to it, the minutes a learner needs, what a full answer shows and what earns
    partial credit (``register(minutes=, full=, partial=)``), as a Markdown table.

    Raises:
        ValueError: an exercise has no minutes, no ``full`` or no ``partial`` note, or a
            note holds a ``|`` (it would split the table's cell).
    """
    rows = ["| Exercise | Minutes | A full answer | Partial credit |", "| --- | ---: | --- | --- |"]
    for id in exercise_ids():
        ex = EXERCISES[id]
        if not ex.minutes or not ex.full or not ex.partial:
            raise ValueError(f"exercise {id}: register it with minutes=, full= and partial= (the instructors' page shows them)")
        if "|" in ex.full + ex.partial:
            raise ValueError(f"exercise {id}: a marking note may not hold '|', which splits a table's cell")
        chapter, number = id.split(".")
        link = f"{{ref}}`{id} <ex-ch{int(chapter):02d}-{number}>`"
        rows.append(f"| {link} | {ex.minutes} | {ex.full} | {ex.partial} |")
    return "\n".join(rows)


def page_marking_table(text: str) -> str:
    """The table between ``TABLE_START`` and ``TABLE_END`` in a page's text.

    Raises:
        ValueError: the page lacks one of the two comments, or has them out of order.
    """
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"the page must hold the lines {TABLE_START!r} and {TABLE_END!r}, in that order")
    return text[start + len(TABLE_START):end].strip()


def write_marking_table(path: pathlib.Path = INSTRUCTORS_PAGE) -> bool:
    """Put ``marking_table()`` between the page's two comments; return whether the page changed."""
    text = path.read_text(encoding="utf-8")
    old = page_marking_table(text)
    new = marking_table()
    if old == new:
        return False
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    path.write_text(text[:start] + "\n\n" + new + "\n\n" + text[end:], encoding="utf-8")
    return True


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


def _wrap(text: str) -> str:
    """Feedback wrapped to 76 columns, so notebook output boxes do not cut it."""
    return textwrap.fill(text, width=76, subsequent_indent="  ", break_on_hyphens=False)


def _say(text: str) -> None:
    print(_wrap(text))


def check(id: str, answer, lang: str | None = None) -> Verdict:
    """Check the answer to exercise ``id`` (for example ``"2.1"``); print and return the verdict.

    Returns a ``Verdict``, true when the answer is right (``assert check(...)``
    works in solution notebooks). The printed feedback says what is wrong in kind and
    never the right answer (see the module's docstring). ``lang`` is the language of the
    feedback, ``"en"`` or ``"fr"``; by default the environment variable ``COURSE_LANG``,
    else English.

    Raises:
        KeyError: no exercise has that id (the message lists the known ids).
        TypeError: ``id`` is not a string such as "2.1".
        ValueError: ``lang`` (or ``COURSE_LANG``) names no language of ``LANGUAGES``.
    """
    if not isinstance(id, str):
        raise TypeError(f"the exercise id must be a string such as \"2.1\", got {_describe(id)}")
    lang = language(lang)
    _load_all()
    token = _LANG.set(lang)
    try:
        if id not in EXERCISES:
            raise KeyError(_t("no exercise {id}; known exercises: {ids}").format(
                id=repr(id), ids=sorted(EXERCISES, key=lambda i: tuple(int(x) for x in i.split(".")))))
        return _check(EXERCISES[id], answer)
    finally:
        _LANG.reset(token)


def language(lang: str | None = None) -> str:
    """The feedback's language: ``lang``, else the environment variable ``COURSE_LANG``, else
    English. Written as a locale is fine: ``FR``, ``fr_FR.UTF-8`` and ``fr-CA`` all mean French.

    Raises:
        ValueError: the language is not one of ``LANGUAGES``.
    """
    raw = lang if lang is not None else (os.environ.get("COURSE_LANG") or "en")
    code = re.split(r"[_.@-]", str(raw).strip().lower(), maxsplit=1)[0]
    if code not in LANGUAGES:
        source = "lang" if lang is not None else "COURSE_LANG"
        raise ValueError(f"{source} must name one of the languages {LANGUAGES}, got {raw!r}")
    return code


def _check(ex: Exercise, answer) -> Verdict:
    if answer is ...:
        with torch.random.fork_rng(devices=[]):
            expected = ex.expected()
        _say(_unanswered(ex, _describe(expected, value=False)))
        return Verdict(False)
    msg = diagnose(answer, ex)
    if msg is None:
        _say(_correct(ex))
        return Verdict(True)
    named = any(_t(m.message, f"exercise {ex.id}") in msg for m in ex.mistakes)  # a named mistake says enough
    _say(_not_yet(ex, msg, hint=not named))
    return Verdict(False)


# The three sentences ``check`` prints, in the language of the feedback being given (``_LANG``);
# ``translate_output`` writes a printed one again in another language with the same functions.

def _unanswered(ex: Exercise, expected: str) -> str:
    """The answer is still the placeholder ``...``: the statement and what kind of answer is
    expected (``expected``, an answer's description by ``_describe``), how precise."""
    precision = _t(", {precision}").format(precision=_precision(ex)) if ex.precision else ""
    return _t("Exercise {id}: not answered yet. {prompt} Expected {expected}{precision}.").format(
        id=ex.id, prompt=_t(ex.prompt, f"exercise {ex.id}"), expected=expected, precision=precision)


def _correct(ex: Exercise) -> str:
    return _t("Exercise {id}: correct.").format(id=ex.id)


def _not_yet(ex: Exercise, msg: str, hint: bool) -> str:
    """A wrong answer: what is wrong (``msg``, from ``diagnose``), then the exercise's hint if
    ``hint`` (``check`` leaves it out after a registered mistake's message)."""
    hint_text = _t(" Hint: {hint}").format(hint=_t(ex.hint, f"exercise {ex.id}")) if ex.hint and hint else ""
    # "Answer has shape ..." in English; in French the message may start with the variable's
    # own name, answer, which keeps its lower case.
    if _LANG.get() == "en" or not msg.startswith("answer"):
        msg = msg[0].upper() + msg[1:]
    return _t("Exercise {id}: not yet. {message}.{hint}").format(id=ex.id, message=msg, hint=hint_text)


#: The feedback's own sentences, as templates (``{...}`` are filled in when printed).
GENERIC_MESSAGES = [
    "a {name}", _FLOAT_TENSOR, _TENSOR, _ARRAY, _TYPED_ARRAY,
    "{kind} of length {n}", "{path} should be {expected}, got {got}",
    "{path} should be {expected}, got integers ({got}); use floats",
    "{path} has shape {shape}, expected shape {expected}", "{path} contains NaN",
    "{path} should be a number, got {got}", "{path} is NaN, expected a number",
    "{path} is missing the key(s) {keys}", "{path} has unexpected key(s) {keys}",
    "{path} has {n} item, expected {expected}", "{path} has {n} items, expected {expected}",
    _ZERO, _SIGN, _TRANSPOSED, _FACTOR,
    "is the right answer times 100: the exercise asks for a value from 0 to 1, not a percentage",
    "is the right answer divided by 100: the exercise asks for a value from 0 to 100, not a share from 0 to 1",
    "is the right answer times {factor}: look for an extra power of ten (a unit, a percentage, "
    "a misplaced decimal point)",
    "is the right answer divided by {factor}: look for a missing power of ten (a unit, a percentage, "
    "a misplaced decimal point)",
    "{item}: {mistake}", "{item} {kind}", "; ", "answer {kind}",
    "to {n} decimal", "to {n} decimals", "within {atol}", "is not right {precision}", "is not right",
    ", {precision}", "Exercise {id}: not answered yet. {prompt} Expected {expected}{precision}.",
    "Exercise {id}: correct.", " Hint: {hint}", "Exercise {id}: not yet. {message}.{hint}",
    "no exercise {id}; known exercises: {ids}",
    # type names, as _a() says them
    "an int", "a float", "a str", "a list", "a tuple", "a dict", "a bool", "a NoneType", "a set", "a complex",
]


def _should(**fields) -> str:
    """The "{path} should be {expected}, got {got}" sentence in the feedback's language."""
    return _t("{path} should be {expected}, got {got}").format(**fields)


# ----------------------------------------------------------------------------- printed feedback, in another language
# The French edition of the book shows the notebooks' stored outputs, printed by the English
# checker. ``translate_output`` reads each printed message back: it finds which of the
# sentences above made it and with what, then has the same functions write it again in
# another language (no answer is computed). A reading is kept only if it gives the English
# text back exactly.

#: The first line of a message that ``check`` printed in English: "Exercise 2.1: ...".
FEEDBACK_LINE = re.compile(r"^Exercise (\d+\.\d+): ")

#: A message as read back: writes it in the language of the feedback being given (``_LANG``).
_Render = Callable[[], str]

#: Where ``_kind`` found a wrong kind: the answer, or an item of it (``answer[0]``, ``answer['Q']``).
_PATH = r"answer(?:\[[^\]]+\])*"
_ITEM = r"answer\[[^\]]+\]"

#: A shape as printed (``(3,)``, ``(2, 3)``), a dtype (``torch.int64``, ``<U3``), a list of keys.
_SHAPE, _DTYPE, _KEYS = r"\([\d, ]*\)", r"\S+", r"\[.*\]"
#: A field that holds a description of an answer (``_describe``, ``_a``), read in turn.
_DESCRIBED = "description"

#: The sentences of ``_kind`` about the answer at ``{path}``: what each field holds, a
#: description or printed text that matches a regular expression. The more particular
#: sentence first: a text it gives is read by it alone ("should be a number, got ..." is
#: not "should be {expected}, got ..." with a type named "number").
_KIND_MESSAGES = {
    "{path} should be a number, got {got}": {"got": _DESCRIBED},
    "{path} should be {expected}, got integers ({got}); use floats": {"expected": _DESCRIBED, "got": _DESCRIBED},
    "{path} should be {expected}, got {got}": {"expected": _DESCRIBED, "got": _DESCRIBED},
    "{path} has shape {shape}, expected shape {expected}": {"shape": _SHAPE, "expected": _SHAPE},
    "{path} contains NaN": {},
    "{path} is NaN, expected a number": {},
    "{path} is missing the key(s) {keys}": {"keys": _KEYS},
    "{path} has unexpected key(s) {keys}": {"keys": _KEYS},
    "{path} has {n} item, expected {expected}": {"n": r"\d+", "expected": r"\d+"},
    "{path} has {n} items, expected {expected}": {"n": r"\d+", "expected": r"\d+"},
}


@contextlib.contextmanager
def _speaking(lang: str):
    """Give feedback in ``lang`` inside the block."""
    token = _LANG.set(lang)
    try:
        yield
    finally:
        _LANG.reset(token)


def _english(render: _Render) -> str:
    with _speaking("en"):
        return render()


def _fields(template: str, text: str, **patterns: str) -> dict[str, str] | None:
    """The values of the ``{fields}`` of ``template`` if ``text`` is that English template filled
    in, else None. A field matches the regular expression ``patterns[field]``, by default any text."""
    parts = re.split(r"\{(\w+)\}", template)
    regex = "".join(f"(?P<{part}>{patterns.get(part, '.+')})" if i % 2 else re.escape(part)
                    for i, part in enumerate(parts))
    m = re.fullmatch(regex, text, re.S)
    return m.groupdict() if m else None


def _filled(template: str, **fields) -> _Render:
    """``template`` in the feedback's language, each field a value printed as it is or a render."""
    return lambda: _t(template).format(**{k: v() if callable(v) else v for k, v in fields.items()})


def _read_type(text: str) -> list[_Render]:
    """'an int', 'a set': a type as ``_a`` names it."""
    m = re.fullmatch(r"an? (\S+)", text)
    if not m:
        return []
    name = m.group(1)
    return [lambda: _a(name)]


def _read_description(text: str) -> list[_Render]:
    """The readings of what ``_describe`` (or ``_a``) said of an answer."""
    out = [_filled(t, **f) for t in (_FLOAT_TENSOR, _TENSOR, _ARRAY, _TYPED_ARRAY)
           if (f := _fields(t, text, shape=_SHAPE, dtype=_DTYPE))]
    f = _fields("{kind} of length {n}", text, n=r"\d+")
    if f:
        out += [_filled("{kind} of length {n}", kind=kind, n=f["n"]) for kind in _read_type(f["kind"])]
    out += _read_type(text)
    m = re.fullmatch(r"(an? \S+) (\(.*\))", text, re.S)  # a value of the learner's, as repr() wrote it
    if m:
        value = m.group(2)
        out += [lambda kind=kind: f"{kind()} {value}" for kind in _read_type(m.group(1))]
    return out


def _read_kind(text: str, ex: Exercise) -> list[_Render]:
    """The readings of what ``_generic`` or ``_not_right`` said of a wrong answer or item."""
    kinds = [lambda k=k: _t(k) for k in (_ZERO, _SIGN, _TRANSPOSED, _FACTOR)]
    kinds += [lambda s=s: _scale_slip(*s, ex.unit) for s in SCALE_FACTORS]
    kinds.append(lambda: _not_right(ex))
    return [k for k in kinds if _english(k) == text]


def _read_kind_message(text: str) -> list[_Render]:
    """The readings of a sentence of ``_kind`` (the answer's type, shape, length, keys), by the
    first of ``_KIND_MESSAGES`` that reads it."""
    for template, holds in _KIND_MESSAGES.items():
        f = _fields(template, text, path=_PATH, **{k: ".+" if v == _DESCRIBED else v for k, v in holds.items()})
        if f is None:
            continue
        options = [[(k, r) for r in _read_description(v)] if holds.get(k) == _DESCRIBED else [(k, v)]
                   for k, v in f.items()]
        out = [_filled(template, **dict(chosen)) for chosen in itertools.product(*options)]
        if [r for r in out if _english(r) == text]:
            return out
    return []


def _read_items(segments: list[str], ex: Exercise) -> list[list[_Render]]:
    """Every reading of ``"; ".join(segments)`` as sentences about items, joined by "; "
    (a mistake's own message may hold a "; " too)."""
    if not segments:
        return [[]]
    out = []
    for end in range(1, len(segments) + 1):
        text, firsts = "; ".join(segments[:end]), []
        f = _fields("{item}: {mistake}", text, item=_ITEM)
        if f:
            firsts += [_filled("{item}: {mistake}", item=f["item"], mistake=lambda m=m.message: _t(m, f"exercise {ex.id}"))
                       for m in ex.mistakes if m.message == f["mistake"]]
        f = _fields("{item} {kind}", text, item=_ITEM)
        if f:
            firsts += [_filled("{item} {kind}", item=f["item"], kind=k) for k in _read_kind(f["kind"], ex)]
        out += [[first, *rest] for first in firsts for rest in _read_items(segments[end:], ex)]
    return out


def _read_diagnosis(text: str, ex: Exercise) -> list[_Render]:
    """The readings of what ``diagnose`` said of a wrong answer to ``ex``."""
    out: list[_Render] = [lambda m=m.message: _t(m, f"exercise {ex.id}") for m in ex.mistakes if m.message == text]
    f = _fields("answer {kind}", text)
    if f:
        out += [_filled("answer {kind}", kind=k) for k in _read_kind(f["kind"], ex)]
    out += _read_kind_message(text)
    out += [lambda parts=parts: _t("; ").join(p() for p in parts) for parts in _read_items(text.split("; "), ex)]
    return out


def _between(text: str, frame: str) -> str | None:
    """What ``text`` holds where ``frame`` holds the mark ``\\x00``, or None if the rest differs."""
    head, _, tail = frame.partition("\x00")
    if len(text) > len(head) + len(tail) and text.startswith(head) and text.endswith(tail):
        return text[len(head):len(text) - len(tail)]
    return None


def _read_feedback(text: str) -> list[_Render]:
    """The readings of one message of ``check`` (on one line) that give ``text`` back in English."""
    m = FEEDBACK_LINE.match(text)
    ex = EXERCISES.get(m.group(1)) if m else None
    if ex is None:
        return []
    out: list[_Render] = [lambda: _correct(ex)]
    expected = _between(text, _english(lambda: _unanswered(ex, "\x00")))
    if expected is not None:
        out += [lambda d=d: _unanswered(ex, d()) for d in _read_description(expected)]
    for hint in (True, False):  # a text that ends in the hint is read with it (a learner's value may hold ". Hint: ...")
        msg = _between(text, _english(lambda hint=hint: _not_yet(ex, "\x00", hint)))
        if msg is None or (not hint and any(_english(r) == text for r in out)):
            continue
        for said in {msg, msg[0].lower() + msg[1:]}:  # check wrote the diagnosis's first letter upper-case
            out += [lambda d=d, hint=hint: _not_yet(ex, d(), hint) for d in _read_diagnosis(said, ex)]
    return [r for r in out if _english(r) == text]


def _translate_feedback(text: str, lang: str) -> str:
    """One message of ``check`` (on one line) written in ``lang``.

    Raises:
        ValueError: no sentence of the checker's gives ``text``, or two readings of it differ in ``lang``.
    """
    readings = _read_feedback(text)
    with _speaking(lang):
        found = {r() for r in readings}
    if not found:
        raise ValueError(f"not a message of the answer checker: {text!r}")
    if len(found) > 1:
        raise ValueError(f"the checker's message {text!r} reads {len(found)} ways in {lang}: {sorted(found)}")
    return found.pop()


def translate_output(text: str, lang: str | None = None) -> str:
    """A cell's printed output with every message of ``check`` in it written in ``lang``.

    The stored outputs of the book's notebooks were printed by the English checker. A message
    starts on a line "Exercise N.k: " and goes on over the lines ``check`` wrapped (indented by
    two spaces). Each is read back against the checker's own sentences (``GENERIC_MESSAGES``
    and the exercise's statement, hint and mistakes) and written again by the same functions
    in ``lang``, wrapped as ``check`` wraps: the text equals what ``check(..., lang=lang)`` would
    have printed for the same answer. Every other line is left as it is; nothing is computed.

    Args:
        text: the output, as printed (several lines; messages and other printed lines).
        lang: a language of ``LANGUAGES``; by default ``COURSE_LANG``, else English.

    Returns:
        The output with its checker messages in ``lang``.

    Raises:
        ValueError: a line starts as a message of the checker ("Exercise N.k: ") but no
            sentence of the checker's, in English, gives it (the message names the line), or
            ``lang`` is not a language of ``LANGUAGES``.
    """
    lang = language(lang)
    _load_all()
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        if not FEEDBACK_LINE.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        last = i + 1
        while last < len(lines) and lines[last].startswith("  "):
            last += 1
        problem = None
        for end in range(last, i, -1):  # the longest run of indented lines that reads as one message
            block = lines[i:end]
            message = " ".join([block[0], *(line[2:] for line in block[1:])])
            if _wrap(message) != "\n".join(block):
                continue
            try:
                translated = _translate_feedback(message, lang)
            except ValueError as e:
                problem = problem or e
                continue
            out += _wrap(translated).split("\n")
            i = end
            break
        else:
            raise ValueError(f"line {i + 1} of the output reads as a message of the answer checker, but none of "
                             f"its sentences gives it: {lines[i]!r} ({problem or 'not wrapped as check wraps'})")
    return "\n".join(out)
