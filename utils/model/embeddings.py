"""Token embeddings, the running example's tokenizer and sinusoidal positional
encoding (paper sections 3.4 and 3.5)."""

from __future__ import annotations

import math

import torch
from torch import nn

from ..core.checks import check_positive_int, id_list, is_int
from ..core.masks import BOS_ID, EOS_ID, PAD_ID


class Embeddings(nn.Module):
    """Token ids -> vectors, multiplied by sqrt(d_model) (section 3.4).

    The table ``lut.weight`` (vocab_size, d_model) starts with standard
    deviation 1/sqrt(d_model), so after the scaling a token vector has entries
    of unit scale. The same matrix serves as the output layer (logits = y E^T).

    Shapes: ids (batch, len) of dtype long -> (batch, len, d_model).

    Raises:
        TypeError, ValueError: vocab_size or d_model is not a positive int.
        TypeError: ids are not integers.
        IndexError: an id is outside 0..vocab_size-1.
    """

    def __init__(self, vocab_size: int, d_model: int):
        super().__init__()
        check_positive_int(vocab_size=vocab_size, d_model=d_model)
        self.d_model = d_model
        self.lut = nn.Embedding(vocab_size, d_model)
        nn.init.normal_(self.lut.weight, mean=0.0, std=d_model**-0.5)

    def forward(self, ids):
        if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.int64, torch.int32):
            got = ids.dtype if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise TypeError(f"ids must be an integer tensor (torch.long), got {got}")
        vocab_size = self.lut.num_embeddings
        if ids.numel() and (ids.min() < 0 or ids.max() >= vocab_size):
            raise IndexError(
                f"token ids must lie in 0..{vocab_size - 1}, got min {int(ids.min())}, max {int(ids.max())}"
            )
        return self.lut(ids) * math.sqrt(self.d_model)


def positional_encoding(max_len: int, d_model: int):
    """Sinusoidal positions (section 3.5): a (max_len, d_model) float32 tensor.

    PE(pos, 2i) = sin(pos / 10000^(2i / d_model)),
    PE(pos, 2i + 1) = cos(pos / 10000^(2i / d_model)).
    Pair i has wavelength 2 pi * 10000^(2i / d_model).

    Raises:
        ValueError: ``d_model`` is odd (every sine needs its cosine partner)
            or either argument is not a positive int.
    """
    for name, value in (("max_len", max_len), ("d_model", d_model)):
        if not is_int(value) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if d_model % 2 != 0:
        raise ValueError(
            f"d_model must be even: each sine column 2i needs its cosine column 2i+1, got {d_model}"
        )
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (d_model/2,)
    angle = pos / 10000 ** (two_i / d_model)  # (max_len, d_model/2)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.float()


class Tokenizer:
    """The running example's vocabulary: 13 tokens.

    Id 0 = ``<pad>``, 1 = ``<s>``, 2 = ``</s>``, 3..12 = letters ``a``..``j``.
    ``encode("c a b e d")`` gives ``[5, 3, 4, 7, 6]``.

    Raises:
        TypeError: ``encode`` gets something other than a string.
        ValueError: a character is not one of the letters a..j (spaces are ignored).
        TypeError: ``decode`` gets something other than a list, 1-D tensor or 1-D
            NumPy array of ids.
        ValueError: ``decode`` gets an id that is not an int in 0..12 (NumPy
            integers are ints; bools and floats are not).
    """

    specials = ["<pad>", "<s>", "</s>"]
    letters = "abcdefghij"

    def __init__(self):
        self.itos = self.specials + list(self.letters)
        self.stoi = {s: i for i, s in enumerate(self.itos)}
        assert (self.stoi["<pad>"], self.stoi["<s>"], self.stoi["</s>"]) == (PAD_ID, BOS_ID, EOS_ID)

    def __len__(self):
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        """'c a b e d' -> [5, 3, 4, 7, 6]; spaces are optional."""
        if not isinstance(text, str):
            raise TypeError(f"encode expects a string of letters a..j, got {type(text).__name__}")
        ids = []
        for position, ch in enumerate(text):
            if ch == " ":
                continue
            if ch not in self.letters:
                raise ValueError(
                    f"unknown character {ch!r} at position {position} of {text!r}: "
                    f"the vocabulary has only the letters {self.letters!r}"
                )
            ids.append(self.stoi[ch])
        return ids

    def decode(self, ids, strip: bool = True) -> str:
        """[5, 3, 4, 7, 6] -> 'c a b e d'. With ``strip``, stops at ``</s>`` and drops ``<s>``/``<pad>``."""
        ids = id_list(ids)  # a list, from a list, a 1-D tensor or a 1-D NumPy array; np.int64(5) -> 5
        out = []
        for i in ids:
            if not is_int(i) or not 0 <= i < len(self.itos):
                raise ValueError(f"token id must be an int in 0..{len(self.itos) - 1}, got {i!r}")
            if strip and i == EOS_ID:
                break
            if strip and i in (PAD_ID, BOS_ID):
                continue
            out.append(self.itos[i])
        return " ".join(out)
