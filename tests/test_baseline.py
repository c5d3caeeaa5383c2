"""Issue 22 / chapter 17: the shipped runs of the Table 2 comparison (the G2P Transformer
against the recurrent model of ``utils/model/recurrent.py``) and their measurements.

Each shipped run is its command's: its first steps rerun here within the replay
tolerance. Each run's measurements (``utils/experiments/baseline.py``) agree with its log and its
weights: the FLOPs with a replay of its batch order, the test outputs with a fresh
decode of a sample (decoded tokens are exact results), the WER and PER with the outputs.
"""

import json
import math

import numpy as np
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
        (p.name.split("_seed")[0], int(p.name.split("_seed")[1])) for p in baseline.RUNS.iterdir() if p.is_dir() and "_seed" in p.name}
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


# ---- issue 34: statistics of the shipped runs, dropout sites, the tuning grid ---------------

def test_t_quantile_matches_closed_forms_and_tables():
    assert math.isclose(baseline.t_quantile(0.95, 1), math.tan(0.95 * math.pi / 2), rel_tol=1e-13)
    assert math.isclose(baseline.t_quantile(0.95, 2), math.sqrt(2 * 0.95**2 / (1 - 0.95**2)), rel_tol=1e-13)
    assert math.isclose(baseline.t_quantile(0.9, 2), math.sqrt(2 * 0.9**2 / (1 - 0.9**2)), rel_tol=1e-13)
    for df, t in ((3, 3.1824), (4, 2.7764), (5, 2.5706), (10, 2.2281), (30, 2.0423)):  # printed t tables
        assert round(baseline.t_quantile(0.95, df), 4) == t, df
    assert round(baseline.t_quantile(0.99, 2), 4) == 9.9248
    with pytest.raises(ValueError, match="df must be >= 1"):
        baseline.t_quantile(0.95, 0)
    with pytest.raises(TypeError, match="df must be an int"):
        baseline.t_quantile(0.95, 2.0)
    with pytest.raises(ValueError, match=r"confidence must lie in \(0, 1\)"):
        baseline.t_quantile(1.0, 2)


def test_mean_interval():
    mean, low, high = baseline.mean_interval([1.0, 2.0, 3.0])  # standard deviation 1
    half = baseline.t_quantile(0.95, 2) / math.sqrt(3)
    assert mean == 2.0 and math.isclose(low, 2 - half) and math.isclose(high, 2 + half)
    assert baseline.mean_interval([0.25, 0.25]) == (0.25, 0.25, 0.25)
    with pytest.raises(ValueError, match="at least 2 values, got 1"):
        baseline.mean_interval([0.3])
    with pytest.raises(ValueError, match="must be finite"):
        baseline.mean_interval([0.3, math.nan])
    with pytest.raises(TypeError, match="must be real numbers"):
        baseline.mean_interval([0.3, "0.4"])


def test_word_errors_add_up_to_the_shipped_wer_and_per():
    r = baseline.load_results("recurrent", 0)
    test = g2p.cached_lexicon()["test"]
    e = baseline.word_errors(r["outputs"], [test[w] for w in r["words"]])
    assert sum(e["wrong"]) / len(e["wrong"]) == r["test_wer"] and sum(e["edits"]) / sum(e["length"]) == r["test_per"]
    assert all((w == 1) == (d > 0) for w, d in zip(e["wrong"], e["edits"]))
    with pytest.raises(ValueError, match="need one output per word"):
        baseline.word_errors([["K"]], [])


def _bootstrap_by_hand(ea, eb, la, lb, resamples, seed, chunk):
    """The same draws as paired_bootstrap, each resample scored by indexing the words."""
    def rate(e, n, row):  # mean over seeds of the words' errors / lengths
        return np.mean([e[s, row].sum() / n[s, row].sum() for s in range(e.shape[0])])

    rng, out = np.random.default_rng(seed), []
    words = ea.shape[1]
    while len(out) < resamples:
        for row in rng.integers(0, words, size=(min(chunk, resamples - len(out)), words)):
            out.append(rate(ea, la, row) - rate(eb, lb, row))
    return np.array(out)


