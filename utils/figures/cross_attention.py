"""Chapter 16's cross-attention figure: which German pieces each English piece reads.

``cross_attention_weights`` runs one sentence pair through a trained
:class:`~utils.model.transformer.Transformer` and returns the weights of every decoder layer's
encoder-decoder attention (section 3.2.3): queries from the decoder, keys and values
from the encoder's output. ``cross_attention_figure`` shows them as a heat map, one row
per English output piece (the decoder position that predicts it), one column per German
source piece. The reader picks the layer (or all layers averaged), the head (or the
heads averaged) and the English piece; the figure writes that row's weights as text,
largest first, and names the German piece it attends to most. The averages are
computed in the browser from the per-head weights given here.

SentencePiece marks the start of a word with "▁" (U+2581). The figure shows that mark
as "␣" (U+2423, the open box that stands for a space), so "▁Haus" reads "␣Haus" and a
piece that continues a word ("tür") has none; the caption says so.
"""

from __future__ import annotations

import html

import torch

from ..core.checks import is_int
from ..core.masks import BOS_ID
from ..model.transformer import Transformer
from .base import InteractiveFigure

WORD_START = "▁"  # SentencePiece's mark of a word start
SHOWN_WORD_START = "␣"  # how the figure shows it
#: Decimals of the weights given to the browser. The figure shows 0.1%, rounded once from the
#: model's float32 weights: with 4 decimals a weight of 0.55153 went to the browser as 0.5515
#: and showed as 55.1% (rounded twice) instead of 55.2%; 8 decimals keep the float32 value to
#: within 5e-9, far inside the last shown digit (averages over heads and layers too).
DIGITS = 8
#: Every text the script writes (``js/cross_attention.js``), in English; ``{name}`` is filled by the script.
STRINGS = {
    "where": "{layer}, {head}", "layer_n": "layer {layer}", "layers_averaged": "layers averaged",
    "head_n": "head {head}", "heads_averaged": "heads averaged",
    "sorted_caption": "\u201c\u2192 {piece}\u201d (input \u201c{input}\u201d), {where}: largest first",
    "german_piece": "German piece", "position": "position", "weight": "weight", "rank": "rank", "rank_n": "{rank}.",
    "heatmap_title": "Weights in %, {where} (rows: the decoder position predicting each English piece)",
    "row_sum": "row sum", "heatmap_corner": "predicting \\ German",
    "summary": "{where}: the position that predicts \u201c{piece}\u201d (input \u201c{input}\u201d) attends most "
               "to \u201c{top}\u201d (German piece {position} of {pieces}, {weight}).",
}


def _ids(x, name):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of token ids, shape (1, len), got {type(x).__name__}")
    if x.dtype != torch.long:
        raise TypeError(f"{name} must hold torch.long token ids, got dtype {x.dtype}")
    if x.dim() != 2 or x.size(1) < 1:
        raise ValueError(f"{name} must have shape (1, len) with len >= 1, got {tuple(x.shape)}")
    if x.size(0) != 1:
        raise ValueError(f"{name} must hold one example (batch 1), shape (1, len), got batch {x.size(0)}: "
                         f"shape {tuple(x.shape)}")
    return x


