"""Unit tests for the pieces of chapters 4-6: masks and shift right, the
feed-forward network, embeddings, the tokenizer and the tied output layer.
Bad inputs are tested too: each must raise a clear error."""

import io
import math

import pytest
import torch
from torch import nn

from utils import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    TINY,
    Embeddings,
    PositionwiseFeedForward,
    Tokenizer,
    Transformer,
    causal_mask,
    count_parameters,
    padding_mask,
    set_seed,
    shift_right,
    target_mask,
)
from utils.exercises import EXERCISES, check

# ---------------------------------------------------------------- masks


def test_padding_mask_shape_and_values():
    ids = torch.tensor([[5, 3, 4, 7, 6], [4, 3, 0, 0, 0]])
    mask = padding_mask(ids)
    assert mask.shape == (2, 1, 1, 5) and mask.dtype == torch.bool
    assert mask[:, 0, 0].tolist() == [[True] * 5, [True, True, False, False, False]]


def test_padding_mask_other_pad_id():
    assert padding_mask(torch.tensor([[7, 7, 3]]), pad_id=7)[0, 0, 0].tolist() == [False, False, True]


@pytest.mark.parametrize("bad,error,match", [
    ([[1, 2]], TypeError, "must be a torch.Tensor"),
    (torch.tensor([[1.0, 2.0]]), TypeError, "integer token ids"),
    (torch.tensor([1, 2]), ValueError, r"shape \(batch, len\)"),
    (torch.ones(1, 2, 3, dtype=torch.long), ValueError, r"got \(1, 2, 3\)"),
])
def test_padding_mask_bad_inputs(bad, error, match):
    with pytest.raises(error, match=match):
        padding_mask(bad)


@pytest.mark.parametrize("n", [1, 2, 6, 9])
def test_causal_mask_equals_pytorch(n):
    reference = nn.Transformer.generate_square_subsequent_mask(n) == 0
    mask = causal_mask(n)
    assert mask.dtype == torch.bool and torch.equal(mask, reference)
    assert int((~mask).sum()) == n * (n - 1) // 2


@pytest.mark.parametrize("bad", [0, -3, 2.0, True, "4", None])
def test_causal_mask_bad_sizes(bad):
    with pytest.raises(ValueError, match="positive int"):
        causal_mask(bad)


def test_target_mask_combines_padding_and_causal():
    dec = torch.tensor([[1, 6, 7, 4, 3, 5], [1, 3, 4, 2, 0, 0]])
    mask = target_mask(dec)
    assert mask.shape == (2, 1, 6, 6)
    assert torch.equal(mask[0, 0], causal_mask(6))
    expected = causal_mask(6).clone()
    expected[:, 4:] = False
    assert torch.equal(mask[1, 0], expected)
    assert mask.sum(dim=(1, 2, 3)).tolist() == [21, 18]


def test_target_mask_bad_input():
    with pytest.raises(TypeError, match="integer token ids"):
        target_mask(torch.zeros(1, 3))


def test_shift_right_running_example():
    tgt = torch.tensor([[6, 7, 4, 3, 5, EOS_ID], [3, 4, EOS_ID, 0, 0, 0]])
    dec = shift_right(tgt)
    assert dec.tolist() == [[BOS_ID, 6, 7, 4, 3, 5], [BOS_ID, 3, 4, EOS_ID, 0, 0]]
    assert dec.dtype == tgt.dtype and dec.shape == tgt.shape


@pytest.mark.parametrize("bad,error", [([[3, 4]], TypeError), (torch.tensor([3, 4]), ValueError)])
def test_shift_right_bad_inputs(bad, error):
    with pytest.raises(error, match="tgt"):
        shift_right(bad)


# ---------------------------------------------------------------- feed-forward


def test_ffn_shapes_and_hand_example():
    ffn = PositionwiseFeedForward(2, 3)
    with torch.no_grad():
        ffn.w_1.weight.copy_(torch.tensor([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0]]).T)
        ffn.w_1.bias.copy_(torch.tensor([0.0, 0.0, 1.0]))
        ffn.w_2.weight.copy_(torch.tensor([[1.0, 0.0], [2.0, -1.0], [5.0, 5.0]]).T)
        ffn.w_2.bias.copy_(torch.tensor([0.0, 1.0]))
    assert ffn(torch.tensor([1.0, 2.0])).tolist() == [3.0, 0.0]
    assert ffn(torch.randn(4, 7, 2)).shape == (4, 7, 2)


def test_ffn_weight_count_at_base_size():
    ffn = PositionwiseFeedForward(512, 2048)
    assert sum(p.numel() for p in ffn.parameters() if p.dim() == 2) == 2_097_152
    assert sum(p.numel() for p in ffn.parameters()) == 2_099_712


