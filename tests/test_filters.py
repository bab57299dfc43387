"""Filters (``allowed=``) on the index's query path: the exact top k of the allowed documents,
against a numpy reference, in every kernel, every form of filter, the rankers and the
sharded index; bad filters refused by name."""

import numpy as np
import pytest
import scipy.sparse as sp

import irdialog.retrieval._index as index_module
from irdialog import BM25Ranker, MatchTypeFeaturizer, TfidfRanker
from irdialog.pipeline import make_ranking_pipeline
from irdialog.retrieval import InvertedIndex, ShardedIndex
from irdialog.retrieval._index import check_allowed
from irdialog.retrieval._kernels import dense_top_k, exhaustive_top_k, maxscore_top_k

KERNELS = {"maxscore": maxscore_top_k, "dense": dense_top_k, "exhaustive": exhaustive_top_k}


def _reference_top_k(scores, allowed, k):
    """The k best allowed documents of each row of a dense score matrix, ties (and score
    0) to the lower index; rows padded with -1 to the width of the largest filter."""
    allowed = [np.asarray(a) for a in allowed]
    allowed = [np.flatnonzero(a) if a.dtype == bool else np.unique(a) for a in allowed]
    width = min(k, max(len(a) for a in allowed))
    out = np.full((len(scores), width), -1, dtype=np.int64)
    for i, (row, ids) in enumerate(zip(scores, allowed)):
        order = ids[np.argsort(-row[ids], kind="stable")][:width]
        out[i, : len(order)] = order
    return out


def _zipf_index(rng, n_docs=400, n_terms=60, n_queries=25, max_terms=24):
    """An index whose frequent terms have long postings (MaxScore prunes) and queries of
    1 to ``max_terms`` terms (past LONG_QUERY_TERMS: the dense kernel under "auto"), with
    repeated impacts (ties) and an empty query."""
    p = 1.0 / np.arange(1, n_terms + 1) ** 1.1
    p /= p.sum()
    rows, cols = [], []
    for d in range(n_docs):
        terms = np.unique(rng.choice(n_terms, rng.integers(0, 12), p=p))
        rows += [d] * len(terms)
        cols += terms.tolist()
    data = np.round(rng.uniform(0.1, 3.0, len(rows)), 1)
    D = sp.csr_matrix((data, (rows, cols)), shape=(n_docs, n_terms))
    Q = sp.lil_matrix((n_queries, n_terms))
    for i in range(1, n_queries):
        terms = rng.choice(n_terms, rng.integers(1, max_terms + 1), replace=False, p=p)
        Q[i, terms] = rng.integers(1, 3, len(terms))
    return InvertedIndex.from_matrix(D), Q.tocsr()


def _filters(rng, n_docs, n_queries, share):
    """The forms of a filter, each with its per-query id arrays for the reference."""
    mask = rng.random(n_docs) < share
    ids = np.flatnonzero(mask)
    per_query = [rng.choice(n_docs, rng.integers(0, max(2, int(share * n_docs) * 2)))
                 for _ in range(n_queries)]  # fmt: skip
    masks = rng.random((n_queries, n_docs)) < share
    return {
        "mask": (mask, [ids] * n_queries),
        "ids": (rng.permutation(np.concatenate([ids, ids[:3]])), [ids] * n_queries),
        "ids-per-query": (per_query, per_query),
        "masks-per-query": (masks, list(masks)),
        "mixed-per-query": (
            [masks[i] if i % 2 else per_query[i] for i in range(n_queries)],
            [masks[i] if i % 2 else per_query[i] for i in range(n_queries)],
        ),
    }


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("algorithm", ["auto", "maxscore", "dense", "exhaustive"])
@pytest.mark.parametrize("share", [0.01, 0.1, 0.6])
@pytest.mark.parametrize("restrict", ["never", "always"])
def test_the_filtered_top_k_equals_the_numpy_reference(seed, algorithm, share, restrict,
                                                       monkeypatch):  # fmt: skip
    # a filter shared by the queries: its allowed postings copied first, or leapfrogged
    monkeypatch.setattr(index_module, "_RESTRICT_FACTOR", 0.0 if restrict == "never" else np.inf)
    rng = np.random.default_rng(seed)
    index, Q = _zipf_index(rng)
    scores = index.scores(Q)
    for name, (allowed, reference) in _filters(rng, index.n_docs, Q.shape[0], share).items():
        for k in (1, 5, 40, 1000):
            got = index.top_k(Q, k, algorithm=algorithm, allowed=allowed)
            want = _reference_top_k(scores, reference, k)
            np.testing.assert_array_equal(got, want, err_msg=f"{name}, k={k}")


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_the_uncompiled_kernels_filter_alike(kernel, monkeypatch):
    rng = np.random.default_rng(7)
    index, Q = _zipf_index(rng, n_docs=60, n_terms=20, n_queries=8, max_terms=20)
    monkeypatch.setattr(index_module, f"{kernel}_top_k", KERNELS[kernel].py_func)
    allowed = [rng.choice(60, rng.integers(0, 12)) for _ in range(8)]
    for k in (3, 20):
        got = index.top_k(Q, k, algorithm=kernel, allowed=allowed)
        np.testing.assert_array_equal(got, _reference_top_k(index.scores(Q), allowed, k))


