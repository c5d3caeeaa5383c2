"""The interactive figures work in the built book: Chromium clicks every control.

For each figure the test operates its controls (mouse and keyboard), reads the numbers
it displays (the table cells, and the JSON it keeps in its ``data-state`` attribute) and
compares them with values computed here in Python from the same inputs: the sentence
for four query words, with and without the causal mask, for head 1, head 2 and both;
the sqrt(d_k) figure at three angles and at d = 2, 64 and 512 with and without the
division; every step of the explorer (its shape and its numbers) against the shipped
checkpoint; the positional-encoding rotation and the learning-rate schedule at three
settings each; chapter 16's cross-attention for every layer and head (and their averages)
and several English pieces. It also checks that every control is reached with the Tab key and shows
a focus outline, that no request left 127.0.0.1 (the book ships its MathJax), that each
figure also works alone on a blank page (as in a notebook, once its cell has run), and it saves a
screenshot of each figure in its default and in a changed state (``COURSE_SCREENSHOT_DIR``).

Needs Chromium, as ``tests/test_browser.py`` (whose fixtures it uses).
"""

from __future__ import annotations

import json
import math
import os
import re
from urllib.parse import urljoin

import nbformat
import pytest
import test_browser
import torch
from notebooks import ROOT
from test_figures import cross_attention_example_figure

from utils import load_checkpoint, positional_encoding, rate, scaled_dot_product_attention
from utils.core.masks import causal_mask

browser = test_browser.browser
site = test_browser.site
screenshot_dir = test_browser.screenshot_dir

PAGES = {
    "fig-sentence": "chapters/02_scaled_dot_product_attention",
    "fig-sqrt-dk": "chapters/02_scaled_dot_product_attention",
    "fig-pe-rotation": "chapters/07_positional_encoding",
    "fig-schedule": "chapters/10_training",
    "fig-explorer": "chapters/11_results",
}
# Chapter 16 (German to English) joins PAGES, and so every test below, once its source shows the
# figure (a cell calling cross_attention_figure(..., figure_id="fig-ch16-cross-attention")).
CROSS_ID, CROSS_PAGE = "fig-ch16-cross-attention", "chapters/16_translation"
# Figures a chapter shows besides those of PAGES: chapter 16's second cross-attention figure (the
# reader's own sentence; the same kind of figure as CROSS_ID, checked there).
EXTRA_FIGURES = {"fig-ch16-own": CROSS_PAGE}
CROSS_SOURCE = ROOT / f"{CROSS_PAGE}.md"
if CROSS_SOURCE.is_file() and CROSS_ID in CROSS_SOURCE.read_text(encoding="utf-8"):
    PAGES[CROSS_ID] = CROSS_PAGE
NUM = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


@pytest.fixture(scope="module")
def book(browser, site, screenshot_dir):
    """A page of the served book and what went wrong on the way: {page, open, external, errors}."""
    external, errors = set(), []
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.route("**/*", test_browser.offline_route(site, external, also_allow=("data:",)))
    # The figures do not need typeset formulas (tests/test_browser.py checks those on every
    # page): without MathJax each long page loads in a fraction of the time.
    # (An empty script, not an aborted request, which the console would report as an error.)
    context.route("**/_static/mathjax/**", lambda r: r.fulfill(status=200, content_type="text/javascript", body=""))
    page = context.new_page()
    test_browser.watch_errors(page, errors)
    state = {"url": None}

    def open_figure(fid):
        url = site + PAGES[fid] + ".html"
        if state["url"] != url:
            page.goto(url, wait_until="load", timeout=60000)
            state["url"] = url
        page.wait_for_selector(f"#{fid}[data-state]", timeout=10000)
        page.locator(f"#{fid}").scroll_into_view_if_needed()
        return page.locator(f"#{fid}")

    yield {"page": page, "open": open_figure, "external": external, "errors": errors, "shots": screenshot_dir,
           "reload": lambda: state.update(url=None)}
    context.close()


def figure_state(fig):
    return json.loads(fig.get_attribute("data-state"))


def figure_data(fig):
    """The inputs the figure's script was given (the JSON after its figure id)."""
    text = fig.evaluate("f => f.nextElementSibling.textContent")
    return json.loads(re.search(r"getElementById\(\"[\w-]+\"\), (\{.*\})\);\s*$", text, re.S).group(1))


def numbers(text):
    return [float(x) for x in NUM.findall(text.replace("−", "-"))]


def close(shown: str, value: float, digits: int):
    """A displayed number equals ``value`` rounded to ``digits`` decimals (half a unit of slack)."""
    return abs(float(shown) - value) <= 0.5 * 10 ** -digits + 1e-9


