"""Shared code of the course "Attention Is All You Need", rebuilt and tested.

Each piece here is taught, line for line, in a chapter; ``tests/test_drift.py``
fails if a chapter and this package disagree.

Importing the package pins the CPU arithmetic, unless the variables are already set:
``ATEN_CPU_CAPABILITY=avx2`` (PyTorch's own kernels use their AVX2 code) and
``MKL_CBWR=AVX2`` (Intel MKL's conditional numerical reproducibility: its AVX2 code,
whatever the CPU and the memory alignment). Without them PyTorch and MKL pick the
widest vector code of each CPU (AVX-512 on some machines, AVX2 on others), which
rounds differently, and a notebook's printed numbers change from one machine to the
next. Any x86-64 CPU with AVX2 then gives the same bits. The setting takes effect if
``utils`` is imported before the first tensor operation of the process (the first
cell of every notebook sets the same variables before importing torch).
"""

import os

os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
os.environ.setdefault("MKL_CBWR", "AVX2")

from .attention import MultiHeadAttention, scaled_dot_product_attention
from .decoding import Hypothesis, average_checkpoints, beam_search, beam_search_core, greedy_decode, length_penalty
from .embeddings import Embeddings, Tokenizer, positional_encoding
from .env import set_seed
from .layers import DecoderLayer, EncoderLayer, LayerNorm, PositionwiseFeedForward
from .masks import BOS_ID, EOS_ID, PAD_ID, causal_mask, padding_mask, shift_right, target_mask
from .model import BASE, TINY, Transformer, count_parameters
from .plotting import heatmap
from .training import (
    LabelSmoothingLoss,
    exact_match,
    length_batches,
    load_checkpoint,
    make_optimizer,
    rate,
    reversal_batch,
    save_checkpoints,
    train,
)
