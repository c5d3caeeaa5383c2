"""Answer checkers for chapter 16 (the paper's task: German to English translation).

Every expected answer, and the wrong answer each registered likely mistake gives, is
computed with the course's own code when checked. Exercise 16.3 and its mistakes read
the shipped translations of the test split (``utils.tasks.translation.train.load_test_outputs``,
written by ``python -m utils.tasks.translation decode``), so checking an answer translates
nothing. The file read is ``utils.tasks.translation.train.OUTPUTS_FILE``, looked up when checked:
a test sets that attribute to check 16.3 against outputs of its own.
"""

import collections
import functools

from ..model.transformer import count_parameters
from . import mistake, register

# ---------------------------------------------------------------- 16.1, BPE by hand

#: Sennrich et al. (2016)'s example corpus: word -> count.
WORDS = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
MERGES = 4


def _pair_counts(vocab) -> collections.Counter:
    """Every adjacent pair of symbols, counted as many times as its word occurs."""
    pairs = collections.Counter()
    for symbols, count in vocab.items():
        for pair in zip(symbols, symbols[1:]):
            pairs[pair] += count
    return pairs


def _learn(words, num_merges, end="\u2581", shorter_first=True, recount=True):
    """``learn_bpe`` as a learner may slip on it: another end-of-word marker ``end`` (None: no
    marker at all); ties broken alphabetically alone (``shorter_first=False``); the pair counts
    of the start kept for every merge (``recount=False``: a pair that a merge removed is no
    longer there to choose, a pair it created counts 0).

    Otherwise the same counting and the same tie rule (more frequent, then shorter merged
    symbol, then alphabetically first); ``data.learn_bpe`` always appends ``END``.
    """
    from ..tasks.translation.data import merge_pair

    vocab = {tuple(w) + ((end,) if end else ()): c for w, c in words.items()}
    first = _pair_counts(vocab)
    merges = []
    for _ in range(num_merges):
        pairs = _pair_counts(vocab)
        if not pairs:
            break
        counts = pairs if recount else collections.Counter({p: first[p] for p in pairs})
        best = min(pairs, key=lambda p: (-counts[p], len(p[0] + p[1]) if shorter_first else 0, p[0] + p[1]))
        merges.append(best)
        vocab = {merge_pair(symbols, best): count for symbols, count in vocab.items()}
    return merges


@register("16.1", prompt="Give the first 4 merges that learn_bpe learns from the words low (5 times), lower (2), "
          "newest (6) and widest (3), each word split into its characters followed by the end-of-word marker "
          "END ('\u2581'): a list of 4 (left, right) tuples of strings, in the order learned.",
          hint="count every adjacent pair of symbols in every word, weighted by the word's count; merge the "
               "most frequent pair everywhere (ties: the shorter merged symbol, then the alphabetically first, "
               "'\u2581' after every letter), and count again: write the pair counts down after each merge.",
          minutes=15,
          full="The pair counts written down before each of the 4 merges, ties broken by the rule (shorter merged "
               "symbol, then alphabetical), and the merges in order, checked with `learn_bpe`.",
          partial="The counting right until a slip: counts not redone after a merge, ties broken alphabetically alone, "
                  "no end-of-word marker, or each word counted once.")
def _ex_16_1():
    from ..tasks.translation.data import learn_bpe

    return learn_bpe(WORDS, MERGES)


@mistake("16.1", "These merges count each word once; each pair counts as many times as its word occurs "
         "(low 5 times, newest 6, ...)")
def _ex_16_1_no_counts():
    return _learn(dict.fromkeys(WORDS, 1), MERGES)


@mistake("16.1", "These merges are learned without the end-of-word marker; every word ends with END "
         "('\u2581'), which takes part in the pairs")
def _ex_16_1_no_marker():
    return _learn(WORDS, MERGES, end=None)


@mistake("16.1", "These merges use Sennrich's '</w>' as the end-of-word marker; learn_bpe uses END ('\u2581'), "
         "one character, and a merged symbol's length breaks ties")
def _ex_16_1_sennrich_marker():
    return _learn(WORDS, MERGES, end="</w>")


@mistake("16.1", "These are the most frequent pairs of the first count, taken in one go; each merge changes the "
         "words, so count the pairs again after every merge (write the counts down each time)")
def _ex_16_1_one_count():
    from ..tasks.translation.data import END

    pairs = _pair_counts({tuple(w) + (END,): c for w, c in WORDS.items()})
    return sorted(pairs, key=lambda p: (-pairs[p], len(p[0] + p[1]), p[0] + p[1]))[:MERGES]


@mistake("16.1", "These merges keep the pair counts of the start; a merge makes some pairs rarer or removes "
         "them and creates new ones, so count the pairs again after every merge (write the counts down each time)")
