"""Greedy decoding, beam search and checkpoint averaging (utils/model/decoding.py, utils/training/checkpoints.py).

Beam search is driven by a fixed next-token table (no network): the expected
n-best lists are computed here by enumerating every possible output sequence.
"""

import itertools
import math

import pytest
import torch

from utils import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    TINY,
    Hypothesis,
    Transformer,
    average_checkpoints,
    beam_search,
    beam_search_core,
    greedy_decode,
    length_penalty,
    set_seed,
)

VOCAB = 5  # 0 pad, 1 <s>, 2 </s>, 3 and 4 two "letters"


def bigram_table(seed):
    """log P(next | last token): a (VOCAB, VOCAB) table with distinct entries."""
    g = torch.Generator().manual_seed(seed)
    return torch.log_softmax(3 * torch.randn(VOCAB, VOCAB, generator=g, dtype=torch.float64), dim=-1)


def table_model(table):
    def next_log_probs(prefixes):
        assert prefixes.dim() == 2 and (prefixes[:, 0] == BOS_ID).all()
        return table[prefixes[:, -1]]
    return next_log_probs


def all_outputs(table, max_len, alpha):
    """Every output the decoder could produce, scored: [(tokens, log_prob, score, finished)]."""
    out = []
    for length in range(1, max_len + 1):
        for tokens in itertools.product(range(VOCAB), repeat=length):
            if EOS_ID in tokens[:-1]:
                continue  # decoding stops at the first </s>
            finished = tokens[-1] == EOS_ID
            if not finished and length < max_len:
                continue  # an unfinished output only comes back at max_len
            log_prob = sum(table[a, b].item() for a, b in zip((BOS_ID,) + tokens, tokens))
            out.append((tokens, log_prob, log_prob / ((5 + length) / 6) ** alpha, finished))
    return sorted(out, key=lambda h: -h[2])


def table_greedy(table, max_len):
    tokens = []
    for _ in range(max_len):
        tokens.append(int(table[tokens[-1] if tokens else BOS_ID].argmax()))
        if tokens[-1] == EOS_ID:
            break
    return tuple(tokens)


def test_length_penalty_values():
    assert length_penalty(1, 0.6) == 1.0
    assert length_penalty(7, 0.0) == 1.0
    assert math.isclose(length_penalty(7, 1.0), 2.0)  # (5 + 7) / 6
    assert math.isclose(length_penalty(13, 0.5), math.sqrt(3.0))  # (5 + 13) / 6 = 3
    assert length_penalty(10, 0.6) > length_penalty(9, 0.6)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_wide_beam_without_early_stop_returns_every_output_ranked(seed, alpha):
    table, max_len = bigram_table(seed), 4
    expected = all_outputs(table, max_len, alpha)
    got = beam_search_core(table_model(table), max_len, beam_size=len(expected), alpha=alpha, early_stop=False)
    # A bigram table gives equal scores to reorderings of the same transitions,
    # so compare the ranked scores, and each output's own numbers.
    assert sorted(h.tokens for h in got) == sorted(e[0] for e in expected)
    assert all(math.isclose(h.score, e[2], abs_tol=1e-9) for h, e in zip(got, expected))
    by_tokens = {e[0]: e for e in expected}
    for h in got:
        tokens, log_prob, score, finished = by_tokens[h.tokens]
        assert isinstance(h, Hypothesis)
        assert math.isclose(h.log_prob, log_prob, abs_tol=1e-9)
        assert math.isclose(h.score, score, abs_tol=1e-9)
        assert h.finished == finished


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
def test_early_stop_keeps_the_best_output(seed, alpha):
    table, max_len = bigram_table(seed), 4
    expected = all_outputs(table, max_len, alpha)
    scores = {e[0]: e[2] for e in expected}
    got = beam_search_core(table_model(table), max_len, beam_size=len(expected), alpha=alpha)
    assert math.isclose(got[0].score, expected[0][2], abs_tol=1e-9)
    assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)
    for h in got:
        assert math.isclose(h.score, scores[h.tokens], abs_tol=1e-9)


def test_early_stop_stops_early():
    """A table where </s> is almost certain after every token: one step decides."""
    table = torch.full((VOCAB, VOCAB), math.log(0.01 / 4), dtype=torch.float64)
    table[:, EOS_ID] = math.log(0.99)
    calls = []

    def counting(prefixes):
        calls.append(prefixes.size(1))
        return table[prefixes[:, -1]]

    got = beam_search_core(counting, max_len=50, beam_size=4, alpha=0.6)
    assert got[0].tokens == (EOS_ID,)
    assert calls == [1], f"expected to stop after 1 step, decoded prefix lengths {calls}"
    calls.clear()
    beam_search_core(counting, max_len=50, beam_size=4, alpha=0.6, early_stop=False)
    assert len(calls) > 1


