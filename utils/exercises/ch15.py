"""Answer checkers for chapter 15 (a real task: pronouncing English words, G2P)."""

from ..model import count_parameters
from . import register


@register("15.1", prompt="Give (WER, PER) for the outputs IY TH ER (either) and T AH M EY T OW (tomato), "
          "as a tuple of two floats.",
          hint="WER counts wrong words; PER adds the edits to each word's closest reference and divides by "
               "the total length of those references.")
def _either_tomato():
    from ..g2p import per, wer

    hyps = [["IY", "TH", "ER"], ["T", "AH", "M", "EY", "T", "OW"]]
    refs = [[["IY", "DH", "ER"], ["AY", "DH", "ER"]],
            [["T", "AH", "M", "EY", "T", "OW"], ["T", "AH", "M", "AA", "T", "OW"]]]
    return (wer(hyps, refs), per(hyps, refs))


@register("15.2", prompt="Give the number of parameters (an int) of the G2P model with two tables: 30 x d_model "
          "for the encoder, 42 x d_model for the decoder, tied to the output layer.",
          hint="the layers do not change; only the embedding tables do. 69 rows become 30 + 42.")
def _two_vocabularies():
    from torch import nn

    from ..g2p import G2P_MODEL, LETTERS, PHONES, G2PVocab, new_model

    specials = len(G2PVocab.specials)
    decoder_side = new_model(specials + len(PHONES))  # its table is the decoder input and the output layer
    return count_parameters(decoder_side) + count_parameters(nn.Embedding(specials + len(LETTERS), G2P_MODEL["d_model"]))


def _five_letter_test_words():
    from ..g2p import load_lexicon

    test = load_lexicon()["test"]
    return {w: r for w, r in test.items() if len(w) == 5}


@register("15.3", prompt="Give the greedy WER (a float between 0 and 1) of the averaged model on the test "
          "words of exactly 5 letters.",
          hint="greedy_phones(load_shipped('avg')[0], words, G2PVocab()), then wer against their references.")
def _five_letter_wer():
    from ..g2p import G2PVocab, greedy_phones, load_shipped, wer

    words = _five_letter_test_words()
    model, _ = load_shipped("avg")
    hyps = greedy_phones(model, list(words), G2PVocab())
    return wer(hyps, list(words.values()))
