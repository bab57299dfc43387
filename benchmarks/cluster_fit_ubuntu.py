"""The dual encoder trained on Dask workers against one process: valid R@1 of 10 and wall
time of ``fit_chunks`` over a ``dask.bag`` of chunks (iterative parameter mixing).

An Ubuntu-layout corpus in ``--data-home`` (the bundled sample, or a synthetic one of
``python -m benchmarks.make_ubuntu_corpus``): the rows labelled 1 of its training file, in
chunks of ``--chunk`` rows, fitted by ``DualEncoderRanker`` at the Ubuntu suite's
``--model`` preset (``rnn-dual`` or ``lstm-dual``, seed 0), with ``--epochs`` to override
its epochs,

- ``in process``: ``fit_chunks`` over the list of chunks;
- ``P partitions``: ``fit_chunks`` over a bag of those chunks in P partitions, on a
  ``LocalCluster`` of ``--workers`` one-thread worker processes (started, and a tiny fit
  run on each, before the clock), for each P of ``--partitions``.

With ``--bag-epochs F``, the bag fits run F times the epochs. Printed: R@1 of 10 (ties at
their expected value) on the valid file (test is never read), the wall time of the fit,
and whether one partition gave the in-process model bit for bit. Threads: every BLAS and
numba on one (``NUMBA_NUM_THREADS=1``, set before the workers start). The machine's load
averages are printed before and after: on a shared machine the times are indicative.

Usage::

    python -m benchmarks.cluster_fit_ubuntu --data-home /tmp/ubuntu-10k --partitions 1 2
"""

from __future__ import annotations

import argparse
import os

if __name__ == "__main__":  # one thread a process, before numpy loads its BLAS (not on import)
    for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from benchmarks import cluster_fit_rows  # noqa: E402


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--model", default="rnn-dual", choices=["rnn-dual", "lstm-dual"])
    parser.add_argument("--epochs", type=int, default=None, help="default: the preset's")
    parser.add_argument("--partitions", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=1000, help="training rows per chunk")
    parser.add_argument("--bag-epochs", type=float, default=1.0,
                        help="the bag fits' epochs, a multiple of the others'")  # fmt: skip
    args = parser.parse_args(argv)

    from irdialog import DualEncoderRanker
    from irdialog.bench._ubuntu import UBUNTU_MODELS
    from irdialog.datasets import iter_ubuntu, load_ubuntu
    from irdialog.metrics import recall_at_k

    params = dict(UBUNTU_MODELS[args.model].selection.params)
    if args.epochs is not None:
        params["epochs"] = args.epochs
    chunks = []
    for chunk in iter_ubuntu("train", data_home=args.data_home, chunksize=args.chunk):
        keep = np.flatnonzero(chunk.labels == 1)
        chunks.append(([chunk.X[i] for i in keep], [chunk.y[i] for i in keep]))
    valid = load_ubuntu("valid", data_home=args.data_home)

    def make(scale=1.0):
        return DualEncoderRanker(**{**params, "epochs": max(1, round(scale * params["epochs"]))})

    def r1_of_10(model):
        scores = model.rank_candidates(valid.X, valid.candidate_lists)
        return 100.0 * recall_at_k(scores, 1, 10, ties="expected")

    n_train = sum(len(x) for x, _ in chunks)
    print(f"{n_train} training pairs (label 1) in {len(chunks)} chunks, {len(valid.X)} valid "
          f"rows; {args.model} {params}")  # fmt: skip
    rows = cluster_fit_rows(
        make, chunks, r1_of_10,
        partitions=args.partitions, workers=args.workers, bag_epochs=args.bag_epochs,
    )  # fmt: skip
    print("| fit | valid R@1 of 10 (%) | wall time (s) | the in-process model |")
    print("|---|---|---|---|")
    for label, score, seconds, same in rows:
        print(f"| {label} | {score:.2f} | {seconds:.1f} | {same} |")


if __name__ == "__main__":
    main()