def test_ffn_is_position_wise():
    set_seed(0)
    ffn = PositionwiseFeedForward(16, 32)
    x = torch.randn(2, 5, 16)
    changed = x.clone()
    changed[1, 2] += 1.0
    delta = (ffn(changed) - ffn(x)).abs().amax(-1)
    assert delta[1, 2] > 0
    delta[1, 2] = 0
    assert delta.max() == 0


def test_ffn_equals_two_conv1d():
    set_seed(0)
    ffn = PositionwiseFeedForward(64, 256)
    c1, c2 = nn.Conv1d(64, 256, 1), nn.Conv1d(256, 64, 1)
    with torch.no_grad():
        c1.weight.copy_(ffn.w_1.weight[:, :, None])
        c1.bias.copy_(ffn.w_1.bias)
        c2.weight.copy_(ffn.w_2.weight[:, :, None])
        c2.bias.copy_(ffn.w_2.bias)
    x = torch.randn(3, 9, 64)
    by_conv = c2(torch.relu(c1(x.transpose(1, 2)))).transpose(1, 2)
    assert (by_conv - ffn(x)).abs().max().item() < 1e-5


# ---------------------------------------------------------------- embeddings


def test_embeddings_scale_and_init_std():
    set_seed(0)
    emb = Embeddings(10_000, 64)
    assert emb.lut.weight.std().item() == pytest.approx(1 / 8, abs=2e-3)
    ids = torch.tensor([[5, 3, 4]])
    assert torch.allclose(emb(ids), emb.lut.weight[ids] * 8.0)
    assert emb(torch.arange(10_000)[None]).std().item() == pytest.approx(1.0, abs=2e-2)


def test_embeddings_accept_int32_and_empty():
    emb = Embeddings(13, 8)
    assert emb(torch.tensor([[1, 2]], dtype=torch.int32)).shape == (1, 2, 8)
    assert emb(torch.zeros(1, 0, dtype=torch.long)).shape == (1, 0, 8)


@pytest.mark.parametrize("bad,error,match", [
    (torch.tensor([[1.0, 2.0]]), TypeError, "integer tensor.*float32"),
    ([[1, 2]], TypeError, "integer tensor.*list"),
    (torch.tensor([[5, 13]]), IndexError, r"0\.\.12, got min 5, max 13"),
    (torch.tensor([[-1, 3]]), IndexError, r"0\.\.12, got min -1"),
])
def test_embeddings_bad_ids(bad, error, match):
    with pytest.raises(error, match=match):
        Embeddings(13, 8)(bad)


# ---------------------------------------------------------------- tokenizer


def test_tokenizer_running_example():
    tok = Tokenizer()
    assert len(tok) == 13
    assert tok.itos[:3] == ["<pad>", "<s>", "</s>"] and tok.stoi["a"] == 3 and tok.stoi["j"] == 12
    assert tok.encode("c a b e d") == [5, 3, 4, 7, 6] == tok.encode("cabed")
    assert tok.decode([5, 3, 4, 7, 6]) == "c a b e d"


@pytest.mark.parametrize("text", ["", "a", "j i h g f e d c b a", "c a b e d"])
def test_tokenizer_round_trip(text):
    tok = Tokenizer()
    assert tok.decode(tok.encode(text)) == text
    assert tok.decode(torch.tensor(tok.encode(text), dtype=torch.long)) == text


def test_tokenizer_decode_strips_specials_and_stops_at_eos():
    tok = Tokenizer()
    ids = [BOS_ID, 7, 3, EOS_ID, 5, PAD_ID]
    assert tok.decode(ids) == "e a"
    assert tok.decode(ids, strip=False) == "<s> e a </s> c <pad>"


@pytest.mark.parametrize("bad,error,match", [
    ("c a k", ValueError, r"unknown character 'k' at position 4"),
    ("C", ValueError, "unknown character 'C'"),
    (["c", "a"], TypeError, "got list"),
    (None, TypeError, "got NoneType"),
])
def test_tokenizer_encode_errors(bad, error, match):
    with pytest.raises(error, match=match):
        Tokenizer().encode(bad)


@pytest.mark.parametrize("bad", [[5, 13], [-1], [2.0]])
def test_tokenizer_decode_errors(bad):
    with pytest.raises(ValueError, match=r"int in 0\.\.12"):
        Tokenizer().decode(bad)


# ---------------------------------------------------------------- tied output layer


def _tables(model):
    shape = tuple(model.embed.lut.weight.shape)
    return [name for name, p in model.named_parameters() if tuple(p.shape) == shape]


