"""Issue 34, item 4: a classical G2P model (Phonetisaurus) on the course's split, for chapter 17's
"Table 2 in miniature" (``utils/experiments/phonetisaurus.py``).

The shipped results are checked without Phonetisaurus: their WER and PER re-derive from their
outputs with the course's functions, their words are the course's test split, their setting
is the dev split's best of the grid. The paired bootstrap is deterministic, its intervals hold
the point differences, and bad input gets clear errors. Where ``phonetisaurus`` is installed,
the command itself runs on a small subset of the splits.
"""

import importlib.util
import json
import sys

import pytest

from utils.experiments import baseline
from utils.experiments import phonetisaurus as ph
from utils.tasks import g2p

HAVE_PHONETISAURUS = importlib.util.find_spec("phonetisaurus") is not None


@pytest.fixture(scope="module")
def results():
    return ph.load_results()


@pytest.fixture(scope="module")
def versus(results):
    return ph.versus_baseline(results)


def _refs(words):
    test = g2p.cached_lexicon()["test"]
    return [test[w] for w in words]


def test_the_shipped_scores_rederive_from_the_outputs(results):
    refs = _refs(results["words"])
    assert results["test_wer"] == g2p.wer(results["outputs"], refs)
    assert results["test_per"] == g2p.per(results["outputs"], refs)
    assert all(p in g2p.PHONES for h in results["outputs"] for p in h)


def test_the_words_are_the_course_test_split_and_the_neural_runs_words(results):
    assert results["words"] == list(g2p.cached_lexicon()["test"])
    for arch, seed in baseline.finished_runs():
        assert baseline.load_results(arch, seed)["words"] == results["words"]


def test_trained_on_the_train_split_with_the_grid_chosen_on_dev(results):
    lexicon = g2p.cached_lexicon()
    assert results["train_entries"] == sum(len(refs) for refs in lexicon["train"].values())
    assert results["alignments"] == ph.ALIGNMENTS
    assert [(s["alignment"], s["order"]) for s in results["grid"]] == [(s["alignment"], s["order"]) for s in ph.GRID]
    best = min(results["grid"], key=lambda s: (s["dev_wer"], s["dev_per"]))
    assert results["chosen"] == {"alignment": best["alignment"], "order": best["order"]}
    assert all(0 < s["entries"] <= results["train_entries"] for s in results["grid"])
    assert results["repeat_identical"] is True and len(results["model_sha256"]) == 64
    assert results["seconds"]["train"]["cpu"] > 0 and results["seconds"]["test"]["cpu"] > 0
    assert results["machine"]["threads"] == 1 and results["machine"]["phonetisaurus"]


def test_the_shipped_file_is_small():
    assert ph.RESULTS.stat().st_size < 2_000_000


def test_the_bootstrap_is_deterministic_and_holds_the_point_difference(results, versus):
    assert versus == ph.versus_baseline(results)
    assert set(versus) == {a for a, _ in baseline.finished_runs()}
    for arch, boot in versus.items():
        seeds = sorted(boot["seeds"])
        for seed, b in boot["seeds"].items():
            r = baseline.load_results(arch, seed)
            assert (b["wer"]["b"], b["per"]["b"]) == (r["test_wer"], r["test_per"])
        mean = boot["mean"]
        assert mean["runs_b"] == len(seeds)
        assert mean["wer"]["b"] == pytest.approx(sum(boot["seeds"][s]["wer"]["b"] for s in seeds) / len(seeds), abs=1e-15)
        for b in [*boot["seeds"].values(), mean]:
            assert (b["resamples"], b["seed"], b["words"]) == (baseline.BOOTSTRAP["resamples"], baseline.BOOTSTRAP["seed"],
                                                               len(results["words"]))
            for m in ("wer", "per"):
                assert b[m]["a"] == results[f"test_{m}"]
                assert b[m]["diff"] == pytest.approx(b[m]["a"] - b[m]["b"], abs=1e-15)
                assert b[m]["low"] <= b[m]["diff"] <= b[m]["high"], (arch, m, b[m])


