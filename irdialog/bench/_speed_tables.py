"""Markdown tables of the speed benchmarks (``python -m benchmarks.<name>``).

Their JSON files (``benchmarks/results/speed/``) carry ``"benchmark": <name>`` instead of a
suite; :func:`~irdialog.bench._report.render_block` renders them with the table of that
name, and each script prints the same table.
"""

from __future__ import annotations

from ._provenance import recorded_numba_simd


def retrieval_speed(result: dict) -> list[str]:
    names = {
        "bm25": "BM25Ranker",
        "bm25-stop": "BM25Ranker, bm25s's stop words",
        "tfidf": "TfidfRanker",
        "bm25s": "bm25s (numba)",
    }
    jobs = result["n_jobs"]
    rows = result["rows"]

    def get(row, side, key, fmt="{:,.0f}"):
        value = row.get(side, {}).get(key)
        return "" if value is None else fmt.format(value)

    def ratio(row, side, key):
        ours, peer = row.get(side, {}).get(key), row.get("bm25s", {}).get(key)
        return "" if ours is None or peer is None else f"{ours / peer:.2f}x"

    head = "| corpus | documents | queries |"
    q1 = "queries_per_second_1"
    lines = [
        "Queries per second (tokenising included), one thread:",
        "",
        head + " BM25Ranker | TfidfRanker | bm25s (numba) | BM25Ranker / bm25s "
        "| TfidfRanker / bm25s | rank_bm25 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['corpus']} | {r['n_documents']:,} | {r['n_queries']:,} "
            f"| {get(r, 'bm25', q1)} | {get(r, 'tfidf', q1)} | {get(r, 'bm25s', q1)} "
            f"| {ratio(r, 'bm25', q1)} | {ratio(r, 'tfidf', q1)} "
            f"| {get(r, 'rank_bm25', q1, '{:.1f}')} |"
        )
    for n in (j for j in jobs if j != 1):
        key = f"queries_per_second_{n}"
        lines += [
            "",
            f"{n} threads (irdialog `n_jobs={n}`, bm25s `n_threads={n}`): queries per "
            f"second, and over one thread:",
            "",
            "| corpus | BM25Ranker | TfidfRanker | bm25s (numba) | BM25Ranker / bm25s |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in rows:
            cells = []
            for side in ("bm25", "tfidf", "bm25s"):
                one, many = r.get(side, {}).get("queries_per_second_1"), r.get(side, {}).get(key)
                cells.append("" if many is None else f"{many:,.0f} ({many / one:.2f}x)")
            lines.append(f"| {r['corpus']} | {' | '.join(cells)} | {ratio(r, 'bm25', key)} |")
    lines += [
        "",
        "Gold answer in the top 10 (%), index time (s) and peak memory while indexing "
        "(GiB over the process before it):",
        "",
        "| corpus | gold in top 10: BM25Ranker / TfidfRanker / bm25s | index s: BM25Ranker "
        "/ TfidfRanker / bm25s | index GiB: BM25Ranker / TfidfRanker / bm25s |",
        "|---|---|---|---|",
    ]
    for r in rows:
        sides = ("bm25", "tfidf", "bm25s")
        lines.append(
            f"| {r['corpus']} | {' / '.join(get(r, s, 'gold_in_top10', '{:.1f}') for s in sides)} "
            f"| {' / '.join(get(r, s, 'index_seconds', '{:.1f}') for s in sides)} "
            f"| {' / '.join(get(r, s, 'index_peak_gib', '{:.2f}') for s in sides)} |"
        )
    lines += [
        "",
        "MaxScore against exhaustive scoring (the kernel alone, one thread, all the "
        "queries): postings per query, the share scored, kernel seconds:",
        "",
        "| corpus | model | postings / query | scored / query | share | pruned s "
        "| exhaustive s | same top 10 |",
        "|---|---|---:|---:|---:|---:|---:|:---:|",
    ]
    for r in rows:
        for side in ("bm25", "bm25-stop", "tfidf"):
            x = r.get(side)
            if x is None:
                continue
            lines.append(
                f"| {r['corpus']} | {names[side]} | {x['postings_per_query']:,.0f} "
                f"| {x['scored_per_query']:,.0f} | {100 * x['scored_share']:.1f}% "
                f"| {x['kernel_pruned_seconds']:.2f} | {x['kernel_exhaustive_seconds']:.2f} "
                f"| {'yes' if x['same_top10_as_exhaustive'] else 'NO'} ({x['checked_queries']:,}) |"
            )
    lines += [
        "",
        "BM25Ranker saved with `irdialog.persist.save(compress=False)` and loaded "
        'memory-mapped (`load(path, mmap_mode="r")`):',
        "",
        "| corpus | file GiB | save s | load s | first 1,000 queries after load s | same ranks |",
        "|---|---:|---:|---:|---:|:---:|",
    ]
    for r in rows:
        x = r.get("bm25", {})
        if "load_seconds" in x:
            lines.append(
                f"| {r['corpus']} | {x['file_gib']:.2f} | {x['save_seconds']:.1f} "
                f"| {x['load_seconds']:.2f} | {x['first_queries_after_load_seconds']:.2f} "
                f"| {'yes' if x['loaded_ranks_equal'] else 'NO'} |"
            )
    return lines


def pool_speed(result: dict) -> list[str]:
    lines = [
        f"{result['n_contexts']:,} contexts x {result['n_pool']:,} candidates, one thread; "
        "scoring, the same-shape products alone and faiss alternated (best of "
        f"{len(result['rows'][0]['times']['score'])}):",
        "",
        "| model | dim | rank s | embed s | score s | same-shape products s | share "
        f"| faiss-cpu {result['faiss']} IndexFlatIP s | faiss / ours | same top-10 sets "
        "| peak RSS GiB | hits@1 pool / candidates |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['model']} | {r['dim']} | {r['rank_seconds']:.1f} "
            f"| {r['embed_pool_and_contexts_seconds']:.1f} | {r['score_seconds']:.1f} "
            f"| {r['same_shape_matmul_seconds']:.1f} | {100 * r['share_of_matmul']:.0f}% "
            f"| {r['faiss_seconds']:.1f} | {r['speedup_vs_faiss']:.2f}x "
            f"| {r['same_top10_sets_as_faiss']:.1f}% | {r['peak_rss_gib_after']:.2f} "
            f"| {r['hits@1_in_pool']:.1f} / {r['hits@1_in_candidates']:.1f} |"
        )
    return lines


def candidate_lists_speed(result: dict) -> list[str]:
    names = {"tfidf": "TfidfRanker", "bm25": "BM25Ranker", "se": "SupervisedEmbeddingRanker",
             "memn2n": "MemN2NRanker"}  # fmt: skip
    lines = [
        f"`rank_candidates` on {result['n_queries']:,} questions, each with a pool of about "
        "200 answers, one thread; the pair path, `rank_candidates` and scikit-learn's "
        f"TfidfVectorizer pipeline alternated (best of {result['repeat']}). P@1 counts a tie "
        "between a right and a wrong answer as a miss. The first call on a fitted model, timed "
        "alone, also encodes BM25's candidates (once):",
        "",
        "| workload | script | model | pair path s | rank_candidates s | first call s "
        "| speed-up | scikit-learn s | scikit-learn / ours | same scores | P@1 (scikit-learn) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|:---:|---:|",
    ]
    for r in result["rows"]:
        s = r["seconds"]
        sk = r.get("speedup_vs_sklearn")
        sklearn = "| | |" if sk is None else f"| {s['sklearn']:.2f} | {sk:.1f}x |"
        same = "yes" if r["equal_to_pair_path"] else f"NO ({r['max_abs_difference']:.1e})"
        p1 = f"{r['p_at_1']:.1f}"
        if "p_at_1_sklearn" in r:
            p1 += f" ({r['p_at_1_sklearn']:.1f})"
        first = r.get("first_call_seconds")
        first = "" if first is None else f"{first:.2f}"
        lines.append(
            f"| {r['workload']} | {r['script']} | {names[r['model']]} | {s['before']:.1f} "
            f"| {s['new']:.2f} | {first} | {r['speedup_vs_before']:.0f}x {sklearn} {same} "
            f"| {p1} |"
        )
    return lines


def movie_memn2n_epoch(result: dict) -> list[str]:
    lines = [
        "| task | optimizer | s/epoch (training steps) | forward + backward | optimizer step "
        "| fit s (epochs) |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['task']} | {r['optimizer']} | {r['train_seconds_per_epoch']:.1f} "
            f"| {r['batch_loss_grad_seconds_per_epoch']:.1f} "
            f"| {r['optimizer_step_seconds_per_epoch']:.1f} "
            f"| {r['fit_seconds']:.1f} ({r['epochs']}) |"
        )
    return lines


def compile_time(result: dict) -> list[str]:
    cold, warm = result["cold"], result["warm"]
    one_core = result.get("cold_without_helper")

    def row(label, run, ratio):
        compiled = sum(run["compile_seconds"].values())
        cpu = f"{run['cpu_seconds']:.1f}" if "cpu_seconds" in run else ""
        return f"| {label} | {run['process_seconds']:.1f} | {ratio:.2f} | {cpu} | {compiled:.1f} |"

    lines = [
        "| `irdialog run --quiet` | wall s | / warm | CPU s (with the helper) "
        "| numba compiling in the main process, s |",
        "|---|---:|---:|---:|---:|",
    ]
    if one_core is not None:
        label = "cold, compile-ahead helper off (`IRDIALOG_COMPILE_AHEAD=0`)"
        lines.append(row(label, one_core, result["cold_without_helper_over_warm"]))
    lines += [
        row("cold (empty numba cache)", cold, result["cold_over_warm"]),
        row("warm (cache filled by the cold run)", warm, 1.0),
        "",
        "Compile time of the top-level kernels compiled in the main process (each with what it "
        f"calls), cold{', helper off' if one_core is not None else ''}:",
        "",
        "| kernel | s |",
        "|---|---:|",
    ]
    first = one_core if one_core is not None else cold
    for name, seconds in sorted(first["compile_seconds"].items(), key=lambda kv: -kv[1]):
        lines.append(f"| `{name.removeprefix('irdialog.')}` | {seconds:.1f} |")
    return lines


def recurrent_speed(result: dict) -> list[str]:
    setting = result["setting"]
    lines = [
        f"CPU seconds per epoch ({setting['batches_per_epoch']} batches of {setting['batch']} "
        f"sequences of {setting['sequence_length'][0]}-{setting['sequence_length'][1]} tokens, "
        f"vocabulary {setting['vocab']}, embedding {setting['embedding_dim']}; forward, "
        "backward, clipping and Adam), one thread each; numpy float32 matmul "
        f"{result['numpy_float32_matmul_gflops']:.1f} GFLOP/s. Speed-up > 1: irdialog is faster.",
        "",
        "| cell | hidden | irdialog s | torch packed s | torch padded s | vs packed | vs padded |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['cell']} | {r['hidden']} | {r['irdialog_s']:.3f} | {r['torch_packed_s']:.3f}"
            f" | {r['torch_padded_s']:.3f} | {r['speedup_vs_packed']:.2f}x"
            f" | {r['speedup_vs_padded']:.2f}x |"
        )
    return lines


def speed(result: dict) -> list[str]:
    target = recorded_numba_simd(result.get("provenance") or {})
    compiled = f", numba compiled for {target}" if target else ""
    lines = [
        "Supervised-embedding training kernel (`se_sgd_epoch`) on dialog bAbI, best epoch, next "
        f"to numpy's float32 1024 x 1024 matmul timed in turn with the epochs{compiled}:",
        "",
        "| task | examples | d | negatives | history | examples/s | s/epoch | GFLOP/s "
        "| matmul GFLOP/s (1 thread) | share | on CPU time |",
        "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        s = r["settings"]
        lines.append(
            f"| {r['task']} | {r['n_examples']:,} | {s['embedding_dim']} | {s['n_negatives']} "
            f"| {'yes' if s['use_history'] else 'no'} | {r['examples_per_s']:,.0f} "
            f"| {r['s_per_epoch']:.3f} | {r['kernel_gflops']:.2f} "
            f"| {r['matmul_gflops_1thread']:.2f} | {100 * r['ratio']:.1f}% "
            f"| {100 * r['ratio_cpu_time']:.1f}% |"
        )
    return lines


def speed_memn2n(result: dict) -> list[str]:
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


def training_threads(result: dict) -> list[str]:
    jobs = [str(n) for n in result["jobs"]]
    many = jobs[1:]
    lines = [
        f"A fit with `n_jobs=N` against the same fit with one thread, on a {result['cores']}-core "
        f"machine (best of {result['repeat']} fits per side after a warm-up fit, the sides "
        "taking turns, over the rounds in which no other process took more than 5% of a core; "
        "BLAS on one thread throughout), and each fitted model's score:",
        "",
        "| workload | one thread, s | "
        + " | ".join(f"n_jobs={n}, s | speed-up" for n in many)
        + " | metric | "
        + " | ".join(f"n_jobs={n}" for n in jobs)
        + " | quiet rounds |",
        "|---|---:|" + "---:|---:|" * len(many) + "---|" + "---:|" * len(jobs) + "---:|",
    ]
    for r in result["rows"]:
        times = " | ".join(f"{r['seconds'][n]:.2f} | {r['speedup'][n]:.2f}x" for n in many)
        scores = " | ".join(f"{r['score'][n]:.2f}" for n in jobs)
        one = f"{r['seconds'][jobs[0]]:.2f}"
        quiet = f"{r['quiet_rounds']} of {result['repeat']}"
        lines.append(f"| {r['workload']} | {one} | {times} | {r['metric']} | {scores} | {quiet} |")
    return lines


def training_peers(result: dict) -> list[str]:
    lines = [
        f"Whole training runs on a {result['cores']}-core machine: irdialog on one thread "
        "against each peer at the thread counts named (the same model and size, epochs, "
        f"negatives and examples; best wall time of {result['repeat']} fits per side, the "
        "sides taking turns), and each fitted model's accuracy. Above 1x, irdialog is faster:",
        "",
        "| workload | epochs | side | configuration | fit s | side / irdialog | metric "
        "| accuracy |",
        "|---|---:|---|---|---:|---:|---|---:|",
    ]
    for r in result["rows"]:
        epochs = r["params"]["epochs"] + r["params"].get("linear_start", 0)
        for side, seconds in r["seconds"].items():
            lines.append(
                f"| {r['workload']} | {epochs} | {side} | {r['configuration'][side]} "
                f"| {seconds:.2f} | {r['over_irdialog'][side]:.2f}x | {r['metric']} "
                f"| {r['score'][side]:.2f} |"
            )
    return lines


def training_time_to_accuracy(result: dict) -> list[str]:
    lines = [
        f"Each side fitted with each budget of epochs on a {result['cores']}-core machine "
        f"(best wall time of {result['repeat']} fits, the sides taking turns; irdialog on one "
        "thread), its dev accuracy after each budget, and its fastest fit to the target: the "
        "highest accuracy every side reaches. Above 1x, irdialog gets there first:",
        "",
        "| workload | side | configuration | epochs: s, accuracy | target | s to target "
        "| side / irdialog |",
        "|---|---|---|---|---:|---:|---:|",
    ]
    for r in result["rows"]:
        for side, points in r["curves"].items():
            curve = "; ".join(f"{e}: {s:.2f}, {a:.2f}" for e, s, a in points)
            lines.append(
                f"| {r['workload']} | {side} | {r['configuration'][side]} | {curve} "
                f"| {r['target']:.2f} | {r['seconds_to_target'][side]:.2f} "
                f"| {r['over_irdialog'][side]:.2f}x |"
            )
    return lines


def memory_training_time(result: dict) -> list[str]:
    names = {"memn2n": "MemN2N", "gmemn2n": "gated MemN2N", "qrn": "QRN"}
    models = result["models"]
    lines = [
        "CPU seconds to train one run of each memory model on a bAbI QA task at its bench "
        f"preset (the task's 1,000 training questions; one thread; best of {result['repeat']} "
        "fits, the models taking turns), its ratio to MemN2N's, and the presets' restarts "
        "(n_init), by which a bench fit multiplies a run:",
        "",
        "| task | "
        + " | ".join(f"{names[m]}, s" for m in models)
        + " | "
        + " | ".join(f"{names[m]} / MemN2N" for m in models[1:])
        + " | restarts |",
        "|---:|" + "---:|" * (2 * len(models) - 1) + "---|",
    ]
    for r in result["rows"]:
        seconds = r["seconds_per_run"]
        base = seconds[models[0]]
        restarts = ", ".join(f"{names[m]} {r['restarts'][m]}" for m in models)
        lines.append(
            f"| {r['task']} | "
            + " | ".join(f"{seconds[m]:.2f}" for m in models)
            + " | "
            + " | ".join(f"{seconds[m] / base:.2f}x" for m in models[1:])
            + f" | {restarts} |"
        )
    return lines


def sharded_index(result: dict) -> list[str]:
    lines = [
        f"BM25 over {result['n_documents']:,} generated passages, {result['n_queries']:,} "
        f"queries, top 10 (identical on both sides: {result['identical_top_10']}):",
        "",
        "| side | shards | build (s) | queries/s | one query (ms) | empty query (ms) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['side']} | {r['shards']} | {r['build_seconds']:.1f} "
            f"| {r['queries_per_second']:,.0f} | {r['one_query_ms']:.2f} "
            f"| {r['empty_query_ms']:.2f} |"
        )
    lines += [
        "",
        f"Scatter-gather overhead per query: {result['scatter_gather_overhead_ms']:.2f} ms",
    ]
    return lines


def filtered_queries(result: dict) -> list[str]:
    lines = [
        f"BM25 top {result['k']} over {result['n_documents']:,} generated passages, "
        f"{result['n_queries']:,} queries from text, one thread (bm25s "
        f"{result['bm25s_version']}, numba backend):",
        "",
        "| filter | allowed | irdialog q/s | filtered q/s | filtered / unfiltered time "
        "| bm25s q/s | bm25s weight_mask q/s | ours / bm25s, filtered | exact |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in result["rows"]:
        qps = r["queries_per_second"]
        lines.append(
            f"| {100 * r['share']:g}% | {r['n_allowed']:,} | {qps['irdialog']:,.0f} "
            f"| {qps['irdialog filtered']:,.0f} | {r['filtered_over_unfiltered']:.2f} "
            f"| {qps['bm25s']:,.0f} | {qps['bm25s weight_mask']:,.0f} "
            f"| {r['filtered_speedup_vs_bm25s_weight_mask']:.1f}x "
            f"| {'yes' if r['equal_to_reference'] else 'NO'} |"
        )
    small = result["filter_smaller_than_k"]
    lines += [
        "",
        f"A filter of {small['n_allowed']} documents, k {result['k']}, {small['n_queries']} "
        f"queries: ids outside the filter returned, irdialog {small['irdialog_outside_filter']}, "
        f"bm25s {small['bm25s_outside_filter']}.",
    ]
    return lines


SPEED_TABLES = {
    "retrieval-speed": retrieval_speed,
    "pool-speed": pool_speed,
    "candidate-lists-speed": candidate_lists_speed,
    "movie-memn2n-epoch": movie_memn2n_epoch,
    "compile-time": compile_time,
    "recurrent-speed": recurrent_speed,
    "speed": speed,
    "speed-memn2n": speed_memn2n,
    "training-threads": training_threads,
    "training-peers": training_peers,
    "training-time-to-accuracy": training_time_to_accuracy,
    "memory-training-time": memory_training_time,
    "sharded-index": sharded_index,
    "filtered-queries": filtered_queries,
}
