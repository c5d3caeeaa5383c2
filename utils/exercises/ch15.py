"""Answer checkers for chapter 15 (a real task: pronouncing English words, G2P).

Every expected answer, and the wrong answer each registered likely mistake gives, is
computed with the course's own code when checked. Exercise 15.3 and its mistakes read
the shipped decodes of the test split (``load_test_outputs``, written by
``python -m utils.tasks.g2p decode``; ``tests/test_g2p.py`` decodes a sample again and finds
the same phones), so checking an answer takes no decoding.
"""

import functools

from ..model.transformer import count_parameters
from . import mistake, register

# ---------------------------------------------------------------- 15.1, WER and PER by hand

HYPS = [["IY", "TH", "ER"], ["T", "AH", "M", "EY", "T", "OW"]]
REFS = [[["IY", "DH", "ER"], ["AY", "DH", "ER"]],
        [["T", "AH", "M", "EY", "T", "OW"], ["T", "AH", "M", "AA", "T", "OW"]]]


@register("15.1", prompt="Give (WER, PER) for the outputs IY TH ER (either) and T AH M EY T OW (tomato), "
          "as a tuple of two floats (shares, not percentages), each to 4 decimals.", decimals=4,
          hint="WER counts the words whose output matches none of their references; PER adds the edits to "
               "each word's closest reference and divides by the total length of those references.",
          unit="share", minutes=10,
          full="WER from the words that match no reference, PER from the edits to each word's closest reference over "
               "their total length, both as shares.",
          partial="One of the two; PER as a mean of the words' own rates, or over the length of all the references.")
def _either_tomato():
    from ..tasks.g2p import per, wer

    return (wer(HYPS, REFS), per(HYPS, REFS))


@mistake("15.1", "This PER averages the two words' own phone error rates; PER adds all the edits and "
         "divides by the total length of the closest references, so longer words weigh more")
def _ex_15_1_per_word_mean():
    from ..tasks.g2p import closest_reference, wer

    rates = [d / len(best) for d, best in (closest_reference(h, r) for h, r in zip(HYPS, REFS))]
    return (wer(HYPS, REFS), sum(rates) / len(rates))


@mistake("15.1", "This PER divides by the length of all the references; it divides by the length of each "
         "word's closest reference only")
def _ex_15_1_all_references():
    from ..tasks.g2p import closest_reference, wer

    errors = sum(closest_reference(h, r)[0] for h, r in zip(HYPS, REFS))
    return (wer(HYPS, REFS), errors / sum(len(p) for r in REFS for p in r))


# ---------------------------------------------------------------- 15.2, two vocabularies

def _two_tables(specials: bool = True, tied: bool = True) -> int:
    from torch import nn

    from ..tasks.g2p import G2P_MODEL, LETTERS, PHONES, G2PVocab, new_model

    extra = len(G2PVocab.specials) if specials else 0
    decoder_side = new_model(extra + len(PHONES))  # its table is the decoder input and the output layer
    encoder_table = nn.Embedding(extra + len(LETTERS), G2P_MODEL["d_model"])
    output = 0 if tied else (extra + len(PHONES)) * G2P_MODEL["d_model"]
    return count_parameters(decoder_side) + count_parameters(encoder_table) + output


@register("15.2", prompt="Give the number of parameters (an int) of the G2P model with two tables: 30 x d_model "
          "for the encoder, 42 x d_model for the decoder, tied to the output layer.",
          hint="the layers do not change; only the embedding tables do. Compare the rows stored before "
               "and after, and ask whether the output layer stores a matrix of its own.",
          minutes=10,
          full="The model's count with its shared table replaced by two tables of d_model columns (encoder, decoder), "
               "the output tied to the decoder's.",
          partial="The shared table as it is, an output matrix of its own, or the special tokens left out of a table.")
def _two_vocabularies():
    return _two_tables()


@mistake("15.2", "This is the model as it is, with one shared table of 69 rows; the exercise splits it "
         "into two tables")
def _ex_15_2_one_table():
    from ..tasks.g2p import new_model

    return count_parameters(new_model())


@mistake("15.2", "This counts the output layer as a matrix of its own; it is tied to the decoder's table")
def _ex_15_2_untied():
    return _two_tables(tied=False)


@mistake("15.2", "These tables leave out the 3 special tokens; each of the two tables needs its own rows "
         "for them")
def _ex_15_2_no_specials():
    return _two_tables(specials=False)


# ---------------------------------------------------------------- 15.3, WER of the 5-letter words

def _five_letter_wer() -> float:
    """Greedy WER of the averaged model on the 5-letter test words: what the exercise asks for."""
    return _shipped("avg", "greedy")


@functools.cache
def _shipped(which: str, decode: str, metric: str = "wer", five_letters: bool = True) -> float:
    """``metric`` of a shipped decode of the test split, on the 5-letter words or on all."""
    from ..tasks.g2p import cached_lexicon, load_test_outputs, per, wer

    outputs, test = load_test_outputs(), cached_lexicon()["test"]
    keep = [i for i, w in enumerate(outputs["words"]) if len(w) == 5 or not five_letters]
    hyps = [outputs[which, decode][i] for i in keep]
    refs = [test[outputs["words"][i]] for i in keep]
    return (wer if metric == "wer" else per)(hyps, refs)


@register("15.3", prompt="Give the greedy WER (a float between 0 and 1) of the averaged model on the test "
          "words of exactly 5 letters, to 4 decimals.", decimals=4,
          hint="select the test words with len(w) == 5, decode them with greedy_phones and the averaged "
               "model of load_shipped, then score the outputs with wer against their references.",
          unit="share", minutes=10,
          full="The test words of 5 letters, greedy decoding with the averaged model, and `wer` against their "
               "references, as a share.",
          partial="Beam search, the last checkpoint, the whole test split, or PER.")
def _ex_15_3():
    return _five_letter_wer()


@mistake("15.3", "This is beam search's WER; the exercise asks for greedy decoding")
def _ex_15_3_beam():
    return _shipped("avg", "beam")


@mistake("15.3", "This is the last checkpoint's WER; the exercise asks for the averaged model "
         "(load_shipped('avg'))")
def _ex_15_3_last():
    return _shipped("last", "greedy")


@mistake("15.3", "This is the WER on the whole test split; the exercise keeps the words of exactly 5 letters")
def _ex_15_3_all_words():
    return _shipped("avg", "greedy", five_letters=False)


@mistake("15.3", "This is the phone error rate (PER); the exercise asks for the word error rate")
def _ex_15_3_per():
    return _shipped("avg", "greedy", metric="per")

