"""Train MemN2NRanker per task and report test (or dev) accuracy: bAbI QA and dialog bAbI.

bAbI QA (1k training questions per task; single-task by default, ``--joint`` for one model
over all tasks; ``--joint --valid-fraction 0.1`` to tune: fit without the last 10% of the
stories of each training file, report accuracy on those, test never loaded):

    python benchmarks/tune_memn2n.py babi-qa --tasks 1-20 --n-init 5 --output qa.jsonl

dialog bAbI (the presets of MEMN2N_DIALOG_BABI_PRESETS unless overridden; ``--eval dev``
to tune, never on test):

    python benchmarks/tune_memn2n.py dialog-babi --tasks 1-6 --match-type --eval tst tst-OOV

Hyper-parameters are overridden with ``--set name=value`` (repeatable). Each result is
printed and, with ``--output``, appended as a JSON row {"task", "accuracy", "n", ...}
(accuracy in percent). Restarts (``--n-init``) are chosen by training error, or by
validation error with ``--set early_stopping=True``: never by test error.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from irdialog import MemN2NRanker
from irdialog.bench._babi import MEMN2N_QA_JOINT
from irdialog.bench._memn2n_presets import MEMN2N_BABI_QA_PRESETS, MEMN2N_DIALOG_BABI_PRESETS
from irdialog.datasets import load_babi_qa, load_dialog_babi
from irdialog.features import MatchTypeFeaturizer
from irdialog.metrics import per_dialog_accuracy, per_response_accuracy

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def parse_tasks(text):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def parse_sets(items):
    params = {}
    for item in items or []:
        name, _, value = item.partition("=")
        try:
            params[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[name] = value
    return params


def valid_cut(groups, fraction):
    """The first story id of the last ``fraction`` of a training file's stories."""
    n_stories = int(np.max(groups)) + 1
    return n_stories - max(1, int(round(fraction * n_stories)))


def emit(row, output):
    print(json.dumps(row), flush=True)
    if output:
        with open(output, "a") as f:
            f.write(json.dumps(row) + "\n")


def run_babi_qa(args, overrides):
    data_home = args.data_home
    tasks = parse_tasks(args.tasks)
    results = {}
    if args.joint:
        Xs, ys, gs, held = [], [], [], {}
        for t in tasks:
            d = load_babi_qa(t, "train", lang=args.lang, data_home=data_home)
            keep = np.ones(len(d.y), dtype=bool)
            if args.valid_fraction:
                keep = d.groups < valid_cut(d.groups, args.valid_fraction)
                held[t] = ([x for x, k in zip(d.X, keep) if not k],
                           [a for a, k in zip(d.y, keep) if not k])  # fmt: skip
            Xs += [x for x, k in zip(d.X, keep) if k]
            ys += [a for a, k in zip(d.y, keep) if k]
            gs += [g + len(gs) for g, k in zip(d.groups, keep) if k]  # stories stay distinct
        params = dict(MEMN2N_QA_JOINT)  # the joint preset of irdialog bench babi-qa
        params.update(overrides)
        t0 = time.perf_counter()
        model = MemN2NRanker(**params, n_init=args.n_init, random_state=args.seed,
                             verbose=args.verbose).fit(Xs, ys, groups=gs)  # fmt: skip
        fit_time = time.perf_counter() - t0
        for t in tasks:
            if args.valid_fraction:  # the held-out stories of the training file, not test
                X_eval, y_eval = held[t]
            else:
                test = load_babi_qa(t, "test", lang=args.lang, data_home=data_home)
                X_eval, y_eval = test.X, test.y
            acc = model.score(X_eval, y_eval)
            results[t] = acc
            emit({"task": t, "split": "valid" if args.valid_fraction else "test",
                  "accuracy": round(100 * acc, 2), "n": len(y_eval), "joint": True,
                  "lang": args.lang, "fit_seconds": round(fit_time, 1), "n_init": args.n_init,
                  "seed": args.seed, "params": params}, args.output)  # fmt: skip
    else:
        for t in tasks:
            train = load_babi_qa(t, "train", lang=args.lang, data_home=data_home)
            test = load_babi_qa(t, "test", lang=args.lang, data_home=data_home)
            params = dict(MEMN2N_BABI_QA_PRESETS[t])
            params.update(overrides)
            t0 = time.perf_counter()
            model = MemN2NRanker(**params, n_init=args.n_init, random_state=args.seed,
                                 verbose=args.verbose)  # fmt: skip
            model.fit(train.X, train.y, groups=train.groups)
            fit_time = time.perf_counter() - t0
            acc = model.score(test.X, test.y)
            results[t] = acc
            emit({"task": t, "accuracy": round(100 * acc, 2), "n": len(test.y),
                  "train_accuracy": round(100 * model.score(train.X, train.y), 2),
                  "lang": args.lang, "fit_seconds": round(fit_time, 1), "n_init": args.n_init,
                  "seed": args.seed, "params": params}, args.output)  # fmt: skip
    errors = {t: 100 * (1 - a) for t, a in results.items()}
    failed = sorted(t for t, e in errors.items() if e > 5)
    split = "validation" if args.joint and args.valid_fraction else "test"
    print(
        f"mean {split} error {np.mean(list(errors.values())):.2f}% over {len(errors)} tasks; "
        f"failed (>5%): {len(failed)} {failed}",
        file=sys.stderr,
    )


