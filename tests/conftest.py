import os
import pathlib
import sys

# The same CPU arithmetic on every machine (see utils/__init__.py); the notebooks' kernels inherit it.
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
os.environ.setdefault("MKL_CBWR", "AVX2")
# The two test workers share two cores. A run with two threads (the G2P training check,
# which must use the thread count of the shipped log) would otherwise spin-wait for a
# descheduled thread: measured 20x slower next to another busy process, 4x with this.
# It changes the scheduling only, never the arithmetic.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = pathlib.Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import torch  # noqa: E402

torch.set_num_threads(1)

import pytest  # noqa: E402


def _retry_kernel_start():
    """Start a notebook's Jupyter kernel again if it dies before answering.

    nbval starts one kernel per notebook. On a fresh clone a kernel once died before its
    first reply ("Kernel died before replying to kernel_info", one start in about 60),
    which failed every cell of a notebook that had not run a line; a likely cause is a
    port taken between jupyter_client choosing it and the kernel binding it. Only the
    start is retried (three tries); a failure inside a notebook is never retried.
    """
    import nbval.kernel

    start = nbval.kernel.start_new_kernel

    def start_with_retries(*args, **kwargs):
        for attempt in range(3):
            try:
                return start(*args, **kwargs)
            except RuntimeError:
                if attempt == 2:
                    raise

    nbval.kernel.start_new_kernel = start_with_retries


_retry_kernel_start()


def _build_once(edition, tmp_path_factory, worker_id, lang="en"):
    """Build ``edition`` once per test run, even with several pytest-xdist workers.

    The first worker to ask builds under an exclusive lock and stores (exit code, log)
    in the run's shared temporary folder; the others wait for the lock and read it.
    """
    from bookbuild import build

    if worker_id == "master":  # no xdist: this process is the whole run
        return build(edition, lang)
    import fcntl
    import json

    shared = tmp_path_factory.getbasetemp().parent  # one folder per run, shared by its workers
    name = edition if lang == "en" else f"{edition}_{lang}"
    result = shared / f"book_{name}.json"
    with open(shared / f"book_{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result.is_file():
            result.write_text(json.dumps(build(edition, lang)))
        return tuple(json.loads(result.read_text()))


@pytest.fixture(scope="session")
def built_book(tmp_path_factory, worker_id):
    """The instructor edition (``bash .ci/build``), built once per run: (exit code, log)."""
    return _build_once("instructor", tmp_path_factory, worker_id)


@pytest.fixture(scope="session")
def student_book(tmp_path_factory, worker_id):
    """The student edition (``bash .ci/build student``), built once per run: (exit code, log)."""
    return _build_once("student", tmp_path_factory, worker_id)


@pytest.fixture(scope="session")
def french_book(tmp_path_factory, worker_id):
    """The French instructor edition (``bash .ci/build fr``), built once per run: (exit code, log)."""
    return _build_once("instructor", tmp_path_factory, worker_id, "fr")


@pytest.fixture(scope="session")
def french_student_book(tmp_path_factory, worker_id):
    """The French student edition (``bash .ci/build student fr``), built once per run: (exit code, log)."""
    return _build_once("student", tmp_path_factory, worker_id, "fr")
