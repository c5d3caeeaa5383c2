"""The CPU arithmetic is pinned (utils/__init__.py, .ci/setup_cell.py) to AVX2 kernels
unless the reader sets the variables: fewer code paths, not equal bits everywhere. The
rule that makes the book hold on any CPU is in utils/core/numerics.py and
tests/test_determinism.py."""

import os
import platform
import subprocess
import sys

import pytest
from notebooks import ROOT

PINNED = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2"}
PROBE = ("import os, torch, utils; x = torch.randn(3, 3) @ torch.randn(3, 3); "
         "print(os.environ['ATEN_CPU_CAPABILITY'], os.environ['MKL_CBWR'], torch.backends.cpu.get_cpu_capability())")


def clean_env():
    return {k: v for k, v in os.environ.items() if k not in PINNED}


def test_importing_utils_pins_the_arithmetic():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=clean_env(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    aten, mkl, capability = out.stdout.split()
    assert (aten, mkl) == ("avx2", "AVX2")
    if platform.machine() in ("x86_64", "AMD64"):
        assert capability == "AVX2", f"PyTorch dispatches to {capability}, not AVX2"


def test_a_value_set_by_the_user_is_kept():
    env = dict(clean_env(), MKL_CBWR="COMPATIBLE")
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[1] == "COMPATIBLE"


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_setup_cell_pins_it_before_torch_is_imported(name):
    cell = (ROOT / ".ci" / "setup_cell.py").read_text()
    line = f'os.environ.setdefault("{name}", "{PINNED[name]}")'
    assert line in cell, f".ci/setup_cell.py must contain {line}"
    assert "import torch" not in cell[: cell.index(line)]
