"""Tests of German-English training, shipping and scoring (utils/tasks/translation/train.py): a run
resumed halfway equals the run that never stopped, to the bit; the dev evaluation (greedy
BLEU and chrF with sacrebleu's signatures); a folder refuses a run with another recipe;
the errors of bad arguments; a shipped average that loads and translates; the commands.

The runs here are tiny (batches of 300 tokens, a few steps, a few dev sentences): they
test the machinery, not the quality. The tests skip, naming the apt command, where
Debian's trans-de-en is missing.
"""

import json
import re

import pytest
import torch

from utils import set_seed
from utils.core.numerics import REPLAY_TOLERANCE
from utils.experiments import translation as xt
from utils.experiments.flops import translation_training_flops
from utils.tasks.translation import data as tr
from utils.tasks.translation import train as mt
from utils.training.batching import collate

HAVE_DATA = tr.DATA.is_file()
pytestmark = pytest.mark.skipif(not HAVE_DATA, reason=f"{tr.DATA} is missing: `{tr.INSTALL}` (Debian's trans-de-en 1.9-6)")

#: A tiny recipe: 300-token batches (about 0.2 s a step on one thread), a save point every 2 steps.
TINY = dict(max_tokens=300, save_every=2, eval_every=2, progress=False)
MT_MODEL_WITHOUT_P_DROP = {k: v for k, v in mt.MT_MODEL.items() if k != "p_drop"}
SIGNATURE = re.compile(r"nrefs:(\d+|var)\|case:mixed\|eff:no\|tok:13a\|smooth:exp\|version:[\d.]+")


def _weights(workdir, step):
    return torch.load(workdir / f"step{step}.pt", weights_only=True)


@pytest.fixture(scope="module")
def straight(tmp_path_factory):
    """A 4-step run that never stopped, with a dev evaluation on 4 sentences at steps 2 and 4."""
    workdir = tmp_path_factory.mktemp("straight")
    mt.train_translation(workdir, steps=4, dev_size=4, **TINY)
    return workdir


def assert_replays(tmp_path, records, label, threads, **train):
    """The first 10 steps of a shipped run, rerun in ``tmp_path`` with its ``train_translation``
    arguments, stay within the measured ``REPLAY_TOLERANCE`` of the losses its log ``records``
    hold (the log was made on another machine, so not to the bit)."""
    mt.train_translation(tmp_path, steps=10, threads=threads, progress=False, dev_eval=False, **train)
    set_seed(0)  # back to the course's single thread
    _, mine = mt.read_log(tmp_path / "log.jsonl")
    gap = max(abs(a - b) for a, b in zip(mine[0]["losses"], records[0]["losses"][:10], strict=True))
    assert gap < REPLAY_TOLERANCE, f"{label}: rerun drifts {gap:.2e} from its log"


def test_max_extra_and_max_len_cover_the_data():
    sp = tr.load_vocab()
    examples = {name: tr.encode_pairs(pairs, sp) for name, pairs in tr.load_pairs().items()}
    extra = {name: max(len(en) - len(de) for de, en in ex) for name, ex in examples.items()}  # en holds its </s>
    assert extra == {"train": 19, "dev": 15, "test": 16}  # the numbers MAX_EXTRA's comment quotes
    assert max(extra.values()) <= mt.MAX_EXTRA
    longest = max(max(len(de), len(en)) for ex in examples.values() for de, en in ex)
    longest_source = max(len(de) for ex in examples.values() for de, _ in ex)
    assert (longest, longest_source) == (90, 87)
    assert longest_source + mt.MAX_EXTRA + 1 <= mt.MT_MODEL["max_len"]  # <s> + the longest decode fits the table


def test_a_resumed_run_equals_the_run_that_never_stopped(straight, tmp_path):
    mt.train_translation(tmp_path, steps=2, dev_size=4, **TINY)
    _, first = mt.read_log(tmp_path / "log.jsonl")
    assert [r["step"] for r in first] == [2]
    mt.train_translation(tmp_path, steps=4, dev_size=4, **TINY)  # resumes from state.pt at step 2
    _, resumed = mt.read_log(tmp_path / "log.jsonl")
    _, never_stopped = mt.read_log(straight / "log.jsonl")
    assert [r["losses"] for r in resumed] == [r["losses"] for r in never_stopped]
    assert [r["dev_loss"] for r in resumed] == [r["dev_loss"] for r in never_stopped]
    for step in (2, 4):
        a, b = _weights(tmp_path, step), _weights(straight, step)
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_the_log_holds_the_dev_evaluation_and_the_signatures(straight):
    header, records = mt.read_log(straight / "log.jsonl")
    assert header["start"]["recipe"]["phrases"] is False and header["start"]["model"] == mt.MT_MODEL
    assert header["train_pairs"] == 11_962 and header["dev_pairs"] == 4
    assert SIGNATURE.fullmatch(header["signatures"]["bleu_signature"])
    assert header["signatures"]["chrf_signature"].startswith("nrefs:")
    for r in records:
        assert 0 <= r["dev_bleu"] <= 100 and 0 <= r["dev_chrf"] <= 100 and r["dev_loss"] > 0
        assert r["src_tokens"] > 0 and r["tgt_tokens"] > 0 and len(r["losses"]) == 2


def test_the_dev_evaluation_scores_detokenised_text_against_every_reference():
    torch.manual_seed(0)
    model = mt.new_model()
    dev = tr.load_pairs()["dev"][:6]
    result = mt.score_pairs(model, dev)
    assert len(result["hyps"]) == len(result["sources"]) == len({de for de, _ in dev})
    assert all(isinstance(h, str) for h in result["hyps"])
    assert 0 <= result["bleu"] <= 100 and 0 <= result["chrf"] <= 100
    assert SIGNATURE.fullmatch(result["bleu_signature"])
    # the references against themselves: a perfect score, with a variable number of references
    sources, streams = tr.reference_streams([("a b c.", "The cat sat."), ("a b c.", "A cat sat."), ("d e f.", "Hello there, you.")])
    perfect = mt.bleu_chrf(list(streams[0]), streams)
    assert perfect["bleu"] == pytest.approx(100) and perfect["chrf"] == pytest.approx(100)
    assert perfect["bleu_signature"].startswith("nrefs:var|")


def test_a_run_refuses_to_resume_with_another_recipe(straight, tmp_path):
    mt.train_translation(tmp_path, steps=2, dev_eval=False, **TINY)
    with pytest.raises(ValueError, match="another configuration.*'phrases': False.*'phrases': True"):
        mt.train_translation(tmp_path, steps=4, dev_eval=False, phrases=True, **TINY)  # refused before reading phrases
    with pytest.raises(ValueError, match="another configuration"):
        mt.train_translation(tmp_path, steps=4, dev_eval=False, seed=1, **TINY)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(steps=0), ValueError, "steps must be an int >= 1, got int 0"),
    (dict(steps=2.0), ValueError, "steps must be an int >= 1, got float"),
    (dict(threads=0), ValueError, "threads must be an int >= 1"),
    (dict(seed=-1), ValueError, "seed must be an int >= 0"),
    (dict(max_tokens="3000"), ValueError, "max_tokens must be an int >= 1, got str"),
    (dict(keep_last=0), ValueError, "keep_last must be an int >= 1"),
    (dict(eps_ls=1.0), ValueError, r"eps_ls must be a number in \[0, 1\)"),
    (dict(max_len=64), ValueError, r"unknown recipe fields \['max_len'\]"),
    (dict(lr=0.1), ValueError, r"unknown recipe fields \['lr'\]; the fields are .*'p_drop'"),
    (dict(p_drop=1.0), ValueError, r"p_drop must be a number in \[0, 1\), got 1.0"),
    (dict(d_model=64.0), ValueError, "d_model must be an int >= 1, got float 64.0"),
    (dict(N=0), ValueError, "N must be an int >= 1, got int 0"),
    (dict(phrases="yes"), TypeError, "phrases must be True or False"),
    (dict(p_word_src=1.0), ValueError, r"p_word_src must be a number in \[0, 1\), got 1.0"),
    (dict(p_word_tgt=-0.1), ValueError, r"p_word_tgt must be a number in \[0, 1\)"),
    (dict(lr_factor=0), ValueError, "lr_factor must be a finite number > 0, got 0"),
    (dict(lr_factor=float("inf")), ValueError, "lr_factor must be a finite number > 0"),
    (dict(dev_size=0), ValueError, "dev_size must be None"),
    (dict(entry_ratio=-0.5), ValueError, "entry_ratio must be a finite number >= 0, got -0.5"),
    (dict(entry_ratio=0.25, phrases=True), ValueError, "phrases and entry_ratio both add"),
    (dict(entry_epochs=-1), ValueError, "entry_epochs must be an int >= 0, got -1"),
    (dict(entry_epochs=1.5), ValueError, "entry_epochs must be an int >= 0, got 1.5"),
    (dict(entry_epochs=1, entry_ratio=0.25), ValueError, "entry_epochs puts the dictionary's entries first"),
    (dict(entry_epochs=1, phrases=True), ValueError, "entry_epochs puts the dictionary's entries first"),
    (dict(arch="gru"), ValueError, r"arch must be one of \['transformer', 'recurrent'\], got 'gru'"),
    (dict(arch="recurrent", size="large"), ValueError, "size 'large' is one of the Transformer's sizes"),
    (dict(arch="recurrent", d_model=64), ValueError, r"unknown recipe fields \['d_model'\]; .*recurrent model's"),
    (dict(arch="recurrent", d_hidden=0), ValueError, "d_hidden must be an int >= 1, got int 0"),
    (dict(arch="recurrent", p_state=1.0), ValueError, r"p_state must be a number in \[0, 1\), got 1.0"),
    (dict(p_state=0.1), ValueError, r"unknown recipe fields \['p_state'\]"),
])
def test_bad_arguments_are_refused_with_what_was_expected(tmp_path, kwargs, error, match):
    with pytest.raises(error, match=match):
        mt.train_translation(tmp_path, progress=False, **kwargs)
    assert not (tmp_path / "state.pt").exists()