def shoot(book, fig, name):
    """Photograph the figure as the page shows it (a full-page shot cut to the figure, so the
    theme's sticky header cannot cover it)."""
    page = book["page"]
    page.evaluate("window.scrollTo(0, 0)")  # the sticky header goes back to the top of the page
    box = fig.bounding_box()  # page coordinates, now that the page is not scrolled
    clip = {"x": box["x"] - 4, "y": box["y"] - 4, "width": box["width"] + 8, "height": box["height"] + 8}
    page.screenshot(path=str(book["shots"] / f"figure_{name}.png"), full_page=True, clip=clip)


# ---------------------------------------------------------------- chapter 2: the sentence

def sentence_reference(data, head, i, mask):
    keys = torch.tensor(data["keys"], dtype=torch.float64)
    values = torch.tensor(data["values"], dtype=torch.float64)
    q = torch.tensor(data["queries"][head], dtype=torch.float64)
    m = causal_mask(len(keys)) if mask else None
    out, w = scaled_dot_product_attention(q, keys, values, m)
    scores = q @ keys.T / math.sqrt(keys.size(1))
    return scores[i], w[i], out[i], w


def test_sentence_figure(book):
    fig = book["open"]("fig-sentence")
    data = figure_data(fig)
    assert data["words"] == ["The", "cat", "slept", "because", "it", "was", "tired"]
    assert data["queries"]["1"][4] == [2.2, 0.0] and data["queries"]["2"][4] == [0.0, 2.2], "the chapter's queries of it"
    st = figure_state(fig)
    assert (st["word"], st["head"], st["mask"]) == ("it", "1", False), "default: it, head 1, no mask"
    _, w, out, _ = sentence_reference(data, "1", 4, False)
    assert max(abs(a - b) for a, b in zip(st["weights"]["1"], w.tolist())) < 1e-6
    shoot(book, fig, "sentence_default")
    checked = 0
    for head in ("1", "2", "both"):
        fig.locator(f"button[data-head='{head}']").click()
        for mask in (False, True):
            if fig.locator("[data-part=mask]").is_checked() != mask:
                fig.locator("[data-part=mask]").click()
            for word in ("The", "cat", "it", "tired"):
                fig.locator("button[data-word]", has_text=re.compile(f"^{word}$")).click()
                st, i = figure_state(fig), data["words"].index(word)
                assert (st["word"], st["head"], st["mask"]) == (word, head, mask)
                heads = ["1", "2"] if head == "both" else [head]
                want_out = []
                for h in heads:
                    scores, w, out, W = sentence_reference(data, h, i, mask)
                    want_out += out.tolist()
                    assert max(abs(a - b) for a, b in zip(st["weights"][h], w.tolist())) < 1e-6, (word, h, mask)
                    assert max(abs(a - b) for r, R in zip(st["matrix"][h], W.tolist()) for a, b in zip(r, R)) < 1e-6
                    assert abs(sum(st["weights"][h]) - 1) < 1e-9
                    # what the table and the heat map show
                    table = fig.locator("[data-part=keys] table")
                    nth = 4 + 2 * heads.index(h)  # th (word), key vector, score, weight, (score, weight of head 2)
                    for j in range(len(data["words"])):
                        cell = table.locator(f"tbody tr:nth-child({j + 1}) > :nth-child({nth})").inner_text()
                        if mask and j > i:
                            assert "masked" in cell
                        else:
                            assert close(cell.rstrip("%"), 100 * w[j].item(), 1), (word, h, mask, j, cell)
                    heat = fig.locator(f"[data-part=heatmaps] table[data-head='{h}'] tbody tr:nth-child({i + 1}) td")
                    shown = heat.all_inner_texts()
                    for j, text in enumerate(shown[:-1]):
                        assert ("masked" in text) if (mask and j > i) else close(text, 100 * w[j].item(), 1)
                    assert shown[-1] == "100.0%", f"row sum of {word}: {shown[-1]}"
                    checked += 1
                assert max(abs(a - b) for a, b in zip(st["output"], want_out)) < 1e-6
                shown_out = numbers(fig.locator("[data-part=outvec]").inner_text())
                assert all(close(str(a), b, 4) for a, b in zip(shown_out, want_out)) and len(shown_out) == len(want_out)
    assert checked == 4 * 2 * 4
    # a row of the heat map makes its word the query; so does the keyboard on a word
    fig.locator("[data-part=heatmaps] table[data-head='1'] tbody tr:nth-child(2)").click()
    assert figure_state(fig)["word"] == "cat"
    fig.locator("button[data-word='2']").focus()
    book["page"].keyboard.press("Enter")
    assert figure_state(fig)["word"] == "slept"
    fig.locator("button[data-word='1']").focus()
    book["page"].keyboard.press("Space")
    assert figure_state(fig)["word"] == "cat"
    assert figure_state(fig)["head"] == "both" and figure_state(fig)["mask"] is True
    shoot(book, fig, "sentence_cat_both_heads_causal")


# ---------------------------------------------------------------- chapter 2: sqrt(d_k)

