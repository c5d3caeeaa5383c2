"""Unit tests of the generic answer checker in utils/exercises/__init__.py.

Each test gives a wrong answer of one kind and checks that the message names
what is wrong in kind (type, shape, NaN, sign, transposition, a constant factor, a
registered mistake) and never the right value (tests/test_checkers.py checks that for
every exercise of the course).
"""

import math

import numpy as np
import pytest
import torch

from utils.exercises import EXERCISES, Exercise, Mistake, check, diagnose, mistake, register

# ---- diagnose(): what is wrong, in kind, never the answer ----------------------------

def _ex(expected, atol=0.0, precision="", mistakes=()):
    ex = Exercise("0.0", "a toy", lambda: expected, atol, "", precision)
    for fn, message in mistakes:
        ex.mistakes.append(Mistake(fn, message))
    return ex


def test_right_answers_give_none():
    assert diagnose(torch.tensor([0.5, 0.25]), _ex(torch.tensor([0.5, 0.25]))) is None
    assert diagnose(np.array([[1.0, 2.0]]), _ex(torch.tensor([[1.0, 2.0]]))) is None
    assert diagnose(3, _ex(3)) is None
    assert diagnose(3.0, _ex(3)) is None  # a whole float is accepted for an int
    assert diagnose(np.int64(3), _ex(3)) is None  # and a NumPy integer
    assert diagnose(0.40114, _ex(0.4011, atol=1e-4)) is None
    assert diagnose(torch.tensor(0.5), _ex(0.5)) is None  # a one-element tensor for a float
    assert diagnose((2, 4, 6, 5), _ex((2, 4, 6, 5))) is None
    assert diagnose({"a": 1, "b": [1.0, 2.0]}, _ex({"a": 1, "b": [1.0, 2.0]})) is None
    assert diagnose("cat", _ex("cat")) is None


def test_wrong_type_for_a_tensor():
    msg = diagnose("0.5, 0.25", _ex(torch.tensor([0.5, 0.25])))
    assert msg == "answer should be a floating-point torch.Tensor of shape (2,), got a str ('0.5, 0.25')"
    msg = diagnose([[0.5], [0.25, 1.0]], _ex(torch.tensor([0.5, 0.25])))  # ragged: no tensor holds it
    assert msg == "answer should be a floating-point torch.Tensor of shape (2,), got a list of length 2"
    assert diagnose([0.5, 0.25, 1.0], _ex(torch.tensor([0.5, 0.25]))) == "answer has shape (3,), expected shape (2,)"


def test_wrong_type_for_an_int_uses_an():
    assert diagnose("16", _ex(16)) == "answer should be an int, got a str ('16')"
    assert diagnose(16.5, _ex(16)) == "answer should be an int, got a float (16.5)"
    assert diagnose(True, _ex(1)) == "answer should be an int, got a bool (True)"


def test_wrong_type_for_a_float_tuple_dict_and_str():
    assert diagnose("0.5", _ex(0.5)) == "answer should be a number, got a str ('0.5')"
    assert diagnose([2, 4], _ex((2, 4))) is None  # a list is fine for a tuple
    assert diagnose(24, _ex((2, 4))) == "answer should be a tuple, got an int (24)"
    assert diagnose([1], _ex({"a": 1})) == "answer should be a dict, got a list of length 1"
    assert diagnose(1, _ex("cat")) == "answer should be a str, got an int (1)"


def test_wrong_shape_names_both_shapes():
    assert diagnose(torch.zeros(3, 2), _ex(torch.ones(2, 3))) == "answer has shape (3, 2), expected shape (2, 3)"


def test_a_wrong_value_is_not_located_nor_given():
    expected = torch.tensor([[0.4011, 0.1978, 0.4011], [0.2483, 0.2483, 0.5035]])
    answer = expected.clone()
    answer[1, 2] = 0.6
    msg = diagnose(answer, _ex(expected, 6e-5, "to 4 decimals"))
    assert msg == "answer is not right to 4 decimals"
    assert "0.5035" not in msg and "(1, 2)" not in msg


def test_kinds_of_error_are_named():
    x = torch.tensor([[0.5, 0.25], [0.1, 0.9]])
    assert diagnose(-x, _ex(x, 1e-4)) == "answer has the wrong sign"
    assert diagnose(x.T, _ex(x, 1e-4)) == "answer is transposed: rows and columns are swapped"
    assert diagnose(torch.zeros(2, 2), _ex(x, 1e-4)) == "answer is zero everywhere"
    assert diagnose(x * 8, _ex(x, 1e-4)).startswith("answer is the right answer times a constant factor")
    assert diagnose(-0.73, _ex(0.73, 1e-4)) == "answer has the wrong sign"


