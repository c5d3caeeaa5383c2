"""Issue 22 / chapter 17: the shipped runs of the Table 2 comparison (the G2P Transformer
against the recurrent model of ``utils/model/recurrent.py``) and their measurements.

Each shipped run is its command's: its first steps rerun here within the replay
tolerance. Each run's measurements (``utils/experiments/baseline.py``) agree with its log and its
weights: the FLOPs with a replay of its batch order, the test outputs with a fresh
decode of a sample (decoded tokens are exact results), the WER and PER with the outputs.
"""

import json
import math

import pytest
import torch

from utils.core.numerics import REPLAY_TOLERANCE
from utils.experiments import baseline
from utils.model.recurrent import RecurrentSeq2Seq
from utils.tasks import g2p
from utils.training.batching import collate

RUNS = baseline.finished_runs()


def test_every_shipped_run_is_measured_and_every_measurement_has_its_run():
    shipped = {("transformer", 0)} | {
        (p.name.split("_seed")[0], int(p.name.split("_seed")[1])) for p in baseline.RUNS.iterdir() if p.is_dir()}
    assert shipped == set(RUNS), (
        f"shipped runs {sorted(shipped)} but measured {sorted(RUNS)}: run `python -m utils.experiments.baseline evaluate` "
        "for each shipped run (and ship each measured one)")
    assert {a for a, _ in RUNS} == set(g2p.ARCHS)
    for arch, seed in RUNS:
        assert (baseline.run_directory(arch, seed) / "g2p_avg.pt").is_file()
        assert seed in baseline.SEEDS


@pytest.mark.parametrize("arch,seed", RUNS, ids=lambda x: str(x))
def test_the_first_steps_replay_within_the_tolerance(tmp_path, arch, seed):
    header, records = g2p.read_log(baseline.run_directory(arch, seed) / "log.jsonl")
    assert header["start"].get("arch", "transformer") == arch and header["start"]["recipe"]["seed"] == seed
    g2p.train_g2p(tmp_path, steps=10, threads=header["versions"]["threads"], progress=False, dev_eval=False,
                  arch=arch, seed=seed)
    _, mine = g2p.read_log(tmp_path / "log.jsonl")
    gap = max(abs(a - b) for a, b in zip(mine[0]["losses"], records[0]["losses"][:10], strict=True))
    assert gap < REPLAY_TOLERANCE, f"{arch} seed {seed}: rerun drifts {gap:.2e} from its log"


@pytest.mark.parametrize("arch,seed", RUNS, ids=lambda x: str(x))
def test_measurements_agree_with_the_log_and_the_weights(arch, seed):
    r = baseline.load_results(arch, seed)
    header, records = g2p.read_log(baseline.run_directory(arch, seed) / "log.jsonl")
    model, averaged = g2p.load_shipped("avg", baseline.run_directory(arch, seed))
    assert isinstance(model, RecurrentSeq2Seq) == (arch == "recurrent")
    assert r["steps"] == [x["step"] for x in records] and r["steps"][-1] == baseline.STEPS[arch]
    assert r["params"] == header["params"] == sum(p.numel() for p in model.parameters())
    assert r["averaged"] == averaged == r["steps"][-g2p.G2P_TRAIN["keep_last"]:]
    assert all(b > a for a, b in zip(r["flops"], r["flops"][1:]))
    assert baseline.logged_flops(arch, seed, records[:2]) == r["flops"][:2]  # the replay, again, for 2,000 steps
    test = g2p.cached_lexicon()["test"]
    refs = [test[w] for w in r["words"]]
    assert r["test_wer"] == g2p.wer(r["outputs"], refs) and r["test_per"] == g2p.per(r["outputs"], refs)
    sample = r["words"][::40]
    again = g2p.beam_phones(model, sample, g2p.G2PVocab())
    differ = [w for w, a, b in zip(sample, again, r["outputs"][::40]) if a != b]
    assert not differ, f"{arch} seed {seed}: {len(differ)} of {len(sample)} words decode otherwise: {differ[:5]}"


def test_the_budgets_are_equal_in_flops():
    """STEPS gives the recurrent model the Transformer's FLOPs within 2% for every seed with both runs."""
    for seed in baseline.SEEDS:
        if ("transformer", seed) in RUNS and ("recurrent", seed) in RUNS:
            t, r = (baseline.load_results(a, seed)["flops"][-1] for a in ("transformer", "recurrent"))
            assert abs(r / t - 1) < 0.02, f"seed {seed}: recurrent / Transformer FLOPs = {r / t:.4f}"


