"""The interactive figures' own rules, without a browser (tests/test_figures_browser.py clicks them).

* Every browser script in ``utils/figures/js`` parses (``node --check``), and declares
  at its top level only ``var`` and functions, so a page may inline it twice.
* Each figure's HTML is deterministic (same inputs, same bytes: nbval compares it),
  loads nothing from another host, and has fixed ids.
* Bad input raises an error that says what was expected.
* The executed chapters hold the figures with today's scripts and styles (nbval compares
  the whole output; this names the stale chapter directly).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import nbformat
import pytest
import torch
from notebooks import ROOT

from utils.figures import (
    explorer_figure,
    explorer_steps,
    figure_json,
    pe_rotation_figure,
    schedule_figure,
    sentence_figure,
    sqrt_dk_figure,
)
from utils.figures.base import JS_DIR, script, style

JS_FILES = sorted(JS_DIR.glob("*.js"))
WORDS = ["The", "cat", "slept", "because", "it", "was", "tired"]
KEYS = torch.tensor([[0.2, 0.0], [2.0, 0.4], [0.3, 1.6], [0.0, 0.2], [1.0, 0.3], [0.1, 0.5], [0.4, 1.4]])
Q3 = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
V3 = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]])
# Each chapter cell that shows a figure, by the call that makes it.
CHAPTER_FIGURES = {
    "02_scaled_dot_product_attention": ["sentence_figure(", "sqrt_dk_figure("],
    "07_positional_encoding": ["pe_rotation_figure("],
    "10_training": ["schedule_figure("],
    "11_results": ["explorer_figure("],
}


def small_figures():
    return {
        "sentence": lambda: sentence_figure(WORDS, KEYS, KEYS, [KEYS.flip(1), KEYS], query=4),
        "sqrt_dk": lambda: sqrt_dk_figure(Q3, Q3, V3),
        "pe_rotation": lambda: pe_rotation_figure(),
        "schedule": lambda: schedule_figure(),
    }


def test_there_is_a_script_per_figure():
    names = {p.stem for p in JS_FILES}
    assert {"common", "sentence", "sqrt_dk", "explorer", "pe_rotation", "schedule"} <= names, names


@pytest.mark.parametrize("path", JS_FILES, ids=lambda p: p.name)
def test_script_parses_with_node(path):
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("node is not installed (Debian: apt-get install nodejs; bash .ci/test installs it as root)")
    proc = subprocess.run([node, "--check", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, f"{path.name} does not parse:\n{proc.stderr}"


@pytest.mark.parametrize("path", JS_FILES, ids=lambda p: p.name)
def test_script_declares_only_var_and_functions_at_top_level(path):
    bad = [line for line in path.read_text().splitlines() if re.match(r"(const|let|class)\s", line)]
    assert not bad, f"{path.name}: a second copy on the same page would fail on: {bad}"


def test_a_broken_script_is_caught(tmp_path):
    """node --check really rejects a syntax error (the check above can fail)."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("node is not installed")
    bad = tmp_path / "bad.js"
    bad.write_text("function f( { return 1; }\n")
    assert subprocess.run([node, "--check", str(bad)], capture_output=True).returncode != 0


@pytest.mark.parametrize("name", list(small_figures()))
def test_figure_html_is_deterministic_and_self_contained(name):
    make = small_figures()[name]
    a, b = make(), make()
    assert str(a) == str(b), f"{name}: two renderings of the same inputs differ"
    html = str(a)
    assert not re.search(r"(https?:)?//[\w.-]+\.\w", html.replace("http://www.w3.org/2000/svg", "")), (
        f"{name}: the figure refers to another host")
    assert not re.search(r"\b(src|href)=", html), f"{name}: the figure loads a file"
    assert f'id="{a.figure_id}"' in html and a.nbytes == len(html.encode())
    assert repr(a).startswith(f"<interactive figure {name!r}") and "0x" not in repr(a)
    assert html.count("<script>") == 1 and html.endswith("</script>")