def test_paired_bootstrap_against_a_resample_by_hand():
    rng = np.random.default_rng(7)
    ea, eb = rng.integers(0, 4, size=(3, 50)), rng.integers(0, 3, size=(2, 50))  # seed counts may differ
    la, lb = ea + rng.integers(1, 5, size=(3, 50)), eb + rng.integers(1, 5, size=(2, 50))
    got = baseline.paired_bootstrap(ea, eb, la, lb, resamples=300, seed=4, chunk=70)
    gaps = _bootstrap_by_hand(ea, eb, la, lb, 300, 4, 70)
    observed = np.mean([e.sum() / n.sum() for e, n in zip(ea, la)]) - np.mean([e.sum() / n.sum() for e, n in zip(eb, lb)])
    assert math.isclose(got["gap"], observed, rel_tol=1e-12)
    assert np.allclose([got["low"], got["high"]], np.quantile(gaps, [0.025, 0.975]), rtol=1e-12, atol=0)
    assert math.isclose(got["share_at_or_below_zero"], float((gaps <= 0).mean()))
    assert (got["resamples"], got["seed"], got["words"]) == (300, 4, 50)
    assert got == baseline.paired_bootstrap(ea, eb, la, lb, resamples=300, seed=4, chunk=70)  # deterministic
    assert got != baseline.paired_bootstrap(ea, eb, la, lb, resamples=300, seed=5, chunk=70)