def run_dialog_babi(args, overrides):
    for t in parse_tasks(args.tasks):
        train = load_dialog_babi(t, "trn", data_home=args.data_home)
        params = dict(MEMN2N_DIALOG_BABI_PRESETS[t])
        params.update(overrides)
        model = MemN2NRanker(candidates=train.candidates, **params, n_init=args.n_init,
                             random_state=args.seed, verbose=args.verbose)  # fmt: skip
        if args.match_type:
            featurizer = MatchTypeFeaturizer(train.kb, types=args.types).fit(train.X)
            prep = featurizer.transform
        else:

            def prep(X):
                return X

        t0 = time.perf_counter()
        model.fit(prep(train.X), train.y, groups=train.groups)
        fit_time = time.perf_counter() - t0
        for split in args.eval:
            if t == 6 and split == "tst-OOV":
                continue
            d = load_dialog_babi(t, split, data_home=args.data_home)
            pred = model.predict(prep(d.X))
            acc = per_response_accuracy(d.y, pred)
            emit({"task": t, "split": split, "match_type": args.match_type,
                  "accuracy": round(100 * acc, 2), "n": len(d.y),
                  "dialog_accuracy": round(100 * per_dialog_accuracy(d.y, pred, d.groups), 2),
                  "fit_seconds": round(fit_time, 1), "n_iter": model.n_iter_,
                  "seed": args.seed, "params": params}, args.output)  # fmt: skip


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", choices=["babi-qa", "dialog-babi"])
    ap.add_argument("--tasks", default="1-20")
    ap.add_argument("--lang", default="en")
    ap.add_argument("--joint", action="store_true")
    ap.add_argument("--match-type", action="store_true")
    ap.add_argument("--types", nargs="+", help="entity types for match type (default: all)")
    ap.add_argument("--eval", nargs="+", default=["dev"])
    ap.add_argument("--n-init", type=int, default=1)
    ap.add_argument("--valid-fraction", type=float, default=0.0,
                    help="babi-qa --joint: fit without the last stories of each training "
                    "file and report accuracy on them instead of test")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", action="append", metavar="NAME=VALUE")
    ap.add_argument("--data-home", default=os.environ.get("IRDIALOG_DATA", DEFAULT_DATA))
    ap.add_argument("--output")
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    overrides = parse_sets(args.set)
    with threadpool_limits(args.threads):
        if args.dataset == "babi-qa":
            run_babi_qa(args, overrides)
        else:
            run_dialog_babi(args, overrides)


if __name__ == "__main__":
    main()
