"""Layer 2, the model of paper section 3 and its decoders (section 6.1).

``attention`` (3.2), ``layers`` (3.1, 3.3), ``embeddings`` (3.4, 3.5), ``transformer`` (the
whole encoder-decoder of Figure 1), ``decoding`` (greedy and beam search), ``kv_cache`` (the keys
and values kept between decoding steps), and the
recurrent baseline of Table 2 (``recurrent``). They import ``utils.core`` and each other."""
