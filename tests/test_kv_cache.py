"""The KV cache (utils/model/kv_cache.py, chapter 11): the same decoder output as re-reading the
prefix, the same tokens from every decoder, its memory, its errors, and the committed check."""

import pytest
import torch

from utils.core.masks import BOS_ID, padding_mask, target_mask
from utils.experiments import kv_cache as check
from utils.model.decoding import beam_search, beam_search_batch, greedy_decode
from utils.model.kv_cache import KVCache
from utils.model.recurrent import RecurrentSeq2Seq
from utils.model.transformer import TINY, Transformer
from utils.tasks.reversal.task import load_checkpoint


def _model(seed=0, **kw):
    torch.manual_seed(seed)
    return Transformer(**{**TINY, "p_drop": 0.0, **kw}).eval()


def _sources(seed=1, batch=5, length=7):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(3, 13, (batch, length), generator=g)
    if batch > 1:
        src[1, 5:] = 0  # padding in one row
    return src


def test_step_is_the_last_position_of_decode():
    model, src = _model(), _sources()
    mask = padding_mask(src)
    memory = model.encode(src, mask)
    kv = KVCache(model, memory, mask)
    ys = torch.full((src.size(0), 1), BOS_ID)
    g = torch.Generator().manual_seed(2)
    worst = 0.0
    for _ in range(12):
        y = kv.step(ys)
        with torch.no_grad():
            full = model.decode(ys, memory, mask, target_mask(ys))[:, -1]
        worst = max(worst, (y - full).abs().max().item())
        ys = torch.cat([ys, torch.randint(3, 13, (src.size(0), 1), generator=g)], dim=1)
    print(f"max |step - decode[:, -1]| = {worst:.2e}")
    assert worst < 1e-5


def test_padding_after_an_ended_row_is_hidden_as_decode_hides_it():
    model, src = _model(), _sources(batch=2)
    memory = model.encode(src, padding_mask(src))
    kv = KVCache(model, memory, padding_mask(src))
    ys = torch.tensor([[BOS_ID, 5, 2, 0, 0], [BOS_ID, 5, 6, 7, 8]])  # row 0 ended after </s>
    for t in range(1, 6):
        y = kv.step(ys[:, :t])
    with torch.no_grad():
        full = model.decode(ys, memory, padding_mask(src), target_mask(ys))[:, -1]
    assert (y - full).abs().max().item() < 1e-5


def test_one_sentence_s_memory_keys_are_not_copied_per_row():
    model, src = _model(), _sources(batch=1)
    kv = KVCache(model, model.encode(src))
    kv.step(torch.tensor([[BOS_ID]]))
    kv.step(torch.tensor([[BOS_ID, 5], [BOS_ID, 6], [BOS_ID, 7]]))
    assert all(r.data_ptr() == m.data_ptr() for r, m in zip(kv.row_keys, kv.memory_keys))


def test_the_cache_follows_reordered_and_dropped_rows():
    """Beam search keeps some rows, twice some, in another order: the cache follows each prefix's parent."""
    model, src = _model(), _sources(batch=1)
    memory = model.encode(src)
    kv = KVCache(model, memory)
    ys = torch.tensor([[BOS_ID, 5], [BOS_ID, 6], [BOS_ID, 7]])
    kv.step(ys[:, :1])
    kv.step(ys)
    nxt = torch.cat([ys[[2, 0, 0]], torch.tensor([[8], [9], [10]])], dim=1)  # parents 2, 0, 0
    assert kv.parents(nxt, torch.zeros(3, dtype=torch.long)).tolist() == [2, 0, 0]
    y = kv.step(nxt, parents=torch.tensor([2, 0, 0]))  # given, as beam_search_batch gives them
    with torch.no_grad():
        full = model.decode(nxt, memory.expand(3, -1, -1), None, target_mask(nxt))[:, -1]
    assert (y - full).abs().max().item() < 1e-5
    wrong = torch.cat([nxt, torch.full((3, 1), 5)], dim=1)
    with pytest.raises(ValueError, match="extends no prefix this cache holds at the parent given"):
        kv.step(wrong, parents=torch.tensor([1, 0, 2]))
    with pytest.raises(ValueError, match="parents must hold one row in 0..2"):
        kv.step(wrong, parents=torch.tensor([0, 0, 3]))


def test_memory_is_2_N_d_model_numbers_per_token():
    model, src = _model(), _sources(batch=3)
    kv = KVCache(model, model.encode(src))
    held = sum(k.numel() + v.numel() for k, v in zip(kv.memory_keys, kv.memory_values))
    assert held == 3 * src.size(1) * 2 * TINY["N"] * TINY["d_model"]  # per source token of each sentence
    ys = torch.full((3, 1), BOS_ID)
    for t in range(1, 6):
        kv.step(ys)
        held = sum(k.numel() + v.numel() for k, v in zip(kv.keys, kv.values))
        assert held == 3 * t * 2 * TINY["N"] * TINY["d_model"]
        ys = torch.cat([ys, torch.full((3, 1), 7)], dim=1)


