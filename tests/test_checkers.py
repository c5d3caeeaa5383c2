"""Every exercise's checker teaches without telling (utils/exercises/__init__.py).

For every registered exercise: the answer and the answer rounded to the stated
precision are accepted; zeros, the answer plus a small error, and each registered
mistake are rejected, and the feedback never contains the expected value in any form
the book prints numbers; each mistake gets its own message; every numeric exercise
states its precision and registers at least one likely mistake.
"""

from __future__ import annotations

import math
import numbers
import re

import numpy as np
import pytest
import torch

from utils.exercises import EXERCISES, _close, _kind, _load_all, check
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
                 test_each_registered_mistake_is_rejected_with_its_own_message,
                 test_an_answer_off_by_a_power_of_ten_is_named_so, test_a_wrong_type_says_what_was_expected_and_what_arrived):
        test("16.3", capsys)
    for kind in ("numpy", "torch", "lists", "tuples"):
        test_the_answer_is_accepted_in_the_forms_code_gives_it("16.3", kind, capsys)
    test_numeric_exercises_state_their_precision_and_register_a_mistake("16.3")
    bleu = EXERCISES["16.3"].expected()
    for answer, words in ((round(bleu / 100, 4), "divided by 100: the exercise asks for a value from 0 to 100, not a share"),
                          (round(bleu * 100), "times 100: look for an extra power of ten")):
        ok, text = _feedback(capsys, "16.3", answer)
        assert not ok and words in text, text


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


# ---- scale slips: the right answer times or divided by 10, 100 or 1,000 --------------

SCALES = (10, 100, 1000, 0.1, 0.01, 0.001)
SCALE_WORDS = ("is the right answer times", "is the right answer divided by")


def _scaled(x, f):
    """The answer with every number times ``f`` (ints only where they stay whole), or None."""
    if isinstance(x, torch.Tensor):
        return None if x.dtype == torch.bool else x * f
    if isinstance(x, np.ndarray):
        return x * f
    if isinstance(x, (bool, str)):
        return x
    if isinstance(x, numbers.Integral):
        if f >= 1:
            return x * int(f)
        return x // round(1 / f) if x % round(1 / f) == 0 else None
    if isinstance(x, numbers.Real):
        return x * f
    items = {k: _scaled(v, f) for k, v in x.items()} if isinstance(x, dict) else [_scaled(v, f) for v in x]
    if any(v is None for v in (items.values() if isinstance(items, dict) else items)):
        return None
    return items if isinstance(x, dict) else type(x)(items)


def _rounded(x, decimals):
    if isinstance(x, torch.Tensor):
        return x.round(decimals=decimals)
    if isinstance(x, float):
        return round(x, decimals)
    if isinstance(x, (list, tuple)):
        return type(x)(_rounded(v, decimals) for v in x)
    return x


@pytest.mark.parametrize("id", PARAMS)
def test_an_answer_off_by_a_power_of_ten_is_named_so(id, capsys):
    """Every numeric exercise names an answer scaled by 10, 100 or 1,000 (either way), also when the
    learner rounded the scaled number to the digits asked for, without the value; a share given as a
    percentage, and a percentage as a share, are named as such."""
    ex = EXERCISES[id]
    expected = ex.expected()
    if not [n for n in _numbers(expected) if n and not isinstance(n, bool)]:
        pytest.skip(f"{id}: the answer has no number but zeros and booleans")
    mistakes = [" ".join(m.message.split()) for m in ex.mistakes]
    tried = 0
    for f in SCALES:
        wrong = _scaled(expected, f)
        if wrong is None:
            continue
        answers = [wrong]
        if ex.precision.startswith("to "):  # the scaled number rounded to as many digits as asked for
            answers.append(_rounded(wrong, int(ex.precision.split()[1]) - round(math.log10(f))))
        for answer in answers:
            ok, text = _feedback(capsys, id, answer)
            assert not ok, f"{id}: the answer times {f} is accepted"
            _assert_silent_about(expected, text, f"{id}, times {f}")
            if any(m in text or m[0].upper() + m[1:] in text for m in mistakes):
                continue  # a registered mistake that gives this answer names it better
            assert any(w in text for w in SCALE_WORDS), f"{id}: the answer times {f} is not named: {text}"
            if ex.unit == "share" and f == 100:
                assert "not a percentage" in text, f"{id}: a share given as a percentage is not named: {text}"
            if ex.unit == "percent" and f == 0.01:
                assert "not a share" in text, f"{id}: a percentage given as a share is not named: {text}"
            tried += 1
    assert tried, f"{id}: no scaled answer was tried"


@pytest.mark.parametrize("id", PARAMS)
def test_shares_and_percentages_declare_their_unit(id):
    ex = EXERCISES[id]
    prompt = ex.prompt.lower()
    if re.search(r"\b(share|shares|fraction)\b", prompt) or "between 0 and 1" in prompt:
        assert ex.unit == "share", f"{id}: the prompt asks for a share; register it with unit='share'"
    if "0 to 100" in prompt or re.search(r"\bpercent", prompt) and not re.search(r"not (a )?percentage", prompt):
        assert ex.unit == "percent", f"{id}: the prompt asks for a percentage; register it with unit='percent'"


