"""How the course prints numbers that depend on the machine.

Every number the book prints is of one of three kinds (the preface states the rule
for readers, ``tests/nbval_sanitize.cfg`` applies it in the tests):

1. **Exact results**: hand examples, counts, the schedule, decoded tokens, metrics
   of shipped weights. They are printed at the precision the text needs, come out
   the same on every machine, and nbval compares them digit for digit.
2. **Rounding-level figures**: the largest difference between two computations
   that agree in exact arithmetic (ours against PyTorch's, a loop against a batch).
   Its size depends on the order in which a CPU's kernels add numbers, so it differs
   between machines (Intel, AMD, ARM) and between PyTorch's code paths. It is
   printed with :func:`within`, which asserts it below a bound and prints both,
   ``1.8e-07 < 1e-06``; nbval compares the words and the bound, not the noise digits.
3. **Results of training**: made once by a command, committed as files (weights,
   logs) and read by the chapters, so what the book prints from them is exact.
   A learner's own live run prints its numbers beside the shipped reference; its
   output is not compared (``tests/uncompared_outputs.yml`` lists every such cell).
"""

from __future__ import annotations

import math
import numbers

__all__ = ["within", "ROUNDING_PATTERN", "REPLAY_TOLERANCE"]

#: The printed form of a rounding-level figure, as a regular expression: a number in
#: scientific notation with one decimal, then ``" < "`` and the bound. The nbval
#: sanitizer (``tests/nbval_sanitize.cfg``) replaces the number and keeps the bound.
ROUNDING_PATTERN = r"-?\d\.\de[+-]\d\d < \d+(?:\.\d+)?e[+-]\d\d"


#: How far a replay of a shipped training log may drift: the largest |rerun - logged|
#: loss over the first steps that the tests and chapters rerun (at most 20 steps of the
#: tiny model, of a Table 3 row, or of G2P). ``bench/replay_tolerance.py`` measured every
#: such replay on an AMD EPYC on two numeric paths (AVX2 pins; ``ATEN_CPU_CAPABILITY=
#: default MKL_CBWR=COMPATIBLE``) against logs made on Intel machines (Table 3, G2P) and
#: on this AMD machine (the tiny reference run); ``bench/replay_tolerance.out`` holds the
#: table. The largest gap was 7.87e-06 (Table 3's base row, seed 2, over 15 steps); most
#: were 2e-07 to 1e-06. The tolerance is that gap times a margin of 10, rounded up to one
#: significant digit, for CPUs and versions not measured.
MEASURED_REPLAY_GAP = 7.87e-06
REPLAY_TOLERANCE = 8e-05


def within(diff, bound: float) -> str:
    """Assert that a rounding-level figure is below its bound; return ``"1.8e-07 < 1e-06"``.

    Use it for the maximum absolute difference between two computations that are
    equal in exact arithmetic: ``print(f"max |ours - torch| = {within(diff, 1e-6)}")``.
    The figure itself is machine-dependent (the order of additions differs between
    CPUs and kernels); the bound is the claim, and it holds everywhere.

    Args:
        diff: the figure, a Python number or a one-element tensor (no unit; the same
            unit as the values compared).
        bound: a positive number with one significant digit (``1e-6``, ``5e-6``);
            the claim is ``diff < bound``.

    Returns:
        ``f"{diff:.1e} < {bound:.0e}"``, the form the tests recognise.

    Raises:
        TypeError: ``diff`` or ``bound`` is not a real number.
        ValueError: ``bound`` is not positive and finite, or has more than one
            significant digit.
        AssertionError: ``diff`` is NaN, negative, or not below ``bound`` (the message
            gives both).
    """
    if hasattr(diff, "item") and getattr(diff, "numel", lambda: 1)() == 1:
        diff = diff.item()
    for name, value in (("diff", diff), ("bound", bound)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    diff, bound = float(diff), float(bound)
    if not (math.isfinite(bound) and bound > 0):
        raise ValueError(f"bound must be a positive finite number, got {bound!r}")
    if float(f"{bound:.0e}") != bound:
        raise ValueError(f"bound must have one significant digit (such as 1e-06 or 5e-06), got {bound!r}")
    if math.isnan(diff):
        raise AssertionError(f"the difference is NaN (expected a number below {bound:.0e}): "
                             "one of the two computations produced NaN")
    if diff < 0:
        raise AssertionError(f"a maximum absolute difference cannot be negative, got {diff!r}")
    if not diff < bound:
        raise AssertionError(f"difference {diff:.2e} is not below its bound {bound:.0e}")
    return f"{diff:.1e} < {bound:.0e}"
