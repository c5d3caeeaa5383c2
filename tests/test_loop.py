"""The one training loop (utils/training/loop.py) and the step it repeats (recipe.train_step).

Small models and batches, so every test runs in a second or two. Resuming is checked
bit for bit: on one machine a run stopped and resumed must equal one that never stopped.
"""

import json

import pytest
import torch
from torch import nn

from utils import PAD_ID, Transformer, set_seed
from utils.tasks.reversal.task import reversal_batch
from utils.training import loop
from utils.training.checkpoints import torch_load
from utils.training.recipe import LabelSmoothingLoss, rate, train_step

SMALL = dict(vocab_size=13, d_model=16, h=2, d_ff=32, N=1, p_drop=0.1)


def small_model(seed=0):
    set_seed(seed)
    return Transformer(**SMALL)


def batches(seed=0, batch_size=8):
    return loop.GeneratorBatches(lambda g: reversal_batch(batch_size, g), seed)


def run(model=None, workdir=None, **kwargs):
    kwargs = dict(dict(d_model=16, warmup=4, progress=False), **kwargs)
    if workdir is not None:
        kwargs.setdefault("config", dict(task="reversal", model=SMALL))
    return loop.Run(small_model() if model is None else model, kwargs.pop("batches", None) or batches(),
                    workdir=workdir, **kwargs)


def same_weights(a, b):
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


class ToyEncoderDecoder(nn.Module):
    """Not a Transformer: embeddings, a mean of the source, a GRU over the decoder input, a linear output."""

    def __init__(self, vocab=13, d=12):
        super().__init__()
        self.embed, self.rnn, self.out = nn.Embedding(vocab, d), nn.GRU(d, d, batch_first=True), nn.Linear(d, vocab)
        self.drop = nn.Dropout(0.1)

    def forward(self, src, tgt_in, src_mask, tgt_mask):
        context = (self.embed(src) * src_mask[:, 0, 0, :, None]).sum(1) / src_mask.sum(-1)[:, 0]  # (batch, d)
        y, _ = self.rnn(self.drop(self.embed(tgt_in)), context[None].contiguous())
        return self.out(y)


# ---------------------------------------------------------------- the step


def test_train_step_takes_one_update_and_returns_the_detached_loss():
    model = small_model()
    r = run(model)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    src, tgt = reversal_batch(8, torch.Generator().manual_seed(0))
    loss = train_step(model, src, tgt, r.criterion, r.optimizer, r.scheduler)
    assert loss.dim() == 0 and not loss.requires_grad and loss.item() > 0
    assert r.scheduler.last_epoch == 1 and r.optimizer.param_groups[0]["lr"] == rate(1, 16, 4)
    changed = [k for k, v in model.state_dict().items() if not torch.equal(v, before[k])]
    assert "embed.lut.weight" in changed and len(changed) > len(before) // 2


def test_train_step_names_a_model_whose_output_has_the_wrong_shape():
    class Pooled(ToyEncoderDecoder):
        def forward(self, *args):
            return super().forward(*args).mean(1)  # (batch, vocab): one prediction per row

    r = loop.Run(Pooled(), batches(), d_model=12, warmup=4, progress=False)
    with pytest.raises(ValueError, match=r"must return logits \(batch, tgt_len, vocab\) = \(8, \d+, vocab\), got shape \(8, 13\)"):
        r.train(1)

    class Words(ToyEncoderDecoder):
        def forward(self, *args):
            return "logits"

    with pytest.raises(TypeError, match=r"must return logits .* a float tensor, got str"):
        loop.Run(Words(), batches(), d_model=12, warmup=4, progress=False).train(1)


# ---------------------------------------------------------------- resuming, bit for bit


@pytest.mark.parametrize("make_model", [small_model, lambda: (set_seed(0), ToyEncoderDecoder())[1]],
                         ids=["transformer", "not-a-transformer"])
def test_in_memory_stop_and_resume_equals_an_uninterrupted_run(make_model):
    whole = loop.Run(make_model(), batches(), d_model=16, warmup=4, progress=False).train(10)
    paused = loop.Run(make_model(), batches(), d_model=16, warmup=4, progress=False).train(4)
    assert paused.train(10).losses.tolist() == whole.losses.tolist()  # a second call goes on where the first stopped
    first = loop.Run(make_model(), batches(), d_model=16, warmup=4, progress=False).train(4)
    state = first.state_dict()
    torch.manual_seed(123)  # the global generator moves on (dropout draws from it); the state restores it
    set_seed(7)
    second = loop.Run(make_model(), batches(seed=5), d_model=16, warmup=4, progress=False)  # other weights, other batches
    second.load_state_dict(state)
    second.train(10)
    assert second.step == 10 and torch.equal(torch.cat([first.losses, second.losses]), whole.losses)
    assert same_weights(second.model, whole.model)