def test_the_reported_scale_slips_are_named(capsys):
    """Issue 36: 18.15 for a share of 0.1815... (17.3) and BLEU as a share (16.3 on its own outputs
    below) got a generic "not right"."""
    share = EXERCISES["17.3"].expected()
    for answer in (round(100 * share, 2), round(100 * share, 1)):
        ok, text = _feedback(capsys, "17.3", answer)
        assert not ok and "times 100: the exercise asks for a value from 0 to 1, not a percentage" in text, text
    ok, text = _feedback(capsys, "17.3", round(share, 2))  # too coarse: not a scale slip
    assert not ok and "is not right to 4 decimals" in text, text


def test_a_scale_slip_is_named_in_french(capsys):
    share = EXERCISES["17.3"].expected()
    assert not check("17.3", round(100 * share, 2), lang="fr")
    text = " ".join(capsys.readouterr().out.split())
    assert "multipliée par 100" in text and "pas un pourcentage" in text, text
    assert not check("14.1", EXERCISES["14.1"].expected() * 1000, lang="fr")
    out = capsys.readouterr().out  # not split on spaces: the thousands keep their narrow no-break space
    assert "multipliée par 1\u202f000" in out.replace("\n  ", " "), out


# ---- registered mistakes: named only for the answer they give ------------------------

def _items(x):
    return list(x) if isinstance(x, dict) else range(len(x))


@pytest.mark.parametrize("id", PARAMS)
def test_a_mistake_that_changes_several_items_is_not_named_for_one_of_them(id, capsys):
    """An answer that shares one item with a mistake's output, and is right elsewhere, made another
    slip: the mistake's message would mislead (16.1's merges got "count each word once")."""
    ex = EXERCISES[id]
    expected = ex.expected()
    if not isinstance(expected, (list, tuple, dict)):
        pytest.skip(f"{id}: the answer is one quantity")
    for m in ex.mistakes:
        wrong = m.answer()
        comparable, _ = _kind(wrong, expected)  # as the checker compares: within the tolerance
        changed = [k for k in _items(expected) if not _close(comparable[k], expected[k], ex.atol)]
        if len(changed) < 2:
            continue
        for k in changed:
            hybrid = dict(expected) if isinstance(expected, dict) else list(expected)
            hybrid[k] = wrong[k]
            ok, text = _feedback(capsys, id, hybrid if not isinstance(expected, tuple) else tuple(hybrid))
            message = " ".join(m.message.split())
            assert not ok and message not in text and message[0].upper() + message[1:] not in text, (
                f"{id}: item {k!r} alone of the mistake '{m.message}' gets its message: {text}")


def test_16_1_names_each_slip_a_learner_makes(capsys):
    """Issue 36: not recounting after a merge was told "count each word once", and ties broken
    alphabetically alone "learned without the end-of-word marker"; each slip, worked out by hand
    here, gets its own message."""
    slips = {
        # the four most frequent pairs of the first count: es 9, st 9, t▁ 9, we 8
        "most frequent pairs of the first count": [("e", "s"), ("s", "t"), ("t", "▁"), ("w", "e")],
        # after es, the first count's numbers: t▁ 9, then we 8 (really 2 by then)
        "keep the pair counts of the start": [("e", "s"), ("t", "▁"), ("w", "e"), ("l", "o")],
        # es·t (9) before t▁ (9): alphabetical order alone
        "break a tie alphabetically alone": [("e", "s"), ("es", "t"), ("est", "▁"), ("l", "o")],
        "count each word once": [("e", "s"), ("l", "o"), ("t", "▁"), ("lo", "w")],
        "without the end-of-word marker": [("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w")],
    }
    for words, answer in slips.items():
        ok, text = _feedback(capsys, "16.1", answer)
        assert not ok and words in text, f"{answer}: {text}"
        others = [w for w in slips if w != words]
        assert not any(w in text for w in others), f"{answer} gets another slip's message: {text}"
    ok, text = _feedback(capsys, "16.1", [("e", "s"), ("s", "t"), ("x", "y"), ("l", "o")])
    assert not ok and "answer[1] is not right; answer[2] is not right" in text.lower() and "Hint" in text, text
    assert "write the pair counts down after each merge" in text, text


# ---- the types the chapters' code gives ---------------------------------------------