def lifted_weights(data, angle, d, divide):
    Q = torch.tensor(data["Q"], dtype=torch.float64)
    K = torch.tensor(data["K"], dtype=torch.float64)
    t, r = data["token"], data["radius"]
    Q[t] = torch.tensor([r * math.cos(math.radians(angle)), r * math.sin(math.radians(angle))])
    lift = lambda x: x.repeat(1, d // 2) * (d / 2) ** -0.25
    scores = lift(Q) @ lift(K).T / (math.sqrt(d) if divide else 1)
    A = torch.softmax(scores, dim=-1)
    return A, A @ torch.tensor(data["V"], dtype=torch.float64)


def set_range(fig, part, value):
    fig.locator(f"[data-part={part}]").fill(str(value))


def test_sqrt_dk_figure(book):
    fig = book["open"]("fig-sqrt-dk")
    data = figure_data(fig)
    assert data["Q"] == data["K"] == [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]] and data["V"] == [[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]]
    st = figure_state(fig)
    assert (st["angle"], st["d"], st["scale"]) == (45, 2, True)
    A2, _ = lifted_weights(data, 45, 2, True)
    shown = [numbers(t) for t in fig.locator("[data-part=weights] tbody tr").all_inner_texts()]
    assert [r[1:4] for r in shown] == [[round(x, 4) for x in row] for row in A2.tolist()], shown
    assert shown[0][1:4] == [0.4011, 0.1978, 0.4011] and shown[2][1:4] == [0.2483, 0.2483, 0.5035]
    shoot(book, fig, "sqrt_dk_default")
    for angle in (0, 45, 120):  # turning token 2's query changes row 2 only
        set_range(fig, "angle", angle)
        st = figure_state(fig)
        A, out = lifted_weights(data, angle, 2, True)
        assert st["angle"] == angle
        assert max(abs(a - b) for r, R in zip(st["weights"], A.tolist()) for a, b in zip(r, R)) < 1e-6
        assert max(abs(a - b) for r, R in zip(st["output"], out.tolist()) for a, b in zip(r, R)) < 1e-6
        assert max(abs(a - b) for r, R in zip(st["weights"][:2], A2.tolist()[:2]) for a, b in zip(r, R)) < 1e-12
        rows = [numbers(t) for t in fig.locator("[data-part=weights] tbody tr").all_inner_texts()]
        assert all(close(str(x), y, 4) for x, y in zip(rows[2][1:4], A[2].tolist()))
    set_range(fig, "angle", 45)
    for divide in (True, False):
        if fig.locator("[data-part=scale]").is_checked() != divide:
            fig.locator("[data-part=scale]").click()
        for d in (2, 64, 512):
            set_range(fig, "d", d)
            st = figure_state(fig)
            A, out = lifted_weights(data, 45, d, divide)
            assert (st["d"], st["scale"]) == (d, divide) and len(st["lifted_query"]) == d
            assert abs(sum(x * x for x in st["lifted_query"]) - 2 * math.sqrt(d / 2)) < 1e-5 * d, "|lift(q)|^2 = |q|^2 sqrt(d/2)"
            assert max(abs(a - b) for r, R in zip(st["weights"], A.tolist()) for a, b in zip(r, R)) < 1e-6, (d, divide)
            rows = [numbers(t) for t in fig.locator("[data-part=weights] tbody tr").all_inner_texts()]
            assert all(close(str(x), y, 4) for r, R in zip(rows, A.tolist()) for x, y in zip(r[1:4], R))
            if divide:  # the same matrix as d = 2, to the printed decimals
                assert [r[1:4] for r in rows] == [[round(x, 4) for x in row] for row in A2.tolist()], (d, rows)
    assert figure_state(fig)["weights"][2][2] > 0.9999, "without the division row 2 collapses at d = 512"
    shoot(book, fig, "sqrt_dk_d512_no_division")
    set_range(fig, "d", 2)
    fig.locator("[data-part=angle]").focus()
    book["page"].keyboard.press("ArrowRight")
    assert figure_state(fig)["angle"] == 46, "the angle slider moves with the arrow keys"


# ---------------------------------------------------------------- chapter 11: the explorer

