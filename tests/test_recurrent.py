"""The recurrent encoder-decoder with additive attention (utils.model.recurrent, Bahdanau et al.
2015) and the FLOP count of a training step (utils.experiments.flops), for issue 22: Table 2 of the
paper on G2P, the recurrent model against the Transformer at equal training cost.

Behaviour that must hold for any weights (padding and the future never leak into real
outputs), a hand-checked attention step, clear errors, the course's decoders running on
the model, the parameter count against the G2P Transformer's, and the FLOP counter
against the formula, exactly, for both models.
"""

import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from utils.core.masks import EOS_ID, PAD_ID, padding_mask, shift_right, target_mask
from utils.core.numerics import within
from utils.experiments.flops import recurrent_step_flops, step_flops, transformer_step_flops
from utils.model.decoding import beam_search, beam_search_batch, greedy_decode
from utils.model.recurrent import G2P_RECURRENT, AdditiveAttention, RecurrentSeq2Seq, additive_attention, new_recurrent_model
from utils.model.transformer import count_parameters
from utils.tasks.g2p import G2P_MODEL, G2PVocab, cached_lexicon, examples, greedy_phones, new_model
from utils.training.batching import collate, make_batches
from utils.training.recipe import LabelSmoothingLoss, make_optimizer

SIZES = dict(d_embed=8, d_hidden=6, d_attn=5)
SMALL = dict(vocab_size=13, **SIZES, p_drop=0.1)
#: Bound on |difference| of logits of the lively model, which reach about 35: float32 rounds
#: them at about 35 * 6e-8 = 2e-6 per operation. A leak of padding or of the future moves them by 1e-2 or more.
LOGIT_TOL = 2e-5


@pytest.fixture
def lively():
    """A small model with large random weights: attention far from uniform, outputs far
    from zero, so any leak of padding or of the future shows (the paper's initialisation
    gives near-uniform attention, v_a = 0, which would hide a leak)."""
    torch.manual_seed(0)
    model = RecurrentSeq2Seq(**SMALL)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.7)
    return model.eval()


def pad_to(rows, length):
    return torch.tensor([r + [PAD_ID] * (length - len(r)) for r in rows])


# Three source/target pairs of different lengths (ids 3..12; 1 = <s>).
SRCS = [[5, 3, 4, 7], [6, 8, 3, 12, 9, 4, 10], [11, 3]]
TGTS = [[1, 7, 4], [1, 10, 4, 9, 12, 3], [1, 8, 8, 5, 6]]


# ---- shapes and the Transformer's interface ---------------------------------------

def test_shapes(lively):
    src, tgt = pad_to(SRCS, 7), pad_to(TGTS, 6)
    memory = lively.encode(src)
    assert memory.shape == (3, 7, 2 * SMALL["d_hidden"])
    y = lively.decode(tgt, memory, padding_mask(src))
    assert y.shape == (3, 6, SMALL["d_embed"])
    assert lively.generator(y).shape == (3, 6, 13)
    assert lively(src, tgt).shape == (3, 6, 13)
    assert lively.pad_id == PAD_ID and lively.embed.d_model == SMALL["d_embed"]


def test_output_layer_is_the_embedding_table(lively):
    t = torch.randn(2, SMALL["d_embed"])
    assert torch.equal(lively.generator(t), t @ lively.embed.lut.weight.T)
    names = [n for n, _ in lively.named_parameters()]
    assert sum("lut" in n for n in names) == 1  # one table: embedding and output layer


def test_padded_memory_is_zero_and_attention_weights_ignore_padding(lively):
    src, tgt = pad_to(SRCS, 7), pad_to(TGTS, 6)
    memory = lively.encode(src)
    assert (memory[0, 4:] == 0).all() and (memory[2, 2:] == 0).all()
    lively.attention.keep_weights = True
    lively.decode(tgt, memory, padding_mask(src))
    w = lively.attention.weights
    assert w.shape == (3, 6, 7)
    assert (w[0, :, 4:] == 0).all() and (w[2, :, 2:] == 0).all()
    print("max |row sum - 1| =", within((w.sum(-1) - 1).abs().max(), 1e-6))


