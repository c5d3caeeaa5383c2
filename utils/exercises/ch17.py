"""Answer checkers for chapter 17 (Table 2 in miniature: the Transformer against a recurrent model).

Every expected answer, and the wrong answer each registered likely mistake gives, is
computed with the course's own code when checked: ``utils.model.recurrent.additive_attention``
for 17.1, the recurrent model under ``FlopCounterMode`` for 17.2 (so the answer is the
counter's, which chapter 17 shows equal to ``recurrent_step_flops``' terms), and the
committed test outputs of ``utils.experiments.baseline.load_results`` for 17.3, and the shipped
tuning runs of ``utils.experiments.baseline.tuning_results`` for 17.4, and
``utils.experiments.baseline.stopped_improving`` for 17.5, and the recurrent model's shipped translation
try `lr0.5` (``utils.tasks.translation.train.read_log``) for 17.6.
"""

import functools
import math

import torch

from . import mistake, register

# ---------------------------------------------------------------- 17.1, additive attention by hand

QUERY = [0.5, -1.0]
KEYS = [[0.0, 1.0], [1.0, 0.0], [-1.0, -1.0]]
V_A = [2.0, 1.0]
VALUES = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]


def _context(score=None, weigh=None) -> list[float]:
    """The context for the exercise's numbers; ``score(q, k)`` and ``weigh(scores)`` replace
    a step of the formula to compute a mistake."""
    q, keys, v, values = (torch.tensor(x, dtype=torch.float64) for x in (QUERY, KEYS, V_A, VALUES))
    if score is None and weigh is None:
        from ..model.recurrent import additive_attention

        layer = torch.nn.Linear(2, 1, bias=False).double()
        with torch.no_grad():
            layer.weight.copy_(v[None])
        context, _ = additive_attention(q[None], keys[None], layer, values[None])
        return [round(x, 10) for x in context[0].tolist()]
    scores = torch.stack([score(q, k) if score else v @ torch.tanh(q + k) for k in keys])
    weights = weigh(scores) if weigh else torch.softmax(scores, dim=0)
    return [round(x, 10) for x in (weights @ values).tolist()]


@register("17.1", prompt="Give the context vector c for the exercise's query, keys, v_a and annotations, as a "
          "list of 2 floats, each to 4 decimals.", decimals=4,
          hint="for each position j: e_j = v_a . tanh(query + key_j), coordinate by coordinate; then the "
               "softmax of the three scores, and c = sum_j alpha_j h_j.",
          minutes=10,
          full="The three scores `v_a . tanh(query + key_j)`, their softmax and the weighted sum of the annotations, "
               "checked with `additive_attention`.",
          partial="The tanh or v_a left out, dot-product scores, or the raw scores used as weights.")
def _ex_17_1():
    return _context()


@mistake("17.1", "This context leaves out the tanh: the scores are v_a . tanh(query + key), not v_a . (query + key)")
def _ex_17_1_no_tanh():
    v = torch.tensor(V_A, dtype=torch.float64)
    return _context(score=lambda q, k: v @ (q + k))


@mistake("17.1", "This context uses dot-product scores (query . key); additive attention adds the query to the "
         "key inside a tanh and scores with v_a")
def _ex_17_1_dot_product():
    return _context(score=lambda q, k: q @ k)


@mistake("17.1", "This weighs the annotations by the raw scores; the weights are the softmax of the scores")
def _ex_17_1_no_softmax():
    return _context(weigh=lambda scores: scores)


@mistake("17.1", "This takes the softmax of tanh(query + key) summed without v_a; each coordinate is "
         "multiplied by its entry of v_a before the sum")
def _ex_17_1_no_v():
    return _context(score=lambda q, k: torch.tanh(q + k).sum())


# ---------------------------------------------------------------- 17.2, FLOPs of the encoder

LENGTHS = (3, 5)


@functools.cache
def _encoder_flops(lengths=LENGTHS, padded=False) -> int:
    """FlopCounterMode's count of the recurrent encoder's forward pass on rows of ``lengths``
    (padded to the longest); with ``padded``, every row as long as the longest."""
    from torch.utils.flop_counter import FlopCounterMode

    from ..model.recurrent import new_recurrent_model

    model = new_recurrent_model().eval()
    longest = max(lengths)
    src = torch.zeros(len(lengths), longest, dtype=torch.long)
    for i, n in enumerate(lengths):
        src[i, : longest if padded else n] = 5  # any letter
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model.encode(src)
    return counter.get_total_flops()


