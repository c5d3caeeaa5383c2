"""One training loop for every task of the course (paper section 5).

Chapter 10 teaches the step, ``utils.training.recipe.train_step``: the decoder reads
the target shifted right, the masks are built once per batch, the label-smoothed
loss (section 5.4) is backpropagated and Adam takes one step at the rate of
equation 3 (section 5.3). ``Run`` repeats that step and does the bookkeeping
every task needs, the same way for each of them: chapter 10's reversal task
(``tasks.reversal.task.train``, ``tasks.reversal.task.short_run``), the Table 3 sweep
(``variations.run_row``), G2P (``g2p.train_g2p``) and translation (``translation.train.train_translation``).

A ``Run`` owns

- the optimizer and its schedule: Adam(0.9, 0.98, 1e-9) whose rate at update
  k + 1 is ``schedule(k)`` (``rate`` of equation 3 from ``d_model`` and
  ``warmup``, or any schedule given), for any model called as
  ``model(src, tgt_in, src_mask, tgt_mask) -> logits (batch, tgt_len, vocab)``;
- a batch source with a state that can be saved (``GeneratorBatches``: a fresh
  random batch each step; ``EpochBatches``: a fixed list of batches, shuffled
  each epoch), so that a resumed run draws the very batches it would have drawn;
- the per-step losses, the tokens trained on, the seconds spent training (apart
  from the seconds spent evaluating), a progress bar, a line printed every
  ``print_every`` steps;
- save points every ``save_every`` steps: a log record (the losses since the
  previous record, the rate, the seconds, the non-pad source and target tokens),
  an evaluation by a callback whose dict joins the record, and a checkpoint of the
  weights (the last ``keep_last`` are kept, for averaging as in section 6.1);
- either nothing on disk (the run lives in memory: ``state_dict`` and
  ``load_state_dict`` stop and resume it) or a work folder: ``state.pt`` (model,
  Adam, schedule, random state, batch position; written atomically at each save
  point), ``log.jsonl`` (a header line, then one JSON record per save point) and
  ``step{N}.pt`` (the weights). Built again on the same folder with the same
  ``config``, a ``Run`` continues from ``state.pt`` exactly as if it had never
  stopped: on one machine the losses and weights agree to the last bit.

Launched by ``torchrun`` with N > 1 processes (``distributed.World.from_env``), a ``Run`` trains
data-parallel (section 5.2): every process draws the same batch, keeps its share
(``distributed.shard``), and takes ``distributed.data_parallel_step`` through
``DistributedDataParallel``; each process has its own dropout stream; only process 0 shows
the progress bar, prints, evaluates and writes files. Its state holds every process's random
state, so it resumes with the same number of processes only.
"""

from __future__ import annotations

import copy
import json
import os
import pathlib
import time
from collections.abc import Callable, Mapping

import torch
from tqdm import tqdm

from ..core.checks import check_module, is_int
from ..core.masks import PAD_ID
from . import distributed
from .checkpoints import checkpoint_steps, torch_load
from .recipe import LabelSmoothingLoss, rate, train_step

#: The keys of a saved training state (``batches``, ``eval_seconds`` and ``cuda_rng`` may be absent:
#: states that ``g2p.train_g2p`` wrote before this loop kept ``epoch`` and ``position`` at the top).
STATE_KEYS = ("model", "optimizer", "scheduler", "rng", "step", "elapsed", "config")
#: Added to a state's seed of process r > 0 of a data-parallel run: its own dropout stream.
RANK_SEED_STRIDE = 1_000_003


def _check_optional_positive_int(**values):
    for name, value in values.items():
        if value is not None and (not is_int(value) or value < 1):
            raise ValueError(f"{name} must be None or a positive int (a number of steps), got {type(value).__name__} {value!r}")


def _check_seed(seed):
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {type(seed).__name__} {seed!r}")
    return int(seed)


