"""Seconds per training epoch of irdialog's recurrent encoder next to PyTorch's, one thread.

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH=. \\
        /work/torchenv/bin/python -m benchmarks.recurrent_speed [--repeat 3]

PyTorch is needed only here (``pip install irdialog[bench-torch]``, or a throw-away
environment); irdialog never imports it. Both sides train the same model on the same
batches: a word embedding, one LSTM (or tanh RNN) layer, the final state scored against
``n_classes`` output embeddings, summed softmax cross-entropy, global-norm clipping at 5
and one Adam step per batch. The batches (``batch`` sequences of 50-100 tokens over a
``vocab``-word vocabulary, like bAbI stories) are cut once and sorted by length; PyTorch
reads them through ``pack_padded_sequence`` (so neither side computes padding) and, as a
second row, as a padded batch of the longest length. Each side runs one warm-up epoch,
then the sides take turns for ``--repeat`` epochs and each keeps its best CPU time
(``time.process_time``: one thread each, so the work done whatever else shares the
machine; the best wall times are recorded beside). numpy's float32 matmul GFLOP/s, timed
in the same turns, is recorded as a reference for the machine's speed.

Writes ``benchmarks/results/speed/recurrent-speed.json`` (with provenance, through
:func:`benchmarks.finish_speed_result`) and prints its table.

:func:`threads_workloads` gives the fits of the recurrent models that
:mod:`benchmarks.training_threads` times at one and at two threads.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import tempfile
from importlib import metadata
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks import (
    RESULTS,
    SpeedBenchmark,
    alternate,
    babi_workload,
    finish_speed_result,
    per_row_ratios,
    table_lines,
)
from irdialog.embed import _recurrent_kernels as K

from .speed import matmul_work


def make_batches(n_batches, batch, vocab, lo, hi, n_classes, seed=0):
    """Sequences (ragged ptr, tok), their classes, and the batches as row arrays."""
    rng = np.random.default_rng(seed)
    n = n_batches * batch
    lengths = rng.integers(lo, hi + 1, n)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=ptr[1:])
    tok = rng.integers(1, vocab, ptr[-1]).astype(np.int32)
    y = rng.integers(0, n_classes, n)
    batches = [np.arange(i, i + batch) for i in range(0, n, batch)]
    return ptr, tok, y, batches


def ours_epoch_fn(cell, vocab, emb, hidden, n_classes, ptr, tok, y, batches):
    rng = np.random.default_rng(0)
    G = 4 if cell == "lstm" else 1
    b = 1 / np.sqrt(hidden)
    params = {
        "Emb": rng.normal(0, 0.1, (vocab, emb)),
        "Wx": rng.uniform(-b, b, (emb, G * hidden)),
        "Wh": rng.uniform(-b, b, (hidden, G * hidden)),
        "b": np.zeros(G * hidden),
        "O": rng.normal(0, 0.1, (n_classes + 1, hidden)),
    }
    params = {k: v.astype(np.float32) for k, v in params.items()}
    grads = K.Grads(params)
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    # each class is one output word (1..n_classes)
    cands = (
        np.arange(n_classes + 1, dtype=np.int64),
        np.arange(1, n_classes + 1, dtype=np.int32),
        np.ones(n_classes, np.float32),
    )
    lstm = cell == "lstm"
    step = [0]

    def epoch():
        loss = 0.0
        for rows in batches:
            b_loss, _ = K.reader_batch(params, grads, lstm, ptr, tok, rows, 0, cands, y[rows])
            loss += b_loss
            step[0] += 1
            K.apply_adam(params, grads, moments, 1e-3, 5.0, step[0])
        return loss

    return epoch


def torch_epoch_fn(torch, cell, vocab, emb, hidden, n_classes, ptr, tok, y, batches, packed):
    nn = torch.nn
    torch.manual_seed(0)
    rnn_cls = nn.LSTM if cell == "lstm" else nn.RNN
    model = nn.ModuleDict(
        {
            "emb": nn.Embedding(vocab, emb),
            "rnn": rnn_cls(emb, hidden, batch_first=True),
            "out": nn.Linear(hidden, n_classes, bias=False),
        }
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    # the same batches, as padded tensors sorted by length (longest first)
    prepared = []
    for rows in batches:
        lengths = np.diff(ptr)[rows]
        order = np.argsort(-lengths, kind="stable")
        rows, lengths = rows[order], lengths[order]
        pad = np.zeros((len(rows), lengths.max()), np.int64)
        for j, r in enumerate(rows):
            pad[j, : lengths[j]] = tok[ptr[r] : ptr[r + 1]]
        prepared.append(
            (torch.from_numpy(pad), torch.from_numpy(lengths), torch.from_numpy(y[rows]))
        )
    pack = nn.utils.rnn.pack_padded_sequence
    xent = nn.CrossEntropyLoss(reduction="sum")

    def epoch():
        total = 0.0
        for pad, lengths, target in prepared:
            opt.zero_grad(set_to_none=True)
            x = model["emb"](pad)
            if packed:
                _, state = model["rnn"](pack(x, lengths, batch_first=True))
                h = state[0][0] if cell == "lstm" else state[0]
            else:
                out, _ = model["rnn"](x)
                h = out[torch.arange(len(lengths)), lengths - 1]
            loss = xent(model["out"](h), target)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            total += float(loss)
        return total

    return epoch


@functools.cache
def synthetic_ubuntu_home(train_rows=10_000):
    """A data home holding the synthetic Ubuntu corpus of BENCHMARKS.md's 10k rows
    (``benchmarks.make_ubuntu_corpus --train-rows 10000 --eval-rows 1000 --words 20000
    --topics 50``), written once per process into a temporary directory."""
    from benchmarks.make_ubuntu_corpus import main as make_corpus

    home = Path(tempfile.mkdtemp(prefix="irdialog-ubuntu-"))
    make_corpus(["--out", str(home), "--train-rows", str(train_rows), "--eval-rows", "1000",
                 "--words", "20000", "--topics", "50"])  # fmt: skip
    return home


def _ubuntu_workload(data_home, corpus, epochs=None):
    """The LSTM dual encoder of ``irdialog bench ubuntu --model lstm-dual`` fitted on the
    true pairs of the training file (as the bench's ``fit_chunks``), scored by R@1 of 10
    on the valid file."""
    import numpy as np

    from irdialog.bench._ubuntu import SUITE_NAME, UBUNTU_MODELS
    from irdialog.datasets import iter_ubuntu
    from irdialog.metrics import recall_at_k

    spec = UBUNTU_MODELS["lstm-dual"]
    [point] = spec.selection.points(SUITE_NAME)
    params = {**point, **({} if epochs is None else {"epochs": epochs})}
    X, y = [], []
    for chunk in iter_ubuntu("train", data_home=data_home):
        keep = np.flatnonzero(chunk.labels == 1)
        X += [chunk.X[i] for i in keep]
        y += [chunk.y[i] for i in keep]
    valid = list(iter_ubuntu("valid", data_home=data_home))

    def score(est):
        scores = [est.rank_candidates(c.X, c.candidate_lists) for c in valid]
        return 100.0 * recall_at_k(np.vstack(scores), 1, 10)

    capped = "" if epochs is None else f", epochs capped at {epochs}"
    return {
        "name": f"DualEncoderRanker (LSTM), {corpus}{capped}",
        "make": lambda n_jobs: spec.build(None, **params, n_jobs=n_jobs),
        "fit": lambda est: est.fit_chunks([(X, y)]),
        "score": score,
        "metric": "valid R@1 of 10 %",
    }


def _dialog_dual_workload(data_home, task=1, epochs=1):
    """The LSTM dual encoder at its defaults (Lowe et al.'s sizes) on dialog bAbI task
    ``task``, fitted on trn (``epochs`` of them) and scored on dev (per-response
    accuracy over the task's candidates)."""
    from irdialog import DualEncoderRanker
    from irdialog.datasets import load_dialog_babi
    from irdialog.metrics import per_response_accuracy

    train = load_dialog_babi(task, "trn", data_home=data_home)
    dev = load_dialog_babi(task, "dev", data_home=data_home)
    return {
        "name": f"DualEncoderRanker (LSTM), dialog bAbI task {task}, {epochs} epoch(s)",
        "make": lambda n_jobs: DualEncoderRanker(
            candidates=train.candidates, epochs=epochs, random_state=0, n_jobs=n_jobs
        ),
        "fit": lambda est: est.fit(train.X, train.y),
        "score": lambda est: 100.0 * per_response_accuracy(dev.y, est.predict(dev.X)),
        "metric": "dev per-response accuracy %",
    }


def threads_workloads(data_home=None, ubuntu_home=None) -> list[dict]:
    """The fits of the recurrent models that the ``n_jobs`` benchmark times.

    The LSTM reader at the bench's presets on bAbI QA task 1 (short stories, 50 units) and
    task 3 (the longest stories, read to 200 words, 100 units; its 60 epochs take minutes,
    so they are capped at 10), and the LSTM dual encoder at the bench's settings on the
    genuine 100-row Ubuntu sample (10 epochs), on the synthetic 10k-row corpus
    (``ubuntu_home``, made by ``benchmarks.make_ubuntu_corpus --train-rows 10000
    --eval-rows 1000 --words 20000 --topics 50``; None: made in a temporary directory by
    :func:`synthetic_ubuntu_home`, which a re-run cannot find again; 10 epochs take minutes,
    capped at 1) and, at its defaults, on dialog bAbI task 1 (one epoch).

    Returns
    -------
    workloads : list of dict
        ``name``, ``make`` (n_jobs -> unfitted estimator), ``fit`` (estimator -> fitted
        estimator), ``score`` (fitted estimator -> float), ``metric``.
    """
    return [
        babi_workload("lstm", "RecurrentReader (LSTM)", 1, data_home),
        babi_workload("lstm", "RecurrentReader (LSTM)", 3, data_home, epochs=10),
        _ubuntu_workload(data_home, "Ubuntu sample (100 genuine rows)"),
        _ubuntu_workload(
            ubuntu_home or synthetic_ubuntu_home(), "synthetic Ubuntu 10k rows", epochs=1
        ),
        _dialog_dual_workload(data_home),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, nargs="+", default=[50, 100, 200])
    ap.add_argument("--cells", nargs="+", default=["lstm", "rnn"])
    ap.add_argument("--embedding", type=int, default=50)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--batches", type=int, default=30)
    ap.add_argument("--min-len", type=int, default=50)
    ap.add_argument("--max-len", type=int, default=100)
    ap.add_argument("--classes", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--output", default=str(RESULTS / "speed" / "recurrent-speed.json"))
    args = ap.parse_args(argv)
    import torch  # only this benchmark needs it

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    ptr, tok, y, batches = make_batches(
        args.batches, args.batch, args.vocab, args.min_len, args.max_len, args.classes
    )
    setting = (args.vocab, args.embedding)
    rows, matmul_seconds = [], []
    matmul, matmul_flop = matmul_work(threads=1)
    with threadpool_limits(limits=1, user_api="blas"):
        for cell in args.cells:
            for hidden in args.hidden:
                data = (args.classes, ptr, tok, y, batches)
                work = {
                    "irdialog": ours_epoch_fn(cell, *setting, hidden, *data),
                    "torch_packed": torch_epoch_fn(torch, cell, *setting, hidden, *data, True),
                    "torch_padded": torch_epoch_fn(torch, cell, *setting, hidden, *data, False),
                    "matmul": matmul,
                }
                # one warm-up call each, then the sides (and the reference) take turns
                walls, cpus, _ = alternate(work, args.repeat, warm_up=True)
                matmul_seconds += walls["matmul"]
                cpu = [min(cpus[side]) for side in ("irdialog", "torch_packed", "torch_padded")]
                wall = [min(walls[side]) for side in ("irdialog", "torch_packed", "torch_padded")]
                ours, packed, padded = cpu
                row = {
                    "cell": cell,
                    "hidden": hidden,
                    "irdialog_s": round(ours, 4),
                    "torch_packed_s": round(packed, 4),
                    "torch_padded_s": round(padded, 4),
                    "speedup_vs_packed": round(packed / ours, 3),
                    "speedup_vs_padded": round(padded / ours, 3),
                    "wall_s": {
                        "irdialog": round(wall[0], 4),
                        "torch_packed": round(wall[1], 4),
                        "torch_padded": round(wall[2], 4),
                    },
                }
                print(json.dumps(row), flush=True)
                rows.append(row)
    fields = {
        "setting": {
            "batch": args.batch,
            "batches_per_epoch": args.batches,
            "tokens_per_epoch": int(ptr[-1]),
            "sequence_length": [args.min_len, args.max_len],
            "vocab": args.vocab,
            "embedding_dim": args.embedding,
            "classes": args.classes,
            "threads": {
                "torch": torch.get_num_threads(),
                "numba": int(os.environ.get("NUMBA_NUM_THREADS", "0")) or None,
                "blas": 1,
            },
            "timing": (
                f"CPU seconds (process_time) of the best of {args.repeat} epochs per side, "
                "the sides taking turns, after one warm-up epoch each; wall_s: the best wall "
                "times of the same epochs"
            ),
        },
        "numpy_float32_matmul_gflops": round(matmul_flop / min(matmul_seconds) / 1e9, 2),
        "rows": rows,
    }
    finish_speed_result(
        "recurrent-speed", fields, argv=argv, seeds=[0], output=args.output,
        libraries={"torch": metadata.version("torch")},
    )  # fmt: skip


def _table(result: dict) -> list[str]:
    setting = result["setting"]
    return table_lines(
        f"CPU seconds per epoch ({setting['batches_per_epoch']} batches of {setting['batch']} "
        f"sequences of {setting['sequence_length'][0]}-{setting['sequence_length'][1]} tokens, "
        f"vocabulary {setting['vocab']}, embedding {setting['embedding_dim']}; forward, "
        "backward, clipping and Adam), one thread each; numpy float32 matmul "
        f"{result['numpy_float32_matmul_gflops']:.1f} GFLOP/s. Speed-up > 1: irdialog is faster.",
        ["cell", "hidden", "irdialog s", "torch packed s", "torch padded s", "vs packed",
         "vs padded"],
        "lrrrrrr",
        [[r["cell"], str(r["hidden"]),
          *(f"{r[k]:.3f}" for k in ("irdialog_s", "torch_packed_s", "torch_padded_s")),
          *(f"{r[k]:.2f}x" for k in ("speedup_vs_packed", "speedup_vs_padded"))]
         for r in result["rows"]],
    )  # fmt: skip


# What irdialog bench report and reproduce read of this script's results.
SPEED = SpeedBenchmark(
    table=_table,
    ratios=per_row_ratios(
        lambda row: f"{row['cell']} hidden={row['hidden']}",
        ("speedup_vs_packed", "speedup_vs_padded"),
    ),
    peers=("torch",),
)


if __name__ == "__main__":
    main()