def explorer_reference():
    """(shape, first numbers) of each of the 14 steps, from the checkpoint and the model's modules."""
    model = load_checkpoint(3000).eval()
    src, tgt = torch.tensor([[5, 3, 4, 7, 6]]), torch.tensor([[1, 6, 7, 4, 3, 5]])
    got = {}
    enc, dec1, dec2 = model.encoder_layers[0], model.decoder_layers[0], model.decoder_layers[1]
    hooks = [enc.norm1.register_forward_hook(lambda m, a, o: got.setdefault("norm1", o)),
             enc.ffn.w_1.register_forward_hook(lambda m, a, o: got.setdefault("w1", o)),
             enc.self_attn.w_q.register_forward_hook(lambda m, a, o: got.setdefault("q", o))]
    for mha in (enc.self_attn, dec1.self_attn, dec2.cross_attn):
        mha.keep_weights = True
    with torch.no_grad():
        logits = model(src, tgt)
        memory = model.encode(src, torch.ones(1, 1, 1, 5, dtype=torch.bool))
    for h in hooks:
        h.remove()
    emb = model.embed.lut.weight[src]
    x = emb * 8 + positional_encoding(5, 64)
    probs = torch.softmax(logits, -1)
    return [
        ((1, 5), [5, 3, 4, 7, 6]), ((1, 5, 64), emb[0, 0, :4].tolist()), ((1, 5, 64), (emb * 8)[0, 0, :4].tolist()),
        ((1, 5, 64), x[0, 0, :4].tolist()), ((1, 4, 5, 16), got["q"][0, 0, :4].tolist()),
        ((1, 4, 5, 5), enc.self_attn.weights[0, 0].flatten().tolist()), ((1, 5, 64), got["norm1"][0, 0, :4].tolist()),
        ((1, 5, 256), torch.relu(got["w1"])[0, 0, :4].tolist()), ((1, 5, 64), memory[0, 0, :4].tolist()),
        ((1, 6), [1, 6, 7, 4, 3, 5]), ((1, 4, 6, 6), dec1.self_attn.weights[0, 0].flatten().tolist()),
        ((1, 4, 6, 5), dec2.cross_attn.weights[0, 0].flatten().tolist()), ((1, 6, 13), logits[0, 0, :4].tolist()),
        ((1, 6, 13), [probs[0, 0].max().item()]),
    ]


def test_explorer_figure(book):
    fig = book["open"]("fig-explorer")
    reference = explorer_reference()
    assert figure_state(fig)["step"] == 1
    shoot(book, fig, "explorer_step1_default")
    phases = ["input"] * 4 + ["encoder"] * 5 + ["decoder"] * 3 + ["output"] * 2
    for n, (shape, want) in enumerate(reference, start=1):
        if n > 1:
            fig.locator("[data-part=next]").click()
        st = figure_state(fig)
        assert (st["step"], st["phase"], tuple(st["shape"])) == (n, phases[n - 1], shape), (n, st)
        assert fig.locator("[data-part=shape]").inner_text() == str(shape), n
        assert fig.locator("[data-part=phase]").inner_text().lower() == phases[n - 1]
        cells = fig.locator("[data-part=view] table tbody td").all_inner_texts()
        if n == 14:
            token, p = cells[0].split()
            assert token == "d" and close(p, want[0], 4), cells[0]
            continue
        shown = [t for t in cells if t != "masked"]
        masked = [k for k, t in enumerate(cells) if t == "masked"]
        if n == 11:  # the causal mask: the cells above the diagonal are marked, not numbers
            assert masked == [r * 6 + c for r in range(6) for c in range(6) if c > r], masked
            want = [w for k, w in enumerate(want) if k not in masked]
        assert len(shown) >= len(want) or n in (1, 10), (n, cells)
        assert all(close(s, w, 4) for s, w in zip(shown, want)), (n, shown[:6], want[:6])
    shoot(book, fig, "explorer_step14")
    # the slider and the arrow keys
    set_range(fig, "step", 11)
    assert figure_state(fig)["step"] == 11
    shoot(book, fig, "explorer_step11_masked")
    fig.locator("[data-part=view]").focus()
    book["page"].keyboard.press("ArrowRight")
    assert figure_state(fig)["step"] == 12
    book["page"].keyboard.press("ArrowLeft")
    book["page"].keyboard.press("ArrowLeft")
    assert figure_state(fig)["step"] == 10
    book["page"].keyboard.press("Home")
    assert figure_state(fig)["step"] == 1
    fig.locator("[data-part=prev]").click()
    assert figure_state(fig)["step"] == 1, "no step before the first"


# ---------------------------------------------------------------- chapters 7 and 10

def test_pe_rotation_figure(book):
    fig = book["open"]("fig-pe-rotation")
    st = figure_state(fig)
    assert (st["k"], st["i"], st["pos"]) == (3, 5, 10), "default: the chapter's check"
    shoot(book, fig, "pe_rotation_default")
    for k, i, pos in ((3, 5, 10), (7, 0, 0), (20, 12, 40)):
        for part, value in (("k", k), ("i", i), ("pos", pos)):
            set_range(fig, part, value)
        st = figure_state(fig)
        pe = positional_encoding(pos + k + 1, 64).double()
        omega = 10000 ** (-2 * i / 64)
        assert (st["k"], st["i"], st["pos"]) == (k, i, pos)
        assert abs(st["angle"] - omega * k) < 1e-12
        assert max(abs(a - b) for a, b in zip(st["here"], pe[pos, 2 * i:2 * i + 2].tolist())) < 1e-6
        assert max(abs(a - b) for a, b in zip(st["later"], pe[pos + k, 2 * i:2 * i + 2].tolist())) < 1e-6
        assert st["diff"] < 1e-12, "M PE(pos) is PE(pos + k)"
        rows = [numbers(t) for t in fig.locator("[data-part=numbers] table:nth-of-type(2) tbody tr").all_inner_texts()]
        assert all(close(str(x), y, 4) for x, y in zip(rows[2][-2:], pe[pos + k, 2 * i:2 * i + 2].tolist())), rows
    shoot(book, fig, "pe_rotation_k20_i12_pos40")


