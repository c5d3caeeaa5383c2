"""Tests of the Table 3 sweep (chapter 12): the rows, the model variants, and the
shipped results file, which a short rerun must reproduce within the replay tolerance."""

from __future__ import annotations

import ast
import json
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from utils import TINY, Transformer, count_parameters
from utils.core.masks import padding_mask
from utils.core.numerics import REPLAY_TOLERANCE
from utils.experiments import variations as V

ROW_NAMES = [r[0] for r in V.ROWS]


@pytest.fixture(scope="module")
def shipped():
    header, records = V.read_results(V.RESULTS)
    return header, {(r["row"], r["seed"]): r for r in records}


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# ---------------------------------------------------------------- the rows


def test_row_names_are_unique_and_references_come_first():
    assert len(set(ROW_NAMES)) == len(ROW_NAMES)
    for i, (name, _, reference, _) in enumerate(V.ROWS):
        assert reference is None or ROW_NAMES.index(reference) < i, name


@pytest.mark.parametrize("name", ROW_NAMES[1:])
def test_a_row_differs_from_its_reference_in_exactly_the_field_its_name_says(name):
    _, _, reference, _ = {r[0]: r for r in V.ROWS}[name]
    config, ref = V.row_config(name), V.row_config(reference)
    differ = {k for k in config if config[k] != ref[k]}
    field, _, value = name.split(", ")[-1].partition("=")
    assert differ == {field}, f"{name}: differs from {reference} in {sorted(differ)}"
    expected = value if field in ("positions", "norm") else ast.literal_eval(value)
    assert config[field] == expected and type(config[field]) is type(expected)
    V.check_config(config)


def test_the_base_row_is_the_course_tiny_model_and_chapter_10s_recipe():
    base = V.row_config("base")
    assert {k: base[k] for k in TINY if k != "vocab_size"} == {k: v for k, v in TINY.items() if k != "vocab_size"}
    assert (base["warmup"], base["eps_ls"], base["norm"], base["positions"]) == (400, 0.1, "post", "sinusoid")


def test_table_3_groups_are_all_there():
    groups = {g for _, g, _, _ in V.ROWS}
    assert {"A", "B", "C", "D", "E", "no positions", "no scaling", "norm and warmup"} <= groups
    heads = sorted(V.row_config(n)["h"] for n, g, _, _ in V.ROWS if g == "A") + [4]
    assert sorted(heads) == [1, 2, 4, 8, 16]


def test_unknown_row_and_bad_configs_are_refused():
    with pytest.raises(KeyError, match="no row named 'h=3'"):
        V.row_config("h=3")
    base = V.row_config("base")
    for change, match in [(dict(h=3), "divisible by h"), (dict(positions="rotary"), "positions must be"),
                          (dict(norm="sandwich"), "norm must be"), (dict(d_k=0), "d_k must be"),
                          (dict(p_drop=1.0), "p_drop and eps_ls"), (dict(warmup=-1), "warmup must be"),
                          (dict(scale="yes"), "scale must be"), (dict(N=0), "N must be")]:
        with pytest.raises(ValueError, match=match):
            V.check_config({**base, **change})
    with pytest.raises(KeyError, match="unknown \\['dk'\\]"):
        V.check_config({**base, "dk": 8})
    with pytest.raises(ValueError, match="steps must be"):
        V.run_row("base", 0, steps=0)
    with pytest.raises(ValueError, match="which must be"):
        V.held_out("train")


# ---------------------------------------------------------------- the variants


def test_the_base_variant_is_transformer_draw_for_draw():
    torch.manual_seed(5)
    ours = Transformer(**TINY)
    variant = V.build_model(V.row_config("base"), 5)
    assert type(variant).__mro__[1] is Transformer
    a, b = ours.state_dict(), variant.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    src, tgt = torch.tensor([[5, 3, 4, 7, 6]]), torch.tensor([[1, 6, 7, 4, 3, 5]])
    ours.eval(), variant.eval()
    assert torch.equal(ours(src, tgt), variant(src, tgt))


