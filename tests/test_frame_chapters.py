"""Tests for the answer checkers of chapters 1, 9 and 13 and the helpers they use.

The helpers compute the expected answers (path lengths by graph search, window
masks, parameter counts); these tests compare them with independent counts.
"""

import math

import pytest
import torch
from torch import nn

from utils.exercises import EXERCISES, ch01, ch09, ch14, check

# ---- chapter 1: path lengths and recurrent chains ------------------------------

@pytest.mark.parametrize("n", [2, 7, 50])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_contiguous_layers_match_formula(n, k):
    assert ch01._layers_to_connect(n, lambda layer: range(k)) == math.ceil((n - 1) / (k - 1))


@pytest.mark.parametrize("n,k,expected", [(50, 3, 4), (27, 3, 3), (28, 3, 4), (50, 2, 6), (64, 2, 6), (65, 2, 7)])
def test_dilated_layers_are_smallest_power_covering_n(n, k, expected):
    assert ch01._layers_to_connect(n, lambda layer: [m * k**layer for m in range(k)]) == expected


def test_self_attention_connects_in_one_layer():
    assert ch01._layers_to_connect(50, lambda layer: range(50)) == 1


def test_layers_to_connect_rejects_bad_inputs():
    with pytest.raises(ValueError, match="n must be >= 1"):
        ch01._layers_to_connect(0, lambda layer: range(2))
    with pytest.raises(ValueError, match="not connected"):
        ch01._layers_to_connect(5, lambda layer: [0], max_layers=10)   # a layer that reads only itself


def test_stacked_rnn_chain_is_layers_plus_n_minus_one():
    for layers, n in [(1, 1), (1, 50), (3, 20), (4, 7)]:
        assert ch01._stacked_rnn(layers, n) == {"steps": layers * n, "chain": layers + n - 1}


# ---- chapter 9: window masks -----------------------------------------------------

def test_window_mask_band():
    m = ch09._window_mask(6, 1)
    assert m.dtype == torch.bool and m.shape == (6, 6)
    expected = torch.eye(6, dtype=torch.bool) | torch.eye(6, dtype=torch.bool).roll(1, 0) | torch.eye(6, dtype=torch.bool).roll(-1, 0)
    expected[0, 5] = expected[5, 0] = False   # roll wraps around; a window does not
    assert torch.equal(m, expected)


@pytest.mark.parametrize("n,r", [(10, 1), (50, 5), (100, 4), (9, 8), (9, 20)])
def test_window_layers_match_formula(n, r):
    assert ch09._layers_until_all_connected(ch09._window_mask(n, r)) == max(1, math.ceil((n - 1) / r))


def test_disconnected_mask_raises():
    with pytest.raises(ValueError, match="never connects"):
        ch09._layers_until_all_connected(torch.eye(4, dtype=torch.bool))


# ---- chapter 14: parameter counts and the cache --------------------------------

def _meta_count(vocab_size, d_model, N, h_q, h_kv, d_head, d_ff, **_):
    """Parameters counted from real (shape-only) PyTorch modules."""
    with torch.device("meta"):
        layer = nn.ModuleList([
            nn.Linear(d_model, h_q * d_head, bias=False), nn.Linear(d_model, h_kv * d_head, bias=False),
            nn.Linear(d_model, h_kv * d_head, bias=False), nn.Linear(h_q * d_head, d_model, bias=False),
            nn.Linear(d_model, d_ff, bias=False), nn.Linear(d_model, d_ff, bias=False),
            nn.Linear(d_ff, d_model, bias=False), nn.RMSNorm(d_model), nn.RMSNorm(d_model)])
        embed, final = nn.Embedding(vocab_size, d_model), nn.RMSNorm(d_model)
    count = lambda m: sum(p.numel() for p in m.parameters())
    return count(embed) + N * count(layer) + count(final)


@pytest.mark.parametrize("h_kv", [1, 3, 9])
def test_decoder_params_match_modules(h_kv):
    cfg = {**ch14.SMOLLM2_135M, "h_kv": h_kv}
    assert ch14._decoder_lm_params(**cfg) == _meta_count(**cfg)


def test_smollm2_count_is_the_published_135m():
    assert round(ch14._decoder_lm_params(**ch14.SMOLLM2_135M) / 1e6, 1) == 134.5


def test_kv_cache_scales_with_kv_heads():
    cfg = ch14.SMOLLM2_135M
    gqa = ch14._kv_cache_bytes(**cfg)
    assert ch14._kv_cache_bytes(**{**cfg, "h_kv": 9}) == 3 * gqa
    assert gqa == 2 * cfg["h_kv"] * cfg["d_head"] * cfg["N"] * cfg["context"] * 2


# ---- the checkers themselves ---------------------------------------------------

IDS = ["1.1", "1.2", "1.3", "9.1", "9.2", "9.3", "14.1", "14.2", "14.3"]


def test_all_exercises_are_registered():
    check("1.1", ...)   # loads every chapter's module
    assert set(IDS) <= set(EXERCISES)


@pytest.mark.parametrize("id", IDS)
def test_checker_accepts_expected_and_rejects_wrong(id, capsys):
    expected = EXERCISES[id].expected()
    assert check(id, expected)
    if isinstance(expected, dict):
        wrong = {key: value + 1 for key, value in expected.items()}
    else:
        wrong = expected + 1
    assert not check(id, wrong)
    out = capsys.readouterr().out
    assert "correct" in out and "not yet" in out


def test_checker_explains_wrong_type(capsys):
    assert not check("14.2", "1.2649, -0.6325, 1.2649, 0.6325")
    assert "should be a floating-point torch.Tensor" in " ".join(capsys.readouterr().out.split())
    assert not check("14.2", [1.2649, -0.6325, 1.2649])  # a list is fine, if it holds the 4 numbers
    assert "has shape (3,), expected shape (4,)" in " ".join(capsys.readouterr().out.split())


def test_known_answers():
    assert EXERCISES["1.1"].expected() == 13
    assert EXERCISES["1.2"].expected() == 6
    assert EXERCISES["9.1"].expected() == pytest.approx(1000 / 512)
    assert EXERCISES["9.2"].expected() == 25
    assert EXERCISES["9.3"].expected() == 10 + 2 * 9 + 2 * 8
    x = torch.tensor([1.0, -2.0, 2.0, 4.0])
    assert torch.allclose(EXERCISES["14.2"].expected(), x / x.pow(2).mean().sqrt())
