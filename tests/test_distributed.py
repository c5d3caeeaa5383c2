"""Data-parallel training (utils/training/distributed.py, issue 56): two gloo processes on the CPU take
the update one process takes on the whole batches, only with the loss normalised by the whole batch's
tokens; two runs are identical; process 1 writes nothing; bad launches and resumes get clear errors."""

import os
import pathlib
import subprocess
import sys

import pytest
import torch

from utils.training import distributed
from utils.training.distributed import SAME_UPDATE_TOLERANCE, World

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKER = ROOT / "tests" / "ddp_worker.py"
JOBS = ("toy:global", "toy:local", "translation:global", "translation:local", "toy:run")
STEPS = 5


def _launch(outdir, nproc):
    outdir.mkdir(parents=True)
    if nproc == 1:
        cmd = [sys.executable, str(WORKER), str(outdir), str(STEPS), *JOBS]
    else:
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
               str(WORKER), str(outdir), str(STEPS), *JOBS]
    env = {k: v for k, v in os.environ.items() if k not in distributed.TORCHRUN_VARIABLES}
    result = subprocess.run(cmd, capture_output=True, text=True, env=dict(env, OMP_NUM_THREADS="1"),
                            cwd=ROOT, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("ddp")
    one = _launch(base / "one", 1)
    two = [_launch(base / f"two{k}", 2) for k in (1, 2)]
    return base, one, two


def _diff(a, b):
    a, b = torch.load(a), torch.load(b)
    assert a.keys() == b.keys()
    return max((a[k] - b[k]).abs().max().item() for k in a)


@pytest.mark.parametrize("task", ["toy", "translation"])
def test_two_processes_take_the_one_process_update(runs, task):
    base = runs[0]
    diff = _diff(base / "one" / f"{task}-global.pt", base / "two1" / f"{task}-global.pt")
    print(f"{task}: max |two processes - one| = {diff:.1e} (float64, {STEPS} steps)")
    assert diff < SAME_UPDATE_TOLERANCE


@pytest.mark.parametrize("task", ["toy", "translation"])
def test_each_shares_own_token_count_breaks_the_equality(runs, task):
    """Shares of unequal token counts: the mean of the per-share means is not the batch's mean."""
    base = runs[0]
    diff = _diff(base / "one" / f"{task}-local.pt", base / "two1" / f"{task}-local.pt")
    assert diff > 1e3 * SAME_UPDATE_TOLERANCE, diff


def test_the_training_loop_runs_data_parallel_and_only_process_0_writes(runs):
    base, _, two = runs
    assert _diff(base / "one" / "toy-run.pt", base / "two1" / "toy-run.pt") < SAME_UPDATE_TOLERANCE
    assert sorted(p.name for p in (base / "two1" / "run").iterdir()) == ["log.jsonl", "state.pt", "step4.pt", "step5.pt"]
    for out in two:
        assert "writes of rank 1: []" in out, out[-2000:]


def test_two_runs_of_the_same_command_give_identical_bits(runs):
    base = runs[0]
    for job in JOBS:
        task, mode = job.split(":")
        a, b = torch.load(base / "two1" / f"{task}-{mode}.pt"), torch.load(base / "two2" / f"{task}-{mode}.pt")
        assert all(torch.equal(a[k], b[k]) for k in a), job
    assert (base / "two1" / "run" / "log.jsonl").read_text().count("losses") == 3


def test_a_resume_with_another_number_of_processes_is_refused(runs):
    sys.path.insert(0, str(WORKER.parent))
    import ddp_worker

    with pytest.raises(ValueError, match="written by a run of 2 process"):
        ddp_worker.job("toy", "run", STEPS + 2, runs[0] / "two1")


def test_shares_cover_the_batch_and_too_small_a_batch_is_refused():
    src, tgt = torch.arange(10)[:, None].expand(10, 3), torch.arange(10)[:, None].expand(10, 4)
    shares = [distributed.shard(src, tgt, World(r, 3)) for r in range(3)]
    assert [s.size(0) for s, _ in shares] == [4, 3, 3]
    assert torch.equal(torch.cat([s for s, _ in shares]), src)
    with pytest.raises(ValueError, match="a batch of 10 sentences cannot be shared by 16 processes"):
        distributed.shard(src, tgt, World(0, 16))


def test_a_launch_without_torchrun_is_refused(monkeypatch):
    for name in distributed.TORCHRUN_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert World.from_env() == World(0, 1)
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(RuntimeError, match="launch the command with torchrun"):
        World.from_env()
    with pytest.raises(ValueError, match="normalise must be"):
        distributed.data_parallel_step(None, None, None, None, None, None, World(), normalise="batch")


def test_a_run_whose_smallest_batch_cannot_be_shared_is_refused_at_once(monkeypatch):
    """Before the first step, not when the epoch reaches that batch (found by the learner's review: a
    two-process translation run with small batches stopped at step 222 and lost its work)."""
    from utils.model.transformer import Transformer
    from utils.training import loop

    monkeypatch.setattr(distributed, "start", lambda device="cpu": World(0, 2))
    source = loop.EpochBatches([[0, 1, 2], [3]], lambda indices: None)
    with pytest.raises(ValueError, match="the smallest batch holds 1 sentence, fewer than the 2 processes"):
        loop.Run(Transformer(13, d_model=16, h=2, d_ff=32, N=1), source, d_model=16, warmup=4, progress=False)