def test_bad_decoding_and_scoring_arguments():
    model = mt.new_model()
    with pytest.raises(ValueError, match="decode must be one of"):
        mt.translate(model, ["Guten Morgen!"], decode="sample")
    with pytest.raises(TypeError, match="sentences must be a list of German strings"):
        mt.translate(model, "Guten Morgen!")
    with pytest.raises(ValueError, match="at least one piece"):
        mt.translate(model, [""])
    with pytest.raises(ValueError, match="one per hypothesis"):
        mt.bleu_chrf(["a", "b"], [["a"]])
    with pytest.raises(TypeError, match="hyps must be a list of English strings"):
        mt.bleu_chrf([1], [["a"]])
    with pytest.raises(ValueError, match="at least one"):
        mt.score_pairs(model, [])
    with pytest.raises(TypeError, match="model must be a dict with the fields"):
        mt.new_model(dict(MT_MODEL_WITHOUT_P_DROP))


def test_ship_writes_a_small_average_that_loads_and_translates(straight, tmp_path):
    out = mt.ship(straight, tmp_path / "avg.pt", keep_last=2)
    assert out.stat().st_size <= mt.MAX_SHIPPED_BYTES and (tmp_path / mt.LOG_FILE.name).is_file()
    model, steps = mt.load_shipped(out)
    assert steps == [2, 4] and not model.training
    a, b = _weights(straight, 2), _weights(straight, 4)
    got = model.state_dict()  # the mean in float64, stored as float16, loaded as float32
    assert all(torch.equal(got[k], ((a[k].double() + b[k].double()) / 2).float().half().float()) for k in a)
    assert [type(s) for s in mt.translate(model, ["Ich habe keine Ahnung."], decode="beam")] == [str]
    full = mt.ship(straight, tmp_path / "avg32.pt", keep_last=1, dtype="float32")
    model32, steps32 = mt.load_shipped(full)
    assert steps32 == [4] and all(torch.equal(v, _weights(straight, 4)[k]) for k, v in model32.state_dict().items())
    early = mt.ship(straight, tmp_path / "early.pt", keep_last=1, dtype="float32", end=2)  # chosen by dev score
    model2, steps2 = mt.load_shipped(early)
    assert steps2 == [2] and all(torch.equal(v, _weights(straight, 2)[k]) for k, v in model2.state_dict().items())


