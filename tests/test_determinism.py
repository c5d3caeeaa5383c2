"""The book on any machine (utils/core/numerics.py states the rule).

- Rounding-level figures are printed by ``within`` (bound asserted, noise sanitized).
- Cells whose output is not compared are few and listed, with the reason.
- Determinism is real on one machine: the same short run in two fresh processes gives
  identical bits, for every training command of the course.
- A replay of a shipped log (made on another machine) agrees within the measured
  replay tolerance, never asserted bit for bit.
"""

import json
import math
import os
import re
import subprocess
import sys

import pytest
import torch
import yaml
from notebooks import ROOT, all_ipynb, paired_markdown, read

from utils import TINY, Transformer, set_seed
from utils.core.numerics import MEASURED_REPLAY_GAP, REPLAY_TOLERANCE, ROUNDING_PATTERN, within
from utils.tasks.reversal import reference_run
from utils.tasks.reversal.task import train

# ---------------------------------------------------------------- within


def test_within_prints_the_figure_and_its_bound():
    assert within(1.79e-7, 1e-6) == "1.8e-07 < 1e-06"
    assert within(torch.tensor(0.0), 5e-6) == "0.0e+00 < 5e-06"
    assert within(3, 10) == "3.0e+00 < 1e+01"
    assert re.fullmatch(ROUNDING_PATTERN, within(2.5e-17, 1e-15))


@pytest.mark.parametrize("diff, bound, error, match", [
    (2e-6, 1e-6, AssertionError, "difference 2.00e-06 is not below its bound 1e-06"),
    (float("nan"), 1e-6, AssertionError, "NaN"),
    (-1e-7, 1e-6, AssertionError, "cannot be negative"),
    (1e-7, 1.5e-6, ValueError, "one significant digit"),
    (1e-7, 0.0, ValueError, "positive finite"),
    (1e-7, float("inf"), ValueError, "positive finite"),
    ("1e-7", 1e-6, TypeError, "diff must be a real number, got str"),
    (torch.zeros(2), 1e-6, TypeError, "diff must be a real number, got Tensor"),
    (True, 1e-6, TypeError, "got bool"),
])
def test_within_refuses_what_it_cannot_claim(diff, bound, error, match):
    with pytest.raises(error, match=re.escape(match) if error is not AssertionError else match):
        within(diff, bound)


