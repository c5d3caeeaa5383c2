"""Dictionary replacement through cross-attention, for chapter 16.

A model trained on a few thousand sentences has never seen most rare German words, and
spells a guess from pieces ("Krankenhaus" -> "tabload"). Luong et al. (2015, "Addressing the
Rare Word Problem in Neural Machine Translation"; the "PosUnk" of the paper's Table 2)
replace such an output word by a dictionary's translation of the source word it is aligned
to. Our model has no alignment of its own, but its cross-attention is a soft one (section
3.2.3): ``replace_unseen`` reads it from the last decoder layer, heads averaged, and
replaces an English word when

- the German word it attends to most is unseen in the train split and has an entry among
  the dictionary's single-word entries (``baselines.single_word_entries``), and
- the English word occurs at most ``RARE`` times in the train split's English: a
  spelled-out guess or a word the model has met too seldom to trust (common words such as
  "the" are left alone even when their attention points at the unseen word).

A run of such consecutive words aligned to the same German word becomes that word's
dictionary translation, once per sentence; later runs aligned to it are dropped. The rest
of the sentence is kept character for character.

The layer and ``RARE`` were chosen on the development split, by BLEU, with the weights
and greedy translations of the recipe ablation "paper": the last layer against the first
and all layers averaged, then ``RARE`` among 0, 2, 5, 20, 50, 100, 200, 500 and no limit
(the closing note of issue 33 gives each one's score).
"""

from __future__ import annotations

from collections import Counter

import torch

from ...core.masks import BOS_ID
from . import baselines as bl
from . import data as tr

#: An English output word may be replaced when the train split's English holds it at most this often.
RARE = 50


def _owners(pieces: list[str], words: list[str]) -> list[int | None] | None:
    """For each piece, the index of the word its first character belongs to (None for a bare
    word-start mark), matching characters in order; None when the pieces do not spell the words."""
    owner_of_char = [i for i, w in enumerate(words) for _ in w]
    out, pos = [], 0
    for p in pieces:
        text = p.replace(tr.END, "")
        if not text:
            out.append(None)
            continue
        if pos >= len(owner_of_char):
            return None
        out.append(owner_of_char[pos])
        pos += len(text)
    return out if pos == len(owner_of_char) else None


def word_attention(model, german: str, english: str, sp=None):
    """The last decoder layer's cross-attention between words of one sentence pair.

    The model reads ``german`` and is fed ``english`` (encoded, after ``<s>``). Piece weights
    (heads averaged) are summed over each German word's pieces and averaged over each English
    word's pieces. Words are ``baselines.words``.

    The model runs on its own device; A lies on the CPU.

    Returns:
        (German words, English words, A) with A of shape (English words, German words); or
        None when the pieces do not spell the words (a character the vocabulary changes).
    """
    sp = sp or tr.shipped_vocab()
    de_words, en_words = bl.words(german), bl.words(english)
    de_ids, en_ids = tr.encode(german, sp), tr.encode(english, sp)
    de_own = _owners([sp.id_to_piece(i) for i in de_ids], de_words)
    en_own = _owners([sp.id_to_piece(i) for i in en_ids], en_words)
    if not de_ids or not en_ids or de_own is None or en_own is None:
        return None
    attn = model.decoder_layers[-1].cross_attn
    was_training, kept = model.training, attn.keep_weights
    model.eval()
    attn.keep_weights = True
    try:
        with torch.no_grad():
            device = next(model.parameters()).device
            model(torch.tensor([de_ids], device=device), torch.tensor([[BOS_ID] + en_ids], device=device))
        weights = attn.weights[0].double().mean(0)[: len(en_ids)].cpu()  # (English pieces, German pieces)
    finally:
        attn.keep_weights = kept
        model.train(was_training)
    a = torch.zeros(len(en_words), len(de_words), dtype=torch.float64)
    count = torch.zeros(len(en_words), dtype=torch.float64)
    for t, e in enumerate(en_own):
        if e is None:
            continue
        count[e] += 1
        for s, g in enumerate(de_own):
            if g is not None:
                a[e, g] += weights[t, s]
    return de_words, en_words, a / count.clamp(min=1)[:, None]


def replace_unseen(model, sources, hyps, lexicon: dict, train_pairs, rare: int = RARE, sp=None) -> tuple[list[str], int]:
    """``hyps`` (the model's translations of ``sources``) with the guesses aligned to unseen
    German words replaced by ``lexicon``'s entries (the rule of this module's docstring).

    Args:
        model: the Transformer that wrote ``hyps``.
        sources, hyps: German sentences and their English translations, in order.
        lexicon: {German word, lowercased: English}, e.g. ``baselines.single_word_entries()``.
        train_pairs: the (German, English) train pairs: which German words are seen, and
            how often each English word occurs.
        rare: the most times an English word may occur in train English to count as a guess.

    Returns:
        (the new translations, how many German words were replaced in all).

    Raises:
        ValueError: ``sources`` and ``hyps`` differ in length; ``rare`` is not an int >= 0.
    """
    if len(sources) != len(hyps):
        raise ValueError(f"sources and hyps must be paired, got {len(sources)} sources and {len(hyps)} translations")
    if isinstance(rare, bool) or not isinstance(rare, int) or rare < 0:
        raise ValueError(f"rare must be an int >= 0, got {rare!r}")
    seen = {w.lower() for de, _ in train_pairs for w in bl.words(de)}
    english = Counter(w.lower() for _, en in train_pairs for w in bl.words(en))
    out, replaced = [], 0
    for german, hyp in zip(sources, hyps):
        targets = {w for w in (v.lower() for v in bl.words(german)) if w not in seen and w in lexicon}
        aligned = word_attention(model, german, hyp, sp) if targets else None
        if aligned is None:
            out.append(hyp)
            continue
        de_words, en_words, a = aligned
        top = a.argmax(1).tolist()
        # English word k is a guess: rare in train English, attending most to an unseen German word with an entry
        guess = [de_words[top[k]].lower() in targets and w.isalpha() and english[w.lower()] <= rare
                 for k, w in enumerate(en_words)]
        spans = bl.word_spans(hyp)  # the words' places: the rest of hyp is kept as it is
        edits, done, k = [], set(), 0  # (start, end, new text), left to right
        while k < len(en_words):
            if not guess[k]:
                k += 1
                continue
            g, j = top[k], k
            while j + 1 < len(en_words) and top[j + 1] == g and guess[j + 1]:
                j += 1
            edits.append((spans[k][0], spans[j][1], "" if g in done else lexicon[de_words[g].lower()]))
            done.add(g)
            k = j + 1
        text = hyp
        for start, end, new in reversed(edits):
            text = text[:start] + new + text[end:]
        text = " ".join(text.split())  # a dropped run leaves two spaces
        replaced += len(done)
        out.append(text[:1].upper() + text[1:] if done else hyp)
    return out, replaced
