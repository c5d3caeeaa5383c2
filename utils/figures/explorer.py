"""Chapter 11's explorer: one example through the trained tiny model, in 14 steps.

``explorer_steps`` runs the model's own modules on a source and a decoder input and
records, at each of the 14 steps of the trace (input, encoder, decoder, output), the
tensor's shape and a few of its numbers: where the tensor is a vector per token, the
first four numbers of the first source token's vector (its query, key and value in head
1 at the Q, K, V step; the logits of the first and last decoder positions at the logits
step), whole attention matrices (head 1), the top next-token probabilities at the end. ``explorer_figure`` shows them one step at a
time, with buttons, a slider and the arrow keys. Nothing is typed: every number comes
from the model passed in (in chapter 11, the shipped checkpoint).
"""

from __future__ import annotations

import math

import torch

from ..core.checks import is_int
from ..core.masks import padding_mask, target_mask
from ..model.embeddings import Tokenizer
from ..model.transformer import Transformer
from .base import InteractiveFigure

N_FIRST = 4  # numbers shown of a vector
TOP = 3  # next-token candidates shown per position
#: The texts the script writes (``js/explorer.js``) besides each step's own, in English.
STRINGS = {
    "heading": "step {step} of {steps}: {title}, shape", "ids_caption": "Token ids", "id": "id",
    "vector_caption": "First {shown} of {width} numbers",
    "matrix_caption": "Weights of head {head}, layer {layer} (rows: queries, columns: keys)",
    "query_key": "query \\ key", "masked": "masked", "top_caption": "Most probable next tokens",
    "rank_one": "1st", "rank_two": "2nd", "rank_three": "3rd",
    "phase_input": "input", "phase_encoder": "encoder", "phase_decoder": "decoder", "phase_output": "output",
}


def _ids(x, name):
    if not isinstance(x, torch.Tensor) or x.dtype != torch.long or x.dim() != 2 or x.size(0) != 1:
        got = f"{x.dtype} tensor of shape {tuple(x.shape)}" if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"{name} must be a (1, len) torch.long tensor of token ids, got {got}")
    return x