@register("17.2", prompt="Give the FLOPs (an int) of the recurrent encoder's forward pass, both directions, on "
          "two words of 3 and 5 tokens padded to 5, with G2P_RECURRENT's sizes, counting matrix products only.",
          hint="each direction, at each real token, multiplies the embedding (d_embed values) and the state "
               "(d_hidden values) by the matrices of the 3 gates; a product of (1, k) by (k, n) costs 2kn FLOPs.",
          minutes=15,
          full="For each direction and each real token, the products of the 3 gates' input and state matrices at 2kn "
               "FLOPs each, checked with `FlopCounterMode`.",
          partial="Padded positions counted, one direction, one gate, or a training step's three forward passes.")
def _ex_17_2():
    return _encoder_flops()


@mistake("17.2", "This counts the padded positions too; the encoder packs the batch, so the recurrences run "
         "over the real tokens only")
def _ex_17_2_padded():
    return _encoder_flops(padded=True)


@mistake("17.2", "This is half the count: one direction (the encoder runs a GRU in each direction), or one FLOP "
         "per multiply-add instead of two")
def _ex_17_2_one_direction():
    return _encoder_flops() // 2


@mistake("17.2", "This is a training step's share (forward and backward, 3 times the forward); the exercise "
         "asks for the forward pass")
def _ex_17_2_training():
    return 3 * _encoder_flops()


@mistake("17.2", "This counts one gate; the GRU's input and state each meet 3 matrices (reset, update and "
         "candidate)")
def _ex_17_2_one_gate():
    return _encoder_flops() // 3


# ---------------------------------------------------------------- 17.3, words both models get wrong

@functools.cache
def _wrong(arch: str) -> frozenset:
    """The test words that seed 0 of ``arch`` gets wrong (beam search on the averaged weights)."""
    from ..experiments.baseline import load_results
    from ..tasks.g2p import cached_lexicon

    test = cached_lexicon()["test"]
    r = load_results(arch, 0)
    return frozenset(w for w, out in zip(r["words"], r["outputs"]) if out not in test[w])


def _share(words) -> float:
    from ..tasks.g2p import cached_lexicon

    return len(words) / len(cached_lexicon()["test"])


@register("17.3", prompt="Give the share (a float between 0 and 1) of the test words that both seed-0 models, "
          "the Transformer and the recurrent model, get wrong, to 4 decimals.", decimals=4,
          hint="a word is wrong when its output equals none of its references; build the set of wrong words "
               "of each model, count the words in both sets and divide by the number of test words.",
          unit="share", minutes=10,
          full="The sets of wrong words of both models (an output equal to no reference), their intersection, divided "
               "by the number of test words.",
          partial="Either model wrong, one model's WER, the words whose outputs differ, or a count instead of a share.")
def _ex_17_3():
    return _share(_wrong("transformer") & _wrong("recurrent"))


@mistake("17.3", "This is the share of the words that either model gets wrong; the exercise asks for the words "
         "both get wrong")
def _ex_17_3_either():
    return _share(_wrong("transformer") | _wrong("recurrent"))


@mistake("17.3", "This is the share of the words only one of the two models gets wrong")
def _ex_17_3_one():
    return _share(_wrong("transformer") ^ _wrong("recurrent"))


@mistake("17.3", "This is the Transformer's WER alone")
def _ex_17_3_transformer():
    return _share(_wrong("transformer"))


@mistake("17.3", "This is the recurrent model's WER alone")
def _ex_17_3_recurrent():
    return _share(_wrong("recurrent"))


@mistake("17.3", "This counts the words where the two outputs differ; a word can be wrong in both with two "
         "different outputs, or right in both")
def _ex_17_3_differ():
    from ..experiments.baseline import load_results

    t, r = load_results("transformer", 0)["outputs"], load_results("recurrent", 0)["outputs"]
    return sum(a != b for a, b in zip(t, r)) / len(t)


@mistake("17.3", "This is a count of words; give a share between 0 and 1")
def _ex_17_3_count():
    return len(_wrong("transformer") & _wrong("recurrent"))



# ---------------------------------------------------------------- 17.4, a setting's effect on the dev loss

def _effect(arch: str = "transformer", setting: str = "warmup", field: str = "dev_loss") -> float:
    """Mean ``field`` of ``arch``'s shipped tuning runs of the half run first (``FIRST_HALF``, where each
    value of each setting appears twice) at the setting's higher value minus at its lower."""
    from ..experiments.baseline import FIRST_HALF, TUNING_GRID, tuning_results

    results = {c: r for c, r in tuning_results()[arch].items() if c in FIRST_HALF}
    lo, hi = sorted({TUNING_GRID[c][setting] for c in results})
    means = [math.fsum(results[c][field] for c in results if TUNING_GRID[c][setting] == v)
             / sum(TUNING_GRID[c][setting] == v for c in results) for v in (lo, hi)]
    return round(means[1] - means[0], 10)


