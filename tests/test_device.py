"""``--device``: every training and decoding command runs on the CPU (the default, the shipped runs'
device) or on a CUDA GPU when asked and there is one.

These tests run on the CPU. They check the option and its errors, that the device never enters a
run's config or log, and that the model and its batches land on the named device: a device other
than the CPU is stood in for by PyTorch's ``meta`` device (tensors with shapes and no values), given
to the code in place of ``resolve_device``'s answer, with the training step or the decoder replaced
by a spy that records where its inputs lie.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from utils.core import env
from utils.core.env import add_device_option, resolve_device
from utils.core.masks import target_mask
from utils.experiments import baseline, variations
from utils.experiments import translation as mt_experiments
from utils.model.decoding import Hypothesis
from utils.tasks import g2p
from utils.tasks.reversal import __main__ as reversal_main
from utils.tasks.translation import __main__ as mt_main
from utils.tasks.translation import data as tr
from utils.tasks.translation import train as mt
from utils.training import loop
from utils.training.recipe import dev_loss

META = torch.device("meta")


class Stop(Exception):
    """Raised by a spy once it has seen what it was looking for."""


# ---------------------------------------------------------------- resolve_device and the option


def test_cpu_is_the_default_and_stays_the_cpu():
    assert resolve_device() == torch.device("cpu")
    assert resolve_device("cpu") == resolve_device(torch.device("cpu")) == torch.device("cpu")


@pytest.mark.parametrize("bad", ["gpu", "tpu", "mps", "cuda:x", ""])
def test_other_devices_are_refused_with_what_is_accepted(bad):
    with pytest.raises(ValueError, match=r"'cpu' or 'cuda'.*got"):
        resolve_device(bad)


def test_a_device_that_is_not_a_name_is_refused():
    with pytest.raises(TypeError, match="str such as 'cpu'"):
        resolve_device(0)


def test_cuda_without_a_gpu_says_so_and_what_to_do(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match=r"asks for a CUDA GPU, but .*use device 'cpu'"):
        resolve_device("cuda")


def test_cuda_with_a_gpu_is_accepted_and_made_deterministic(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    assert resolve_device("cuda") == torch.device("cuda")
    assert resolve_device("cuda:0") == torch.device("cuda:0")
    assert env.os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    with pytest.raises(RuntimeError, match="names GPU 1, but PyTorch sees 1"):
        resolve_device("cuda:1")


def test_the_option_defaults_to_cpu_and_stops_at_a_missing_gpu(monkeypatch, capsys):
    import argparse

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    parser = argparse.ArgumentParser(prog="cmd")
    add_device_option(parser)
    assert parser.parse_args([]).device == "cpu"
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["--device", "cuda"])
    assert stop.value.code == 2 and "argument --device: device 'cuda' asks for a CUDA GPU" in capsys.readouterr().err


#: Every training and decoding command: (its main function, the arguments before --device).
COMMANDS = {
    "reversal": (reversal_main._cli, []),
    "g2p train": (g2p._main, ["train"]),
    "g2p decode": (g2p._main, ["decode"]),
    "g2p score": (g2p._main, ["score"]),
    "translation train": (mt_main._main, ["train"]),
    "translation decode": (mt_main._main, ["decode", "--out", "x.json"]),
    "translation replace": (mt_main._main, ["replace", "--out", "x.json"]),
    "translation score": (mt_main._main, ["score"]),
    "variations run": (variations._main, ["run"]),
    "baseline evaluate": (baseline._main, ["evaluate", "--arch", "transformer", "--seed", "0"]),
    "baseline timing": (baseline._main, ["timing"]),
    "translation measure-run": (mt_experiments._main, ["measure-run", "--workdir", "w", "--name", "n"]),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_training_and_decoding_command_takes_device(command, capsys, monkeypatch):
    main, args = COMMANDS[command]
    with pytest.raises(SystemExit) as stop:
        main([*args[:1], "--help"])
    assert stop.value.code == 0 and "--device DEVICE" in capsys.readouterr().out, f"{command} has no --device"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as stop:  # the parser refuses before any work starts
        main([*args, "--device", "cuda"])
    assert stop.value.code == 2 and "asks for a CUDA GPU" in capsys.readouterr().err


# ---------------------------------------------------------------- the model and the batches land on the device


def spy_step(seen):
    def step(model, src, tgt, criterion, optimizer, scheduler):
        seen.update(model=next(model.parameters()).device, src=src.device, tgt=tgt.device)
        raise Stop

    return step


def on_meta(monkeypatch, *modules):
    """Make ``resolve_device`` answer the meta device wherever ``modules`` call it."""
    for module in modules:
        monkeypatch.setattr(module, "resolve_device", lambda device="cpu": META)


def test_g2p_training_puts_the_model_and_its_batches_on_the_device(tmp_path, monkeypatch):
    on_meta(monkeypatch, g2p)
    seen = {}
    monkeypatch.setattr(loop, "train_step", spy_step(seen))
    with pytest.raises(Stop):
        g2p.train_g2p(tmp_path / "run", steps=2, progress=False, dev_eval=False, device="cuda")
    assert seen == dict(model=META, src=META, tgt=META)
    header = (tmp_path / "run" / "log.jsonl").read_text()
    assert "device" not in header and "meta" not in header, "the device entered the run's log"


def test_the_recurrent_baseline_refuses_a_gpu_clearly(monkeypatch):
    from utils.model.recurrent import new_recurrent_model

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(ValueError, match="recurrent baseline .* runs on the CPU only"):
        g2p.on_device(new_recurrent_model(), "cuda")
    assert next(g2p.on_device(new_recurrent_model(), "cpu").parameters()).device.type == "cpu"


@pytest.mark.skipif(not tr.DATA.is_file(), reason=f"{tr.DATA} is missing: `{tr.INSTALL}`")
def test_translation_training_puts_the_model_and_its_batches_on_the_device(tmp_path, monkeypatch):
    on_meta(monkeypatch, mt)
    seen = {}
    monkeypatch.setattr(loop, "train_step", spy_step(seen))
    with pytest.raises(Stop):
        mt.train_translation(tmp_path / "run", steps=2, progress=False, dev_eval=False, device="cuda", size="small")
    assert seen == dict(model=META, src=META, tgt=META)
    header = (tmp_path / "run" / "log.jsonl").read_text()
    assert "device" not in header and "meta" not in header, "the device entered the run's log"


def test_a_table_3_run_puts_the_model_and_its_batches_on_the_device(monkeypatch):
    on_meta(monkeypatch, variations)
    seen = {}
    monkeypatch.setattr(loop, "train_step", spy_step(seen))
    with pytest.raises(Stop):
        variations.run_row("base", 0, steps=1, device="cuda")
    assert seen == dict(model=META, src=META, tgt=META)


def test_the_sweep_sends_the_device_to_its_workers_by_name_and_never_records_it():
    job = ("base", 0, dict(variations.TASK, steps=2), "cpu")
    record = variations._work(job)
    assert "device" not in record and record["steps"] == 2
    assert "device" not in variations.header()


def test_the_reference_run_puts_the_model_and_its_batches_on_the_device(monkeypatch):
    on_meta(monkeypatch, reversal_main)
    seen = {}
    monkeypatch.setattr(loop, "train_step", spy_step(seen))
    with pytest.raises(Stop):
        reversal_main._main("cuda")
    assert seen == dict(model=META, src=META, tgt=META)


# ---------------------------------------------------------------- decoding and evaluation on the model's device


class OnDevice(nn.Module):
    """A stand-in model whose one parameter lies on ``device``; decoding is replaced by spies."""

    def __init__(self, device):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(1, device=device))


def test_g2p_decoding_sends_the_words_to_the_model_s_device(monkeypatch):
    from utils.model import decoding

    seen = []

    def greedy(model, src, max_len=None, cache=None):
        seen.append(src.device)
        return torch.full((src.size(0), 1), 2)  # </s>: no phones (on the CPU: a meta tensor holds no ids)

    def beam(model, src, *args, cache=None):
        seen.append(src.device)
        return [[Hypothesis((2,), 0.0, 0.0, True)] for _ in range(src.size(0))]

    monkeypatch.setattr(decoding, "greedy_decode", greedy)
    monkeypatch.setattr(g2p, "beam_search_batch", beam)
    vocab = g2p.G2PVocab()
    assert g2p.greedy_phones(OnDevice(META), ["cat", "dog"], vocab) == [[], []]
    assert g2p.beam_phones(OnDevice(META), ["cat"], vocab) == [[]]
    assert seen == [META, META]


def test_translation_decoding_sends_the_sentences_to_the_model_s_device(monkeypatch):
    seen = []

    def greedy(model, src, max_len=None, cache=None):
        seen.append(src.device)
        return torch.full((src.size(0), 1), 2)  # on the CPU: a meta tensor holds no ids

    monkeypatch.setattr(mt, "greedy_decode", greedy)
    monkeypatch.setattr(tr, "encode", lambda sentence, sp: [5] * len(sentence))  # no sentencepiece needed
    monkeypatch.setattr(tr, "decode", lambda ids, sp: "")
    assert mt.translate(OnDevice(META), ["Guten Morgen!"], sp=object()) == [""]
    assert seen == [META]


def test_dev_loss_sends_each_batch_to_the_model_s_device():
    seen = []

    class Spy(OnDevice):
        def forward(self, src, tgt_in):
            seen.append((src.device, tgt_in.device))
            return torch.zeros((), device=META)

    def criterion(logits, tgt):
        seen.append(tgt.device)
        return torch.tensor(1.5)  # a number (a meta tensor holds none)

    assert dev_loss(Spy(META), [([3, 4], [5, 2]), ([6], [7, 2])], criterion) == 1.5
    assert seen and all(d == META or d == (META, META) for d in seen)


def test_masks_are_built_on_the_ids_device():
    ids = torch.ones(2, 3, dtype=torch.long, device=META)
    assert target_mask(ids).device == META and target_mask(ids).shape == (2, 1, 3, 3)