def test_transformer_has_one_shared_table():
    set_seed(0)
    model = Transformer(**TINY)
    assert _tables(model) == ["embed.lut.weight"]
    assert count_parameters(model) == 234_304
    assert [k for k in model.state_dict() if tuple(model.state_dict()[k].shape) == (13, 64)] == ["embed.lut.weight"]
    y = torch.randn(2, 3, 64)
    assert torch.equal(model.generator(y), y @ model.embed.lut.weight.T)


def test_output_layer_gradient_reaches_the_table():
    set_seed(0)
    model = Transformer(**TINY)
    y = torch.randn(1, 2, 64)
    model.generator(y)[..., 4].sum().backward()  # only the output use: no lookup happened
    grad = model.embed.lut.weight.grad
    assert grad is not None and grad[4].abs().sum() > 0
    assert grad[torch.arange(13) != 4].abs().max() == 0


def test_tie_survives_to():
    set_seed(0)
    model = Transformer(**TINY).to(torch.float64).to("cpu")
    assert model.embed.lut.weight.dtype == torch.float64 and _tables(model) == ["embed.lut.weight"]
    y = torch.randn(1, 3, 64, dtype=torch.float64)
    assert torch.equal(model.generator(y), y @ model.embed.lut.weight.T)


def test_tie_survives_save_and_load():
    set_seed(0)
    model = Transformer(**TINY).eval()
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    fresh = Transformer(**TINY).eval()
    assert not torch.equal(fresh.embed.lut.weight, model.embed.lut.weight)
    fresh.load_state_dict(torch.load(buffer))
    assert _tables(fresh) == ["embed.lut.weight"] and count_parameters(fresh) == 234_304
    src, tgt = torch.tensor([[5, 3, 4, 7, 6]]), torch.tensor([[1, 6, 7, 4, 3, 5]])
    with torch.no_grad():
        assert torch.equal(fresh(src, tgt), model(src, tgt))
    with torch.no_grad():  # the output layer follows the loaded table, not a stale copy
        fresh.embed.lut.weight[5] += 1.0
    y = torch.randn(1, 1, 64)
    assert torch.equal(fresh.generator(y), y @ fresh.embed.lut.weight.T)


def test_nn_linear_tie_pattern_of_chapter_6():
    """Chapter 6 ties an nn.Linear to the table by sharing the Parameter; check that
    PyTorch keeps one Parameter through .to() and a state_dict round trip."""

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = Embeddings(13, 64)
            self.out = nn.Linear(64, 13, bias=False)
            self.out.weight = self.embed.lut.weight

    def tied(m):
        return m.out.weight is m.embed.lut.weight and m.out.weight.data_ptr() == m.embed.lut.weight.data_ptr()

    set_seed(0)
    m = Tied()
    assert tied(m) and len(list(m.parameters())) == 1
    buffer = io.BytesIO()
    torch.save(m.state_dict(), buffer)
    buffer.seek(0)
    fresh = Tied()
    fresh.load_state_dict(torch.load(buffer))
    assert tied(fresh) and torch.equal(fresh.out.weight, m.out.weight)
    m.to(torch.float64).to("cpu")
    assert tied(m) and m.out.weight.dtype == torch.float64


# ---------------------------------------------------------------- exercises of chapters 4-6


def test_exercise_answers_are_what_the_chapters_say(capsys):
    check("4.1", ...)  # loads every chapter's checkers
    expected = {
        "4.1": {"Q": "decoder", "K": "encoder", "V": "encoder"},
        "4.2": 28,
        "4.3": {"encoder_self": (1, 4, 7, 7), "decoder_self": (1, 4, 8, 8), "cross": (1, 4, 8, 7)},
        "4.4": [1, 4, 3, 6],
        "5.1": 8_388_608,
        "5.2": 132_352,
        "5.3": 2_099_712 / 4_204_032,
        "5.4": (2048, 512, 1),
        "6.1": 32.0,
        "6.2": "e a",
        "6.3": 37_000 * 1024,
        "6.4": math.sqrt(6 / (512 + 2048)),
    }
    for ex_id, answer in expected.items():
        assert ex_id in EXERCISES
        assert check(ex_id, answer), capsys.readouterr().out


def test_exercise_4_1_says_what_is_wrong(capsys):
    from utils.exercises import EXERCISES

    assert not check("4.1", {"Q": "encoder", "K": "encoder", "V": "encoder"})
    out = " ".join(capsys.readouterr().out.split())
    named = [m.message for m in EXERCISES["4.1"].mistakes if " ".join(m.message.split()) in out]
    assert named, f"a registered mistake of 4.1 should name this answer: {out}"