def cross_attention_weights(model, src, tgt_in) -> torch.Tensor:
    """The encoder-decoder attention weights of every decoder layer, for one sentence pair.

    Section 3.2.3: in the "encoder-decoder attention" layers the queries come from the
    previous decoder layer and the keys and values from the encoder's output, so every
    decoder position attends over all the source positions. This runs ``model(src,
    tgt_in)`` in eval mode (no dropout) without gradients, with each decoder layer's
    ``cross_attn.keep_weights`` set, and collects ``cross_attn.weights``. The model's
    mode, ``keep_weights`` and ``weights`` are restored afterwards, also when the model
    raises.

    Args:
        model: a :class:`~utils.model.transformer.Transformer` (in chapter 16 the trained German to
            English model).
        src: (1, src_len) torch.long source ids (the German sentence).
        tgt_in: (1, tgt_len) torch.long decoder input: ``<s>`` (``BOS_ID``) then the
            English target without its last piece (the target shifted right).

    Returns:
        A float tensor of shape (N, h, tgt_len, src_len): layer, head, decoder position,
        source position. Row [l, k, t] is what decoder position t (which predicts target
        piece t) reads from the source in layer l + 1, head k + 1; it sums to 1.

    Raises:
        TypeError: ``model`` is not a Transformer; ``src`` or ``tgt_in`` is not a
            torch.long tensor.
        ValueError: ``src`` or ``tgt_in`` is not of shape (1, len >= 1) (one example),
            or ``tgt_in`` does not start with ``<s>``; the model's own checks (an id
            outside the vocabulary, a sequence longer than ``max_len``) pass through.
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a utils.model.transformer.Transformer, got {type(model).__name__}")
    src, tgt_in = _ids(src, "src"), _ids(tgt_in, "tgt_in")
    if tgt_in[0, 0].item() != BOS_ID:
        raise ValueError(f"tgt_in must start with <s> (id {BOS_ID}), the decoder's first input; "
                         f"got {tgt_in[0, 0].item()}")
    attn = [layer.cross_attn for layer in model.decoder_layers]
    kept = [(a.keep_weights, a.weights) for a in attn]
    was_training = model.training
    model.eval()
    try:
        for a in attn:
            a.keep_weights = True
        with torch.no_grad():
            model(src, tgt_in)
        weights = torch.stack([a.weights[0] for a in attn])  # (N, h, tgt_len, src_len)
    finally:
        for a, (keep, w) in zip(attn, kept):
            a.keep_weights, a.weights = keep, w
        model.train(was_training)
    return weights


def show_piece(piece: str) -> str:
    """A SentencePiece piece as the figure shows it: the word-start mark "▁" becomes "␣"."""
    return piece.replace(WORD_START, SHOWN_WORD_START)


def _pieces(x, name):
    if not isinstance(x, (list, tuple)) or not x or not all(isinstance(p, str) and p for p in x):
        raise TypeError(f"{name} must be a non-empty list of non-empty strings (pieces), got {x!r}")
    return [show_piece(p) for p in x]


def _average(rows):
    """The element-wise mean of equally long lists of numbers."""
    return [sum(col) / len(rows) for col in zip(*rows)]


def cross_attention_figure(src_pieces, tgt_pieces, weights, layer=None, head=None, query=0,
                           figure_id="fig-cross-attention"):
    """Interactive heat map of the cross-attention of one sentence pair (section 3.2.3).

    Args:
        src_pieces: the src_len source pieces (German), one per column, for example
            ``sp.id_to_piece(i)`` of each source id.
        tgt_pieces: the tgt_len pieces the decoder *predicts*, one per row: the target
            shifted left, ``tgt_in[1:]`` then ``</s>``. Row t is decoder position t, whose
            input is ``<s>`` (t = 0) or ``tgt_pieces[t - 1]``.
        weights: (N, h, tgt_len, src_len) floating-point tensor, as returned by
            :func:`cross_attention_weights`; each row sums to 1.
        layer: the layer shown at first, 1..N (default N, the last layer).
        head: the head shown at first, 1..h, or None for the heads averaged (default).
        query: index of the English piece selected at first (default 0, the first).
        figure_id: HTML id of the figure (unique on its page).

    "▁" (SentencePiece's word start) is shown as "␣" in every label (see
    :func:`show_piece`). The weights are given to the browser rounded to ``DIGITS`` (8) decimals;
    the averages over heads and layers are computed from those, here (for the
    description) and in the browser alike, and shown in percent with one decimal.

    Returns:
        An :class:`~utils.figures.base.InteractiveFigure` whose description gives the
        default state's numbers: the selected row's weights, largest first.

    Raises:
        TypeError: pieces that are not non-empty lists of strings; ``weights`` not a 4-D
            floating-point tensor.
        ValueError: the sizes of ``weights`` do not match the piece lists; weights that
            are not finite, negative or whose rows do not sum to 1; ``layer``, ``head``
            or ``query`` out of range.
    """
    src = _pieces(src_pieces, "src_pieces")
    tgt = _pieces(tgt_pieces, "tgt_pieces")
    if not isinstance(weights, torch.Tensor) or not weights.is_floating_point() or weights.dim() != 4:
        is_tensor = isinstance(weights, torch.Tensor)
        got = f"a {weights.dim()}-D {weights.dtype} tensor" if is_tensor else type(weights).__name__
        raise TypeError(f"weights must be a 4-D floating-point tensor (N, h, tgt_len, src_len), got {got}")
    n_layers, n_heads, t_len, s_len = weights.shape
    if (t_len, s_len) != (len(tgt), len(src)):
        raise ValueError(f"weights must have shape (N, h, tgt_len={len(tgt)}, src_len={len(src)}) "
                         f"(one row per English piece, one column per German piece), got {tuple(weights.shape)}")
    if n_layers < 1 or n_heads < 1:
        raise ValueError(f"weights must hold at least one layer and one head, got shape {tuple(weights.shape)}")
    w = weights.detach().double().cpu()
    if not torch.isfinite(w).all() or (w < 0).any():
        raise ValueError("weights must be finite and non-negative (attention weights)")
    worst = (w.sum(-1) - 1).abs().max().item()
    if worst > 1e-3:
        raise ValueError(f"each row of weights must sum to 1 (softmax weights), but one is off by {worst:.3g}")
    if layer is None:
        layer = n_layers
    if not is_int(layer) or not 1 <= layer <= n_layers:
        raise ValueError(f"layer must be an int in 1..{n_layers} (N), got {layer!r}")
    if head is not None and (not is_int(head) or not 1 <= head <= n_heads):
        raise ValueError(f"head must be None (heads averaged) or an int in 1..{n_heads} (h), got {head!r}")
    if not is_int(query) or not 0 <= query < t_len:
        raise ValueError(f"query must be an English piece index in 0..{t_len - 1}, got {query!r}")
    layer, query = int(layer), int(query)
    head = "avg" if head is None else str(int(head))

    # What the browser gets, and what the description is computed from: the same rounded numbers.
    rounded = [[[[round(x, DIGITS) for x in row] for row in mat] for mat in per_layer] for per_layer in w.tolist()]
    per_head = rounded[layer - 1]
    row = per_head[int(head) - 1][query] if head != "avg" else _average([m[query] for m in per_head])
    order = sorted(range(s_len), key=lambda j: (-row[j], j))  # as the browser sorts: ties by position
    top = order[0]
    inp = "<s>" if query == 0 else tgt[query - 1]
    parts = ", ".join(f"{src[j]} {100 * row[j]:.1f}%" for j in order)
    head_text = "the heads averaged" if head == "avg" else f"head {head}"
    description = (
        f"Default state: layer {layer} of {n_layers}, {head_text} (of {n_heads}); the decoder position that "
        f'predicts "{tgt[query]}" (its input is "{inp}"). Its weights over the {s_len} German pieces, largest '
        f'first: {parts}; so it attends most to "{src[top]}". The heat map holds the weights of all {t_len} '
        f"English pieces, one row each, every row summing to 100%."
    )

    fid = figure_id
    def buttons(kind, n, pressed, average):
        return "".join(
            f'<button type="button" data-{kind}="{v}" aria-pressed="{str(v == pressed).lower()}">{label}</button>'
            for v, label in [(str(k), f"{kind} {k}") for k in range(1, n + 1)] + [("avg", average)])

    layer_buttons = buttons("layer", n_layers, str(layer), "layers averaged")
    head_buttons = buttons("head", n_heads, head, "heads averaged")
    piece_buttons = "".join(
        f'<button type="button" data-query="{t}" aria-pressed="{"true" if t == query else "false"}" '
        f'aria-label="predicting {html.escape(p)}, piece {t + 1} of {t_len}">{html.escape(p)}</button>'
        for t, p in enumerate(tgt))
    compact = (f"#{fid} table.fig-num{{font-size:.78em}}"  # a sentence pair's heat map fits the book's column
               f"#{fid} table.fig-num th,#{fid} table.fig-num td{{padding:.05em .25em}}")
    body = (
        f"<style>{compact}</style>"
        '<div class="fig-controls">'
        f"<fieldset><legend>Decoder layer</legend>{layer_buttons}</fieldset>"
        f"<fieldset><legend>Head</legend>{head_buttons}</fieldset>"
        "<fieldset><legend>English piece being predicted (or click a row of the heat map; "
        f"the arrow keys move in the heat map)</legend>{piece_buttons}</fieldset>"
        "</div>"
        '<p class="fig-note" data-part="summary" aria-live="polite"></p>'
        # shown by the script only while the heat map is wider than its box (a phone): a cue in words
        '<p class="fig-note fig-scroll-cue" data-part="scrollcue" hidden>The heat map is wider than the screen: '
        "scroll it sideways to see every German piece.</p>"
        '<div class="fig-row"><div data-part="sorted"></div>'
        f'<div data-part="heatmap" tabindex="0" role="img" aria-label="Heat map of the cross-attention weights in '
        f"percent: {t_len} rows, one per English piece being predicted, {s_len} columns, one per German piece; "
        'each cell holds its number. The up and down arrow keys choose the English piece."></div></div>'
    )
    data = {"src": src, "tgt": tgt, "weights": rounded, "layer": str(layer), "head": head, "query": query}
    caption = (f"Cross-attention (encoder-decoder attention, section 3.2.3) of one sentence pair: {t_len} English "
               f"pieces read {s_len} German pieces. Choose the decoder layer, the head and the English piece; the "
               "table lists that piece's weights over the German pieces, largest first, and the heat map holds "
               "every row (row \u201c\u2192 x\u201d is the decoder position that predicts x). "
               "\u2423 marks the start of a word (SentencePiece's \u2581).")
    return InteractiveFigure("cross_attention", fid, body, caption, description, data, digits=DIGITS,
                             strings=STRINGS)