class GeneratorBatches:
    """A fresh batch at every step: ``make_batch(generator)``, one ``torch.Generator`` seeded with ``seed``.

    Chapter 10's reversal task draws its batches so:
    ``GeneratorBatches(lambda g: reversal_batch(64, g), seed=0)``. The state is
    the generator's, so a resumed run draws the batches it would have drawn.

    ``make_batch`` returns (src (batch, S), tgt (batch, T)) long ids.

    Raises:
        TypeError: ``make_batch`` is not callable.
        ValueError: ``seed`` is not an int >= 0.
    """

    def __init__(self, make_batch: Callable, seed: int = 0):
        if not callable(make_batch):
            raise TypeError(f"make_batch must be a function of a torch.Generator, got {type(make_batch).__name__}")
        self.make_batch = make_batch
        self.generator = torch.Generator().manual_seed(_check_seed(seed))

    def __iter__(self):
        return self

    def __next__(self):
        return self.make_batch(self.generator)

    def state_dict(self) -> dict:
        return dict(generator=self.generator.get_state())

    def load_state_dict(self, state: Mapping) -> None:
        self.generator.set_state(state["generator"])


class EpochBatches:
    """A fixed list of batches (lists of example indices), in a new random order each epoch (section 5.1).

    Epoch e visits ``batches`` in the order of ``torch.randperm`` with a
    generator seeded with ``seed * 100003 + e``; a step makes its batch with
    ``make_batch(indices) -> (src (batch, S), tgt (batch, T))``. The state is the
    epoch and the position in its order, so a resumed run goes on mid-epoch.
    ``epoch`` (the epochs finished before the current one) goes in every log record.

    Raises:
        TypeError: ``make_batch`` is not callable.
        ValueError: ``batches`` is empty; ``seed`` is not an int >= 0.
    """

    def __init__(self, batches, make_batch: Callable, seed: int = 0):
        if not callable(make_batch):
            raise TypeError(f"make_batch must be a function of a list of example indices, got {type(make_batch).__name__}")
        if len(batches) == 0:
            raise ValueError("batches must hold at least one batch (a list of example indices), got none")
        self.batches, self.make_batch, self.seed = batches, make_batch, _check_seed(seed)
        self.epoch, self.position = 0, 0
        self._order = self._shuffle(0)

    def _shuffle(self, epoch):
        generator = torch.Generator().manual_seed(self.seed * 100003 + epoch)
        return torch.randperm(len(self.batches), generator=generator).tolist()

    def __iter__(self):
        return self

    def __next__(self):
        if self.position == len(self._order):
            self.epoch, self.position = self.epoch + 1, 0
            self._order = self._shuffle(self.epoch)
        batch = self.make_batch(self.batches[self._order[self.position]])
        self.position += 1
        return batch

    def state_dict(self) -> dict:
        return dict(epoch=self.epoch, position=self.position)

    def load_state_dict(self, state: Mapping) -> None:
        self.epoch, self.position = int(state["epoch"]), int(state["position"])
        self._order = self._shuffle(self.epoch)


