"""The code is tidy: ruff, with the rules of tests/ruff.toml, over utils/, tests/, bench/,
.ci/ and the code cells of every notebook (ruff reads .ipynb files itself)."""

import re
import shutil
import subprocess

import pytest
from notebooks import ROOT

PATHS = ["utils", "tests", "bench", ".ci", "chapters", "solutions"]


def ruff() -> str:
    exe = shutil.which("ruff", path=str(ROOT / ".venv" / "bin")) or shutil.which("ruff")
    if exe is None:
        pytest.fail("ruff is not installed: it is in requirements.txt (bash .ci/venv installs it)")
    return exe


def test_ruff_passes():
    proc = subprocess.run([ruff(), "check", "--config", "tests/ruff.toml", "--no-cache", "--output-format", "concise",
                           *PATHS], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, ("ruff found problems (fix them, or run `.venv/bin/ruff check --config "
                                  "tests/ruff.toml --fix` for the fixable ones; a notebook is fixed in its .md, "
                                  "then `bash .ci/sync`):\n" + proc.stdout + proc.stderr)


def test_ruff_sees_the_notebooks_and_catches_a_planted_error(tmp_path):
    """The linter really reads notebook cells: an unused import planted in a copy is reported."""
    import nbformat

    nb = nbformat.read(ROOT / "chapters" / "02_scaled_dot_product_attention.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import json\n"))
    bad = tmp_path / "planted.ipynb"
    nbformat.write(nb, bad)
    proc = subprocess.run([ruff(), "check", "--config", str(ROOT / "tests" / "ruff.toml"), "--no-cache",
                           "--output-format", "concise", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1 and re.search(r"F401 .*json", proc.stdout), proc.stdout + proc.stderr


def test_nbval_sanitizer_only_replaces_progress_bars():
    """tests/nbval_sanitize.cfg blanks tqdm bars (times vary) and leaves every other output alone."""
    from nbval.plugin import get_sanitize_patterns

    patterns = get_sanitize_patterns((ROOT / "tests" / "nbval_sanitize.cfg").read_text())
    assert len(patterns) == 2, patterns

    def clean(s):
        for regex, replace in patterns:
            s = re.sub(regex, replace, s)
        return s

    bar = "training:  42%|####      | 1260/3000 [00:40<00:55, 31.2step/s]"
    done = "training: 100%|##########| 3000/3000 [01:36<00:00, 31.1step/s]"
    # stored (raw, with carriage returns and a cleared bar) and fresh (nbval collapses \r) agree
    assert clean(f"\r{bar}\r{' ' * 80}\r\r{done}\n") == clean(f"{done}\n") == "<progress bar>\n"
    for text in ["step   500  lr 0.003494  train loss 0.9731  test loss 0.6412\n",
                 "exact match 99.6% | 498/500 [unseen only]\n", "a 50%|b| table\n", "12%|x| 3/4\n"]:
        assert clean(text) == text, text
