"""Training-speed benchmarks of the irdialog models, next to numpy's float32 matmul.

Each ``bench_*`` function times a model's training kernel on real data and returns a
JSON-ready dict; the kernel's achieved GFLOP/s is compared with the GFLOP/s of a float32
matrix product measured in the same process with the same number of threads.

Usage (best-of-N times on the wall clock, and on CPU time, which a busy shared machine
disturbs less; the ratios compare single-threaded kernel and matmul)::

    NUMBA_NUM_THREADS=1 python -m benchmarks.speed [--data-home DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits


def numpy_matmul_gflops(
    n: int = 1024, threads: int | None = 1, seconds: float = 1.0, clock=time.perf_counter
) -> float:
    """Best GFLOP/s of an n x n float32 matmul over ``seconds``, with ``threads`` BLAS threads
    (None: the BLAS default), timed by ``clock`` (use the wall clock with several threads:
    ``time.process_time`` adds up the threads' CPU time)."""
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    with threadpool_limits(limits=threads, user_api="blas"):
        a @ b  # warm up
        best = np.inf
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            t = clock()
            a @ b
            best = min(best, clock() - t)
    return 2.0 * n**3 / best / 1e9


# --- supervised embeddings ---


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


def bench_supervised_embedding(
    task: int = 5,
    data_home=None,
    *,
    epochs: int = 5,
    embedding_dim: int = 32,
    n_negatives: int = 100,
    learning_rate: float = 0.01,
    margin: float = 0.01,
    use_history: bool = True,
    random_state: int = 0,
) -> dict:
    """Throughput of :func:`irdialog.embed._kernels.se_sgd_epoch` on dialog bAbI.

    Defaults: task 5 at the paper's settings (Bordes et al. 2017, Table 8: learning rate
    0.01, margin 0.01, 32 dimensions, 100 negatives, whole history as input). The
    vocabulary and bags are built once (not timed); then ``epochs`` epochs run from the
    random initialisation, each timed alone on the wall clock. The kernel counts the
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
    model, problem, n_examples, rng = supervised_embedding_problem(
        task,
        data_home,
        embedding_dim=embedding_dim,
        n_negatives=n_negatives,
        learning_rate=learning_rate,
        margin=margin,
        use_history=use_history,
        random_state=random_state,
    )
    stats = np.zeros(2)
    model._run_epoch(problem, np.arange(min(10, n_examples), dtype=np.int64), stats)  # compile

    per_epoch = []
    for _ in range(epochs):
        order = rng.permutation(n_examples).astype(np.int64)
        stats[:] = 0.0
        t, c = time.perf_counter(), time.process_time()
        model._run_epoch(problem, order, stats)
        seconds, cpu = time.perf_counter() - t, time.process_time() - c
        per_epoch.append((seconds, cpu, 2.0 * embedding_dim * stats[1], stats[0] / n_examples))
    best_s, _, best_flops, _ = min(per_epoch)
    best_cpu, _, cpu_flops, _ = min((cpu, s, f, x) for s, cpu, f, x in per_epoch)
    kernel_gflops = best_flops / best_s / 1e9
    kernel_gflops_cpu = cpu_flops / best_cpu / 1e9
    mm1 = numpy_matmul_gflops(threads=1)
    mm1_cpu = numpy_matmul_gflops(threads=1, clock=time.process_time)
    mm_all = numpy_matmul_gflops(threads=None)
    return {
        "model": "SupervisedEmbeddingRanker",
        "kernel": "irdialog.embed._kernels.se_sgd_epoch",
        "task": task,
        "n_examples": n_examples,
        "n_candidates": len(model.candidates_),
        "n_words": len(model.vocabulary_),
        "settings": {
            "embedding_dim": embedding_dim,
            "n_negatives": n_negatives,
            "learning_rate": learning_rate,
            "margin": margin,
            "use_history": use_history,
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


def _print_supervised_embedding(r: dict) -> None:
    s = r["settings"]
    print(
        f"SupervisedEmbeddingRanker, dialog bAbI task {r['task']}: {r['n_examples']} examples, "
        f"{r['n_candidates']} candidates, {r['n_words']} words; d={s['embedding_dim']}, "
        f"{s['n_negatives']} negatives, lr={s['learning_rate']}, margin={s['margin']}, "
        f"history={s['use_history']}"
    )
    print(f"  training kernel   {r['examples_per_s']:>12,.0f} examples/s")
    print(f"                    {r['s_per_epoch']:>12.4f} s/epoch (best of {r['s_per_epoch_all']})")
    gflop = r["gflop_per_epoch"]
    print(f"                    {r['kernel_gflops']:>12.2f} GFLOP/s ({gflop:.3f} GFLOP/epoch)")
    print(f"  numpy f32 matmul  {r['matmul_gflops_1thread']:>12.2f} GFLOP/s (1 thread)")
    print(f"                    {r['matmul_gflops_all_threads']:>12.2f} GFLOP/s (all threads)")
    print(f"  ratio             {100 * r['ratio']:>11.1f} % of the 1-thread matmul")
    print(
        f"  on CPU time       {r['kernel_gflops_cpu_time']:>12.2f} / "
        f"{r['matmul_gflops_1thread_cpu_time']:.2f} GFLOP/s = "
        f"{100 * r['ratio_cpu_time']:.1f} %"
    )


# --- main ---


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args(argv)
    results = {}
    # supervised embeddings: the paper's task 5 settings (Table 8), then task 3's
    # (128 dimensions, 1000 negatives, last utterance only, margin 0.1).
    results["supervised_embedding_task5"] = bench_supervised_embedding(5, args.data_home)
    results["supervised_embedding_task3"] = bench_supervised_embedding(
        3, args.data_home, embedding_dim=128, n_negatives=1000, margin=0.1, use_history=False
    )
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for r in results.values():
        _print_supervised_embedding(r)


if __name__ == "__main__":
    main()
