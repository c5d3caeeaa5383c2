"""Shared code of the course "Attention Is All You Need", rebuilt and tested.

Each piece of the model and its training is taught, line for line, in a chapter;
``tests/test_drift.py`` fails if a chapter and this package disagree. The package is built in layers, each
importing only the layers below it (``utils/README.md`` draws them; ``tests/test_architecture.py``
enforces it): ``core``, ``model``, ``training``, ``tasks``, ``experiments``, and the book's
tooling (``book``, ``exercises``, ``figures``). This file gathers the pieces chapters
import most (``from utils import Transformer, set_seed``).

Importing the package pins the CPU arithmetic, unless the variables are already set:
``ATEN_CPU_CAPABILITY=avx2`` (PyTorch's own kernels use their AVX2 code) and
``MKL_CBWR=AVX2`` (Intel MKL's conditional numerical reproducibility: its AVX2 code).
Without them PyTorch and MKL pick the widest vector code of each CPU (AVX-512 on
some machines, AVX2 on others), so two machines of one vendor would round differently.
What the pins do not give: the same bits on every CPU. MKL also chooses its kernels
by vendor (Intel and AMD differ), ARM machines use no MKL at all, and other PyTorch
versions change kernels. So the course never relies on equal bits across machines:
``utils/core/numerics.py`` states the rule every printed number follows (exact results,
rounding-level figures printed against their bound, results of training read from
shipped files). Measured on an AMD EPYC: ``MKL_CBWR=COMPATIBLE`` would make MKL's
results independent of the instruction set too, but costs 1.4 times the time per
training step of the tiny model (3 times on a 256 x 256 matrix product), and the
book needs no such uniformity (under the second path below, which sets it, every
compared output stays the same); so the course keeps AVX2. Set either variable yourself to try
another path (``ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE`` is the second path
CI runs). The setting takes effect if ``utils`` is imported before the first tensor
operation of the process (the first cell of every notebook sets the same variables
before importing torch).
"""

import os

os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
os.environ.setdefault("MKL_CBWR", "AVX2")

from .book.plotting import heatmap
from .core.env import set_seed
from .core.masks import BOS_ID, EOS_ID, PAD_ID, causal_mask, padding_mask, shift_right, target_mask
from .model.attention import MultiHeadAttention, scaled_dot_product_attention
from .model.decoding import Hypothesis, beam_search, beam_search_core, greedy_decode, length_penalty
from .model.embeddings import Embeddings, Tokenizer, positional_encoding
from .model.layers import DecoderLayer, EncoderLayer, LayerNorm, PositionwiseFeedForward
from .model.transformer import BASE, TINY, Transformer, count_parameters
from .tasks.reversal.task import exact_match, load_checkpoint, reversal_batch, save_checkpoints, train
from .training.batching import length_batches
from .training.checkpoints import average_checkpoints
from .training.recipe import LabelSmoothingLoss, make_optimizer, rate, train_step