def _deleted_reference(scores, allowed, k, deleted):
    """:func:`_reference_top_k` of the documents not ``deleted`` (a mask), the rows as wide
    as the filters given (``allowed``: per-query id arrays; None: every document), padded
    with -1."""
    n_queries, n_docs = scores.shape
    live = np.flatnonzero(~deleted)
    if allowed is None:
        return _reference_top_k(scores, [live] * n_queries, k)
    allowed = [np.flatnonzero(a) if np.asarray(a).dtype == bool else np.unique(a) for a in allowed]
    width = min(k, max(len(a) for a in allowed))
    out = np.full((n_queries, width), -1, dtype=np.int64)
    kept = [a[~deleted[a]] for a in allowed]
    if max(map(len, kept)):
        left = _reference_top_k(scores, kept, k)
        out[:, : left.shape[1]] = left
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("algorithm", ["auto", "maxscore", "dense", "exhaustive"])
@pytest.mark.parametrize("restrict", ["never", "always"])
def test_deleted_documents_are_skipped_as_the_numpy_reference(seed, algorithm, restrict,
                                                              monkeypatch):  # fmt: skip
    # Deleted documents with their impacts: skipped when they would enter the top k, and
    # when documents of score 0 fill it.
    monkeypatch.setattr(index_module, "_RESTRICT_FACTOR", 0.0 if restrict == "never" else np.inf)
    rng = np.random.default_rng(seed)
    index, Q = _zipf_index(rng)
    scores = index.scores(Q)
    deleted = rng.random(index.n_docs) < 0.3
    deleted[: 5 * seed] = True  # the lowest ids, the first to fill a row
    n = Q.shape[0]
    for k in (1, 5, 40, 1000):
        got = index._top_k(index._queries(Q), k, algorithm=algorithm, deleted=deleted)
        np.testing.assert_array_equal(got, _deleted_reference(scores, None, k, deleted))
        for name, (allowed, reference) in _filters(rng, index.n_docs, n, 0.1).items():
            filters = check_allowed(allowed, n, index.n_docs)
            Qc = index._queries(Q)
            got = index._top_k(Qc, k, algorithm=algorithm, allowed=filters, deleted=deleted)
            want = _deleted_reference(scores, reference, k, deleted)
            np.testing.assert_array_equal(got, want, err_msg=f"{name}, k={k}")
    with pytest.raises(ValueError, match="deleted must be a boolean mask of the 400 documents"):
        index._top_k(index._queries(Q), 3, deleted=deleted[:-1])


