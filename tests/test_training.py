"""Unit tests for utils.training and the reversal task (paper section 5), including bad inputs."""

import math

import pytest
import torch
from torch import nn

from utils import EOS_ID, PAD_ID, TINY, Transformer, set_seed
from utils.tasks.reversal.task import CHECKPOINT_DIR, TEST_SEED, exact_match, load_checkpoint, reversal_batch, save_checkpoints, train
from utils.training.batching import length_batches
from utils.training.checkpoints import average_checkpoints
from utils.training.recipe import LabelSmoothingLoss, make_optimizer, rate

# --- data -----------------------------------------------------------------

def test_reversal_batch_shapes_and_content():
    src, tgt = reversal_batch(200, torch.Generator().manual_seed(0))
    assert src.dtype == tgt.dtype == torch.long
    assert src.shape == (200, 8) and tgt.shape == (200, 9)
    lengths = (src != PAD_ID).sum(1)
    assert lengths.min() == 3 and lengths.max() == 8
    for s, t, n in zip(src.tolist(), tgt.tolist(), lengths.tolist()):
        assert all(3 <= x <= 12 for x in s[:n]) and all(x == PAD_ID for x in s[n:])
        assert t[:n] == s[:n][::-1] and t[n] == EOS_ID and all(x == PAD_ID for x in t[n + 1:])


def test_reversal_batch_is_deterministic_and_pads_to_longest():
    a = reversal_batch(16, torch.Generator().manual_seed(3))
    b = reversal_batch(16, torch.Generator().manual_seed(3))
    c = reversal_batch(16, torch.Generator().manual_seed(4))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a[0], c[0])
    src, tgt = reversal_batch(5, torch.Generator().manual_seed(0), min_len=2, max_len=2)
    assert src.shape == (5, 2) and tgt.shape == (5, 3) and (tgt[:, 2] == EOS_ID).all()


@pytest.mark.parametrize("kwargs", [dict(batch_size=0), dict(batch_size=2.0), dict(min_len=5, max_len=4),
                                    dict(min_len=0)])
def test_reversal_batch_rejects_bad_sizes(kwargs):
    kwargs = dict(dict(batch_size=4), **kwargs)
    with pytest.raises(ValueError):
        reversal_batch(generator=torch.Generator(), **kwargs)


def test_length_batches_respects_budget_and_covers_everything():
    lengths = torch.randint(1, 30, (500,), generator=torch.Generator().manual_seed(0)).tolist()
    batches = length_batches(lengths, 100)
    assert sorted(i for b in batches for i in b) == list(range(500))
    for b in batches:
        assert len(b) * max(lengths[i] for i in b) <= 100
    # sorted batching pads far less than the same rule applied in random order
    def padding(batches):
        total = sum(len(b) * max(lengths[i] for i in b) for b in batches)
        return 1 - sum(lengths) / total
    unsorted = length_batches(lengths, 100, sort=False)
    assert padding(batches) < 0.1 < padding(unsorted)


def test_length_batches_bad_inputs():
    with pytest.raises(ValueError, match="does not fit"):
        length_batches([3, 50], 40)
    with pytest.raises(ValueError, match="max_tokens"):
        length_batches([3], 0)
    assert length_batches([], 10) == []


# --- schedule and optimizer ---------------------------------------------

def test_rate_table_and_peak():
    expected = {1: 1.747e-07, 100: 1.747e-05, 1000: 1.747e-04, 4000: 6.988e-04, 10000: 4.419e-04, 100000: 1.398e-04}
    for step, value in expected.items():
        assert f"{rate(step, 512, 4000):.3e}" == f"{value:.3e}"
    assert rate(400, 64, 400) == pytest.approx(0.00625)
    assert rate(400, 64, 400) == max(rate(s, 64, 400) for s in range(1, 3000))
    assert rate(100, 64, 400, factor=2.0) == pytest.approx(2 * rate(100, 64, 400))


def test_rate_at_step_zero_under_lambdalr_is_step_one():
    assert rate(0, 64, 400) == rate(1, 64, 400)
    model = nn.Linear(2, 2)
    model.embed = type("E", (), {"d_model": 64})()  # make_optimizer reads model.embed.d_model
    optimizer, scheduler = make_optimizer(model, warmup=400)
    lr0 = optimizer.param_groups[0]["lr"]
    assert math.isfinite(lr0) and lr0 == pytest.approx(rate(1, 64, 400))
    group = optimizer.param_groups[0]
    assert group["betas"] == (0.9, 0.98) and group["eps"] == 1e-9
    for step in range(1, 5):
        optimizer.step()
        scheduler.step()
        assert optimizer.param_groups[0]["lr"] == pytest.approx(rate(step, 64, 400))


@pytest.mark.parametrize("args", [(-1, 64, 400), (1, 0, 400), (1, 64, 0)])
def test_rate_bad_inputs(args):
    with pytest.raises(ValueError):
        rate(*args)


# --- label smoothing ----------------------------------------------------

