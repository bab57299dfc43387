"""BM25Ranker: every variant against a plain numpy reference of its formula and against
bm25s given the same tokens, the pruned rank against decision_function, streaming, match
types, other tokenizers."""

import numpy as np
import pytest
from conformance import RankerConformance
from conftest import TINY_KB, make_tiny_dialogs

from irdialog import BM25Ranker, MatchTypeFeaturizer, make_ranking_pipeline
from irdialog.base import _top_k
from irdialog.retrieval import _bm25
from irdialog.retrieval._bm25 import METHODS


class TestBM25Conformance(RankerConformance):
    param_grid = {"method": ["lucene", "bm25+"], "k1": [0.9, 1.5]}

    def make_estimator(self):
        return BM25Ranker()


def _reference_scores(queries, docs, method, k1, b, delta):
    """BM25 of Kamphuis et al. (2020) in plain numpy, one query word occurrence at a time,
    over whitespace tokens; BM25L and BM25+ score absent words too."""
    toks = [d.split() for d in docs]
    n = len(docs)
    avgdl = np.mean([len(t) for t in toks])
    vocab = sorted({w for t in toks for w in t})
    df = {w: sum(w in t for t in toks) for w in vocab}
    out = np.zeros((len(queries), n))
    for i, q in enumerate(queries):
        for w in q.split():
            if w not in df:
                continue
            d = df[w]
            idf = {
                "robertson": np.log(max(1.0, (n - d + 0.5) / (d + 0.5))),
                "lucene": np.log(1 + (n - d + 0.5) / (d + 0.5)),
                "atire": np.log(n / d),
                "bm25l": np.log((n + 1) / (d + 0.5)),
                "bm25+": np.log((n + 1) / d),
            }[method]
            for j, t in enumerate(toks):
                tf = t.count(w)
                norm = 1 - b + b * len(t) / avgdl
                if method in ("robertson", "lucene"):
                    part = tf / (k1 * norm + tf)
                elif method == "atire":
                    part = tf * (k1 + 1) / (tf + k1 * norm)
                elif method == "bm25l":
                    c = tf / norm
                    part = (k1 + 1) * (c + delta) / (k1 + c + delta)
                else:
                    part = (k1 + 1) * tf / (k1 * norm + tf) + delta
                out[i, j] += idf * part
    return out


def _corpus(seed=0, n_docs=120, n_queries=40):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(40)]
    p = 1.0 / np.arange(1, 41)  # a Zipf-like vocabulary: common and rare words
    p /= p.sum()
    docs = list(dict.fromkeys(" ".join(rng.choice(words, rng.integers(1, 12), p=p))
                              for _ in range(n_docs)))  # fmt: skip
    queries = [
        " ".join(rng.choice([*words, "unseen"], rng.integers(1, 6))) for _ in range(n_queries)
    ]
    return docs, queries


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("k1", "b", "delta"), [(1.5, 0.75, 0.5), (0.9, 0.3, 1.0), (2.0, 1.0, 0.0)])
def test_scores_are_the_formula_of_each_variant(method, k1, b, delta):
    docs, queries = _corpus()
    model = BM25Ranker(candidates=docs, method=method, k1=k1, b=b, delta=delta)
    model.fit(queries[:1], docs[:1])
    expected = _reference_scores(queries, docs, method, k1, b, delta)
    np.testing.assert_allclose(model.decision_function(queries), expected, rtol=2e-6, atol=1e-6)
    pairs = model.rank_candidates(queries, [docs[:7]] * len(queries))
    np.testing.assert_allclose(pairs, expected[:, :7], rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_indexing_in_blocks_gives_the_same_impacts(method, monkeypatch):
    docs, queries = _corpus(seed=2)
    whole = BM25Ranker(candidates=docs, method=method).fit(queries[:1], docs[:1]).index_
    monkeypatch.setattr(_bm25, "_SCORE_BLOCK", 7)  # many blocks, of a document or more
    blocks = BM25Ranker(candidates=docs, method=method).fit(queries[:1], docs[:1]).index_
    for name in ("indptr", "docs", "impacts", "term_max"):
        np.testing.assert_array_equal(getattr(blocks, name), getattr(whole, name))


@pytest.mark.parametrize("method", METHODS)
def test_rank_is_the_ranking_of_decision_function(method):
    docs, queries = _corpus(seed=1, n_docs=400, n_queries=300)
    model = BM25Ranker(candidates=docs, method=method).fit(queries[:1], docs[:1])
    scores = model.decision_function(queries)
    for k in (1, 10, len(docs) + 5):
        np.testing.assert_array_equal(model.rank(queries, k), _top_k(scores, k))
    many = queries * 4  # more than one chunk of texts: encoding overlaps the ranking threads
    np.testing.assert_array_equal(
        model.rank(many, 10, n_jobs=2), np.vstack([_top_k(scores, 10)] * 4)
    )
    pool = docs[::-1][:50]
    pool_scores = model.rank_candidates(queries, [pool] * len(queries))
    np.testing.assert_array_equal(model.rank(queries, 5, candidates=pool), _top_k(pool_scores, 5))


@pytest.mark.parametrize("method", METHODS)
def test_scores_equal_bm25s_given_the_same_tokens(method):
    bm25s = pytest.importorskip("bm25s")
    docs, queries = _corpus(seed=2, n_docs=300)
    queries = [q.replace("unseen", "w1") for q in queries]  # bm25s refuses unknown-only queries
    for k1, b, delta in [(1.5, 0.75, 0.5), (1.2, 0.3, 1.0)]:
        peer = bm25s.BM25(method=method, k1=k1, b=b, delta=delta)
        split = dict(stopwords=None, token_pattern=r"(?u)\S+", show_progress=False)
        peer.index(bm25s.tokenize(docs, **split), show_progress=False)
        expected = np.array([peer.get_scores(q.split()) for q in queries])
        model = BM25Ranker(candidates=docs, method=method, k1=k1, b=b, delta=delta)
        got = model.fit(["x"], [docs[0]]).decision_function(queries)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)  # bm25s is float32


