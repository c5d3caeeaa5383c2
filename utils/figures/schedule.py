"""Chapter 10's figure: the learning-rate schedule for any d_model and warm-up (section 5.3).

lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) (equation 3). A menu picks
d_model, a slider the warm-up; the curve is drawn on log-log axes (the warm-up is a line
of slope 1, the decay a line of slope -1/2) and the rates at a few steps are printed.
The browser computes the rate with the formula; the description's numbers come from
``utils.training.recipe.rate``.
"""

from __future__ import annotations

from ..core.checks import is_int
from ..training.recipe import rate
from .base import InteractiveFigure

D_MODELS = (64, 128, 256, 512, 1024)
STEPS = (1, 100, 1_000, 4_000, 10_000, 100_000)
#: Every text the script writes (``js/schedule.js``), in English; ``{name}`` is filled by the script.
STRINGS = {
    "x_axis": "step (log scale)", "peak_label": "peak {peak}",
    "plot_alt": "Learning rate against step on log-log axes for d_model {d} and warmup {warmup}: "
                "peak {peak} at step {warmup}",
    "table_caption": "lrate at d_model {d}, warmup {warmup}", "lrate": "lrate", "step": "step",
    "peak_row": "peak (step {warmup})",
    "summary": "Peak {d}^-0.5 \u00b7 {w}^-0.5 = {peak} at step {warmup}; after it the rate halves every time "
               "the step is multiplied by 4.",
}


def schedule_figure(d_model=512, warmup=4000, steps=STEPS, d_models=D_MODELS, figure_id="fig-schedule"):
    """Interactive plot and table of ``rate(step, d_model, warmup)``.

    Args:
        d_model: default model width; must be one of ``d_models``.
        warmup: default warm-up in steps, a multiple of 100 in 100..10,000 (the slider's range).
        steps: the steps whose rates the table prints (positive ints, at most 100,000).
        d_models: the widths the menu offers.
        figure_id: HTML id of the figure.

    Raises:
        ValueError: a setting out of range.
    """
    if not d_models or not all(is_int(d) and d > 0 for d in d_models):
        raise ValueError(f"d_models must be positive ints, got {d_models!r}")
    d_models = [int(d) for d in d_models]
    if d_model not in d_models:
        raise ValueError(f"d_model must be one of {tuple(d_models)}, got {d_model!r}")
    if not is_int(warmup) or not 100 <= warmup <= 10_000 or warmup % 100:
        raise ValueError(f"warmup must be a multiple of 100 in 100..10000, got {warmup!r}")
    if not steps or not all(is_int(s) and 1 <= s <= 100_000 for s in steps):
        raise ValueError(f"steps must be ints in 1..100000, got {steps!r}")
    d_model, warmup, steps = int(d_model), int(warmup), [int(s) for s in steps]
    rates = ", ".join(f"step {s:,}: {rate(s, d_model, warmup):.3e}" for s in steps)
    description = (
        f"Default state: d_model = {d_model}, warmup = {warmup:,}. The rate rises in a straight line to its peak "
        f"{rate(warmup, d_model, warmup):.3e} at step {warmup:,}, then falls as one over the square root of the step. "
        f"Rates: {rates}. On the log-log axes the rise has slope 1 and the fall slope -1/2."
    )
    fid = figure_id
    options = "".join(f'<option value="{d}"{" selected" if d == d_model else ""}>{d}</option>' for d in d_models)
    body = (
        '<div class="fig-controls">'
        f'<label for="{fid}-d">d_model <select id="{fid}-d" data-part="d">{options}</select></label>'
        f'<span class="fig-ctl"><label for="{fid}-warmup">warmup: <output data-part="warmup-out" for="{fid}-warmup">{warmup}</output> '
        f"steps</label>"
        f'<input type="range" id="{fid}-warmup" data-part="warmup" min="100" max="10000" step="100" value="{warmup}"></span>'
        "</div>"
        '<p class="fig-note" data-part="summary" aria-live="polite"></p>'
        '<div class="fig-row"><div data-part="plot" role="img" aria-label="Learning rate against step on log-log axes: '
        'a straight rise to the peak at step = warmup (a square), then a straight fall of slope -1/2"></div>'
        '<div data-part="numbers"></div></div>'
    )
    data = {"steps": list(steps)}
    caption = ("Equation 3 for any d_model and warm-up: a linear rise to the peak d_model^-0.5 · "
                            "warmup^-0.5 at step = warmup, then a decay as 1/√step (log-log axes; the peak is "
                            "marked with a square and its value printed).")
    return InteractiveFigure("schedule", fid, body, caption, description, data, strings=STRINGS)