def test_ship_and_load_errors(straight, tmp_path):
    with pytest.raises(FileNotFoundError, match="need 3 checkpoints"):
        mt.ship(straight, tmp_path / "avg.pt", keep_last=3)
    with pytest.raises(ValueError, match="dtype must be 'float16' or 'float32'"):
        mt.ship(straight, tmp_path / "avg.pt", dtype="float64")
    with pytest.raises(ValueError, match="keep_last must be a positive int"):
        mt.ship(straight, tmp_path / "avg.pt", keep_last=0)
    with pytest.raises(FileNotFoundError, match="no checkpoint step3.pt"):
        mt.ship(straight, tmp_path / "avg.pt", keep_last=1, end=3)
    with pytest.raises(FileNotFoundError, match="need 2 checkpoints .* up to step 2, found steps \\[2\\]"):
        mt.ship(straight, tmp_path / "avg.pt", keep_last=2, end=2)
    with pytest.raises(ValueError, match="end must be None or a positive int"):
        mt.ship(straight, tmp_path / "avg.pt", end="best")
    with pytest.raises(FileNotFoundError, match="python -m utils.tasks.translation ship"):
        mt.load_shipped(tmp_path / "missing.pt")
    torch.save(dict(weights=1), tmp_path / "other.pt")
    with pytest.raises(ValueError, match="must be a shipped translation model"):
        mt.load_shipped(tmp_path / "other.pt")
    torch.save(dict(steps=[1], config=dict(model=mt.MT_MODEL), state_dict={"x": torch.zeros(1)}), tmp_path / "x.pt")
    with pytest.raises(ValueError, match="x.pt holds the weights of another model"):
        mt.load_shipped(tmp_path / "x.pt")
    (tmp_path / "garbage.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="garbage.pt must be a shipped translation model"):
        mt.load_shipped(tmp_path / "garbage.pt")


def test_best_step_picks_the_best_evaluation_and_the_earlier_of_ties():
    records = [dict(step=500, losses=[1.0]), dict(step=1000, dev_chrf=20.0, dev_bleu=3.0, dev_loss=4.5),
               dict(step=1500, dev_chrf=22.0, dev_bleu=3.0, dev_loss=4.4), dict(step=2000, dev_chrf=22.0, dev_bleu=2.0,
                                                                               dev_loss=4.6)]
    assert mt.best_step(records) == 1500  # chrF 22.0 at 1,500 and 2,000: the earlier
    assert mt.best_step(records, "dev_bleu") == 1000 and mt.best_step(records, "dev_loss") == 1500
    with pytest.raises(ValueError, match="metric must be"):
        mt.best_step(records, "dev_wer")
    with pytest.raises(ValueError, match="no record holds dev_chrf"):
        mt.best_step(records[:1])


def test_the_commands_train_ship_and_score(straight, tmp_path, capsys):
    from utils.tasks.translation.__main__ import _main

    _main(["train", "--workdir", str(tmp_path / "run"), "--steps", "1", "--dev-size", "2"])
    _, records = mt.read_log(tmp_path / "run" / "log.jsonl")
    assert [r["step"] for r in records] == [1] and "dev_bleu" in records[0]
    _main(["ship", "--workdir", str(straight), "--keep-last", "2", "--out", str(tmp_path / "avg.pt")])
    _main(["score", "--path", str(tmp_path / "avg.pt"), "--sentences", "3"])
    out = capsys.readouterr().out
    assert "wrote" in out and "test split (3 German sentences), average of steps [2, 4], beam: BLEU" in out
    assert SIGNATURE.search(out.split("BLEU signature: ")[1]) and "chrF signature: nrefs:" in out
    for cmd in (["ship", "--workdir", str(straight)], ["decode"]):  # nothing shipped is overwritten by default
        with pytest.raises(SystemExit):
            _main(cmd)
        assert "the following arguments are required: --out" in capsys.readouterr().err
    best = mt.best_step(mt.read_log(straight / "log.jsonl")[1])  # --end best: early stopping by dev chrF
    _main(["ship", "--workdir", str(straight), "--keep-last", "1", "--end", "best", "--out", str(tmp_path / "best.pt")])
    assert mt.load_shipped(tmp_path / "best.pt")[1] == [best]
    with pytest.raises(SystemExit):
        _main(["ship", "--workdir", str(straight), "--end", "last", "--out", str(tmp_path / "x.pt")])
    assert "--end: expected a step or 'best', got 'last'" in capsys.readouterr().err


# ---------------------------------------------------------------- sizes, FLOPs, shipped files


def test_sizes_change_only_d_model_and_d_ff_and_are_part_of_the_config():
    _, base = mt._config(None, 1, False, {}, "base")
    assert base["model"] == mt.MT_MODEL  # the shipped run's config is unchanged by the option
    for size, changes in mt.MT_SIZES.items():
        _, cfg = mt._config(None, 1, False, {}, size)
        assert cfg["model"] == {**mt.MT_MODEL, **changes} and set(changes) <= {"d_model", "d_ff"}
    with pytest.raises(ValueError, match=r"size must be one of \['base', 'large', 'small'\], got 'huge'"):
        mt.train_translation(progress=False, size="huge")


def test_training_flops_count_the_batches_the_run_draws():
    """The replayed order gives, step by step, the padded batches ``train_translation`` trains on:
    the FLOPs of each step are the formula's on that batch (the formula itself is checked
    against FlopCounterMode in tests/test_recurrent.py)."""
    from utils.experiments.flops import transformer_step_flops
    from utils.training import loop

    header = dict(model=mt.MT_MODEL, recipe=dict(mt.MT_TRAIN, phrases=False), split="twins")  # a new run's config
    cumulative = translation_training_flops(header, 70)  # past the first epoch's 63 batches
    pairs, _, batches = mt.training_data(mt.MT_TRAIN["max_tokens"], False)
    source = loop.EpochBatches(batches, lambda idx: collate([pairs[i] for i in idx]), mt.MT_TRAIN["seed"])
    expected, total = [], 0
    for _ in range(70):
        src, tgt = next(source)
        total += transformer_step_flops(src.size(0), src.size(1), tgt.size(1), tr.VOCAB_SIZE, **mt.MT_MODEL)
        expected.append(total)
    assert cumulative == expected
    with pytest.raises(ValueError, match="steps must be an int >= 1"):
        translation_training_flops(header, 0)
    with pytest.raises(ValueError, match="config must be a log header's 'start'"):
        translation_training_flops({"model": mt.MT_MODEL}, 3)


def _shipped_log():
    return mt.read_log(mt.LOG_FILE)


def test_the_shipped_files_are_small_and_come_from_the_shipped_run():
    total = 0
    for which in ("avg", "last"):
        path = mt.shipped_path(which)
        total += path.stat().st_size
        assert path.stat().st_size <= mt.MAX_SHIPPED_BYTES
    header, records = _shipped_log()
    assert header["start"]["model"] == mt.MT_MODEL and "split" not in header["start"]  # made before twins were grouped
    assert header["start"]["recipe"] == dict({k: v for k, v in mt.MT_TRAIN.items() if k != "steps"}, phrases=False)
    saved = [r["step"] for r in records]
    assert saved[-1] == mt.MT_TRAIN["steps"] and "dev_bleu" in records[-1]  # the command's default trains the shipped run
    assert mt.load_shipped(mt.AVG_FILE)[1] == saved[-mt.MT_TRAIN["keep_last"]:]
    assert mt.load_shipped(mt.LAST_FILE)[1] == saved[-1:]
    with pytest.raises(ValueError, match="which must be 'avg'"):
        mt.shipped_path("best")


def test_the_measurement_logs_are_the_runs_the_chapter_names():
    expected = {"small": ("small", False), "large": ("large", False), "phrases": ("base", True)}
    for name, (size, phrases) in expected.items():
        header, records = mt.read_log(mt.MEASURE_DIR / f"{name}.jsonl")
        _, cfg = mt._config(None, 1, phrases, {}, size, "buckets")  # runs made before twins were grouped
        assert header["start"] == cfg, name
        assert any("dev_bleu" in r for r in records), name


#: Every shipped measurement run of chapter 16: name -> (its fields, the step it trained until).
MEASURED = {**{n: (f, mt.ABLATION_STEPS) for n, (_, f) in mt.MT_ABLATIONS.items()},
            **{n: (f, steps) for n, (_, f, steps) in mt.MT_MORE_RUNS.items()}}


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_each_recipe_ablation_is_its_config_scores_as_logged_and_replays_within_the_tolerance(name, tmp_path):
    """An ablation (or a run of ``MT_MORE_RUNS``) changes the paper's recipe as its fields say, on
    the twin-aware split, and trains to its step; its shipped dev translations score what its log
    recorded at its last step; its first 10 steps rerun within the measured replay tolerance (the
    log was made on another machine, so not to the bit)."""
    fields, steps = MEASURED[name]
    assert not set(mt.MT_ABLATIONS) & set(mt.MT_MORE_RUNS)
    header, records = mt.read_log(mt.MEASURE_DIR / f"{name}.jsonl")
    _, cfg = mt._config(None, 1, False, fields, "base")
    assert header["start"] == cfg and header["start"]["split"] == "twins"
    assert [r["step"] for r in records if "dev_bleu" in r] == list(range(500, steps + 1, 500))
    dev = mt.load_dev_outputs(mt.MEASURE_DIR / f"{name}.dev.json")
    sources, streams = tr.reference_streams(tr.cached_pairs(tr.data_path())["dev"])
    assert dev["sources"] == sources and dev["step"] == records[-1]["step"]
    assert dev["train_flops"] == translation_training_flops(header["start"], dev["step"])[-1]
    scores = mt.bleu_chrf(dev["hyps"], streams)
    assert (scores["bleu"], scores["chrf"]) == (records[-1]["dev_bleu"], records[-1]["dev_chrf"])
    assert_replays(tmp_path, records, name, threads=header["versions"]["threads"], **fields)


def test_the_recurrent_model_gets_the_transformers_tries_of_the_same_names():
    """Equal effort (issue 34): each try of the recurrent model is a run of ``MT_ABLATIONS`` of the same
    name, with the same recipe change; only the dropout try also names the recurrent model's own
    dropout sites, at the same rate. Each is a valid recurrent config."""
    assert set(mt.MT_RECURRENT_TRIES) <= set(mt.MT_ABLATIONS) and len(mt.MT_RECURRENT_TRIES) >= 4
    for name, fields in mt.MT_RECURRENT_TRIES.items():
        transformer = mt.MT_ABLATIONS[name][1]
        assert {k: v for k, v in fields.items() if k not in mt.RECURRENT_SITES} == transformer, name
        assert {fields[k] for k in mt.RECURRENT_SITES if k in fields} <= {transformer.get("p_drop")}, name
        _, cfg = mt._config(None, 1, False, fields, "base", arch="recurrent")
        assert cfg["arch"] == "recurrent", name


RECURRENT_SHIPPED = sorted(p.name[len(mt.RECURRENT_PREFIX):-len(".jsonl")]
                           for p in mt.MEASURE_DIR.glob(f"{mt.RECURRENT_PREFIX}*.jsonl"))


def test_every_shipped_recurrent_translation_run_is_one_of_its_tries():
    """A shipped ``rnn-NAME`` is a try of ``MT_RECURRENT_TRIES`` with its dev outputs beside it
    (the tries still training are not shipped yet; each shipped one is replayed below)."""
    assert set(RECURRENT_SHIPPED) <= set(mt.MT_RECURRENT_TRIES), RECURRENT_SHIPPED
    for name in RECURRENT_SHIPPED:
        assert (mt.MEASURE_DIR / f"{mt.RECURRENT_PREFIX}{name}.dev.json").is_file(), name


@pytest.mark.parametrize("name", RECURRENT_SHIPPED)
def test_each_recurrent_try_is_its_config_scores_as_logged_and_replays_within_the_tolerance(name, tmp_path):
    """Issue 34: a try of the recurrent model is ``--arch recurrent`` with its fields of
    ``MT_RECURRENT_TRIES``, on the twin-aware split, trained ``ABLATION_STEPS`` steps like the
    Transformer's try of the same name; its shipped dev translations score what its log recorded
    at its last step; its first 10 steps rerun within the measured replay tolerance."""
    fields, shipped = mt.MT_RECURRENT_TRIES[name], mt.RECURRENT_PREFIX + name
    header, records = mt.read_log(mt.MEASURE_DIR / f"{shipped}.jsonl")
    _, cfg = mt._config(None, 1, False, fields, "base", arch="recurrent")
    assert header["start"] == cfg and header["start"]["split"] == "twins" and cfg["arch"] == "recurrent"
    assert [r["step"] for r in records if "dev_bleu" in r] == list(range(500, mt.ABLATION_STEPS + 1, 500))
    dev = mt.load_dev_outputs(mt.MEASURE_DIR / f"{shipped}.dev.json")
    sources, streams = tr.reference_streams(tr.cached_pairs(tr.data_path())["dev"])
    assert dev["sources"] == sources and dev["step"] == records[-1]["step"] == mt.ABLATION_STEPS
    assert dev["train_flops"] == translation_training_flops(header["start"], dev["step"])[-1]
    scores = mt.bleu_chrf(dev["hyps"], streams)
    assert (scores["bleu"], scores["chrf"]) == (records[-1]["dev_bleu"], records[-1]["dev_chrf"])
    assert_replays(tmp_path, records, shipped, threads=header["versions"]["threads"], arch="recurrent", **fields)


@pytest.mark.parametrize("name", mt.MT_LONG_RUNS)
def test_each_long_run_is_its_ablation_trained_on_and_scores_as_logged(name):
    """A run at the second budget is the same run as its ablation, resumed: the ablation's shipped
    log is, line for line, the start of the long one (so the resumed steps replayed the same
    batches and weights on the machine that trained them); its dev translations score what its
    log recorded at ``LONG_STEPS``."""
    short = (mt.MEASURE_DIR / f"{name}.jsonl").read_text()
    long = (mt.MEASURE_DIR / f"{mt.long_name(name)}.jsonl").read_text()
    assert long.startswith(short) and len(long) > len(short)
    header, records = mt.read_log(mt.MEASURE_DIR / f"{mt.long_name(name)}.jsonl")
    assert [r["step"] for r in records if "dev_bleu" in r] == list(range(500, mt.LONG_STEPS + 1, 500))
    dev = mt.load_dev_outputs(mt.MEASURE_DIR / f"{mt.long_name(name)}.dev.json")
    sources, streams = tr.reference_streams(tr.cached_pairs(tr.data_path())["dev"])
    assert dev["sources"] == sources and dev["step"] == mt.LONG_STEPS
    assert dev["train_flops"] == translation_training_flops(header["start"], dev["step"])[-1]
    scores = mt.bleu_chrf(dev["hyps"], streams)
    assert (scores["bleu"], scores["chrf"]) == (records[-1]["dev_bleu"], records[-1]["dev_chrf"])


def test_ship_measurement_refuses_a_step_the_log_did_not_evaluate(tmp_path):
    (tmp_path / "log.jsonl").write_text((mt.MEASURE_DIR / "paper.jsonl").read_text())
    with pytest.raises(ValueError, match="step must be a step whose dev evaluation the log holds, one of"):
        xt.ship_measurement(tmp_path, "x", out_dir=tmp_path / "out", step=1234)
    assert not (tmp_path / "out").exists()


def test_the_shipped_run_flops_are_the_runs_batches_counted_again():
    """The FLOPs that chapter 16 reads for the size-and-phrases runs are what
    ``translation_training_flops`` counts from their logs now."""
    assert mt.load_run_flops() == xt.run_flops()
    assert set(mt.load_run_flops()) == set(mt.SIZE_RUNS)


def test_load_run_flops_names_a_bad_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="measure-flops"):
        mt.load_run_flops(tmp_path / "none.json")
    (tmp_path / "x.json").write_text('{"kind": "translation dev outputs"}')
    with pytest.raises(ValueError, match="not a file of translation run flops"):
        mt.load_run_flops(tmp_path / "x.json")