@pytest.mark.parametrize("kernel", list(KERNELS))
def test_the_uncompiled_kernels_skip_deleted_documents_alike(kernel, monkeypatch):
    rng = np.random.default_rng(8)
    index, Q = _zipf_index(rng, n_docs=60, n_terms=20, n_queries=8, max_terms=20)
    monkeypatch.setattr(index_module, f"{kernel}_top_k", KERNELS[kernel].py_func)
    deleted = rng.random(60) < 0.4
    allowed = [rng.choice(60, rng.integers(0, 12)) for _ in range(8)]
    Qc, filters = index._queries(Q), check_allowed(allowed, 8, 60)
    for k in (3, 20, 60):
        got = index._top_k(Qc, k, algorithm=kernel, deleted=deleted)
        np.testing.assert_array_equal(got, _deleted_reference(index.scores(Q), None, k, deleted))
        got = index._top_k(Qc, k, algorithm=kernel, allowed=filters, deleted=deleted)
        want = _deleted_reference(index.scores(Q), allowed, k, deleted)
        np.testing.assert_array_equal(got, want)


def test_a_shared_filter_is_copied_only_when_cheaper_than_leapfrogging():
    rng = np.random.default_rng(5)
    index, Q = _zipf_index(rng, n_docs=2000, n_queries=200, max_terms=6)
    ids = np.sort(rng.choice(2000, 20, replace=False))
    postings, term_max = index._restricted(Q, ids)  # 200 queries, 1% of the documents
    assert np.isin(postings.docs, ids).all() and len(postings.docs) < index.n_postings / 20
    assert (term_max <= index.term_max).all()
    assert index._restricted(Q[:1], ids) is None  # one query: leapfrogging reads less
    assert index._restricted(Q, np.arange(2000)) is None  # no smaller than the index


def test_k_larger_than_the_allowed_set_returns_exactly_that_set_ranked():
    D = sp.csr_matrix([[1.0, 0], [3.0, 0], [2.0, 1], [0, 0], [0, 5.0]])
    index = InvertedIndex.from_matrix(D)
    Q = sp.csr_matrix([[1.0, 1.0], [1.0, 0.0]])
    # 3 (score 0) is allowed: it comes after the positive scores, never a disallowed one
    np.testing.assert_array_equal(index.top_k(Q, 10, allowed=[3, 0, 2]), [[2, 0, 3], [2, 0, 3]])
    np.testing.assert_array_equal(
        index.top_k(Q, 10, allowed=[[1], [4, 3, 1]]), [[1, -1, -1], [1, 3, 4]]
    )
    np.testing.assert_array_equal(
        index.top_k(Q[::-1], 10, allowed=[[1], [4, 3, 1]]), [[1, -1, -1], [4, 1, 3]]
    )
    assert index.top_k(Q, 10, allowed=[]).shape == (2, 0)
    assert index.top_k(Q, 10, allowed=np.zeros(5, bool)).shape == (2, 0)
    # without a filter, every document: the filter of all of them is no filter
    np.testing.assert_array_equal(index.top_k(Q, 10, allowed=np.ones(5, bool)), index.top_k(Q, 10))


def test_threads_and_chunks_do_not_change_a_filtered_ranking(monkeypatch):
    rng = np.random.default_rng(3)
    index, Q = _zipf_index(rng, n_queries=40)
    allowed = [rng.choice(index.n_docs, rng.integers(1, 30)) for _ in range(40)]
    want = index.top_k(Q, 7, allowed=allowed)
    monkeypatch.setattr(index_module, "_QUERY_CHUNK", 3)
    np.testing.assert_array_equal(index.top_k(Q, 7, allowed=allowed, n_jobs=2), want)


