"""The setup cell (first cell of every notebook) works where a learner runs it.

The canonical cell is ``.ci/setup_cell.py``; ``.ci/apply_setup_cell.py`` copies it into
every notebook. Here it is run for real: inside the repository (it must print
nothing), and from a notebook copied outside any checkout, as in Colab or Kaggle,
where it must clone the course (from a snapshot of this working tree, given by
``COURSE_SOURCE``) and then let the chapter run.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient
from notebooks import ROOT, config, paired_markdown, read

CANONICAL = ROOT / ".ci" / "setup_cell.py"
REPO_NAME = config()["repository"]["url"].rstrip("/").rsplit("/", 1)[-1]


def cell_source() -> str:
    return CANONICAL.read_text(encoding="utf-8").strip("\n")


def run(cells: list[str], cwd: pathlib.Path, timeout=600):
    """Execute code cells in a fresh kernel (this Python) with working directory ``cwd``."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def text_of(cell) -> str:
    return "".join(o.get("text", "") or "".join(o.get("data", {}).get("text/plain", "")) for o in cell.outputs)


def test_canonical_cell_uses_the_configured_repository():
    url = config()["repository"]["url"]
    assert f'COURSE_REPO = "{url}"' in cell_source(), f"{CANONICAL.name} must use _config.yml's repository.url {url}"


def test_every_notebook_starts_with_the_canonical_cell():
    stale = []
    for md in paired_markdown():
        first = next(c for c in read(md).cells if c.cell_type == "code")
        if first.source.strip("\n") != cell_source() or "hide-cell" not in first.metadata.get("tags", []):
            stale.append(str(md.relative_to(ROOT)))
    assert not stale, ("these notebooks do not start with .ci/setup_cell.py (tagged hide-cell); run "
                       "`.venv/bin/python .ci/apply_setup_cell.py`: " + ", ".join(stale))


def test_in_the_repository_it_prints_nothing():
    nb = run([cell_source(), "import utils; print(pathlib.Path(utils.__file__).parent)"], ROOT / "chapters")
    assert nb.cells[0].outputs == [], f"the setup cell printed something locally: {nb.cells[0].outputs}"
    assert pathlib.Path(text_of(nb.cells[1]).strip()) == ROOT / "utils"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    """A git repository holding this working tree (tracked and new, non-ignored files), as a
    stand-in for the GitHub repository: a file:// URL, so `git clone --depth 1` works as there."""
    src = tmp_path_factory.mktemp("course_source")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        path = ROOT / rel
        if path.is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / rel)
    env = dict(os.environ, GIT_AUTHOR_NAME="test", GIT_AUTHOR_EMAIL="test@example.org",
               GIT_COMMITTER_NAME="test", GIT_COMMITTER_EMAIL="test@example.org")
    for cmd in (["init", "-q"], ["add", "-A"], ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "snapshot"]):
        subprocess.run(["git", *cmd], cwd=src, env=env, check=True, capture_output=True)
    return src.as_uri()


def test_outside_a_checkout_it_fetches_the_course_and_the_chapter_runs(snapshot, tmp_path, monkeypatch):
    chapter = ROOT / "chapters" / "00_preface.ipynb"
    work = tmp_path / "colab_content"
    work.mkdir()
    nb = nbformat.read(chapter, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import utils; print(pathlib.Path(utils.__file__).parent)"))
    monkeypatch.setenv("COURSE_SOURCE", snapshot)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    # Where the notebook runs, `utils` must not be importable before the setup cell.
    probe = subprocess.run([sys.executable, "-c", "import utils"], cwd=work, capture_output=True)
    assert probe.returncode != 0, "utils is importable outside the repository: this test would prove nothing"
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    setup = next(c for c in nb.cells if c.cell_type == "code")
    assert setup.outputs == [], f"the setup cell printed something: {setup.outputs}"
    clone = work / REPO_NAME
    assert (clone / "utils" / "__init__.py").is_file() and (clone / ".git").is_dir(), "the course was not cloned"
    assert pathlib.Path(text_of(nb.cells[-1]).strip()) == clone / "utils", "utils was not imported from the clone"
    # Rerunning the cell (a learner pressing run again) neither clones again nor fails.
    again = run([cell_source(), "import utils; print(pathlib.Path(utils.__file__).parent)"], work)
    assert again.cells[0].outputs == [] and pathlib.Path(text_of(again.cells[1]).strip()) == clone / "utils"


class Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, cmd, **kwargs):
        self.calls.append(list(cmd))
        return subprocess.CompletedProcess(cmd, 0)


def exec_cell(tmp_path, monkeypatch, absent=()):
    """Run the cell in this process with subprocess.run recorded and ``absent`` modules missing."""
    real = importlib.util.find_spec
    recorder = Recorder()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in absent else real(name, *a))
    monkeypatch.setattr(subprocess, "run", recorder)
    monkeypatch.delenv("COURSE_SOURCE", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    exec(compile(cell_source(), "setup_cell", "exec"), {"__name__": "setup_cell"})
    return recorder.calls


def test_elsewhere_it_clones_and_installs_only_missing_packages_never_torch(tmp_path, monkeypatch):
    calls = exec_cell(tmp_path, monkeypatch, absent=("matplotlib",))
    url = config()["repository"]["url"]
    assert calls[0] == ["git", "clone", "--quiet", "--depth", "1", url, str(tmp_path.resolve() / REPO_NAME)]
    assert calls[1] == [sys.executable, "-m", "pip", "install", "--quiet", "matplotlib"]
    assert len(calls) == 2 and not any("torch" in " ".join(c) for c in calls)


def test_elsewhere_with_everything_installed_it_only_clones(tmp_path, monkeypatch):
    calls = exec_cell(tmp_path, monkeypatch)
    assert [c[:2] for c in calls] == [["git", "clone"]]


def test_without_torch_it_stops_with_a_clear_error(tmp_path, monkeypatch):
    with pytest.raises(ImportError, match="needs PyTorch"):
        exec_cell(tmp_path, monkeypatch, absent=("torch",))