def test_a_workdir_run_resumes_bit_for_bit_and_drops_log_lines_past_its_state(tmp_path):
    whole = run(workdir=tmp_path / "whole", save_every=3).train(7)
    cut = run(workdir=tmp_path / "cut", save_every=3).train(4)  # stopped at 4: a save point ends the call
    assert cut.step == 4 and torch.load(tmp_path / "cut" / "state.pt", weights_only=True)["step"] == 4
    with (tmp_path / "cut" / "log.jsonl").open("a") as f:  # as if a crash came between the log and the state
        f.write(json.dumps(dict(step=6, losses=[9.0])) + "\n")
    again = run(workdir=tmp_path / "cut", save_every=3)
    assert again.step == 4 and sorted(again.checkpoints) == [3, 4]
    again.train(7)
    _, whole_log = loop.read_log(tmp_path / "whole" / "log.jsonl")
    header, cut_log = loop.read_log(tmp_path / "cut" / "log.jsonl")
    assert header["start"] == dict(task="reversal", model=SMALL)
    assert [r["step"] for r in whole_log] == [3, 6, 7] and [r["step"] for r in cut_log] == [3, 4, 6, 7]
    assert [x for r in cut_log for x in r["losses"]] == [x for r in whole_log for x in r["losses"]] == whole.losses.tolist()
    assert same_weights(again.model, whole.model)
    for step in (6, 7):
        a = torch_load(tmp_path / "whole" / f"step{step}.pt", "weights", "")
        b = torch_load(tmp_path / "cut" / f"step{step}.pt", "weights", "")
        assert all(torch.equal(a[k], b[k]) for k in a)
    assert not list((tmp_path / "cut").glob("*.tmp"))  # atomic writes leave no temporary file


def test_epoch_batches_resume_mid_epoch_and_reshuffle_each_epoch():
    data = [[i] for i in range(3)]
    source = loop.EpochBatches(data, lambda idx: idx[0], seed=1)
    seen = [next(source) for _ in range(4)]
    assert sorted(seen[:3]) == [0, 1, 2] and (source.epoch, source.position) == (1, 1)
    copy = loop.EpochBatches(data, lambda idx: idx[0], seed=1)
    copy.load_state_dict(source.state_dict())
    assert [next(copy) for _ in range(8)] == [next(source) for _ in range(8)]
    orders = {tuple(next(source) for _ in range(3)) for _ in range(10)}
    assert len(orders) > 1  # a new order each epoch, not the first one repeated


def test_a_state_of_the_old_train_g2p_layout_resumes(tmp_path):
    """train_g2p's states kept epoch and position at the top level before the loop."""
    make = lambda: loop.EpochBatches([[0, 1], [2], [3, 4, 5]], lambda idx: reversal_batch(  # noqa: E731
        len(idx), torch.Generator().manual_seed(idx[0])), seed=0)
    whole = run(batches=make()).train(6)
    first = run(batches=make()).train(4)
    state = first.state_dict()
    state.update(state.pop("batches"))
    second = run(batches=make())
    second.load_state_dict(state)
    assert torch.equal(torch.cat([first.losses, second.train(6).losses]), whole.losses)


# ---------------------------------------------------------------- save points, evaluation, checkpoints


def test_evaluation_runs_at_the_right_steps_and_joins_the_log(tmp_path):
    calls = []

    def evaluate(model, step):
        calls.append((step, model.training, torch.is_grad_enabled()))
        return dict(score=float(step))

    r = run(save_every=2, eval_every=4, evaluate=evaluate).train(10)
    assert calls == [(4, False, False), (8, False, False)]  # eval mode, no gradients
    assert r.model.training and [rec["step"] for rec in r.log] == [2, 4, 6, 8, 10]
    assert [rec.get("score") for rec in r.log] == [None, 4.0, None, 8.0, None]
    assert all("eval_seconds" in rec for rec in r.log if "score" in rec) and r.eval_seconds >= 0
    assert r.train_seconds > 0 and sum(len(rec["losses"]) for rec in r.log) == 10
    calls.clear()
    w = run(workdir=tmp_path, save_every=2, eval_every=4, evaluate=evaluate).train(5)  # the end of a call, too
    assert [c[0] for c in calls] == [4, 5] and [rec["step"] for rec in w.log] == [2, 4, 5]
    with pytest.raises(TypeError, match="must return a dict of numbers for the log, got float"):
        run(save_every=1, evaluate=lambda model, step: 1.0).train(1)


