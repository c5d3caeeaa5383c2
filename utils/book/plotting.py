"""Plotting helpers (matplotlib) shared by the chapters.

matplotlib is imported when a figure is drawn, not when ``utils`` is imported: a
notebook or a test that draws nothing starts about a second sooner.
"""

from __future__ import annotations

import numpy as np
import torch


def heatmap(data, row_labels=None, col_labels=None, ax=None, title=None,
            annotate=True, fmt="{:.2f}", cmap="Greys", vmin=None, vmax=None,
            xlabel="key", ylabel="query"):
    """Draw a matrix (for example attention weights, rows = queries) as a heat map.

    Every cell is also written as a number (``annotate``), so the figure does not
    rely on colour alone; text switches between black and white for contrast.

    Args:
        data: 2-D tensor or array (rows, cols).
        row_labels, col_labels: tick labels, lengths rows and cols.
        ax: matplotlib axes to draw on; a new figure is made when None.

    Returns:
        The matplotlib ``AxesImage``.

    Raises:
        TypeError: ``data`` is not numeric, or ``fmt`` is not a string.
        ValueError: ``data`` is not a non-empty 2-D matrix, or label counts do
            not match its shape.
    """
    if isinstance(data, torch.Tensor):
        data = data.detach().cpu().numpy()
    try:
        data = np.asarray(data, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"heatmap expects a 2-D matrix of numbers, got {type(data).__name__} {data!r:.60}") from None
    if data.ndim != 2 or data.size == 0:
        raise ValueError(f"heatmap expects a non-empty 2-D matrix, got shape {data.shape}")
    if not isinstance(fmt, str):
        raise TypeError(f"fmt must be a format string such as '{{:.2f}}', got {type(fmt).__name__}")
    rows, cols = data.shape
    for name, labels, n in (("row_labels", row_labels, rows), ("col_labels", col_labels, cols)):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{name} has {len(labels)} entries for {n} {name[:3]}s of data {data.shape}")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(0.6 * cols + 2, 0.5 * rows + 1.5))
    image = ax.imshow(data, cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xticks(range(cols), col_labels if col_labels is not None else range(cols))
    ax.set_yticks(range(rows), row_labels if row_labels is not None else range(rows))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if annotate:
        lo = np.nanmin(data) if vmin is None else vmin
        hi = np.nanmax(data) if vmax is None else vmax
        middle = (lo + hi) / 2
        for i in range(rows):
            for j in range(cols):
                dark = (data[i, j] > middle) == (cmap in ("Greys", "Blues", "Purples"))
                ax.text(j, i, fmt.format(data[i, j]), ha="center", va="center",
                        fontsize=8, color="white" if dark else "black")
    return image
