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
from utils.tasks.translation import data as tr

_load_all()
IDS = sorted(EXERCISES, key=lambda i: tuple(int(x) for x in i.split(".")))
#: Exercises whose answers read Debian's trans-de-en (chapter 16), skipped where it is missing,
#: as tests/test_translation.py is. 16.3 also reads the shipped test outputs
#: (``python -m utils.tasks.translation decode``); see the tests at the end for it on outputs of its own.
NEEDS_TRANS_DE_EN = {"16.3"}
HAVE_TRANS_DE_EN = tr.DATA.is_file()
PARAMS = [pytest.param(i, marks=pytest.mark.skipif(
    i in NEEDS_TRANS_DE_EN and not HAVE_TRANS_DE_EN, reason=f"{tr.DATA} is missing: `{tr.INSTALL}`")) for i in IDS]


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


@pytest.mark.parametrize("id", PARAMS)
def test_the_answer_and_its_rounded_form_are_accepted(id, capsys):
    ex = EXERCISES[id]
    expected = ex.expected()
    assert _feedback(capsys, id, expected)[0]
    if ex.precision.startswith("to "):
        decimals = int(ex.precision.split()[1])
        rounded = _map(expected, lambda v: round(v, decimals) if not isinstance(v, torch.Tensor) else v.round(decimals=decimals))
        ok, text = _feedback(capsys, id, rounded)
        assert ok, f"{id}: the answer rounded {ex.precision} is refused: {text}"


@pytest.mark.parametrize("id", PARAMS)
def test_numeric_exercises_state_their_precision_and_register_a_mistake(id):
    ex = EXERCISES[id]
    floats = [n for n in _numbers(ex.expected()) if not isinstance(n, numbers.Integral)]
    if floats:
        assert ex.precision, f"{id}: a float answer must state its precision (register(..., decimals=...))"
        assert ex.precision in ex.prompt or "decimal" in ex.prompt or "within" in ex.prompt, (
            f"{id}: the prompt must say how precise the answer must be ({ex.precision})")
    assert ex.mistakes, f"{id}: register at least one likely mistake (utils.exercises.mistake)"


@pytest.mark.parametrize("id", PARAMS)
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


@pytest.mark.parametrize("id", PARAMS)
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


# ---- 16.3 on translation outputs of its own ------------------------------------------
# The shipped outputs (utils.tasks.translation.train.OUTPUTS_FILE) are made from the shipped weights;
# these tests point the checker at a file of the same layout, so its logic is tested
# whatever the shipped file holds, and without it.

needs_trans_de_en = pytest.mark.skipif(not HAVE_TRANS_DE_EN, reason=f"{tr.DATA} is missing: `{tr.INSTALL}`")


def fake_translation_outputs(path):
    """Write a file like ``decode_test_split``'s: the real test sources, and for each of
    ``OUTPUT_KINDS`` each source's first reference, spoiled in one of five ways by turns
    (last word dropped, lowercased, words reversed, kept), the turns shifted per kind."""
    import json

    from utils.tasks.translation import train as mt

    sources, streams = tr.reference_streams(tr.cached_pairs(tr.data_path())["test"])
    outputs = {}
    for j, (which, decode) in enumerate(mt.OUTPUT_KINDS):
        hyps = []
        for i, ref in enumerate(streams[0]):
            words, k = ref.split(), (3 * i + j) % 5
            words = (words[:-1] if k == 0 and len(words) > 1 else [w.lower() for w in words] if k == 1
                     else words[::-1] if k == 2 else words)
            hyps.append(" ".join(words))
        outputs[f"{which} {decode}"] = hyps
    record = dict(kind="translation test outputs", sources=sources, versions={},
                  steps={"avg": [10, 20], "last": [20]}, outputs=outputs)
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def fake_outputs(tmp_path, monkeypatch):
    """16.3's checker reads a fake outputs file (mt.OUTPUTS_FILE is looked up when checked)."""
    from utils.tasks.translation import train as mt

    path = fake_translation_outputs(tmp_path / "de_en_test_outputs.json")
    monkeypatch.setattr(mt, "OUTPUTS_FILE", path)
    return path


@needs_trans_de_en
def test_16_3_checks_fake_outputs_like_every_exercise(fake_outputs, capsys):
    for test in (test_the_answer_and_its_rounded_form_are_accepted, test_wrong_answers_never_reveal_the_answer,
                 test_each_registered_mistake_is_rejected_with_its_own_message):
        test("16.3", capsys)
    test_numeric_exercises_state_their_precision_and_register_a_mistake("16.3")


@needs_trans_de_en
def test_16_3_expected_is_the_bleu_of_the_short_sources(fake_outputs):
    """Computed another way: the full reference streams, cut to the short sources' positions."""
    from utils.tasks.translation import train as mt

    outputs = mt.load_test_outputs(fake_outputs)
    sources, streams = tr.reference_streams(tr.cached_pairs(tr.data_path())["test"])
    assert sources == outputs["sources"]
    keep = [i for i, s in enumerate(sources) if len(s.split()) <= 5]
    hyps = [outputs["avg", "beam"][i] for i in keep]
    short_streams = [[stream[i] for i in keep] for stream in streams]
    expected = mt.bleu_chrf(hyps, short_streams)["bleu"]
    assert EXERCISES["16.3"].expected() == pytest.approx(expected, abs=1e-9)
    assert 0 < expected < 100


@needs_trans_de_en
def test_16_3_without_outputs_names_the_command(tmp_path, monkeypatch, capsys):
    from utils.tasks.translation import train as mt

    monkeypatch.setattr(mt, "OUTPUTS_FILE", tmp_path / "none.json")
    with pytest.raises(FileNotFoundError, match="python -m utils.tasks.translation decode"):
        check("16.3", 50.0)
