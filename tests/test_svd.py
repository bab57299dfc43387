import numpy as np
import pytest
import scipy.sparse as sp
from conformance import RankerConformance

from irdialog.entities import _svd
from irdialog.entities._svd import EXCLUDED_SCORE, SVDRecommender


class TestSVDConformance(RankerConformance):
    # The tiny restaurant dialogs name no entity list: the items are then the distinct bot
    # responses, found in the history of later contexts (each context "likes" the responses
    # it has already seen), so the recommender has real co-occurrences to factorise.
    param_grid = {"n_components": [2, 3]}
    # The truncated SVD of the tiny matrix converges to the same factors from any start.
    seed_changes_the_model = False

    def make_estimator(self):
        return SVDRecommender(n_components=3, random_state=0)


MOVIES = [f"Movie {chr(65 + i)}" for i in range(12)]  # "Movie A" ... "Movie L"


def random_likes(n_users=40, n_items=12, density=0.3, seed=0):
    rng = np.random.default_rng(seed)
    likes = rng.random((n_users, n_items)) < density
    likes[np.arange(n_users), rng.integers(0, n_items, n_users)] = True  # nobody empty
    return likes


def dense_fold_in(M, q, k, b, s, max_freq=1.0, exclude=True):
    """PureSVD fold-in computed with dense numpy: the reference for SVDRecommender."""
    counts = (M != 0).sum(axis=0)
    used = (counts > 0) & (counts <= max_freq * M.shape[0])
    w = np.where(used, (counts + s) ** -float(b), 0.0)
    _, _, vt = np.linalg.svd(M * w, full_matrices=False)
    V = vt[:k].T
    qw = q * w
    norms = np.linalg.norm(qw, axis=1, keepdims=True)
    qn = np.divide(qw, norms, out=np.zeros_like(qw), where=norms > 0)
    scores = qn @ V @ V.T
    if exclude:
        scores[q != 0] = EXCLUDED_SCORE
    return scores


@pytest.mark.parametrize(
    "k, b, s, max_freq", [(3, 0.0, 0.0, 1.0), (5, 0.5, 5.0, 1.0), (4, 1.0, 1.0, 0.5)]
)
def test_fold_in_matches_dense_numpy_on_text(k, b, s, max_freq):
    likes = random_likes()
    # Each user is a context naming all its movies but the last, which is the gold response.
    X, y = [], []
    for row in likes:
        names = [MOVIES[j] for j in np.flatnonzero(row)]
        X.append("I liked " + ", ".join(names[:-1]) + ".")
        y.append(names[-1])
    model = SVDRecommender(
        n_components=k,
        entities=MOVIES,
        candidates=MOVIES,
        popularity_exponent=b,
        shrinkage=s,
        max_item_frequency=max_freq,
    ).fit(X, y)
    assert list(model.candidates_) == MOVIES
    queries = random_likes(n_users=7, seed=1)
    texts = [" and ".join(MOVIES[j] for j in np.flatnonzero(r)) for r in queries] + ["nothing"]
    Q = np.vstack([queries, np.zeros((1, len(MOVIES)))])
    expected = dense_fold_in(likes.astype(float), Q, k, b, s, max_freq)
    got = model.decision_function(texts)
    np.testing.assert_allclose(got, expected, atol=1e-10)
    kept = got[got > EXCLUDED_SCORE]
    assert kept.size and (np.abs(kept) <= 1 + 1e-12).all()
    np.testing.assert_array_equal(got[-1], 0.0)  # no item: no preference


def test_arpack_path_matches_dense(monkeypatch):
    likes = random_likes(n_users=60, n_items=12, seed=3).astype(float)
    users, items = np.nonzero(likes)
    dense = SVDRecommender(n_components=4, popularity_exponent=0.5).fit_ratings(users, items)
    monkeypatch.setattr(_svd, "_DENSE_SVD_MAX_SIZE", 0)  # force scipy's ARPACK
    arpack = SVDRecommender(n_components=4, popularity_exponent=0.5, random_state=0)
    arpack.fit_ratings(users, items)
    R = sp.csr_matrix(random_likes(n_users=5, seed=4).astype(float))
    np.testing.assert_allclose(arpack.score_items(R), dense.score_items(R), atol=1e-8)
    np.testing.assert_allclose(arpack.singular_values_, dense.singular_values_, rtol=1e-8)


