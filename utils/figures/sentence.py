"""Chapter 2's sentence figure: pick a query word, see its scores, weights and output.

The reader clicks a word (or a row of the heat map, or uses the keyboard) to make it
the query; a switch applies the causal mask; another selects head 1, head 2 or both
heads (their outputs concatenated, as multi-head attention does before W^O; section
3.2.2). The browser computes the numbers from the vectors given here with equation 1
of section 3.2.1, so every query, mask and head can be explored without a kernel.
"""

from __future__ import annotations

import html
import math

from ..core.checks import is_int
from ..core.masks import causal_mask
from ..model.attention import scaled_dot_product_attention
from .base import InteractiveFigure, float_matrix

#: Every text the script writes (``js/sentence.js``), in English; ``{name}`` is filled by the script.
STRINGS = {
    "key_vector": "key vector", "score": "score", "weight": "weight",
    "score_of_head": "score h{head}", "weight_of_head": "weight h{head}", "masked": "masked", "key": "key",
    "keys_caption": 'Keys seen by the query "{word}", head {head}',
    "keys_caption_both": 'Keys seen by the query "{word}" (h1, h2: head 1, head 2)',
    "output_of": "Output of \u201c{word}\u201d:", "output_both": "o = [o(head 1), o(head 2)], concatenated",
    "output_head": "o = \u03a3 w\u00b7v, head {head}",
    "heatmap_caption": "Weights in %, head {head} (rows: queries)",
    "heatmap_caption_mask": "Weights in %, head {head}, causal mask (rows: queries)",
    "row_sum": "row sum", "query_key": "query \\ key",
    "summary": 'Query "{word}", {heads}, {mask}.', "both_heads": "both heads", "head_n": "head {head}",
    "mask_on": "causal mask on", "mask_off": "no mask",
}


def sentence_figure(words, keys, values, queries, query=0, figure_id="fig-sentence"):
    """Interactive attention over one sentence, for every query word, mask and head.

    Args:
        words: the n words of the sentence (strings).
        keys: (n, d_k) tensor, one key per word, shared by the heads.
        values: (n, d_v) tensor, one value per word, shared by the heads.
        queries: two (n, d_k) tensors, the queries of head 1 and of head 2.
        query: index of the word that is the query at first (the default state).
        figure_id: HTML id of the figure (unique on its page).

    Returns:
        An :class:`~utils.figures.base.InteractiveFigure`; its description states the
        default numbers (head 1, no mask), computed here with
        ``scaled_dot_product_attention``.

    Raises:
        TypeError, ValueError: an input of the wrong kind or shape, a query index out of range.
    """
    if not isinstance(words, (list, tuple)) or not words or not all(isinstance(w, str) and w for w in words):
        raise TypeError(f"words must be a non-empty list of non-empty strings, got {words!r}")
    n = len(words)
    keys = float_matrix(keys, "keys")
    if keys.size(0) != n:
        raise ValueError(f"keys must have one row per word ({n}), got shape {tuple(keys.shape)}")
    d_k = keys.size(1)
    values = float_matrix(values, "values")
    if values.size(0) != n:
        raise ValueError(f"values must have one row per word ({n}), got shape {tuple(values.shape)}")
    if not isinstance(queries, (list, tuple)) or len(queries) != 2:
        raise ValueError(f"queries must be a list of two (n, d_k) tensors (head 1, head 2), got {type(queries).__name__}"
                         + (f" of length {len(queries)}" if isinstance(queries, (list, tuple)) else ""))
    queries = [float_matrix(q, f"queries[{h}]", (n, d_k)) for h, q in enumerate(queries)]
    if not is_int(query) or not 0 <= query < n:
        raise ValueError(f"query must be a word index in 0..{n - 1}, got {query!r}")
    query = int(query)

    out, weights = scaled_dot_product_attention(queries[0][query:query + 1], keys, values)
    scores = (queries[0][query] @ keys.T / math.sqrt(d_k)).tolist()
    w = weights[0].tolist()
    top = max(range(n), key=lambda j: w[j])
    parts = ", ".join(f"{word} {100 * x:.1f}%" for word, x in zip(words, w))
    description = (
        f'Default state: the query is "{words[query]}", head 1, no mask. Its scaled scores q·k/√{d_k} run from '
        f"{min(scores):.4f} to {max(scores):.4f}; the softmax weights are {parts}, so "
        f'"{words[top]}" gets the most. The output is o = [{", ".join(f"{x:.4f}" for x in out[0].tolist())}]. '
        f"The heat map below the table shows the weights of all {n} queries, one row each, every row summing to 100%."
    )
    causal = causal_mask(n)
    assert bool(causal[query, : query + 1].all())  # the mask the browser applies: keys 0..i visible

    fid = figure_id
    word_buttons = "".join(
        f'<button type="button" data-word="{j}" aria-pressed="{"true" if j == query else "false"}">'
        f"{html.escape(word)}</button>" for j, word in enumerate(words))
    head_buttons = "".join(
        f'<button type="button" data-head="{h}" aria-pressed="{"true" if h == "1" else "false"}">{label}</button>'
        for h, label in (("1", "head 1"), ("2", "head 2"), ("both", "both heads")))
    body = (
        '<div class="fig-controls">'
        f'<fieldset><legend>Query word (click a word or a row of the heat map)</legend>{word_buttons}</fieldset>'
        f"<fieldset><legend>Head</legend>{head_buttons}</fieldset>"
        f'<label for="{fid}-mask"><input type="checkbox" id="{fid}-mask" data-part="mask"> '
        "causal mask (hide the words after the query)</label>"
        "</div>"
        '<p class="fig-note" data-part="summary" aria-live="polite"></p>'
        '<div class="fig-row"><div data-part="keys"></div><div data-part="output"></div></div>'
        f'<div class="fig-row" data-part="heatmaps" role="img" aria-label="Heat map of the attention weights of '
        f'all {n} words, in percent: rows are queries, columns are keys; each cell holds its number"></div>'
    )
    data = {
        "words": list(words), "keys": keys.tolist(), "values": values.tolist(),
        "queries": {"1": queries[0].tolist(), "2": queries[1].tolist()}, "d_k": d_k, "query": query,
    }
    caption = ("Attention in a sentence. Choose the query word, the head and the causal mask; the table gives each "
               "key's vector, its scaled score q·k/√d_k and its softmax weight, then the output o = Σ w·v; the heat "
               "map holds all the weights (rows are queries).")
    return InteractiveFigure("sentence", fid, body, caption, description, data, strings=STRINGS)