def test_load_results_names_the_file_and_the_command(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m utils.experiments.phonetisaurus run"):
        ph.load_results(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match="bad.json is not readable JSON"):
        ph.load_results(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text(json.dumps({"kind": "something else"}))
    with pytest.raises(ValueError, match="is not the G2P Phonetisaurus results"):
        ph.load_results(tmp_path / "other.json")
    (tmp_path / "short.json").write_text(json.dumps({"kind": ph.RESULTS_KIND, "words": ["a"], "outputs": ["AH"]}))
    with pytest.raises(ValueError, match="not one per word of this cmudict's test split"):
        ph.load_results(tmp_path / "short.json")


@pytest.mark.parametrize("lexicon,error,match", [
    ({}, ValueError, "non-empty dict"),
    ({"Cat": [["K", "AE", "T"]]}, ValueError, "lower case"),
    ({"c4t": [["K", "AE", "T"]]}, ValueError, "characters outside"),
    ({"cat": []}, ValueError, "one or more pronunciations"),
    ({"cat": [[]]}, ValueError, "empty pronunciation"),
    ({"cat": [["K", "AE1", "T"]]}, ValueError, "unknown phones"),
])
def test_bad_lexicons_are_refused_before_any_tool_runs(tmp_path, lexicon, error, match):
    with pytest.raises(error, match=match):
        ph.write_lexicon(lexicon, tmp_path / "x.tsv")


def test_bad_settings_are_refused_before_any_tool_runs(tmp_path):
    with pytest.raises(ValueError, match="an alignment is a dict"):
        ph.align(tmp_path / "x.tsv", tmp_path / "x.corpus", {"seq1_max": 2})
    with pytest.raises(ValueError, match="seq1_max must be an int >= 1"):
        ph.align(tmp_path / "x.tsv", tmp_path / "x.corpus", {**ph.ALIGNMENTS["2-2"], "seq1_max": 0})
    with pytest.raises(ValueError, match="grow must be True or False"):
        ph.align(tmp_path / "x.tsv", tmp_path / "x.corpus", {**ph.ALIGNMENTS["2-2"], "grow": "yes"})
    with pytest.raises(ValueError, match="order must be an int in 1..20"):
        ph.estimate(tmp_path / "x.corpus", 0, tmp_path / "m.fst")
    with pytest.raises(ValueError, match="words must be a non-empty list"):
        ph.predict(tmp_path / "m.fst", [])
    with pytest.raises(ValueError, match="need one or more alignments"):
        ph.run(tmp_path / "r.json", tmp_path, orders=())


def test_without_the_package_the_message_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "phonetisaurus", None)  # import phonetisaurus now raises ModuleNotFoundError
    with pytest.raises(ModuleNotFoundError, match="pip install phonetisaurus"):
        ph.tools()


@pytest.mark.skipif(not HAVE_PHONETISAURUS, reason="phonetisaurus is not installed (`.venv/bin/pip install phonetisaurus==0.3.0`, "
                    "x86-64 Linux): the command is not run here; the shipped results are checked above")
def test_the_command_runs_on_a_subset_and_repeats_itself(tmp_path):
    lexicon = g2p.cached_lexicon()
    small = {name: {w: refs for i, (w, refs) in enumerate(split.items()) if i % (100 if name == "train" else 50) == 0}
             for name, split in lexicon.items()}
    path = ph.run(tmp_path / "r.json", tmp_path / "work", alignments={"2-2": ph.ALIGNMENTS["2-2"]}, orders=(2, 4),
                  lexicon=small, progress=False)
    r = json.loads(path.read_text())
    assert r["kind"] == ph.RESULTS_KIND and r["repeat_identical"] is True
    assert [(s["alignment"], s["order"]) for s in r["grid"]] == [("2-2", 2), ("2-2", 4)]
    words = list(small["test"])
    hyps = [h.split() for h in r["outputs"]]
    assert r["words"] == words and r["test_wer"] == g2p.wer(hyps, [small["test"][w] for w in words])
    assert r["test_wer"] < 0.9  # a model trained on 1/100 of the words still gets some right
    again, _ = ph.predict(tmp_path / "work" / "repeat" / "model.fst", words[:20])
    assert again == hyps[:20]
    # Run again in the same folder: the grid's corpus and models are reused (stamped), the results are the same.
    stamp = tmp_path / "work" / "2-2" / "stamp.json"
    made = stamp.stat().st_mtime_ns
    r2 = json.loads(ph.run(tmp_path / "r2.json", tmp_path / "work", alignments={"2-2": ph.ALIGNMENTS["2-2"]}, orders=(2, 4),
                           lexicon=small, progress=False).read_text())
    assert stamp.stat().st_mtime_ns == made
    assert {k: v for k, v in r2.items() if k != "seconds"} == {k: v for k, v in r.items() if k != "seconds"}