@register("17.4", prompt="Give the effect of the warm-up on the Transformer's development loss in the tuning grid: "
          "the mean dev loss of its configurations with warm-up 4,000 minus the mean of those with warm-up 1,000, "
          "a float in nats per phone, to 3 decimals.", decimals=3,
          hint="tuning_results()['transformer'] maps each configuration to its summary, with 'dev_loss'; keep the "
               "configurations of FIRST_HALF; TUNING_GRID[config]['warmup'] says its warm-up. Average the losses in "
               "each group, then subtract.",
          minutes=10,
          full="The mean development loss of the configurations with warm-up 4,000 minus the mean of those with "
               "1,000, over the shipped tuning runs of the half run first (configurations 0 to 3).",
          partial="The difference the other way round, WER instead of loss, one pair of configurations, another "
                  "setting or the recurrent model.")
def _ex_17_4():
    return _effect()


@mistake("17.4", "This is the effect the other way round (1,000 minus 4,000); the exercise asks for the mean at "
         "warm-up 4,000 minus the mean at 1,000")
def _ex_17_4_flipped():
    return -_effect()


@mistake("17.4", "This is the effect on the development WER (a share); the exercise asks for the loss")
def _ex_17_4_wer():
    return _effect(field="dev_wer")


@mistake("17.4", "This is the recurrent model's effect; the exercise asks for the Transformer's")
def _ex_17_4_recurrent():
    return _effect(arch="recurrent")


@mistake("17.4", "This is the effect of the dropout rate (0.3 minus 0.1); the exercise asks for the warm-up's")
def _ex_17_4_dropout():
    return _effect(setting="dropout")


@mistake("17.4", "This is the effect of the rate's factor (1 minus 0.5); the exercise asks for the warm-up's")
def _ex_17_4_factor():
    return _effect(setting="factor")


@mistake("17.4", "This compares configurations 0 and 1 alone, which also differ in their factor; the effect "
         "averages every configuration with each warm-up")
def _ex_17_4_one_pair():
    from ..experiments.baseline import tuning_results

    results = tuning_results()["transformer"]
    return round(results[0]["dev_loss"] - results[1]["dev_loss"], 10)


# ---------------------------------------------------------------- 17.5, the convergence rule by hand

#: The exercise's evaluations: (step, dev loss, dev WER) every 1,000 steps of a made-up run.
EVALS = ((1000, 1.20, 0.60), (2000, 1.00, 0.45), (3000, 0.92, 0.40), (4000, 0.93, 0.39), (5000, 0.94, 0.37),
         (6000, 0.95, 0.38), (7000, 0.96, 0.37), (8000, 0.97, 0.38), (9000, 0.99, 0.38), (10000, 1.00, 0.39),
         (11000, 1.01, 0.38))
WINDOW = 4000


def _first_converged(measures=("dev_loss", "dev_wer"), ties_new=False, strict=False,
                     ties_reported_first=False) -> tuple[int, int, int | None]:
    """(step of the lowest dev loss, step of the lowest dev WER, the first evaluated step at which
    no best of ``measures`` lies in the last ``WINDOW`` steps): ``baseline.stopped_improving``'s rule
    for the answer. The flags compute the mistakes: ``ties_new`` reads a tie as a new best (in the
    window and, unless ``ties_reported_first``, in the two steps given); ``strict`` asks the bests
    to lie strictly before the window."""
    from ..experiments.baseline import stopped_improving

    records = [dict(step=s, dev_loss=loss, dev_wer=w) for s, loss, w in EVALS]

    def best_step(m, upto, last_of_ties):
        low = min(r[m] for r in upto)
        at = [r["step"] for r in upto if r[m] == low]
        return at[-1] if last_of_ties else at[0]

    def converged(step):
        if measures == ("dev_loss", "dev_wer") and not ties_new and not strict:
            return stopped_improving(records, step, WINDOW)["converged"]
        best = max(best_step(m, [r for r in records if r["step"] <= step], ties_new) for m in measures)
        return best < step - WINDOW if strict else best <= step - WINDOW

    first = next((step for step, *_ in EVALS if step - WINDOW >= EVALS[0][0] and converged(step)), None)
    reported = ties_new and not ties_reported_first
    return best_step("dev_loss", records, reported), best_step("dev_wer", records, reported), first


