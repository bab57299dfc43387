"""A running top k over blocks of scores: ranking against candidate pools of any size.

Ranking 10,000 contexts against a million candidates would need a 10k x 1M matrix of
scores (80 GB in float64). Here the pool is scored one block of (contexts, candidates) at a
time, and each block is folded into a per-context heap of the k best so far
(:func:`merge_block`), so memory is bounded by one block and the heaps whatever the pool's
size. The ranking order is the one of the whole package: the higher score first, ties to
the lower candidate index.

- :func:`inner_product_top_k`: the top k of ``U @ V.T`` for embedding models; each block is
  one float32 matrix product (BLAS), so the product, not the selection, sets the pace.
- :func:`blocked_top_k`: the same over any block scorer (``RankerMixin``'s fallback,
  scoring (context, candidate) pairs).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

# Scores held at once: 2**18 float32 (1 MB, a block of 512 contexts x 512 candidates), so
# that a block is written by the product and read by the merge in cache: 16 MB blocks
# halve the speed of a product with 32 dimensions.
BLOCK_ELEMENTS = 1 << 18
MAX_BLOCK_ROWS = 512


@njit(cache=True)
def _worse(score_a, idx_a, score_b, idx_b):
    # True when a ranks after b: a lower score, or the same score and a higher index.
    return score_a < score_b or (score_a == score_b and idx_a > idx_b)


@njit(cache=True)
def _swap_if_worse(scores, idx, parent, child):
    # Swap a child that ranks after its parent with it (the worst-ranked entry belongs at
    # the root); returns whether it did.
    if not _worse(scores[child], idx[child], scores[parent], idx[parent]):
        return False
    scores[parent], scores[child] = scores[child], scores[parent]
    idx[parent], idx[child] = idx[child], idx[parent]
    return True


@njit(cache=True)
def _sift_down(scores, idx, size, pos):
    # A heap with the worst-ranked entry at the root.
    while True:
        child = 2 * pos + 1
        if child >= size:
            return
        right = child + 1
        if right < size and _worse(scores[right], idx[right], scores[child], idx[child]):
            child = right
        if not _swap_if_worse(scores, idx, pos, child):
            return
        pos = child


@njit(cache=True)
def _sift_up(scores, idx, pos):
    while pos > 0:
        parent = (pos - 1) // 2
        if not _swap_if_worse(scores, idx, parent, pos):
            return
        pos = parent


@njit(cache=True)
def _fill(row, offset, hs, hi, size):
    # Push the first columns of a row into a heap holding ``size`` < k entries until it
    # holds k; returns how many columns were taken.
    k = hs.shape[0]
    j = 0
    while size < k and j < row.shape[0]:
        hs[size] = row[j]
        hi[size] = offset + j
        _sift_up(hs, hi, size)
        size += 1
        j += 1
    return j


@njit(cache=True)
def merge_block(block, offset, heap_scores, heap_idx, sizes):
    """Fold a block of scores into the running heaps of its rows.

    Parameters
    ----------
    block : float (n_rows, n_cols), the scores of candidates ``offset .. offset + n_cols``
    offset : int
    heap_scores : float64 (n_rows, k); heap_idx : int64 (n_rows, k); sizes : int64 (n_rows,)
        The heaps, updated in place. Blocks must come in increasing ``offset``, so that a
        candidate never displaces an equal score of a lower index.
    """
    k = heap_scores.shape[1]
    n_cols = block.shape[1]
    for i in range(block.shape[0]):
        hs = heap_scores[i]
        hi = heap_idx[i]
        j = 0
        if sizes[i] < k:
            j = _fill(block[i], offset, hs, hi, sizes[i])
            sizes[i] += j
        if j == n_cols:
            continue
        # Past the first blocks few scores beat the k-th best: a branch-free count over the
        # row (which LLVM vectorises, but only from column 0: the columns taken by _fill
        # can but raise a false alarm) skips the row, and only a row with a score above
        # the threshold is walked again to insert them.
        threshold = hs[0]
        above = 0
        for jj in range(n_cols):
            if block[i, jj] > threshold:
                above += 1
        if above == 0:
            continue
        for jj in range(j, n_cols):
            s = block[i, jj]
            if s > threshold:  # a later index wins only with a strictly higher score
                hs[0] = s
                hi[0] = offset + jj
                _sift_down(hs, hi, k, 0)
                threshold = hs[0]


@njit(cache=True)
def sorted_heaps(heap_scores, heap_idx, sizes, out):
    """Write each row's heap, best first, into ``out`` (int64 (n_rows, k)); empties the
    heaps."""
    for i in range(heap_scores.shape[0]):
        size = sizes[i]
        while size > 0:
            size -= 1
            out[i, size] = heap_idx[i, 0]
            heap_scores[i, 0] = heap_scores[i, size]
            heap_idx[i, 0] = heap_idx[i, size]
            _sift_down(heap_scores[i], heap_idx[i], size, 0)


def _check_finite(scores, what):
    if not np.isfinite(scores).all():
        raise ValueError(f"{what} holds NaN or infinite values; they cannot be ranked.")


def _block_shape(n_rows: int, k: int) -> tuple[int, int]:
    rows = max(1, min(MAX_BLOCK_ROWS, n_rows))
    return rows, max(k, BLOCK_ELEMENTS // rows)


def blocked_top_k(
    n_rows: int,
    n_cols: int,
    k: int,
    score_block: Callable[[slice, slice], np.ndarray],
    *,
    check_nan: bool = True,
) -> np.ndarray:
    """The top k columns of each row of a score matrix given by blocks.

    Parameters
    ----------
    n_rows, n_cols : int
        The shape of the (never built) score matrix.
    k : int
        Columns kept per row (at most ``n_cols`` are).
    score_block : callable (rows: slice, cols: slice) -> ndarray (n_rows_in, n_cols_in)
        The scores of one block, float32 or float64, C-contiguous.
    check_nan : bool, default=True
        Raise a ValueError on a block holding NaN scores (-inf ranks last: a candidate
        the model cannot score).

    Returns
    -------
    top : int64 ndarray of shape (n_rows, min(k, n_cols))
        Column indices, best first; ties to the lower index.

    Examples
    --------
    >>> import numpy as np
    >>> from irdialog._topk import blocked_top_k
    >>> S = np.array([[0.1, 0.9, 0.5, 0.9], [3.0, 2.0, 1.0, 0.0]])
    >>> blocked_top_k(2, 4, 2, lambda r, c: S[r, c])
    array([[1, 3],
           [0, 1]])
    """
    k = min(k, n_cols)
    top = np.empty((n_rows, k), dtype=np.int64)
    rows_per, cols_per = _block_shape(n_rows, k)
    for r0 in range(0, n_rows, rows_per):
        rows = slice(r0, min(n_rows, r0 + rows_per))
        n = rows.stop - rows.start
        heap_scores = np.empty((n, k))
        heap_idx = np.empty((n, k), dtype=np.int64)
        sizes = np.zeros(n, dtype=np.int64)
        for c0 in range(0, n_cols, cols_per):
            block = np.ascontiguousarray(score_block(rows, slice(c0, min(n_cols, c0 + cols_per))))
            if check_nan and np.isnan(block).any():
                raise ValueError("The scores hold NaN values; they cannot be ranked.")
            merge_block(block, c0, heap_scores, heap_idx, sizes)
        sorted_heaps(heap_scores, heap_idx, sizes, top[rows])
    return top


def inner_product_top_k(U: np.ndarray, V: np.ndarray, k: int) -> np.ndarray:
    """The top k rows of ``V`` for each row of ``U`` by inner product, in bounded memory.

    Both sides are cast to float32 once; each block is one float32 product.

    Parameters
    ----------
    U : ndarray of shape (n_contexts, dim)
    V : ndarray of shape (n_candidates, dim)
    k : int

    Returns
    -------
    top : int64 ndarray of shape (n_contexts, min(k, n_candidates))

    Examples
    --------
    >>> import numpy as np
    >>> from irdialog._topk import inner_product_top_k
    >>> U = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> V = np.array([[0.5, 0.5], [2.0, 0.0], [0.0, 3.0]])
    >>> inner_product_top_k(U, V, 2)
    array([[1, 0],
           [2, 0]])
    """
    U = np.ascontiguousarray(U, dtype=np.float32)
    V = np.ascontiguousarray(V, dtype=np.float32)
    _check_finite(U, "The context embeddings")
    _check_finite(V, "The candidate embeddings")
    rows_per, cols_per = _block_shape(len(U), min(k, len(V)))
    # One output block, reused: np.dot(..., out=) writes the full-size blocks in place.
    buffer = np.empty((rows_per, min(cols_per, len(V))), dtype=np.float32)

    def score_block(rows, cols):
        shape = (rows.stop - rows.start, cols.stop - cols.start)
        if shape == buffer.shape:
            return np.dot(U[rows], V[cols].T, out=buffer)
        return U[rows] @ V[cols].T

    # Finite inputs were checked; their products need no second pass over every score.
    return blocked_top_k(len(U), len(V), k, score_block, check_nan=False)