def _form(x, kind):
    """``x`` in the form that code of kind ``kind`` gives it: "numpy", "torch" (numbers as 0-d
    tensors, sequences of numbers as 1-d tensors), "lists" or "tuples" (tensors as nested sequences)."""
    if isinstance(x, (bool, str)):
        return x
    if isinstance(x, torch.Tensor):
        if kind == "numpy":
            return x.numpy()
        if kind == "lists":
            return x.tolist()
        if kind == "tuples":
            return tuple(tuple(r) if isinstance(r, list) else r for r in x.tolist())
        return x
    if isinstance(x, numbers.Real):
        return np.asarray(x)[()] if kind == "numpy" else torch.tensor(x) if kind == "torch" else x
    if isinstance(x, dict):
        return {k: _form(v, kind) for k, v in x.items()}
    flat = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in x)
    if flat and kind == "numpy":
        return np.array(x)
    if flat and kind == "torch":
        return torch.tensor(x)
    items = [_form(v, kind) for v in x]
    return tuple(items) if kind == "tuples" else items if kind == "lists" else type(x)(items)


@pytest.mark.parametrize("id", PARAMS)
@pytest.mark.parametrize("kind", ["numpy", "torch", "lists", "tuples"])
def test_the_answer_is_accepted_in_the_forms_code_gives_it(id, kind, capsys):
    expected = EXERCISES[id].expected()
    ok, text = _feedback(capsys, id, _form(expected, kind))
    assert ok, f"{id}: the answer as {kind} give it is refused: {text}"


@pytest.mark.parametrize("id", PARAMS)
def test_a_wrong_type_says_what_was_expected_and_what_arrived(id, capsys):
    ok, text = _feedback(capsys, id, {1, 2})
    assert not ok and "should be" in text and "got a set" in text, f"{id}: {text}"


def test_17_1_accepts_what_additive_attention_returns(capsys):
    """Issue 36: 17.1 refused a torch tensor, which the chapter's own code produces."""
    from utils.exercises import ch17
    from utils.model.recurrent import additive_attention

    v = torch.nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        v.weight.copy_(torch.tensor([ch17.V_A]))
    context, _ = additive_attention(torch.tensor([ch17.QUERY]), torch.tensor([ch17.KEYS]), v, torch.tensor([ch17.VALUES]))
    assert context.requires_grad  # as a learner's cell gives it
    plain = context.detach()[0]
    for answer in (context, context[0], plain.numpy(), tuple(plain.tolist()), plain.tolist()):
        assert _feedback(capsys, "17.1", answer)[0], f"17.1 refuses {answer!r}"
    ok, text = _feedback(capsys, "17.1", torch.zeros(3))
    assert not ok and "Answer has shape (3,), expected shape (2,)" in text, text


# ---- the instructors' page: time and marking note of every exercise -------------------

@pytest.mark.parametrize("id", IDS)
def test_every_exercise_has_a_time_and_a_marking_note(id):
    ex = EXERCISES[id]
    assert isinstance(ex.minutes, int) and 0 < ex.minutes <= 60, f"{id}: register(minutes=...) missing or odd"
    assert len(ex.full.split()) >= 4, f"{id}: register(full=...) says what a full answer shows"
    assert len(ex.partial.split()) >= 4, f"{id}: register(partial=...) says what earns partial credit"
    _assert_silent_about(ex.expected() if id not in NEEDS_TRANS_DE_EN or HAVE_TRANS_DE_EN else [], ex.full + " " + ex.partial,
                         f"{id}, the marking note")


def test_the_instructors_page_shows_the_registrys_table():
    from utils.exercises import INSTRUCTORS_PAGE, marking_table, page_marking_table

    table = page_marking_table(INSTRUCTORS_PAGE.read_text(encoding="utf-8"))
    assert table == marking_table(), (
        "chapters/instructors.md's table of exercises differs from the registry's: "
        "run `python -m utils.exercises marking --write`")
    rows = table.splitlines()[2:]
    assert len(rows) == len(IDS)
    for id, row in zip(IDS, rows):
        ex = EXERCISES[id]
        assert row.startswith(f"| {{ref}}`{id} <") and f"| {ex.minutes} |" in row and ex.full in row and ex.partial in row


def test_the_marking_table_command_writes_the_page(tmp_path):
    from utils.exercises import INSTRUCTORS_PAGE, marking_table, page_marking_table, write_marking_table

    page = tmp_path / "instructors.md"
    text = INSTRUCTORS_PAGE.read_text(encoding="utf-8")
    stale = text.replace(marking_table(), "| Exercise |\n| --- |\n| old |")
    page.write_text(stale, encoding="utf-8")
    assert write_marking_table(page) and page_marking_table(page.read_text(encoding="utf-8")) == marking_table()
    assert not write_marking_table(page)
    page.write_text("no table here", encoding="utf-8")
    with pytest.raises(ValueError, match="must hold the lines"):
        write_marking_table(page)


def test_an_array_of_strings_is_named_as_such_not_as_integers(capsys):
    """Numbers typed as text, in a NumPy array, get "should be ..., got a numpy array ... dtype <U3",
    never the "integers, use floats" advice meant for an integer tensor; a boolean mask stays an answer."""
    check("2.1", np.array(["0.2", "0.3", "0.5"]))
    out = capsys.readouterr().out
    assert "dtype <U3" in out and "use floats" not in out
    check("2.1", np.array([0.2, "x", None], dtype=object))
    out = capsys.readouterr().out
    assert "dtype object" in out and "use floats" not in out
