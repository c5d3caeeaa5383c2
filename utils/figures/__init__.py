"""Interactive figures of the course: plain HTML plus a small inlined script.

Each figure has one module here (its Python side: inputs checked, numbers computed,
HTML written) and one script in ``js/`` (its browser side: controls and live numbers).
The script is inlined into the cell's output when the figure is displayed, so the
figure works in the static book (no kernel, nothing from another host) and in a
notebook opened alone (Jupyter, Colab, Kaggle) once its cell has run.

Figures are course plumbing, like ``utils/book/plotting.py``: they draw what the chapters
compute; the model code they show lives in the taught modules.
"""

from . import cross_attention, explorer, pe_rotation, schedule, sentence, sqrt_dk
from .base import InteractiveFigure, figure_json
from .cross_attention import cross_attention_figure, cross_attention_weights
from .explorer import explorer_figure, explorer_steps
from .pe_rotation import pe_rotation_figure
from .schedule import schedule_figure
from .sentence import sentence_figure
from .sqrt_dk import sqrt_dk_figure

#: {figure kind: the English templates its script writes} (each module's ``STRINGS``; the
#: explorer adds each step's own words). The French catalogue ``figures.po`` holds them for
#: every page that shows the kind (``utils/book/translations.py``, ``figure_messages``).
STRINGS = {name: module.STRINGS for name, module in (
    ("cross_attention", cross_attention), ("explorer", explorer), ("pe_rotation", pe_rotation),
    ("schedule", schedule), ("sentence", sentence), ("sqrt_dk", sqrt_dk))}

__all__ = ["STRINGS", "InteractiveFigure", "cross_attention_figure", "cross_attention_weights", "explorer_figure",
           "explorer_steps", "figure_json", "pe_rotation_figure", "schedule_figure", "sentence_figure",
           "sqrt_dk_figure"]
