import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import torch  # noqa: E402

torch.set_num_threads(1)

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def built_book():
    """Build the instructor edition once per test session (``bash .ci/build``): (exit code, log)."""
    from bookbuild import build

    return build("instructor")


@pytest.fixture(scope="session")
def student_book(built_book):
    """Build the student edition (``bash .ci/build student``) after the instructor one, reusing its
    execution cache: (exit code, log)."""
    from bookbuild import build

    return build("student")
