"""Supervised embeddings or the dual encoder trained on Dask workers against one process: dev
accuracy and wall time of ``fit_chunks`` over a ``dask.bag`` of chunks (iterative parameter
mixing).

Dialog bAbI task ``--task``, its training dialogs cut into chunks of ``--chunk`` examples, with
``--model``

- ``se``: ``SupervisedEmbeddingRanker`` at the task's ``se`` bench preset;
- ``dual-encoder``: ``DualEncoderRanker`` at its defaults (Lowe et al.'s LSTM sizes) for
  ``--epochs`` epochs (default 3), which learns this task (a third of the dev responses
  right after one epoch, where the Ubuntu presets stay near chance);

each seeded (0) with the candidate file as its candidates, and fitted

- ``in process``: ``fit_chunks`` over the list of chunks;
- ``P partitions``: ``fit_chunks`` over a bag of those chunks in P partitions, on a
  ``LocalCluster`` of ``--workers`` one-thread worker processes (started, and a tiny fit
  run on each, before the clock), for each P of ``--partitions``.

With ``--bag-epochs F``, the bag fits run F times the preset's epochs. Printed:
per-response accuracy on the dev dialogs (test is never read), the wall time of
the fit, and whether one partition gave the in-process model bit for bit. Threads: every
BLAS and numba on one (``NUMBA_NUM_THREADS=1``, set before the workers start). The machine's
load averages are printed before and after: on a shared machine the times are indicative.

Usage::

    python -m benchmarks.cluster_fit_dev --data-home DIR --task 1 --partitions 1 2 4
    python -m benchmarks.cluster_fit_dev --data-home DIR --model dual-encoder --partitions 1 2
"""

from __future__ import annotations

import argparse
import os

if __name__ == "__main__":  # one thread a process, before numpy loads its BLAS (not on import)
    for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")


from benchmarks import cluster_fit_rows  # noqa: E402


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--task", type=int, default=1, choices=range(1, 7))
    parser.add_argument("--model", default="se", choices=["se", "dual-encoder"])
    parser.add_argument("--epochs", type=int, default=3, help="the dual encoder's epochs")
    parser.add_argument("--partitions", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=500, help="examples per chunk")
    parser.add_argument("--bag-epochs", type=float, default=1.0,
                        help="the bag fits' epochs, a multiple of the preset's")  # fmt: skip
    args = parser.parse_args(argv)

    from irdialog import DualEncoderRanker, SupervisedEmbeddingRanker
    from irdialog.bench import load_presets
    from irdialog.datasets import load_dialog_babi

    train = load_dialog_babi(args.task, "trn", args.data_home)
    dev = load_dialog_babi(args.task, "dev", args.data_home)
    if args.model == "se":
        model, params = (
            SupervisedEmbeddingRanker,
            load_presets("dialog-babi", "se")[args.task].params,
        )
    else:
        model, params = DualEncoderRanker, {"epochs": args.epochs}
    step = args.chunk
    chunks = [(train.X[i : i + step], train.y[i : i + step]) for i in range(0, len(train.X), step)]

    def make(scale=1.0):
        epochs = max(1, round(scale * params["epochs"]))
        return model(candidates=train.candidates, random_state=0, **{**params, "epochs": epochs})

    print(f"task {args.task}: {len(train.X)} training examples in {len(chunks)} chunks, "
          f"{len(dev.X)} dev; {model.__name__} {params}")  # fmt: skip
    rows = cluster_fit_rows(
        make, chunks, lambda m: 100 * m.score(dev.X, dev.y),
        partitions=args.partitions, workers=args.workers, bag_epochs=args.bag_epochs,
    )  # fmt: skip
    print("| fit | dev per-response (%) | wall time (s) | the in-process model |")
    print("|---|---|---|---|")
    for label, score, seconds, same in rows:
        print(f"| {label} | {score:.2f} | {seconds:.1f} | {same} |")


if __name__ == "__main__":
    main()