def _ex_16_1_stale_counts():
    return _learn(WORDS, MERGES, recount=False)


@mistake("16.1", "These merges break a tie alphabetically alone; between pairs of equal count, learn_bpe first "
         "takes the one whose merged symbol is shorter, then the alphabetically first")
def _ex_16_1_alphabetical_ties():
    return _learn(WORDS, MERGES, shorter_first=False)


# ---------------------------------------------------------------- 16.2, two vocabularies

def _two_tables(tied: bool = True) -> int:
    """Parameters of the translation model with a German table for the encoder and an English
    table for the decoder (tied to the output layer, or not): counted with real modules."""
    from ..model.embeddings import Embeddings
    from ..tasks.translation.data import VOCAB_SIZE
    from ..tasks.translation.train import MT_MODEL, new_model

    # The course's model's one table is the decoder's table and the output layer (its
    # generator is F.linear with that table: no bias, nothing else to count).
    decoder_side = new_model(vocab_size=VOCAB_SIZE)
    encoder_table = Embeddings(VOCAB_SIZE, MT_MODEL["d_model"])
    output = 0 if tied else count_parameters(Embeddings(VOCAB_SIZE, MT_MODEL["d_model"]))
    return count_parameters(decoder_side) + count_parameters(encoder_table) + output


@register("16.2", prompt="Give the number of parameters (an int) of the translation model (MT_MODEL) with two "
          "vocabularies of 4,000 pieces instead of one shared one: a German table for the encoder, an English "
          "table for the decoder, tied to the output layer.",
          hint="the layers do not change; only the embedding tables do. Count the tables before and after, "
               "and ask whether the output layer stores a matrix of its own.",
          minutes=10,
          full="The model's count plus one table of 4,000 rows of d_model, the output still tied to the decoder's "
               "table.",
          partial="The model as it is, an output matrix of its own, or the extra table alone.")
def _ex_16_2():
    return _two_tables()


@mistake("16.2", "This is the model as it is, with one table shared by both languages; the exercise gives "
         "each language its own table")
def _ex_16_2_shared():
    from ..tasks.translation.train import new_model

    return count_parameters(new_model())


@mistake("16.2", "This counts the output layer as a matrix of its own (three tables); it stays tied to the "
         "decoder's table")
def _ex_16_2_untied():
    return _two_tables(tied=False)


@mistake("16.2", "This is the extra table alone; the exercise asks for the parameters of the whole model")
def _ex_16_2_extra_table_only():
    from ..model.embeddings import Embeddings
    from ..tasks.translation.data import VOCAB_SIZE
    from ..tasks.translation.train import MT_MODEL

    return count_parameters(Embeddings(VOCAB_SIZE, MT_MODEL["d_model"]))


# ---------------------------------------------------------------- 16.3, BLEU of the short sentences

MAX_WORDS = 5


def _short_bleu() -> float:
    """Beam-search BLEU of the averaged model on the test sources of at most 5 words: what 16.3 asks for."""
    return _shipped("avg", "beam")


def _shipped(which: str, decode: str, metric: str = "bleu", max_words: int | None = MAX_WORDS,
             strict: bool = False) -> float:
    """``metric`` of a shipped decode of the test split on the sources of at most ``max_words`` words
    (fewer with ``strict``; all with None), from the outputs file of the moment."""
    from ..tasks.translation.train import OUTPUTS_FILE  # looked up now: a test may point it elsewhere

    return _score(str(OUTPUTS_FILE), which, decode, metric, max_words, strict)


@functools.cache
def _score(path: str, which: str, decode: str, metric: str, max_words: int | None, strict: bool) -> float:
    from ..tasks.translation import data as tr
    from ..tasks.translation.train import bleu_chrf, load_test_outputs

    outputs = load_test_outputs(path)
    hyp_of = dict(zip(outputs["sources"], outputs[which, decode]))

    def kept(german):
        n = len(german.split())
        return max_words is None or (n < max_words if strict else n <= max_words)

    sources, streams = tr.reference_streams([p for p in tr.cached_pairs(tr.data_path())["test"] if kept(p[0])])
    hyps = [hyp_of[s] for s in sources]
    if metric == "sentence bleu":
        import sacrebleu

        refs = [[s[i] for s in streams if s[i] is not None] for i in range(len(hyps))]
        return sum(sacrebleu.sentence_bleu(h, r).score for h, r in zip(hyps, refs)) / len(hyps)
    return bleu_chrf(hyps, streams)[metric]