# ---- padding and the future do not leak ------------------------------------------

def test_source_padding_changes_nothing(lively):
    """Each row of a padded batch gives the logits of the same row run alone, unpadded;
    with the padding mask, even what the padded positions hold does not matter."""
    src, tgt = pad_to(SRCS, 9), pad_to(TGTS, 6)  # two padding positions more than needed
    batch = lively(src, tgt)
    diffs = []
    for i, (s, t) in enumerate(zip(SRCS, TGTS)):
        alone = lively(torch.tensor([s]), torch.tensor([t]))
        diffs.append((batch[i, : len(t)] - alone[0]).abs().max())
    print("max |padded batch - rows alone| =", within(max(diffs), LOGIT_TOL))
    garbage = src.masked_fill(src == PAD_ID, 9)  # real tokens where the padding was
    again = lively(garbage, tgt, padding_mask(src), target_mask(tgt))
    print("max |padding 0 - padding 9| =", within((again - batch).abs().max(), LOGIT_TOL))
    # the test can fail: read as real tokens, the same ids change the outputs
    assert (lively(garbage, tgt)[0, :3] - batch[0, :3]).abs().max() > 1e-2


def test_decoder_without_src_mask_attends_to_padding(lively):
    """As the Transformer's decode: no src_mask, every memory position is seen."""
    src, tgt = pad_to(SRCS, 7), pad_to(TGTS, 6)
    memory = lively.encode(src)
    masked = lively.decode(tgt, memory, padding_mask(src))
    assert (lively.decode(tgt, memory) - masked)[0].abs().max() > 1e-3
    assert torch.equal(lively.decode(tgt[1:2], memory[1:2]), lively.decode(tgt[1:2], memory[1:2], padding_mask(src[1:2])))


def test_future_target_tokens_do_not_change_earlier_logits(lively):
    src, tgt = pad_to(SRCS, 7), pad_to(TGTS, 6)
    logits = lively(src, tgt)
    for k in range(1, 6):
        changed = tgt.clone()
        changed[:, k:] = torch.randint(3, 13, (3, 6 - k), generator=torch.Generator().manual_seed(k))
        other = lively(src, changed)
        within((other[:, :k] - logits[:, :k]).abs().max(), LOGIT_TOL)
        assert (other[:, k:] - logits[:, k:]).abs().max() > 1e-3  # the test can fail
    # tgt_mask is checked but redundant: a mask that hides nothing changes nothing
    full = torch.ones(6, 6, dtype=torch.bool)[None, None]
    assert torch.equal(lively(src, tgt, padding_mask(src), full), logits)


def test_padded_target_rows_agree_with_rows_alone(lively):
    src, tgt = pad_to(SRCS, 7), pad_to(TGTS, 6)
    logits = lively(src, tgt)
    diff = max((logits[i, : len(t)] - lively(torch.tensor([s]), torch.tensor([t]))[0]).abs().max()
               for i, (s, t) in enumerate(zip(SRCS, TGTS)))
    print("max |batch - rows alone| =", within(diff, LOGIT_TOL))


# ---- the additive attention step, by hand ----------------------------------------

