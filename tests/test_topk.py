"""The running top k over blocks (irdialog/_topk.py) against numpy's full sort."""

import numpy as np
import pytest

import irdialog._topk as topk
from irdialog.base import _top_k


@pytest.fixture
def small_blocks(monkeypatch):
    # Blocks of 3 rows x 5 columns, so that every case below spans several blocks.
    monkeypatch.setattr(topk, "BLOCK_ELEMENTS", 15)
    monkeypatch.setattr(topk, "MAX_BLOCK_ROWS", 3)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [1, 2, 4, 9, 50])
def test_blocked_top_k_is_the_full_sort_with_ties_to_the_lower_index(small_blocks, seed, k):
    rng = np.random.default_rng(seed)
    S = rng.integers(-3, 4, (8, 23)).astype(np.float64)  # many exact ties
    S[0] = 1.0  # a row of one value: the first k indices
    S[1, ::2] = -np.inf  # candidates a model cannot score rank last
    got = topk.blocked_top_k(8, 23, k, lambda r, c: S[r, c])
    np.testing.assert_array_equal(got, _top_k(S, k))


def test_inner_product_top_k_matches_the_dense_product(small_blocks):
    rng = np.random.default_rng(0)
    U = rng.integers(-2, 3, (10, 4)).astype(np.float32)
    V = rng.integers(-2, 3, (31, 4)).astype(np.float32)
    for k in (1, 3, 31):
        np.testing.assert_array_equal(
            topk.inner_product_top_k(U, V, k), _top_k((U @ V.T).astype(np.float64), k)
        )


def test_memory_is_bounded_by_a_block_not_by_the_pool(monkeypatch):
    # The scorer is never asked for more than BLOCK_ELEMENTS scores at once.
    monkeypatch.setattr(topk, "BLOCK_ELEMENTS", 64)
    monkeypatch.setattr(topk, "MAX_BLOCK_ROWS", 4)
    sizes = []

    def score_block(rows, cols):
        sizes.append((rows.stop - rows.start) * (cols.stop - cols.start))
        return np.zeros((rows.stop - rows.start, cols.stop - cols.start))

    top = topk.blocked_top_k(10, 1000, 5, score_block)
    assert max(sizes) <= 64 and sum(sizes) == 10 * 1000
    np.testing.assert_array_equal(top, np.tile(np.arange(5), (10, 1)))


def test_nan_scores_and_embeddings_are_refused():
    with pytest.raises(ValueError, match="NaN"):
        topk.blocked_top_k(1, 2, 1, lambda r, c: np.array([[np.nan, 1.0]])[r, c])
    with pytest.raises(ValueError, match="candidate embeddings"):
        topk.inner_product_top_k(np.ones((1, 2)), np.array([[np.nan, 0.0]]), 1)
