"""Decoding with a trained model (paper section 6.1): greedy search, beam search with a length
penalty, beam search over a whole padded batch at once, and decoding many inputs by length.

Checkpoint averaging, the other half of section 6.1, is a file operation: ``utils.training.checkpoints``."""

from __future__ import annotations

import numbers
from typing import NamedTuple

import torch
from torch.nn.utils.rnn import pad_sequence

from ..core.checks import is_int
from ..core.masks import BOS_ID, EOS_ID, PAD_ID, padding_mask, target_mask
from .kv_cache import KVCache
from .transformer import Transformer


def _check_src(src, batch_of_one=False):
    if not isinstance(src, torch.Tensor):
        raise TypeError(f"src must be a torch.Tensor of token ids, got {type(src).__name__}")
    if src.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"src must hold integer token ids (torch.long), got dtype {src.dtype}")
    if src.dim() != 2 or src.size(1) == 0:
        raise ValueError(f"src must have shape (batch, src_len) with src_len >= 1, got {tuple(src.shape)}")
    if batch_of_one and src.size(0) != 1:
        raise ValueError(f"beam search decodes one sentence: src must have shape (1, src_len), got {tuple(src.shape)}")


def _check_model(model):
    """The decoders take any ``nn.Module`` with the Transformer's decoding interface:
    ``encode(src, src_mask) -> memory``, ``decode(tgt, memory, src_mask, tgt_mask) ->
    (batch, tgt_len, width)``, ``generator(y) -> logits`` and ``pad_id``, such as
    ``utils.model.transformer.Transformer`` or ``utils.model.recurrent.RecurrentSeq2Seq``."""
    if not isinstance(model, torch.nn.Module) or not all(
            hasattr(model, name) for name in ("encode", "decode", "generator", "pad_id")):
        raise TypeError(f"model must be a utils.model.transformer.Transformer or a model with its decoding interface "
                        f"(an nn.Module with encode, decode, generator and pad_id, such as "
                        f"utils.model.recurrent.RecurrentSeq2Seq), got {type(model).__name__}")
    if model.training:
        raise RuntimeError("model is in training mode (dropout is active): call model.eval() before decoding")


def _check_log_probs(logp, n):
    if not isinstance(logp, torch.Tensor) or not logp.is_floating_point():
        got = logp.dtype if isinstance(logp, torch.Tensor) else type(logp).__name__
        raise TypeError(f"next_log_probs must return a floating-point tensor (n, vocab), got {got}")
    if logp.dim() != 2 or logp.size(0) != n:
        raise ValueError(f"next_log_probs must return one row of log-probabilities per prefix: "
                         f"shape ({n}, vocab), got {tuple(logp.shape)}")
    if torch.isnan(logp).any():
        raise ValueError("next_log_probs returned NaN log-probabilities")


def _use_cache(model, cache):
    """Whether to decode with a ``KVCache``: ``cache`` None means "when the model is a Transformer"."""
    if cache is not None and not isinstance(cache, bool):
        raise TypeError(f"cache must be True, False or None (a cache when the model has one), got {cache!r}")
    if cache and not isinstance(model, Transformer):
        raise TypeError(f"cache=True needs the course's Transformer; a {type(model).__name__} re-reads its "
                        f"prefix at every step: pass cache=None or False")
    return isinstance(model, Transformer) if cache is None else cache


def _check_beam(beam_size, alpha, max_len):
    if not is_int(beam_size) or beam_size < 1:
        raise ValueError(f"beam_size must be an int >= 1, got {beam_size!r}")
    _check_alpha(alpha)
    if not is_int(max_len) or max_len < 1:
        raise ValueError(f"max_len must be an int >= 1, got {max_len!r}")


def _check_alpha(alpha):
    if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool) or not alpha >= 0:
        raise ValueError(f"alpha must be a number >= 0 (0 = no length penalty), got {alpha!r}")


def _check_length(length, alpha):
    if not is_int(length) or length < 0:
        raise ValueError(f"length must be an int >= 0 (a number of tokens), got {length!r}")
    _check_alpha(alpha)