def test_no_scaling_is_softmax_of_the_raw_dot_products():
    torch.manual_seed(0)
    attn = V.VariantAttention(8, 2, scale=False)
    x = torch.randn(1, 3, 8)
    out = attn(x, x, x)
    q = attn.w_q(x).view(1, 3, 2, 4).transpose(1, 2)
    k = attn.w_k(x).view(1, 3, 2, 4).transpose(1, 2)
    v = attn.w_v(x).view(1, 3, 2, 4).transpose(1, 2)
    by_hand = torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v
    expected = attn.w_o(by_hand.transpose(1, 2).reshape(1, 3, 8))
    assert (out - expected).abs().max().item() < 1e-6


def test_a_smaller_d_k_shrinks_queries_and_keys_only():
    attn = V.VariantAttention(64, 4, d_k=8)
    assert attn.w_q.weight.shape == attn.w_k.weight.shape == (32, 64)
    assert attn.w_v.weight.shape == attn.w_o.weight.shape == (64, 64)
    assert attn(torch.randn(2, 5, 64), torch.randn(2, 7, 64), torch.randn(2, 7, 64)).shape == (2, 5, 64)
    with pytest.raises(ValueError, match="d_k must be a positive int"):
        V.VariantAttention(64, 4, d_k=0)


def _copy_attention(ours, theirs):
    theirs.in_proj_weight.data = torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight])
    theirs.in_proj_bias.data = torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias])
    theirs.out_proj.weight.data, theirs.out_proj.bias.data = ours.w_o.weight.data, ours.w_o.bias.data


def test_pre_norm_layers_equal_pytorchs_norm_first_layers():
    torch.manual_seed(0)
    enc = V.PreLNEncoderLayer(16, 2, 32, p_drop=0.0).eval()
    theirs = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True, norm_first=True).eval()
    _copy_attention(enc.self_attn, theirs.self_attn)
    theirs.linear1.load_state_dict(enc.ffn.w_1.state_dict()), theirs.linear2.load_state_dict(enc.ffn.w_2.state_dict())
    for a, b in ((enc.norm1, theirs.norm1), (enc.norm2, theirs.norm2)):
        b.weight.data, b.bias.data = a.weight.data, a.bias.data
    x = torch.randn(2, 5, 16)
    assert (enc(x) - theirs(x)).abs().max().item() < 1e-5

    dec = V.PreLNDecoderLayer(16, 2, 32, p_drop=0.0).eval()
    theirs = nn.TransformerDecoderLayer(16, 2, 32, dropout=0.0, batch_first=True, norm_first=True).eval()
    _copy_attention(dec.self_attn, theirs.self_attn)
    _copy_attention(dec.cross_attn, theirs.multihead_attn)
    theirs.linear1.load_state_dict(dec.ffn.w_1.state_dict()), theirs.linear2.load_state_dict(dec.ffn.w_2.state_dict())
    for a, b in ((dec.norm1, theirs.norm1), (dec.norm2, theirs.norm2), (dec.norm3, theirs.norm3)):
        b.weight.data, b.bias.data = a.weight.data, a.bias.data
    y, memory = torch.randn(2, 4, 16), torch.randn(2, 5, 16)
    causal = torch.ones(4, 4, dtype=torch.bool).tril()
    assert (dec(y, memory, None, causal) - theirs(y, memory, tgt_mask=~causal)).abs().max().item() < 1e-5


def test_pre_norm_model_has_a_final_norm_per_stack_and_learned_positions_are_trained():
    pre = V.build_model(V.row_config("norm=pre"), 0)
    assert count_parameters(pre) - count_parameters(V.build_model(V.row_config("base"), 0)) == 2 * 2 * 64
    learned = V.build_model(V.row_config("positions=learned"), 0)
    assert isinstance(learned.pe, nn.Parameter) and learned.pe.shape == (V.TASK["max_len"], 64)
    rms = learned.pe.detach().pow(2).mean().sqrt().item()
    assert abs(rms - 2**-0.5) < 0.02, rms


def test_without_positions_the_encoder_cannot_tell_orders_apart():
    """A model without positions sees its source as a bag of letters: permuting the
    source permutes the memory, and the decoder's output does not change at all."""
    model = V.build_model(V.row_config("positions=none"), 0).eval()
    src = torch.tensor([[5, 3, 4, 7, 6]])
    perm = torch.tensor([[4, 1, 0, 3, 2]])
    shuffled = src.gather(1, perm)
    tgt = torch.tensor([[1, 6, 7]])
    with torch.no_grad():
        m1, m2 = model.encode(src, padding_mask(src)), model.encode(shuffled, padding_mask(shuffled))
        assert (m1[0, perm[0]] - m2[0]).abs().max().item() < 1e-5
        out1, out2 = model(src, tgt), model(shuffled, tgt)
    assert (out1 - out2).abs().max().item() < 1e-5