def test_additive_attention_by_hand():
    """Two source positions and a padded third; d_attn = 2, values of width 2.

    query W s = [0, 0]; keys U h_1 = [0, 0], U h_2 = [atanh(0.5), 0]; v = [2, 1]:
    e_1 = 2 tanh(0) + tanh(0) = 0 and e_2 = 2 tanh(atanh(0.5)) + tanh(0) = 2 * 0.5 = 1.
    alpha = softmax([0, 1]) = [1 / (1 + e), e / (1 + e)] = [0.2689, 0.7311], and the
    third position, padding, gets 0 whatever its key. With h_1 = [1, 0] and h_2 = [0, 1]
    the context is alpha itself: [0.2689, 0.7311].
    """
    a = math.atanh(0.5)
    query = torch.tensor([[0.0, 0.0]])
    keys = torch.tensor([[[0.0, 0.0], [a, 0.0], [5.0, 5.0]]])
    values = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [7.0, 7.0]]])
    mask = torch.tensor([[True, True, False]])
    v = torch.nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        v.weight.copy_(torch.tensor([[2.0, 1.0]]))
    context, weights = additive_attention(query, keys, v, values, mask)
    e = math.e
    expected = torch.tensor([[1 / (1 + e), e / (1 + e), 0.0]])
    print("alpha =", [round(x, 4) for x in weights[0].tolist()])
    assert [round(x, 4) for x in weights[0].tolist()] == [0.2689, 0.7311, 0.0]
    within((weights - expected).abs().max(), 1e-6)
    within((context - expected[:, :2]).abs().max(), 1e-6)
    # the module, with W_a, U_a (and its bias) and v_a set to give the same numbers
    module = AdditiveAttention(d_query=2, d_key=2, d_attn=2)
    with torch.no_grad():
        module.w_a.weight.zero_()
        module.u_a.weight.copy_(torch.tensor([[0.0, a], [0.0, 0.0]]))  # U h_2 = [a, 0], U h_1 = [0, 0]
        module.u_a.bias.zero_()
        module.v_a.weight.copy_(v.weight)
    module.keep_weights = True
    out = module(torch.tensor([[0.3, -0.4]]), values[:, :2])  # any query: W_a = 0
    within((out - expected[:, :2]).abs().max(), 1e-6)
    within((module.weights - expected[:, :2]).abs().max(), 1e-6)


def test_fully_masked_row_gives_zero_context_not_nan():
    v = torch.nn.Linear(2, 1, bias=False)
    context, weights = additive_attention(torch.zeros(1, 2), torch.zeros(1, 3, 2), v, torch.ones(1, 3, 4),
                                          torch.zeros(1, 3, dtype=torch.bool))
    assert torch.equal(weights, torch.zeros(1, 3)) and torch.equal(context, torch.zeros(1, 4))


# ---- errors ----------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, message", [
    (dict(d_hidden=0), ValueError, "d_hidden must be a positive int, got 0"),
    (dict(d_embed=8.0), TypeError, "d_embed must be a positive int, got float 8.0"),
    (dict(d_attn=True), TypeError, "d_attn must be a positive int, got bool True"),
    (dict(vocab_size=-3), ValueError, "vocab_size must be a positive int, got -3"),
    (dict(p_drop=1.0), ValueError, r"p_drop must lie in \[0, 1\), got 1.0"),
    (dict(pad_id=13), ValueError, r"pad_id must be a token id in 0..12, got 13"),
])
def test_bad_sizes(kwargs, error, message):
    with pytest.raises(error, match=message):
        RecurrentSeq2Seq(**{**SMALL, **kwargs})


def test_unknown_field_of_the_g2p_model():
    with pytest.raises(TypeError, match=r"unknown model fields \['d_model'\]; the fields are"):
        new_recurrent_model(d_model=128)


def test_bad_ids(lively):
    src, tgt = pad_to(SRCS, 7), pad_to(TGTS, 6)
    with pytest.raises(TypeError, match="ids must hold integer token ids"):
        lively(src.float(), tgt)
    with pytest.raises(TypeError, match="src must hold integer token ids"):
        lively.encode(src.float())
    with pytest.raises(ValueError, match=r"src must have shape \(batch, len\), got \(7,\)"):
        lively.encode(src[0])
    with pytest.raises(ValueError, match=r"src must have shape \(batch, len\) with len >= 1, got \(3, 0\)"):
        lively.encode(src[:, :0])
    with pytest.raises(IndexError, match=r"token ids must lie in 0..12, got min 0, max 13"):
        lively(src.masked_fill(src == 5, 13), tgt)
    memory = lively.encode(src)
    with pytest.raises(ValueError, match=r"memory must have shape \(batch, src_len >= 1, d_model=12\), got \(3, 7, 6\)"):
        lively.decode(tgt, memory[..., :6])
    with pytest.raises(ValueError, match=r"tgt and memory must have the same batch size, got tgt \(2, 6\)"):
        lively.decode(tgt[:2], memory)
    with pytest.raises(TypeError, match="memory must be a floating-point tensor"):
        lively.decode(tgt, memory.long())