def greedy_decode(model, src, max_len=None, return_probs=False, cache=None):
    """Greedy decoding: at each step append the single most probable token.

    Args:
        model: a trained ``Transformer`` in eval mode.
        src: (batch, src_len) source ids, padded with the model's ``pad_id``.
        max_len: most tokens to generate; default src_len + 50 (section 6.1).
        return_probs: also return the next-token distribution of every step.
        cache: True keeps the keys and values of earlier positions in a ``KVCache``;
            False re-reads the whole prefix at every step; None (the default) is True
            for the course's ``Transformer``, False for other models. The tokens are
            the same either way.

    Returns:
        ids (batch, steps) without the leading ``<s>``, on the device of ``src``
        (which must be the model's); a row that has emitted ``</s>`` is filled
        with ``PAD_ID`` afterwards. Decoding stops when every row has ended or
        after ``max_len`` steps. With ``return_probs``, a tuple (ids, probs)
        with probs (batch, steps, vocab_size).

    Raises:
        TypeError: src is not an integer tensor; cache is not a bool or None, or True
            for a model without a KV cache.
        ValueError: src is not 2-D, or max_len is not a positive int.
        RuntimeError: the model is in training mode.
    """
    _check_src(src)
    _check_model(model)
    max_len = src.size(1) + 50 if max_len is None else max_len
    _check_beam(1, 0.0, max_len)
    use_cache = _use_cache(model, cache)
    src_mask = padding_mask(src, model.pad_id)
    ys = torch.full((src.size(0), 1), BOS_ID, dtype=torch.long, device=src.device)
    ended = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    all_probs = []
    with torch.no_grad():
        memory = model.encode(src, src_mask)
        kv = KVCache(model, memory, src_mask) if use_cache else None
        for _ in range(max_len):
            if kv is not None:  # the last position only, from the keys and values kept
                y = kv.step(ys)
            else:  # the whole prefix again, keep the last position
                y = model.decode(ys, memory, src_mask, target_mask(ys, model.pad_id))[:, -1]
            probs = torch.softmax(model.generator(y), dim=-1)  # (batch, vocab)
            next_id = probs.argmax(dim=-1).masked_fill(ended, PAD_ID)
            ys = torch.cat([ys, next_id[:, None]], dim=1)
            all_probs.append(probs)
            ended |= next_id == EOS_ID
            if ended.all():
                break
    ids = ys[:, 1:]
    return (ids, torch.stack(all_probs, dim=1)) if return_probs else ids


def length_penalty(length, alpha=0.6):
    """lp(Y) = ((5 + |Y|) / 6) ** alpha  (Wu et al. 2016; alpha = 0.6 in section 6.1).

    A hypothesis is scored by log P(Y | X) / lp(Y). lp(1) = 1 and lp grows with
    the length, so dividing shrinks the (negative) log-probability of long
    outputs and offsets beam search's bias towards short ones.

    Raises:
        ValueError: ``length`` is not an int >= 0, or ``alpha`` not a number >= 0.
    """
    _check_length(length, alpha)
    return ((5 + length) / 6) ** alpha


class Hypothesis(NamedTuple):
    """One beam search output: the tokens (without ``<s>``), the sum of their
    log-probabilities, the penalised score log_prob / lp(len(tokens)), and whether
    it ended with ``</s>``."""

    tokens: tuple
    log_prob: float
    score: float
    finished: bool


def beam_search_core(next_log_probs, max_len, beam_size=4, alpha=0.6, early_stop=True):
    """Beam search over any next-token model (section 6.1: beam 4, alpha 0.6).

    ``next_log_probs(prefixes)`` takes (n, t) token ids, each row starting with
    ``<s>``, and returns (n, vocab) log-probabilities of the next token.
    At each step every live hypothesis is extended by every token, and the
    ``beam_size`` best extensions (by log-probability; all have the same
    length) are kept. An extension ending in ``</s>`` leaves the beam and is
    kept as finished, so the beam shrinks. Finished hypotheses of different
    lengths are compared by the penalised score log P / lp(|Y|).

    Stops when no live hypothesis is left, after ``max_len`` tokens (live ones
    are then returned unfinished), or, with ``early_stop``, when no live
    hypothesis can still beat the best finished one: with alpha >= 0 a live
    score can at best reach log P(prefix) / lp(max_len).

    Returns:
        A list of ``Hypothesis`` (at most ``beam_size``), best score first.

    Raises:
        TypeError: next_log_probs is not callable or returns no float tensor.
        ValueError: beam_size < 1, alpha < 0, or max_len < 1; next_log_probs
            returns a wrong shape or NaN.
    """
    _check_beam(beam_size, alpha, max_len)
    if not callable(next_log_probs):
        raise TypeError(f"next_log_probs must be a function of the prefixes, got {type(next_log_probs).__name__}")
    live = [((BOS_ID,), 0.0)]  # (prefix with <s>, sum of log-probabilities)
    finished = []
    for t in range(1, max_len + 1):
        logp = next_log_probs(torch.tensor([prefix for prefix, _ in live]))
        _check_log_probs(logp, len(live))
        totals = torch.tensor([lp for _, lp in live], dtype=torch.float64)[:, None] + logp.double()
        best = totals.flatten().topk(min(beam_size - len(finished), totals.numel()))
        live_next = []
        for total, index in zip(best.values.tolist(), best.indices.tolist()):
            row, token = divmod(index, totals.size(1))
            tokens = live[row][0] + (token,)
            if token == EOS_ID:
                finished.append(Hypothesis(tokens[1:], total, total / length_penalty(t, alpha), True))
            else:
                live_next.append((tokens, total))
        live = live_next
        if not live:
            break
        if early_stop and finished:
            best_finished = max(h.score for h in finished)
            if max(lp for _, lp in live) / length_penalty(max_len, alpha) <= best_finished:
                live = []
                break
    for tokens, total in live:  # reached max_len without </s>
        finished.append(Hypothesis(tokens[1:], total, total / length_penalty(max_len, alpha), False))
    return sorted(finished, key=lambda h: -h.score)