def test_explicit_ratings_match_dense_numpy():
    rng = np.random.default_rng(5)
    R = np.where(rng.random((30, 9)) < 0.4, rng.integers(1, 11, (30, 9)) / 2.0, 0.0)
    R[:, 0] = 3.0
    users, items = np.nonzero(R)
    ids = np.array([101, 7, 55, 3, 9, 12, 40, 8, 2])  # raw item ids, any order
    model = SVDRecommender(n_components=3, popularity_exponent=0.0).fit_ratings(
        users + 1000, ids[items], R[users, items]
    )
    order = np.argsort(ids)  # columns are the sorted item ids
    np.testing.assert_array_equal(model.item_ids_, ids[order])
    Q = np.zeros((2, 9))
    Q[0, [1, 4]] = [5.0, 2.0]
    expected = dense_fold_in(R[:, order], Q[:, order], 3, 0.0, 5.0)
    np.testing.assert_allclose(model.score_items(Q[:, order]), expected, atol=1e-10)


def test_repeated_rating_keeps_the_last():
    rng = np.random.default_rng(2)
    users, items = rng.integers(0, 15, 120), rng.integers(0, 8, 120)
    ratings = rng.integers(1, 6, 120).astype(float)
    last = {(u, i): r for u, i, r in zip(users.tolist(), items.tolist(), ratings.tolist())}
    assert len(last) < len(ratings)  # there are repeats, with other ratings first
    u, i = np.array(list(last)).T
    once = SVDRecommender(n_components=3).fit_ratings(u, i, list(last.values()))
    repeated = SVDRecommender(n_components=3).fit_ratings(users, items, ratings)
    np.testing.assert_array_equal(repeated.singular_values_, once.singular_values_)
    np.testing.assert_array_equal(repeated.components_, once.components_)
    np.testing.assert_array_equal(repeated.item_counts_, once.item_counts_)


def test_liked_items_are_excluded_unless_asked():
    X = ["Movie A and Movie B", "Movie A, Movie B", "Movie C and Movie D"]
    y = ["Movie C", "Movie C", "Movie A"]
    model = SVDRecommender(n_components=2, entities=MOVIES).fit(X, y)
    scores = model.decision_function(["I liked Movie A"])[0]
    a = list(model.candidates_).index("Movie A")
    assert scores[a] == EXCLUDED_SCORE and (np.delete(scores, a) > EXCLUDED_SCORE).all()
    keep = SVDRecommender(n_components=2, entities=MOVIES, exclude_liked=False).fit(X, y)
    assert keep.decision_function(["I liked Movie A"])[0, a] > EXCLUDED_SCORE


def test_items_are_the_entities_met_in_fit():
    X = ["I liked movie b and MOVIE A", "Movie A"]
    model = SVDRecommender(n_components=1, entities=MOVIES).fit(X, ["Movie C", "a film"])
    assert list(model.candidates_) == ["Movie B", "Movie A", "Movie C"]
    with pytest.raises(ValueError, match="No item found"):
        SVDRecommender(entities=MOVIES).fit(["hello"], ["hi"])


def test_candidates_dedup_by_case_and_unknown_response_scores_excluded():
    model = SVDRecommender(n_components=2, candidates=["Movie A", "MOVIE A", "Movie B"])
    model.fit(["Movie A", "Movie B"], ["Movie B", "Movie A"])
    assert list(model.candidates_) == ["Movie A", "Movie B"]
    pair = model.rank_candidates(["Movie A"], [["Movie B", "no such film", "movie b, movie a"]])
    full = model.decision_function(["Movie A"])[0]
    np.testing.assert_allclose(pair[0], [full[1], EXCLUDED_SCORE, (full[0] + full[1]) / 2])