def test_label_smoothing_numbers():
    V, eps = 13, 0.1
    q = torch.full((V,), eps / V)
    q[3] += 1 - eps
    assert round(q[3].item(), 4) == 0.9077 and round(q[0].item(), 4) == 0.0077
    criterion = LabelSmoothingLoss(eps)
    floor = criterion(q.log()[None], torch.tensor([3]))
    assert round(floor.item(), 3) == 0.537
    assert floor.item() == pytest.approx(-(q * q.log()).sum().item(), abs=1e-6)
    def logits(margin):
        return torch.zeros(1, V, dtype=torch.float64).index_fill(1, torch.tensor([3]), margin)
    # the exact p(right), rounded once to float32, first reads 1.0 at a whole margin of 20
    assert [torch.softmax(logits(m), -1)[0, 3].float().item() == 1.0 for m in (19, 20)] == [False, True]
    assert round(criterion(logits(20), torch.tensor([3])).item(), 3) == 1.846


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.3])
def test_label_smoothing_matches_cross_entropy(eps):
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 7, 13, generator=g) * 3
    target = torch.randint(3, 13, (4, 7), generator=g)
    target[:, 5:] = PAD_ID
    ours = LabelSmoothingLoss(eps)(logits, target)
    ref = nn.CrossEntropyLoss(label_smoothing=eps, ignore_index=PAD_ID)(logits.transpose(1, 2), target)
    assert (ours - ref).abs().item() < 1e-6


def test_ignored_positions_do_not_change_loss_or_gradient():
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(2, 6, 13, generator=g, requires_grad=True)
    target = torch.randint(3, 13, (2, 6), generator=g)
    target[0, 4:] = PAD_ID
    criterion = LabelSmoothingLoss(0.1)
    base = criterion(logits, target)
    edited = logits.detach().clone()
    edited[0, 4:] = 1e4  # huge logits where the target is padding
    assert criterion(edited, target).item() == base.item()
    base.backward()
    assert (logits.grad[0, 4:] == 0).all() and logits.grad[0, :4].abs().sum() > 0


def test_label_smoothing_bad_inputs():
    criterion = LabelSmoothingLoss()
    with pytest.raises(ValueError, match="eps_ls"):
        LabelSmoothingLoss(1.0)
    with pytest.raises(TypeError, match="floating-point"):
        criterion(torch.zeros(2, 13, dtype=torch.long), torch.zeros(2, dtype=torch.long))
    with pytest.raises(TypeError, match="torch.long"):
        criterion(torch.zeros(2, 13), torch.zeros(2))
    with pytest.raises(ValueError, match="must match"):
        criterion(torch.zeros(2, 5, 13), torch.zeros(2, 4, dtype=torch.long))


# --- training, evaluation, checkpoints -----------------------------------

def test_short_training_is_deterministic_and_lowers_loss(capsys):
    def run():
        set_seed(0)
        model = Transformer(**TINY)
        return model, train(model, 60, batch_size=16, eval_every=20, log_every=30, keep_last=2,
                            test=reversal_batch(8, torch.Generator().manual_seed(1)))
    m1, h1 = run()
    m2, h2 = run()
    assert torch.equal(h1["train_loss"], h2["train_loss"])
    assert sorted(h1["checkpoints"]) == [40, 60] and h1["test_step"] == [20, 40, 60]
    assert all(torch.equal(a, b) for a, b in zip(m1.state_dict().values(), m2.state_dict().values()))
    assert h1["train_loss"][-10:].mean() < h1["train_loss"][:10].mean()
    assert not m1.training
    assert capsys.readouterr().out.count("step ") == 4


def test_train_bad_inputs():
    with pytest.raises(ValueError, match="steps"):
        train(Transformer(**TINY), 0)


def test_shipped_checkpoints_load_and_reverse(tmp_path):
    steps = sorted(int(p.stem.removeprefix("tiny_step")) for p in CHECKPOINT_DIR.glob("tiny_step*.pt"))
    assert steps == [2600, 2700, 2800, 2900, 3000]
    model = load_checkpoint(3000)
    assert isinstance(model, Transformer) and not model.training
    src, tgt = reversal_batch(500, torch.Generator().manual_seed(TEST_SEED))
    assert exact_match(model, src, tgt) >= 0.98  # a single checkpoint: about 99-100%
    averaged = Transformer(**TINY)
    averaged.load_state_dict(average_checkpoints([load_checkpoint(s).state_dict() for s in steps]))
    assert exact_match(averaged, src, tgt) == 1.0  # chapter 10's final model
    # a model that always says </s> gets nothing right
    assert exact_match(model, src, tgt, decode=lambda m, s: torch.full_like(s, EOS_ID)) == 0.0
    # saving and loading round-trips bit for bit
    save_checkpoints({7: model.state_dict()}, tmp_path)
    again = load_checkpoint(7, tmp_path)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))


def test_checkpoint_and_exact_match_bad_inputs(tmp_path):
    with pytest.raises(FileNotFoundError, match="2600"):
        load_checkpoint(123)
    with pytest.raises(FileNotFoundError, match=r"\[\]"):
        load_checkpoint(3000, tmp_path)
    src, tgt = reversal_batch(4, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="batch size"):
        exact_match(load_checkpoint(3000), src, tgt[:3])
