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

import html as html_module
import json
import math
import re
import shutil
import subprocess

import nbformat
import numpy as np
import pytest
import torch
from notebooks import ROOT

from utils.core.masks import padding_mask, target_mask
from utils.figures import (
    cross_attention_figure,
    cross_attention_weights,
    explorer_figure,
    explorer_steps,
    figure_json,
    pe_rotation_figure,
    schedule_figure,
    sentence_figure,
    sqrt_dk_figure,
)
from utils.figures.base import JS_DIR, script, style
from utils.figures.cross_attention import DIGITS
from utils.model.transformer import Transformer

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
    "16_translation": ['figure_id="fig-ch16-cross-attention"', 'figure_id="fig-ch16-own"'],
}
# A German-English pair in SentencePiece pieces ("▁" starts a word), for chapter 16's cross-attention figure.
DE = ["▁Die", "▁Haus", "tür", "▁ist", "▁offen", "."]
EN = ["▁The", "▁front", "▁door", "▁is", "▁open", ".", "</s>"]  # the pieces predicted: tgt_in[1:] then </s>


def cross_attention_example():
    """(model, src, tgt_in): a small random Transformer (N = 2, h = 2), in train mode, and ids for DE, EN."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Transformer(20, d_model=16, h=2, d_ff=32, N=2)
        src = torch.randint(3, 20, (1, len(DE)))
        tgt_in = torch.cat([torch.tensor([[1]]), torch.randint(3, 20, (1, len(EN) - 1))], dim=1)  # <s> first
    return model, src, tgt_in


def cross_attention_example_figure(figure_id="fig-cross-attention"):
    model, src, tgt_in = cross_attention_example()
    return cross_attention_figure(DE, EN, cross_attention_weights(model, src, tgt_in), figure_id=figure_id)


def small_figures():
    return {
        "sentence": lambda: sentence_figure(WORDS, KEYS, KEYS, [KEYS.flip(1), KEYS], query=4),
        "sqrt_dk": lambda: sqrt_dk_figure(Q3, Q3, V3),
        "pe_rotation": lambda: pe_rotation_figure(),
        "schedule": lambda: schedule_figure(),
        "cross_attention": cross_attention_example_figure,
    }


def test_there_is_a_script_per_figure():
    names = {p.stem for p in JS_FILES}
    assert {"common", "sentence", "sqrt_dk", "explorer", "pe_rotation", "schedule", "cross_attention"} <= names, names


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


def _strings_of(html: str) -> dict:
    return json.loads(html_module.unescape(re.search(r"data-strings='([^']*)'", html).group(1)))


def explorer_example_figure():
    from utils import load_checkpoint

    steps = explorer_steps(load_checkpoint(3000), torch.tensor([[5, 3, 4, 7, 6]]), torch.tensor([[1, 6, 7, 4, 3, 5]]))
    return explorer_figure(steps)


@pytest.mark.parametrize("name", [*small_figures(), "explorer"])
def test_every_word_a_script_writes_comes_from_its_strings(name):
    """A script writes words only through its figure's table (L.t), so that the French edition
    can translate them (issue 37): every key the script uses is in the table the figure's Python
    passes, and every key of the table is used. (A key the script builds, "phase_" + p or the
    explorer's "s<step>.title", counts as the prefix it starts with.)"""
    fig = explorer_example_figure() if name == "explorer" else small_figures()[name]()
    strings = _strings_of(str(fig))
    assert strings == fig.strings and strings, f"{name}: no data-strings table"
    code = (JS_DIR / f"{name}.js").read_text()
    used = {k for arg in re.findall(r"\bL\.t\(([^,)]*)", code) for k in re.findall(r'"([a-z][a-z0-9_]*)"', arg)}
    prefixes = {k for k in used if k.endswith("_") or k == "s"}
    used -= prefixes
    shared = set(re.findall(r'\.t\("([a-z][a-z0-9_]*)"', (JS_DIR / "common.js").read_text()))  # "masked", in tables
    used |= shared & set(strings)
    assert used, f"{name}: the script writes no words through L.t"
    assert used <= set(strings), f"{name}: keys the script uses but the table lacks: {sorted(used - set(strings))}"
    built = {k for k in strings if any(re.match(rf"{p}(\d+\.)?[a-z0-9]", k) and k.startswith(p) for p in prefixes)}
    assert set(strings) - built <= used, f"{name}: keys nobody uses: {sorted(set(strings) - built - used)}"
    # no English word is written by the script outside the table (a quoted literal of 3+ letters)
    literals = re.findall(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'', re.sub(r"(?m)^\s*//.*$|  //.*$", "", code))
    words = [a or b for a, b in literals if re.search(r"[A-Za-z]{3,} [A-Za-z]{3,}", a or b) and "http" not in (a or b)]
    assert not words, f"{name}: English written by the script itself: {words}"


def test_a_template_must_have_well_formed_places():
    from utils.figures.base import check_strings

    assert check_strings({"a": "peak {peak}"}) == {"a": "peak {peak}"}
    with pytest.raises(ValueError, match="places"):
        check_strings({"a": "peak {Peak1}"})
    with pytest.raises(ValueError, match="empty"):
        check_strings({"a": " "})
    with pytest.raises(TypeError, match="dict of str"):
        check_strings({"a": 1})


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


def test_cross_attention_weights_are_the_decoder_layers_own():
    """Shape (N, h, tgt_len, src_len), rows summing to 1, equal to softmax(q k^T / sqrt(d_k)) computed by
    hand from each decoder layer's modules; the model's mode and keep_weights are restored."""
    model, src, tgt_in = cross_attention_example()
    model.decoder_layers[0].cross_attn.keep_weights = True  # a setting of the caller's, kept
    w = cross_attention_weights(model, src, tgt_in)
    assert w.shape == (2, 2, len(EN), len(DE)) and w.dtype == torch.float32
    assert (w.sum(-1) - 1).abs().max().item() < 1e-6 and (w >= 0).all()
    assert model.training, "the model is back in train mode"
    assert [layer.cross_attn.keep_weights for layer in model.decoder_layers] == [True, False]
    assert all(layer.cross_attn.weights is None for layer in model.decoder_layers), "weights left as they were"

    model.eval()
    with torch.no_grad():  # the decoder stack by hand (utils/model/transformer.py, utils/model/layers.py), in eval mode
        src_mask, tgt_mask = padding_mask(src, model.pad_id), target_mask(tgt_in, model.pad_id)
        memory = model.encode(src, src_mask)
        y, ref = model.embed_positions(tgt_in), []
        for layer in model.decoder_layers:
            x = layer.norm1(y + layer.self_attn(y, y, y, tgt_mask))
            mha = layer.cross_attn
            q, k = mha.split_heads(mha.w_q(x)), mha.split_heads(mha.w_k(memory))
            ref.append(torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(mha.d_k), dim=-1)[0])
            y = layer(y, memory, src_mask, tgt_mask)
    diff = (w - torch.stack(ref)).abs().max().item()
    print(f"cross-attention weights vs by hand: max abs difference {diff:.2e}")
    assert diff < 1e-6, diff
    assert not torch.allclose(w[0], w[1]), "two layers, two different maps"