def test_a_registered_mistake_gets_its_message_also_for_one_item():
    # A mistake that changes one item alone names that item, whatever the others hold.
    ex = _ex((0.25, 16), 1e-4, "to 4 decimals", [(lambda: (0.25, 15), "you divided by d - 1")])
    assert diagnose((0.25, 15), ex) == "you divided by d - 1"
    assert diagnose((0.3, 15), ex) == "answer[0] is not right to 4 decimals; answer[1]: you divided by d - 1"
    assert diagnose((0.3, 16), ex) == "answer[0] is not right to 4 decimals"


def test_a_registered_mistake_is_named_only_when_the_answer_equals_its_output():
    # A mistake that changes two items is named only for an answer equal to its output: an
    # answer that shares one item with it made another slip (exercise 16.1's merges).
    ex = _ex((0.25, 16), 1e-4, "to 4 decimals", [(lambda: (0.5, 15), "you divided by d - 1")])
    assert diagnose((0.5, 15), ex) == "you divided by d - 1"
    assert diagnose((0.25, 15), ex) == "answer[1] is not right to 4 decimals"
    merges = [("e", "s"), ("t", "x"), ("es", "tx")]
    ex = _ex(merges, mistakes=[(lambda: [("e", "s"), ("s", "t"), ("st", "x")], "these count each word once")])
    assert diagnose([("e", "s"), ("s", "t"), ("x", "y")], ex) == "answer[1] is not right; answer[2] is not right"
    assert diagnose([("e", "s"), ("s", "t"), ("st", "x")], ex) == "these count each word once"


def test_nan_is_not_accepted():
    # NaN compares False with everything, so a plain |a - e| > atol test would let it pass.
    assert diagnose(torch.tensor([[1.0, 2.0], [float("nan"), 4.0]]), _ex(torch.ones(2, 2))) == "answer contains NaN"
    assert diagnose(float("nan"), _ex(0.5)) == "answer is NaN, expected a number"
    assert diagnose(torch.tensor(float("nan")), _ex(0.5)) == "answer is NaN, expected a number"


def test_a_wrong_int_gets_no_direction():
    assert diagnose(1_048_575, _ex(1_048_576)) == "answer is not right"
    assert diagnose((2, 4, 5, 6), _ex((2, 4, 6, 5))) == "answer[2] is not right; answer[3] is not right"


def test_nested_structure_errors():
    assert diagnose((2, 4, 5), _ex((2, 4, 6, 5))) == "answer has 3 items, expected 4"
    assert diagnose({"a": 1}, _ex({"a": 1, "b": 2})) == "answer is missing the key(s) ['b']"
    assert diagnose({"a": 1, "b": 2, "c": 3}, _ex({"a": 1, "b": 2})) == "answer has unexpected key(s) ['c']"
    assert diagnose({"a": 1, "b": 3}, _ex({"a": 1, "b": 2})) == "answer['b'] is not right"


def test_unknown_expected_type_raises():
    with pytest.raises(TypeError, match="cannot compare expected answers of type object"):
        diagnose(1, _ex(object()))


def test_register_checks_its_precision():
    with pytest.raises(ValueError, match="decimals or atol, not both"):
        register("0.98", prompt="x", decimals=2, atol=0.1)
    with pytest.raises(ValueError, match="decimals must be an int from 0 to 12"):
        register("0.98", prompt="x", decimals=2.5)
    with pytest.raises(KeyError, match="register exercise '0.97' before its mistakes"):
        mistake("0.97", "nope")(lambda: 0)


# ---- check(): verdicts printed for the learner -----------------------------------

@pytest.fixture
def toy_exercise():
    """Register a throwaway exercise and remove it afterwards."""
    register("0.99", prompt="Twice three, an int.", hint="Add three to itself.")(lambda: 2 * 3)
    yield "0.99"
    del EXERCISES["0.99"]


def test_check_right_answer(toy_exercise, capsys):
    assert check(toy_exercise, 6)
    assert capsys.readouterr().out == "Exercise 0.99: correct.\n"


def test_check_wrong_answer_says_what_and_gives_the_hint(toy_exercise, capsys):
    assert not check(toy_exercise, 5)
    out = capsys.readouterr().out
    assert " ".join(out.split()) == "Exercise 0.99: not yet. Answer is not right. Hint: Add three to itself."
    assert all(len(line) <= 76 for line in out.splitlines()), "feedback lines are wrapped to 76 columns"


def test_check_refuses_an_id_that_is_not_a_string():
    with pytest.raises(TypeError, match='the exercise id must be a string such as "2.1", got a float'):
        check(2.1, 0)