def read_log(path, kind: str = "training log", owner: str = "loop.Run") -> tuple[dict, list[dict]]:
    """(header, records) of a log written by a ``Run`` with a work folder (one JSON object a line).

    ``kind`` and ``owner`` name the log and what writes it in the messages.

    Raises:
        FileNotFoundError: ``path`` is not a file.
        ValueError: the file is not text, a line is not a JSON object, or the first
            line is not a run's header (the message names the file).
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no training log at {path}: {owner} writes one ({path.name}) in its workdir")
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a {kind}: it is not text (a JSON line per save)") from None
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path} is not a {kind}: line {number} is not JSON ({err.msg})") from None
            if not isinstance(lines[-1], dict):
                raise ValueError(f"{path} is not a {kind}: line {number} is not a JSON object "
                                 f"({{...}}), got {type(lines[-1]).__name__}")
    if not lines or "start" not in lines[0]:
        raise ValueError(f"{path} is not a {kind} (its first line must hold the run's 'start' config)")
    return lines[0], lines[1:]


def read_state(path, owner: str = "loop.Run") -> dict:
    """The training state saved at ``path`` by a ``Run`` (``state.pt``), loaded with ``weights_only=True``.

    Raises:
        ValueError: the file cannot be read, or is not such a state (the message
            names it, the keys expected and says to delete it or use another folder).
    """
    path = pathlib.Path(path)
    remedy = f"delete it (or the whole folder {path.parent}) to train afresh, or pass another workdir"
    state = torch_load(path, f"a training state saved by {owner}", remedy)
    if not isinstance(state, dict) or not state.keys() >= set(STATE_KEYS):
        got = sorted(state) if isinstance(state, dict) else type(state).__name__
        raise ValueError(f"{path} must be a training state saved by {owner}, a dict with keys {sorted(STATE_KEYS)}, "
                         f"got {got}; {remedy}")
    return state


def _save_atomically(obj, path):
    """torch.save to a temporary file beside ``path``, then rename it: a crash never leaves half a file."""
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


class Run:
    """A training run of the paper's recipe (section 5) for any encoder-decoder; in memory or resumable.

    Args:
        model: an ``nn.Module`` called as ``model(src, tgt_in, src_mask, tgt_mask)``
            that returns logits (batch, tgt_len, vocab).
        batches: the batch source: ``next(batches)`` gives (src (batch, S), tgt
            (batch, T)) long ids, and ``state_dict()`` / ``load_state_dict(state)``
            save and restore its position (``GeneratorBatches``, ``EpochBatches``).
            An ``epoch`` attribute, if it has one, goes in every log record.
        d_model, warmup: the schedule of equation 3 (section 5.3), ``recipe.rate``.
        schedule: instead of d_model and warmup, any function step -> learning rate;
            update k + 1 uses ``schedule(k)`` (PyTorch's ``LambdaLR``).
        criterion: the loss of (logits, tgt); default ``LabelSmoothingLoss(0.1)`` (section 5.4).
        save_every: a save point every this many steps (None: none in memory; with
            a workdir, only at the end of each ``train`` call).
        keep_last: how many checkpoints of the save points to keep (None: all; 0: none).
        evaluate: ``evaluate(model, step) -> dict`` of numbers, called at the save points
            whose step is a multiple of ``eval_every`` (with a workdir also at the end of
            each ``train`` call), in eval mode and without gradients; the dict joins the
            log record, with ``eval_seconds``.
        eval_every: see ``evaluate`` (None: every save point).
        print_every: print a line (step, rate, mean training loss, the last evaluation)
            every this many steps.
        workdir: None (in memory) or a folder for ``state.pt``, ``log_name`` and
            ``step{N}.pt``; a folder that holds a state is resumed.
        config: a JSON-able dict that says what the run is; needed with a workdir,
            whose state must hold the same one.
        header: more fields for the log's first line, beside ``"start": config``.
        log_name: the log's file name in the workdir (default ``log.jsonl``).
        name: what the messages call the writer of the folder's files (``"train_g2p"``).
        progress, desc: a tqdm bar on stderr, and its label.

    Attributes:
        step: updates taken so far. ``losses``: the (n,) float32 tensor of the
            losses of the steps this object took. ``log``: the records of its save
            points. ``checkpoints``: {step: state_dict copy} in memory, {step: path of
            step{N}.pt} with a workdir. ``train_seconds``, ``eval_seconds``: wall-clock
            seconds spent in training steps and in ``evaluate``, since the run began.
            A record's ``lr`` is the rate after its step: the rate of the next update
            (step 10's record holds ``schedule(10)``, which update 11 uses).
            ``load_state_dict`` brings back the model, Adam, the schedule, the random
            state and the batch position, not ``losses``, ``log`` or in-memory
            ``checkpoints``: a run resumed in memory averages only the checkpoints it
            kept itself (with a workdir, ``log.jsonl`` and ``step{N}.pt`` hold them all).

    Raises:
        TypeError: ``model`` is not an ``nn.Module``; ``batches`` lacks ``__next__``,
            ``state_dict`` or ``load_state_dict``; ``evaluate`` is not callable; both or
            neither of ``schedule`` and (``d_model``, ``warmup``) are given; a workdir
            without a ``config`` dict.
        ValueError: a number of steps is not None or a positive int; ``keep_last`` is
            not None or an int >= 0; d_model or warmup is not a positive int; the
            workdir's ``state.pt`` is unreadable, not a state, or holds another
            ``config`` (the message shows both), or does not fit the model.
    """

    def __init__(self, model, batches, *, d_model=None, warmup=None, schedule=None, criterion=None,
                 save_every=None, keep_last=None, evaluate=None, eval_every=None, print_every=None,
                 workdir=None, config=None, header=None, log_name="log.jsonl", name="loop.Run",
                 progress=True, desc="training"):
        check_module(model, "model")
        missing = [m for m in ("__next__", "state_dict", "load_state_dict") if not callable(getattr(batches, m, None))]
        if missing:
            raise TypeError(f"batches must be a batch source with __next__, state_dict and load_state_dict "
                            f"(such as GeneratorBatches), got {type(batches).__name__}, which lacks {missing}")
        _check_optional_positive_int(save_every=save_every, eval_every=eval_every, print_every=print_every)
        if keep_last is not None and (not is_int(keep_last) or keep_last < 0):
            raise ValueError(f"keep_last must be None (keep all) or an int >= 0, got {type(keep_last).__name__} {keep_last!r}")
        if evaluate is not None and not callable(evaluate):
            raise TypeError(f"evaluate must be None or a function (model, step) -> dict, got {type(evaluate).__name__}")
        if workdir is not None and not isinstance(config, dict):
            raise TypeError(f"a run with a workdir needs config, a dict that says what the run is, got {type(config).__name__}")
        self.model, self.batches = model, batches
        self.criterion = LabelSmoothingLoss() if criterion is None else criterion
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9, fused=True)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, _schedule(d_model, warmup, schedule))
        self.save_every, self.keep_last, self.eval_every, self.print_every = save_every, keep_last, eval_every, print_every
        self.evaluate, self.config, self.name, self.progress, self.desc = evaluate, config, name, progress, desc
        self.step, self.train_seconds, self.eval_seconds = 0, 0.0, 0.0
        self.log, self.checkpoints, self.last_eval = [], {}, {}
        self._losses, self._since = [], 0  # 0-d loss tensors; index of the first one not yet in a record
        self._tokens = torch.zeros(2, dtype=torch.long)  # non-pad source and target tokens since the last record
        self.world = distributed.start(next(model.parameters()).device)
        self.main = self.world.rank == 0  # the one process that shows, evaluates and writes
        self.progress = progress and self.main
        self.stepper = model
        if self.world.size > 1:
            smallest = min(map(len, batches.batches)) if isinstance(batches, EpochBatches) else None
            if smallest is not None and smallest < self.world.size:  # refused now, not hours in at that batch
                raise ValueError(f"the smallest batch holds {smallest} sentence{'s' if smallest != 1 else ''}, fewer than the "
                                 f"{self.world.size} processes that share each batch: use fewer processes or larger batches")
            from torch.nn.parallel import DistributedDataParallel
            self.stepper = DistributedDataParallel(model)  # copies process 0's weights to the others
            if not self.main:  # its own dropout stream
                torch.manual_seed(torch.initial_seed() + RANK_SEED_STRIDE * self.world.rank)
        self.workdir = None if workdir is None else pathlib.Path(workdir)
        if self.workdir is not None:
            self._open(log_name, header)

    @property
    def losses(self) -> torch.Tensor:
        """The loss of every step this object took, a (n,) float32 tensor."""
        return torch.stack(self._losses) if self._losses else torch.zeros(0)

    def train(self, steps: int) -> Run:
        """Train until ``self.step == steps`` (a total, so a resumed run goes on where it stopped); return self.

        Nothing happens if the run is already there. Leaves the model in train mode.

        Raises:
            ValueError: ``steps`` is not a positive int.
            TypeError, ValueError: from ``recipe.train_step`` (a model whose output is
                not (batch, tgt_len, vocab)) or from ``evaluate`` (not a dict).
        """
        if not is_int(steps) or steps < 1:
            raise ValueError(f"steps must be a positive int (the step to train until), got {type(steps).__name__} {steps!r}")
        bar = tqdm(total=int(steps), initial=min(self.step, steps), desc=self.desc, unit="step", ncols=80,
                   mininterval=1.0, disable=not self.progress)
        device = next(self.model.parameters()).device
        self.model.train()
        start = time.perf_counter()
        while self.step < steps:
            src, tgt = whole = tuple(x.to(device) for x in next(self.batches))
            if self.world.size > 1:  # this process's share, the whole batch's update
                src, tgt = distributed.shard(src, tgt, self.world)
                loss = distributed.data_parallel_step(self.stepper, src, tgt, self.criterion, self.optimizer,
                                                      self.scheduler, self.world)
            else:
                loss = train_step(self.model, src, tgt, self.criterion, self.optimizer, self.scheduler)
            self._losses.append(loss)
            self._tokens += torch.stack([(whole[0] != PAD_ID).sum(), (whole[1] != PAD_ID).sum()]).cpu()  # the whole batch's
            self.step += 1
            bar.update(1)
            if self.progress and self.step % 50 == 0:
                bar.set_postfix(loss=f"{torch.stack(self._losses[-50:]).mean().item():.3f}",
                                **({"epoch": self.batches.epoch} if hasattr(self.batches, "epoch") else {}))
            end = self.workdir is not None and self.step == steps  # with a workdir, state.pt holds where a call stopped
            if end or (self.save_every and self.step % self.save_every == 0):
                self.train_seconds += time.perf_counter() - start
                self._save_point(end)
                start = time.perf_counter()
            if self.print_every and self.step % self.print_every == 0 and self.main:
                self._print_line(bar)
        self.train_seconds += time.perf_counter() - start
        bar.close()
        return self

    def _print_line(self, bar):
        mean = torch.stack(self._losses[-self.print_every:]).mean().item()
        extra = "".join(f"  {k.replace('_', ' ')} {v:.4f}" for k, v in self.last_eval.items() if isinstance(v, float))
        bar.write(f"step {self.step:5d}  lr {self.scheduler.get_last_lr()[0]:.6f}  train loss {mean:.4f}{extra}")

    def _save_point(self, end):
        """A log record; an evaluation if one is due; a checkpoint; with a workdir, the files."""
        record = dict(step=self.step)
        if hasattr(self.batches, "epoch"):
            record["epoch"] = self.batches.epoch
        src_tokens, tgt_tokens = self._tokens.tolist()
        record.update(lr=self.scheduler.get_last_lr()[0], train_seconds=round(self.train_seconds, 1),
                      losses=torch.stack(self._losses[self._since:]).tolist() if self._losses[self._since:] else [],
                      src_tokens=src_tokens, tgt_tokens=tgt_tokens)
        self._since, self._tokens = len(self._losses), torch.zeros(2, dtype=torch.long)
        if self.evaluate is not None and self.main and (end or self.eval_every is None or self.step % self.eval_every == 0):
            record.update(self._evaluate())
        self.log.append(record)
        if self.keep_last != 0:
            weights = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
            if self.workdir is None:
                self.checkpoints[self.step] = weights
            else:
                self.checkpoints[self.step] = self.workdir / f"step{self.step}.pt"
                if self.main:
                    _save_atomically(weights, self.checkpoints[self.step])
            for old in sorted(self.checkpoints)[: -self.keep_last] if self.keep_last is not None else []:
                if self.workdir is not None and self.main:
                    self.checkpoints[old].unlink(missing_ok=True)
                del self.checkpoints[old]
        if self.workdir is not None:  # the log first, the state last: a crash in between only repeats steps
            state = self._state()  # every process takes part (its random state is gathered)
            if self.main:
                with self._log_path.open("a") as f:
                    f.write(json.dumps(record) + "\n")
                _save_atomically(state, self.workdir / "state.pt")

    def _evaluate(self) -> dict:
        start = time.perf_counter()
        self.model.eval()
        with torch.no_grad():
            result = self.evaluate(self.model, self.step)
        self.model.train()
        if not isinstance(result, Mapping):
            raise TypeError(f"evaluate(model, step) must return a dict of numbers for the log, got {type(result).__name__}")
        seconds = time.perf_counter() - start
        self.eval_seconds += seconds
        self.last_eval = dict(result)
        return dict(result, eval_seconds=round(seconds, 1))

    def _state(self) -> dict:
        state = dict(model=self.model.state_dict(), optimizer=self.optimizer.state_dict(),
                     scheduler=self.scheduler.state_dict(), rng=torch.get_rng_state(), step=self.step,
                     elapsed=self.train_seconds, eval_seconds=self.eval_seconds, config=self.config,
                     batches=self.batches.state_dict())
        if torch.cuda.is_available():
            state["cuda_rng"] = torch.cuda.get_rng_state_all()
        if self.world.size > 1:  # every process's dropout stream, in rank order
            import torch.distributed as dist
            rngs = [None] * self.world.size
            dist.all_gather_object(rngs, torch.get_rng_state())
            state.update(world_size=self.world.size, rank_rng=rngs)
        return state

    def state_dict(self) -> dict:
        """A copy of everything needed to go on: model, Adam, schedule, random state, step, seconds, config, batches."""
        return copy.deepcopy(self._state())

    def load_state_dict(self, state: Mapping, where: str = "the state") -> None:
        """Continue from ``state`` (from ``state_dict`` or ``state.pt``): the next step is the one it stopped before.

        Raises:
            ValueError: ``state`` holds another config (the message shows both), or does
                not fit this run's model and optimizer (``where`` names the file).
        """
        missing = [k for k in STATE_KEYS if k not in state]
        if missing:
            raise ValueError(f"{where} must be a training state with keys {list(STATE_KEYS)}, it lacks {missing}")
        if state["config"] != self.config:
            raise ValueError(f"{where} holds a run with another configuration: {state['config']} "
                             f"(this one: {self.config}); use another workdir")
        if state.get("world_size", 1) != self.world.size:
            raise ValueError(f"{where} was written by a run of {state.get('world_size', 1)} process(es), this one has "
                             f"{self.world.size}: the batches' shares and the dropout streams would differ; resume "
                             f"with torchrun --nproc_per_node={state.get('world_size', 1)}, or use another workdir")
        try:
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
            self.scheduler.load_state_dict(state["scheduler"])
            self.batches.load_state_dict(state.get("batches", state))
            torch.set_rng_state(state["rank_rng"][self.world.rank] if "rank_rng" in state else state["rng"])
            if "cuda_rng" in state and torch.cuda.is_available():
                torch.cuda.set_rng_state_all(state["cuda_rng"])
        except (RuntimeError, ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{where} does not fit this run's model, optimizer and batches ({type(err).__name__}); "
                             f"delete it to train afresh, or use another workdir") from None
        self.step, self.train_seconds = int(state["step"]), float(state["elapsed"])
        self.eval_seconds = float(state.get("eval_seconds", 0.0))

    def _open(self, log_name, header):
        """Resume from workdir/state.pt if there is one (dropping later log lines), else start the log."""
        if self.main:
            self.workdir.mkdir(parents=True, exist_ok=True)
        self._log_path, state_path = self.workdir / log_name, self.workdir / "state.pt"
        if state_path.is_file():
            self.load_state_dict(read_state(state_path, self.name), where=str(state_path))
            steps = checkpoint_steps(self.workdir, prefix="step")
            self.checkpoints = {s: self.workdir / f"step{s}.pt" for s in steps if s <= self.step}
            if not self.main:  # process 0 tidies the log
                return
            read_log(self._log_path, owner=self.name)  # a readable log, or an error that names the file
            # keep only the log lines up to the saved step (a crash may have left later ones)
            lines = [line for line in self._log_path.read_text().splitlines()
                     if line.strip() and json.loads(line).get("step", 0) <= self.step]
            self._log_path.write_text("".join(line + "\n" for line in lines))
            steps = checkpoint_steps(self.workdir, prefix="step")
            self.checkpoints = {s: self.workdir / f"step{s}.pt" for s in steps if s <= self.step}
        elif self.main:
            self._log_path.write_text(json.dumps(dict(start=self.config, **(header or {}))) + "\n")


def _schedule(d_model, warmup, schedule):
    """The function step -> learning rate: ``schedule``, or ``recipe.rate`` of d_model and warmup (section 5.3)."""
    if schedule is not None:
        if d_model is not None or warmup is not None:
            raise TypeError(f"give either schedule or d_model and warmup, not both; got schedule and "
                            f"d_model={d_model!r}, warmup={warmup!r}")
        if not callable(schedule):
            raise TypeError(f"schedule must be a function step -> learning rate, got {type(schedule).__name__}")
        return schedule
    if d_model is None or warmup is None:
        raise TypeError(f"give d_model and warmup (the schedule of equation 3) or a schedule function; "
                        f"got d_model={d_model!r}, warmup={warmup!r}")
    rate(0, d_model, warmup)  # raises unless d_model and warmup are positive ints
    d_model, warmup = int(d_model), int(warmup)
    return lambda step: rate(step, d_model, warmup)