def _stdout_lines(nb_path):
    nb = json.loads(nb_path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        for out in cell.get("outputs", []):
            text = out.get("text") or out.get("data", {}).get("text/plain", "")
            yield from ("".join(text) if isinstance(text, list) else text).splitlines()


DIFF_WORDS = re.compile(r"max\s*\||max abs diff|max diff|\|[^|]*-[^|]*\|\s*[:=]|difference", re.IGNORECASE)
SMALL_SCI = re.compile(r"\d\.\d+e-(?:0[5-9]|[1-9]\d)")


@pytest.mark.parametrize("nb", all_ipynb(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_printed_rounding_level_difference_goes_through_within(nb):
    """A line that reports a difference with a tiny number in scientific notation must be
    in within()'s form, so the tests compare its bound and not its noise."""
    bad = [line for line in _stdout_lines(nb)
           if DIFF_WORDS.search(line) and SMALL_SCI.search(re.sub(ROUNDING_PATTERN, "", line))]
    assert not bad, f"{nb.name}: print these with utils.core.numerics.within: {bad[:3]}"


# ---------------------------------------------------------------- cells not compared


def _tagged_cells():
    found = []
    for md in paired_markdown():
        for cell in read(md).cells:
            tags = cell.metadata.get("tags", [])
            if cell.cell_type == "code" and ({"nbval-ignore-output", "nbval-skip"} & set(tags)):
                first = next(line for line in cell.source.splitlines() if line.strip())
                found.append((str(md.relative_to(ROOT)), first.strip()))
    return found


def test_every_uncompared_cell_is_listed_with_its_reason():
    listed = yaml.safe_load((ROOT / "tests" / "uncompared_outputs.yml").read_text())
    assert all(set(e) == {"notebook", "starts", "why"} and len(e["why"]) > 20 for e in listed), listed
    entries = [(e["notebook"], e["starts"].strip()) for e in listed]
    tagged = _tagged_cells()
    assert sorted(tagged) == sorted(entries), (
        f"tagged but not listed: {sorted(set(tagged) - set(entries))}; "
        f"listed but not tagged: {sorted(set(entries) - set(tagged))}")


# ---------------------------------------------------------------- determinism on this machine

# One short run of each training command of the course: the tiny model (chapter 10's
# train), a Table 3 row (utils.experiments.variations) and G2P (two threads, as its shipped run).
RUNS = """
import json, pathlib, tempfile, torch
from utils import TINY, Transformer, set_seed
from utils.tasks import g2p
from utils.experiments import variations as V
from utils.tasks.reversal.task import train
set_seed(0)
out = {"tiny": train(Transformer(**TINY), 12, progress=False)["train_loss"].tolist()}
torch.set_num_threads(1)
out["variations"] = V.run_row("norm=pre", 1, steps=6)["losses"]
folder = tempfile.mkdtemp()
g2p.train_g2p(folder, steps=3, threads=2, progress=False, dev_eval=False)
out["g2p"] = g2p.read_log(pathlib.Path(folder) / "log.jsonl")[1][0]["losses"]
print(json.dumps({k: [x.hex() for x in v] for k, v in out.items()}))
"""


def _fresh_process():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", RUNS], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_same_runs_in_two_fresh_processes_give_identical_bits():
    """Seeds and a fixed thread count make every training command deterministic on its
    machine: two fresh processes agree in every bit of every loss (compared as hex)."""
    first, second = _fresh_process(), _fresh_process()
    assert set(first) == {"tiny", "variations", "g2p"}
    for name in first:
        assert first[name] == second[name], (
            f"{name}: the two runs differ at steps {[i for i, (a, b) in enumerate(zip(first[name], second[name])) if a != b]}")
        assert all(math.isfinite(float.fromhex(x)) for x in first[name])


# ---------------------------------------------------------------- replays of shipped logs


def test_the_replay_tolerance_is_the_measured_gap_with_a_margin():
    assert MEASURED_REPLAY_GAP is not None and 0 < MEASURED_REPLAY_GAP < REPLAY_TOLERANCE
    assert REPLAY_TOLERANCE <= 20 * MEASURED_REPLAY_GAP, "the margin should stay a margin, not hide drift"


def test_a_short_rerun_reproduces_the_reference_run_within_the_replay_tolerance():
    """Chapter 10's reference run (utils/checkpoints/tiny_run.json): the first 20 steps rerun here."""
    reference = reference_run.load()
    set_seed(0)
    model = Transformer(**TINY)
    losses = train(model, 20, progress=False)["train_loss"]
    gap = (losses - reference["train_loss"][:20]).abs().max().item()
    assert gap < REPLAY_TOLERANCE, f"rerun drifts {gap:.2e} from the reference run's log"


def test_the_reference_log_matches_the_shipped_checkpoints_and_the_chapter():
    reference = reference_run.load()
    assert len(reference["train_loss"]) == 3000 and reference["test_step"] == list(range(100, 3001, 100))
    assert set(reference["warmup"]) == {"warmup 400", "no warmup", "warmup 40"}
    assert torch.equal(reference["warmup"]["warmup 400"][1], reference["train_loss"][:200])
    assert reference["machine"]["threads"] == 1
    assert sorted(p.name for p in reference_run.LOG.parent.glob("tiny_step*.pt")) == [
        f"tiny_step{s}.pt" for s in range(2600, 3001, 100)]


def test_reference_run_load_names_a_bad_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m utils.tasks.reversal"):
        reference_run.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    with pytest.raises(ValueError, match="bad.json is not a readable JSON log"):
        reference_run.load(bad)
    bad.write_text(json.dumps({"kind": "other"}))
    with pytest.raises(ValueError, match="bad.json is not a log of the course reference run"):
        reference_run.load(bad)