def test_paired_bootstrap_edge_cases_and_errors():
    same = [[0, 1, 1, 0], [1, 1, 0, 0]]
    assert {k: v for k, v in baseline.paired_bootstrap(same, same, resamples=50).items() if k in ("gap", "low", "high")} \
        == dict(gap=0.0, low=0.0, high=0.0)
    all_wrong = baseline.paired_bootstrap([1, 1, 1], [0, 0, 0], resamples=50)  # one seed: (words,)
    assert (all_wrong["gap"], all_wrong["low"], all_wrong["high"], all_wrong["share_at_or_below_zero"]) == (1, 1, 1, 0)
    with pytest.raises(ValueError, match="the same words: 3 and 2 words"):
        baseline.paired_bootstrap([1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match=r"lengths_a must have the shape of its errors \(1, 3\)"):
        baseline.paired_bootstrap([1, 0, 1], [1, 0, 0], lengths_a=[1, 1])
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        baseline.paired_bootstrap([1, -1, 1], [1, 0, 0])
    with pytest.raises(ValueError, match="resamples must be a positive int"):
        baseline.paired_bootstrap([1], [0], resamples=0)
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        baseline.paired_bootstrap([1], [0], seed=-1)
    with pytest.raises(ValueError, match="lengths sum to 0"):
        baseline.paired_bootstrap([0, 0], [0, 0], lengths_a=[0, 0], resamples=20)
    with pytest.raises(ValueError, match="a list of word_errors dicts"):
        baseline.bootstrap_wer_per([dict(wrong=[1])], [dict(wrong=[0], edits=[0], length=[1])])


def test_the_shipped_gap_is_the_difference_of_mean_test_scores():
    """Pooled over seeds, the bootstrap's observed gap is mean test WER (PER) of the Transformer
    minus the recurrent model's: what chapter 17 prints beside its interval."""
    test = g2p.cached_lexicon()["test"]
    scored = {key: baseline.load_results(*key) for key in RUNS}
    errors = {key: baseline.word_errors(r["outputs"], [test[w] for w in r["words"]]) for key, r in scored.items()}
    of = lambda arch, field: [errors[k][field] for k in RUNS if k[0] == arch]  # noqa: E731
    mean = lambda arch, field: sum(scored[k][field] for k in RUNS if k[0] == arch) / len(of(arch, "wrong"))  # noqa: E731
    wer = baseline.paired_bootstrap(of("transformer", "wrong"), of("recurrent", "wrong"), resamples=100)
    per = baseline.paired_bootstrap(of("transformer", "edits"), of("recurrent", "edits"), of("transformer", "length"),
                                    of("recurrent", "length"), resamples=100)
    both = baseline.bootstrap_wer_per([errors[k] for k in RUNS if k[0] == "transformer"],
                                      [errors[k] for k in RUNS if k[0] == "recurrent"], resamples=100)
    assert both == dict(WER=wer, PER=per)  # one draw for both: the same numbers as two calls
    assert math.isclose(wer["gap"], mean("transformer", "test_wer") - mean("recurrent", "test_wer"), rel_tol=1e-9)
    assert math.isclose(per["gap"], mean("transformer", "test_per") - mean("recurrent", "test_per"), rel_tol=1e-9)
    assert wer["low"] <= wer["gap"] <= wer["high"] and per["low"] <= per["gap"] <= per["high"]


def test_separation_p():
    assert baseline.separation_p(3, 3) == 0.1 and baseline.separation_p(2, 2) == 1 / 3
    assert baseline.separation_p(4, 4) == 2 / 70
    with pytest.raises(ValueError, match="n_b must be a positive int"):
        baseline.separation_p(3, 0)


def test_dev_summary():
    records = [dict(step=s, dev_loss=loss, dev_wer=w) for s, loss, w in
               ((1000, 1.2, 0.8), (2000, 0.9, 0.5), (3000, 0.95, 0.45), (4000, 1.0, 0.46))]
    got = baseline.dev_summary([dict(step=500), *records], window=2000)
    assert got == dict(last_step=4000, last_loss=1.0, best_loss=0.9, best_step=2000, last_wer=0.46,
                       loss_change=pytest.approx(0.1), wer_change=pytest.approx(-0.04))
    with pytest.raises(ValueError, match="no dev evaluation at step 1,500"):
        baseline.dev_summary(records, window=2500)
    with pytest.raises(ValueError, match="holds no dev evaluation"):
        baseline.dev_summary([dict(step=1000)])
    _, shipped = g2p.read_log(baseline.run_directory("transformer", 0) / "log.jsonl")
    assert baseline.dev_summary(shipped)["best_step"] == 18_000  # at its minimum at the last evaluation


def test_stopped_improving_needs_no_new_best_of_loss_or_wer_in_the_window():
    """Converged at a step only when both the dev loss and the dev WER had their best at least
    ``window`` steps before it; the evaluations after the step are not read."""
    records = [dict(step=s, dev_loss=loss, dev_wer=w) for s, loss, w in
               ((1000, 1.2, 0.8), (2000, 0.9, 0.5), (3000, 0.95, 0.45), (4000, 1.0, 0.46), (5000, 1.1, 0.47),
                (6000, 0.8, 0.40))]
    got = baseline.stopped_improving([dict(step=500), *records], 5000, window=2000)
    assert got == dict(step=5000, best_loss_step=2000, best_wer_step=3000, converged=True)
    assert not baseline.stopped_improving(records, 4000, window=2000)["converged"]  # WER best at 3,000
    assert not baseline.stopped_improving(records, 6000, window=1000)["converged"]  # new bests at 6,000
    with pytest.raises(ValueError, match="step 4500 is not a step the log evaluated"):
        baseline.stopped_improving(records, 4500)
    with pytest.raises(ValueError, match="no dev evaluation 4,000 steps or more before step 3,000"):
        baseline.stopped_improving(records, 3000)
    with pytest.raises(ValueError, match="window must be a positive int"):
        baseline.stopped_improving(records, 3000, window=0)


def test_the_shipped_final_logs_are_read_by_arch_and_seed():
    logs = baseline.final_logs()
    measured = {(p.name.split("_seed")[0], int(p.name.split("_seed")[1].split("@")[0]))
                for p in baseline.FINAL.glob("*@*.json")}
    assert set(logs) == measured and measured
    for (arch, seed), (header, records) in logs.items():
        assert header["start"]["arch"] == arch and header["start"]["seed"] == seed
        assert records[-1]["step"] == max(int(p.stem.split("@")[1]) for p in baseline.FINAL.glob(f"{arch}_seed{seed}@*.json"))


def test_dropout_sites_read_from_the_code():
    from utils.core.masks import shift_right
    from utils.model.recurrent import new_recurrent_model

    vocab = g2p.G2PVocab()
    src, tgt = collate([(vocab.encode_word(w), vocab.encode_phones(["K", "AE", "T"])) for w in ("cat", "kat")])
    tgt_in = shift_right(tgt)
    transformer = g2p.new_model(len(vocab)).eval()
    torch.manual_seed(1)
    state = torch.get_rng_state()
    sites = baseline.dropout_sites(transformer, src, tgt_in)
    assert torch.equal(state, torch.get_rng_state()) and not transformer.training  # as it was
    n = g2p.G2P_MODEL["N"]
    assert sum(s["calls"] for s in sites) == 2 + 2 * n + 3 * n  # embeddings of both sides, 2 per encoder layer, 3 per decoder layer
    assert [s["where"] for s in sites][:2] == ["Transformer.embed_positions", "EncoderLayer.forward"]
    assert {s["dropped"] for s in sites} >= {"self.ffn(x)", "self.cross_attn(x, memory, memory, src_mask)"}
    gru = baseline.dropout_sites(new_recurrent_model(len(vocab)), src, tgt_in)
    assert [(s["where"], s["dropped"], s["calls"]) for s in gru] == [
        ("RecurrentSeq2Seq.encode", "self.embed(src)", 1), ("RecurrentSeq2Seq.decode", "self.embed(tgt)", 1),
        ("RecurrentSeq2Seq.decode", "t", 1)]
    on = baseline.dropout_sites(new_recurrent_model(len(vocab), p_memory=0.1, p_input=0.2, p_state=0.3), src, tgt_in)
    steps = tgt_in.size(1)
    assert [(s["module"], s["p"], s["calls"]) for s in on] == [
        ("dropout", 0.1, 1), ("drop_memory", 0.1, 1), ("dropout", 0.1, 1), ("drop_input", 0.2, steps),
        ("drop_state", 0.3, steps), ("dropout", 0.1, 1)]


def test_the_tuning_grid_is_one_balanced_grid_for_both_models():
    from utils.training.recipe import rate

    grid = baseline.TUNING_GRID
    assert len(grid) == 8 and len({tuple(c.items()) for c in grid}) == 8
    assert grid[0] == dict(factor=1.0, warmup=g2p.G2P_TRAIN["warmup"], dropout=g2p.G2P_MODEL["p_drop"])
    half = grid[:4]
    for a, b in (("factor", "warmup"), ("factor", "dropout"), ("warmup", "dropout")):  # each pair of settings once
        assert len({(c[a], c[b]) for c in half}) == 4
    peak = lambda c: rate(c["warmup"], 128, c["warmup"], c["factor"]) / rate(4000, 128, 4000)  # noqa: E731
    assert sorted({round(peak(c), 6) for c in half}) == [0.5, 1.0, 2.0]
    for arch in g2p.ARCHS:
        for k, c in enumerate(grid):
            model = baseline.tuning_model(arch, k)
            assert {m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)} == {c["dropout"]}
    with pytest.raises(ValueError, match=r"config must be an index of TUNING_GRID, 0..7, got 8"):
        baseline.tuning_model("recurrent", 8)