def test_no_warmup_starts_at_the_peak_and_then_decays_like_the_base():
    peak = V.schedule(400, 64, 400)
    assert V.schedule(1, 64, 0) == peak == pytest.approx(0.00625)
    assert V.schedule(1600, 64, 0) == V.schedule(1600, 64, 400)
    assert V.schedule(1, 64, 400) < peak / 100


def test_metrics_on_counts_exact_matches_and_perplexity_by_hand():
    src, tgt = V.held_out("test")
    m = V.build_model(V.row_config("base"), 0).eval()
    r = V.metrics_on(m, src[:20], tgt[:20])
    assert 0 <= r["exact"] <= 1 and r["ppl"] >= 1 and 0 <= r["token_acc"] <= 1
    assert set(r["exact_by_length"]) <= set(range(3, 13))
    logits = m(src[:20], torch.cat([torch.ones(20, 1, dtype=torch.long), tgt[:20, :-1]], 1))
    nll = F.cross_entropy(logits.transpose(1, 2), tgt[:20], ignore_index=0).item()
    assert r["ppl"] == pytest.approx(math.exp(nll), rel=1e-6)


# ---------------------------------------------------------------- the shipped results


def test_the_results_file_has_every_row_and_seed_of_the_chapter(shipped):
    header, records = shipped
    assert header == json.loads(json.dumps(V.header()))
    missing = [(n, s) for n in ROW_NAMES for s in V.SEEDS if (n, s) not in records]
    assert not missing, f"runs missing from {V.RESULTS}: {missing}"
    for (name, seed), r in records.items():
        assert r["config"] == V.row_config(name), name
        assert r["steps"] == V.TASK["steps"] == len(r["losses"])
        assert all(math.isfinite(x) for x in r["losses"]), (name, seed)
        assert set(r["metrics"]) == {"test", "long"}
        assert r["params"] == count_parameters(V.build_model(V.row_config(name), 0))


@pytest.mark.parametrize("name, seed", [("base", 0), ("base", 2), ("d_k=4", 1), ("positions=learned", 0),
                                        ("norm=pre", 2), ("scale=False", 1), ("warmup=0", 0), ("N=1", 2)])
def test_a_short_rerun_reproduces_the_logged_losses_within_the_replay_tolerance(shipped, one_thread, name, seed):
    """The sweep was run on another machine: a rerun agrees within the measured replay
    tolerance (utils/core/numerics.py), not to the bit (tests/test_determinism.py checks bits)."""
    _, records = shipped
    prefix = V.run_row(name, seed, steps=15)["losses"]
    gap = max(abs(a - b) for a, b in zip(prefix, records[(name, seed)]["losses"][:15], strict=True))
    assert gap < REPLAY_TOLERANCE, f"{name} seed {seed}: rerun drifts {gap:.2e} from the log"


def test_the_sweep_resumes_and_refuses_another_task(tmp_path, one_thread):
    task = dict(V.TASK, steps=3, n_test=8, batch_size=8, train_lengths=(3, 5), test_lengths=(3, 5))
    path = tmp_path / "results.jsonl"
    first = V.sweep(path, workers=1, rows=["base"], seeds=(0,), progress=False, task=task)
    assert [(r["row"], r["seed"]) for r in first] == [("base", 0)]
    again = V.sweep(path, workers=2, rows=["base", "h=1"], seeds=(0,), progress=False, task=task)
    assert [(r["row"], r["seed"]) for r in again] == [("base", 0), ("h=1", 0)]
    assert again[0]["losses"] == first[0]["losses"]
    assert again[0]["losses"] == V.run_row("base", 0, task=task)["losses"]
    with pytest.raises(ValueError, match="different sweep"):
        V.sweep(path, workers=1, rows=["base"], seeds=(0,), progress=False, task=dict(task, steps=4))
    with pytest.raises(ValueError, match="workers must be"):
        V.sweep(path, workers=0)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"row": "base"}\n')
    with pytest.raises(ValueError, match="header"):
        V.read_results(bad)
