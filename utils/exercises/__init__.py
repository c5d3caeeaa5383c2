"""Answer checkers for the exercises at the end of each chapter.

A learner writes an answer in an exercise cell and calls ``check("2.1", answer)``.
The checker prints whether it is right and, when it is not, what is wrong **in kind**,
without ever telling the right answer: the type, the shape or the dtype is not the one
asked for; the answer is NaN or zero everywhere; its sign is flipped; it is the right
answer times a constant factor or transposed; or it is the answer that a known mistake
gives (each exercise registers its likely mistakes, computed by the course's code, with
a message naming the mistake). Otherwise it says the answer is not within the
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
"""

from __future__ import annotations

import contextvars
import importlib
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

__all__ = ["Verdict", "Exercise", "Mistake", "register", "mistake", "check", "diagnose", "EXERCISES", "LANGUAGES"]

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
    checker quotes it.
    """

    id: str
    prompt: str
    expected: Callable[[], Any]
    atol: float = 0.0
    hint: str = ""
    precision: str = ""
    mistakes: list[Mistake] = field(default_factory=list)


EXERCISES: dict[str, Exercise] = {}


def register(id: str, prompt: str, decimals: int | None = None, atol: float | None = None, hint: str = ""):
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

    Raises:
        ValueError: the id is registered twice; both ``decimals`` and ``atol`` given;
            ``decimals`` is not an int from 0 to 12; ``atol`` is not positive.
    """
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
        EXERCISES[id] = Exercise(id, prompt, fn, tol, hint, precision)
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


def _describe(x, value: bool = True) -> str:
    """Say what ``x`` is: type and shape, and with ``value`` the value of a scalar (the learner's own)."""
    if isinstance(x, torch.Tensor):
        if x.is_floating_point():  # any float dtype is accepted, so name none
            return _t("a floating-point torch.Tensor of shape {shape}").format(shape=tuple(x.shape))
        return _t("a torch.Tensor of shape {shape} and dtype {dtype}").format(shape=tuple(x.shape), dtype=x.dtype)
    if isinstance(x, np.ndarray):
        return _t("a numpy array of shape {shape}").format(shape=x.shape)
    if isinstance(x, (list, tuple)):
        return _t("{kind} of length {n}").format(kind=_a(type(x).__name__), n=len(x))
    return _a(type(x).__name__) + (f" ({x!r})" if value else "")


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _as_float_tensor(x) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().to(torch.float64)
    return torch.as_tensor(np.asarray(x), dtype=torch.float64)


def _kind(answer, expected, path: str = "answer") -> tuple[Any, str | None]:
    """(answer made comparable, None) if ``answer`` has the kind of ``expected``; else (None, message).

    The kind is the type, the shape, the float/int dtype, the length and the keys; a
    NaN is reported too. The message never mentions the expected value.
    """
    if isinstance(expected, (bool, str)):
        if type(answer) is not type(expected):
            return None, _should(path=path, expected=_a(type(expected).__name__), got=_describe(answer))
        return answer, None
    if isinstance(expected, (torch.Tensor, np.ndarray)):
        if not isinstance(answer, (torch.Tensor, np.ndarray)):
            return None, _should(path=path, expected=_describe(expected), got=_describe(answer))

        def floating(t):
            return t.is_floating_point() if isinstance(t, torch.Tensor) else np.issubdtype(t.dtype, np.floating)
        if floating(expected) and not floating(answer):
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
        if _is_int(answer):
            return int(answer), None
        if isinstance(answer, float) and answer.is_integer():
            return int(answer), None
        return None, _should(path=path, expected=_a("int"), got=_describe(answer))
    if isinstance(expected, numbers.Real):
        if isinstance(answer, torch.Tensor) and answer.numel() == 1:
            answer = answer.item()
        if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
            return None, _t("{path} should be a number, got {got}").format(path=path, got=_describe(answer))
        if math.isnan(answer):
            return None, _t("{path} is NaN, expected a number").format(path=path)
        return float(answer), None
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