def test_a_tuning_run_trains_its_configuration_and_resumes_exactly(tmp_path):
    from utils.training.recipe import rate

    kw = dict(progress=False, dev_eval=False)
    baseline.tune("recurrent", 3, tmp_path / "a", steps=2, **kw)
    log = baseline.tune("recurrent", 3, tmp_path / "a", steps=4, **kw)  # resumes from step 2
    baseline.tune("recurrent", 3, tmp_path / "b", steps=4, **kw)
    header, records = g2p.read_log(log)
    _, straight = g2p.read_log(tmp_path / "b" / "log.jsonl")
    assert [x for r in records for x in r["losses"]] == [x for r in straight for x in r["losses"]]
    assert header["start"]["arch"] == "recurrent" and header["start"]["warmup"] == 1000
    assert records[-1]["step"] == 4 and records[-1]["lr"] == rate(4, 128, 1000, 1.0)
    with pytest.raises(ValueError):  # another configuration in the same folder
        baseline.tune("recurrent", 2, tmp_path / "a", steps=5, **kw)


def test_a_final_run_trains_to_each_budget_resumes_and_is_measured_there(monkeypatch, tmp_path):
    """``final_run``: one run, resumed from budget to budget, keeping the checkpoints to average,
    measured at each; a measured budget is passed over, so the command resumes. Decoding is
    patched (the whole test split with beam search takes minutes; ``measure`` is tested above)."""
    decoded = []
    monkeypatch.setattr(g2p, "beam_phones", lambda model, words, vocab: decoded.append(
        sorted(model.state_dict()["embed.lut.weight"].flatten()[:3].tolist())) or [["AH0"]] * len(words))
    monkeypatch.setattr(g2p, "score_split", lambda model, lexicon, vocab: dict(wer=0.5, per=0.25))
    monkeypatch.setattr(g2p, "G2P_TRAIN", dict(g2p.G2P_TRAIN, save_every=1, keep_last=2))
    out = baseline.final_run("recurrent", 1, 2, tmp_path / "run", out_dir=tmp_path / "final", progress=False,
                             steps=[2, 3])
    assert [p.name for p in out] == ["recurrent_seed2@2.json", "recurrent_seed2@3.json"]
    first, second = (baseline.load_final("recurrent", 2, k, tmp_path / "final") for k in (2, 3))
    assert (first["averaged"], second["averaged"]) == ([1, 2], [2, 3]) and second["config"] == 1
    assert second["dev_wer"] == 0.5 and second["test_wer"] == g2p.wer(second["outputs"], list(
        g2p.load_lexicon()["test"].values()))
    header, records = g2p.read_log(tmp_path / "final" / "recurrent_seed2.jsonl")
    assert header["start"]["kind"] == baseline.FINAL_RUN_KIND and records[-1]["step"] == 3
    assert second["flops"] == baseline.logged_flops("recurrent", 2, records)[-1]
    assert len(decoded) == 2
    baseline.final_run("recurrent", 1, 2, tmp_path / "run", out_dir=tmp_path / "final", progress=False, steps=[2, 3])
    assert len(decoded) == 2  # both budgets measured: nothing trains or decodes again
    with pytest.raises(ValueError, match="measures configuration 1, not 5: give this configuration's runs their own"):
        baseline.final_run("recurrent", 5, 2, tmp_path / "run5", out_dir=tmp_path / "final", progress=False, steps=[2])
    with pytest.raises(ValueError, match="not of a final run"):
        baseline.measure_final("recurrent", 2, 2, tmp_path / "run", tmp_path / "final")
    with pytest.raises(ValueError, match="steps must be increasing positive ints"):
        baseline.final_run("recurrent", 1, 2, tmp_path / "run", steps=[3, 2])
    with pytest.raises(FileNotFoundError, match="python -m utils.experiments.baseline final --arch recurrent --seed 2"):
        baseline.load_final("recurrent", 2, 4, tmp_path / "final")
    assert baseline.final_steps("transformer") == [9_000, 18_000, 36_000]


