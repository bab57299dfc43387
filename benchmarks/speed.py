"""Training-speed benchmarks of the irdialog models, next to numpy's float32 matmul.

Each ``bench_*`` function times a model's training kernel on real data and returns a
JSON-ready dict; the kernel's achieved GFLOP/s is compared with the GFLOP/s of a float32
matrix product measured in the same process with the same number of threads, the two
timed in turn (:func:`benchmarks.alternate`) so that a busy spell of the machine hits both.

Usage (best-of-N times on the wall clock, and on CPU time, which a busy shared machine
disturbs less; the ratios compare single-threaded kernel and matmul)::

    NUMBA_NUM_THREADS=1 python -m benchmarks.speed [--data-home DIR] \
        [--output benchmarks/results/speed/speed.json]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks import (
    SpeedBenchmark,
    alternate,
    finish_speed_result,
    per_row_ratios,
    table_lines,
)
from irdialog.bench._provenance import recorded_numba_simd


def matmul_work(n: int = 1024, threads: int | None = 1):
    """An n x n float32 matmul with ``threads`` BLAS threads (None: the BLAS default), the
    machine's reference, and its FLOPs: ``(call, flop)``."""
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)

    def call():
        with threadpool_limits(limits=threads, user_api="blas"):
            return a @ b

    call()  # warm up
    return call, 2.0 * n**3


# --- supervised embeddings ---

# The parameters a result records of its model.
_SETTINGS = ("embedding_dim", "n_negatives", "learning_rate", "margin", "use_history")


def supervised_embedding_problem(
    task: int = 5,
    data_home=None,
    *,
    embedding_dim: int = 32,
    n_negatives: int = 100,
    learning_rate: float = 0.01,
    margin: float = 0.01,
    use_history: bool = True,
    random_state: int = 0,
):
    """The model, the arrays its SGD kernel reads, the number of training examples and the
    random generator, for dialog bAbI ``task``'s training set. Defaults: the paper's task
    5 settings (Bordes et al. 2017, Table 8: learning rate 0.01, margin 0.01, 32
    dimensions, 100 negatives, whole history as input)."""
    from irdialog.base import check_contexts, check_responses
    from irdialog.datasets import load_dialog_babi
    from irdialog.embed import SupervisedEmbeddingRanker

    data = load_dialog_babi(task, "trn", data_home=data_home)
    X, y = check_contexts(data.X), check_responses(data.y, len(data.y))
    model = SupervisedEmbeddingRanker(
        candidates=data.candidates,
        embedding_dim=embedding_dim,
        n_negatives=n_negatives,
        learning_rate=learning_rate,
        margin=margin,
        use_history=use_history,
        random_state=random_state,
    )
    rng = np.random.RandomState(random_state)
    return model, model._training_problem(X, y, rng), len(X), rng


def bench_supervised_embedding(task: int = 5, data_home=None, *, epochs: int = 5, **settings):
    """Throughput of :func:`irdialog.embed._kernels.se_sgd_epoch` on dialog bAbI.

    ``settings``: those of :func:`supervised_embedding_problem`, whose defaults are task
    5's at the paper's settings (Bordes et al. 2017, Table 8: learning rate 0.01, margin
    0.01, 32 dimensions, 100 negatives, whole history as input). The
    vocabulary and bags are built once (not timed); then ``epochs`` epochs run from the
    random initialisation, each timed alone, in turn with the matmuls. The kernel counts the
    d-vector multiply-adds it performs (input and candidate embeddings, the scores of the
    sampled negatives, the gradient sums and the updates), so its FLOPs are
    ``2 * embedding_dim * count``: work actually done, nothing extrapolated.

    Returns
    -------
    result : dict
        ``examples_per_s``, ``s_per_epoch`` (best epoch), ``kernel_gflops`` (of that
        epoch), ``matmul_gflops_1thread`` and ``ratio`` (kernel / same-thread matmul), the
        all-thread matmul figure, and the settings.
    """
    model, problem, n_examples, rng = supervised_embedding_problem(task, data_home, **settings)
    embedding_dim = model.embedding_dim
    stats = np.zeros(2)
    model._run_epoch(problem, np.arange(min(10, n_examples), dtype=np.int64), stats)  # compile

    epoch_flops = []  # (FLOPs, mean loss) of each epoch

    def epoch():
        order = rng.permutation(n_examples).astype(np.int64)
        stats[:] = 0.0
        model._run_epoch(problem, order, stats)
        epoch_flops.append((2.0 * embedding_dim * stats[1], stats[0] / n_examples))

    one_thread, mm_flop = matmul_work(threads=1)
    all_threads, _ = matmul_work(threads=None)
    wall, cpu, _ = alternate(
        {"epoch": epoch, "matmul": one_thread, "matmul_all": all_threads}, repeat=epochs
    )
    per_epoch = [
        (s, c, flops, loss) for s, c, (flops, loss) in zip(wall["epoch"], cpu["epoch"], epoch_flops)
    ]
    best_s, _, best_flops, _ = min(per_epoch)
    best_cpu, _, cpu_flops, _ = min((c, s, f, x) for s, c, f, x in per_epoch)
    kernel_gflops = best_flops / best_s / 1e9
    kernel_gflops_cpu = cpu_flops / best_cpu / 1e9
    mm1 = mm_flop / min(wall["matmul"]) / 1e9
    mm1_cpu = mm_flop / min(cpu["matmul"]) / 1e9
    mm_all = mm_flop / min(wall["matmul_all"]) / 1e9
    return {
        "model": "SupervisedEmbeddingRanker",
        "kernel": "irdialog.embed._kernels.se_sgd_epoch",
        "task": task,
        "n_examples": n_examples,
        "n_candidates": len(model.candidates_),
        "n_words": len(model.vocabulary_),
        "settings": {
            **{name: getattr(model, name) for name in _SETTINGS},
            "numba_threads": int(os.environ.get("NUMBA_NUM_THREADS", "0")) or None,
        },
        "examples_per_s": n_examples / best_s,
        "s_per_epoch": best_s,
        "s_per_epoch_all": [round(s, 4) for s, _, _, _ in per_epoch],
        "mean_loss_per_epoch": [round(loss, 5) for _, _, _, loss in per_epoch],
        "gflop_per_epoch": best_flops / 1e9,
        "kernel_gflops": kernel_gflops,
        "matmul_gflops_1thread": mm1,
        "matmul_gflops_all_threads": mm_all,
        "ratio": kernel_gflops / mm1,
        # The same on CPU time, which a busy shared machine disturbs less.
        "kernel_gflops_cpu_time": kernel_gflops_cpu,
        "matmul_gflops_1thread_cpu_time": mm1_cpu,
        "ratio_cpu_time": kernel_gflops_cpu / mm1_cpu,
    }


