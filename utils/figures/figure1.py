"""The paper's Figure 1 (the encoder-decoder architecture), drawn for a real model.

Not an interactive figure: a matplotlib drawing, like ``utils/book/plotting.py``. The
shapes written on its arrows are not typed in: :func:`figure1_shapes` runs the model
once on one example with forward hooks and records the shape of every tensor that
flows along an arrow of the paper's diagram; :func:`draw_figure1` writes them there.

    from .. import TINY, shift_right, Transformer
    shapes = figure1_shapes(Transformer(**TINY).eval(), src, shift_right(tgt))
    draw_figure1(shapes)

Every block is labelled with its name; colour only repeats what the label says
(attention orange, Add & Norm yellow, feed-forward blue, embedding pink, linear
purple, softmax green, as in the paper's figure).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch
from matplotlib.patches import Circle, FancyBboxPatch

from ..core.masks import padding_mask, target_mask
from ..model.attention import MultiHeadAttention

__all__ = ["figure1_shapes", "draw_figure1", "ARROWS"]

#: Each arrow of the drawing: key of :func:`figure1_shapes` -> what flows along it.
ARROWS = {
    "src_ids": "source token ids (Inputs)",
    "src_embedded": "source embeddings, times sqrt(d_model)",
    "src_pe": "positional encoding rows for the source",
    "enc_in": "encoder input: embeddings + positions, after dropout",
    "enc_self_attn": "encoder self-attention output",
    "enc_self_weights": "encoder self-attention weights",
    "enc_norm1": "after the first Add & Norm",
    "enc_ffn_hidden": "feed-forward hidden layer (output of w_1)",
    "enc_ffn": "feed-forward output",
    "enc_norm2": "after the second Add & Norm (encoder layer output)",
    "memory": "encoder output (memory), keys and values of cross-attention",
    "src_mask": "source padding mask",
    "tgt_ids": "decoder input ids (Outputs, shifted right)",
    "tgt_embedded": "target embeddings, times sqrt(d_model)",
    "tgt_pe": "positional encoding rows for the target",
    "dec_in": "decoder input: embeddings + positions, after dropout",
    "dec_self_attn": "masked self-attention output",
    "dec_self_weights": "masked self-attention weights",
    "dec_norm1": "after the first Add & Norm",
    "dec_cross_attn": "cross-attention output",
    "dec_cross_weights": "cross-attention weights",
    "dec_norm2": "after the second Add & Norm",
    "dec_ffn_hidden": "feed-forward hidden layer (output of w_1)",
    "dec_ffn": "feed-forward output",
    "dec_norm3": "after the third Add & Norm (decoder layer output)",
    "tgt_mask": "target mask (causal and padding)",
    "table": "the shared embedding table E, used transposed by Linear",
    "logits": "logits = y E^T",
    "probs": "output probabilities, softmax over the vocabulary",
}


def figure1_shapes(model, src, tgt_in) -> dict:
    """Shapes on every arrow of Figure 1, recorded by forward hooks on one forward pass.

    Args:
        model: a ``utils.Transformer`` (put in eval mode by the caller, or not:
            dropout does not change a shape).
        src: source ids (batch, src_len), dtype long.
        tgt_in: decoder input ids (batch, tgt_len), already shifted right.

    Returns:
        A dict from the keys of :data:`ARROWS` to shape tuples, plus ``"N"`` (the
        number of layers per stack) and ``"h"`` (heads). A shape inside a layer is
        the same in every layer; the function checks that it is.

    Raises:
        TypeError: ``model`` has no encoder and decoder layers (not a ``utils.Transformer``).
        RuntimeError: a hook saw different shapes in two layers of one stack, or
            fired an unexpected number of times.
    """
    if not all(hasattr(model, a) for a in ("embed", "dropout", "encoder_layers", "decoder_layers")):
        raise TypeError(f"figure1_shapes expects a utils.Transformer, got {type(model).__name__}")
    seen: dict[str, list[tuple]] = {}

    def put(key, tensor):
        seen.setdefault(key, []).append(tuple(tensor.shape))

    def hook(key, inputs_key=None, weights_key=None):
        def fn(module, inputs, output):
            if inputs_key:
                put(inputs_key, inputs[0])
            put(key, output)
            if weights_key:
                put(weights_key, module.weights)
        return fn

    handles = []
    kept = {m: m.keep_weights for m in model.modules() if isinstance(m, MultiHeadAttention)}
    try:
        for m in kept:
            m.keep_weights = True
        # Embeddings and the input dropout run twice: source first, then target.
        handles.append(model.embed.register_forward_hook(hook("embedded", inputs_key="ids")))
        handles.append(model.dropout.register_forward_hook(hook("stack_in")))
        for layer in model.encoder_layers:
            handles += [
                layer.self_attn.register_forward_hook(hook("enc_self_attn", weights_key="enc_self_weights")),
                layer.norm1.register_forward_hook(hook("enc_norm1")),
                layer.ffn.w_1.register_forward_hook(hook("enc_ffn_hidden")),
                layer.ffn.register_forward_hook(hook("enc_ffn")),
                layer.norm2.register_forward_hook(hook("enc_norm2")),
            ]
        for layer in model.decoder_layers:
            handles += [
                layer.self_attn.register_forward_hook(hook("dec_self_attn", weights_key="dec_self_weights")),
                layer.norm1.register_forward_hook(hook("dec_norm1")),
                layer.cross_attn.register_forward_hook(hook("dec_cross_attn", weights_key="dec_cross_weights")),
                layer.norm2.register_forward_hook(hook("dec_norm2")),
                layer.ffn.w_1.register_forward_hook(hook("dec_ffn_hidden")),
                layer.ffn.register_forward_hook(hook("dec_ffn")),
                layer.norm3.register_forward_hook(hook("dec_norm3")),
            ]
        handles.append(model.encoder_layers[-1].register_forward_hook(hook("memory")))
        handles.append(model.register_forward_hook(hook("logits")))
        with torch.no_grad():
            model(src, tgt_in)
    finally:
        for h in handles:
            h.remove()
        for m, keep in kept.items():
            m.keep_weights = keep

    n_layers = len(model.encoder_layers)
    shapes: dict = {"N": n_layers, "h": model.encoder_layers[0].self_attn.h}
    for key, found in seen.items():
        if key in ("embedded", "ids", "stack_in"):
            if len(found) != 2:
                raise RuntimeError(f"the {key} hook fired {len(found)} times, expected 2 (source, target)")
            continue
        if len(set(found)) != 1:
            raise RuntimeError(f"{key}: the layers of one stack gave different shapes {found}")
        shapes[key] = found[0]
    shapes["src_ids"], shapes["tgt_ids"] = seen["ids"]
    shapes["src_embedded"], shapes["tgt_embedded"] = seen["embedded"]
    shapes["enc_in"], shapes["dec_in"] = seen["stack_in"]
    # The positional rows the model adds (a buffer slice, broadcast over the batch).
    shapes["src_pe"] = tuple(model.pe[: src.size(1)].shape)
    shapes["tgt_pe"] = tuple(model.pe[: tgt_in.size(1)].shape)
    # The masks the model builds when none are given (forward does the same).
    shapes["src_mask"] = tuple(padding_mask(src, model.pad_id).shape)
    shapes["tgt_mask"] = tuple(target_mask(tgt_in, model.pad_id).shape)
    shapes["table"] = tuple(model.embed.lut.weight.shape)
    with torch.no_grad():
        shapes["probs"] = tuple(torch.softmax(torch.zeros(shapes["logits"]), dim=-1).shape)
    missing = set(ARROWS) - set(shapes)
    if missing:
        raise RuntimeError(f"no shape recorded for {sorted(missing)}")
    return shapes


# Fill colours as in the paper's figure; every block also says what it is in words.
COLOURS = {"attention": "#fcd9b6", "norm": "#fff2b3", "ffn": "#c9def5", "embed": "#f7c6c6",
           "linear": "#ddd3ee", "softmax": "#cfe8c8", "io": "white"}
W, H = 4.4, 1.05  # block width and height, in data units


def _s(shape) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ")"


def _box(ax, x, y, text, kind, height=H):
    ax.add_patch(FancyBboxPatch((x - W / 2, y - height / 2), W, height, boxstyle="round,pad=0.06",
                                facecolor=COLOURS[kind], edgecolor="black", linewidth=1.2,
                                linestyle="-" if kind != "io" else ":"))
    ax.text(x, y, text, ha="center", va="center", fontsize=9)


def _arrow(ax, start, end, label=None, side="right", dx=0.12, frac=0.5):
    ax.annotate("", xy=end, xytext=start, arrowprops=dict(arrowstyle="-|>", linewidth=1.2, color="black",
                                                          shrinkA=0, shrinkB=0))
    if label:
        x = (start[0] + end[0]) / 2 + (dx if side == "right" else -dx)
        y = start[1] + frac * (end[1] - start[1])
        ax.text(x, y, label, ha="left" if side == "right" else "right", va="center", fontsize=8,
                family="monospace", bbox=dict(facecolor="white", edgecolor="none", pad=0.5))


def _line(ax, points):
    xs, ys = zip(*points)
    ax.plot(xs, ys, color="black", linewidth=1.2)


def _residual(ax, x_from, y_from, y_to, x_side, label, label_side):
    """A skip connection: from the stream at y_from, out to x_side, up, into the Add & Norm at y_to."""
    _line(ax, [(x_from, y_from), (x_side, y_from), (x_side, y_to)])
    edge = x_from + (W / 2 if x_side > x_from else -W / 2)
    _arrow(ax, (x_side, y_to), (edge, y_to))
    ax.text(x_side + (0.1 if label_side == "right" else -0.1), (y_from + y_to) / 2, label,
            ha="left" if label_side == "right" else "right", va="center", fontsize=7.5, family="monospace",
            rotation=90)


def _input_column(ax, x, side, ids_label, embed_label, ids_shape, embedded_shape, pe_shape):
    """Ids, embedding and the sum with the positional encoding, at column x.

    The positional encoding stands on the outer side: side -1 (left) for the encoder,
    +1 (right) for the decoder.
    """
    top, bot = H / 2, -H / 2
    _box(ax, x, 1.0, ids_label, "io")
    _box(ax, x, 3.4, embed_label, "embed")
    _arrow(ax, (x, 1.0 + top), (x, 3.4 + bot), ids_shape)
    ax.add_patch(Circle((x, 5.6), 0.32, facecolor="white", edgecolor="black", linewidth=1.2))
    ax.text(x, 5.6, "+", ha="center", va="center", fontsize=13)
    _arrow(ax, (x, 3.4 + top), (x, 5.6 - 0.32), embedded_shape)
    ax.text(x + side * 3.6, 5.6, "Positional\nEncoding\n(sine, cosine)", ha="center", va="center", fontsize=8.5,
            bbox=dict(boxstyle="round", facecolor="white", edgecolor="black"))
    _arrow(ax, (x + side * 2.75, 5.6), (x + side * 0.32, 5.6))
    ax.text(x + side * 1.55, 5.85, pe_shape, ha="center", va="bottom", fontsize=8, family="monospace")


def draw_figure1(shapes: dict, src_text: str = "", tgt_text: str = "", ax=None):
    """Draw Figure 1 of the paper with the shape of every tensor written on its arrow.

    Args:
        shapes: the dict of :func:`figure1_shapes`.
        src_text, tgt_text: the example's tokens, written under Inputs and Outputs.
        ax: matplotlib axes to draw on; a new figure is made when None.

    Returns:
        The matplotlib ``Figure``.

    Raises:
        KeyError: ``shapes`` lacks one of the keys of :data:`ARROWS`.
    """
    missing = set(ARROWS) - set(shapes)
    if missing:
        raise KeyError(f"draw_figure1 needs the shapes of figure1_shapes; missing {sorted(missing)}")
    s = {k: _s(v) if isinstance(v, tuple) else v for k, v in shapes.items()}
    if ax is None:
        fig, ax = plt.subplots(figsize=(12, 14.5))
    else:
        fig = ax.figure
    ax.set_xlim(-1.5, 17)
    ax.set_ylim(0, 29)
    ax.axis("off")
    xe, xd = 4.2, 11.8  # encoder and decoder columns
    top, bot = H / 2, -H / 2

    # ---- encoder (left column) ----
    _input_column(ax, xe, -1, f"Inputs (source)\n{src_text}", "Input Embedding\n(table E, times √d_model)",
                  s["src_ids"], s["src_embedded"], s["src_pe"])
    y_attn, y_n1, y_ffn, y_n2 = 8.6, 10.8, 13.0, 15.2
    _arrow(ax, (xe, 5.6 + 0.32), (xe, y_attn + bot), s["enc_in"] + "\nafter dropout", frac=0.3)
    ax.add_patch(FancyBboxPatch((xe - W / 2 - 0.9, 7.35), W + 1.9, 8.6, boxstyle="round,pad=0.1",
                                facecolor="#f2f2f2", edgecolor="black", linewidth=1.0, zorder=0))
    ax.text(xe - W / 2 - 1.15, 11.6, f"Encoder layer\nN = {s['N']} ×", ha="right", va="center", fontsize=10)
    _box(ax, xe, y_attn, f"Multi-Head Attention\n(self, h = {s['h']})\nweights {s['enc_self_weights']}",
         "attention", height=1.3)
    _box(ax, xe, y_n1, "Add & Norm", "norm")
    _arrow(ax, (xe, y_attn + 0.65), (xe, y_n1 + bot), s["enc_self_attn"])
    _box(ax, xe, y_ffn, f"Feed Forward\nhidden {s['enc_ffn_hidden']}", "ffn")
    _arrow(ax, (xe, y_n1 + top), (xe, y_ffn + bot), s["enc_norm1"])
    _box(ax, xe, y_n2, "Add & Norm", "norm")
    _arrow(ax, (xe, y_ffn + top), (xe, y_n2 + bot), s["enc_ffn"])
    _residual(ax, xe, 7.7, y_n1, xe - W / 2 - 0.45, s["enc_in"], "left")
    _residual(ax, xe, y_n1 + 0.75, y_n2, xe - W / 2 - 0.45, s["enc_norm1"], "left")
    # memory: up from the encoder, right, down the gap, into cross-attention
    y_cross = 15.2
    x_gap = xd - W / 2 - 1.4
    _line(ax, [(xe, y_n2 + top), (xe, 17.2), (x_gap, 17.2), (x_gap, y_cross)])
    _arrow(ax, (x_gap, y_cross), (xd - W / 2, y_cross))
    ax.text((xe + x_gap) / 2, 17.35, f"memory (encoder output) {s['memory']}", ha="center", va="bottom",
            fontsize=8, family="monospace")
    ax.text(x_gap - 0.1, 16.6, "keys, values", ha="right", va="center", fontsize=7.5)

    # ---- decoder (right column) ----
    _input_column(ax, xd, +1, f"Outputs (shifted right)\n{tgt_text}",
                  "Output Embedding\n(same table E, times √d_model)", s["tgt_ids"], s["tgt_embedded"], s["tgt_pe"])
    y_self, y_m1, y_m2, y_dffn, y_m3 = 8.6, 11.6, 17.8, 20.0, 22.2
    # the decoder stream enters from the left (x = xd - 0.9) so that the memory arrow has room
    _arrow(ax, (xd, 5.6 + 0.32), (xd, y_self + bot), s["dec_in"] + "\nafter dropout", side="left", frac=0.3)
    ax.add_patch(FancyBboxPatch((xd - W / 2 - 0.5, 7.35), W + 1.9, 15.6, boxstyle="round,pad=0.1",
                                facecolor="#f2f2f2", edgecolor="black", linewidth=1.0, zorder=0))
    ax.text(xd + W / 2 + 1.65, 15.2, f"Decoder layer\n× N = {s['N']}", ha="left", va="center", fontsize=10)
    _box(ax, xd, y_self, f"Masked Multi-Head Attention\n(self, causal, h = {s['h']})\n"
                         f"weights {s['dec_self_weights']}", "attention", height=1.3)
    _box(ax, xd, y_m1, "Add & Norm", "norm")
    _arrow(ax, (xd, y_self + 0.65), (xd, y_m1 + bot), s["dec_self_attn"], side="left")
    _box(ax, xd, y_cross, f"Multi-Head Attention\n(cross, h = {s['h']})\nweights {s['dec_cross_weights']}",
         "attention", height=1.3)
    _arrow(ax, (xd, y_m1 + top), (xd, y_cross - 0.65), s["dec_norm1"] + "\nqueries", side="left")
    _box(ax, xd, y_m2, "Add & Norm", "norm")
    _arrow(ax, (xd, y_cross + 0.65), (xd, y_m2 + bot), s["dec_cross_attn"], side="left")
    _box(ax, xd, y_dffn, f"Feed Forward\nhidden {s['dec_ffn_hidden']}", "ffn")
    _arrow(ax, (xd, y_m2 + top), (xd, y_dffn + bot), s["dec_norm2"], side="left")
    _box(ax, xd, y_m3, "Add & Norm", "norm")
    _arrow(ax, (xd, y_dffn + top), (xd, y_m3 + bot), s["dec_ffn"], side="left")
    xr = xd + W / 2 + 0.45
    _residual(ax, xd, 7.7, y_m1, xr, s["dec_in"], "right")
    _residual(ax, xd, y_m1 + 0.75, y_m2, xr, s["dec_norm1"], "right")
    _residual(ax, xd, y_m2 + 0.75, y_m3, xr, s["dec_norm2"], "right")

    # ---- output layer ----
    y_lin, y_soft, y_out = 24.5, 26.5, 28.3
    _box(ax, xd, y_lin, f"Linear: logits = y E^T\n(tied: E is the table {s['table']})", "linear", height=1.0)
    _arrow(ax, (xd, y_m3 + top), (xd, y_lin - 0.5), s["dec_norm3"], side="left")
    _box(ax, xd, y_soft, "Softmax (over the vocabulary)", "softmax", height=0.8)
    _arrow(ax, (xd, y_lin + 0.5), (xd, y_soft - 0.4), "logits " + s["logits"], side="left")
    _box(ax, xd, y_out, "Output probabilities", "io", height=0.7)
    _arrow(ax, (xd, y_soft + 0.4), (xd, y_out - 0.35), s["probs"], side="left")
    ax.text(xe, 27.4, "Shapes are (batch, positions, features);\nattention weights are\n"
                      "(batch, heads, queries, keys).", ha="center", va="center", fontsize=9)
    return fig