def _fake_final(folder, arch, seed, steps, wrong_every, dev_loss, config=1):
    """A final run's measurement in ``folder``: every ``wrong_every``-th test word given a wrong phone."""
    lexicon = g2p.load_lexicon()["test"]
    words = list(lexicon)
    outputs = [" ".join(lexicon[w][0] if i % wrong_every else ["ZH"] + lexicon[w][0][1:]) for i, w in enumerate(words)]
    refs = [lexicon[w] for w in words]
    hyps = [o.split() for o in outputs]
    record = dict(kind=baseline.FINAL_KIND, arch=arch, config=config, seed=seed, step=steps, words=words, outputs=outputs,
                  test_wer=g2p.wer(hyps, refs), test_per=g2p.per(hyps, refs), dev_loss=dev_loss, flops=10 * steps)
    (folder / baseline.final_path(arch, seed, steps).name).write_text(json.dumps(record))


def test_budget_comparison_reads_the_seeds_shipped_at_one_budget(tmp_path):
    """Per model, one value per seed and a t-interval from 2 seeds on; the bootstrap over test words
    pairs every seed of both models, and only when both have one; other budgets are not read."""
    _fake_final(tmp_path, "transformer", 0, 9_000, 4, 0.9)
    _fake_final(tmp_path, "transformer", 1, 9_000, 5, 0.8)
    _fake_final(tmp_path, "transformer", 0, 18_000, 2, 0.7)  # another budget
    only = baseline.budget_comparison(0.5, tmp_path, resamples=50)
    assert set(only["models"]) == {"transformer"} and only["bootstrap"] is None
    t = only["models"]["transformer"]
    assert t["seeds"] == [0, 1] and t["steps"] == 9_000 and t["dev_loss"] == [0.9, 0.8]
    assert t["test_wer_interval"] == baseline.mean_interval(t["test_wer"]) and t["flops"] == [90_000, 90_000]
    _fake_final(tmp_path, "recurrent", 2, 9_500, 10, 0.85)
    both = baseline.budget_comparison(0.5, tmp_path, resamples=50)
    r = both["models"]["recurrent"]
    assert r["seeds"] == [2] and "test_wer_interval" not in r
    gap = both["bootstrap"]["WER"]["gap"]
    assert gap == pytest.approx(sum(t["test_wer"]) / 2 - r["test_wer"][0]) and gap > 0
    with pytest.raises(ValueError, match="budget must be one of"):
        baseline.budget_comparison(3, tmp_path)
    with pytest.raises(ValueError, match="no final run is measured at 2x"):
        baseline.budget_comparison(2, tmp_path)


