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
    assert calls[1] == [sys.executable, "-m", "pip", "install", "--quiet", "matplotlib>=3.8,<4"]
    assert len(calls) == 2 and not any("torch" in " ".join(c) for c in calls)


def test_elsewhere_with_everything_installed_it_only_clones(tmp_path, monkeypatch):
    calls = exec_cell(tmp_path, monkeypatch)
    assert [c[:2] for c in calls] == [["git", "clone"]]


def test_without_torch_it_stops_with_a_clear_error(tmp_path, monkeypatch):
    with pytest.raises(ImportError, match="needs PyTorch"):
        exec_cell(tmp_path, monkeypatch, absent=("torch",))


def needed() -> dict[str, str]:
    """The setup cell's ``NEEDED``: {module: the requirement pip installs where it is missing}."""
    import ast

    for node in ast.parse(cell_source()).body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["NEEDED"]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{CANONICAL.name} defines no NEEDED = {{...}} of packages")


def test_it_installs_what_import_utils_needs_besides_torch():
    """Every third-party module named by an import statement (at the top or inside a function) of
    the modules that ``import utils`` loads is torch or in ``NEEDED`` (tqdm was once missing)."""
    probe = ("import ast, pathlib, sys\nimport utils\nfound = set()\n"
             "for name, m in list(sys.modules.items()):\n"
             "    if (name == 'utils' or name.startswith('utils.')) and getattr(m, '__file__', None):\n"
             "        for node in ast.walk(ast.parse(pathlib.Path(m.__file__).read_text())):\n"
             "            if isinstance(node, ast.Import):\n"
             "                found.update(a.name.split('.')[0] for a in node.names)\n"
             "            elif isinstance(node, ast.ImportFrom) and node.level == 0:\n"
             "                found.add(node.module.split('.')[0])\n"
             "print(' '.join(sorted(found - set(sys.stdlib_module_names) - {'utils'})))\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    third_party = set(out.split())
    assert {"numpy", "tqdm"} <= third_party, f"the probe found too little to prove anything: {third_party}"
    missing = sorted(third_party - {"torch"} - set(needed()))
    assert not missing, f"`import utils` imports {missing}, which {CANONICAL.name}'s NEEDED does not install"
    requirements = (ROOT / "requirements.txt").read_text()
    lines = set(requirements.splitlines())
    assert all(spec.startswith(f"{m}>=") and spec in lines for m, spec in needed().items()), \
        "every package of NEEDED is installed with its line of requirements.txt"


def test_it_prints_one_line_before_installing(tmp_path, monkeypatch, capsys):
    printed_before_pip = []
    recorder = Recorder()

    def run_and_look(cmd, **kwargs):
        if "pip" in cmd:
            printed_before_pip.append(capsys.readouterr().out)
        return recorder(cmd, **kwargs)

    exec_cell(tmp_path, monkeypatch, absent=("tabulate", "tqdm"))  # sets up the monkeypatches; then again, watched
    monkeypatch.setattr(subprocess, "run", run_and_look)
    capsys.readouterr()
    exec(compile(cell_source(), "setup_cell", "exec"), {"__name__": "setup_cell"})
    assert printed_before_pip == ["Installing tabulate, tqdm with pip, for the course's code...\n"]
    assert capsys.readouterr().out == ""


def test_a_failed_clone_says_what_to_do(tmp_path, monkeypatch):
    def offline(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 128, stdout="", stderr="fatal: unable to access '...': Could not resolve host")

    monkeypatch.delenv("COURSE_SOURCE", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(subprocess, "run", offline)
    with pytest.raises(RuntimeError, match=r"could not fetch the course .*Could not resolve host.*"
                                           r"On Kaggle, turn Internet on in the notebook's settings"):
        exec(compile(cell_source(), "setup_cell", "exec"), {"__name__": "setup_cell"})
    monkeypatch.setenv("COURSE_SOURCE", str(tmp_path / "no-such-copy"))  # a wrong local copy is not the network
    with pytest.raises(RuntimeError, match=r"from .*no-such-copy .*Check COURSE_SOURCE, which names where to clone"):
        exec(compile(cell_source(), "setup_cell", "exec"), {"__name__": "setup_cell"})


# ---------------------------------------------------------------- a downloaded notebook in a fresh environment

#: What a learner's own environment holds before the setup cell: PyTorch, Jupyter and pip.
FRESH = ("torch", "ipykernel", "nbclient", "pip")


def shelf_of(names, shelf: pathlib.Path) -> pathlib.Path:
    """A folder of links to the installed files of the distributions ``names`` and of everything
    they require (their markers evaluated, no extras), taken from this Python's environment: a
    fresh venv that lists it in a ``.pth`` file holds those packages and nothing else, without
    downloading torch again."""
    import importlib.metadata as md

    from packaging.requirements import Requirement

    shelf.mkdir(parents=True, exist_ok=True)
    todo, seen = list(names), set()
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        dist = md.distribution(name)
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
        tops = {pathlib.PurePosixPath(f).parts[0] for f in dist.files or []}
        for top in tops - {"..", "__pycache__"}:
            source, link = pathlib.Path(dist.locate_file(top)), shelf / top
            if not top.endswith(".pth") and source.exists() and not link.exists():
                link.symlink_to(source)
    return shelf


@pytest.mark.fresh_venv
def test_a_downloaded_notebook_runs_in_a_fresh_venv_with_only_torch_and_jupyter(snapshot, tmp_path):
    """The learner's case (issue 35): a chapter downloaded into an empty folder, opened where only
    PyTorch and Jupyter are installed. Its setup cell clones the course (``COURSE_SOURCE``: this
    working tree), pip-installs what ``utils`` needs, and the chapter runs top to bottom. The venv
    reaches this environment's torch, Jupyter and pip through a folder of links (no multi-GB
    download); pip installs the rest from the package index. Measured: 44 s of CPU time, this
    module's snapshot included (pip's installs and the chapter most of it); the wall time is
    that and the downloads on a quiet machine, much more on a busy one (the cell timeout is 900 s)."""
    fresh = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(fresh)], check=True, capture_output=True)
    python = fresh / "bin" / "python"
    site = pathlib.Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                       capture_output=True, text=True, check=True).stdout.strip())
    shelf = shelf_of(FRESH, (tmp_path / "shelf"))
    (site / "course_test_shelf.pth").write_text(f"{shelf}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(COURSE_SOURCE=snapshot, PIP_DISABLE_PIP_VERSION_CHECK="1")
    absent = subprocess.run([python, "-c", "import importlib.util as u, sys; "
                             f"print([m for m in {tuple(needed()) + ('utils',)!r} if u.find_spec(m)])"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert absent == "[]", f"the fresh venv already holds {absent}: this test would prove nothing"
    work = tmp_path / "downloads"
    work.mkdir()
    notebook = work / "00_preface.ipynb"
    shutil.copy(ROOT / "chapters" / "00_preface.ipynb", notebook)
    runner = ("import sys, nbformat\nfrom nbclient import NotebookClient\n"
              "nb = nbformat.read(sys.argv[1], as_version=4)\n"
              "nb.cells.append(nbformat.v4.new_code_cell('import sys, utils; print(sys.executable); print(utils.__file__)'))\n"
              "NotebookClient(nb, timeout=900, kernel_name='python3', resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
              "setup = next(c for c in nb.cells if c.cell_type == 'code')\n"
              "print('SETUP:' + ''.join(o.get('text', '') for o in setup.outputs).replace(chr(10), ' | '))\n"
              "print('LAST:' + nb.cells[-1].outputs[0]['text'].replace(chr(10), ' | '))\n")
    done = subprocess.run([python, "-c", runner, str(notebook), str(work)], cwd=work, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, f"the chapter failed in the fresh venv:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    lines = dict(line.split(":", 1) for line in done.stdout.splitlines() if line.startswith(("SETUP:", "LAST:")))
    assert lines["SETUP"].startswith("Installing numpy, matplotlib, tabulate, tqdm with pip"), lines["SETUP"]
    kernel_python, utils_file = lines["LAST"].split(" | ")[:2]
    assert pathlib.Path(kernel_python).parent == python.parent, f"the kernel ran {kernel_python}, not the fresh venv's"
    assert pathlib.Path(utils_file) == work / REPO_NAME / "utils" / "__init__.py"
