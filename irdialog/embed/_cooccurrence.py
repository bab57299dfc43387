"""Word vectors from co-occurrence counts: positive PMI reduced by a truncated SVD.

The count-based vectors of Levy, Goldberg & Dagan (2015): the words that occur within a
few positions of each other in the training texts are counted, the counts turned into
positive pointwise mutual information (with the context distribution smoothed by the power
0.75), and the PPMI matrix reduced to its leading singular directions, each scaled by the
square root of its singular value. :class:`~irdialog.embed.SupervisedEmbeddingRanker`
starts its embeddings from them with ``init="ppmi-svd"``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import randomized_svd

# Positions either side of a word whose words count as its co-occurrences.
WINDOW = 5
# The power of the context counts in PMI's denominator (Levy et al. 2015, section 3.1).
CONTEXT_SMOOTHING = 0.75


def cooccurrence_counts(sequences, n_words: int, window: int = WINDOW) -> sp.csr_matrix:
    """Symmetric counts of the word pairs at most ``window`` positions apart in a sequence.

    Parameters
    ----------
    sequences : sequence of int arrays
        Word ids in text order, one array per text; negative ids are unknown words, which
        keep their position (they count in the distance) but are never counted.
    n_words : int
        The number of word ids: the counts are ``(n_words, n_words)``.
    window : int, default=WINDOW

    Returns
    -------
    counts : csr_matrix of float64, shape (n_words, n_words)
        ``counts[a, b]``: the pairs of positions of a text, at most ``window`` apart,
        holding a and b (each pair counted in both orders).

    Examples
    --------
    >>> import numpy as np
    >>> cooccurrence_counts([np.array([1, 2, 1])], 3, window=1).toarray()
    array([[0., 0., 0.],
           [0., 0., 2.],
           [0., 2., 0.]])
    """
    lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    ids = np.concatenate([np.asarray(s, np.int64) for s in sequences] or [np.zeros(0, np.int64)])
    text = np.repeat(np.arange(len(lengths)), lengths)
    counts = sp.csr_matrix((n_words, n_words), dtype=np.float64)
    for d in range(1, window + 1):  # one distance at a time: a bounded list of pairs
        a, b = ids[:-d], ids[d:]
        keep = (text[:-d] == text[d:]) & (a >= 0) & (b >= 0)
        a, b = a[keep], b[keep]
        pairs = sp.coo_matrix((np.ones(len(a)), (a, b)), shape=(n_words, n_words)).tocsr()
        counts = counts + pairs + pairs.T
    counts = sp.csr_matrix(counts)
    counts.sum_duplicates()
    return counts


def positive_pmi(counts: sp.csr_matrix, smoothing: float = CONTEXT_SMOOTHING) -> sp.csr_matrix:
    """Positive pointwise mutual information of co-occurrence counts.

    ``max(0, log(P(w, c) / (P(w) P_s(c))))`` with ``P(w, c) = n(w, c) / N``, ``P(w) =
    n(w) / N`` and the smoothed context probability ``P_s(c) = n(c)^s / sum_c' n(c')^s``
    (``n(w)``, ``n(c)``: the row and column sums, ``N`` the total). Only the counted pairs
    are stored.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> counts = sp.csr_matrix([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    >>> positive_pmi(counts, smoothing=1.0).toarray().round(4)  # log 2 on every pair
    array([[0.    , 0.6931, 0.6931],
           [0.6931, 0.    , 0.    ],
           [0.6931, 0.    , 0.    ]])
    """
    counts = sp.csr_matrix(counts, dtype=np.float64)
    counts.sum_duplicates()
    total = counts.sum()
    if total == 0:
        return counts.copy()
    row = np.asarray(counts.sum(axis=1)).ravel()
    col = np.asarray(counts.sum(axis=0)).ravel()
    col_s = col**smoothing
    p_col = col_s / col_s.sum()
    coo = counts.tocoo()
    pmi = np.log(coo.data / total) - np.log(row[coo.row] / total) - np.log(p_col[coo.col])
    keep = pmi > 0
    out = sp.csr_matrix(
        (pmi[keep], (coo.row[keep], coo.col[keep])), shape=counts.shape, dtype=np.float64
    )
    out.sort_indices()
    return out


def ppmi_svd_vectors(
    sequences, n_words: int, dim: int, *, scale: float, random_state: int, window: int = WINDOW
) -> np.ndarray:
    """Word vectors of the truncated SVD of the PPMI matrix of the sequences' co-occurrences.

    Row w is ``U_k[w] * sqrt(S_k)`` for the ``k = min(dim, n_words)`` leading singular
    directions (sign-fixed, so that a seed gives the same vectors), the whole scaled so
    that the entries of the words with a positive PMI have the root mean square ``scale``.
    The rows of the other words are zero.

    Parameters
    ----------
    sequences : sequence of int arrays
        Word ids in text order (see :func:`cooccurrence_counts`).
    n_words, dim : int
        The number of words and the most columns wanted.
    scale : float
        The root mean square of the entries of the words with a positive PMI.
    random_state : int
        Seeds the randomized SVD.
    window : int, default=WINDOW

    Returns
    -------
    vectors : ndarray of float64, shape (n_words, min(dim, n_words))

    Examples
    --------
    >>> import numpy as np
    >>> texts = [np.array([1, 2]), np.array([1, 2, 3]), np.array([3, 4])]
    >>> vectors = ppmi_svd_vectors(texts, 5, 2, scale=0.1, random_state=0)
    >>> vectors.shape, bool(np.all(vectors[0] == 0))
    ((5, 2), True)
    >>> float(np.sqrt(np.mean(vectors[1:] ** 2))).__round__(6)
    0.1
    """
    ppmi = positive_pmi(cooccurrence_counts(sequences, n_words, window))
    k = min(dim, n_words)
    if ppmi.nnz == 0:
        return np.zeros((n_words, k))
    u, s, _ = randomized_svd(ppmi, k, random_state=random_state)
    vectors = np.zeros((n_words, k))
    vectors[:, : len(s)] = u * np.sqrt(s)
    used = np.diff(ppmi.indptr) > 0  # the words with a positive PMI
    vectors[~used] = 0.0
    rms = np.sqrt(np.mean(vectors[used] ** 2))
    if rms > 0:
        vectors *= scale / rms
    return vectors
