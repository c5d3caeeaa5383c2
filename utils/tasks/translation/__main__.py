"""``python -m utils.tasks.translation``: the commands of chapter 16 (vocabulary, measure, train, ship,
decode, replace, score; the measurement runs ship through ``python -m utils.experiments.translation``).
The data and subwords are ``data``'s, the model and its training ``train``'s."""

from __future__ import annotations

import argparse
import pathlib
import tempfile

from ...core.env import ROOT, add_cache_option, add_device_option
from . import train as mt
from .data import SPLITS, VOCAB_FILE, VOCAB_SIZE, cached_pairs, data_path, load_vocab, measure_vocab, train_vocab


def _field_value(text: str) -> tuple[str, int | float]:
    """``"p_drop=0.3"`` -> ``("p_drop", 0.3)``; ``"max_tokens=1500"`` -> ``("max_tokens", 1500)`` (``--set``)."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected FIELD=VALUE, got {text!r}")
    try:
        return name, int(value)
    except ValueError:
        try:
            return name, float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}: expected a number, got {value!r}") from None


def _main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m utils.tasks.translation", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("vocab", help=f"train the shared vocabulary into {VOCAB_FILE}")
    v.add_argument("--size", type=int, default=VOCAB_SIZE)
    m = sub.add_parser("measure", help="tokens per sentence and rare dev tokens for several sizes")
    m.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    t = sub.add_parser("train", help="train (or resume) the German-English model")
    t.add_argument("--workdir", default=str(mt.WORKDIR), help="checkpoints, state and log (default: %(default)s)")
    t.add_argument("--steps", type=int, default=mt.MT_TRAIN["steps"], help="train until this step (default: %(default)s)")
    t.add_argument("--threads", type=int, default=1, help="PyTorch threads (default: %(default)s)")
    t.add_argument("--phrases", action="store_true", help="also train on the dictionary's phrase pairs")
    t.add_argument("--seed", type=int, default=mt.MT_TRAIN["seed"], help="initial weights, dropout and batch order "
                   "(default: %(default)s)")
    t.add_argument("--size", choices=tuple(mt.MT_SIZES), default="base", help="the model's size (default: %(default)s)")
    t.add_argument("--arch", choices=mt.ARCHS, default="transformer",
                   help="the model: the Transformer, or chapter 17's recurrent model (default: %(default)s)")
    t.add_argument("--dev-size", type=int, default=None, metavar="N", help="evaluate on the first N dev pairs only")
    t.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", type=_field_value,
                   help="change one field of the recipe or the model, e.g. --set p_drop=0.3 --set max_tokens=1500")
    add_device_option(t)
    s = sub.add_parser("ship", help=f"average the last checkpoints into {mt.AVG_FILE}")
    s.add_argument("--workdir", default=str(mt.WORKDIR))
    s.add_argument("--keep-last", type=int, default=mt.MT_TRAIN["keep_last"], help="checkpoints to average (default: %(default)s)")
    s.add_argument("--dtype", choices=("float16", "float32"), default="float16", help="stored weights (default: %(default)s)")
    s.add_argument("--end", default=None, metavar="STEP|best",
                   help="average the checkpoints up to this step, or up to the best dev chrF ('best'), instead of the last")
    s.add_argument("--out", required=True, help=f"the averaged weights' file; {mt.AVG_FILE.relative_to(ROOT)} (the "
                   f"shipped model, with {mt.LAST_FILE.name} beside it) only when named: nothing shipped is overwritten "
                   f"by default")
    d = sub.add_parser("decode", help="translate the test split with both shipped models, greedy and beam")
    d.add_argument("--out", required=True, help=f"the translations' file; {mt.OUTPUTS_FILE.relative_to(ROOT)} (the "
                   f"shipped ones, which chapter 16 reads) only when named")
    d.add_argument("--threads", type=int, default=1, help="PyTorch threads (default: %(default)s)")
    add_device_option(d)
    add_cache_option(d)
    x = sub.add_parser("replace", help="look up the unseen words of the shipped average's beam test translations "
                       "through its cross-attention (chapter 16)")
    x.add_argument("--out", required=True, help=f"the translations' file; {mt.REPLACED_FILE.relative_to(ROOT)} (the "
                   "shipped one, which chapter 16 reads) only when named")
    x.add_argument("--threads", type=int, default=1, help="PyTorch threads (default: %(default)s)")
    add_device_option(x)
    e = sub.add_parser("score", help="BLEU and chrF of the shipped average (test split, beam 4, alpha 0.6)")
    e.add_argument("--path", default=str(mt.AVG_FILE))
    e.add_argument("--split", choices=tuple(SPLITS), default="test")
    e.add_argument("--decode", choices=mt.DECODES, default="beam")
    e.add_argument("--sentences", type=int, default=None, metavar="N", help="score only the first N pairs of the split")
    add_device_option(e)
    add_cache_option(e)
    args = parser.parse_args(argv)
    if args.cmd == "vocab":
        print("wrote", train_vocab(VOCAB_FILE, args.size))
    elif args.cmd == "train":
        mt.train_translation(args.workdir, steps=args.steps, threads=args.threads, phrases=args.phrases, seed=args.seed,
                             dev_size=args.dev_size, size=args.size, device=args.device, arch=args.arch,
                             **dict(args.set))
    elif args.cmd == "ship":
        end = args.end
        if end == "best":
            end = mt.best_step(mt.read_log(pathlib.Path(args.workdir) / "log.jsonl")[1])
        elif end is not None:
            end = int(end) if end.isdigit() else parser.error(f"--end: expected a step or 'best', got {end!r}")
        print("wrote", mt.ship(args.workdir, args.out, keep_last=args.keep_last, dtype=args.dtype, end=end))
        if pathlib.Path(args.out).resolve() == mt.AVG_FILE.resolve():  # the shipped pair: the average and the last checkpoint alone
            print("wrote", mt.ship(args.workdir, mt.LAST_FILE, keep_last=1, dtype=args.dtype, end=end))
    elif args.cmd == "decode":
        print("wrote", mt.decode_test_split(args.out, threads=args.threads, device=args.device, cache=args.cache))
    elif args.cmd == "replace":
        print("wrote", mt.replace_test_outputs(args.out, threads=args.threads, device=args.device))
    elif args.cmd == "score":
        r = mt.score_shipped(args.path, args.split, args.decode, args.sentences, device=args.device, cache=args.cache)
        print(f"{args.split} split ({len(r['sources']):,} German sentences), average of steps {r['steps']}, {args.decode}: "
              f"BLEU {r['bleu']:.2f}, chrF {r['chrf']:.2f}")
        print(f"BLEU signature: {r['bleu_signature']}")
        print(f"chrF signature: {r['chrf_signature']}")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            for size in args.sizes:
                r = measure_vocab(load_vocab(train_vocab(pathlib.Path(tmp) / f"v{size}.model", size)), cached_pairs(data_path()))
                print(f"{size:>5}: German {r['de_tokens']:.2f} and English {r['en_tokens']:.2f} tokens per dev "
                      f"sentence; dev tokens <unk> {r['unk']:.3%}, rare (<10 in train) {r['rare']:.2%}")


if __name__ == "__main__":
    _main()