def beam_search(model, src, beam_size=4, alpha=0.6, max_extra=50, early_stop=True, cache=None):
    """Beam search with a trained model, configured as in section 6.1.

    Beam size 4, length penalty alpha = 0.6, at most src_len + 50 output
    tokens, early stop. The encoder runs once; ``next_log_probs`` decodes all
    live prefixes as one batch against copies of the memory, on the device of
    ``src`` (which must be the model's); the search itself runs on the CPU.
    With a ``KVCache`` (``cache``, as in ``greedy_decode``) each step computes only
    the newest position of each prefix, after reordering the cache to its parent.

    Args:
        model: a trained ``Transformer`` in eval mode.
        src: (1, src_len) source ids of one sentence.

    Returns:
        A list of ``Hypothesis``, best first (see ``beam_search_core``).

    Raises:
        TypeError: src is not an integer tensor; bad cache (see ``greedy_decode``).
        ValueError: src is not (1, src_len); bad beam_size, alpha or max_extra.
        RuntimeError: the model is in training mode.
    """
    _check_src(src, batch_of_one=True)
    _check_model(model)
    if not is_int(max_extra) or max_extra < 0:
        raise ValueError(f"max_extra must be an int >= 0, got {max_extra!r}")
    src_mask = padding_mask(src, model.pad_id)
    with torch.no_grad():
        memory = model.encode(src, src_mask)
    kv = KVCache(model, memory, src_mask) if _use_cache(model, cache) else None

    def next_log_probs(prefixes):  # (n, t) -> (n, vocab), back on the CPU
        n, prefixes = prefixes.size(0), prefixes.to(src.device)
        with torch.no_grad():
            if kv is not None:  # finds each prefix's parent row, computes the last position
                y = kv.step(prefixes)
            else:
                y = model.decode(prefixes, memory.expand(n, -1, -1), src_mask,
                                 target_mask(prefixes, model.pad_id))[:, -1]
            return torch.log_softmax(model.generator(y), dim=-1).cpu()

    return beam_search_core(next_log_probs, src.size(1) + max_extra, beam_size, alpha, early_stop)


