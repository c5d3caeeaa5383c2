"""Unit tests of the generic answer checker in utils/exercises/__init__.py.

Each test gives a wrong answer of one kind and checks that the message names
what is wrong (type, shape, position and value, NaN, off-by for ints, ...).
"""

import math

import numpy as np
import pytest
import torch

from utils.exercises import EXERCISES, check, compare, register

# ---- compare(): the sentence that says what is wrong -------------------------------

def test_right_answers_give_none():
    assert compare(torch.tensor([0.5, 0.25]), torch.tensor([0.5, 0.25])) is None
    assert compare(np.array([[1.0, 2.0]]), torch.tensor([[1.0, 2.0]])) is None
    assert compare(3, 3) is None
    assert compare(3.0, 3) is None  # a whole float is accepted for an int
    assert compare(0.40114, 0.4011, atol=1e-4) is None
    assert compare(torch.tensor(0.5), 0.5) is None  # a one-element tensor for a float
    assert compare((2, 4, 6, 5), (2, 4, 6, 5)) is None
    assert compare({"a": 1, "b": [1.0, 2.0]}, {"a": 1, "b": [1.0, 2.0]}) is None
    assert compare("cat", "cat") is None


def test_wrong_type_for_a_tensor():
    msg = compare([0.5, 0.25], torch.tensor([0.5, 0.25]))
    assert msg == "answer should be a floating-point torch.Tensor of shape (2,), got a list of length 2"


def test_wrong_type_for_an_int_uses_an():
    assert compare("16", 16) == "answer should be an int, got a str ('16')"
    assert compare(16.5, 16) == "answer should be an int, got a float (16.5)"
    assert compare(True, 1) == "answer should be an int, got a bool (True)"


def test_wrong_type_for_a_float_tuple_dict_and_str():
    assert compare("0.5", 0.5) == "answer should be a number, got a str ('0.5')"
    assert compare([2, 4], (2, 4)) is None  # a list is fine for a tuple
    assert compare(24, (2, 4)) == "answer should be a tuple, got an int (24)"
    assert compare([1], {"a": 1}) == "answer should be a dict, got a list of length 1"
    assert compare(1, "cat") == "answer should be a str, got an int (1)"


def test_wrong_shape():
    msg = compare(torch.zeros(3, 2), torch.zeros(2, 3))
    assert msg == "answer has shape (3, 2), expected shape (2, 3)"


def test_wrong_value_names_the_first_position_and_the_count():
    expected = torch.tensor([[0.4011, 0.1978, 0.4011], [0.2483, 0.2483, 0.5035]])
    answer = expected.clone()
    answer[1, 2] = 0.6
    answer[1, 0] = 0.3
    msg = compare(answer, expected)
    assert msg.startswith("answer has 2 wrong value(s); first at position (1, 0): got 0.3, expected 0.2483")


def test_value_within_tolerance_passes_and_outside_fails():
    assert compare(torch.tensor([1.00005]), torch.tensor([1.0]), atol=1e-4) is None
    assert compare(torch.tensor([1.001]), torch.tensor([1.0]), atol=1e-4) is not None
    assert compare(0.7208, 0.72075, atol=1e-4) is None
    assert compare(0.73, 0.72075, atol=1e-4) == "answer is 0.73, which is not within 0.0001 of the right value"


def test_nan_in_a_tensor_names_its_position():
    answer = torch.tensor([[1.0, 2.0], [float("nan"), 4.0]])
    assert compare(answer, torch.ones(2, 2)) == "answer contains NaN, first at position (1, 0)"


def test_nan_scalar_is_not_accepted():
    # NaN compares False with everything, so a plain |a - e| > atol test would let it pass.
    assert compare(float("nan"), 0.5) == "answer is NaN, expected a number"
    assert compare(torch.tensor(float("nan")), 0.5) == "answer is NaN, expected a number"


def test_int_off_by():
    assert compare(1_048_575, 1_048_576) == "answer is 1048575, which is not right (off by -1)"
    assert compare(16_704, 16_640) == "answer is 16704, which is not right (off by +64)"


def test_nested_paths_name_the_wrong_item():
    assert compare((2, 4, 5), (2, 4, 6, 5)) == "answer has 3 items, expected 4"
    assert compare((2, 4, 5, 6), (2, 4, 6, 5)) == "answer[2] is 5, which is not right (off by -1)"
    assert compare({"a": 1}, {"a": 1, "b": 2}) == "answer is missing the key(s) ['b']"
    assert compare({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 2}) == "answer has unexpected key(s) ['c']"
    assert compare({"a": 1, "b": 3}, {"a": 1, "b": 2}) == "answer['b'] is 3, which is not right (off by +1)"


def test_unknown_expected_type_raises():
    with pytest.raises(TypeError, match="cannot compare expected answers of type object"):
        compare(1, object())


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
    assert " ".join(out.split()) == (
        "Exercise 0.99: not yet. Answer is 5, which is not right (off by -1). Hint: Add three to itself.")
    assert all(len(line) <= 76 for line in out.splitlines()), "feedback lines are wrapped to 76 columns"


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
    assert " ".join(out.split()).endswith("Expected a floating-point torch.Tensor of shape (3,).")


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
    assert EXERCISES["2.1"].expected().tolist() == pytest.approx([e / (2 * e + e**2)] * 2 + [e**2 / (2 * e + e**2)], abs=1e-6)
    w = 1 / (1 + math.exp(1 / math.sqrt(2)))  # query 2 under the causal mask: weights w, 1 - w
    assert EXERCISES["2.2"].expected().tolist() == pytest.approx([w, 2 * (1 - w)], abs=1e-6)
    assert EXERCISES["2.3"].expected() == (16, 1.0)


def test_chapter_3_expected_answers_match_formulas():
    assert EXERCISES["3.1"].expected() == 4 * 1024**2
    assert EXERCISES["3.2"].expected() == (2, 4, 6, 5)
    assert EXERCISES["3.3"].expected() == 512 // 16
    assert EXERCISES["3.4"].expected() == 4 * (64 * 64 + 64)


def test_integer_tensor_for_a_float_answer_says_so():
    msg = compare(torch.tensor([1, 0]), torch.tensor([1.0, 0.0]))
    assert msg == ("answer should be a floating-point torch.Tensor of shape (2,), got integers "
                   "(a torch.Tensor of shape (2,) and dtype torch.int64); use floats")
    assert compare(torch.tensor([1.0, 0.0], dtype=torch.float64), torch.tensor([1.0, 0.0])) is None