def test_whole_grid_comparison_pairs_the_new_choice_with_the_same_seeds_and_the_other_model(tmp_path):
    """The whole-grid runs against the first half's runs of the same seeds (not the others), and the
    other model against the whole-grid runs; it refuses what cannot be compared."""
    whole, base = tmp_path / "whole", tmp_path / "base"
    whole.mkdir(), base.mkdir()
    for seed, every in enumerate((5, 6, 7)):
        _fake_final(base, "recurrent", seed, 9_500, every, 0.9)
    _fake_final(base, "transformer", 0, 9_000, 3, 0.8)
    _fake_final(base, "transformer", 1, 9_000, 4, 0.8)
    with pytest.raises(ValueError, match="holds no final run of recurrent at 0.5x"):
        baseline.whole_grid_comparison(0.5, folder=whole, base=base, resamples=20)
    _fake_final(whole, "recurrent", 1, 9_500, 9, 0.7, config=5)
    c = baseline.whole_grid_comparison(0.5, folder=whole, base=base, resamples=50)
    w, f, o = c["whole"], c["first"], c["other"]
    assert (w["seeds"], w["config"], f["seeds"], o["seeds"]) == ([1], [5], [0, 1, 2], [0, 1])
    gaps = {(k, m): c[k][m]["gap"] for k in ("against_first", "against_other") for m in ("WER", "PER")}
    assert gaps["against_first", "WER"] == pytest.approx(w["test_wer"][0] - f["test_wer"][1])  # seed 1 with seed 1
    assert gaps["against_first", "PER"] == pytest.approx(w["test_per"][0] - f["test_per"][1])
    assert gaps["against_other", "WER"] == pytest.approx(sum(o["test_wer"]) / 2 - w["test_wer"][0])
    assert gaps["against_first", "WER"] < 0 < gaps["against_other", "WER"]
    with pytest.raises(ValueError, match="budget must be one of"):
        baseline.whole_grid_comparison(3, folder=whole, base=base)
    with pytest.raises(ValueError, match="arch must be one of"):
        baseline.whole_grid_comparison(0.5, arch="lstm", folder=whole, base=base)
    _fake_final(whole, "recurrent", 1, 9_500, 9, 0.7, config=1)  # the first half's configuration
    with pytest.raises(ValueError, match="differs from the first half"):
        baseline.whole_grid_comparison(0.5, folder=whole, base=base, resamples=20)
    _fake_final(whole, "recurrent", 3, 9_500, 9, 0.7, config=5)  # a seed the first half has not run
    with pytest.raises(ValueError, match=r"for seeds \[1, 3\]"):
        baseline.whole_grid_comparison(0.5, folder=whole, base=base, resamples=20)