def test_bad_masks(lively):
    src, tgt = pad_to(SRCS, 7), pad_to(TGTS, 6)
    with pytest.raises(TypeError, match="mask must have dtype torch.bool.*got torch.float32"):
        lively(src, tgt, padding_mask(src).float())
    with pytest.raises(TypeError, match="mask must have dtype torch.bool.*got torch.int64"):
        lively(src, tgt, padding_mask(src), target_mask(tgt).long())
    with pytest.raises(ValueError, match=r"mask of shape \(3, 1, 1, 6\) does not broadcast.*\(3, 1, 1, 7\)"):
        lively(src, tgt, padding_mask(src[:, :6]))
    with pytest.raises(ValueError, match=r"mask of shape \(3, 1, 5, 5\) does not broadcast.*\(3, 1, 6, 6\)"):
        lively(src, tgt, padding_mask(src), target_mask(tgt[:, :5]))
    with pytest.raises(ValueError, match=r"mask of shape \(3, 7\) does not broadcast.*\(batch=3, 1, 1, k_len=7\) from padding_mask"):
        lively.encode(src, src != PAD_ID)
    holes = padding_mask(src).clone()
    holes[1, 0, 0, 2] = False
    with pytest.raises(ValueError, match=r"src_mask must mark each row's real tokens as a prefix.*"
                                         r"got \[1, 1, 0, 1, 1, 1, 1\] in row 1"):
        lively.encode(src, holes)
    empty = padding_mask(src).clone()
    empty[2] = False
    with pytest.raises(ValueError, match=r"True on the first n >= 1 positions.*in row 2"):
        lively.encode(src, empty)


def test_bad_attention_inputs():
    module = AdditiveAttention(d_query=4, d_key=6, d_attn=3)
    memory = torch.randn(2, 5, 6)
    with pytest.raises(ValueError, match=r"query must have shape \(batch, d_query=4\), got \(2, 3\)"):
        module(torch.randn(2, 3), memory)
    with pytest.raises(ValueError, match=r"memory must have shape \(batch, src_len, d_key=6\), got \(2, 5, 4\)"):
        module(torch.randn(2, 4), torch.randn(2, 5, 4))
    with pytest.raises(ValueError, match=r"additive attention needs query \(batch, d_attn\).*got query \(3, 3\)"):
        module(torch.randn(3, 4), memory)
    with pytest.raises(TypeError, match="query must be a floating-point tensor"):
        module(torch.ones(2, 4, dtype=torch.long), memory)
    with pytest.raises(ValueError, match=r"mask of shape \(2, 4\) does not broadcast.*\(2, 5\)"):
        module(torch.randn(2, 4), memory, mask=torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="d_attn must be a positive int, got 0"):
        AdditiveAttention(4, 6, 0)


# ---- the course's decoders and optimizer take it ----------------------------------

@pytest.fixture(scope="module")
def g2p_small():
    torch.manual_seed(0)
    return RecurrentSeq2Seq(69, d_embed=16, d_hidden=12, d_attn=10).eval()


WORDS = ["read", "cat", "table", "a", "pronunciation"]


def test_greedy_decoding_runs_and_is_deterministic(g2p_small):
    vocab = G2PVocab()
    out = greedy_phones(g2p_small, WORDS, vocab)
    assert out == greedy_phones(g2p_small, WORDS, vocab)
    assert len(out) == len(WORDS) and all(isinstance(p, list) for p in out)
    src, _ = collate([(vocab.encode_word(w), [EOS_ID]) for w in WORDS])
    ids = greedy_decode(g2p_small, src, max_len=src.size(1) + 10)
    for row in ids.tolist():
        if EOS_ID in row:  # after </s>, only padding
            assert set(row[row.index(EOS_ID) + 1:]) <= {PAD_ID}
        else:
            assert len(row) == src.size(1) + 10