@pytest.mark.parametrize("exclude", [True, False])
def test_pair_scores_are_the_mean_of_the_named_items_scores(exclude):
    likes = random_likes()
    X = [" and ".join(MOVIES[j] for j in np.flatnonzero(row)) for row in likes]
    model = SVDRecommender(n_components=4, entities=MOVIES, exclude_liked=exclude)
    model.fit(X[:-1], [MOVIES[i % 12] for i in range(len(X) - 1)])
    rng = np.random.default_rng(3)
    contexts = [X[i] for i in rng.integers(0, len(X), 30)] + ["nothing"]
    # responses naming 0 to 4 items, some twice, some not candidates
    responses = [
        " then ".join(MOVIES[j] for j in rng.integers(0, 14, rng.integers(0, 5)) if j < 12)
        or "no film"
        for _ in contexts
    ]
    got = model.rank_candidates(contexts, [[r] for r in responses])[:, 0]
    full = model.decision_function(contexts)
    liked = model.item_matrix(contexts).toarray() != 0
    col = {c.lower(): j for j, c in enumerate(model.candidates_)}
    for i, text in enumerate(responses):  # the per-pair reference
        cols = [col[m.lower()] for m in text.split(" then ") if m.lower() in col]
        if not cols:
            assert got[i] == EXCLUDED_SCORE
            continue
        s = [EXCLUDED_SCORE if exclude and liked[i, j] else full[i, j] for j in cols]
        np.testing.assert_allclose(got[i], np.mean(s), rtol=1e-12, atol=1e-15)
    assert (got > EXCLUDED_SCORE).sum() > 10 and len(set(map(len, responses))) > 3


def test_frequent_items_left_out_score_zero():
    likes = random_likes(seed=6)
    likes[:, 0] = True  # "Movie A" is in every user's list, like "film" in every request
    users, items = np.nonzero(likes)
    model = SVDRecommender(n_components=3, max_item_frequency=0.9).fit_ratings(users, items)
    assert model.item_weights_[0] == 0 and (model.item_weights_[1:] > 0).all()
    scores = model.score_items(sp.csr_matrix(np.eye(12)[[1, 2, 3]]))
    assert (scores[:, 0] == 0).all() and (scores[:, 4:] != 0).any()


def test_fit_ratings_names_and_errors():
    model = SVDRecommender(n_components=1).fit_ratings(
        [1, 1, 2], [10, 20, 10], item_names={10: "Emma (1996)", 20: "emma (1996)"}
    )
    assert list(model.candidates_) == ["Emma (1996)", "emma (1996) [20]"]
    assert model.item_matrix(["I saw Emma (1996)"]).toarray().tolist() == [[1.0, 0.0]]
    with pytest.raises(ValueError, match="one length"):
        SVDRecommender().fit_ratings([1, 2], [1])
    with pytest.raises(ValueError, match="finite"):
        SVDRecommender().fit_ratings([1], [1], [np.nan])
    with pytest.raises(ValueError, match="columns"):
        model.score_items(np.ones((1, 3)))
    with pytest.raises(ValueError, match="n_components"):
        SVDRecommender(n_components=0).fit(["Movie A"], ["Movie B"])


def test_score_items_rejects_non_finite_and_1d_ratings_and_fit_ratings_a_non_dict():
    model = SVDRecommender(n_components=1).fit_ratings([1, 1, 2], [10, 20, 10])
    with pytest.raises(ValueError, match="R contains NaN"):
        model.score_items([[np.nan, 1.0]])
    with pytest.raises(ValueError, match="R contains infinity"):
        model.score_items(sp.csr_matrix([[np.inf, 0.0]]))
    with pytest.raises(ValueError, match="R must be 2-D"):
        model.score_items(np.array([1.0, 0.0]))
    # a dense or coo matrix scores as its csr form
    np.testing.assert_array_equal(
        model.score_items([[1.0, 0.0]]), model.score_items(sp.coo_matrix([[1.0, 0.0]]))
    )
    with pytest.raises(TypeError, match="item_names must be a dict"):
        SVDRecommender().fit_ratings([1], [10], item_names=["Emma"])