def test_the_tune_command(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(baseline, "tune", lambda *a: calls.append(a) or tmp_path / "log.jsonl")
    baseline._main(["tune", "--arch", "transformer", "--config", "2", "--workdir", str(tmp_path)])
    assert calls == [("transformer", 2, str(tmp_path), baseline.TUNING_STEPS, 0, 1)]
    with pytest.raises(SystemExit):
        baseline._main(["tune", "--arch", "recurrent", "--config", "8", "--workdir", str(tmp_path)])


def test_the_final_command_trains_up_to_the_budget_asked(monkeypatch, tmp_path):
    """``final --up-to 1`` stops at the course's budget (the half budget on the way); without it
    the run goes on to twice the budget; the configuration is the one tuning chose."""
    calls = []
    monkeypatch.setattr(baseline, "final_run", lambda *a, **kw: calls.append((a, kw)) or [])
    args = ["final", "--arch", "recurrent", "--seed", "2", "--workdir", str(tmp_path)]
    baseline._main(args + ["--up-to", "1"])
    baseline._main(args)
    baseline._main(args + ["--grid", "half"])
    tuned = baseline.tuning_results()["recurrent"]
    chosen, first = baseline.chosen_config(tuned), baseline.chosen_config(tuned, baseline.FIRST_HALF)
    assert chosen != first, "issue 59: over the whole grid the recurrent model's choice changes"
    whole, half = dict(out_dir=baseline.FINAL_WHOLE_GRID), dict(out_dir=baseline.FINAL)
    steps = baseline.final_steps("recurrent")
    assert calls == [(("recurrent", chosen, 2, str(tmp_path), 1), dict(whole, steps=steps[:2])),
                     (("recurrent", chosen, 2, str(tmp_path), 1), dict(whole, steps=steps)),
                     (("recurrent", first, 2, str(tmp_path), 1), dict(half, steps=steps))]
    with pytest.raises(SystemExit):
        baseline._main(args + ["--up-to", "3"])


def test_a_finished_tuning_run_ships_and_is_read_and_chosen_by_dev_wer(monkeypatch, tmp_path):
    """A tuning log ships only for its own configuration at the tuning budget with a dev
    evaluation; ``tuning_results`` reads what is shipped; ``chosen_config`` takes the lowest dev WER."""
    monkeypatch.setattr(baseline, "TUNING", tmp_path / "tuning")
    baseline.tune("transformer", 1, tmp_path / "run", steps=2, progress=False, dev_eval=False)
    with pytest.raises(ValueError, match=r"ends at step 2 without a dev evaluation; a tuning run is shipped at step 6,000"):
        baseline.ship_tuning("transformer", 1, tmp_path / "run")
    with pytest.raises(ValueError, match=r"is the log of .*'config': 1.*not of .*'config': 2"):
        baseline.ship_tuning("transformer", 2, tmp_path / "run", steps=2)
    with pytest.raises(FileNotFoundError, match="log.jsonl is missing: train the run first"):
        baseline.ship_tuning("transformer", 1, tmp_path / "nothing")

    def fake_log(arch, config, wers, loss):  # a finished run's log as tune writes it, its evaluations made up
        start = dict(kind="G2P tuning run", arch=arch, config=config, **baseline.TUNING_GRID[config], seed=0, recipe={})
        lines = [dict(start=start)] + [dict(step=1000 * (k + 1), losses=[1.0], dev_loss=loss, dev_wer=w, dev_per=w / 4)
                                       for k, w in enumerate(wers)]
        folder = tmp_path / f"{arch}{config}"
        folder.mkdir()
        (folder / "log.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        return baseline.ship_tuning(arch, config, folder, steps=1000 * len(wers))

    assert fake_log("recurrent", 0, [40.0, 30.0], 0.95).name == "recurrent0.jsonl"
    fake_log("recurrent", 3, [35.0, 28.5], 0.97)
    fake_log("recurrent", 5, [33.0, 28.5], 0.93)
    fake_log("transformer", 2, [50.0, 31.0], 0.90)
    results = baseline.tuning_results()
    assert sorted(results["recurrent"]) == [0, 3, 5] and sorted(results["transformer"]) == [2]
    assert results["recurrent"][3] == dict(factor=1.0, warmup=1000, dropout=0.3, step=2000, dev_wer=28.5, dev_per=28.5 / 4,
                                           dev_loss=0.97, evals=[(1000, 35.0, 0.97), (2000, 28.5, 0.97)])
    assert baseline.chosen_config(results["recurrent"]) == 5  # 28.5 twice: the lower dev loss
    assert baseline.chosen_config(results["transformer"]) == 2
    assert baseline.chosen_config(results["recurrent"], configs=(0, 1, 2, 3)) == 3  # the choice among the first half
    with pytest.raises(ValueError, match="no tuning run is shipped for this model yet"):
        baseline.chosen_config({})
    with pytest.raises(ValueError, match=r"among configurations \[4, 6\]"):
        baseline.chosen_config(results["recurrent"], configs=(4, 6))


SHIPPED_TUNING = sorted(p.stem for p in baseline.TUNING.glob("*.jsonl"))


@pytest.mark.parametrize("stem", SHIPPED_TUNING)
def test_each_shipped_tuning_run_is_its_configuration_at_the_budget_and_replays(stem, tmp_path):
    """A shipped tuning log is the configuration its name says, trained to ``TUNING_STEPS`` with
    a dev evaluation there; its first 10 steps rerun within the replay tolerance."""
    arch = next(a for a in g2p.ARCHS if stem.startswith(a))
    config = int(stem[len(arch):])
    header, records = g2p.read_log(baseline.tuning_log(arch, config))
    start = header["start"]
    assert (start["arch"], start["config"], start["seed"]) == (arch, config, 0)
    assert {k: start[k] for k in ("factor", "warmup", "dropout")} == baseline.TUNING_GRID[config]
    assert records[-1]["step"] == baseline.TUNING_STEPS and "dev_wer" in records[-1]
    assert baseline.tuning_results()[arch][config]["dev_wer"] == records[-1]["dev_wer"]
    baseline.tune(arch, config, tmp_path, steps=10, threads=header["versions"]["threads"], progress=False, dev_eval=False)
    _, mine = g2p.read_log(tmp_path / "log.jsonl")
    gap = max(abs(a - b) for a, b in zip(mine[0]["losses"], records[0]["losses"][:10], strict=True))
    assert gap < REPLAY_TOLERANCE, f"{stem}: rerun drifts {gap:.2e} from its log"


#: (folder, file) of every shipped final measurement: the first half's choices (``FINAL``) and the
#: whole grid's where it differs (``FINAL_WHOLE_GRID``, issue 59).
SHIPPED_FINAL = sorted((folder.name, p.name) for folder in (baseline.FINAL, baseline.FINAL_WHOLE_GRID)
                       for p in folder.glob("*@*.json"))
FINAL_RUNS = sorted({(folder, n.split("_seed")[0], int(n.split("_seed")[1].split("@")[0])) for folder, n in SHIPPED_FINAL})
FOLDERS = {baseline.FINAL.name: baseline.FINAL, baseline.FINAL_WHOLE_GRID.name: baseline.FINAL_WHOLE_GRID}


@pytest.mark.parametrize("folder, name", SHIPPED_FINAL)
def test_each_shipped_final_measurement_is_its_run_at_its_budget(folder, name):
    """A shipped final measurement is its model's chosen configuration, at one of its budgets;
    its dev numbers and FLOPs are its log's at that step; its test WER and PER are its outputs'.
    (Each run's replay is tested once, below: every budget of a run shares its first steps.)"""
    arch, rest = name.split("_seed")
    seed, steps = (int(x) for x in rest.removesuffix(".json").split("@"))
    record = baseline.load_final(arch, seed, steps, FOLDERS[folder])
    tuned = baseline.tuning_results()[arch]
    first = baseline.chosen_config(tuned, baseline.FIRST_HALF)
    if folder == baseline.FINAL.name:  # each model's choice among the configurations run first (issue 34)
        assert record["config"] == first
    else:  # the choice over the whole grid, where it differs from the first half's (issue 59)
        assert record["config"] == baseline.chosen_config(tuned) != first
    assert steps in baseline.final_steps(arch)
    header, records = g2p.read_log(FOLDERS[folder] / f"{arch}_seed{seed}.jsonl")
    start = header["start"]
    assert (start["kind"], start["arch"], start["config"], start["seed"]) == (
        baseline.FINAL_RUN_KIND, arch, record["config"], seed)
    upto = [r for r in records if r["step"] <= steps]
    assert upto[-1]["step"] == steps and (upto[-1]["dev_loss"], upto[-1]["dev_wer"]) == (
        record["dev_loss"], record["dev_wer"])
    assert record["flops"] == baseline.logged_flops(arch, seed, upto)[-1]
    averaged = record["averaged"]
    assert len(averaged) == g2p.G2P_TRAIN["keep_last"] and averaged == sorted(set(averaged)) and averaged[-1] == steps
    lexicon = g2p.cached_lexicon()["test"]
    refs = [lexicon[w] for w in record["words"]]
    assert record["words"] == list(lexicon)
    assert (g2p.wer(record["outputs"], refs), g2p.per(record["outputs"], refs)) == (
        record["test_wer"], record["test_per"])


@pytest.mark.parametrize("folder, arch, seed", FINAL_RUNS)
def test_each_shipped_final_run_replays_within_the_tolerance(folder, arch, seed, tmp_path):
    """The run's first 10 steps rerun within the replay tolerance (its log was made on another
    machine, so not to the bit)."""
    header, records = g2p.read_log(FOLDERS[folder] / f"{arch}_seed{seed}.jsonl")
    baseline.tune(arch, header["start"]["config"], tmp_path, steps=10, seed=seed,
                  threads=header["versions"]["threads"], progress=False, dev_eval=False, _final=True)
    _, mine = g2p.read_log(tmp_path / "log.jsonl")
    gap = max(abs(a - b) for a, b in zip(mine[0]["losses"], records[0]["losses"][:10], strict=True))
    assert gap < REPLAY_TOLERANCE, f"{arch} seed {seed}: rerun drifts {gap:.2e} from its log"
