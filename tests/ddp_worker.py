"""``utils.experiments.ddp_check`` for tests/test_distributed.py, its writes watched (not collected by pytest).

    torchrun --standalone --nproc_per_node=N tests/ddp_worker.py OUTDIR STEPS JOB [JOB ...]

The jobs are ``ddp_check``'s (its docstring). With one process (plain ``python``) the same code is
the reference run. A process other than 0 records every file it would write (``open`` for writing, ``torch.save``,
``os.replace``, ``mkdir``, ``unlink``) and prints them on a line ``writes of rank R: [...]``.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from utils.experiments.ddp_check import job  # noqa: E402


def record_writes():
    """Make every write of this process append its path to the list returned, instead of writing."""
    import builtins
    import os
    writes = []
    real_open = builtins.open

    def fake_open(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+"):
            writes.append(str(file))
            return real_open(os.devnull, mode, *args, **kwargs)
        return real_open(file, mode, *args, **kwargs)
    builtins.open = fake_open
    real_save = torch.save

    def fake_save(obj, f, *args, **kwargs):  # a file is recorded; a buffer (all_gather_object's) is written
        if isinstance(f, (str, os.PathLike)):
            return writes.append(str(f))
        return real_save(obj, f, *args, **kwargs)
    torch.save = fake_save
    os.replace = lambda a, b: writes.append(str(b))
    pathlib.Path.mkdir = lambda self, *a, **k: writes.append(str(self))
    pathlib.Path.unlink = lambda self, *a, **k: writes.append(str(self))
    pathlib.Path.write_text = lambda self, *a, **k: writes.append(str(self))
    return writes


def main(outdir, steps, *jobs):
    import os
    rank = int(os.environ.get("RANK", "0"))
    writes = record_writes() if rank > 0 else None
    for spec in jobs:
        task, mode = spec.split(":")
        job(task, mode, int(steps), outdir)
    if writes is not None:
        print(f"writes of rank {rank}: {writes}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