@register("17.5", prompt="Give a tuple of 3 ints: the step of the exercise's lowest dev loss, the step of its lowest "
          "dev WER (the first, if the value repeats), and the first step at which the run counts as converged by "
          "the chapter's rule, with a window of 4,000 steps.",
          hint="at a step S, find the step of the lowest dev loss and the step of the lowest dev WER among the "
               "evaluations up to S (a tie is not a new best: keep the first); the run is converged at S when "
               "both lie at S - 4,000 or before.",
          minutes=10,
          full="The steps of the two bests, ties kept at their first step, and the first step at which both lie "
               "at least 4,000 steps back; it agrees with `stopped_improving`.",
          partial="The loss alone, a tie read as a new best, or the bests required strictly before S - 4,000.")
def _ex_17_5():
    return _first_converged()


@mistake("17.5", "Your third number reads the loss alone; the rule asks that the WER has stopped improving too")
def _ex_17_5_loss_only():
    return _first_converged(("dev_loss",))


@mistake("17.5", "This counts a WER equal to the best as a new best; only a lower value is a new best")
def _ex_17_5_ties():
    return _first_converged(ties_new=True)


@mistake("17.5", "Your third number asks the bests to lie strictly before S - 4,000; a best at S - 4,000 "
         "exactly is already outside the last 4,000 steps")
def _ex_17_5_strict():
    return _first_converged(strict=True)


@mistake("17.5", "Your third number lets the WER equal to the best at step 7,000 restart the window; only a lower "
         "value is a new best, as your second number says")
def _ex_17_5_tie_restarts():
    return _first_converged(ties_new=True, ties_reported_first=True)


@mistake("17.5", "The first two numbers are swapped: the loss comes first, then the WER")
def _ex_17_5_swapped():
    loss, wer, first = _first_converged()
    return wer, loss, first


# ---------------------------------------------------------------- 17.6, stopping a translation try on its loss

#: The exercise's log: the recurrent model's shipped translation try with half the learning rate.
TRY = "lr0.5"


def _stop_on_loss(shipped: str = "rnn-" + TRY, field: str = "dev_chrf", best: str = "max") -> tuple[int, int, float]:
    """(step of the lowest dev loss, step of the best ``field``, the ``field`` points lost by stopping at
    the first instead of the second) from the shipped translation log ``shipped``; ``best="last"`` reads
    the last evaluation instead of the best (a mistake)."""
    from ..tasks.translation import train as mt

    _, records = mt.read_log(mt.MEASURE_DIR / f"{shipped}.jsonl")
    evals = [r for r in records if field in r]
    at_loss = min(evals, key=lambda r: r["dev_loss"])  # min and max keep the first of equal values
    at_best = max(evals, key=lambda r: r[field]) if best == "max" else evals[-1]
    return at_loss["step"], at_best["step"], round(at_best[field] - at_loss[field], 10)


@register("17.6", prompt="Give a tuple (int, int, float) for the recurrent model's translation try `lr0.5`: the step "
          "of its lowest development loss, the step of its highest development chrF, and the chrF points lost by "
          "keeping the checkpoint of the lowest loss instead of the one of the highest chrF, to 2 decimals.",
          decimals=2,
          hint="mt.read_log(mt.MEASURE_DIR / 'rnn-lr0.5.jsonl') returns (start, records); the records with "
               "'dev_chrf' are the evaluations, each with 'step', 'dev_loss' and 'dev_chrf'. Take the one with the "
               "lowest dev_loss, the one with the highest dev_chrf, and subtract their chrF.",
          minutes=10,
          full="The two steps read from the recurrent model's log of the try `lr0.5`, and the chrF at the best step "
               "minus the chrF at the step of the lowest loss.",
          partial="The Transformer's log, the last evaluation instead of the best, BLEU instead of chrF, or the "
                  "difference the other way round.")
def _ex_17_6():
    return _stop_on_loss()


@mistake("17.6", "These numbers come from the Transformer's log of the try `lr0.5`; the exercise asks for the "
         "recurrent model's (`rnn-lr0.5`)")
def _ex_17_6_transformer():
    return _stop_on_loss(TRY)


@mistake("17.6", "Your second number is the last evaluation; the exercise asks for the step of the highest chrF")
def _ex_17_6_last():
    return _stop_on_loss(best="last")


@mistake("17.6", "These read the development BLEU; the exercise asks for chrF")
def _ex_17_6_bleu():
    return _stop_on_loss(field="dev_bleu")


@mistake("17.6", "Your third number is the difference the other way round: the points lost are the chrF at its "
         "highest minus the chrF at the lowest loss")
def _ex_17_6_flipped():
    loss, best, lost = _stop_on_loss()
    return loss, best, -lost
