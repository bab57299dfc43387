"""Count-based word vectors (irdialog.embed._cooccurrence): co-occurrence counts, positive
PMI and the truncated SVD, against hand-worked values and dense numpy."""

import numpy as np
import pytest
import scipy.sparse as sp

from irdialog.embed._cooccurrence import cooccurrence_counts, positive_pmi, ppmi_svd_vectors


def test_cooccurrence_counts_by_hand():
    # text 0: (1, 2), (2, 3) at distance 1, (1, 3) at 2; text 1: (3, 1) at distance 2
    # through an unknown word (-1), which holds its place but is never counted
    sequences = [np.array([1, 2, 3]), np.array([3, -1, 1])]
    expected = np.zeros((4, 4))
    expected[1, 2] = expected[2, 1] = expected[2, 3] = expected[3, 2] = 1
    expected[1, 3] = expected[3, 1] = 2
    np.testing.assert_array_equal(cooccurrence_counts(sequences, 4, window=2).toarray(), expected)
    expected[1, 3] = expected[3, 1] = 0  # distance 2 is outside a window of 1
    np.testing.assert_array_equal(cooccurrence_counts(sequences, 4, window=1).toarray(), expected)


def test_cooccurrence_never_crosses_two_texts():
    counts = cooccurrence_counts([np.array([1]), np.array([2]), np.array([], np.int64)], 3)
    assert counts.nnz == 0 and counts.shape == (3, 3)


def test_positive_pmi_by_hand():
    # rows 7, 7, 4 of a total of 18: PMI(0, 1) = log(6 * 18 / 49), PMI(2, 2) = log(2 * 18
    # / 16), and PMI(0, 2) = log(18 / 28) < 0 is dropped
    counts = sp.csr_matrix([[0.0, 6.0, 1.0], [6.0, 0.0, 1.0], [1.0, 1.0, 2.0]])
    expected = np.array(
        [[0, np.log(108 / 49), 0], [np.log(108 / 49), 0, 0], [0, 0, np.log(36 / 16)]]
    )
    ppmi = positive_pmi(counts, smoothing=1.0)
    np.testing.assert_allclose(ppmi.toarray(), expected)
    assert np.all(ppmi.data > 0)


def test_positive_pmi_smooths_the_context_counts():
    rng = np.random.default_rng(0)
    dense = rng.integers(0, 4, (6, 6)).astype(float)
    dense = dense + dense.T
    n, row, col = dense.sum(), dense.sum(axis=1), dense.sum(axis=0)
    p_col = col**0.75 / (col**0.75).sum()
    with np.errstate(divide="ignore"):
        pmi = np.log(dense / n) - np.log(row / n)[:, None] - np.log(p_col)[None, :]
    expected = np.where(dense > 0, np.maximum(pmi, 0), 0)
    np.testing.assert_allclose(positive_pmi(sp.csr_matrix(dense)).toarray(), expected)


def _sequences(seed, n_texts=30, n_words=12):
    rng = np.random.default_rng(seed)
    return [rng.integers(1, n_words, rng.integers(0, 8)) for _ in range(n_texts)]


def test_ppmi_svd_vectors_are_the_scaled_leading_singular_directions():
    sequences, n_words = _sequences(0), 12
    vectors = ppmi_svd_vectors(sequences, n_words, 4, scale=0.1, random_state=0)
    assert vectors.shape == (n_words, 4)
    ppmi = positive_pmi(cooccurrence_counts(sequences, n_words)).toarray()
    used = ppmi.any(axis=1)
    assert not used[0] and np.all(vectors[~used] == 0)
    np.testing.assert_allclose(np.sqrt(np.mean(vectors[used] ** 2)), 0.1)
    # columns: the leading left singular vectors times sqrt(s), up to one common scale
    u, s, _ = np.linalg.svd(ppmi)
    norms = np.sum(vectors**2, axis=0)
    np.testing.assert_allclose(norms / norms[0], s[:4] / s[0], rtol=1e-4)
    for j in range(4):
        cos = vectors[:, j] @ u[:, j] / np.linalg.norm(vectors[:, j])
        assert abs(cos) == pytest.approx(1.0, abs=1e-4)


def test_ppmi_svd_vectors_repeat_for_a_seed_and_fit_a_small_vocabulary():
    sequences = _sequences(1)
    a = ppmi_svd_vectors(sequences, 12, 5, scale=0.2, random_state=3)
    np.testing.assert_array_equal(a, ppmi_svd_vectors(sequences, 12, 5, scale=0.2, random_state=3))
    assert ppmi_svd_vectors(sequences, 12, 40, scale=0.2, random_state=3).shape == (12, 12)
    assert not ppmi_svd_vectors([np.array([1])], 3, 2, scale=0.1, random_state=0).any()
