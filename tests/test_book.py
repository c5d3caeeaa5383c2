"""The book builds with warnings as errors, executing every chapter."""

import os
import subprocess
import sys

import pytest

from notebooks import ROOT, toc_files

HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def built_book():
    """Build the book once per test session (jupyter-book build . -W -n --keep-going)."""
    jb = os.path.join(os.path.dirname(sys.executable), "jupyter-book")
    proc = subprocess.run([jb, "build", str(ROOT), "-W", "-n", "--keep-going"],
                          capture_output=True, text=True, cwd=ROOT)
    log = proc.stdout + proc.stderr
    return proc.returncode, log


def test_book_builds_without_warnings(built_book):
    rc, log = built_book
    # Sphinx's own warnings ("file:line: WARNING: ..."), not the kernel's log lines
    warnings = [l for l in log.splitlines() if "WARNING:" in l or "ERROR:" in l]
    assert rc == 0 and not warnings, "book build failed:\n" + "\n".join(warnings or log.splitlines()[-40:])


def test_every_toc_page_is_built(built_book):
    for name in toc_files():
        page = HTML / f"{name}.html"
        assert page.exists(), f"{page.relative_to(ROOT)} was not built"


def test_math_and_figures_are_in_the_html(built_book):
    page = (HTML / "chapters" / "02_scaled_dot_product_attention.html").read_text()
    assert "\\sqrt{d_k}" in page, "the attention formula is missing from chapter 2"
    assert "<img" in page, "chapter 2 should show its figures"
