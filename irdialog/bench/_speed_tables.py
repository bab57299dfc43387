"""Markdown tables of the speed benchmarks (``python -m benchmarks.<name>``).

Their JSON files (``benchmarks/results/speed/``) carry ``"benchmark": <name>`` instead of a
suite; :func:`~irdialog.bench._report.render_block` renders them with the table of that
name, and each script prints the same table.
"""

from __future__ import annotations


def retrieval_speed(result: dict) -> list[str]:
    lines = [
        "| documents | irdialog q/s | bm25s q/s | ratio | rank_bm25 q/s "
        "| index s (irdialog / bm25s) | top 10 = dense |",
        "|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    for r in result["rows"]:
        ours, peer = r["irdialog"], r["bm25s"]
        rb = r.get("rank_bm25", {}).get("queries_per_second")
        lines.append(
            f"| {r['n_documents']:,} | {ours['queries_per_second']:.0f} "
            f"| {peer['queries_per_second']:.0f} | {r['speedup_vs_bm25s']:.1f}x "
            f"| {'' if rb is None else f'{rb:.2f}'} "
            f"| {ours['index_seconds']:.1f} / {peer['index_seconds']:.1f} "
            f"| {'yes' if ours['same_top10_as_dense'] else 'NO'} ({ours['checked_queries']}) |"
        )
    return lines


def pool_speed(result: dict) -> list[str]:
    lines = [
        f"{result['n_contexts']:,} contexts x {result['n_pool']:,} candidates, one thread:",
        "",
        "| model | dim | rank s | embed s | score s | score GFLOP/s | matmul GFLOP/s | share "
        "| peak RSS GiB | hits@1 pool / candidates |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['model']} | {r['dim']} | {r['rank_seconds']:.1f} "
            f"| {r['embed_pool_and_contexts_seconds']:.1f} | {r['score_seconds']:.1f} "
            f"| {r['score_gflops']:.1f} | {r['matmul_gflops']:.1f} "
            f"| {100 * r['share_of_matmul']:.0f}% | {r['peak_rss_gib_after']:.2f} "
            f"| {r['hits@1_in_pool']:.1f} / {r['hits@1_in_candidates']:.1f} |"
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


SPEED_TABLES = {
    "retrieval-speed": retrieval_speed,
    "pool-speed": pool_speed,
    "movie-memn2n-epoch": movie_memn2n_epoch,
    "compile-time": compile_time,
    "recurrent-speed": recurrent_speed,
}
