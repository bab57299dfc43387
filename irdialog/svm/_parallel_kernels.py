"""Stage 1 of the structured SVM on several threads: the serial epoch, bit for bit, its
searches run ahead on the threads in one numba parallel region per epoch.

Most of an epoch's time goes to the loss-augmented searches
(:func:`~irdialog.svm._kernels.stage1_search`), which read the weights only, and most
steps find no margin violation: such a step leaves the weights' direction ``U`` as it was
and only scales them, by a factor known in advance (``alpha`` of
:class:`~irdialog.svm._kernels.ASGD`). :func:`stage1_epoch_speculative` therefore
searches the next ``block`` questions of the epoch at once, a part of them per thread,
each at the weights it will see if no step before it in the block is a violation; then it
takes their steps on one thread, in order, with the margin check of the serial epoch
(:func:`~irdialog.svm._kernels.stage1_epoch`), up to and including the first violation.
A violation changes ``U``, so the searches after it are discarded and the next block
starts after it. Every step thus sees the search, features and margin of the serial
epoch: the model is that of the serial epoch, bit for bit, whatever the block and the
number of threads, and a block of one question is the serial epoch itself. The searches
discarded are the cost: about half a block per violation, few where violations are rare;
a block holds about ``per_block`` violations at the rate of the last few dozen steps, and
where violations are frequent a step runs on one thread, as in the serial epoch.
A block's searches are shared out between the threads by their cost as
:func:`search_costs` estimates it (the costliest first, each to the least loaded thread),
as a story may hold a few facts or two hundred; :func:`stage1_predict_parts` shares out
the searches of prediction, which read the weights only, a part of the questions each.

:func:`stage1_epoch_speculative_reference` is the same computation on one thread, by the
serial kernel's search and steps, which the tests compare the kernel against, along with
the serial epoch and :func:`irdialog.svm._reference.stage1_epoch`.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, prange

from ._kernels import (
    FOLD_BELOW,
    SearchWork,
    _asgd_step,
    adjacency,
    feature_buffer_size,
    margin_violated,
    search_question,
    search_workspace,
    stage1_search,
)

BlockWork = namedtuple(
    "BlockWork",
    "buf adj A Bt done latA latB best plus minus n_plus n_minus loss alpha rows n_rows load",
)
BlockWork.__doc__ = """The scratch of :func:`stage1_epoch_speculative`, from
:func:`block_workspace`: the arrays of one :class:`~irdialog.svm._kernels.SearchWork` per
part (``buf`` ... ``best``), stacked on a first axis; ``plus`` / ``minus`` (block, buffer
size), the features of the gold tuple and of the tuple found of each question of a block,
``n_plus`` / ``n_minus`` their counts, ``loss`` the loss of the tuple found, ``alpha`` the
scale of the weights each question is searched at, and ``rows`` (parts, block), ``n_rows``
and ``load`` the block's questions each part searches and their estimated cost. Flat, as
numba passes no record of records into a parallel loop."""


def block_workspace(batch, n_parts, block):
    """The :class:`BlockWork` of ``n_parts`` parts and blocks of up to ``block`` questions."""
    one = search_workspace(batch)
    size = feature_buffer_size(batch)
    return BlockWork(
        *(np.stack([a] * n_parts) for a in one),
        plus=np.empty((block, size), dtype=np.int64),
        minus=np.empty((block, size), dtype=np.int64),
        n_plus=np.zeros(block, dtype=np.int64),
        n_minus=np.zeros(block, dtype=np.int64),
        loss=np.zeros(block, dtype=np.float64),
        alpha=np.zeros(block, dtype=np.float64),
        rows=np.zeros((n_parts, block), dtype=np.int64),
        n_rows=np.zeros(n_parts, dtype=np.int64),
        load=np.zeros(n_parts, dtype=np.float64),
    )


# The violation rate a pass starts from, and the weight of each new step in the running
# rate (about the last 32 steps), which sizes the blocks.
START_RATE = 0.1
RATE_DECAY = 1.0 / 32.0

# What a search costs, in multiply-adds (which the work rule of irdialog._threads counts)
# per (fact word, fact word) pair of the fact pairs it scores, and per such pair of the
# question and slot scores and per tuple, relative to it: measured on bAbI QA tasks 1-3
# (about 27 ns a pair, 0.9997 correlation with the time of a search).
PAIR_COST = 256.0
SLOT_WEIGHT = 0.75
TUPLE_WEIGHT = 1.0 / 6.0


@njit(cache=True, nogil=True)
def search_costs(batch):
    """The estimated multiply-adds of each question's search
    (:func:`~irdialog.svm._kernels.search_question`), from the tuples its pruning leaves:
    ``PAIR_COST`` times the word pairs of the fact pairs it scores (each once, as the
    search caches them), plus ``SLOT_WEIGHT`` times ``max_facts`` times the word pairs of
    each fact with the question and itself (its slot scores and recency tables), plus
    ``TUPLE_WEIGHT`` per tuple of three. Any weights give the same tuples: the cost only
    chooses the threads and shares out the searches."""
    nq = len(batch.qsent) - 1
    n_max = 1
    for q in range(nq):
        n_max = max(n_max, batch.qsent[q + 1] - batch.qsent[q])
    adj = np.zeros((n_max, n_max), dtype=np.bool_)
    done = np.zeros((3, n_max, n_max), dtype=np.bool_)
    length = np.zeros(n_max)
    out = np.zeros(nq)
    two, three = batch.max_facts >= 2, batch.max_facts == 3
    for q in range(nq):
        s0 = batch.qsent[q]
        n = batch.qsent[q + 1] - s0 - 1
        adjacency(batch, q, adj)
        for i in range(n + 1):
            length[i] = batch.sent[s0 + i + 1] - batch.sent[s0 + i]
        slots = 0.0
        for i in range(n):
            slots += length[i] * (length[n] + length[i])
        pairs = 0.0
        tuples = 0.0
        done[:, : n + 1, : n + 1] = False
        for o1 in range(n):
            if not (two and adj[n, o1]):
                continue
            for o2 in range(n):
                if o2 == o1 or not (adj[n, o2] or adj[o1, o2]):
                    continue
                pairs += length[o1] * length[o2]  # each (o1, o2) once
                if not three:
                    continue
                for o3 in range(n):
                    if o3 == o1 or o3 == o2 or not (adj[n, o3] or adj[o1, o3] or adj[o2, o3]):
                        continue
                    tuples += 1.0
                    if not done[1, o2, o3]:
                        done[1, o2, o3] = True
                        pairs += length[o2] * length[o3]
                    if not done[2, o1, o3]:
                        done[2, o1, o3] = True
                        pairs += length[o1] * length[o3]
        units = pairs + SLOT_WEIGHT * batch.max_facts * slots + TUPLE_WEIGHT * tuples
        out[q] = PAIR_COST * units
    return out


@njit(cache=True, nogil=True)
def quiet_scales(run, alpha, m):
    """The scale ``alpha[r]`` of the weights at each of the next ``m`` steps of ``run``
    if none of them is a violation, as :func:`~irdialog.svm._kernels._asgd_step` computes
    it; returns how many of the steps have one: fewer than ``m`` when a step folds the
    scale into ``U`` (the steps after it see another ``U``)."""
    a = run.state[0]
    t = run.state[2]
    alpha[0] = a
    for r in range(1, m):
        t = t + 1.0
        eta = run.eta0 / (1.0 + run.lam * run.eta0 * t)
        a = a * (1.0 - run.lam * eta)
        if a < FOLD_BELOW:
            return r
        alpha[r] = a
    return m


@njit(cache=True, nogil=True)
def share_out(cost, questions, bw, n_parts):
    """The block's ``questions`` shared out between ``n_parts`` parts into ``bw.rows`` /
    ``bw.n_rows``, by their estimated ``cost``: the costliest first, each to the part with
    the least so far (which part searches a question changes the time, not the result)."""
    bw.n_rows[:n_parts] = 0
    bw.load[:n_parts] = 0.0
    c = np.empty(len(questions))
    for r in range(len(questions)):
        c[r] = -cost[questions[r]]
    for r in np.argsort(c, kind="mergesort"):
        p = np.argmin(bw.load[:n_parts])
        bw.rows[p, bw.n_rows[p]] = r
        bw.n_rows[p] += 1
        bw.load[p] -= c[r]


@njit(cache=True, nogil=True)
def _part_searches(U, gold, batch, questions, bw, p):
    """Part ``p`` of a block (its rows ``bw.rows[p]`` of ``questions``): each one's search
    and features at ``bw.alpha[r] * U``, into row ``r`` of ``bw``'s arrays for the block's
    ``r``-th question."""
    work = SearchWork(
        bw.buf[p], bw.adj[p], bw.A[p], bw.Bt[p], bw.done[p], bw.latA[p], bw.latB[p], bw.best[p]
    )
    for i in range(bw.n_rows[p]):
        r = bw.rows[p, i]
        n_plus, n_minus, loss = stage1_search(
            U, bw.alpha[r], gold, batch, questions[r], work, bw.plus[r], bw.minus[r]
        )
        bw.n_plus[r] = n_plus
        bw.n_minus[r] = n_minus
        bw.loss[r] = loss


@njit(cache=True, nogil=True)
def _block_steps(run, bw, m):
    """The steps of the block's first ``m`` questions, in order, up to and including the
    first margin violation. Returns the number of steps taken and whether the last was a
    violation."""
    for r in range(m):
        plus, minus, n_plus, n_minus = bw.plus[r], bw.minus[r], bw.n_plus[r], bw.n_minus[r]
        if margin_violated(run.U, run.state[0], plus, n_plus, minus, n_minus, bw.loss[r]):
            _asgd_step(run, plus, n_plus, minus, n_minus)
            return r + 1, True
        _asgd_step(run, plus, 0, minus, 0)
    return m, False


@njit(cache=True, nogil=True)
def _next_block(rate, n_parts, block, per_block, lo, n):
    """The questions the next block runs ahead, about ``per_block / rate`` (``rate``: the
    recent violations per step), at most ``block`` and the ``n - lo`` left; 1 (a step on
    this thread) below one per part."""
    size = block if rate * block <= per_block else int(per_block / rate)
    if size < n_parts:
        size = 1
    return min(size, n - lo)


@njit(cache=True, parallel=True, nogil=True)
def stage1_epoch_speculative(order, run, gold, batch, cost, bw, n_parts, block, per_block,
                             min_work):  # fmt: skip
    """:func:`~irdialog.svm._kernels.stage1_epoch` (the same steps, bit for bit), with the
    searches of up to ``block`` questions at a time run ahead on up to ``n_parts`` threads
    (at most the parts of ``bw``), shared out by their estimated ``cost`` (one per
    question of the batch). A block holds about ``per_block`` violations at the recent
    rate (``inf``: always ``block`` questions), and takes one thread per ``min_work`` of
    its estimated cost; a block of one question, or of one thread, is a step of the
    serial epoch. Returns the number of margin violations."""
    violations = 0
    lo = 0
    rate = START_RATE
    while lo < len(order):
        m = _next_block(rate, n_parts, block, per_block, lo, len(order))
        m = quiet_scales(run, bw.alpha, m)
        questions = order[lo : lo + m]
        work = 0.0
        for r in range(m):
            work += cost[questions[r]]
        k = min(n_parts, m, int(work // max(min_work, 1.0)))
        if k <= 1:  # this step on this thread
            bw.n_rows[0] = 1
            bw.rows[0, 0] = 0
            _part_searches(run.U, gold, batch, questions[:1], bw, 0)
            m = 1
        else:
            share_out(cost, questions, bw, k)
            for p in prange(k):
                _part_searches(run.U, gold, batch, questions, bw, p)
        taken, violated = _block_steps(run, bw, m)
        violations += violated
        lo += taken
        rate = rate * (1.0 - RATE_DECAY) ** taken + (RATE_DECAY if violated else 0.0)
    return violations


def stage1_epoch_speculative_reference(order, run, gold, batch, block):
    """:func:`stage1_epoch_speculative` on one thread, by the serial kernel's search and
    steps: each block's searches at the scales the weights will have if no step is a
    violation, then its steps up to the first violation, where the next block starts."""
    work = search_workspace(batch)
    size = feature_buffer_size(batch)
    violations = 0
    lo = 0
    while lo < len(order):
        alpha = np.zeros(block)
        m = quiet_scales(run, alpha, min(block, len(order) - lo))
        found = []
        for r in range(m):
            plus, minus = np.empty(size, np.int64), np.empty(size, np.int64)
            n_plus, n_minus, loss = stage1_search(
                run.U, alpha[r], gold, batch, order[lo + r], work, plus, minus
            )
            found.append((plus, n_plus, minus, n_minus, loss))
        for plus, n_plus, minus, n_minus, loss in found:
            lo += 1
            if margin_violated(run.U, run.state[0], plus, n_plus, minus, n_minus, loss):
                _asgd_step(run, plus, n_plus, minus, n_minus)
                violations += 1
                break
            _asgd_step(run, plus, 0, minus, 0)
    return violations


@njit(cache=True, nogil=True)
def _part_predict(w, batch, bw, out, n_parts, p):
    """The best tuples of part ``p`` of ``n_parts`` of the questions (``p``,
    ``p + n_parts``, ...), into ``out``."""
    work = SearchWork(
        bw.buf[p], bw.adj[p], bw.A[p], bw.Bt[p], bw.done[p], bw.latA[p], bw.latB[p], bw.best[p]
    )
    none = np.full(3, -1, dtype=np.int64)
    for q in range(p, len(batch.qsent) - 1, n_parts):
        search_question(w, 1.0, batch, q, none, 0.0, work)
        out[q, 0], out[q, 1], out[q, 2] = work.best[0], work.best[1], work.best[2]


@njit(cache=True, parallel=True, nogil=True)
def stage1_predict_parts(w, batch, bw, out, n_parts):
    """:func:`~irdialog.svm._kernels.stage1_predict` (the same tuples) on ``n_parts``
    threads (at most the parts of ``bw``), a part of the questions each."""
    for p in prange(n_parts):
        _part_predict(w, batch, bw, out, n_parts, p)