def _generic(a, e, atol: float) -> str | None:
    """A wrong answer's kind of error that needs no registered mistake, or None."""
    if isinstance(e, (bool, str)) or _is_int(e) or isinstance(e, (dict, list, tuple)):
        return None
    t = a if isinstance(a, torch.Tensor) else torch.tensor([a], dtype=torch.float64)
    x = _as_float_tensor(e) if isinstance(e, (torch.Tensor, np.ndarray)) else torch.tensor([float(e)], dtype=torch.float64)
    if bool((t == 0).all()) and not bool((x.abs() <= atol).all()):
        return _t("is zero everywhere")
    if bool(((t + x).abs() <= atol).all()):
        return _t("has the wrong sign")
    if t.dim() == 2 and t.shape[0] == t.shape[1] and bool(((t.T - x).abs() <= atol).all()):
        return _t("is transposed: rows and columns are swapped")
    nonzero = x.abs() > 10 * atol
    if int(nonzero.sum()) >= 2 and bool((t[~nonzero].abs() <= atol).all()):
        ratio = t[nonzero] / x[nonzero]
        r = ratio.mean()
        if abs(r - 1) > 1e-3 and bool(((ratio - r).abs() <= 1e-3 * r.abs()).all()):
            return _t("is the right answer times a constant factor: look for a scaling "
                      "that is missing or extra (a square root, a mean instead of a sum, a count)")
    return None


def diagnose(answer, ex: Exercise) -> str | None:
    """None if ``answer`` is right for exercise ``ex``, else what is wrong in kind.

    The order: the kind (type, shape, dtype, length, keys, NaN); right within the
    tolerance; a registered mistake; for a tuple or a dict, which item is wrong; zero,
    a flipped sign, a transposition or a constant factor; else "not within the
    precision". The expected value is never part of the message.
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
        bad = [k for k in keys if not _close(a[k], expected[k], ex.atol)]
        label = lambda k: f"answer[{k!r}]" if isinstance(expected, dict) else f"answer[{k}]"  # noqa: E731
        parts = []
        for k in bad:  # one item may carry a registered mistake on its own
            named = next((message for w, message in wrongs
                          if not _close(w[k], expected[k], ex.atol) and _close(a[k], w[k], ex.atol)), None)
            kind = _generic(a[k], expected[k], ex.atol) or _not_right(ex)
            parts.append(_t("{item}: {mistake}").format(item=label(k), mistake=_t(named, f"exercise {ex.id}"))
                         if named else _t("{item} {kind}").format(item=label(k), kind=kind))
        return _t("; ").join(parts)
    kind = _generic(a, expected, ex.atol) or _not_right(ex)
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
    id = ex.id
    if answer is ...:
        with torch.random.fork_rng(devices=[]):
            expected = ex.expected()
        precision = _t(", {precision}").format(precision=_precision(ex)) if ex.precision else ""
        _say(_t("Exercise {id}: not answered yet. {prompt} Expected {expected}{precision}.").format(
            id=id, prompt=_t(ex.prompt, f"exercise {id}"), expected=_describe(expected, value=False),
            precision=precision))
        return Verdict(False)
    msg = diagnose(answer, ex)
    if msg is None:
        _say(_t("Exercise {id}: correct.").format(id=id))
        return Verdict(True)
    named = any(_t(m.message, f"exercise {id}") in msg for m in ex.mistakes)  # a named mistake says enough
    hint = _t(" Hint: {hint}").format(hint=_t(ex.hint, f"exercise {id}")) if ex.hint and not named else ""
    # "Answer has shape ..." in English; in French the message may start with the variable's
    # own name, answer, which keeps its lower case.
    if _LANG.get() == "en" or not msg.startswith("answer"):
        msg = msg[0].upper() + msg[1:]
    _say(_t("Exercise {id}: not yet. {message}.{hint}").format(id=id, message=msg, hint=hint))
    return Verdict(False)


#: The feedback's own sentences, as templates (``{...}`` are filled in when printed).
GENERIC_MESSAGES = [
    "a {name}", "a floating-point torch.Tensor of shape {shape}",
    "a torch.Tensor of shape {shape} and dtype {dtype}", "a numpy array of shape {shape}",
    "{kind} of length {n}", "{path} should be {expected}, got {got}",
    "{path} should be {expected}, got integers ({got}); use floats",
    "{path} has shape {shape}, expected shape {expected}", "{path} contains NaN",
    "{path} should be a number, got {got}", "{path} is NaN, expected a number",
    "{path} is missing the key(s) {keys}", "{path} has unexpected key(s) {keys}",
    "{path} has {n} item, expected {expected}", "{path} has {n} items, expected {expected}",
    "is zero everywhere", "has the wrong sign", "is transposed: rows and columns are swapped",
    "is the right answer times a constant factor: look for a scaling that is missing or extra "
    "(a square root, a mean instead of a sum, a count)",
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