def test_keep_last_keeps_the_last_checkpoints_in_memory_and_on_disk(tmp_path):
    r = run(save_every=2, keep_last=2).train(10)
    assert sorted(r.checkpoints) == [8, 10]
    assert all(torch.equal(v, r.model.state_dict()[k]) for k, v in r.checkpoints[10].items())
    assert not all(torch.equal(v, r.model.state_dict()[k]) for k, v in r.checkpoints[8].items())
    assert sorted(run(save_every=2).train(6).checkpoints) == [2, 4, 6]  # None keeps all
    assert run(save_every=2, keep_last=0).train(6).checkpoints == {}
    w = run(workdir=tmp_path, save_every=2, keep_last=2).train(9)
    assert sorted(p.name for p in tmp_path.glob("step*.pt")) == ["step8.pt", "step9.pt"]
    assert w.checkpoints == {8: tmp_path / "step8.pt", 9: tmp_path / "step9.pt"}


def test_the_log_counts_the_tokens_trained_on(tmp_path):
    r = run(workdir=tmp_path, save_every=3).train(7)
    g = torch.Generator().manual_seed(0)
    drawn = [reversal_batch(8, g) for _ in range(7)]
    _, records = loop.read_log(tmp_path / "log.jsonl")
    for record, (lo, hi) in zip(records, [(0, 3), (3, 6), (6, 7)], strict=True):
        assert record["src_tokens"] == sum(int((s != PAD_ID).sum()) for s, _ in drawn[lo:hi])
        assert record["tgt_tokens"] == sum(int((t != PAD_ID).sum()) for _, t in drawn[lo:hi])
    assert records == r.log


def test_print_every_prints_the_step_the_rate_and_the_mean_loss(capsys):
    r = run(print_every=5, save_every=5, evaluate=lambda model, step: dict(test_loss=0.5)).train(10)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].startswith("step    10  lr ")
    assert lines[1].endswith(f"train loss {r.losses[5:].mean().item():.4f}  test loss 0.5000")


# ---------------------------------------------------------------- bad arguments


@pytest.mark.parametrize("steps", [0, -3, 2.0, True])
def test_train_refuses_steps_that_are_not_a_positive_int(steps):
    with pytest.raises(ValueError, match=rf"steps must be a positive int \(the step to train until\), got {type(steps).__name__}"):
        run().train(steps)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(schedule=lambda step: 1e-3), TypeError, "either schedule or d_model and warmup, not both"),
    (dict(d_model=None), TypeError, "give d_model and warmup .* got d_model=None, warmup=4"),
    (dict(warmup=0), ValueError, "warmup must be a positive int, got int 0"),
    (dict(save_every=0), ValueError, "save_every must be None or a positive int .*got int 0"),
    (dict(keep_last=-1), ValueError, "keep_last must be None .* or an int >= 0, got int -1"),
    (dict(evaluate="yes"), TypeError, "evaluate must be None or a function"),
    (dict(batches=iter([])), TypeError, r"batches must be a batch source .* lacks \['state_dict', 'load_state_dict'\]"),
    (dict(model=nn.Linear(2, 2).weight), TypeError, "model must be a torch.nn.Module"),
])
def test_run_names_a_bad_argument(kwargs, error, match):
    with pytest.raises(error, match=match):
        run(**kwargs)


def test_a_workdir_needs_a_config_and_refuses_another_runs(tmp_path):
    with pytest.raises(TypeError, match="a run with a workdir needs config, a dict"):
        loop.Run(small_model(), batches(), d_model=16, warmup=4, workdir=tmp_path, progress=False)
    run(workdir=tmp_path, save_every=1).train(1)
    other = dict(task="reversal", model=dict(SMALL, d_ff=64))
    with pytest.raises(ValueError, match=r"state\.pt holds a run with another configuration: .*'d_ff': 32.*"
                                         r"\(this one: .*'d_ff': 64.*\); use another workdir"):
        run(workdir=tmp_path, config=other)
    (tmp_path / "state.pt").write_bytes(b"")
    with pytest.raises(ValueError, match=r"state\.pt must be a training state saved by loop\.Run, got an empty file"):
        run(workdir=tmp_path)


def test_criterion_defaults_to_the_papers_label_smoothing():
    assert isinstance(run().criterion, LabelSmoothingLoss) and run().criterion.eps_ls == 0.1