def test_check_displays_nothing_in_a_notebook():
    v = check("2.1", ...)
    assert not v and repr(v) == "Verdict(ok=False)"
    assert v._ipython_display_() is None


def test_check_placeholder_says_what_is_expected(toy_exercise, capsys):
    assert not check(toy_exercise, ...)
    assert capsys.readouterr().out == "Exercise 0.99: not answered yet. Twice three, an int. Expected an int.\n"


def test_check_placeholder_for_a_tensor_gives_its_shape(capsys):
    assert not check("2.1", ...)
    out = capsys.readouterr().out
    assert out.startswith("Exercise 2.1: not answered yet.")
    assert " ".join(out.split()).endswith("Expected a floating-point torch.Tensor of shape (3,), to 4 decimals.")


def test_check_unknown_id_lists_the_known_ones():
    with pytest.raises(KeyError, match=r"no exercise '9\.9'; known exercises: \[.*'2\.1'"):
        check("9.9", 1)


def test_registering_an_id_twice_raises(toy_exercise):
    with pytest.raises(ValueError, match="exercise '0.99' is registered twice"):
        register("0.99", prompt="again")(lambda: 0)


def test_check_leaves_the_random_state_alone():
    # Expected answers may build modules with random weights; the learner's
    # random stream must continue as if check() had not run.
    torch.manual_seed(0)
    check("3.1", ...)
    after = torch.rand(3)
    torch.manual_seed(0)
    assert torch.equal(after, torch.rand(3))


# ---- the registered exercises of chapters 2 and 3 ---------------------------------

CH02_03 = ["2.1", "2.2", "2.3", "2.4", "3.1", "3.2", "3.3", "3.4"]


@pytest.mark.parametrize("ex_id", CH02_03)
def test_chapter_exercises_are_registered_and_accept_their_own_answer(ex_id, capsys):
    check(ex_id, ...)  # loads every chNN module
    expected = EXERCISES[ex_id].expected()
    assert check(ex_id, expected)


def test_chapter_2_expected_answers_match_hand_computation():
    e = math.e
    # 2.1: query 1 = [0, 1] without the division: raw scores [0, 1, 1]
    assert EXERCISES["2.1"].expected().tolist() == pytest.approx([1 / (1 + 2 * e), e / (1 + 2 * e), e / (1 + 2 * e)], abs=1e-6)
    # 2.2: query 2 with key 0 hidden: weights w, 1 - w on keys 1 and 2, w = 1 / (1 + e^(1/sqrt 2))
    w = 1 / (1 + math.exp(1 / math.sqrt(2)))
    assert EXERCISES["2.2"].expected().tolist() == pytest.approx([3 * (1 - w), 2 * w + (1 - w)], abs=1e-6)
    assert EXERCISES["2.3"].expected() == (16, 1.0)


def test_chapter_3_expected_answers_match_formulas():
    assert EXERCISES["3.1"].expected() == 4 * 1024**2
    assert EXERCISES["3.2"].expected() == (3, 8, 6, 5)
    assert EXERCISES["3.3"].expected() == 512 // 16
    assert EXERCISES["3.4"].expected() == 4 * (96 * 96 + 96)


def test_integer_tensor_for_a_float_answer_says_so():
    msg = diagnose(torch.tensor([1, 0]), _ex(torch.tensor([1.0, 0.0])))
    assert msg == ("answer should be a floating-point torch.Tensor of shape (2,), got integers "
                   "(a torch.Tensor of shape (2,) and dtype torch.int64); use floats")
    assert diagnose(torch.tensor([1.0, 0.0], dtype=torch.float64), _ex(torch.tensor([1.0, 0.0]))) is None


def test_chapter_16_expected_answers_match_hand_computation():
    from utils.model.transformer import count_parameters
    from utils.tasks.translation.train import MT_MODEL, new_model

    # 16.1: es (6 + 3 = 9); then t▁ and es·t tie at 9, t▁ is shorter; es·t▁ (9); l·o (5 + 2 = 7)
    assert EXERCISES["16.1"].expected() == [("e", "s"), ("t", "▁"), ("es", "t▁"), ("l", "o")]
    # 16.2: one more 4,000-row table; the output layer has no bias of its own
    assert EXERCISES["16.2"].expected() == count_parameters(new_model()) + 4000 * MT_MODEL["d_model"]


def test_chapter_16_joined_merges_get_a_type_message(capsys):
    assert not check("16.1", ["es", "t▁", "est▁", "lo"])
    out = " ".join(capsys.readouterr().out.split())
    assert "Answer[0] should be a tuple, got a str ('es')" in out
    assert check("16.1", [["e", "s"], ["t", "▁"], ["es", "t▁"], ["l", "o"]])  # lists for tuples are fine
