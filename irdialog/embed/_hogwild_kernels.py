"""Numba kernels that train one model on several threads inside one parallel region.

A fit with ``n_jobs > 1`` runs its threads inside numba (``parallel=True``, ``prange``),
so that no thread hand-off from Python happens per example or per mini-batch:

- :func:`se_hogwild_epoch`: an epoch of supervised embeddings, its examples cut into one
  contiguous shard per thread, each shard stepped by the serial kernel
  :func:`~irdialog.embed._kernels.se_sgd_epoch` on the shared embeddings without locks
  (Hogwild, Recht et al. 2011, as StarSpace, fastText and word2vec train). Threads may
  read a row that another is writing: the result depends on their timing, and a seed
  repeats only within the seed spread, not bit for bit.
- :func:`memnn_hogwild_epoch`: an epoch of the strongly supervised Memory Network, cut the
  same way, each shard stepped by :func:`~irdialog.embed._memnn_kernels.train_epoch` with
  scratch arrays of its own.

Run on one thread, each kernel is its serial semantics, which the plain numpy reference
:func:`irdialog.embed._reference.se_hogwild_epoch` computes.
"""

import numpy as np
from numba import njit, prange

from ._kernels import SEMatches, se_next_uint64, se_sgd_epoch
from ._memnn_kernels import Bags, Buffers, train_epoch

# 8-byte items in a 64-byte cache line
_LINE = 8


@njit(cache=True)
def se_shard_bounds(n, n_shards, s):
    """[start, end) of shard ``s`` of ``n_shards`` contiguous shards of ``n`` items, the
    first ``n % n_shards`` one item longer."""
    q, r = n // n_shards, n % n_shards
    start = s * q + min(s, r)
    return start, start + q + (1 if s < r else 0)


@njit(cache=True, nogil=True)
def _se_shard(params, x, gold, r, n_candidates, matches, order, settings, pools, shards, s):
    """Shard ``s`` of :func:`se_hogwild_epoch`: the serial epoch over its examples, with
    the generator, the match-word scratch and the statistics at the start of row ``s`` of
    ``seeds``, ``marks`` and ``stats`` (``shards``), each row a cache line or more.
    Returns its loss."""
    seeds, marks, stats = shards
    start, end = se_shard_bounds(order.shape[0], seeds.shape[0], s)
    n_marks = matches.mark.shape[0]
    own = SEMatches(
        matches.e_indptr,
        matches.e_words,
        matches.e_types,
        matches.m_indptr,
        matches.m_indices,
        matches.type_rows,
        marks[s, :n_marks],
    )
    return se_sgd_epoch(
        params, x, gold, r, n_candidates, own, order[start:end], settings, seeds[s, :1],
        stats[s, :2], pools,
    )  # fmt: skip


@njit(cache=True, parallel=True, nogil=True)
def se_hogwild_epoch(
    params, x, gold, r, n_candidates, matches, order, settings, state, stats, n_shards, pools=None
):
    """One epoch of :func:`~irdialog.embed._kernels.se_sgd_epoch` on ``n_shards`` threads.

    ``order`` is cut into ``n_shards`` contiguous shards (:func:`se_shard_bounds`); shard
    s is the serial epoch over its examples, with its own splitmix64 generator seeded by
    the s-th output of ``state`` (advanced ``n_shards`` times) and its own match-word
    scratch. The shards run at once on the shared ``params``, updated without locks.

    Parameters are those of :func:`~irdialog.embed._kernels.se_sgd_epoch`, and
    ``n_shards``, the number of shards (one per thread).

    Returns
    -------
    loss : float
        The sum of the shards' losses (each example's loss before its step).
    """
    # Each shard's generator, scratch and statistics on cache lines of their own: the
    # generator is written at every draw, and two threads writing into one line stall each
    # other (false sharing; 1.80x against 1.94x on two threads, dialog bAbI task 1).
    seeds = np.zeros((n_shards, _LINE), np.uint64)
    for s in range(n_shards):
        seeds[s, 0] = se_next_uint64(state)
    marks = np.zeros((n_shards, matches.mark.shape[0] + _LINE), np.int64)
    shard_stats = np.zeros((n_shards, _LINE))
    losses = np.zeros(n_shards)
    # the body of the loop is a function of its own, so that numba shares no variable of
    # one iteration with another
    for s in prange(n_shards):
        losses[s] = _se_shard(
            params, x, gold, r, n_candidates, matches, order, settings, pools,
            (seeds, marks, shard_stats), s,
        )  # fmt: skip
    for s in range(n_shards):
        stats[0] += shard_stats[s, 0]
        stats[1] += shard_stats[s, 1]
    return losses.sum()