def test_cross_attention_weights_restore_the_model_on_error():
    model, src, _ = cross_attention_example()
    with pytest.raises((IndexError, ValueError)):  # id 25 is outside the vocabulary of 20: the model raises
        cross_attention_weights(model, src, torch.tensor([[1, 25]]))
    assert model.training and not any(layer.cross_attn.keep_weights for layer in model.decoder_layers)


def test_cross_attention_figure_default_state():
    model, src, tgt_in = cross_attention_example()
    w = cross_attention_weights(model, src, tgt_in)
    fig = cross_attention_figure(DE, EN, w)
    html = str(fig)
    assert html.count("▁") == 1, "word starts are shown as ␣; only the caption names SentencePiece's ▁"
    assert ">␣front</button>" in html and "␣Haus" in fig.description and " tür " in fig.description
    assert json.loads(html[html.rindex('"), {') + 3:-len(");</script>")])["src"] == ["␣" + p[1:] if p[0] == "▁" else p
                                                                                 for p in DE]
    assert 'data-layer="2" aria-pressed="true"' in html and 'data-head="avg" aria-pressed="true"' in html
    assert 'data-query="0" aria-pressed="true"' in html and html.count("<button") == 3 + 3 + len(EN)
    row = w[-1, :, 0].double().mean(0)  # last layer, heads averaged, first piece
    top = int(row.argmax())
    assert f'attends most to "{DE[top].replace("▁", "␣")}"' in fig.description
    assert f"{100 * row.max().item():.1f}%" in fig.description and "layer 2 of 2" in fig.description
    assert 'predicts "␣The" (its input is "<s>")' in fig.description
    other = cross_attention_figure(DE, EN, w, layer=1, head=2, query=3, figure_id="fig-x")
    assert "layer 1 of 2, head 2" in other.description and 'predicts "␣is" (its input is "␣door")' in other.description
    assert cross_attention_figure(DE, EN, w, layer=np.int64(1), head=np.int32(2), query=np.int64(3),
                                  figure_id="fig-x").html == other.html, "NumPy ints are ints"


