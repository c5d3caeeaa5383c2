"""``bash .ci/student-repo DIR --url URL`` writes a student copy of the course that can be published as is.

One copy is made per run (``utils/book/student_repo.py``, what the command runs: about
15 s, most of it the French catalogues' update), then checked the way a learner meets it:

- it holds no ``solutions/``, no solution block, no ``solution-values`` cell and no
  instructors' page, in English or French, and its settings, table of contents, setup
  cell and README are the student ones, pointing at URL;
- it builds with warnings as errors (the copy's own ``utils/book/editions.py``, what
  ``bash .ci/build`` runs there: about 15 s), and every Colab and Kaggle button opens the
  copy's notebook;
- the student edition's answer scan (``tests/test_student_edition.py``) finds no
  exercise's answer in any of its files or in its book;
- chapter 5 runs top to bottom from outside any checkout, through its setup cell, with
  ``COURSE_SOURCE`` set to a git repository of the copy (as Colab runs it: about 20 s).

In all about a minute. Wrong arguments are refused with what was expected and what arrived.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import nbformat
import pytest
import yaml
from bs4 import BeautifulSoup
from nbclient import NotebookClient
from notebooks import ROOT
from test_student_edition import IDS, answer_forms, found, text_files

_spec = importlib.util.spec_from_file_location("student_repo", ROOT / "utils" / "book" / "student_repo.py")
student_repo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(student_repo)

URL = "https://github.com/example-school/attention-students"
CHAPTER = "chapters/05_feed_forward"
SOLUTION_BLOCK = re.compile(r"^\s*(`{3,}|:{3,})\{solution\}", re.M)


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """The student copy, made once by the command's script, as an instructor runs it."""
    target = tmp_path_factory.mktemp("student_repo") / "attention-students"
    proc = subprocess.run([sys.executable, str(ROOT / "utils" / "book" / "student_repo.py"), str(target),
                           "--url", URL], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "git push" in proc.stdout, f"the command does not print the publishing steps:\n{proc.stdout}"
    return target


@pytest.fixture(scope="module")
def copy_html(copy, tmp_path_factory):
    """The copy's book, built by the copy's own ``bash .ci/build`` script (warnings are errors)."""
    base = tmp_path_factory.mktemp("student_repo_build")
    proc = subprocess.run([sys.executable, str(copy / "utils" / "book" / "editions.py")], capture_output=True,
                          text=True, cwd=copy, env=dict(os.environ, COURSE_BUILD_DIR=str(base)))
    assert proc.returncode == 0, "the student copy does not build with -W:\n" + (proc.stdout + proc.stderr)[-4000:]
    return base / "_build" / "html"


def test_the_copy_carries_the_workflows_that_test_and_publish_it(copy):
    """The copy's GitHub workflows are the course's: its tests on every push, its own book (the student
    edition, its default build) published to GitHub Pages by its ``bash .ci/site``."""
    for name in ("tests.yml", "publish.yml"):
        assert (copy / ".github" / "workflows" / name).read_text() == (ROOT / ".github" / "workflows" / name).read_text()
    assert (copy / ".ci" / "site").is_file() and (copy / "utils" / "book" / "publish_site.py").is_file()


def test_the_copy_has_no_solutions_and_points_at_its_url(copy):
    assert not (copy / "solutions").exists() and not (copy / ".git").exists()
    assert not list(copy.glob("chapters/instructors.*")) and not list(copy.rglob("*instructors.po"))
    assert not (copy / "locales" / "fr" / "LC_MESSAGES" / "solutions").exists()
    assert not (copy / ".ci" / "student-repo").exists() and not (copy / "tests" / "test_editions.py").exists()
    for path in sorted(copy.glob("chapters/*")):
        text = path.read_text(encoding="utf-8") if path.suffix in (".md", ".ipynb") else ""
        assert not SOLUTION_BLOCK.search(text.replace('\\n', '\n')), f"{path.name} keeps a {{solution}} block"
        assert "solution-values" not in text and "instructor-only" not in text, path.name
    config = yaml.safe_load((copy / "_config.yml").read_text())
    assert config["repository"]["url"] == URL and "hide_solutions" not in config["sphinx"]["config"]
    assert config["title"].endswith("(student edition)") and not config["title"].endswith("(student edition)" * 2)
    assert config["sphinx"]["local_extensions"] == {"course_book": "utils/book", "offline_math": "utils/book"}
    toc = (copy / "_toc.yml").read_text()
    assert "solutions/" not in toc and "instructors" not in toc and "chapters/05_feed_forward" in toc
    assert f'COURSE_REPO = "{URL}"' in (copy / ".ci" / "setup_cell.py").read_text()
    nb = nbformat.read(copy / f"{CHAPTER}.ipynb", as_version=4)
    assert f'COURSE_REPO = "{URL}"' in next(c for c in nb.cells if c.cell_type == "code").source
    readme = (copy / "README.md").read_text()
    assert "student edition" in readme and "instructor-only" not in readme and "student-only" not in readme
    assert "solutions/" not in readme and "student-repo" not in readme and "instructors' page" not in readme


def test_the_copy_builds_and_its_buttons_open_its_own_notebooks(copy_html):
    assert not (copy_html / "solutions").exists() and not (copy_html / "chapters" / "instructors.html").exists()
    soup = BeautifulSoup((copy_html / f"{CHAPTER}.html").read_text(encoding="utf-8"), "html.parser")
    hrefs = {a["href"] for a in soup.find_all("a", href=True)}
    owner_repo = URL.removeprefix("https://github.com/")
    assert f"https://colab.research.google.com/github/{owner_repo}/blob/main/{CHAPTER}.ipynb" in hrefs, hrefs
    assert f"https://kaggle.com/kernels/welcome?src={URL}/blob/main/{CHAPTER}.ipynb" in hrefs, hrefs
    assert not soup.select("div.solution"), "a solution is shown in the copy's book"
    # `bash .ci/build fr` in the copy writes the French book where this page's link points.
    french = [a["href"] for a in soup.find_all("a", hreflang="fr")]
    assert french == [f"../../fr/_build/html/{CHAPTER}.html"], french


def test_the_answer_scan_finds_nothing_in_the_copy_or_its_book(copy, copy_html):
    files = {f"book/{k}": v for k, v in text_files(copy_html).items()}
    files.update(text_files(copy))
    files.update({str(p.relative_to(copy)): p.read_text(encoding="utf-8") for p in copy.rglob("*.po")})
    assert len([f for f in files if f.endswith(".ipynb")]) >= 2 * 18, "the scan misses the copy's notebooks"
    forms = {id: sorted(answer_forms(id, min_digits=4)) for id in IDS}

    def leaks(files):
        return [f"Exercise {id}: {form} in {', '.join(where[:3])}" for id in IDS for form in forms[id]
                if (where := [name for name, text in files.items() if found(form, text)])]

    found_in_copy = leaks(files)
    assert not found_in_copy, f"{len(found_in_copy)} answer(s) found in the student copy:\n  " + "\n  ".join(found_in_copy)
    # The scan can fail: the course's own chapter notebooks hold the values their solutions quote.
    instructor = leaks({p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "chapters").glob("*.ipynb"))})
    assert len({leak.split(":")[0] for leak in instructor}) >= 10, instructor