@njit(cache=True, nogil=True)
def _memnn_shard(
    params, stories, layout, answers, gold_ptr, gold_facts, order, settings, scratch, s
):
    """Shard ``s`` of :func:`memnn_hogwild_epoch`: the serial epoch over its questions,
    with row ``s`` of each scratch array. Returns its (output loss, response loss)."""
    bags, facts, buf_o, buf_r = scratch
    start, end = se_shard_bounds(order.shape[0], facts.shape[0], s)
    work = (
        Bags(
            bags.in_rows[s],
            bags.in_w[s],
            bags.cand_ptr[s],
            bags.cand_rows[s],
            bags.cand_w[s],
            bags.link[s],
        ),
        facts[s],
        _buffers_row(buf_o, s),
        _buffers_row(buf_r, s),
    )
    return train_epoch(
        params, stories, layout, answers, gold_ptr, gold_facts, order[start:end], settings, work
    )


@njit(cache=True)
def _buffers_row(buf, s):
    return Buffers(
        buf.h[s], buf.a_in[s], buf.e_in[s], buf.a_c[s], buf.e_c[s], buf.s[s], buf.g[s],
        buf.dh[s], buf.dW[s],
    )  # fmt: skip


@njit(cache=True, parallel=True, nogil=True)
def memnn_hogwild_epoch(
    params, stories, layout, answers, gold_ptr, gold_facts, order, settings, bags, facts,
    buf_o, buf_r,
):  # fmt: skip
    """One epoch of :func:`~irdialog.embed._memnn_kernels.train_epoch` on one thread per
    row of the scratch arrays.

    ``bags``, ``facts``, ``buf_o`` and ``buf_r`` are what ``train_epoch`` takes as
    ``work``, each array with one more leading axis, a row per shard
    (:func:`stack_scratch`). ``order`` is cut into one contiguous shard per row
    (:func:`se_shard_bounds`); the shards run at once on the shared ``params``, updated
    without locks. ``train_epoch`` draws nothing at random, so on one thread the shards,
    run in turn, are ``train_epoch`` over ``order``.

    Returns
    -------
    (loss_o, loss_r) : (float, float)
        The output and response modules' losses summed over the shards.
    """
    n_shards = facts.shape[0]
    losses = np.zeros((n_shards, 2))
    # the body of the loop is a function of its own, so that numba shares no variable of
    # one iteration with another; the scratch goes in as arrays with a row per shard, as
    # numba takes no tuple of named tuples into a parallel loop
    for s in prange(n_shards):
        lo, lr = _memnn_shard(
            params, stories, layout, answers, gold_ptr, gold_facts, order, settings,
            (bags, facts, buf_o, buf_r), s,
        )  # fmt: skip
        losses[s, 0] = lo
        losses[s, 1] = lr
    return losses[:, 0].sum(), losses[:, 1].sum()


def stack_scratch(works):
    """The scratch arrays of :func:`memnn_hogwild_epoch` from one ``train_epoch`` work
    tuple per shard: (bags, facts, output buffers, response buffers), each array stacked
    along a new first axis."""
    bags, facts, buf_o, buf_r = zip(*works)

    def stack(parts):
        return type(parts[0])(*(np.stack(a) for a in zip(*parts)))

    return stack(bags), np.stack(facts), stack(buf_o), stack(buf_r)