def test_beam_search_batch_runs_and_agrees_with_one_row_search(g2p_small):
    vocab = G2PVocab()
    src, _ = collate([(vocab.encode_word(w), [EOS_ID]) for w in WORDS[:3]])
    hyps = beam_search_batch(g2p_small, src, max_extra=4)
    assert hyps == beam_search_batch(g2p_small, src, max_extra=4)  # deterministic
    for i, row in enumerate(hyps):
        n = int((src[i] != PAD_ID).sum())
        assert 1 <= len(row) <= 4
        for h in row:
            assert (h.finished and h.tokens[-1] == EOS_ID and EOS_ID not in h.tokens[:-1]) or (
                not h.finished and len(h.tokens) == n + 4)
        alone = beam_search(g2p_small, src[i:i + 1, :n], max_extra=4)
        assert [h.tokens for h in alone] == [h.tokens for h in row]
        within(max(abs(a.log_prob - b.log_prob) for a, b in zip(alone, row)), 1e-5)


def test_decoders_stop_at_end_of_sequence():
    """A model whose readout always points at </s>'s embedding: both decoders stop after one token."""
    torch.manual_seed(0)
    model = RecurrentSeq2Seq(69, d_embed=16, d_hidden=12, d_attn=10).eval()
    with torch.no_grad():
        model.readout.weight.zero_()
        model.readout.bias.copy_(20 * model.embed.lut.weight[EOS_ID].repeat_interleave(2))  # both maxout units
    vocab = G2PVocab()
    src, _ = collate([(vocab.encode_word(w), [EOS_ID]) for w in WORDS])
    assert greedy_decode(model, src).tolist() == [[EOS_ID]] * len(WORDS)
    assert greedy_phones(model, WORDS, vocab) == [[]] * len(WORDS)
    for row in beam_search_batch(model, src):
        assert row[0].tokens == (EOS_ID,) and row[0].finished


def test_decoders_refuse_a_model_in_training_mode(g2p_small):
    g2p_small.train()
    try:
        with pytest.raises(RuntimeError, match="call model.eval"):
            greedy_decode(g2p_small, torch.tensor([[5, 6]]))
    finally:
        g2p_small.eval()
    with pytest.raises(TypeError, match=r"model must be a utils.model.transformer.Transformer or a model with its decoding "
                                        r"interface.*got Linear"):
        greedy_decode(torch.nn.Linear(2, 2), torch.tensor([[5, 6]]))


def test_same_learning_rate_schedule_as_the_g2p_transformer():
    model = new_recurrent_model()
    assert model.embed.d_model == G2P_MODEL["d_model"]
    _, sched_r = make_optimizer(model, 4000)
    _, sched_t = make_optimizer(new_model(), 4000)
    assert sched_r.get_last_lr() == sched_t.get_last_lr()