def test_early_stop_bound_uses_the_longest_penalty():
    """A live hypothesis behind the best finished one can still win: its penalty grows.

    After one step </s> (0.55) leads x (0.45). Continuing x almost surely, an
    unfinished x x x x x at max_len 5 scores log(0.45 * 0.99^4) / lp(5), far above
    log 0.55 / lp(1) with alpha = 2. Stopping on the current length's penalty
    would wrongly return </s>.
    """
    p = torch.full((VOCAB, VOCAB), 1e-9, dtype=torch.float64)
    p[BOS_ID, EOS_ID], p[BOS_ID, 3] = 0.55, 0.45
    p[3, 3], p[3, EOS_ID] = 0.99, 0.01
    table = torch.log(p / p.sum(-1, keepdim=True))
    expected = all_outputs(table, 5, 2.0)
    assert expected[0][0] == (3, 3, 3, 3, 3)
    got = beam_search_core(table_model(table), 5, beam_size=4, alpha=2.0)
    assert got[0].tokens == (3, 3, 3, 3, 3) and not got[0].finished
    assert math.isclose(got[0].score, expected[0][2], abs_tol=1e-9)


def test_narrow_beam_by_hand():
    """Greedy takes the locally best first token and loses; beam 2 finds the best output."""
    p = torch.full((VOCAB, VOCAB), 1e-6, dtype=torch.float64)
    p[BOS_ID, 3], p[BOS_ID, 4] = 0.6, 0.4  # greedy picks 3 first
    p[3, 3], p[3, EOS_ID] = 0.5, 0.45  # after 3 everything is uncertain
    p[4, EOS_ID] = 0.99  # after 4, </s> is almost sure
    table = torch.log(p / p.sum(-1, keepdim=True))
    expected = all_outputs(table, 3, 0.0)
    assert expected[0][0] == (4, EOS_ID)
    one = beam_search_core(table_model(table), 3, beam_size=1, alpha=0.0)
    assert one[0].tokens == table_greedy(table, 3) == (3, 3, 3)
    assert not one[0].finished
    two = beam_search_core(table_model(table), 3, beam_size=2, alpha=0.0, early_stop=False)
    assert two[0].tokens == (4, EOS_ID)
    assert math.isclose(two[0].score, expected[0][2], abs_tol=1e-12)
    assert len(two) <= 2


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
def test_beam_size_one_is_greedy_on_tables(seed, alpha):
    table = bigram_table(seed)
    got = beam_search_core(table_model(table), 6, beam_size=1, alpha=alpha)
    assert len(got) == 1
    assert got[0].tokens == table_greedy(table, 6)


@pytest.fixture(scope="module")
def model():
    set_seed(0)
    m = Transformer(**TINY)
    with torch.no_grad():  # make </s> likely so that some rows end early
        m.embed.lut.weight[EOS_ID] *= 3
    return m.eval()


def test_beam_size_one_is_greedy_on_a_model(model):
    g = torch.Generator().manual_seed(0)
    for _ in range(5):
        src = torch.randint(3, 13, (1, 6), generator=g)
        greedy = greedy_decode(model, src, max_len=12)[0].tolist()
        beam = beam_search(model, src, beam_size=1, max_extra=6)
        assert len(beam) == 1
        assert list(beam[0].tokens) == greedy[: len(beam[0].tokens)]
        assert all(t == PAD_ID for t in greedy[len(beam[0].tokens):])


def test_greedy_batch_equals_one_by_one_and_pads_after_eos(model):
    g = torch.Generator().manual_seed(1)
    src = torch.randint(3, 13, (4, 5), generator=g)
    src[1, 3:] = PAD_ID  # a shorter sentence in the batch
    ids, probs = greedy_decode(model, src, max_len=9, return_probs=True)
    assert ids.shape[0] == 4 and ids.shape[1] <= 9
    assert probs.shape == (*ids.shape, TINY["vocab_size"])
    assert torch.allclose(probs.sum(-1), torch.ones(ids.shape))
    for i in range(4):
        row = src[i : i + 1, : 3 if i == 1 else 5]
        alone = greedy_decode(model, row, max_len=9)[0]
        n = min(len(alone), ids.shape[1])
        assert alone[:n].tolist() == ids[i, :n].tolist()
        r = ids[i].tolist()
        if EOS_ID in r:
            assert all(t == PAD_ID for t in r[r.index(EOS_ID) + 1 :])
    # the probabilities are those of the chosen tokens where the row has not ended
    assert (probs.argmax(-1)[ids != PAD_ID] == ids[ids != PAD_ID]).all()