@register("16.3", prompt="Give the corpus BLEU (a float from 0 to 100, as bleu_chrf computes it) of the averaged "
          "model's beam-search translations of the test sources of at most 5 words, against all their "
          "references, to 2 decimals.", decimals=2,
          hint="keep the test sources with len(german.split()) <= 5, take their translations from "
               "load_test_outputs()[('avg', 'beam')], build their reference streams with reference_streams "
               "from the test pairs of those sources only, and score with bleu_chrf.",
          unit="percent", minutes=10,
          full="The sources of at most 5 words kept, their beam translations by the averaged model, their reference "
               "streams, and corpus BLEU from `bleu_chrf`.",
          partial="Greedy decoding, the last checkpoint, the whole split, chrF, fewer than 5 words, or a mean of "
                  "sentence BLEU.")
def _ex_16_3():
    return _short_bleu()


@mistake("16.3", "This is greedy decoding's BLEU; the exercise asks for beam search")
def _ex_16_3_greedy():
    return _shipped("avg", "greedy")


@mistake("16.3", "This is the last checkpoint's BLEU; the exercise asks for the averaged model ('avg')")
def _ex_16_3_last():
    return _shipped("last", "beam")


@mistake("16.3", "This is the BLEU of the whole test split; the exercise keeps the sources of at most 5 words")
def _ex_16_3_all():
    return _shipped("avg", "beam", max_words=None)


@mistake("16.3", "This is chrF; the exercise asks for BLEU")
def _ex_16_3_chrf():
    return _shipped("avg", "beam", metric="chrf")


@mistake("16.3", "This keeps the sources of fewer than 5 words; the exercise keeps those of at most 5 (<=)")
def _ex_16_3_fewer():
    return _shipped("avg", "beam", strict=True)


@mistake("16.3", "This is the mean of the sentences' own BLEU scores; corpus BLEU adds the n-gram counts of "
         "all the sentences first (bleu_chrf)")
def _ex_16_3_sentence_mean():
    return _shipped("avg", "beam", metric="sentence bleu")


# ---------------------------------------------------------------- 16.4, one EM step of IBM Model 1

#: The three sentence pairs of 16.4.
EM_PAIRS = [("das Buch", "the book"), ("ein gutes Buch", "a good book"), ("das Haus", "the house")]


def _one_em_step(null: bool = True, normalise_over: str = "english") -> float:
    """t(book | buch) after one EM iteration from equal t, worked as a learner would: each English
    word's count is shared equally among the German words of its sentence (and NULL), then the
    counts of 'buch' are divided by their total over English words (or, a mistake, the counts of
    'book' by their total over German words; or, a mistake, not divided at all)."""
    counts = collections.Counter()
    for german, english in EM_PAIRS:
        fs = (["<null>"] if null else []) + german.lower().split()
        for e in english.lower().split():
            for f in fs:
                counts[f, e] += 1 / len(fs)
    if normalise_over == "english":
        return counts["buch", "book"] / sum(c for (f, _), c in counts.items() if f == "buch")
    if normalise_over == "german":
        return counts["buch", "book"] / sum(c for (_, e), c in counts.items() if e == "book")
    return counts["buch", "book"]


@register("16.4", prompt="Give t(book | buch) (a float) after one EM iteration of IBM Model 1 (ibm1, with its "
          "NULL word, words lowercased, from a t equal for every pair of words that meet) on the pairs "
          "das Buch / the book, ein gutes Buch / a good book, das Haus / the house, to 3 decimals.", decimals=3,
          hint="E step: each English word of a pair is shared equally among NULL and the German words of its "
               "sentence (t is equal everywhere at the start). M step: add up the shares of (buch, e) for every "
               "English word e, and divide the share of (buch, book) by their total.",
          minutes=15,
          full="The E step's shares with NULL, the counts of (buch, e) summed over the English words, and t(book given "
               "buch) as their ratio.",
          partial="NULL left out, the count not divided, or the division over German words.")
def _ex_16_4():
    from ..tasks.translation.baselines import ibm1

    table = ibm1(EM_PAIRS, iterations=1)
    return next(float(t) for f, e, t in zip(table["f"], table["e"], table["t"])
                if table["german"][f] == "buch" and table["english"][e] == "book")


@mistake("16.4", "This leaves out the NULL word; ibm1 adds it to every German sentence, so each English word "
         "is shared among one more German word")
def _ex_16_4_no_null():
    return _one_em_step(null=False)


@mistake("16.4", "This is the count of (buch, book) before the M step divides it by the total of the "
         "counts of 'buch' over all English words")
def _ex_16_4_not_normalised():
    return _one_em_step(normalise_over=None)


@mistake("16.4", "This divides by the total over German words, which gives the share of 'buch' among what "
         "explains 'book'; t(e | f) sums to 1 over English words e for each German word f")
def _ex_16_4_wrong_direction():
    return _one_em_step(normalise_over="german")
