"""The times the book states are the measured ones: each chapter's "**Time:**" line and
README's sentence on the slow chapters say what ``bench/chapter_times.json`` holds
(``bench/chapter_times.py`` measures and writes it; ``stated_time`` says a time in words)."""

from __future__ import annotations

import importlib.util
import re

import pytest
from notebooks import ROOT

spec = importlib.util.spec_from_file_location("chapter_times", ROOT / "bench" / "chapter_times.py")
times = importlib.util.module_from_spec(spec)
spec.loader.exec_module(times)


@pytest.mark.parametrize("seconds, said", [(0.4, "about 1 s"), (5.6, "about 6 s"), (9.4, "about 9 s"),
                                           (9.6, "about 10 s"), (71, "about 70 s"), (93, "about 95 s"),
                                           (97.4, "about 95 s"), (98, "about 100 s"), (124, "about 120 s"),
                                           (176, "about 3 minutes"), (330, "about 6 minutes")])
def test_stated_time_rounds_as_documented(seconds, said):
    assert times.stated_time(seconds) == said


@pytest.mark.parametrize("bad", [0, -3, "5", True, None, float("nan")])
def test_stated_time_refuses_what_is_not_a_positive_number(bad):
    with pytest.raises(ValueError, match="seconds must be a positive number"):
        times.stated_time(bad)


def test_every_chapter_is_measured_on_a_named_machine():
    table = times.read_table()
    assert {p.stem for p in times.chapters()} <= set(table["seconds"]), "measure the new chapters"
    assert table["machine"] and table["measured"] and table["versions"]["torch"]


def test_each_chapter_states_its_measured_time():
    table = times.read_table()
    wrong = []
    for nb in times.chapters():
        text = nb.with_suffix(".md").read_text()
        line = re.search(r"\*\*Time:\*\*(.*?)\n\n", text, re.S).group(1).replace("\n", " ")
        said = re.search(r"the notebook runs in (about \d+ (?:s|minutes)) on two CPU cores", line)
        want = times.stated_time(table["seconds"][nb.stem])
        if not said or said.group(1) != want:
            wrong.append(f"{nb.stem}: says {said.group(1) if said else line!r}, measured {want}")
    assert not wrong, "\n".join(wrong)


def test_readme_names_the_slow_chapters_with_their_measured_times():
    sentence = times.slow_chapters_sentence(times.read_table())
    assert sentence in " ".join((ROOT / "README.md").read_text().split()), sentence


#: Words of prose a learner reads per minute in a technical text with formulas and code.
READING_WORDS_PER_MINUTE = 200


def study_minutes_needed(md) -> int:
    """The exercises' registered minutes (the instructors' page) plus the chapter's prose at
    ``READING_WORDS_PER_MINUTE``, rounded up to 5 minutes: the least a **Time:** line may say."""
    import importlib

    import utils.exercises as ex

    chapter = int(md.name[:2])
    if chapter:
        importlib.import_module(f"utils.exercises.ch{chapter:02d}")
    exercises = sum(e.minutes for k, e in ex.EXERCISES.items() if k.split(".")[0] == str(chapter))
    prose = re.sub(r"```.*?```", "", md.read_text().split("\n---\n", 2)[-1], flags=re.S)
    need = exercises + len(re.findall(r"[A-Za-z]+", prose)) / READING_WORDS_PER_MINUTE
    return 5 * -(-need // 5)


def test_each_chapter_allows_time_for_its_prose_and_its_exercises():
    """An instructor plans from the **Time:** line: it must leave time to read the prose after
    the exercises' own minutes (before this test, chapter 13 gave 30 minutes in all and its
    exercises alone 30)."""
    short = []
    for nb in times.chapters():
        md = nb.with_suffix(".md")
        stated = int(re.search(r"\*\*Time:\*\* about (\d+) minutes", md.read_text()).group(1))
        if stated < study_minutes_needed(md):
            short.append(f"{md.name}: says {stated} minutes, needs at least {study_minutes_needed(md):.0f}")
    assert not short, "\n".join(short)


def test_the_start_page_gives_each_chapter_its_measured_time():
    """The start page's table has a "Run time" column: each row says what the chapter's own
    **Time:** line says (``stated_time`` of the measured seconds, without "about")."""
    table = times.read_table()
    rows = re.findall(r"^\| \{doc\}`[^<]*<(\d\d_\w+)>` \|.*\| (\d+ (?:s|minutes))[^|]*\|$",
                      (ROOT / "chapters" / "index.md").read_text(), re.M)
    assert {stem for stem, _ in rows} == {nb.stem for nb in times.chapters()}
    wrong = [f"{stem}: {said}, measured {times.stated_time(table['seconds'][stem])}" for stem, said in rows
             if "about " + said != times.stated_time(table["seconds"][stem])]
    assert not wrong, "\n".join(wrong)