def test_cross_attention_figure_rounds_each_shown_weight_once():
    """Every weight the figure can show, to 0.1%, is the model's weight rounded once: the data
    the browser gets must not move a weight across a shown digit (with 4 decimals, 0.55153 went
    as 0.5515 and showed 55.1% for 55.2%)."""
    model, src, tgt_in = cross_attention_example()
    w = cross_attention_weights(model, src, tgt_in).double()
    html = str(cross_attention_figure(DE, EN, w))
    sent = torch.tensor(json.loads(html[html.rindex('"), {') + 3:-len(");</script>")])["weights"], dtype=torch.float64)
    assert (sent - w).abs().max().item() <= 0.5 * 10 ** -DIGITS
    shown = lambda x: [f"{v:.1f}" for v in (100 * x).flatten().tolist()]
    for true, given in [(w, sent), (w.mean(1), sent.mean(1)), (w.mean(0), sent.mean(0)), (w.mean((0, 1)), sent.mean((0, 1)))]:
        assert shown(true) == shown(given)


def test_cross_attention_bad_inputs_raise_clear_errors():
    model, src, tgt_in = cross_attention_example()
    w = cross_attention_weights(model, src, tgt_in)
    with pytest.raises(TypeError, match="Transformer"):
        cross_attention_weights(torch.nn.Linear(2, 2), src, tgt_in)
    with pytest.raises(TypeError, match="torch.long.*got dtype torch.float32"):
        cross_attention_weights(model, src.float(), tgt_in)
    with pytest.raises(TypeError, match="torch.Tensor"):
        cross_attention_weights(model, src[0].tolist(), tgt_in)
    with pytest.raises(ValueError, match=r"shape \(1, len\).*got \(6,\)"):
        cross_attention_weights(model, src[0], tgt_in)
    with pytest.raises(ValueError, match="batch 1.*got batch 2"):
        cross_attention_weights(model, src.repeat(2, 1), tgt_in.repeat(2, 1))
    with pytest.raises(ValueError, match="start with <s>"):
        cross_attention_weights(model, src, tgt_in[:, 1:])
    with pytest.raises(TypeError, match="4-D floating-point"):
        cross_attention_figure(DE, EN, w[0])
    with pytest.raises(TypeError, match="4-D floating-point"):
        cross_attention_figure(DE, EN, w.long())
    with pytest.raises(ValueError, match=r"tgt_len=6, src_len=6.*got \(2, 2, 7, 6\)"):
        cross_attention_figure(DE, EN[:-1], w)
    with pytest.raises(TypeError, match="src_pieces"):
        cross_attention_figure([], EN, w)
    with pytest.raises(ValueError, match="sum to 1"):
        cross_attention_figure(DE, EN, 2 * w)
    with pytest.raises(ValueError, match="finite"):
        cross_attention_figure(DE, EN, w.masked_fill(w > 0.2, float("nan")))
    with pytest.raises(ValueError, match=r"layer must be an int in 1..2"):
        cross_attention_figure(DE, EN, w, layer=0)
    with pytest.raises(ValueError, match=r"head must be None \(heads averaged\) or an int in 1..2"):
        cross_attention_figure(DE, EN, w, head=3)
    with pytest.raises(ValueError, match=r"query must be an English piece index in 0..6"):
        cross_attention_figure(DE, EN, w, query=7)
    with pytest.raises(ValueError, match="figure_id"):
        cross_attention_figure(DE, EN, w, figure_id="Fig 16")


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
        html = [h for h in html if '<figure class="aiayn-fig"' in "".join(h)]  # a results table may precede it
        assert len(html) == 1, f"{chapter}: {call} should display one figure, found {len(html)}"
        text = "".join(html[0])
        assert '<figure class="aiayn-fig"' in text and "<figcaption" in text and 'class="fig-desc"' in text
        name = re.search(r'data-figure="(\w+)"', text).group(1)
        assert script(name) in text and style() in text, (
            f"{chapter}: the stored {name} figure has an old script or style: re-execute the chapter")
        data = json.loads(re.search(r"getElementById\(\"[\w-]+\"\), (\{.*\})\);</script>$", text, re.S).group(1))
        assert data, f"{chapter}: {call} embeds no data"
