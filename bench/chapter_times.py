"""Benchmark (run on demand, not collected by pytest): how long each chapter takes to run.

    .venv/bin/python bench/chapter_times.py [--repeats 2] [chapters/15_g2p.ipynb ...]

Executes each chapter notebook top to bottom (``jupyter execute`` on a hidden copy beside it,
deleted afterwards: the committed ``.ipynb`` is not touched), ``--repeats`` times, and writes the median
wall-clock seconds of each into ``bench/chapter_times.json`` with the machine, the date, the
versions and the load average before the first run. Given notebooks, it measures those and
keeps the other entries. Run it on a quiet machine: a second process on the cores slows a
chapter by up to three times.

That file is the one source of the times the book states: the "**Time:**" line of each
chapter ("the notebook runs in about N s on two CPU cores") and README's sentence on the slow
chapters say ``stated_time(seconds)``; ``tests/test_chapter_times.py`` fails when they differ.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TABLE = ROOT / "bench" / "chapter_times.json"
#: Chapters that take at least this long are named, with their times, in README.
SLOW_S = 20


def stated_time(seconds: float) -> str:
    """How the book says a measured time: "about 6 s" (under 10 s: to the second), "about
    45 s" (under 100 s: to 5 s), "about 120 s" (under 180 s: to 10 s), else "about 4 minutes".

    Raises:
        ValueError: ``seconds`` is not a positive number.
    """
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
        raise ValueError(f"seconds must be a positive number, got {seconds!r}")
    if seconds < 9.5:
        return f"about {max(1, round(seconds))} s"
    if seconds < 97.5:
        return f"about {5 * round(seconds / 5)} s"
    if seconds < 175:
        return f"about {10 * round(seconds / 10)} s"
    return f"about {round(seconds / 60)} minutes"


def slow_chapters_sentence(table: dict) -> str:
    """README's sentence on the chapters that take ``SLOW_S`` seconds or more, from ``table``."""
    slow = [(stem, s) for stem, s in table["seconds"].items() if s >= SLOW_S]
    names = [stem.split("_")[0].lstrip("0") or "0" for stem, _ in slow]
    times = [stated_time(s).removeprefix("about ") for _, s in slow]
    join = lambda xs: xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]
    if not slow:
        return f"Every chapter runs in under {SLOW_S} s."
    verb = "takes" if len(slow) == 1 else "take"
    return (f"Chapter{'s' if len(slow) > 1 else ''} {join(names)} {verb} about {join(times)}; "
            f"every other chapter runs in under {SLOW_S} s.")


def read_table(path=TABLE) -> dict:
    """The measured times: {"machine", "measured", "versions", "load_before", "repeats", "seconds":
    {chapter stem: median seconds}}.

    Raises:
        FileNotFoundError: no table (this script writes it).
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no table of chapter times at {path}: run .venv/bin/python bench/chapter_times.py")
    return json.loads(path.read_text())


def chapters() -> list[pathlib.Path]:
    """Every chapter notebook (chapters/NN_*.ipynb), in order."""
    return sorted(p for p in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))


def machine() -> str:
    try:
        lines = pathlib.Path("/proc/cpuinfo").read_text().splitlines()
        model = next(line.split(":", 1)[1].strip() for line in lines if line.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.processor()
    return f"{model or platform.machine()}, {os.cpu_count()} cores, {platform.system()}"


def time_notebook(nb: pathlib.Path, jupyter: str) -> float:
    """Seconds to execute a copy of ``nb`` (kernel start included, as a learner waits for it).
    The copy sits beside ``nb`` (the kernel runs in the notebook's folder, inside the course,
    as a learner's does) under a hidden name, and is deleted afterwards."""
    copy = nb.with_name(f".timing-{nb.name}")
    shutil.copy(nb, copy)
    try:
        start = time.perf_counter()
        done = subprocess.run([jupyter, "execute", "--inplace", "--timeout=900", str(copy)], cwd=nb.parent,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        seconds = time.perf_counter() - start
    finally:
        copy.unlink(missing_ok=True)
    if done.returncode:
        raise RuntimeError(f"{nb.name} failed to run:\n{done.stderr[-2000:]}")
    return seconds


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path, help="chapter notebooks (default: all)")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each notebook; the median is kept")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")
    notebooks = [p.resolve() for p in args.notebooks] or chapters()
    for nb in notebooks:
        if not nb.is_file() or nb.suffix != ".ipynb":
            parser.error(f"not a notebook: {nb}")
    jupyter = str(pathlib.Path(sys.executable).with_name("jupyter"))
    import torch  # noqa: PLC0415 (the versions of the measurement)

    table = read_table() if TABLE.is_file() else {"seconds": {}}
    load = os.getloadavg()[0]
    seconds = dict(table.get("seconds", {}))
    try:
        from tqdm import tqdm  # noqa: PLC0415
    except ImportError:  # pragma: no cover
        tqdm = lambda x, **_: x  # noqa: E731
    for nb in tqdm(notebooks, desc="chapters", unit="notebook"):
        runs = [time_notebook(nb, jupyter) for _ in range(args.repeats)]
        seconds[nb.stem] = round(statistics.median(runs), 1)
        print(f"{nb.stem}: {seconds[nb.stem]} s (runs: {', '.join(f'{r:.1f}' for r in runs)})", file=sys.stderr)
    table = dict(machine=machine(), measured=datetime.date.today().isoformat(),
                 versions=dict(python=platform.python_version(), torch=torch.__version__),
                 load_before=round(load, 2), repeats=args.repeats, seconds=dict(sorted(seconds.items())))
    TABLE.write_text(json.dumps(table, indent=1) + "\n")
    print(f"wrote {TABLE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
