"""Build the book's editions for the tests, once per session (see the fixtures in conftest.py).

The builds run ``utils/book/editions.py``, the script behind ``bash .ci/build``, so the
tests check the documented commands. ``COURSE_BUILD_DIR`` moves the output (default:
the repository's ``_build/``); the student edition goes to ``<that>/_build/student``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

from notebooks import ROOT, config, toc_files

_spec = importlib.util.spec_from_file_location("course_editions", ROOT / "utils" / "book" / "editions.py")
editions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(editions)

HTML = editions.html_dir("instructor")
STUDENT_HTML = editions.html_dir("student")
FR_HTML = editions.html_dir("instructor", lang="fr")
FR_STUDENT_HTML = editions.html_dir("student", lang="fr")


def build(edition: str, lang: str = "en") -> tuple[int, str]:
    """Run ``editions.py EDITION LANG``; return (exit code, combined log)."""
    proc = subprocess.run([sys.executable, str(ROOT / "utils" / "book" / "editions.py"), edition, lang],
                          capture_output=True, text=True, cwd=ROOT, env=os.environ.copy())
    return proc.returncode, proc.stdout + proc.stderr


def sphinx_warnings(log: str) -> list[str]:
    """Sphinx's own warnings ("file:line: WARNING: ..."), not the kernel's log lines."""
    return [l for l in log.splitlines() if ("WARNING:" in l or "ERROR:" in l) and "[IPKernelApp]" not in l]


COLAB = "https://colab.research.google.com/github/"
KAGGLE = "https://kaggle.com/kernels/welcome?src="


def notebook_pages():
    """Toc documents that are notebooks (have a paired .ipynb), e.g. chapters/02_..."""
    return [n for n in toc_files() if (ROOT / f"{n}.ipynb").is_file()]


def expected_links(name):
    repo = config()["repository"]
    url, branch = repo["url"].rstrip("/"), repo.get("branch", "main")
    path = f"{repo.get('path_to_book', '').strip('/')}/{name}.ipynb".lstrip("/")
    owner_repo = url.removeprefix("https://github.com/")
    return f"{COLAB}{owner_repo}/blob/{branch}/{path}", f"{KAGGLE}{url}/blob/{branch}/{path}"