@pytest.mark.parametrize(
    ("allowed", "error", "message"),
    [
        (
            np.ones(7, bool),
            ValueError,
            r"allowed is a boolean mask of 7 entries, but the index "
            r"holds 5 documents",
        ),  # fmt: skip
        ([0, 5], ValueError, r"allowed holds the document id 5, outside \[0, 5\)"),
        ([-1, 2], ValueError, r"allowed holds the document id -1, outside \[0, 5\)"),
        (
            np.array([0.0, 2.0]),
            TypeError,
            "allowed must be a boolean mask or integer document ids, got dtype float64",
        ),  # fmt: skip
        (["a", "b"], TypeError, "got dtype <U1"),
        (
            [[0], [1], [2]],
            ValueError,
            r"allowed has 3 filters \(one per query\), but there "
            r"are 2 queries",
        ),  # fmt: skip
        ([[0], np.ones(4, bool)], ValueError, r"allowed\[1\] is a boolean mask of 4 entries"),
        ([[0], [9]], ValueError, r"allowed\[1\] holds the document id 9"),
        (np.zeros((2, 2, 5), bool), ValueError, r"allowed must be 1-D .* got shape \(2, 2, 5\)"),
        (np.ones((2, 4), bool), ValueError, r"allowed\[0\] is a boolean mask of 4 entries"),
        ([1, [2]], ValueError, "allowed must be a mask or ids of documents, not nested lists"),
        ([[1], 2], ValueError, r"allowed\[1\] must be 1-D"),
    ],
)
def test_a_bad_filter_is_refused_by_name(allowed, error, message):
    index = InvertedIndex.from_matrix(sp.random(5, 3, density=0.5, random_state=0))
    with pytest.raises(error, match=message):
        index.top_k(sp.csr_matrix(np.ones((2, 3))), 2, allowed=allowed)


def test_check_allowed_forms():
    one = check_allowed(np.array([True, False, True]), 2, 3)
    assert one.ids.tolist() == [0, 2] and one.row.tolist() == [0, 0]
    per = check_allowed([[2, 2, 0], np.array([], dtype=np.int64)], 2, 3)
    assert per.indptr.tolist() == [0, 2, 2] and per.ids.tolist() == [0, 2]
    assert check_allowed(None, 2, 3) is None


# -- the rankers ------------------------------------------------------------------------------

DOCS = [
    "the cat sat on the mat", "dogs chase cats", "a cat and a dog", "stocks fell today",
    "the market rose", "cat food on sale", "the dog sat", "", "mat and rug", "a dog's life",
]  # fmt: skip
QUERIES = ["cat on a mat", "dog", "the market", "nothing in common", ""]


@pytest.mark.parametrize(
    "make",
    [
        lambda: BM25Ranker(candidates=DOCS),
        lambda: BM25Ranker(candidates=DOCS, method="bm25+", ngram_range=(1, 2)),
        lambda: TfidfRanker(candidates=DOCS),
        lambda: BM25Ranker(candidates=DOCS, tokenizer="char"),
    ],
)
def test_rankers_rank_the_allowed_candidates_as_decision_function(make, monkeypatch):
    model = make().fit(["hello"], [DOCS[0]])
    scores = model.decision_function(QUERIES)
    rng = np.random.default_rng(0)
    per_query = [rng.choice(len(DOCS), rng.integers(0, 6)) for _ in QUERIES]
    for allowed, reference in [
        ([1, 2, 6, 9], [[1, 2, 6, 9]] * len(QUERIES)),
        (per_query, per_query),
    ]:
        for k in (1, 3, 20):
            want = _reference_top_k(scores, reference, k)
            np.testing.assert_array_equal(model.rank(QUERIES, k, allowed=allowed), want)
            # chunks of contexts ranked by threads: the same
            monkeypatch.setattr(index_module, "_TEXT_CHUNK", 2)
            got = model.rank(QUERIES, k, allowed=allowed, n_jobs=2)
            monkeypatch.undo()
            np.testing.assert_array_equal(got, want)
    # a pool: ids into the pool
    pool = DOCS[::-1]
    pool_scores = np.column_stack([model.rank_candidates(QUERIES, [pool] * len(QUERIES))])
    np.testing.assert_array_equal(
        model.rank(QUERIES, 3, candidates=pool, allowed=[0, 4, 8]),
        _reference_top_k(pool_scores, [[0, 4, 8]] * len(QUERIES), 3),
    )


def test_a_filter_on_match_type_contexts_is_refused():
    from conftest import TINY_KB, make_tiny_dialogs

    X, y, _ = make_tiny_dialogs()
    pipe = make_ranking_pipeline(MatchTypeFeaturizer(TINY_KB), BM25Ranker()).fit(X, y)
    with pytest.raises(ValueError, match="match-type annotations"):
        pipe[-1].rank(pipe[0].transform(X), 2, allowed=[0])


# -- the sharded index ------------------------------------------------------------------------