def test_the_measure_folder_holds_only_what_the_chapter_reads():
    expected = {f"{n}.jsonl" for n in mt.SIZE_RUNS} | {mt.RUN_FLOPS_FILE.name}
    expected |= {f"{n}{ext}" for n in MEASURED for ext in (".jsonl", ".dev.json")}
    expected |= {f"{mt.long_name(n)}{ext}" for n in mt.MT_LONG_RUNS for ext in (".jsonl", ".dev.json")}
    expected |= {mt.run_vocab_file(f["vocab_size"]).name for _, f in mt.MT_ABLATIONS.values() if "vocab_size" in f}
    expected |= {f"{mt.RECURRENT_PREFIX}{n}{ext}" for n in RECURRENT_SHIPPED for ext in (".jsonl", ".dev.json")}
    assert {p.name for p in mt.MEASURE_DIR.iterdir()} == expected


def test_a_vocabulary_ablation_trains_its_own_vocabulary_and_names_it_in_the_config(tmp_path):
    """``vocab_size`` other than the shipped 4,000 is a vocabulary ``data.train_vocab`` makes from
    the same train sentences (the shipped file of an ablation is those bytes); the run's config
    names its file, and its model's embedding has that many rows."""
    assert mt.run_vocab_file() == tr.VOCAB_FILE and mt.run_vocab() is tr.shipped_vocab()
    assert mt.run_vocab_file(1000) == mt.MEASURE_DIR / "de_en_bpe1000.model"
    for _, fields in mt.MT_ABLATIONS.values():
        if "vocab_size" in fields:
            made = tr.train_vocab(tmp_path / "v.model", fields["vocab_size"])
            assert made.read_bytes() == mt.run_vocab_file(fields["vocab_size"]).read_bytes()
    _, cfg = mt._config(None, 1, False, dict(vocab_size=1000), "base")
    assert cfg["vocab"] == "de_en_bpe1000.model" and cfg["recipe"]["vocab_size"] == 1000
    assert mt._config(None, 1, False, dict(vocab_size=tr.VOCAB_SIZE), "base")[1] == mt._config(None, 1, False, {}, "base")[1]
    model = mt.config_model(cfg)
    assert model.embed.lut.weight.shape[0] == 1000 and mt.config_vocab(cfg).get_piece_size() == 1000
    for bad in (50, 2.5, "1000", True):
        with pytest.raises(ValueError, match=r"vocab_size must be an int >= 100"):
            mt._config(None, 1, False, dict(vocab_size=bad), "base")


def test_per_word_turns_a_loss_per_piece_into_nats_per_english_word():
    pairs = [("Ich bin müde.", "I am tired."), ("Ja.", "Yes.")]
    pieces = sum(len(tr.encode(en)) + 1 for _, en in pairs)  # each with its </s>
    assert mt.per_word(2.0, pairs) == pytest.approx(2.0 * pieces / (4 + 2))  # 3 + 1 words, then 1 + 1
    small = mt.run_vocab(1000)
    assert mt.per_word(2.0, pairs, small) == pytest.approx(2.0 * sum(len(tr.encode(en, small)) + 1 for _, en in pairs) / 6)
    with pytest.raises(ValueError, match="at least one"):
        mt.per_word(2.0, [])


def test_shipped_test_outputs_are_what_the_shipped_models_translate():
    """Chapter 16 scores the shipped translations of the whole test split; translating a
    sample again (every 60th source, all four combinations) gives the same sentences.
    Decoded tokens are exact results: they must not depend on the CPU."""
    outputs = mt.load_test_outputs()
    sources = outputs["sources"]
    sample = sources[::60]
    for which, decode in mt.OUTPUT_KINDS:
        model, steps = mt.load_shipped(mt.shipped_path(which))
        assert steps == outputs["steps"][which]
        again = mt.translate(model, sample, decode=decode)
        stored = outputs[which, decode][::60]
        differ = [s for s, a, b in zip(sample, again, stored) if a != b]
        assert not differ, f"{which} {decode}: {len(differ)} of {len(sample)} sentences translate otherwise: {differ[:3]}"


def test_load_test_outputs_names_a_bad_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m utils.tasks.translation decode"):
        mt.load_test_outputs(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ValueError, match="not readable JSON"):
        mt.load_test_outputs(bad)
    bad.write_text('{"kind": "G2P test outputs"}')
    with pytest.raises(ValueError, match="not a file of translation test outputs"):
        mt.load_test_outputs(bad)
    bad.write_text('{"kind": "translation test outputs", "sources": [], "outputs": {}}')
    with pytest.raises(ValueError, match="'outputs' must map each of"):
        mt.load_test_outputs(bad)
    kinds = {f"{w} {d}": ["x"] for w, d in mt.OUTPUT_KINDS}
    bad.write_text(json.dumps({"kind": "translation test outputs", "sources": ["Hallo."], "outputs": kinds}))
    with pytest.raises(ValueError, match="its sources are not the test split"):
        mt.load_test_outputs(bad)


def test_measure_vocab_measures_a_held_out_split():
    sp = tr.load_vocab()
    pairs = tr.load_pairs()
    dev, test = tr.measure_vocab(sp, pairs), tr.measure_vocab(sp, pairs, split="test")
    assert dev != test and dev["vocab_size"] == tr.VOCAB_SIZE
    with pytest.raises(ValueError, match="split must be 'dev' or 'test'"):
        tr.measure_vocab(sp, pairs, split="train")


def test_a_model_field_of_the_recipe_goes_into_the_run_config(tmp_path):
    """``--set p_drop=0.3`` (chapter 16's recipe ablations) changes the model the run builds and logs."""
    model = mt.train_translation(tmp_path, steps=1, dev_eval=False, p_drop=0.3, d_ff=64, **TINY)
    header, _ = mt.read_log(tmp_path / "log.jsonl")
    assert header["start"]["model"] == {**mt.MT_MODEL, "p_drop": 0.3, "d_ff": 64}
    assert "p_drop" not in header["start"]["recipe"]
    assert model.encoder_layers[0].ffn.w_1.out_features == 64
    with pytest.raises(ValueError, match="another configuration"):  # the folder is this recipe's only
        mt.train_translation(tmp_path, steps=2, dev_eval=False, **TINY)