# --- main ---


def threads_workloads(data_home=None, ubuntu_home=None) -> list[dict]:
    """The fits of supervised embeddings that the ``n_jobs`` benchmark
    (:mod:`benchmarks.training_threads`) times (``ubuntu_home`` unused): dialog bAbI tasks
    1 and 5 at the bench's presets, whole (each a dict as
    :func:`benchmarks.dialog_babi_workload` returns)."""
    from benchmarks import dialog_babi_workload

    return [
        dialog_babi_workload("se", "SupervisedEmbeddingRanker", task, data_home) for task in (1, 5)
    ]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--output", default=None, help="write the result (JSON) here")
    args = parser.parse_args(argv)
    from irdialog.datasets import record_data_files

    with record_data_files() as files:
        # supervised embeddings: the paper's task 5 settings (Table 8), then task 3's
        # (128 dimensions, 1000 negatives, last utterance only, margin 0.1).
        rows = [
            bench_supervised_embedding(5, args.data_home),
            bench_supervised_embedding(
                3, args.data_home, embedding_dim=128, n_negatives=1000, margin=0.1,
                use_history=False,
            ),
        ]  # fmt: skip
    finish_speed_result(
        "speed", {"rows": rows}, argv=argv, seeds=[0], files=files, data_home=args.data_home,
        output=args.output,
    )  # fmt: skip


def _table(result: dict) -> list[str]:
    target = recorded_numba_simd(result.get("provenance") or {})
    compiled = f", numba compiled for {target}" if target else ""
    return table_lines(
        "Supervised-embedding training kernel (`se_sgd_epoch`) on dialog bAbI, best epoch, next "
        f"to numpy's float32 1024 x 1024 matmul timed in turn with the epochs{compiled}:",
        ["task", "examples", "d", "negatives", "history", "examples/s", "s/epoch", "GFLOP/s",
         "matmul GFLOP/s (1 thread)", "share", "on CPU time"],
        "rrrrlrrrrrr",
        map(_row, result["rows"]),
    )  # fmt: skip


def _row(r: dict) -> list[str]:
    s = r["settings"]
    return [
        str(r["task"]),
        f"{r['n_examples']:,}",
        str(s["embedding_dim"]),
        str(s["n_negatives"]),
        "yes" if s["use_history"] else "no",
        f"{r['examples_per_s']:,.0f}",
        f"{r['s_per_epoch']:.3f}",
        f"{r['kernel_gflops']:.2f}",
        f"{r['matmul_gflops_1thread']:.2f}",
        f"{100 * r['ratio']:.1f}%",
        f"{100 * r['ratio_cpu_time']:.1f}%",
    ]


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(
    table=_table,
    ratios=per_row_ratios(lambda row: f"task {row['task']}", ("ratio", "ratio_cpu_time")),
)


if __name__ == "__main__":
    main()