def test_schedule_figure(book):
    fig = book["open"]("fig-schedule")
    st = figure_state(fig)
    assert (st["d_model"], st["warmup"]) == (512, 4000)
    shoot(book, fig, "schedule_default")
    for d_model, warmup in ((512, 4000), (64, 400), (1024, 100)):
        fig.locator("[data-part=d]").select_option(str(d_model))
        set_range(fig, "warmup", warmup)
        st = figure_state(fig)
        assert (st["d_model"], st["warmup"]) == (d_model, warmup)
        assert abs(st["peak"] - rate(warmup, d_model, warmup)) < 1e-15
        want = [rate(s, d_model, warmup) for s in st["steps"]]
        assert max(abs(a - b) / b for a, b in zip(st["rates"], want)) < 1e-12
        shown = [t.split("\t")[-1] for t in fig.locator("[data-part=numbers] tbody tr").all_inner_texts()]
        assert shown[:-1] == [f"{r:.3e}".replace("e-0", "e-") for r in want], shown
    shoot(book, fig, "schedule_d1024_warmup100")


# ---------------------------------------------------------------- chapter 16: cross-attention

def cross_reference(data, layer, head, t):
    """Row t of the (layer, head) map from the figure's own inputs, averaged as the script averages
    (in order, then divided): layer and head are "1", "2", ... or "avg"."""
    W = data["weights"]

    def mean(rows):
        return [sum(col) / len(rows) for col in zip(*rows)]

    layers = range(len(W)) if layer == "avg" else [int(layer) - 1]
    heads = [mean([W[m][k][t] for m in layers]) if layer == "avg" else W[layers[0]][k][t] for k in range(len(W[0]))]
    return mean(heads) if head == "avg" else heads[int(head) - 1]