def test_streaming_fit_is_the_fit_on_the_responses():
    docs, queries = _corpus(seed=3)
    n = min(len(docs), len(queries))
    docs, queries = docs[:n], queries[:n]
    whole = BM25Ranker().partial_fit(queries, docs)
    chunks = [(queries[i : i + 7], docs[i : i + 7]) for i in range(0, n, 7)]
    streamed = BM25Ranker().fit_chunks(chunks)
    one_by_one = BM25Ranker()
    for X, y in chunks:
        one_by_one.partial_fit(X, y)
    lists = [docs[:5]] * 4
    for model in (streamed, one_by_one):
        assert model.n_documents_ == whole.n_documents_ == n
        np.testing.assert_allclose(
            model.rank_candidates(queries[:4], lists), whole.rank_candidates(queries[:4], lists)
        )
    with pytest.raises(ValueError, match="no fixed candidates"):
        streamed.rank(queries[:2])
    # fit starts over: a later partial_fit does not continue the old stream
    refit = BM25Ranker().fit_chunks(chunks).fit(["a"], ["b c"])
    assert refit.partial_fit(["a"], ["b"]).n_documents_ == 1


def test_duplicate_query_words_count_once_per_occurrence():
    model = BM25Ranker(candidates=["apple pie", "apple", "pie crust"]).fit(["x"], ["apple"])
    once, twice = model.decision_function(["apple", "apple apple"])
    np.testing.assert_allclose(twice, 2 * once)


def test_match_types_lift_candidates_holding_the_mentioned_entity_type():
    X, y, _ = make_tiny_dialogs()
    plain = BM25Ranker().fit(X, y)
    typed = make_ranking_pipeline(MatchTypeFeaturizer(TINY_KB), BM25Ranker()).fit(X, y)
    assert typed[-1].types_ and not plain.types_
    query = [X[3]]  # "in paris please" in the history: the turn answered by api_call paris
    assert "in paris please" in [t.text for t in X[3].history]
    s_plain = plain.decision_function(query)[0]
    s_typed = typed.decision_function(query)[0]
    for i, c in enumerate(plain.candidates_):
        if c.startswith("api_call"):
            assert (s_typed[i] > s_plain[i]) == (c == "api_call paris"), c
    np.testing.assert_array_equal(typed.rank(query, 3), _top_k(s_typed[None], 3))


def test_a_tokenizer_for_text_without_spaces():
    def bigrams(text):
        return [text[i : i + 2] for i in range(len(text) - 1)] or [text]

    docs = ["我想吃意大利菜", "请问在哪里", "巴黎的餐厅"]
    model = BM25Ranker(candidates=docs, tokenizer=bigrams).fit(["你好"], [docs[0]])
    assert model.predict(["哪里有意大利菜"])[0] == docs[0]
    assert model.predict(["在哪里"])[0] == docs[1]


@pytest.mark.parametrize(
    ("params", "message"),
    [({"method": "okapi"}, "method"), ({"b": 1.5}, "'b'"), ({"k1": -1.0}, "'k1'")],
)
def test_bad_parameters_are_refused_by_name(params, message):
    X, y, _ = make_tiny_dialogs()
    with pytest.raises(ValueError, match=message):
        BM25Ranker(**params).fit(X, y)


def test_stop_words_leave_both_sides_and_the_lengths():
    docs = ["the cat sat", "a dog", "the bird"]
    model = BM25Ranker(candidates=docs, stop_words=["the", "a"]).fit(["x"], ["a dog"])
    assert set(model.vocabulary_) == {"cat", "sat", "dog", "bird"}
    plain = BM25Ranker(candidates=["cat sat", "dog", "bird"]).fit(["x"], ["dog"])
    queries = ["the cat", "a dog and the bird"]
    np.testing.assert_allclose(model.decision_function(queries), plain.decision_function(queries))
    np.testing.assert_array_equal(model.decision_function(["the a"]), 0.0)


def test_punctuation_is_dropped_by_default_in_any_script():
    docs = ["who is it ?", "heat directed_by michael mann", "गर्मी । फ़िल्म"]
    model = BM25Ranker(candidates=docs).fit(["x"], [docs[0]])
    assert not {"?", "।"} & set(model.vocabulary_)
    assert model.predict(["heat?"])[0] == "heat directed_by michael mann"  # not the "?" one
    kept = BM25Ranker(candidates=docs, drop_punctuation=False).fit(["x"], [docs[0]])
    assert {"?", "।"} <= set(kept.vocabulary_)
    custom = BM25Ranker(candidates=docs, tokenizer=str.split).fit(["x"], [docs[0]])
    assert not {"?", "।"} & set(custom.vocabulary_)