def test_the_recurrent_model_trains_resumes_ships_and_counts_its_flops(tmp_path):
    """``arch="recurrent"`` (chapter 17 on this task): a run of chapter 17's model, sized like the
    Transformer, that names its arch and model in its config, resumes to the bit, ships, loads and
    translates, and whose FLOPs are the recurrent formula's on the batches it drew."""
    from utils.core.masks import PAD_ID
    from utils.experiments.flops import recurrent_step_flops
    from utils.model.recurrent import RecurrentSeq2Seq

    counts = {arch: sum(p.numel() for p in mt.new_model(model).parameters())
              for arch, model in (("transformer", mt.MT_MODEL), ("recurrent", mt.MT_RECURRENT))}
    assert counts == {"transformer": 1_900_544, "recurrent": 1_891_644}  # the numbers MT_RECURRENT's comment quotes
    straight, halves = tmp_path / "straight", tmp_path / "halves"
    mt.train_translation(straight, steps=4, dev_size=2, arch="recurrent", p_state=0.1, **TINY)
    mt.train_translation(halves, steps=2, dev_size=2, arch="recurrent", p_state=0.1, **TINY)
    mt.train_translation(halves, steps=4, dev_size=2, arch="recurrent", p_state=0.1, **TINY)
    header, records = mt.read_log(straight / "log.jsonl")
    assert header["start"]["arch"] == "recurrent" and header["start"]["model"] == {**mt.MT_RECURRENT, "p_state": 0.1}
    assert [r["losses"] for r in mt.read_log(halves / "log.jsonl")[1]] == [r["losses"] for r in records]
    assert all("dev_chrf" in r for r in records)
    with pytest.raises(ValueError, match="another configuration"):  # a Transformer run is another run
        mt.train_translation(straight, steps=6, dev_eval=False, **TINY)
    model, steps = mt.load_shipped(mt.ship(straight, tmp_path / "avg.pt", keep_last=2))
    assert isinstance(model, RecurrentSeq2Seq) and steps == [2, 4]
    assert [type(t) for t in mt.translate(model, ["Ich habe keine Ahnung."], decode="beam")] == [str]
    cumulative = translation_training_flops(header["start"], 2)
    source = mt.run_batches(header["start"]["recipe"], "twins", lambda ex, idx: collate([ex[i] for i in idx]))[1]
    vocab = mt.config_vocab(header["start"]).get_piece_size()
    expected = []
    for _ in range(2):
        src, tgt = next(source)
        expected.append(recurrent_step_flops((src != PAD_ID).sum(1).tolist(), tgt.size(1), vocab, **mt.MT_RECURRENT))
    assert cumulative == [expected[0], expected[0] + expected[1]]


@pytest.mark.parametrize("text, expected", [("p_drop=0.3", ("p_drop", 0.3)), ("max_tokens=1500", ("max_tokens", 1500))])
def test_set_reads_a_field_and_a_number(text, expected):
    from utils.tasks.translation.__main__ import _field_value

    assert _field_value(text) == expected


@pytest.mark.parametrize("text, match", [("p_drop", "expected FIELD=VALUE"), ("p_drop=high", "p_drop: expected a number")])
def test_set_refuses_what_is_not_field_equals_number(text, match):
    import argparse

    from utils.tasks.translation.__main__ import _field_value

    with pytest.raises(argparse.ArgumentTypeError, match=match):
        _field_value(text)


def test_extra_recipe_fields_are_in_the_config_only_when_they_change_the_paper_recipe(tmp_path):
    """``MT_EXTRA`` at its defaults is the paper's recipe: the config (and so every shipped
    log's header) does not name it; a changed value is named, and the folder refuses the other."""
    _, plain = mt._config(None, 1, False, dict(lr_factor=1.0, p_word_src=0.0), "base")
    assert plain == mt._config(None, 1, False, {}, "base")[1]
    mt.train_translation(tmp_path, steps=2, dev_eval=False, lr_factor=2.0, p_word_src=0.1, **TINY)
    header, records = mt.read_log(tmp_path / "log.jsonl")
    assert header["start"]["recipe"]["lr_factor"] == 2.0 and header["start"]["recipe"]["p_word_src"] == 0.1
    assert "p_word_tgt" not in header["start"]["recipe"]
    d, w = mt.MT_MODEL["d_model"], mt.MT_TRAIN["warmup"]
    assert records[-1]["lr"] == pytest.approx(2.0 * d ** -0.5 * 2 * w ** -1.5)  # twice equation 3 at step 2
    with pytest.raises(ValueError, match="another configuration"):
        mt.train_translation(tmp_path, steps=4, dev_eval=False, **TINY)


def test_mixed_batches_add_entry_batches_in_turns_and_resume_mid_epoch():
    """Each epoch holds every sentence batch once and ``round(ratio * n)`` entry batches; the
    entry batches come in a fixed turn, so all of them are seen before any is seen twice;
    the state (epoch, position) gives back the same order; bad arguments are refused."""
    sentences = [[i] for i in range(10)]
    extra = [[10 + j] for j in range(7)]
    source = mt.MixedBatches(sentences, extra, 0.3, lambda idx: idx[0], seed=3)
    assert source.per_epoch == 3
    epochs = [[next(source) for _ in range(13)] for _ in range(3)]
    for drawn in epochs:
        assert sorted(b for b in drawn if b < 10) == list(range(10)) and sum(b >= 10 for b in drawn) == 3
    entries = [{b for b in drawn if b >= 10} for drawn in epochs]
    assert len(entries[0] | entries[1]) == 6 and entries[0] | entries[1] | entries[2] == set(range(10, 17))
    assert epochs[0] != epochs[1]  # a new order each epoch
    resumed = mt.MixedBatches(sentences, extra, 0.3, lambda idx: idx[0], seed=3)
    source = mt.MixedBatches(sentences, extra, 0.3, lambda idx: idx[0], seed=3)
    for _ in range(18):
        next(source)
    resumed.load_state_dict(source.state_dict())
    assert [next(resumed) for _ in range(20)] == [next(source) for _ in range(20)]
    with pytest.raises(ValueError, match="ratio must be a finite number > 0"):
        mt.MixedBatches(sentences, extra, 0, lambda idx: idx)
    with pytest.raises(ValueError, match="extra must hold at least one batch"):
        mt.MixedBatches(sentences, [], 0.5, lambda idx: idx)


def test_curriculum_batches_give_entry_epochs_first_then_sentence_epochs_and_resume():
    """The first ``entry_epochs`` epochs are every entry batch once each, alone; later epochs are
    every sentence batch once each, alone; a new order each epoch; the state (epoch, position)
    gives back the same order; bad arguments are refused."""
    sentences = [[i] for i in range(5)]
    extra = [[5 + j] for j in range(7)]
    source = mt.CurriculumBatches(sentences, extra, 2, lambda idx: idx[0], seed=3)
    first, second = [next(source) for _ in range(7)], [next(source) for _ in range(7)]
    assert sorted(first) == sorted(second) == list(range(5, 12)) and first != second
    later = [[next(source) for _ in range(5)] for _ in range(2)]
    assert sorted(later[0]) == sorted(later[1]) == list(range(5)) and later[0] != later[1]
    resumed = mt.CurriculumBatches(sentences, extra, 2, lambda idx: idx[0], seed=3)
    source = mt.CurriculumBatches(sentences, extra, 2, lambda idx: idx[0], seed=3)
    for _ in range(9):  # into the second entry epoch
        next(source)
    resumed.load_state_dict(source.state_dict())
    assert [next(resumed) for _ in range(12)] == [next(source) for _ in range(12)]
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="entry_epochs must be an int >= 1"):
            mt.CurriculumBatches(sentences, extra, bad, lambda idx: idx)
    with pytest.raises(ValueError, match="extra must hold at least one batch"):
        mt.CurriculumBatches(sentences, [], 1, lambda idx: idx)


def test_a_curriculum_run_trains_on_entries_first_and_names_them_in_its_header(tmp_path):
    """``entry_epochs`` is in the config; the header counts the entries and their batches; the
    first epoch is every entry batch once, the next every sentence batch once (``run_batches``,
    the source the FLOP count replays too: the shipped run's FLOPs are checked with its log)."""
    recipe = dict(max_tokens=3000, seed=0, phrases=False, entry_epochs=1)
    examples, source = mt.run_batches(recipe, "twins", lambda ex, idx: tuple(idx))
    pairs, _, batches = mt.training_data(3000, False)
    entries, entry_batches = mt.entry_data(3000)
    assert examples == pairs + entries and isinstance(source, mt.CurriculumBatches)
    first = [next(source) for _ in range(len(entry_batches))]  # the entry epoch: every entry batch once
    assert sorted(first) == sorted(tuple(len(pairs) + i for i in b) for b in entry_batches)
    then = [next(source) for _ in range(len(batches))]  # then the sentences: every sentence batch once
    assert sorted(then) == sorted(tuple(b) for b in batches)
    mt.train_translation(tmp_path, steps=2, dev_eval=False, entry_epochs=1, **TINY)
    log_header, _ = mt.read_log(tmp_path / "log.jsonl")
    assert log_header["start"]["recipe"]["entry_epochs"] == 1
    assert log_header["entry_pairs"] == len(entries)
    assert log_header["entry_batches"] == len(mt.entry_data(TINY["max_tokens"])[1])