def explorer_steps(model, src, tgt_in, tokenizer=None):
    """The 14 steps of ``src`` (encoder) and ``tgt_in`` (decoder input) through ``model``.

    Args:
        model: a trained :class:`~utils.model.transformer.Transformer` (put in eval mode for the trace,
            then restored).
        src: (1, src_len) long ids, for example ``c a b e d`` = [[5, 3, 4, 7, 6]].
        tgt_in: (1, tgt_len) long ids, the decoder input starting with ``<s>``.
        tokenizer: maps ids to tokens (default :class:`~utils.model.embeddings.Tokenizer`).

    Returns:
        A list of 14 dicts with ``phase`` (input, encoder, decoder, output), ``title``,
        ``shape`` (tuple) and ``kind``: "ids" (``ids``, ``tokens``), "vector" (``rows``:
        [(label, first four numbers)] and ``width``), "matrix" (``matrix``, ``rows``,
        ``cols``, ``masked``, ``head``, ``layer``) or "top" (``rows``: per position the
        top candidates as (token, probability)). ``tensor`` holds the full tensor.

    Raises:
        TypeError: ``model`` is not a Transformer. ValueError: ids of the wrong kind.
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a utils.model.transformer.Transformer, got {type(model).__name__}")
    src, tgt_in = _ids(src, "src"), _ids(tgt_in, "tgt_in")
    tok = tokenizer or Tokenizer()
    src_tokens = [tok.itos[i] for i in src[0].tolist()]
    tgt_tokens = [tok.itos[i] for i in tgt_in[0].tolist()]
    first = src_tokens[0]
    enc1, dec1, dec2 = model.encoder_layers[0], model.decoder_layers[0], model.decoder_layers[-1]
    attn = [enc1.self_attn, dec1.self_attn, dec2.cross_attn]
    was_training, kept = model.training, [a.keep_weights for a in attn]
    model.eval()
    for a in attn:
        a.keep_weights = True
    try:
        with torch.no_grad():
            src_mask, tgt_mask = padding_mask(src, model.pad_id), target_mask(tgt_in, model.pad_id)
            d_model = model.embed.lut.embedding_dim
            emb = model.embed.lut(src)
            scaled = emb * math.sqrt(d_model)
            x = model.embed_positions(src)
            mha = enc1.self_attn
            q, k, v = (mha.split_heads(w(x)) for w in (mha.w_q, mha.w_k, mha.w_v))
            a1 = enc1.norm1(x + mha(x, x, x, src_mask))
            enc_weights = mha.weights
            hidden = torch.relu(enc1.ffn.w_1(a1))
            memory = model.encode(src, src_mask)
            logits = model.generator(model.decode(tgt_in, memory, src_mask, tgt_mask))
            self_weights, cross_weights = dec1.self_attn.weights, dec2.cross_attn.weights
            probs = torch.softmax(logits, dim=-1)
    finally:
        for a, keep in zip(attn, kept):
            a.keep_weights = keep
        model.train(was_training)
    n_dec = len(model.decoder_layers)

    def vector(phase, title, t, note):
        return dict(phase=phase, title=title, shape=tuple(t.shape), kind="vector", tensor=t, width=t.size(-1),
                    rows=[(f"{first} (position 0)", t[0, 0, :N_FIRST].tolist())], note=note)

    def matrix(phase, title, w, rows, cols, layer, note, mask=None):
        masked = torch.zeros_like(w[0, 0], dtype=torch.bool) if mask is None else ~mask.expand_as(w[0, 0])
        return dict(phase=phase, title=title, shape=tuple(w.shape), kind="matrix", tensor=w, head=1, layer=layer,
                    matrix=w[0, 0].tolist(), rows=rows, cols=cols, masked=masked.tolist(), note=note)

    top = probs[0].topk(TOP, dim=-1)
    return [
        dict(phase="input", title="source ids", shape=tuple(src.shape), kind="ids", tensor=src,
             ids=src[0].tolist(), tokens=src_tokens, note="one id per letter of the source"),
        vector("input", "embeddings E[ids]", emb, "a row of the shared table per token"),
        vector("input", f"times sqrt(d_model) = {math.sqrt(d_model):g}", scaled, "section 3.4"),
        vector("input", "plus positional encoding", x, "section 3.5; position 0 adds sin 0 = 0, cos 0 = 1, ..."),
        dict(phase="encoder", title="encoder layer 1: Q, K, V split into heads", shape=tuple(q.shape), kind="vector",
             tensor=torch.stack([q, k, v]), width=q.size(-1),
             rows=[(f"{name} of {first}, head 1", t[0, 0, 0, :N_FIRST].tolist()) for name, t in (("q", q), ("k", k), ("v", v))],
             note=f"{q.size(1)} heads of d_k = {q.size(-1)} each"),
        matrix("encoder", "encoder layer 1: self-attention weights", enc_weights, src_tokens, src_tokens, 1,
               "every token sees every token (no padding)"),
        vector("encoder", "encoder layer 1: add & norm", a1, "LayerNorm(x + attention)"),
        vector("encoder", "encoder layer 1: feed-forward hidden layer", hidden,
               f"ReLU(x W1 + b1): {(hidden == 0).float().mean().item():.1%} of its {hidden.numel():,} numbers are 0"),
        vector("encoder", f"memory (after {len(model.encoder_layers)} encoder layers)", memory,
               "what every cross-attention reads"),
        dict(phase="decoder", title="decoder input", shape=tuple(tgt_in.shape), kind="ids", tensor=tgt_in,
             ids=tgt_in[0].tolist(), tokens=tgt_tokens, note="<s> then the target shifted right"),
        matrix("decoder", "decoder layer 1: masked self-attention weights", self_weights, tgt_tokens, tgt_tokens, 1,
               "position t sees positions 0..t; the cells above the diagonal are masked", tgt_mask[0, 0]),
        matrix("decoder", f"decoder layer {n_dec}: cross-attention weights", cross_weights, tgt_tokens, src_tokens,
               n_dec, f"{tgt_in.size(1)} queries from the decoder, {src.size(1)} keys from the memory: "
               + ("not square, " if tgt_in.size(1) != src.size(1) else "") + "no causal mask"),
        dict(phase="output", title="logits y E^T", shape=tuple(logits.shape), kind="vector", tensor=logits,
             width=logits.size(-1), rows=[(f"position {t} ({tgt_tokens[t]})", logits[0, t, :N_FIRST].tolist())
                                          for t in (0, logits.size(1) - 1)],
             note="the shared table is the output layer; first 4 of the 13 logits"),
        dict(phase="output", title="next-token probabilities", shape=tuple(probs.shape), kind="top", tensor=probs,
             rows=[(f"after {tgt_tokens[t]}", [(tok.itos[i], p) for i, p in zip(top.indices[t].tolist(),
                                                                             top.values[t].tolist())])
                   for t in range(probs.size(1))],
             note=f"softmax of the logits; top {TOP} of each position"),
    ]


def explorer_figure(steps, step=0, figure_id="fig-explorer"):
    """Show the steps of :func:`explorer_steps` one at a time.

    Args:
        steps: the list returned by :func:`explorer_steps`.
        step: index of the step shown first (the default state).
        figure_id: HTML id of the figure.

    Raises:
        ValueError: ``steps`` is empty or malformed, or ``step`` is out of range.
    """
    if not isinstance(steps, list) or not steps or not all(isinstance(s, dict) and "kind" in s for s in steps):
        raise ValueError("steps must be the non-empty list of dicts returned by explorer_steps")
    if not is_int(step) or not 0 <= step < len(steps):
        raise ValueError(f"step must be an index in 0..{len(steps) - 1}, got {step!r}")
    step = int(step)
    n = len(steps)
    # The words of each step (title, note, row labels) go to the figure's strings, so that a
    # translated edition translates them; the data keep the numbers, shapes and tokens.
    strings = dict(STRINGS)
    shown = []
    for i, s in enumerate(steps):
        strings[f"s{i}.title"], strings[f"s{i}.note"] = s["title"], s["note"]
        d = {k: (list(v) if k == "shape" else v) for k, v in s.items()
             if k in ("phase", "shape", "kind", "ids", "tokens", "cols", "matrix", "masked", "head", "layer", "width")}
        if s["kind"] == "matrix":
            d["labels"] = s["rows"]  # the query tokens
        elif "rows" in s:
            d["rows"] = [numbers for _, numbers in s["rows"]]
            strings.update({f"s{i}.row{r}": label for r, (label, _) in enumerate(s["rows"])})
        shown.append(d)
    data = {"steps": shown, "step": step}
    s0 = steps[step]
    description = (
        f"Default state: step {step + 1} of {n}, {s0['phase']}: {s0['title']}, shape {tuple(s0['shape'])}"
        + (f", ids {s0['ids']} for {' '.join(s0['tokens'])}" if s0["kind"] == "ids" else "")
        + ". The steps: " + "; ".join(f"{i + 1} {s['title']} {tuple(s['shape'])}" for i, s in enumerate(steps)) + "."
    )
    fid = figure_id
    body = (
        '<div class="fig-controls">'
        '<button type="button" data-part="prev" aria-label="previous step">◀ previous</button>'
        f'<span class="fig-ctl">'
        f'<label for="{fid}-step">step <output data-part="step-out" for="{fid}-step">{step + 1}</output> of {n}</label>'
        f'<input type="range" id="{fid}-step" data-part="step" min="1" max="{n}" step="1" value="{step + 1}"></span>'
        '<button type="button" data-part="next" aria-label="next step">next ▶</button>'
        '<span class="fig-note">(or the arrow keys while the figure has the focus)</span>'
        "</div>"
        '<div data-part="phases" role="img" aria-label="The four phases in order: input, encoder, decoder, output; '
        'the current one is written in capitals between brackets"></div>'
        '<div data-part="view" aria-live="polite" tabindex="0" aria-label="the current step (the arrow keys change it)"></div>'
    )
    caption = (f"The explorer: {' '.join(steps[0].get('tokens', []))} through the trained tiny model in {n} steps, "
               "from the source ids to the next-token probabilities. Each step names its phase and the tensor's "
               "shape and shows its numbers.")
    return InteractiveFigure("explorer", fid, body, caption, description, data, digits=4, strings=strings)