def test_the_flop_replay_is_the_batches_that_trained():
    """A step's FLOPs by ``batch_order`` + ``batch_flops`` equal the formula on the batch the loop draws."""
    from utils.core.masks import PAD_ID
    from utils.experiments.flops import recurrent_step_flops
    from utils.model.recurrent import G2P_RECURRENT
    from utils.training import loop

    pairs, _, batches = g2p.training_data(g2p.G2P_TRAIN["max_tokens"])
    source = loop.EpochBatches(batches, lambda idx: collate([pairs[i] for i in idx]), 2)
    flops, order = baseline.batch_flops("recurrent"), baseline.batch_order(2, 330)  # into the second epoch
    for k, (src, tgt) in enumerate(source):
        if k == len(order):
            break
        if k % 37 == 0 or k > 310:
            lengths = (src != PAD_ID).sum(1).tolist()
            assert flops[order[k]] == recurrent_step_flops(lengths, tgt.size(1), len(g2p.G2PVocab()), **G2P_RECURRENT)


def test_a_log_from_another_seed_is_refused():
    _, records = g2p.read_log(baseline.run_directory("recurrent", 0) / "log.jsonl")
    with pytest.raises(ValueError, match="the log says"):
        baseline.logged_flops("recurrent", 1, records[:1])


def test_timing_file():
    t = json.loads(baseline.TIMING.read_text())
    assert t["kind"] == "G2P step times" and t["machine"]["threads"] == 1
    for name in ("transformer", "recurrent"):
        times = t["seconds"][name]
        assert len(times) == len(t["batches"]) >= 3 and all(x > 0 for x in times)
        assert math.isclose(t["mean"][name], sum(times) / len(times))


def test_errors_name_the_remedy(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="arch must be one of"):
        baseline.run_directory("lstm", 0)
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        baseline.results_path("recurrent", -1)
    monkeypatch.setattr(baseline, "RUNS", tmp_path)
    with pytest.raises(FileNotFoundError, match="python -m utils.tasks.g2p train --arch recurrent --seed 2"):
        baseline.measure("recurrent", 2, progress=False)
    with pytest.raises(FileNotFoundError, match="python -m utils.experiments.baseline evaluate --arch recurrent --seed 2"):
        baseline.load_results("recurrent", 2)
    (tmp_path / "recurrent_seed2.json").write_text("{not json")
    with pytest.raises(ValueError, match="recurrent_seed2.json is not readable JSON"):
        baseline.load_results("recurrent", 2)
    (tmp_path / "recurrent_seed2.json").write_text(json.dumps({"kind": "something else"}))
    with pytest.raises(ValueError, match="not the G2P baseline results of recurrent seed 2"):
        baseline.load_results("recurrent", 2)
    with pytest.raises(ValueError, match="steps must be an int >= 3"):
        baseline.time_steps(steps=1, progress=False)


def test_ship_never_replaces_chapter_15s_model_with_another_seed(tmp_path):
    g2p.train_g2p(tmp_path / "work", steps=1, threads=1, progress=False, dev_eval=False, save_every=1, seed=1)
    with pytest.raises(ValueError, match="holds a run of seed 1"):
        g2p.ship(tmp_path / "work", keep_last=1)


def test_load_shipped_builds_the_model_its_log_names(tmp_path):
    kw = dict(threads=1, progress=False, dev_eval=False, save_every=1, arch="recurrent")
    g2p.train_g2p(tmp_path / "work", steps=2, **kw)
    g2p.ship(tmp_path / "work", out=tmp_path / "out", keep_last=2)
    model, steps = g2p.load_shipped("last", tmp_path / "out")
    assert isinstance(model, RecurrentSeq2Seq) and steps == [2] and not model.training
    assert g2p.shipped_arch(tmp_path / "out") == "recurrent" and g2p.shipped_arch(tmp_path) == "transformer"
    torch.save(dict(steps=[1], state_dict=g2p.new_model().state_dict()), tmp_path / "out" / "g2p_avg.pt")
    with pytest.raises(ValueError, match="weights of another model.*the recurrent model"):
        g2p.load_shipped("avg", tmp_path / "out")