def _sharded_reference(docs, queries, allowed, k):
    model = BM25Ranker(candidates=docs).fit(["x"], [docs[0]])
    scores = model.decision_function(queries)
    ids = _reference_top_k(scores, allowed, k)
    got = np.where(ids >= 0, np.take_along_axis(scores, np.maximum(ids, 0), axis=1), -np.inf)
    return ids, got


def _corpus(n=240, seed=0):
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(80)])
    p = 1.0 / np.arange(1, 81) ** 1.1
    p /= p.sum()
    docs = list(dict.fromkeys(" ".join(rng.choice(words, rng.integers(1, 12), p=p))
                              for _ in range(n)))  # fmt: skip
    queries = [" ".join(rng.choice(words, rng.integers(1, 5), p=p)) for _ in range(12)]
    return docs, queries + ["", "w0 w0 w1"]


def test_one_shard_filters_as_bm25ranker():
    docs, queries = _corpus()
    rng = np.random.default_rng(1)
    per_query = [rng.choice(len(docs), rng.integers(0, 9)) for _ in queries]
    with ShardedIndex().build(docs) as index:
        for allowed, reference in [(per_query, per_query), ([5, 3, 200], [[3, 5, 200]] * 14)]:
            ids, scores = index.top_k(queries, 6, allowed=allowed)
            want_ids, want_scores = _sharded_reference(docs, queries, reference, 6)
            np.testing.assert_array_equal(ids, want_ids)
            np.testing.assert_array_equal(scores, want_scores)
        with pytest.raises(ValueError, match=r"holds the document id 999"):
            index.top_k(queries, 3, allowed=[999])


def test_four_shards_filter_as_one_index():
    distributed = pytest.importorskip("distributed")
    docs, queries = _corpus()
    rng = np.random.default_rng(2)
    mask = rng.random(len(docs)) < 0.05
    per_query = [rng.choice(len(docs), rng.integers(0, 9)) for _ in queries]
    per_query[0] = np.arange(60, 120)  # one shard only
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
        ShardedIndex(shards=4, client=client).build(docs) as index,
    ):
        for allowed, reference in [(mask, [mask] * len(queries)), (per_query, per_query)]:
            for k in (4, 100):
                ids, scores = index.top_k(queries, k, allowed=allowed)
                want_ids, want_scores = _sharded_reference(docs, queries, reference, k)
                np.testing.assert_array_equal(ids, want_ids)
                np.testing.assert_array_equal(scores, want_scores)


def test_shard_parts_of_a_filter_merge_into_the_filtered_ranking():
    from irdialog.retrieval._sharded import _shard_filters, merge_top_k

    rng = np.random.default_rng(4)
    scores = rng.integers(0, 4, size=(5, 30)).astype(float)  # ties across shards
    offsets = np.array([0, 7, 7, 20, 30])  # an empty shard among them
    allowed = check_allowed([rng.choice(30, rng.integers(0, 9)) for _ in range(5)], 5, 30)
    parts = []
    for (lo, hi), f in zip(zip(offsets[:-1], offsets[1:]), _shard_filters(allowed, offsets)):
        ids = [f.ids[a:b] for a, b in zip(f.indptr[:-1], f.indptr[1:])]
        assert all(((i >= 0) & (i < hi - lo)).all() for i in ids)
        width = max(map(len, ids))
        top = np.full((5, width), -1)
        local = np.full((5, width), -np.inf)
        for q, i in enumerate(ids):
            order = i[np.argsort(-scores[q, lo + i], kind="stable")]
            top[q, : len(order)] = order
            local[q, : len(order)] = scores[q, lo + order]
        parts.append((top, local))
    reference = [allowed.ids[a:b] for a, b in zip(allowed.indptr[:-1], allowed.indptr[1:])]
    want = _reference_top_k(scores, reference, 4)
    ids, merged = merge_top_k(parts, offsets[:-1], want.shape[1])
    np.testing.assert_array_equal(ids, want)
    np.testing.assert_array_equal(
        merged, np.where(want >= 0, np.take_along_axis(scores, np.maximum(want, 0), 1), -np.inf)
    )