def check_cross_attention_figure(fig, page, shot=None):
    """Operate the cross-attention figure ``fig`` (a locator on ``page``) and compare what it shows with
    cross_reference: default state, every layer and head and their averages, four English pieces,
    the sorted table, the heat map's rows, the mouse on a row and the keyboard."""
    data = figure_data(fig)
    n_layers, n_heads, T, S = len(data["weights"]), len(data["weights"][0]), len(data["tgt"]), len(data["src"])
    st = figure_state(fig)
    assert (st["layer"], st["head"], st["query"]) == (str(n_layers), "avg", 0), "default: last layer, heads averaged"
    assert st["input"] == "<s>" and st["piece"] == data["tgt"][0]
    desc = fig.locator(".fig-desc").inner_text()
    want = cross_reference(data, str(n_layers), "avg", 0)
    assert max(abs(a - b) for a, b in zip(st["weights"], want)) < 1e-12
    assert f'attends most to "{data["src"][st["top"]]}"' in desc and f"{100 * max(want):.1f}%" in desc, desc
    if shot:
        shot(fig, "cross_attention_default")
    checked = 0
    for layer in [str(m) for m in range(1, n_layers + 1)] + ["avg"]:
        fig.locator(f"button[data-layer='{layer}']").click()
        for head in [str(k) for k in range(1, n_heads + 1)] + ["avg"]:
            fig.locator(f"button[data-head='{head}']").click()
            for t in sorted({0, 1, T // 2, T - 1}):
                fig.locator(f"button[data-query='{t}']").click()
                st, w = figure_state(fig), cross_reference(data, layer, head, t)
                assert (st["layer"], st["head"], st["query"]) == (layer, head, t), st
                assert st["piece"] == data["tgt"][t] and st["input"] == ("<s>" if t == 0 else data["tgt"][t - 1])
                assert max(abs(a - b) for a, b in zip(st["weights"], w)) < 1e-12, (layer, head, t)
                assert sorted(st["order"]) == list(range(S)) and w[st["top"]] == max(w)
                assert all(w[a] >= w[b] for a, b in zip(st["order"], st["order"][1:])), "largest first"
                assert abs(sum(w) - 1) < 1e-3
                # the sorted table: rank, German piece, its position, its weight in %
                rows = fig.locator("[data-part=sorted] tbody tr").all_inner_texts()
                assert len(rows) == S
                for r, (text, j) in enumerate(zip(rows, st["order"])):
                    rank, piece, pos, pct = text.split("\t")
                    assert (rank, piece, pos) == (f"{r + 1}.", data["src"][j], str(j + 1)), text
                    assert close(pct.rstrip("%"), 100 * w[j], 1), (layer, head, t, text)
                # the heat map: row t holds the same numbers, then the row sum
                cells = fig.locator(f"[data-part=heatmap] tbody tr:nth-child({t + 1}) td").all_inner_texts()
                assert all(close(c, 100 * x, 1) for c, x in zip(cells[:-1], w)) and len(cells) == S + 1, cells
                assert cells[-1] == "100.0%", cells[-1]
                summary = fig.locator("[data-part=summary]").inner_text()
                shown = re.search(r"(\d+\.\d)%", summary)  # JavaScript rounds halves up, Python to even
                assert f"\u201c{data['src'][st['top']]}\u201d" in summary and close(shown.group(1), 100 * w[st["top"]], 1)
                checked += 1
    assert checked == (n_layers + 1) * (n_heads + 1) * len({0, 1, T // 2, T - 1})
    if shot:
        shot(fig, "cross_attention_layers_heads_averaged")
    # a row of the heat map chooses its piece; so do the arrow keys in the heat map and Enter on a piece
    fig.locator("[data-part=heatmap] tbody tr:nth-child(2)").click()
    assert figure_state(fig)["query"] == 1
    fig.locator("[data-part=heatmap]").focus()
    page.keyboard.press("ArrowDown")
    assert figure_state(fig)["query"] == 2
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    assert figure_state(fig)["query"] == 0, "no piece before the first"
    page.keyboard.press("End")
    assert figure_state(fig)["query"] == T - 1
    page.keyboard.press("Home")
    assert figure_state(fig)["query"] == 0
    fig.locator(f"button[data-query='{T - 1}']").focus()
    page.keyboard.press("Enter")
    assert figure_state(fig)["query"] == T - 1
    fig.locator("button[data-head='1']").focus()
    page.keyboard.press("Space")
    st = figure_state(fig)
    assert (st["layer"], st["head"], st["query"]) == ("avg", "1", T - 1), st


# A mark, not pytest.skip() in the test: skipped before the fixtures, so no book is built for nothing.
@pytest.mark.skipif(CROSS_ID not in PAGES, reason=(
    f"{CROSS_SOURCE.relative_to(ROOT)} does not show {CROSS_ID} yet (no cell with cross_attention_figure(..., "
    f'figure_id="{CROSS_ID}")); test_cross_attention_figure_alone checks the figure with a random model meanwhile'))
def test_cross_attention_figure(book):
    """Chapter 16's figure on its built page (once the chapter shows it; see CROSS_ID above)."""
    fig = book["open"](CROSS_ID)
    data = figure_data(fig)
    assert all("\u2581" not in p for p in data["src"] + data["tgt"]), "word starts shown as \u2423"
    check_cross_attention_figure(fig, book["page"], lambda f, name: shoot(book, f, name))


def test_cross_attention_figure_alone(browser, screenshot_dir):
    """The same checks, and Tab through every control, on a blank page (as in a notebook) with the
    figure of a small random model (tests/test_figures.py: cross_attention_example)."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    errors = []
    test_browser.watch_errors(page, errors)
    page.set_content('<!doctype html><meta charset=utf-8><body><button type="button">before</button>'
                     f"{cross_attention_example_figure()}")
    try:
        fig = page.locator("#fig-cross-attention")
        shot = lambda f, name: f.screenshot(path=str(screenshot_dir / f"figure_{name}_alone.png"))
        check_cross_attention_figure(fig, page, shot)
        tab_through(page, "fig-cross-attention")
        # The heat map scrolls sideways in its own box on a narrow screen: then, and only then,
        # words say so (a phone hides scroll bars). The figure's caption and the heat map's title
        # wrap at the width they have (a <caption> in the scrolling box was cut mid-word).
        cue = fig.locator("[data-part=scrollcue]")
        assert cue.is_hidden(), "the heat map fits at 1280 px: no cue"
        page.set_viewport_size({"width": 240, "height": 800})
        page.wait_for_function("!document.querySelector('#fig-cross-attention [data-part=scrollcue]').hidden")
        assert "scroll it sideways" in cue.inner_text()
        cut = page.evaluate("""() => { const f = document.querySelector('#fig-cross-attention');
            const box = f.querySelector('[data-part=heatmap]');
            return [[f.querySelector('figcaption'), f], [box.querySelector('.fig-table-title'), box]]
              .map(([el, within]) => [el.className || el.tagName, el.scrollWidth - el.clientWidth,
                                      el.getBoundingClientRect().right - within.getBoundingClientRect().right]); }""")
        assert all(over <= 1 and past <= 1 for _, over, past in cut), f"cut text: {cut}"
        assert fig.locator(".fig-table-title").inner_text().startswith("Weights in %")
        page.set_viewport_size({"width": 1280, "height": 1000})
        page.wait_for_function("document.querySelector('#fig-cross-attention [data-part=scrollcue]').hidden")
    finally:
        page.close()
    assert not errors, errors


# ---------------------------------------------------------------- every figure

FOCUSABLE = """fid => {
  const fig = document.getElementById(fid);
  const all = [...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')]
    .filter(e => !e.disabled && e.tabIndex >= 0 && e.getClientRects().length > 0);
  const inside = all.filter(e => fig.contains(e));
  inside.forEach((e, k) => e.setAttribute('data-tabtest', k));
  all[all.indexOf(inside[0]) - 1].focus();
  const controls = [...fig.querySelectorAll('button, input, select, [tabindex]')];
  return {inside: inside.length, controls: controls.length,
          unlabelled: controls.filter(e => !((e.labels && e.labels.length) || e.getAttribute('aria-label')
                                             || e.textContent.trim())).map(e => e.outerHTML.slice(0, 80))};
}"""
ACTIVE = """() => { const e = document.activeElement, s = getComputedStyle(e);
  return {k: e.getAttribute('data-tabtest'), outline: s.outlineStyle, width: parseFloat(s.outlineWidth)}; }"""


@pytest.mark.parametrize("fid", list(PAGES))
def test_every_control_is_reached_with_tab_and_shows_focus(book, fid):
    book["reload"]()
    book["open"](fid)
    tab_through(book["page"], fid)


def tab_through(page, fid):
    """Tab from the element before figure ``fid`` through all its controls: each labelled, in order, with a
    visible focus outline."""
    info = page.evaluate(FOCUSABLE, fid)
    assert info["inside"] == info["controls"] >= 2, info
    assert not info["unlabelled"], f"controls without a label: {info['unlabelled']}"
    reached = []
    for _ in range(info["inside"]):
        page.keyboard.press("Tab")
        a = page.evaluate(ACTIVE)
        assert a["k"] is not None, f"{fid}: Tab left the figure after {reached}"
        assert a["outline"] != "none" and a["width"] >= 2, f"{fid}: control {a['k']} has no visible focus: {a}"
        reached.append(int(a["k"]))
    assert reached == list(range(info["inside"])), reached


def test_no_request_left_localhost_and_no_errors(book):
    for fid in PAGES:
        book["open"](fid)
    assert not book["external"], f"requests to other hosts: {sorted(book['external'])}"
    assert not book["errors"], book["errors"]


def test_each_figure_works_alone_as_in_a_notebook(browser):
    """The stored cell outputs, on a blank page with nothing else: as Jupyter or Colab shows them."""
    outputs = []
    for chapter in sorted(set(PAGES.values())):
        nb = nbformat.read(ROOT / f"{chapter}.ipynb", as_version=4)
        outputs += ["".join(o["data"]["text/html"]) for c in nb.cells if c.cell_type == "code"
                    for o in c.get("outputs", []) if "aiayn-fig" in "".join(o.get("data", {}).get("text/html", ""))]
    assert len(outputs) == len(PAGES) + len(EXTRA_FIGURES)
    # Figures that no executed chapter shows yet, made here: chapter 16's with a small random model.
    alone = {"fig-cross-attention": str(cross_attention_example_figure())}
    outputs += list(alone.values())
    page = browser.new_page()
    errors, requests = [], []
    test_browser.watch_errors(page, errors)
    page.on("request", lambda r: requests.append(r.url))
    page.set_content("<!doctype html><meta charset=utf-8><body>" + "".join(f"<div>{o}</div>" for o in outputs))
    states = page.eval_on_selector_all("figure.aiayn-fig", "fs => fs.map(f => [f.id, !!f.getAttribute('data-state')])")
    page.close()
    assert not errors, errors
    assert sorted(states) == sorted([fid, True] for fid in [*PAGES, *EXTRA_FIGURES, *alone]), states
    assert not [u for u in requests if not u.startswith(("about:", "data:"))], requests


# ---------------------------------------------------------------- the French edition (issue 37)

def _load_translations():
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_translations", ROOT / "utils" / "book" / "translations.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


translations = _load_translations()
#: What the French figure's text may hold with a decimal point: a section number (« section 3.4 »).
POINT_ALLOWED = re.compile(r"section \d+(?:\.\d+)+|\d+\.\d+\.\d+")
FIGURE_TEXT = """f => { const w = document.createTreeWalker(f, NodeFilter.SHOW_TEXT), texts = [];
  for (let n = w.nextNode(); n; n = w.nextNode()) if (!n.parentElement.closest('style, script')) texts.push(n.data);
  return [...texts, ...[...f.querySelectorAll('[aria-label]')].map(e => e.getAttribute('aria-label'))].join('\\n'); }"""
#: Every control of a figure, operated in turn: each button clicked, each slider set to its
#: minimum, a middle value and its maximum, each check box switched, each menu's options chosen.
OPERATE = """async f => {
  const shots = [], snap = () => shots.push(FIGURE_TEXT(f)), input = (e, v) => { e.value = String(v);
    e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); };
  snap();
  for (const b of f.querySelectorAll('button')) { b.click(); snap(); }
  for (const r of f.querySelectorAll('input[type=range]')) {
    const lo = Number(r.min), hi = Number(r.max), step = Number(r.step) || 1;
    for (const v of [lo, lo + step * Math.round((hi - lo) / step / 2), hi]) { input(r, v); snap(); }
  }
  for (const c of f.querySelectorAll('input[type=checkbox]')) { c.click(); snap(); c.click(); snap(); }
  for (const m of f.querySelectorAll('select')) for (const o of m.options) { input(m, o.value); snap(); }
  const next = f.querySelector('[data-part=next]');
  if (next) { f.querySelector('[data-part=prev]').click(); for (let k = 0; k < 20; k++) { next.click(); snap(); } }
  return shots;
}""".replace("FIGURE_TEXT(f)", "(" + FIGURE_TEXT + ")(f)")


def english_segments(fid: str, page: str) -> list[str]:
    """The English words of figure ``fid`` as its English page has them, cut at the places its
    script fills ({word}), that its French catalogue does not also use (« position », « lrate »):
    its captions, labels and alt texts, and every template of its script (data-strings)."""
    from bookbuild import HTML
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((HTML / f"{page}.html").read_text(encoding="utf-8"), "html.parser")
    fig = soup.find(id=fid)
    french = " ".join(t for t in translations_table(page).values())
    out = []
    for _, _, text in translations.figure_texts(BeautifulSoup(str(fig), "html.parser")):
        for part in translations.PLACE.split(text):
            part = part.strip(" ,.;:()\"“”")
            if re.search(r"[A-Za-z]{3,}", part) and part not in french and part not in out:
                out.append(part)
    return out


def translations_table(page: str) -> dict:
    po = translations.LOCALES / "fr" / "LC_MESSAGES" / "figures.po"
    return {m.id: m.string for m in translations.entries(translations.read_catalog(po)) if m.context == page}


@pytest.fixture(scope="module")
def french_site(site):
    """The French edition's base URL on the same server (``_build/fr/_build/html/``)."""
    from bookbuild import FR_HTML, HTML

    return urljoin(site, os.path.relpath(FR_HTML, HTML).replace(os.sep, "/") + "/")


@pytest.mark.parametrize("fid", [*PAGES, *EXTRA_FIGURES])
def test_french_figures_write_no_english_and_french_numbers(browser, french_site, fid):
    """On its French page each figure is operated (every button, slider, check box and menu; the
    explorer's 14 steps) and, after each action, its text (and alt texts) holds none of the
    English words of its English page's figure, and its numbers are written the French way:
    a decimal comma, a narrow no-break space before %, × 10ⁿ rather than e-notation."""
    page_name = PAGES.get(fid) or EXTRA_FIGURES[fid]
    english = english_segments(fid, page_name)
    assert len(english) >= 5, f"{fid}: too few English words to look for: {english}"
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    external, errors = set(), []
    context.route("**/*", test_browser.offline_route(urljoin(french_site, "/"), external, also_allow=("data:",)))
    context.route("**/_static/mathjax/**", lambda r: r.fulfill(status=200, content_type="text/javascript", body=""))
    page = context.new_page()
    test_browser.watch_errors(page, errors)
    try:
        page.goto(french_site + page_name + ".html", wait_until="load", timeout=60000)
        page.wait_for_selector(f"#{fid}[data-state]", timeout=10000)
        fig = page.locator(f"#{fid}")
        assert fig.get_attribute("lang") == "fr", f"{fid}: the French page's figure is not marked lang=fr"
        shots = fig.evaluate(OPERATE)
    finally:
        context.close()
    assert not errors and not external, (errors, external)
    assert len(shots) >= 4, f"{fid}: too few states seen ({len(shots)})"
    left, numbers_ = set(), set()
    for text in shots:
        for seg in english:
            if re.search(rf"(?<![A-Za-z]){re.escape(seg)}(?![A-Za-z])", text):
                left.add(seg)
        bare = POINT_ALLOWED.sub(" ", text)
        numbers_ |= set(re.findall(r"\S*\d\.\d\S*|\S*\d%|\S*\d[eE][-+]?\d\S*", bare))
    assert not left, f"{fid}: English left on the French page after operating the figure: {sorted(left)}"
    assert not numbers_, f"{fid}: numbers written the English way on the French page: {sorted(numbers_)[:10]}"


def test_report_bytes_per_figure(built_book):
    """How much each figure adds to its page (printed with -s; the budget keeps pages small)."""
    from bookbuild import HTML

    for fid, page in PAGES.items():
        text = (HTML / f"{page}.html").read_text(encoding="utf-8")
        m = re.search(rf'<figure class="aiayn-fig" id="{fid}".*?</script>', text, re.S)
        assert m, f"{fid} is not on {page}.html"
        size = len(m.group(0).encode())
        print(f"{fid}: {size:,} bytes on {page}.html")
        assert size < 40_000, f"{fid} adds {size:,} bytes"