def test_a_run_with_entries_mixed_in_draws_them_and_counts_their_flops(tmp_path):
    """``entry_ratio`` is in the config and the header; the run's batches and the FLOP count's
    replay come from the same source (``run_batches``)."""
    from utils.experiments.flops import transformer_step_flops

    recipe = dict(max_tokens=3000, seed=0, phrases=False, entry_ratio=0.25)
    examples, source = mt.run_batches(recipe, "twins", lambda ex, idx: collate([ex[i] for i in idx]))
    pairs, _, batches = mt.training_data(3000, False)
    assert source.per_epoch == round(0.25 * len(batches)) and len(examples) > len(pairs)
    header = dict(model=mt.MT_MODEL, recipe=recipe, split="twins")
    expected, total = [], 0
    for _ in range(len(batches) + source.per_epoch + 2):  # into the second epoch
        src, tgt = next(source)
        total += transformer_step_flops(src.size(0), src.size(1), tgt.size(1), tr.VOCAB_SIZE, **mt.MT_MODEL)
        expected.append(total)
    assert translation_training_flops(header, len(expected)) == expected
    mt.train_translation(tmp_path, steps=2, dev_eval=False, entry_ratio=0.25, **TINY)
    log_header, _ = mt.read_log(tmp_path / "log.jsonl")
    assert log_header["start"]["recipe"]["entry_ratio"] == 0.25
    assert log_header["entry_pairs"] == len(examples) - len(pairs)


def test_token_dropout_holes_only_real_pieces_in_training_mode():
    model = mt.new_model()
    seen = []
    model.register_forward_pre_hook(mt.token_dropout(0.5, 0.0))
    model.register_forward_pre_hook(lambda module, args: seen.append(args))  # runs after token_dropout
    src = torch.tensor([[tr.BOS_ID, 10, 11, 12, 13, 14, 15, 16, tr.EOS_ID, tr.PAD_ID]] * 20)
    tgt_in = torch.tensor([[tr.BOS_ID, 20, 21, 22, 23]] * 20)
    torch.manual_seed(0)
    model.train()
    model(src, tgt_in, None, None)
    got_src, got_tgt = seen[-1][:2]
    holes = got_src != src
    assert torch.equal(got_tgt, tgt_in), "p_tgt = 0 leaves the decoder's input alone"
    assert (got_src[holes] == tr.UNK_ID).all() and not holes[:, [0, 8, 9]].any(), "only real pieces become <unk>"
    assert 0.3 < holes[:, 1:8].float().mean().item() < 0.7, "about half of them at p = 0.5"
    model.eval()
    model(src, tgt_in, None, None)
    assert torch.equal(seen[-1][0], src), "no holes in eval mode"
    with pytest.raises(ValueError, match=r"p_tgt must be a number in \[0, 1\), got 1"):
        mt.token_dropout(0.1, 1)


def test_the_split_rule_is_in_the_config_and_refused_when_unknown(tmp_path):
    """Runs name the course's split ("twins"); the runs made before it name none and replay
    with ``split_rule="buckets"``, which trains on the 11,881 pairs of that split."""
    assert mt._config(None, 1, False, {})[1]["split"] == "twins"
    assert "split" not in mt._config(None, 1, False, {}, "base", "buckets")[1]
    mt.train_translation(tmp_path, steps=1, dev_eval=False, split_rule="buckets", **TINY)
    header, _ = mt.read_log(tmp_path / "log.jsonl")
    assert header["train_pairs"] == 11_881 and "split" not in header["start"]
    with pytest.raises(ValueError, match="split_rule must be one of"):
        mt.train_translation(tmp_path / "x", steps=1, split_rule="random", **TINY)


def test_ship_final_averages_up_to_the_best_dev_chrf_and_translates_the_test_split(straight, tmp_path):
    """A seed of the final recipe: early stopping by dev chrF, the checkpoints up to it averaged,
    the test sources translated with beam search and their unseen words looked up."""
    out = xt.ship_final(straight, tmp_path / "seed0", keep_last=1, sentences=3)
    record = json.loads(out.read_text())
    _, records = mt.read_log(straight / "log.jsonl")
    best = mt.best_step(records)
    assert record["kind"] == xt.FINAL_KIND and record["best_step"] == best and record["steps"] == [best]
    assert record["best_dev"] == next(r["dev_chrf"] for r in records if r["step"] == best)
    assert record["train_flops"] == translation_training_flops(mt.read_log(straight / "log.jsonl")[0]["start"], best)[-1]
    model, _ = mt.load_shipped(tmp_path / "seed0" / "avg.pt")
    sources = tr.reference_streams(tr.load_pairs()["test"])[0][:3]
    assert record["sources"] == sources and record["beam"] == mt.translate(model, sources, decode="beam")
    assert len(record["replaced"]) == 3 and isinstance(record["n_replaced"], int)
    with pytest.raises(ValueError, match="its sources are not the test split of its run"):
        xt.load_final(tmp_path / "seed0")
    with pytest.raises(FileNotFoundError, match="python -m utils.experiments.translation final"):
        xt.load_final(tmp_path / "missing")
    with pytest.raises(ValueError, match="sentences must be an int >= 1, got 0"):
        xt.ship_final(straight, tmp_path / "x", sentences=0)


def test_ship_final_ships_a_recurrent_run_without_the_lookup(tmp_path):
    """Issue 34: the recurrent model's seeds ship by the same rule (best dev chrF, averaged, beam 4);
    the lookup reads a Transformer's cross-attention, so the recurrent record has none."""
    mt.train_translation(tmp_path / "run", steps=2, dev_size=4, arch="recurrent", d_embed=8, d_hidden=8, d_attn=8,
                         max_tokens=200, eval_every=2, save_every=1, progress=False)
    out = xt.ship_final(tmp_path / "run", tmp_path / "seed0", keep_last=2, sentences=2)
    record = json.loads(out.read_text())
    model, steps = mt.load_shipped(tmp_path / "seed0" / "avg.pt")
    assert type(model).__name__ == "RecurrentSeq2Seq" and steps == record["steps"] == [1, 2]
    assert record["replaced"] is None and record["n_replaced"] is None
    assert record["beam"] == mt.translate(model, record["sources"], decode="beam")


#: The final recipe of chapter 16: the paper's recipe with half the rate, every checkpoint kept.
FINAL_FIELDS = dict(lr_factor=0.5, keep_last=19)


@pytest.mark.parametrize("seed", [0, 1])
def test_each_shipped_final_seed_is_its_run_stopped_at_its_best_dev_chrf_and_translates_as_shipped(seed, tmp_path):
    """A shipped seed of the final recipe: its log is the final recipe's config, evaluated every
    500 steps to 9,500; its average is of the checkpoints up to its best dev chrF; a sample of its
    test translations (every 60th source) is what the shipped weights give again with beam search
    and with the lookup (decoded tokens are exact results); its first 10 steps rerun within the
    replay tolerance (the log was made on another machine, so not to the bit)."""
    from utils.tasks.translation.baselines import single_word_entries
    from utils.tasks.translation.replace import replace_unseen

    folder = xt.FINAL_DIR / f"seed{seed}"
    record = xt.load_final(folder)
    header, records = mt.read_log(folder / mt.LOG_FILE.name)
    _, cfg = mt._config(None, 1, False, dict(FINAL_FIELDS, seed=seed), "base")
    assert header["start"] == cfg and record["seed"] == seed and record["metric"] == "dev_chrf"
    evaluated = [r["step"] for r in records if "dev_chrf" in r]
    assert evaluated == list(range(500, mt.MT_TRAIN["steps"] + 1, 500))
    best = mt.best_step(records)
    assert record["best_step"] == best and record["best_dev"] == max(r["dev_chrf"] for r in records if "dev_chrf" in r)
    assert record["steps"] == [s for s in evaluated if s <= best][-mt.MT_TRAIN["keep_last"]:]
    assert record["train_flops"] == translation_training_flops(header["start"], best)[-1]
    avg = folder / "avg.pt"
    assert avg.stat().st_size <= mt.MAX_SHIPPED_BYTES
    model, steps = mt.load_shipped(avg)
    assert steps == record["steps"]
    sample = record["sources"][::60]
    again = mt.translate(model, sample, decode="beam")
    assert again == record["beam"][::60]
    looked_up, _ = replace_unseen(model, sample, again, single_word_entries(), tr.cached_pairs(tr.data_path())["train"])
    assert looked_up == record["replaced"][::60]
    assert_replays(tmp_path, records, f"seed {seed}", threads=1, **FINAL_FIELDS, seed=seed)


