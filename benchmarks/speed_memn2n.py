"""Speed of MemN2NRanker training, next to numpy's float32 matmul in the same process.

    python -m benchmarks.speed_memn2n [--threads 1] [--repeat 3] \
        [--output benchmarks/results/speed/speed-memn2n.json]

Measures (best of ``--repeat``, since the machine may be shared; each timed fit takes turns
with the matmul, :func:`benchmarks.alternate`):

- dialog bAbI task 1: training seconds per epoch at embedding 32, 3 hops, batch 32,
  memory 50, all 4,212 candidates (fit with 10 epochs minus fit with 0 epochs, i.e. without
  the one-off encoding and final evaluation), and the GFLOP/s that achieves, counting the
  multiply-adds of the forward and backward passes and of the update;
- bAbI QA task 1: the whole ``fit`` (20 linear-start epochs + 100, PE, RN) in seconds;
- numpy float32 matmul GFLOP/s (1024 x 1024 x 1024) with the same BLAS thread count.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks import (
    SpeedBenchmark,
    alternate,
    babi_workload,
    dialog_babi_workload,
    finish_speed_result,
)
from irdialog.bench import load_presets
from irdialog.datasets import load_babi_qa, load_dialog_babi, record_data_files
from irdialog.embed import _memn2n_kernels as K
from irdialog.embed._memn2n import MemN2NRanker

from .speed import matmul_work

DIALOG_SETTING = dict(
    hops=3,
    embedding_dim=32,
    batch_size=32,
    memory_size=50,
    position_encoding=False,
    random_state=0,
)


def epoch_flops(model, X):
    """Multiply-adds (x2) of one training epoch of a fitted model on X."""
    data = model._encode(X)
    d = model.embedding_dim
    C = len(model.candidates_)
    n = len(X)
    n_batches = -(-n // model.batch_size)
    cand_nnz = len(model._cand_tok_)
    n_mat = model.embeddings_.shape[0]
    V = model.embeddings_.shape[1]
    # output layer: logits, dU and dWc products (2BCd each), softmax ~5 per logit
    out = n * (6 * C * d + 5 * C)
    cand = n_batches * 4 * cand_nnz * d  # candidate embeddings and their gradient scatter
    n_mem = np.diff(data.mptr)
    words = np.diff(data.sptr)[data.msent] + 2  # words + speaker + time word
    mem_words = np.add.reduceat(words, data.mptr[:-1]) * (n_mem > 0)
    used = len(set(model._cfg()[K.HEADER :]))  # matrices that embed memories
    mem = 4 * used * mem_words.sum() * d  # memory embeddings, forward and scatter
    mem += model.hops * 12 * n_mem.sum() * d  # attention and read, forward and backward
    query = 4 * np.diff(data.sptr)[data.qsent].sum() * d
    update = n_batches * 4 * n_mat * V * d  # clip norm and step
    return float(out + cand + mem + query + update)


def threads_workloads(data_home=None, ubuntu_home=None) -> list[dict]:
    """The fits of MemN2N that the ``n_jobs`` benchmark times (``ubuntu_home`` unused).

    bAbI QA tasks 1 and 3 at the bench's preset, whose 10 restarts share the threads, and
    at one run (``n_init=1``); dialog bAbI tasks 1 and 5 at the bench's presets, one run
    each (task 5's 30 epochs capped at 3). The threads share a single run's mini-batches.
    Each is a dict as :func:`benchmarks.babi_workload` returns.
    """
    return [
        babi_workload("memn2n", "MemN2NRanker (10 restarts)", 1, data_home),
        babi_workload("memn2n", "MemN2NRanker (10 restarts)", 3, data_home),
        babi_workload("memn2n", "MemN2NRanker (one run)", 1, data_home, n_init=1),
        babi_workload("memn2n", "MemN2NRanker (one run)", 3, data_home, n_init=1),
        dialog_babi_workload("memn2n", "MemN2NRanker (one run)", 1, data_home),
        dialog_babi_workload("memn2n", "MemN2NRanker (one run)", 5, data_home, epochs=3),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--data-home", default=None, help="default: $IRDIALOG_DATA, then bundled")
    ap.add_argument("--output")
    args = ap.parse_args(argv)
    with record_data_files() as files:
        dialog = load_dialog_babi(1, "trn", data_home=args.data_home)
        qa = load_babi_qa(1, "train", data_home=args.data_home)
    with threadpool_limits(args.threads):
        # warm the numba cache / JIT before timing anything
        MemN2NRanker(candidates=dialog.candidates, **dict(DIALOG_SETTING, epochs=1)).fit(
            dialog.X[:200], dialog.y[:200]
        )
        matmul, matmul_flop = matmul_work(threads=args.threads)

        def fit_dialog(epochs):
            model = MemN2NRanker(candidates=dialog.candidates, epochs=epochs, **DIALOG_SETTING)
            return model.fit(dialog.X, dialog.y)

        preset = {**load_presets("babi-qa", "memn2n")[1].params, "n_init": 1}
        qa_model = MemN2NRanker(**preset, random_state=0)
        wall, _, _ = alternate(
            {
                "dialog_0": lambda: fit_dialog(0),
                "dialog_n": lambda: fit_dialog(args.epochs),
                "qa": lambda: qa_model.fit(qa.X, qa.y),
                "matmul": matmul,
            },
            args.repeat,
        )
        best = {name: min(times) for name, times in wall.items()}
        per_epoch = (best["dialog_n"] - best["dialog_0"]) / args.epochs
        flops = epoch_flops(fit_dialog(1), dialog.X)
        gemm = matmul_flop / best["matmul"] / 1e9
    fields = {
        "blas_threads": args.threads,
        "dialog_t1_seconds_per_epoch": round(per_epoch, 4),
        "dialog_t1_gflop_per_epoch": round(flops / 1e9, 3),
        "dialog_t1_gflops": round(flops / per_epoch / 1e9, 2),
        "numpy_sgemm_gflops": round(gemm, 2),
        "fraction_of_sgemm": round(flops / per_epoch / 1e9 / gemm, 3),
        "babi_t1_full_fit_seconds": round(best["qa"], 2),
        "load_average": os.getloadavg()[0],
    }
    finish_speed_result(
        "speed-memn2n", fields, argv=argv, seeds=[0], files=files, data_home=args.data_home,
        output=args.output,
    )  # fmt: skip


def _table(result: dict) -> list[str]:
    r = result
    return [
        f"MemN2N training, {r['blas_threads']} BLAS thread(s), next to numpy's float32 matmul "
        "timed in turn with the fits:",
        "",
        "| dialog bAbI task 1 s/epoch | GFLOP/epoch | GFLOP/s | matmul GFLOP/s | share "
        "| bAbI QA task 1 whole fit s |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {r['dialog_t1_seconds_per_epoch']:.3f} | {r['dialog_t1_gflop_per_epoch']:.2f} "
        f"| {r['dialog_t1_gflops']:.2f} | {r['numpy_sgemm_gflops']:.2f} "
        f"| {100 * r['fraction_of_sgemm']:.1f}% | {r['babi_t1_full_fit_seconds']:.1f} |",
    ]


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(table=_table, ratios=lambda r: {"fraction_of_sgemm": r["fraction_of_sgemm"]})


if __name__ == "__main__":
    main()
