"""Every loader of a file the course writes names the file when it cannot use it.

A truncated or empty ``.pt``, a text or JSON file renamed ``.pt``, a pickle of something
other than tensors, a JSON file that is not the expected one: each gives a ValueError (or
FileNotFoundError) whose message names the path and what was expected there. PyTorch's
own message, which advises ``weights_only=False`` (never do that with an unknown file), must
not reach the reader, neither in the message nor in the chained traceback.

A folder of checkpoints may hold other files named like one (``tiny_stepX.pt``,
``tiny_step5_backup.pt``, a folder ``tiny_step7.pt``): they are passed over.
"""

import argparse
import json
import traceback

import pytest
import torch

from utils import TINY, Transformer
from utils.experiments import variations as V
from utils.tasks import g2p
from utils.tasks.reversal import reference_run
from utils.tasks.reversal.task import load_checkpoint, save_checkpoints


@pytest.fixture(scope="module")
def tiny_state():
    torch.manual_seed(0)
    return Transformer(**TINY).state_dict()


def _pt_bytes(obj, tmp_path):
    path = tmp_path / "scratch.pt"
    torch.save(obj, path)
    data = path.read_bytes()
    path.unlink()
    return data


def _bad_pt_files(tmp_path):
    """{kind: bytes} of files that are not what a .pt loader expects."""
    good = _pt_bytes({"w": torch.arange(1000.0)}, tmp_path)
    return {
        "truncated": good[: len(good) // 2],
        "empty": b"",
        "text": b"these are notes, not weights\n",
        "json": b'{"kind": "course reference run of chapter 10"}\n',
        "pickled-object": _pt_bytes(argparse.Namespace(step=3), tmp_path),  # torch.load says: weights_only=False
    }


PT_KINDS = ["truncated", "empty", "text", "json", "pickled-object"]


def _assert_names_the_file(err, path, expected):
    message = str(err.value)
    assert str(path) in message, f"the message does not name {path}: {message}"
    assert expected in message, f"the message does not say what was expected ({expected!r}): {message}"
    shown = "".join(traceback.format_exception(err.value))
    assert "weights_only" not in shown, f"PyTorch's advice reaches the reader:\n{shown}"


# ---------------------------------------------------------------- chapter 10: the tiny model's checkpoints

@pytest.mark.parametrize("kind", PT_KINDS)
def test_load_checkpoint_names_a_bad_file(tmp_path, kind):
    path = tmp_path / "tiny_step5.pt"
    path.write_bytes(_bad_pt_files(tmp_path)[kind])
    with pytest.raises(ValueError) as err:
        load_checkpoint(5, tmp_path)
    _assert_names_the_file(err, path, "must be a checkpoint saved by save_checkpoints")


def test_the_pickled_object_really_makes_torch_advise_weights_only_false(tmp_path):
    """The case above is a real one: this is the message load_checkpoint keeps from the reader."""
    path = tmp_path / "x.pt"
    path.write_bytes(_bad_pt_files(tmp_path)["pickled-object"])
    with pytest.raises(Exception, match="weights_only"):
        torch.load(path, weights_only=True)


def test_checkpoint_listing_passes_over_files_that_are_not_checkpoints(tmp_path, tiny_state):
    save_checkpoints({2: tiny_state, 10: tiny_state}, tmp_path)
    for name in ("tiny_stepX.pt", "tiny_step_backup.pt", "tiny_step5_backup.pt", "tiny_step007.pt", "tiny_step.pt"):
        (tmp_path / name).write_text("not a checkpoint")
    (tmp_path / "tiny_step7.pt").mkdir()
    with pytest.raises(FileNotFoundError, match=r"no checkpoint for step 3 in .*; steps present: \[2, 10\]$"):
        load_checkpoint(3, tmp_path)
    with pytest.raises(FileNotFoundError, match=r"no checkpoint for step 7 .*steps present: \[2, 10\]"):
        load_checkpoint(7, tmp_path)  # a folder of that name is not a checkpoint
    assert not load_checkpoint(10, tmp_path).training
    with pytest.raises(FileNotFoundError, match=r"steps present: \[\]"):
        load_checkpoint(3, tmp_path / "nowhere")


# ---------------------------------------------------------------- chapter 15: G2P files

@pytest.mark.parametrize("kind", PT_KINDS)
def test_load_shipped_names_a_bad_file(tmp_path, kind):
    path = tmp_path / "g2p_avg.pt"
    path.write_bytes(_bad_pt_files(tmp_path)[kind])
    with pytest.raises(ValueError) as err:
        g2p.load_shipped("avg", tmp_path)
    _assert_names_the_file(err, path, "a shipped G2P model")


def test_load_shipped_names_a_file_whose_parts_are_not_weights(tmp_path):
    path = tmp_path / "g2p_last.pt"
    torch.save({"steps": [1], "state_dict": [1, 2]}, path)
    with pytest.raises(ValueError) as err:
        g2p.load_shipped("last", tmp_path)
    _assert_names_the_file(err, path, "'state_dict' must map names to tensors")


@pytest.mark.parametrize("kind", PT_KINDS + ["not-a-state"])
def test_resuming_from_a_bad_state_names_it_and_says_what_to_do(tmp_path, kind):
    path = tmp_path / "state.pt"
    if kind == "not-a-state":
        torch.save({"model": {}, "step": 3}, path)
    else:
        path.write_bytes(_bad_pt_files(tmp_path)[kind])
    with pytest.raises(ValueError) as err:
        g2p._load_state(path)
    _assert_names_the_file(err, path, "a training state saved by train_g2p")
    assert "delete it" in str(err.value)


def test_train_g2p_names_a_bad_state_before_it_trains(tmp_path):
    (tmp_path / "state.pt").write_bytes(b"")
    with pytest.raises(ValueError, match=r"state\.pt must be a training state saved by train_g2p, got an empty file"):
        g2p.train_g2p(tmp_path, steps=1, progress=False, dev_eval=False)


def test_ship_passes_over_other_files_and_names_a_bad_checkpoint(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for step in (1, 2, 3):
        torch.save({"w": torch.full((2,), float(step))}, work / f"step{step}.pt")
    (work / "log.jsonl").write_text('{"start": {}}\n')
    for name in ("stepX.pt", "step_backup.pt", "step3_backup.pt", "step04.pt", "state.pt"):
        (work / name).write_text("not a checkpoint")
    (work / "step9.pt").mkdir()
    out = g2p.ship(work, tmp_path / "out", keep_last=2)
    saved = torch.load(out, weights_only=True)
    assert saved["steps"] == [2, 3] and saved["state_dict"]["w"].tolist() == [2.5, 2.5]
    with pytest.raises(FileNotFoundError, match=r"need 4 checkpoints in .*, found steps \[1, 2, 3\]"):
        g2p.ship(work, tmp_path / "out", keep_last=4)
    for data in _bad_pt_files(tmp_path).values():
        (work / "step3.pt").write_bytes(data)
        with pytest.raises(ValueError) as err:
            g2p.ship(work, tmp_path / "out", keep_last=2)
        _assert_names_the_file(err, work / "step3.pt", "a checkpoint saved by train_g2p")
    torch.save([1, 2], work / "step3.pt")
    with pytest.raises(ValueError) as err:
        g2p.ship(work, tmp_path / "out", keep_last=2)
    _assert_names_the_file(err, work / "step3.pt", "a checkpoint saved by train_g2p (a state_dict")
    torch.save({"w": torch.ones(2)}, work / "step3.pt")
    (work / "log.jsonl").write_bytes(b"\x80 not a log")
    with pytest.raises(ValueError) as err:
        g2p.ship(work, tmp_path / "out", keep_last=2)
    _assert_names_the_file(err, work / "log.jsonl", "is not a G2P training log")


# ---------------------------------------------------------------- JSON files

def _bad_json_files(tmp_path):
    good = json.dumps(dict(kind="something", values=list(range(100))))
    return {
        "truncated": good[: len(good) // 2].encode(),
        "empty": b"",
        "binary": _pt_bytes({"w": torch.ones(3)}, tmp_path),
        "other-json": b'{"kind": "another file", "words": []}\n',
        "a-list": b"[1, 2, 3]\n",
    }


JSON_KINDS = ["truncated", "empty", "binary", "other-json", "a-list"]


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_reference_run_load_names_a_bad_file(tmp_path, kind):
    path = tmp_path / "tiny_run.json"
    path.write_bytes(_bad_json_files(tmp_path)[kind])
    with pytest.raises(ValueError) as err:
        reference_run.load(path)
    _assert_names_the_file(err, path, reference_run.KIND)


@pytest.mark.parametrize("change,expected", [
    (lambda r: r.pop("warmup"), "lacks the fields ['warmup']"),
    (lambda r: r.update(train_loss="1.0 2.0"), "train_loss must be a non-empty list of finite numbers"),
    (lambda r: r.update(warmup={"warmup 400": [1.0]}), "warmup must map each run's name to"),
], ids=["no-warmup", "loss-str", "warmup-list"])
def test_reference_run_load_names_a_log_with_wrong_fields(tmp_path, change, expected):
    record = json.loads(reference_run.LOG.read_text())
    change(record)
    path = tmp_path / "tiny_run.json"
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError) as err:
        reference_run.load(path)
    _assert_names_the_file(err, path, expected)


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_load_test_outputs_names_a_bad_file(tmp_path, kind):
    path = tmp_path / "test_outputs.json"
    path.write_bytes(_bad_json_files(tmp_path)[kind])
    with pytest.raises(ValueError) as err:
        g2p.load_test_outputs(path)
    _assert_names_the_file(err, path, "G2P test outputs")


def test_load_test_outputs_names_a_file_without_its_outputs(tmp_path):
    path = tmp_path / "test_outputs.json"
    path.write_text(json.dumps(dict(kind="G2P test outputs", words=["a"], outputs={"avg beam": "A"})))
    with pytest.raises(ValueError) as err:
        g2p.load_test_outputs(path)
    _assert_names_the_file(err, path, "'outputs' must map each of")


@pytest.mark.parametrize("kind", JSON_KINDS)
def test_read_log_names_a_bad_file(tmp_path, kind):
    path = tmp_path / "log.jsonl"
    path.write_bytes(_bad_json_files(tmp_path)[kind])
    with pytest.raises(ValueError) as err:
        g2p.read_log(path)
    _assert_names_the_file(err, path, "is not a G2P training log")


@pytest.mark.parametrize("kind", JSON_KINDS + ["records-without-seed"])
def test_read_results_names_a_bad_file(tmp_path, kind):
    path = tmp_path / "results.jsonl"
    if kind == "records-without-seed":
        path.write_text('{"header": {}}\n{"row": "base"}\n')
    else:
        path.write_bytes(_bad_json_files(tmp_path)[kind])
    with pytest.raises(ValueError) as err:
        V.read_results(path)
    _assert_names_the_file(err, path, "results file of utils.experiments.variations")


@pytest.mark.parametrize("load", [
    lambda p: reference_run.load(p / "tiny_run.json"),
    lambda p: g2p.load_test_outputs(p / "test_outputs.json"),
    lambda p: g2p.read_log(p / "log.jsonl"),
    lambda p: V.read_results(p / "results.jsonl"),
    lambda p: g2p.load_shipped("avg", p),
    lambda p: load_checkpoint(5, p),
], ids=["reference-run", "test-outputs", "g2p-log", "results", "shipped", "checkpoint"])
def test_a_missing_file_is_named(tmp_path, load):
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        load(tmp_path)