def test_the_final_recipe_seed_0_reruns_the_half_rate_ablation():
    """Seed 0 of the final recipe differs from the ablation ``lr0.5`` only in the checkpoints it
    keeps, so its log repeats the ablation's, loss for loss and score for score, up to the
    ablation's last step (both runs trained on one machine, one thread)."""
    _, final = mt.read_log(xt.FINAL_DIR / "seed0" / mt.LOG_FILE.name)
    _, ablation = mt.read_log(mt.MEASURE_DIR / "lr0.5.jsonl")
    same = ("step", "losses", "src_tokens", "tgt_tokens", "dev_loss", "dev_bleu", "dev_chrf")
    assert [{k: r.get(k) for k in same} for r in final[:len(ablation)]] == [{k: r.get(k) for k in same} for r in ablation]


def test_ship_measurement_writes_the_log_and_dev_translations_that_score_as_logged(straight, tmp_path):
    log_out, dev_out = xt.ship_measurement(straight, "tiny", tmp_path)
    assert log_out.read_text() == (straight / "log.jsonl").read_text()
    record = mt.load_dev_outputs(dev_out)
    _, records = mt.read_log(straight / "log.jsonl")
    assert record["step"] == records[-1]["step"] == 4 and len(record["hyps"]) == len(record["sources"]) == 4
    header, _ = mt.read_log(straight / "log.jsonl")
    assert record["train_flops"] == translation_training_flops(header["start"], 4)[-1]
    model = mt.new_model(header["start"]["model"])
    model.load_state_dict(torch.load(straight / "step4.pt", weights_only=True))
    assert record["dev_cross_entropy"] == mt.dev_cross_entropy(model, tr.cached_pairs(tr.data_path())["dev"][:4])
    assert record["dev_cross_entropy"] < records[-1]["dev_loss"]  # smoothing adds to the loss
    _, streams = tr.reference_streams(tr.cached_pairs(tr.data_path())["dev"][:4])
    assert mt.bleu_chrf(record["hyps"], streams)["chrf"] == records[-1]["dev_chrf"]
    forged = tmp_path / "forged"
    forged.mkdir()
    for f in straight.iterdir():
        (forged / f.name).write_bytes(f.read_bytes())
    lines = (forged / "log.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    last["dev_chrf"] += 1.0
    (forged / "log.jsonl").write_text("\n".join(lines[:-1] + [json.dumps(last)]) + "\n")
    with pytest.raises(ValueError, match="the log says"):
        xt.ship_measurement(forged, "forged", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="plain file name"):
        xt.ship_measurement(straight, "../x", tmp_path)
    with pytest.raises(FileNotFoundError, match="measure-run"):
        mt.load_dev_outputs(tmp_path / "none.dev.json")


def test_load_judged_reads_the_verdicts_and_names_a_bad_file(tmp_path):
    judged = mt.load_judged()
    assert set(judged) == {"Transformer (paper's recipe)", "Transformer (final recipe)", "IBM Model 1 + dictionary"}
    assert all(isinstance(ok, bool) for v in judged.values() for _, ok in v.values())
    with pytest.raises(FileNotFoundError, match="restore it with git"):
        mt.load_judged(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "translation test outputs"}')
    with pytest.raises(ValueError, match="not a file of translation verdicts"):
        mt.load_judged(bad)
    bad.write_text('{"kind": "translation verdicts", "judged": {"x": {"Hallo.": ["Hello.", "yes"]}}}')
    with pytest.raises(ValueError, match="must hold judged"):
        mt.load_judged(bad)


def test_replaced_test_outputs_are_what_the_rule_gives_again():
    """The shipped test translations with unseen words looked up (chapter 16) are what
    ``replace_unseen`` gives again on a sample, from the shipped average's beam outputs; the
    sentences it changed differ only where a guess was replaced."""
    from utils.tasks.translation import baselines as bl
    from utils.tasks.translation import replace as rp

    record = mt.load_replaced_outputs()
    outputs = mt.load_test_outputs()
    assert record["sources"] == outputs["sources"] and record["rare"] == rp.RARE
    changed = [i for i, (a, b) in enumerate(zip(outputs["avg", "beam"], record["hyps"])) if a != b]
    assert 0 < len(changed) <= record["replaced"]
    sample = sorted(set(changed[::10]) | set(range(0, len(record["sources"]), 97)))
    model, _ = mt.load_shipped(mt.AVG_FILE)
    again, _ = rp.replace_unseen(model, [record["sources"][i] for i in sample], [outputs["avg", "beam"][i] for i in sample],
                                 bl.single_word_entries(), tr.cached_pairs(tr.data_path())["train"])
    assert again == [record["hyps"][i] for i in sample]


def test_replace_unseen_changes_only_rare_guesses_aligned_to_unseen_words():
    """A hand-made case on the shipped model: a German word unseen in train with an entry, and
    an English output that spells a guess for it; the guess goes, the rest stays as it was."""
    from utils.tasks.translation import replace as rp

    model, _ = mt.load_shipped(mt.AVG_FILE)
    train = [("Der Hund schläft.", "The dog sleeps.")]
    german, hyp = "Der Blaubeerkuchen schläft.", "The blubberkook sleeps."
    words, en, a = rp.word_attention(model, german, hyp)
    assert words == ["Der", "Blaubeerkuchen", "schläft", "."] and en == ["The", "blubberkook", "sleeps", "."]
    assert a.shape == (4, 4) and torch.allclose(a.sum(1)[:3], a.sum(1)[:3].clamp(max=1.0 + 1e-9))
    lexicon = {"blaubeerkuchen": "blueberry pie"}
    out, n = rp.replace_unseen(model, [german], [hyp], lexicon, train, rare=0)
    if int(a[1].argmax()) == 1:  # the guess attends most to the unseen word: replaced
        assert (out, n) == (["The blueberry pie sleeps."], 1)
    else:
        assert (out, n) == ([hyp], 0)
    assert rp.replace_unseen(model, [german], [hyp], {}, train) == ([hyp], 0), "no entry, no change"
    assert rp.replace_unseen(model, [german], [hyp], lexicon, [(german, hyp)]) == ([hyp], 0), "seen in train"
    with pytest.raises(ValueError, match="sources and hyps must be paired"):
        rp.replace_unseen(model, [german], [], lexicon, train)
    with pytest.raises(ValueError, match="rare must be an int >= 0"):
        rp.replace_unseen(model, [german], [hyp], lexicon, train, rare=-1)


def test_paired_bootstrap_is_corpus_scores_of_each_resample():
    """Each draw scored by sacrebleu's own corpus BLEU and chrF on the drawn sentences gives the
    same differences as ``paired_bootstrap``'s sums of sentence statistics; on the whole set
    its scores are ``bleu_chrf``'s to the bit."""
    import numpy as np
    from sacrebleu.metrics import BLEU, CHRF

    dev = tr.cached_pairs(tr.data_path())["dev"][:40]
    sources, streams = tr.reference_streams(dev)
    hyps_a = [en for _, en in dev[: len(sources)]]  # a system right on some sentences
    paper = mt.load_dev_outputs(mt.MEASURE_DIR / "paper.dev.json")
    hyps_b = [paper["hyps"][paper["sources"].index(s)] for s in sources]
    got = mt.paired_bootstrap(hyps_a, hyps_b, streams, resamples=25, seed=3)
    for name in ("bleu", "chrf"):
        assert got[name]["a"] == mt.bleu_chrf(hyps_a, streams)[name] and got[name]["b"] == mt.bleu_chrf(hyps_b, streams)[name]
    draws = np.random.default_rng(3).integers(0, len(sources), size=(25, len(sources)))
    for name, metric in (("bleu", BLEU()), ("chrf", CHRF())):
        diffs = [metric.corpus_score([hyps_a[i] for i in d], [[s[i] for i in d] for s in streams]).score
                 - metric.corpus_score([hyps_b[i] for i in d], [[s[i] for i in d] for s in streams]).score for d in draws]
        assert got[name]["low"] == pytest.approx(np.percentile(diffs, 2.5), abs=1e-9)
        assert got[name]["high"] == pytest.approx(np.percentile(diffs, 97.5), abs=1e-9)
        assert got[name]["p_a_better"] == np.mean(np.array(diffs) > 0)
    assert got == mt.paired_bootstrap(hyps_a, hyps_b, streams, resamples=25, seed=3)
    with pytest.raises(ValueError, match="reference streams of 3 entries"):
        mt.paired_bootstrap(hyps_a[:3], hyps_b[:3], streams)
    with pytest.raises(ValueError, match="resamples must be an int >= 1"):
        mt.paired_bootstrap(hyps_a, hyps_b, streams, resamples=0)


def test_train_subset_takes_nested_shares_of_the_train_pairs_and_is_in_the_config(tmp_path):
    pairs = tr.cached_pairs(tr.data_path())["train"]
    half, quarter = mt.train_subset(pairs, 0.5), mt.train_subset(pairs, 0.25)
    assert len(half) == round(len(pairs) / 2) and len(quarter) == round(len(pairs) / 4)
    assert set(quarter) <= set(half) <= set(pairs)  # a smaller share is part of a larger one
    assert half == [p for p in pairs if p in set(half)]  # in the split's order
    assert mt.train_subset(pairs, 1.0) == pairs and mt.train_subset(pairs, 0.5) == half
    for bad in (0, 1.5, "0.5", True):
        with pytest.raises(ValueError, match=r"train_share must be a number in \(0, 1\]"):
            mt.train_subset(pairs, bad)
    with pytest.raises(ValueError, match="keeps no pair"):
        mt.train_subset(pairs[:3], 0.1)
    mt.train_translation(tmp_path, steps=1, dev_eval=False, train_share=0.25, **TINY)
    header, _ = mt.read_log(tmp_path / "log.jsonl")
    assert header["start"]["recipe"]["train_share"] == 0.25 and header["train_pairs"] == len(quarter)
    with pytest.raises(ValueError, match=r"train_share must be a number in \(0, 1\]"):
        mt._config(None, 1, False, dict(train_share=0), "base")


def test_steps_at_flops_is_the_first_step_that_reaches_the_flops():
    """Issue 34 trains the recurrent model to the Transformer's final FLOPs: the step count is the
    first whose cumulative FLOPs reach them, by the same count."""
    _, cfg = mt._config(None, 1, False, {}, "base", arch="recurrent")
    cumulative = translation_training_flops(cfg, 250)
    assert xt.steps_at_flops(cfg, cumulative[-1]) == 250
    assert xt.steps_at_flops(cfg, cumulative[-1] + 1) == 251
    assert xt.steps_at_flops(cfg, cumulative[149] - 1) == 150
    with pytest.raises(ValueError, match="flops must be a positive int"):
        xt.steps_at_flops(cfg, 0)
    header, records = mt.read_log(xt.FINAL_DIR / "seed0" / mt.LOG_FILE.name)
    assert xt.transformer_final_flops(0) == translation_training_flops(header["start"], 9_500)[-1]


def test_a_final_curve_is_its_log_evaluations_at_their_training_flops(tmp_path):
    """Chapter 17 reads the final translation runs' budget curves from ``final_curve``: one entry per
    dev evaluation of the log, at the FLOPs of ``translation_training_flops`` up to its step, and the
    whole run's FLOPs, which are the budget of ``transformer_final_flops``."""
    header, records = mt.read_log(xt.FINAL_DIR / "seed0" / mt.LOG_FILE.name)
    curve, total = xt.final_curve(xt.FINAL_DIR / "seed0")
    evals = [r for r in records if "dev_chrf" in r]
    assert [(e["step"], e["dev_loss"], e["dev_chrf"], e["dev_bleu"]) for e in curve] == [
        (r["step"], r["dev_loss"], r["dev_chrf"], r["dev_bleu"]) for r in evals]
    cumulative = translation_training_flops(header["start"], records[-1]["step"])
    assert [e["flops"] for e in curve] == [cumulative[r["step"] - 1] for r in evals]
    assert total == cumulative[-1] == xt.transformer_final_flops(0)
    lines = (xt.FINAL_DIR / "seed0" / mt.LOG_FILE.name).read_text().splitlines()
    (tmp_path / mt.LOG_FILE.name).write_text("\n".join(
        [lines[0]] + [x for x in lines[1:] if "dev_chrf" not in x][:3]) + "\n")
    with pytest.raises(ValueError, match="has no development evaluation"):
        xt.final_curve(tmp_path)


def _fake_tries(folder, chrf):
    """Logs of the recurrent tries in ``folder``, copied from the shipped ``rnn-paper`` with the last
    dev chrF set to ``chrf[name]`` (the choice reads only that)."""
    text = (mt.MEASURE_DIR / f"{mt.RECURRENT_PREFIX}paper.jsonl").read_text().splitlines()
    last = json.loads(text[-1])
    for name, value in chrf.items():
        (folder / f"{mt.RECURRENT_PREFIX}{name}.jsonl").write_text(
            "\n".join(text[:-1] + [json.dumps(dict(last, dev_chrf=value))]) + "\n")


def test_the_recurrent_choice_is_the_best_dev_chrf_of_its_tries_and_waits_for_all(tmp_path):
    """``recurrent_choice`` reads the last dev chrF of each try, the first listed on a tie, and
    refuses to choose while a try is missing; ``recurrent_final_plan`` gives that try's fields with
    the seed and the checkpoints kept, and the steps that reach the Transformer's final FLOPs."""
    names = list(mt.MT_RECURRENT_TRIES)
    _fake_tries(tmp_path, dict.fromkeys(names[:-1], 20.0))
    with pytest.raises(FileNotFoundError, match=f"{names[-1]!r} is not shipped yet"):
        xt.recurrent_choice(tmp_path)
    _fake_tries(tmp_path, {n: 20.0 + (n == names[2]) for n in names})
    assert xt.recurrent_choice(tmp_path) == names[2]
    _fake_tries(tmp_path, dict.fromkeys(names, 20.0))
    assert xt.recurrent_choice(tmp_path) == names[0]
    fields, steps = xt.recurrent_final_plan(1, tmp_path)
    assert fields == dict(mt.MT_RECURRENT_TRIES[names[0]], keep_last=xt.RNN_FINAL_KEEP, seed=1)
    cfg = mt.run_config(fields, arch="recurrent")
    assert cfg == mt._config(None, 1, False, fields, "base", arch="recurrent")[1]
    cumulative = translation_training_flops(cfg, steps)
    assert cumulative[-2] < xt.transformer_final_flops(1) <= cumulative[-1]
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        xt.recurrent_final_plan(-1, tmp_path)


RNN_FINALS = sorted(int(p.name[len("seed"):]) for p in xt.RNN_FINAL_DIR.glob("seed*"))


@pytest.mark.parametrize("seed", RNN_FINALS)
def test_each_shipped_recurrent_final_is_its_plan_stopped_at_its_best_dev_chrf_and_replays(seed, tmp_path):
    """Issue 34: a shipped recurrent seed is ``recurrent_final_plan``'s run (the chosen try's
    fields, the steps that reach the Transformer final's FLOPs), evaluated every 500 steps; its
    average is of the checkpoints up to its best dev chrF; a sample of its test translations is
    what the shipped weights give again (beam 4, no lookup); its first 10 steps rerun within the
    replay tolerance."""
    folder = xt.RNN_FINAL_DIR / f"seed{seed}"
    record = xt.load_final(folder)
    header, records = mt.read_log(folder / mt.LOG_FILE.name)
    fields, steps = xt.recurrent_final_plan(seed)
    cfg = mt.run_config(fields, arch="recurrent")
    assert header["start"] == cfg and record["seed"] == seed and records[-1]["step"] == steps
    evaluated = [r["step"] for r in records if "dev_chrf" in r]
    assert evaluated[:-1] == list(range(500, steps, 500)) and evaluated[-1] == steps
    best = mt.best_step(records)
    assert record["best_step"] == best and record["replaced"] is None and record["n_replaced"] is None
    assert record["steps"] == [s for s in evaluated if s <= best][-mt.MT_TRAIN["keep_last"]:]
    assert record["train_flops"] == translation_training_flops(header["start"], best)[-1]
    avg = folder / "avg.pt"
    assert avg.stat().st_size <= mt.MAX_SHIPPED_BYTES
    model, shipped_steps = mt.load_shipped(avg)
    assert shipped_steps == record["steps"] and type(model).__name__ == "RecurrentSeq2Seq"
    assert mt.translate(model, record["sources"][::60], decode="beam") == record["beam"][::60]
    assert_replays(tmp_path, records, f"recurrent seed {seed}", threads=header["versions"]["threads"],
                   arch="recurrent", **fields)
