"""Numbers in the prose come from the code: a thin wrapper of ``myst_nb.glue``."""

from __future__ import annotations


def glue(name: str, value, display: bool = False) -> None:
    """Store ``value`` for the prose of the page, which shows it with {glue:text}`name`.

    In the book build, ``myst_nb.glue`` records the value in the cell's output and
    the page inserts it where the prose names it. Where myst-nb is not installed
    (Colab, Kaggle) there is no page to insert it into, and nothing is shown.
    Format the value in the code (``f"{wer:.1%}"``), so the prose shows exactly what
    the code computed.

    Raises:
        TypeError: ``name`` is not a non-empty string.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"a glue name must be a non-empty str, got {name!r}")
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return
    myst_glue(name, value, display=display)


_SPELLED = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
            "sixteen seventeen eighteen nineteen twenty").split()


def spelled(n: int) -> str:
    """A count as prose writes it: 'two' for 2 (zero to twenty), '1,700' above.

    Raises:
        TypeError: ``n`` is not an int.
        ValueError: ``n`` is negative.
    """
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"a count must be an int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"a count must be >= 0, got {n}")
    return _SPELLED[n] if n < len(_SPELLED) else f"{n:,}"
