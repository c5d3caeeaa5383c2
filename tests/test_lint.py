"""The code is tidy: ruff, with the rules of tests/ruff.toml, over utils/, tests/, bench/,
.ci/ and the code cells of every notebook (ruff reads .ipynb files itself)."""

import re
import shutil
import subprocess

import pytest
from notebooks import ROOT

# A student copy of the course (`bash .ci/student-repo`) has no solutions/.
PATHS = [p for p in ("utils", "tests", "bench", ".ci", "chapters", "solutions") if (ROOT / p).is_dir()]


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


def test_nbval_sanitizer_replaces_only_progress_bars_and_rounding_noise():
    """tests/nbval_sanitize.cfg blanks tqdm bars (times vary) and the noise digits of a
    rounding-level figure printed by utils.core.numerics.within, and leaves every other output alone."""
    from nbval.plugin import get_sanitize_patterns

    patterns = get_sanitize_patterns((ROOT / "tests" / "nbval_sanitize.cfg").read_text())
    assert len(patterns) == 3, patterns

    def clean(s):
        for regex, replace in patterns:
            s = re.sub(regex, replace, s)
        return s

    bar = "training:  42%|####      | 1260/3000 [00:40<00:55, 31.2step/s]"
    done = "training: 100%|##########| 3000/3000 [01:36<00:00, 31.1step/s]"
    # stored (raw, with carriage returns and a cleared bar) and fresh (nbval collapses \r) agree
    assert clean(f"\r{bar}\r{' ' * 80}\r\r{done}\n") == clean(f"{done}\n") == "<progress bar>\n"
    # a rounding-level figure: the noise goes, the words and the bound stay
    a, b = "max |ours - nn.RNN| = 1.8e-07 < 1e-06\n", "max |ours - nn.RNN| = 0.0e+00 < 1e-06\n"
    assert clean(a) == clean(b) == "max |ours - nn.RNN| = ~ < 1e-06\n"
    assert clean(a) != clean("max |ours - nn.RNN| = 1.8e-07 < 1e-05\n")   # another bound is another claim
    assert clean(a) != clean("max |ours - nn.GRU| = 1.8e-07 < 1e-06\n")   # other words too
    assert clean("error 3.1e-08 &lt; 1e-06</p>") == clean("error 2.4e-08 &lt; 1e-06</p>")  # inside a figure's HTML
    for text in ["step   500  lr 0.003494  train loss 0.9731  test loss 0.6412\n",
                 "exact match 99.6% | 498/500 [unseen only]\n", "a 50%|b| table\n", "12%|x| 3/4\n",
                 "step 1: 1.747e-07\n", "max diff 1.8e-07\n", "FLOPs 7.729e+08 < 1e+09 is a count\n"]:
        assert clean(text) == text, text