def test_figure_json_rounds_and_sorts():
    assert figure_json({"b": 1 / 3, "a": [2.0, -1e-9]}, digits=4) == '{"a":[2.0,0.0],"b":0.3333}'
    assert "<\\/script>" in figure_json({"x": "</script>"})
    with pytest.raises(ValueError, match="finite"):
        figure_json({"x": float("nan")})
    with pytest.raises(TypeError, match="numbers"):
        figure_json({"x": object()})


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="one row per word"):
        sentence_figure(WORDS[:3], KEYS, KEYS, [KEYS, KEYS])
    with pytest.raises(ValueError, match="two"):
        sentence_figure(WORDS, KEYS, KEYS, [KEYS])
    with pytest.raises(ValueError, match=r"shape \(7, 2\)"):
        sentence_figure(WORDS, KEYS, KEYS, [KEYS, KEYS[:, :1]])
    with pytest.raises(ValueError, match="query must be a word index"):
        sentence_figure(WORDS, KEYS, KEYS, [KEYS, KEYS], query=7)
    with pytest.raises(TypeError, match="floating-point"):
        sentence_figure(WORDS, KEYS.long(), KEYS, [KEYS, KEYS])
    with pytest.raises(ValueError, match=r"\(n, 2\)"):
        sqrt_dk_figure(torch.ones(3, 3), torch.ones(3, 3), V3)
    with pytest.raises(ValueError, match="zero"):
        sqrt_dk_figure(torch.zeros(3, 2), Q3, V3)
    with pytest.raises(ValueError, match="even"):
        pe_rotation_figure(d_model=63)
    with pytest.raises(ValueError, match="i must be an int in 0..31"):
        pe_rotation_figure(i=32)
    with pytest.raises(ValueError, match="multiple of 100"):
        schedule_figure(warmup=450)
    with pytest.raises(ValueError, match="d_model must be one of"):
        schedule_figure(d_model=100)
    with pytest.raises(ValueError, match="figure_id"):
        schedule_figure(figure_id="Bad id")
    with pytest.raises(TypeError, match="Transformer"):
        explorer_steps(torch.nn.Linear(2, 2), torch.tensor([[5]]), torch.tensor([[1]]))
    with pytest.raises(ValueError, match="torch.long"):
        from utils import load_checkpoint
        explorer_steps(load_checkpoint(), torch.tensor([[5.0]]), torch.tensor([[1]]))
    with pytest.raises(ValueError, match="non-empty list"):
        explorer_figure([])


def test_explorer_has_the_14_steps_of_the_course():
    from utils import load_checkpoint

    steps = explorer_steps(load_checkpoint(3000), torch.tensor([[5, 3, 4, 7, 6]]), torch.tensor([[1, 6, 7, 4, 3, 5]]))
    shapes = [s["shape"] for s in steps]
    assert shapes == [(1, 5), (1, 5, 64), (1, 5, 64), (1, 5, 64), (1, 4, 5, 16), (1, 4, 5, 5), (1, 5, 64),
                      (1, 5, 256), (1, 5, 64), (1, 6), (1, 4, 6, 6), (1, 4, 6, 5), (1, 6, 13), (1, 6, 13)], shapes
    assert [s["phase"] for s in steps] == ["input"] * 4 + ["encoder"] * 5 + ["decoder"] * 3 + ["output"] * 2
    masked = torch.tensor(steps[10]["masked"])
    assert torch.equal(masked, torch.ones(6, 6, dtype=torch.bool).triu(1)), "the masked cells are above the diagonal"
    assert steps[13]["rows"][0][1][0][0] == "d", "after <s> the model should predict d"


@pytest.mark.parametrize("chapter", list(CHAPTER_FIGURES))
def test_chapters_show_their_figures(chapter):
    """Each chapter's executed notebook holds its figures' HTML, with a caption and a description."""
    nb = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
    for call in CHAPTER_FIGURES[chapter]:
        cells = [c for c in nb.cells if c.cell_type == "code" and call in c.source]
        assert cells, f"{chapter}: no cell calls {call}"
        html = [o["data"]["text/html"] for c in cells for o in c.outputs if "text/html" in o.get("data", {})]
        assert len(html) == 1, f"{chapter}: {call} should display one figure, found {len(html)}"
        text = "".join(html[0])
        assert '<figure class="aiayn-fig"' in text and "<figcaption" in text and 'class="fig-desc"' in text
        name = re.search(r'data-figure="(\w+)"', text).group(1)
        assert script(name) in text and style() in text, (
            f"{chapter}: the stored {name} figure has an old script or style: re-execute the chapter")
        data = json.loads(re.search(r"getElementById\(\"[\w-]+\"\), (\{.*\})\);</script>$", text, re.S).group(1))
        assert data, f"{chapter}: {call} embeds no data"