def never_ending(model):
    """The same model with </s> made impossible, so decoding runs to its length limit."""
    m = Transformer(**TINY).eval()
    m.load_state_dict(model.state_dict())
    plain = m.generator
    m.generator = lambda y: plain(y).index_fill(-1, torch.tensor([EOS_ID]), -1e9)
    return m


def test_greedy_default_max_len_is_src_len_plus_50(model):
    ids = greedy_decode(never_ending(model), torch.tensor([[3, 4, 5]]))
    assert ids.shape == (1, 53)
    assert EOS_ID not in ids[0].tolist()


def test_beam_search_stops_at_src_len_plus_max_extra(model):
    hyps = beam_search(never_ending(model), torch.tensor([[3, 4, 5]]), beam_size=2, max_extra=4)
    assert len(hyps) == 2
    assert all(len(h.tokens) == 7 and not h.finished for h in hyps)
    assert all(math.isclose(h.score, h.log_prob / length_penalty(7, 0.6)) for h in hyps)


def test_beam_search_max_len_is_src_len_plus_max_extra():
    table = torch.full((VOCAB, VOCAB), math.log(0.2), dtype=torch.float64)
    table[:, EOS_ID] = -1e9  # never ends
    table[:, 3] = math.log(0.8 - 1e-9)
    got = beam_search_core(table_model(table), 7, beam_size=2)
    assert all(len(h.tokens) == 7 and not h.finished for h in got)


@pytest.mark.parametrize("kwargs,match", [
    (dict(beam_size=0), "beam_size must be an int >= 1"),
    (dict(beam_size=2.0), "beam_size must be an int >= 1"),
    (dict(alpha=-0.1), "alpha must be a number >= 0"),
    (dict(alpha=float("nan")), "alpha must be a number >= 0"),
    (dict(max_extra=-1), "max_extra must be an int >= 0"),
])
def test_beam_search_rejects_bad_settings(model, kwargs, match):
    with pytest.raises(ValueError, match=match):
        beam_search(model, torch.tensor([[3, 4]]), **kwargs)


def test_beam_search_core_rejects_bad_max_len():
    with pytest.raises(ValueError, match="max_len must be an int >= 1"):
        beam_search_core(table_model(bigram_table(0)), 0)


@pytest.mark.parametrize("fn", [greedy_decode, beam_search])
def test_decoders_reject_bad_src(model, fn):
    with pytest.raises(TypeError, match="integer token ids"):
        fn(model, torch.tensor([[3.0, 4.0]]))
    with pytest.raises(TypeError, match="torch.Tensor"):
        fn(model, [[3, 4]])
    with pytest.raises(ValueError, match=r"shape \(batch, src_len\)"):
        fn(model, torch.tensor([3, 4]))


def test_beam_search_wants_one_sentence(model):
    with pytest.raises(ValueError, match=r"\(1, src_len\)"):
        beam_search(model, torch.tensor([[3, 4], [5, 6]]))


def test_decoders_refuse_a_model_in_training_mode():
    m = Transformer(**TINY).train()
    for fn in (greedy_decode, beam_search):
        with pytest.raises(RuntimeError, match="model.eval"):
            fn(m, torch.tensor([[3, 4]]))


def test_greedy_rejects_bad_max_len(model):
    with pytest.raises(ValueError, match="max_len"):
        greedy_decode(model, torch.tensor([[3, 4]]), max_len=0)


def test_average_checkpoints_is_the_mean():
    set_seed(0)
    sds = [Transformer(**TINY).state_dict() for _ in range(3)]
    avg = average_checkpoints(sds)
    assert avg.keys() == sds[0].keys()
    for key in avg:
        manual = (sds[0][key] + sds[1][key] + sds[2][key]) / 3
        assert avg[key].dtype == sds[0][key].dtype
        assert (avg[key] - manual).abs().max() < 1e-6, key
    m = Transformer(**TINY)
    m.load_state_dict(avg)  # loads without complaint
    assert average_checkpoints(sds[:1])["embed.lut.weight"].equal(sds[0]["embed.lut.weight"])


def test_average_checkpoints_copies_integer_entries():
    sds = [{"w": torch.tensor([1.0, 3.0]), "steps": torch.tensor(5)},
           {"w": torch.tensor([3.0, 5.0]), "steps": torch.tensor(7)}]
    avg = average_checkpoints(sds)
    assert avg["w"].tolist() == [2.0, 4.0]
    assert avg["steps"].item() == 5


def test_average_checkpoints_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one"):
        average_checkpoints([])
    with pytest.raises(ValueError, match="different keys"):
        average_checkpoints([{"a": torch.zeros(2)}, {"b": torch.zeros(2)}])
    with pytest.raises(ValueError, match="has shape"):
        average_checkpoints([{"a": torch.zeros(2)}, {"a": torch.zeros(3)}])
