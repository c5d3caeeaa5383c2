"""Shared code of the course "Attention Is All You Need", rebuilt and tested.

Each piece here is taught, line for line, in a chapter; ``tests/test_drift.py``
fails if a chapter and this package disagree.
"""

from .attention import MultiHeadAttention, scaled_dot_product_attention
from .decoding import Hypothesis, average_checkpoints, beam_search, beam_search_core, greedy_decode, length_penalty
from .embeddings import Embeddings, Tokenizer, positional_encoding
from .env import set_seed
from .layers import DecoderLayer, EncoderLayer, LayerNorm, PositionwiseFeedForward
from .masks import BOS_ID, EOS_ID, PAD_ID, causal_mask, padding_mask, shift_right, target_mask
from .model import BASE, TINY, Transformer, count_parameters
from .plotting import heatmap
from .training import (LabelSmoothingLoss, exact_match, length_batches, load_checkpoint, make_optimizer, rate,
                       reversal_batch, save_checkpoints, train)
