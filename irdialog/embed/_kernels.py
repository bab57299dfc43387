"""Numba kernels of the embedding models (:mod:`irdialog.embed`).

Pure ``@njit(cache=True)`` functions on contiguous arrays and scalars: no estimator
objects; the arrays that travel together come as a few :func:`collections.namedtuple`
records (:class:`CSR`, :class:`SEParams`, :class:`SEMatches`, :class:`SESettings`,
:class:`SENegatives`). Each
model has its own section below; the plain numpy references the tests compare against are
in :mod:`irdialog.embed._reference`.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from ._optim import adagrad_row, sgd_row

# The arrays that travel together, as records (numba takes namedtuples of arrays and
# scalars as arguments; see irdialog.svm._kernels).
CSR = namedtuple("CSR", "indptr indices data")
CSR.__doc__ = """Bags of words as a CSR table: int64 ``indptr``, uint32 ``indices`` and
float32 ``data`` (row i is ``indices[indptr[i]:indptr[i + 1]]`` with its counts)."""

SEParams = namedtuple("SEParams", "U V GU GV")
SEParams.__doc__ = """The trained state of :func:`se_sgd_epoch`: the float32 input and
response embeddings ``U``, ``V`` (the same array with one dictionary) and their row-wise
Adagrad accumulators ``GU``, ``GV``."""

SEMatches = namedtuple("SEMatches", "e_indptr e_words e_types m_indptr m_indices type_rows mark")
SEMatches.__doc__ = """The match-type words of :func:`se_sgd_epoch`: the typed entities of
each example (CSR ``e_indptr`` over ``e_words``, ``e_types``), the match words of each
response (CSR ``m_indptr`` over ``m_indices``), the embedding row of each type word and
``mark``, zeroed int64 scratch of one bit mask per match word."""

SENegatives = namedtuple("SENegatives", "indptr indices")
SENegatives.__doc__ = """The negative pools of :func:`se_sgd_epoch`: row i of the CSR table
(int64 ``indptr`` over int64 ``indices``) lists the rows of the response table that example
i draws its negatives from."""

SESettings = namedtuple("SESettings", "n_negatives learning_rate margin adagrad")
SESettings.__doc__ = """The scalars of :func:`se_sgd_epoch`: negatives drawn per example,
step size, margin, and whether the step is row-wise Adagrad."""

# --- supervised embeddings ---
#
# The model of :class:`irdialog.embed.SupervisedEmbeddingRanker` (Bordes et al. 2017,
# section 4.3): f(x, y) = (U^T x) . (V^T y) over bags of words, trained example by example
# with the margin ranking loss (1/K) sum_y' max(0, m - f(x, y) + f(x, y')) over K sampled
# negatives y'. Entry point: se_sgd_epoch.
#
# Bags are CSR tables (indptr int64, indices uint32, data float32): unsigned word indices
# spare numba the negative-index wraparound test on every row access, which otherwise
# blocks SIMD code. Embedding matrices are float32, C-contiguous, one row per word.
#
# fastmath: only the two dot-product helpers (_se_score_bags, _se_dot) carry flags, and
# only "reassoc" (let a dot product be summed in SIMD lanes) and "contract" (fused
# multiply-add). Neither lets LLVM assume away NaN or inf, so a diverging run still shows
# a NaN loss (the failure umap hit with fastmath=True in its SGD loops); and neither helper
# updates anything. The SGD loop and the update helpers have no flags.

_SE_FASTMATH = {"reassoc", "contract"}
_SPLITMIX_GAMMA = np.uint64(0x9E3779B97F4A7C15)

# The bag helpers index W[w, k] directly rather than taking row views W[w] (a view costs
# two atomic reference-count updates in numba whenever the helper is not inlined), and
# walk the CSR positions with uint64 counters (no wraparound test on each access).


@njit(cache=True, fastmath=_SE_FASTMATH)
def _se_score_bags(W, indptr, indices, data, rows, x, out):
    """out[j] = (W^T b) . x for the bags b of the CSR rows ``rows[j]``.

    One call scores all of an example's sampled negatives, so that the dot-product loop
    is compiled with the SIMD-reduction flags and the call costs once per example. Rows
    go two at a time: two independent accumulators and one load of x for both.
    """
    dim = x.shape[0]
    one, two = np.uint64(1), np.uint64(2)
    for j in range(rows.shape[0]):
        c = np.uint64(rows[j])
        s = np.float32(0.0)
        p = np.uint64(indptr[c])
        end = np.uint64(indptr[c + one])
        while p + one < end:
            w0 = indices[p]
            w1 = indices[p + one]
            t0 = np.float32(0.0)
            t1 = np.float32(0.0)
            for k in range(dim):
                xk = x[k]
                t0 += W[w0, k] * xk
                t1 += W[w1, k] * xk
            s += data[p] * t0 + data[p + one] * t1
            p += two
        if p < end:
            w0 = indices[p]
            t0 = np.float32(0.0)
            for k in range(dim):
                t0 += W[w0, k] * x[k]
            s += data[p] * t0
        out[j] = s


@njit(cache=True)
def _se_bag_add(W, indices, data, start, end, coef, out):
    """out += coef * sum_p data[p] * W[indices[p]] over p in [start, end), two rows at a
    time (half the loads and stores of ``out``)."""
    dim = out.shape[0]
    one, two = np.uint64(1), np.uint64(2)
    p, end = np.uint64(start), np.uint64(end)
    while p + one < end:
        w0 = indices[p]
        w1 = indices[p + one]
        a0 = coef * data[p]
        a1 = coef * data[p + one]
        for k in range(dim):
            out[k] += a0 * W[w0, k] + a1 * W[w1, k]
        p += two
    if p < end:
        w0 = indices[p]
        a0 = coef * data[p]
        for k in range(dim):
            out[k] += a0 * W[w0, k]


@njit(cache=True)
def _se_bag_step(W, G, indices, data, start, end, coef, vec, vec_sq, lr, adagrad):
    """W[indices[p]] -= step * coef * data[p] * vec over p in [start, end): plain SGD
    (step = lr), or row-wise Adagrad as in StarSpace (one accumulator per row, fed the
    mean squared coordinate of the row's gradient; step = lr / sqrt(accumulator)): the
    steps of :mod:`irdialog.embed._optim`. A row whose accumulator is infinite is frozen:
    Adagrad's step is then zero, and SGD skips it."""
    for p in range(np.uint64(start), np.uint64(end)):
        w = indices[p]
        g = coef * data[p]
        if adagrad:
            adagrad_row(W, G, w, g, vec, vec_sq, lr)
        elif G[w] != np.inf:
            sgd_row(W, w, g, vec, lr)


@njit(cache=True, fastmath=_SE_FASTMATH)
def _se_dot(a, b):
    """a . b of two float32 vectors."""
    s = np.float32(0.0)
    for k in range(a.shape[0]):
        s += a[k] * b[k]
    return s


@njit(cache=True)
def se_next_uint64(state):
    """Advance a splitmix64 generator (``state``: uint64 array of length 1) and return
    its next 64-bit output."""
    state[0] += _SPLITMIX_GAMMA
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def se_rand_below(state, n):
    """A random integer in [0, n), n < 2**32, by Lemire's multiply-shift."""
    hi = se_next_uint64(state) >> np.uint64(32)
    return np.int64((hi * np.uint64(n)) >> np.uint64(32))


@njit(cache=True)
def _se_type_mask(c, mark, m_indptr, m_indices):
    """Bit t set when response c holds a word marked with type t (see se_sgd_epoch)."""
    mask = np.int64(0)
    for p in range(m_indptr[c], m_indptr[c + 1]):
        mask |= mark[m_indices[p]]
    return mask


@njit(cache=True)
def se_sgd_epoch(
    params, x, gold, r, n_candidates, matches, order, settings, state, stats, pools=None
):
    """One epoch of margin-ranking SGD over the examples in ``order``.

    For example i with input bag x, gold response bag y and K = ``n_negatives`` responses
    y' drawn uniformly (with replacement) from the candidates ``[0, n_candidates)`` other
    than the gold one (or, with ``pools``, from the example's pool when it is not empty),
    the loss is the mean hinge ``(1/K) sum_y' max(0, m - f(x, y) +
    f(x, y'))`` with ``f(x, y) = (U^T x) . (V^T y)``. Its gradient is taken at the current
    parameters and applied at once: with the violating draws N (|N| = n),

    - ``U[w] -= (lr / K) * x_w * (sum_{y' in N} V^T y' - n V^T y)`` for the words w of x,
    - ``V[w] += (lr / K) * n * y_w * U^T x`` for the words of y,
    - ``V[w] -= (lr / K) * y'_w * U^T x`` for the words of each y' in N.

    ``U`` and ``V`` may be the same array (one dictionary); every update is computed from
    the parameters before the step, so the order of application does not matter for SGD.
    With ``adagrad``, each (row, gradient) contribution above, in that order, first adds
    its mean squared coordinate to the row's accumulator, then steps by
    ``learning_rate / sqrt(accumulator + 1e-6)`` (row-wise Adagrad, as in StarSpace).

    Match-type words (Bordes et al. 2017, section 4.5): a response r gets the embedding
    row ``type_rows[t]`` added to its bag, with weight 1, when one of its words (its row
    of the CSR ``m_indptr``/``m_indices``, over a word index of its own) is an entity of
    type t mentioned by the example (``e_words``/``e_types`` of row i of ``e_indptr``).
    ``mark`` is zeroed scratch of one int64 bit mask per match word; it is left zeroed.
    With no types, pass ``e_indptr`` of zeros and an empty ``type_rows``.

    Parameters
    ----------
    params : SEParams
        ``U, V`` (float32, (n_words, dim)), the input and response embeddings, and
        ``GU, GV`` (float32, (n_words,)), their row-wise Adagrad accumulators (with
        ``adagrad=False``, only an infinite one is read: its row is frozen); all updated
        in place.
    x : CSR
        The input bags, one row per example.
    gold : int64 array (n_examples,)
        Row of each example's gold response in the response table.
    r : CSR
        The response table; its first ``n_candidates`` rows are the candidates, later
        rows gold responses outside the candidate set.
    n_candidates : int
    matches : SEMatches
        The match-type words (see above); ``mark`` is zeroed scratch.
    order : int64 array
        The examples of the epoch, in the order visited.
    settings : SESettings
        ``n_negatives``, ``learning_rate``, ``margin`` and ``adagrad``.
    state : uint64 array (1,)
        splitmix64 state, advanced in place.
    stats : float64 array (2,)
        Incremented by the epoch's loss and by its number of d-vector
        multiply-adds (so the epoch did ``2 * dim * stats[1]`` floating-point operations).
    pools : SENegatives or None, default=None
        The rows of the response table each example draws its negatives from (the
        caller leaves the gold response out); an example with an empty pool draws from
        the candidates. None: every example draws from the candidates (numba compiles
        this case apart, so it runs the code of a call without pools).

    Returns
    -------
    loss : float
        The epoch's sum over examples of the mean hinge loss (before each example's step).
    """
    U, V, GU, GV = params
    x_indptr, x_indices, x_data = x
    r_indptr, r_indices, r_data = r
    e_indptr, e_words, e_types, m_indptr, m_indices, type_rows, mark = matches
    n_negatives, learning_rate, margin, adagrad = settings
    dim = U.shape[1]
    n_types = type_rows.shape[0]
    # The type words as a CSR table of one-row bags: type t is the range [t, t + 1).
    t_rows = type_rows.astype(np.uint32)
    t_ones = np.ones(n_types, np.float32)
    t_indptr = np.arange(n_types + 1)
    t_all = np.arange(n_types)
    t_scores = np.zeros(n_types, np.float32)
    ex = np.zeros(dim, np.float32)
    ey = np.zeros(dim, np.float32)
    gx = np.zeros(dim, np.float32)
    k_neg = max(n_negatives, 0)
    negs = np.empty(k_neg, np.int64)
    neg_scores = np.empty(k_neg, np.float32)
    neg_masks = np.zeros(k_neg, np.int64)
    gold_row = np.empty(1, np.int64)
    gold_score = np.empty(1, np.float32)
    one = np.float32(1.0)
    lr = np.float32(learning_rate)
    inv_k = np.float32(1.0 / max(n_negatives, 1))
    m = np.float32(margin)
    loss = 0.0
    ops = np.int64(0)
    for i in order:
        x0, x1 = x_indptr[i], x_indptr[i + 1]
        g = gold[i]
        g0, g1 = r_indptr[g], r_indptr[g + 1]
        # input embedding
        ex[:] = 0.0
        _se_bag_add(U, x_indices, x_data, x0, x1, one, ex)
        ops += x1 - x0
        # draw the negatives, then score the gold response and the negatives
        n_excl = n_candidates - 1 if g < n_candidates else n_candidates
        n_neg = k_neg if n_excl > 0 else 0
        p0 = n_pool = 0
        if pools is not None:
            p0 = pools.indptr[i]
            n_pool = pools.indptr[i + 1] - p0
            if n_pool > 0:
                n_neg = k_neg
        for j in range(n_neg):
            drawn = False
            if pools is not None:
                if n_pool > 0:
                    c = pools.indices[p0 + se_rand_below(state, n_pool)]
                    drawn = True
            if not drawn:
                c = se_rand_below(state, n_excl)
                if g < n_candidates and c >= g:
                    c += 1
            negs[j] = c
            ops += r_indptr[c + 1] - r_indptr[c]
        gold_row[0] = g
        _se_score_bags(V, r_indptr, r_indices, r_data, gold_row, ex, gold_score)
        _se_score_bags(V, r_indptr, r_indices, r_data, negs[:n_neg], ex, neg_scores)
        ops += g1 - g0
        pos = gold_score[0]
        if not np.isfinite(pos):
            loss += np.inf  # diverged: report it rather than compare NaNs (always False)
        g_mask = np.int64(0)
        if n_types:
            # match-type words: each type word's score once, added to the bags that match
            for q in range(e_indptr[i], e_indptr[i + 1]):
                mark[e_words[q]] |= np.int64(1) << e_types[q]
            _se_score_bags(V, t_indptr, t_rows, t_ones, t_all, ex, t_scores)
            ops += n_types
            g_mask = _se_type_mask(g, mark, m_indptr, m_indices)
            for t in range(n_types):
                if (g_mask >> t) & 1:
                    pos += t_scores[t]
            for j in range(n_neg):
                neg_masks[j] = _se_type_mask(negs[j], mark, m_indptr, m_indices)
                for t in range(n_types):
                    if (neg_masks[j] >> t) & 1:
                        neg_scores[j] += t_scores[t]
            for q in range(e_indptr[i], e_indptr[i + 1]):
                mark[e_words[q]] = 0
        # hinge of each draw; dL/d(U^T x) = (sum_N V^T y' - n V^T y) / K, first the sum
        n_viol = 0
        gx[:] = 0.0
        for j in range(n_neg):
            hinge = m - pos + neg_scores[j]
            if hinge > 0:
                loss += hinge * inv_k
                c = negs[j]
                negs[n_viol] = c  # compact the violators at the front (j >= n_viol)
                neg_masks[n_viol] = neg_masks[j]
                n_viol += 1
                _se_bag_add(V, r_indices, r_data, r_indptr[c], r_indptr[c + 1], one, gx)
                ops += r_indptr[c + 1] - r_indptr[c]
                for t in range(n_types):
                    if (neg_masks[j] >> t) & 1:
                        _se_bag_add(V, t_rows, t_ones, t, t + 1, one, gx)
                        ops += 1
        if n_viol == 0:
            continue
        nv = np.float32(n_viol)
        ey[:] = 0.0
        _se_bag_add(V, r_indices, r_data, g0, g1, one, ey)
        ops += g1 - g0
        for t in range(n_types):
            if (g_mask >> t) & 1:
                _se_bag_add(V, t_rows, t_ones, t, t + 1, one, ey)
                ops += 1
        for k in range(dim):
            gx[k] -= nv * ey[k]
        ops += 1
        gx_sq = _se_dot(gx, gx) if adagrad else np.float32(0.0)
        ex_sq = _se_dot(ex, ex) if adagrad else np.float32(0.0)
        # input words
        _se_bag_step(U, GU, x_indices, x_data, x0, x1, inv_k, gx, gx_sq, lr, adagrad)
        ops += x1 - x0
        # gold response words: pulled towards the input
        coef = -nv * inv_k
        _se_bag_step(V, GV, r_indices, r_data, g0, g1, coef, ex, ex_sq, lr, adagrad)
        ops += g1 - g0
        for t in range(n_types):
            if (g_mask >> t) & 1:
                _se_bag_step(V, GV, t_rows, t_ones, t, t + 1, coef, ex, ex_sq, lr, adagrad)
                ops += 1
        # violating negatives: pushed away
        for j in range(n_viol):
            c = negs[j]
            c0, c1 = r_indptr[c], r_indptr[c + 1]
            _se_bag_step(V, GV, r_indices, r_data, c0, c1, inv_k, ex, ex_sq, lr, adagrad)
            ops += c1 - c0
            for t in range(n_types):
                if (neg_masks[j] >> t) & 1:
                    _se_bag_step(V, GV, t_rows, t_ones, t, t + 1, inv_k, ex, ex_sq, lr, adagrad)
                    ops += 1
    stats[0] += loss
    stats[1] += ops
    return loss


@njit(cache=True)
def se_add_match_scores(scores, indptr, cols, types, type_scores):
    """Add the match-type words' scores: ``scores[i, cols[p]] += type_scores[i, types[p]]``
    for the positions p of row i of the CSR table ``(indptr, cols, types)`` (the matched
    candidates of context i, and the entity type of each match)."""
    for i in range(scores.shape[0]):
        for p in range(indptr[i], indptr[i + 1]):
            scores[i, cols[p]] += type_scores[i, types[p]]
