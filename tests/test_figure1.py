"""Figure 1 of chapter 8: the shapes on its arrows come from a forward pass, and follow the inputs."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from utils import TINY, Transformer, set_seed  # noqa: E402
from utils.figures.figure1 import ARROWS, draw_figure1, figure1_shapes  # noqa: E402


@pytest.mark.parametrize("src_len, tgt_len", [(5, 6), (7, 3)])
def test_shapes_follow_the_inputs(src_len, tgt_len):
    set_seed(0)
    model = Transformer(**TINY).eval()
    src = torch.randint(3, 13, (1, src_len))
    tgt = torch.randint(3, 13, (1, tgt_len))
    s = figure1_shapes(model, src, tgt)
    assert set(ARROWS) <= set(s) and s["N"] == TINY["N"] and s["h"] == TINY["h"]
    d, h, v = TINY["d_model"], TINY["h"], TINY["vocab_size"]
    assert s["memory"] == (1, src_len, d) and s["dec_norm3"] == (1, tgt_len, d)
    assert s["enc_self_weights"] == (1, h, src_len, src_len)
    assert s["dec_self_weights"] == (1, h, tgt_len, tgt_len)
    assert s["dec_cross_weights"] == (1, h, tgt_len, src_len)
    assert s["enc_ffn_hidden"] == (1, src_len, TINY["d_ff"]) and s["logits"] == (1, tgt_len, v)
    assert all(not m.keep_weights for m in model.modules() if hasattr(m, "keep_weights"))  # restored
    assert not any(m._forward_hooks for m in model.modules())  # hooks removed


def test_draws_and_rejects_bad_input():
    s = figure1_shapes(Transformer(**TINY).eval(), torch.tensor([[5, 3, 4, 7, 6]]), torch.tensor([[1, 6, 7, 4, 3, 5]]))
    fig = draw_figure1(s, "c a b e d", "<s> d e b a c")
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "(1, 4, 6, 5)" in texts and "(1, 6, 13)" in texts and "Add & Norm" in texts
    plt.close(fig)
    with pytest.raises(KeyError, match="missing"):
        draw_figure1({"N": 2})
    with pytest.raises(TypeError, match="utils.Transformer"):
        figure1_shapes(torch.nn.Linear(2, 2), None, None)