def test_every_decoder_gives_the_same_tokens_and_scores_with_the_cache():
    model = load_checkpoint(3000)
    src = _sources(seed=3, batch=8)
    assert torch.equal(greedy_decode(model, src, cache=False), greedy_decode(model, src, cache=True))
    assert torch.equal(greedy_decode(model, src), greedy_decode(model, src, cache=True))  # None: cached
    for row in src[:3]:
        one = row[row != 0][None]
        a, b = beam_search(model, one, cache=False), beam_search(model, one, cache=True)
        assert [h.tokens for h in a] == [h.tokens for h in b]
        assert max(abs(x.log_prob - y.log_prob) for x, y in zip(a, b)) < 1e-4
    a, b = beam_search_batch(model, src, cache=False), beam_search_batch(model, src, cache=True)
    assert [[h.tokens for h in r] for r in a] == [[h.tokens for h in r] for r in b]


@pytest.mark.parametrize("task,decode,items", [("translation", "greedy", 120), ("translation", "beam", 120),
                                               ("g2p", "greedy", 300), ("g2p", "beam", 300)])
def test_a_prefix_of_the_committed_check_replays(task, decode, items):
    """The shipped models decode the first test items to the same tokens with and without the cache,
    their numbers within the stated tolerance, as the committed check found on every item."""
    got = check.compare_decoding(task, decode, items)
    assert got["identical"] == items, got
    for key, value in got["max_abs_diff"].items():
        assert value <= check.TOLERANCE[key], (key, value)


def test_the_committed_check_covers_every_test_item_identically():
    parts = check.load_check()
    assert parts["translation greedy"]["items"] == parts["translation beam"]["items"] == 1293
    assert parts["g2p greedy"]["items"] == parts["g2p beam"]["items"] == 6159
    for name, part in parts.items():
        assert part["identical"] == part["items"] and part["first_difference"] is None, name
        assert set(part["max_abs_diff"]) == ({"probs", "log_prob_chosen"} if "greedy" in name else {"log_prob"})
        for key, value in part["max_abs_diff"].items():
            assert 0 < value <= check.TOLERANCE[key], (name, key, value)


def test_the_recurrent_model_decodes_without_a_cache():
    torch.manual_seed(0)
    model = RecurrentSeq2Seq(13, d_embed=16, d_hidden=8, d_attn=8).eval()
    src = _sources(batch=2)
    assert torch.equal(greedy_decode(model, src, max_len=6), greedy_decode(model, src, max_len=6, cache=False))
    with pytest.raises(TypeError, match="cache=True needs the course's Transformer"):
        greedy_decode(model, src, cache=True)
    with pytest.raises(TypeError, match="needs the course's Transformer"):
        KVCache(model, model.encode(src))


def test_bad_input_is_refused_with_a_clear_error():
    model, src = _model(), _sources(batch=2)
    memory = model.encode(src)
    with pytest.raises(TypeError, match="cache must be True, False or None"):
        greedy_decode(model, src, cache="yes")
    with pytest.raises(ValueError, match="this model's encoder output"):
        KVCache(model, torch.zeros(2, 7, 32))  # a cache built for another model's memory
    with pytest.raises(ValueError, match="src_mask must be the sources' padding mask"):
        KVCache(model, memory, torch.ones(1, 1, 1, 7, dtype=torch.bool))  # one mask for two sentences
    kv = KVCache(model, memory)
    with pytest.raises(ValueError, match=r"prefixes must have 1 token\(s\), the whole prefix"):
        kv.step(torch.full((2, 2), BOS_ID))
    kv.step(torch.full((2, 1), BOS_ID))
    with pytest.raises(ValueError, match="pass rows"):  # another batch size
        kv.step(torch.tensor([[BOS_ID, 5], [BOS_ID, 6], [BOS_ID, 7]]))
    with pytest.raises(ValueError, match="one sentence index in 0..1"):
        kv.step(torch.tensor([[BOS_ID, 5], [BOS_ID, 6]]), torch.tensor([0, 2]))
    with pytest.raises(ValueError, match="extends no prefix"):  # a prefix whose start is not held
        kv.step(torch.tensor([[5, 5], [BOS_ID, 6]]))
    kv.step(torch.tensor([[BOS_ID, 5], [BOS_ID, 6], [BOS_ID, 7]]), torch.tensor([0, 1, 1]))  # a beam of 2
    with pytest.raises(ValueError, match="extends no prefix"):  # prefixes of another search
        kv.step(torch.tensor([[BOS_ID, 5, 8], [BOS_ID, 8, 8]]))
    model.train()
    with pytest.raises(RuntimeError, match="training mode"):
        kv.step(torch.tensor([[BOS_ID, 5], [BOS_ID, 6]]))
    with pytest.raises(RuntimeError, match="training mode"):
        KVCache(model, memory)
    short = _model(max_len=3)
    kv = KVCache(short, short.encode(src[:, :3]))
    ys = torch.full((2, 1), BOS_ID)
    for _ in range(3):
        kv.step(ys)
        ys = torch.cat([ys, torch.full((2, 1), 5)], dim=1)
    with pytest.raises(ValueError, match="past the model's max_len=3"):
        kv.step(ys)


def test_the_decoding_commands_take_no_cache():
    import argparse

    from utils.core.env import add_cache_option
    parser = argparse.ArgumentParser()
    add_cache_option(parser)
    assert parser.parse_args([]).cache is None and parser.parse_args(["--no-cache"]).cache is False