def test_a_chapter_of_the_copy_runs_through_its_setup_cell(copy, tmp_path, monkeypatch):
    """As in Colab: the notebook alone, outside any checkout; its setup cell clones the copy
    (a git repository of it stands in for URL) and the chapter runs top to bottom."""
    source = tmp_path / "published"  # the publishing steps the command prints, but the push
    shutil.copytree(copy, source)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"],
                ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "Student edition"]):
        subprocess.run(["git", *cmd], cwd=source, env=env, check=True, capture_output=True)
    work = tmp_path / "colab_content"
    work.mkdir()
    nb = nbformat.read(copy / f"{CHAPTER}.ipynb", as_version=4)
    stored = [c.outputs for c in nb.cells if c.cell_type == "code"]
    nb.cells.append(nbformat.v4.new_code_cell("import utils; print(pathlib.Path(utils.__file__).parent)"))
    monkeypatch.setenv("COURSE_SOURCE", source.as_uri())
    monkeypatch.delenv("PYTHONPATH", raising=False)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    clone = work / URL.rsplit("/", 1)[-1]
    assert (clone / "utils" / "__init__.py").is_file() and not (clone / "solutions").exists()
    last = "".join(o.get("text", "") for o in nb.cells[-1].outputs).strip()
    assert pathlib.Path(last) == clone / "utils", f"utils was imported from {last}, not from the clone"
    ran = [c for c in nb.cells if c.cell_type == "code"][:-1]
    assert len(ran) == len(stored) and all(c.execution_count for c in ran)
    errors = [o for c in ran for o in c.outputs if o.get("output_type") == "error"]
    assert not errors, f"{CHAPTER} failed in the copy: {errors[0].get('ename')}: {errors[0].get('evalue')}"


@pytest.mark.parametrize("args, message", [
    (["--url", URL], "arguments are required: DIR"),
    (["{dir}"], "--url is missing"),
    (["{dir}", "--url", "github.com/x/y"], "must be an http(s) address"),
    (["{dir}", "--url", "https://gitlab.com/x/y"], "must be a GitHub repository"),
    (["{full}", "--url", URL], "exists and is not empty"),
    (["{file}", "--url", URL], "exists and is a file"),
])
def test_wrong_arguments_say_what_was_expected(tmp_path, args, message):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    (tmp_path / "file").write_text("mine")
    names = {"dir": tmp_path / "new", "full": tmp_path / "full", "file": tmp_path / "file"}
    argv = [a.format(**{k: str(v) for k, v in names.items()}) for a in args]
    proc = subprocess.run([sys.executable, str(ROOT / "utils" / "book" / "student_repo.py"), *argv],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and message in proc.stderr, proc.stdout + proc.stderr
    assert not (tmp_path / "new").exists() and sorted(os.listdir(tmp_path / "full")) == ["notes.txt"]


def test_the_readme_markers_keep_the_instructors_text_out():
    text = ("A.\n<!-- instructor-only -->\nsecret `solutions/`\n<!-- /instructor-only -->\n"
            "<!-- student-only\n**Student edition.**\n-->\nB, <!-- instructor-only -->C and <!-- /instructor-only -->"
            "D<!-- student-only: and E-->.\n")
    assert student_repo.readme_text(text) == "A.\n\n**Student edition.**\nB, D and E.\n"
    with pytest.raises(ValueError, match="instructor-only"):
        student_repo.readme_text("A <!-- instructor-only --> B\n")