def beam_search_batch(model, src, beam_size=4, alpha=0.6, max_extra=50, early_stop=True, cache=None):
    """Beam search for every row of a padded batch at once (section 6.1).

    Row i gets the search that ``beam_search(model, src[i:i+1, :n_i])`` runs on
    its own (n_i = its number of non-pad tokens, so its maximum output length is
    n_i + ``max_extra``): the same rules as ``beam_search_core``, step for step.
    What changes is the work per step: the live prefixes of all rows (they all
    have the same length t) go through the decoder as one batch, each against a
    copy of its row's memory. On a CPU that is many times faster than one search
    per row; the log-probabilities agree with the one-row search to rounding.
    With a ``KVCache`` (``cache``, as in ``greedy_decode``) the encoder-decoder keys
    and values are computed once per row of ``src``, the search hands the cache each
    prefix's parent, and each step computes only the newest position of each prefix.
    The model runs on the device of ``src`` (which must be the model's); the search
    itself runs on the CPU.

    Args:
        model: a trained ``Transformer`` in eval mode.
        src: (batch, src_len) source ids, padded with ``model.pad_id``; every
            row has at least one non-pad token.

    Returns:
        A list with one entry per row: its list of ``Hypothesis``, best first.

    Raises:
        TypeError: src is not an integer tensor; bad cache (see ``greedy_decode``).
        ValueError: src is not 2-D or has an all-padding row; bad beam_size,
            alpha or max_extra.
        RuntimeError: the model is in training mode.
    """
    _check_src(src)
    _check_model(model)
    if not is_int(max_extra) or max_extra < 0:
        raise ValueError(f"max_extra must be an int >= 0, got {max_extra!r}")
    lengths = (src != model.pad_id).sum(1).tolist()
    if min(lengths) == 0:
        raise ValueError(f"row {lengths.index(0)} of src is all padding; every row needs a token")
    max_lens = [n + max_extra for n in lengths]
    _check_beam(beam_size, alpha, max(max_lens))
    src_mask = padding_mask(src, model.pad_id)
    with torch.no_grad():
        memory = model.encode(src, src_mask)
    kv = KVCache(model, memory, src_mask) if _use_cache(model, cache) else None
    live = [[((BOS_ID,), 0.0)] for _ in lengths]  # per row: (prefix with <s>, sum of log-probabilities)
    parents = [[0] for _ in lengths]  # per row: each live prefix's place in the previous step's batch
    finished = [[] for _ in lengths]
    t = 0
    while any(live):
        t += 1
        rows = [i for i, beam in enumerate(live) for _ in beam]
        prefixes = torch.tensor([prefix for beam in live for prefix, _ in beam], device=src.device)
        with torch.no_grad():
            if kv is not None:  # the cache follows each prefix's parent
                parent = torch.tensor([p for ps in parents for p in ps], device=src.device)
                y = kv.step(prefixes, torch.tensor(rows, device=src.device), parent if t > 1 else None)
            else:
                y = model.decode(prefixes, memory[rows], src_mask[rows], target_mask(prefixes, model.pad_id))[:, -1]
            logp = torch.log_softmax(model.generator(y), dim=-1).cpu()
        start = 0
        for i, beam in enumerate(live):
            if not beam:
                continue
            # from here on, row i's step is beam_search_core's step
            totals = torch.tensor([lp for _, lp in beam], dtype=torch.float64)[:, None] + logp[start:start + len(beam)].double()
            best = totals.flatten().topk(min(beam_size - len(finished[i]), totals.numel()))
            live_next, parents[i] = [], []
            for total, index in zip(best.values.tolist(), best.indices.tolist()):
                row, token = divmod(index, totals.size(1))
                tokens = beam[row][0] + (token,)
                if token == EOS_ID:
                    finished[i].append(Hypothesis(tokens[1:], total, total / length_penalty(t, alpha), True))
                else:
                    live_next.append((tokens, total))
                    parents[i].append(start + row)
            start += len(beam)
            live[i] = live_next
            if live_next and early_stop and finished[i]:
                best_finished = max(h.score for h in finished[i])
                if max(lp for _, lp in live_next) / length_penalty(max_lens[i], alpha) <= best_finished:
                    live[i], parents[i] = [], []
            if live[i] and t == max_lens[i]:  # reached max_len without </s>
                for tokens, total in live[i]:
                    finished[i].append(Hypothesis(tokens[1:], total, total / length_penalty(max_lens[i], alpha), False))
                live[i], parents[i] = [], []
    return [sorted(f, key=lambda h: -h.score) for f in finished]


def decode_by_length(words, vocab, batch_size, decode_batch) -> list:
    """Decode many inputs ``batch_size`` at a time, grouped by length (little padding).

    ``vocab.encode_word(w)`` turns each input string into source ids (G2P's letters, a
    translation's German pieces); ``decode_batch(src)`` receives a batch padded with
    ``PAD_ID``, src (batch, S), and returns one output per row (whatever the task decodes
    to: a list of phones, a sentence). The outputs come back in the order of ``words``.

    Raises:
        TypeError: ``words`` is not a list of strings; ``vocab`` has no ``encode_word`` method.
        ValueError: ``batch_size`` is not a positive int.
    """
    if isinstance(words, str) or not isinstance(words, (list, tuple)) or not all(isinstance(w, str) for w in words):
        raise TypeError(f"words must be a list of strings such as ['read', 'cat'], got {words!r:.80}")
    if not is_int(batch_size) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    # Duck-typed: any vocabulary with encode_word (G2P's G2PVocab, chapter 15's own copy of it, translation's text)
    if not callable(getattr(vocab, "encode_word", None)):
        raise TypeError(f"vocab must have an encode_word method (such as a G2PVocab), got {type(vocab).__name__}")
    order = sorted(range(len(words)), key=lambda i: len(words[i]))
    out = [None] * len(words)
    for k in range(0, len(order), batch_size):
        idx = order[k : k + batch_size]
        src = pad_sequence([torch.tensor(vocab.encode_word(words[i]), dtype=torch.long) for i in idx],
                           batch_first=True, padding_value=PAD_ID)
        for i, output in zip(idx, decode_batch(src)):
            out[i] = output
    return out