def test_it_learns():
    """Twenty Adam steps on four words of the training split bring the label-smoothed loss down by half or more."""
    torch.manual_seed(0)
    vocab = G2PVocab()
    lex = cached_lexicon()["train"]
    pairs = examples({w: lex[w] for w in list(lex)[5000:5004]}, vocab)
    src, tgt = collate(pairs)
    model = RecurrentSeq2Seq(69, d_embed=32, d_hidden=32, d_attn=32, p_drop=0.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    criterion = LabelSmoothingLoss(0.1)
    losses = []
    for _ in range(20):
        loss = criterion(model(src, shift_right(tgt)), tgt)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses


# ---- size and cost against the G2P Transformer -----------------------------------

def test_parameter_count_close_to_the_g2p_transformer():
    transformer, recurrent = count_parameters(new_model()), count_parameters(new_recurrent_model())
    print(f"parameters: Transformer {transformer:,}, recurrent {recurrent:,}, ratio {recurrent / transformer:.4f}")
    assert (transformer, recurrent) == (1_397_376, 1_388_476)  # the numbers utils/model/recurrent.py states
    assert abs(recurrent / transformer - 1) < 0.01


def test_paper_initialisation():
    """Appendix B.1: v_a and the biases zero, recurrent matrices orthogonal (per gate)."""
    model = new_recurrent_model()
    assert torch.equal(model.attention.v_a.weight, torch.zeros_like(model.attention.v_a.weight))
    assert all((p == 0).all() for n, p in model.named_parameters() if "bias" in n)
    for block in model.decoder_cell.weight_hh.chunk(3, dim=0):
        within((block @ block.T - torch.eye(block.size(0))).abs().max(), 1e-5)


@pytest.fixture(scope="module")
def g2p_batches():
    """A real training batch of make_batches (max_tokens 3000; its rows have equal source
    lengths) and a batch of mixed lengths (packing: fewer real tokens than positions)."""
    vocab = G2PVocab()
    pairs = examples(cached_lexicon()["train"], vocab)
    batches = make_batches(pairs, 3000)
    real = collate([pairs[i] for i in batches[len(batches) // 2]])
    mixed = collate([pairs[i] for i in range(0, 60_000, 2000)])
    lengths = (mixed[0] != PAD_ID).sum(1)
    assert lengths.min() < lengths.max() and (lengths == lengths.max()).sum() < len(lengths)
    return {"real": real, "mixed": mixed}


@pytest.mark.parametrize("which", ["real", "mixed"])
def test_flops_of_a_training_step_match_the_formulas(g2p_batches, which):
    """FlopCounterMode over forward, loss and backward equals the by-hand count exactly:
    it sees every product of nn.GRU and nn.GRUCell (none is hidden in a fused kernel)."""
    src, tgt = g2p_batches[which]
    torch.manual_seed(0)
    transformer, recurrent = new_model(), new_recurrent_model()
    counted_t = step_flops(transformer, src, tgt)
    formula_t = transformer_step_flops(src.size(0), src.size(1), tgt.size(1), 69, **G2P_MODEL)
    counted_r = step_flops(recurrent, src, tgt)
    lengths = (src != PAD_ID).sum(1)
    formula_r = recurrent_step_flops(lengths, tgt.size(1), 69, **G2P_RECURRENT)
    print(f"{which} batch {tuple(src.shape)} -> {tuple(tgt.shape)}: Transformer {counted_t:,} counted, "
          f"{formula_t:,} by hand; recurrent {counted_r:,} counted, {formula_r:,} by hand")
    assert counted_t == formula_t
    assert counted_r == formula_r
    assert recurrent.embed.lut.weight.grad is None  # step_flops leaves .grad alone


def test_a_step_is_three_forwards_less_the_gradient_of_the_initial_state():
    """Backward = 2 x forward, less the encoder's first steps: their state h_0 = 0 is a
    constant and gets no gradient (forward direction: all 3 rows; backward direction: the
    one row of the longest length, 7)."""
    torch.manual_seed(0)
    model = RecurrentSeq2Seq(**SMALL)
    src, tgt = pad_to(SRCS, 7), pad_to([t[1:] + [EOS_ID] for t in TGTS], 6)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(src, shift_right(tgt))
    forward = counter.get_total_flops()
    skipped = 2 * (3 + 1) * SMALL["d_hidden"] * 3 * SMALL["d_hidden"]
    assert step_flops(model, src, tgt) == 3 * forward - skipped == recurrent_step_flops([4, 7, 2], 6, 13, **SIZES)


def test_flop_helpers_refuse_bad_input():
    with pytest.raises(ValueError, match=r"src and tgt need the same batch size, got \(2, 3\) and \(3, 3\)"):
        step_flops(new_recurrent_model(), torch.ones(2, 3, dtype=torch.long), torch.ones(3, 3, dtype=torch.long))
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        step_flops("model", torch.ones(2, 3, dtype=torch.long), torch.ones(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="src_lengths must hold one positive length per row, got none"):
        recurrent_step_flops([], 5, 69, **G2P_RECURRENT)
    with pytest.raises(ValueError, match=r"src_lengths\[1\] must be a positive int, got 0"):
        recurrent_step_flops([3, 0], 5, 69, **G2P_RECURRENT)
    with pytest.raises(ValueError, match="N must be a positive int, got 0"):
        transformer_step_flops(2, 3, 4, 69, **{**G2P_MODEL, "N": 0})


# ---- optional dropout sites (issue 34): off by default, and then nothing changes ----------

def _forward_before_the_sites(model, src, tgt):
    """The model's forward pass as utils/model/recurrent.py computed it before the optional
    dropout sites existed (its encode and decode, line for line), for the identity test."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    src_mask = padding_mask(src, model.pad_id)
    lengths = src_mask.reshape(src.size(0), -1).sum(-1)
    x = model.dropout(model.embed(src))
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    memory, _ = pad_packed_sequence(model.encoder(packed)[0], batch_first=True, total_length=src.size(1))
    keep = src_mask.reshape(src.size(0), src.size(1))
    y = model.dropout(model.embed(tgt))
    keys = model.attention.keys(memory)
    s = torch.tanh(model.init_state(memory[:, 0, model.d_hidden:]))
    states, contexts = [], []
    for i in range(tgt.size(1)):
        c = model.attention(s, memory, keys, keep)
        s = model.decoder_cell(torch.cat([y[:, i], c], dim=-1), s)
        states.append(s)
        contexts.append(c)
    t = model.readout(torch.cat([torch.stack(states, 1), torch.stack(contexts, 1), y], dim=-1))
    return model.generator(model.dropout(t.unflatten(-1, (-1, 2)).amax(dim=-1)))


def test_the_optional_dropout_sites_are_off_by_default_and_change_nothing(lively):
    """Default off: in train mode, with the same seed, the same logits to the bit as the code before
    the sites, and the same random numbers drawn (so a run trains exactly as the shipped ones)."""
    src, tgt = pad_to(SRCS, 7), pad_to(TGTS, 6)
    assert (lively.drop_memory.p, lively.drop_input.p, lively.drop_state.p) == (0.0, 0.0, 0.0)
    assert new_recurrent_model().state_dict().keys() == new_recurrent_model(p_memory=0.3).state_dict().keys()
    lively.train()
    torch.manual_seed(5)
    now = lively(src, tgt)
    after_now = torch.get_rng_state()
    torch.manual_seed(5)
    before = _forward_before_the_sites(lively, src, tgt)
    assert torch.equal(now, before) and torch.equal(after_now, torch.get_rng_state())


@pytest.mark.parametrize("site", ["p_memory", "p_input", "p_state"])
def test_each_dropout_site_changes_training_outputs_and_not_eval_outputs(lively, site):
    src, tgt = pad_to(SRCS, 7), pad_to(TGTS, 6)
    on = RecurrentSeq2Seq(**SMALL, **{site: 0.5})
    on.load_state_dict(lively.state_dict())
    for model in (lively, on):
        model.train()
    torch.manual_seed(3)
    off_train = lively(src, tgt)
    torch.manual_seed(3)
    on_train = on(src, tgt)
    assert not torch.equal(off_train, on_train), f"{site}=0.5 changed nothing in train mode"
    lively.eval(), on.eval()
    assert torch.equal(lively(src, tgt), on(src, tgt)), f"{site} acts in eval mode"


def test_dropout_site_errors():
    with pytest.raises(ValueError, match=r"p_state must lie in \[0, 1\), got 1.0"):
        RecurrentSeq2Seq(**SMALL, p_state=1.0)
    with pytest.raises(TypeError, match="p_memory must be a number"):
        RecurrentSeq2Seq(**SMALL, p_memory="0.1")
    model = new_recurrent_model(p_memory=0.2, p_input=0.3, p_state=0.4)
    assert (model.drop_memory.p, model.drop_input.p, model.drop_state.p) == (0.2, 0.3, 0.4)
    with pytest.raises(TypeError, match=r"unknown model fields \['p_hidden'\]; the fields are \[.*'p_memory'"):
        new_recurrent_model(p_hidden=0.1)
