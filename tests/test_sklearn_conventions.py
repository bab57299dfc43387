"""scikit-learn conventions: tags, scikit-learn's own estimator checks, ranking pipelines,
set_output, metadata routing, pandas input and short reprs."""

import importlib
import inspect
from pathlib import Path

import numpy as np
import pytest
import sklearn
from conformance import EstimatorChecks, RankerConformance, public_class
from conftest import TINY_KB, make_tiny_dialogs
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.utils import estimator_checks, get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

import irdialog
from irdialog import (
    BM25Ranker,
    DualEncoderRanker,
    EntityParser,
    EntitySymbolRanker,
    FusionRanker,
    KBMemoryRetriever,
    LearningToRankRanker,
    MatchTypeFeaturizer,
    MemN2NRanker,
    MemNNQA,
    NearestNeighborRanker,
    NGramClassifier,
    QRNRanker,
    RankingPipeline,
    RecurrentReader,
    RuleBasedRanker,
    SeedEnsembleRanker,
    StructuredSVMQA,
    SubgraphEmbeddingRanker,
    SupervisedEmbeddingRanker,
    SVDRecommender,
    TfidfRanker,
    make_ranking_pipeline,
)

PUBLIC_ESTIMATORS = [
    TfidfRanker(),
    BM25Ranker(),
    NearestNeighborRanker(),
    NGramClassifier(),
    RuleBasedRanker(kb=TINY_KB),
    SupervisedEmbeddingRanker(),
    SubgraphEmbeddingRanker(),
    MemN2NRanker(),
    MemNNQA(),
    QRNRanker(),
    RecurrentReader(),
    DualEncoderRanker(),
    EntitySymbolRanker(ranker=TfidfRanker(), entities=["paris"]),
    FusionRanker([("tfidf", TfidfRanker()), ("bm25", BM25Ranker())]),
    LearningToRankRanker(n_estimators=5, min_child_samples=2),
    SeedEnsembleRanker(SupervisedEmbeddingRanker(epochs=2), n_seeds=2),
    SVDRecommender(),
    StructuredSVMQA(),
    MatchTypeFeaturizer(TINY_KB),
    EntityParser(entities=["paris"]),
    KBMemoryRetriever(["paris is_in france"]),
    make_ranking_pipeline(MatchTypeFeaturizer(TINY_KB), TfidfRanker()),
]


def _name(estimator):
    return type(estimator).__name__


def test_every_public_estimator_is_checked():
    public = {
        name
        for name in irdialog.__all__
        if inspect.isclass(getattr(irdialog, name))
        and issubclass(getattr(irdialog, name), BaseEstimator)
    }
    assert public == {_name(e) for e in PUBLIC_ESTIMATORS}


def test_every_public_estimator_runs_the_conformance_suite():
    # scikit-learn runs no numeric check on text input: the suite runs them on contexts.
    checked = set()
    for path in Path(__file__).parent.glob("test_*.py"):
        module = importlib.import_module(path.stem)
        for name, cls in vars(module).items():
            # the classes pytest collects: named Test*, defined in the module
            if (
                name.startswith("Test")
                and issubclass(cls, EstimatorChecks)
                and cls.__module__ == path.stem
            ):
                checked.add(public_class(cls().make_estimator()).__name__)
    assert checked == {_name(e) for e in PUBLIC_ESTIMATORS}


def _expected_failed_checks(estimator):
    # None: every estimator here takes text, says so in its tags, and scikit-learn skips
    # the checks that feed numeric arrays (with a SkipTestWarning naming the input tags).
    return {}


@parametrize_with_checks(PUBLIC_ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", PUBLIC_ESTIMATORS, ids=_name)
def test_tags_describe_text_input_so_array_checks_skip_with_a_reason(estimator):
    tags = get_tags(estimator)
    assert tags.input_tags.string and not tags.input_tags.two_d_array
    is_ranker = not hasattr(estimator, "transform")
    assert tags.target_tags.required == is_ranker
    with pytest.warns(sklearn.exceptions.SkipTestWarning, match="requires input"):
        checks = list(estimator_checks.estimator_checks_generator(estimator))
    assert len(checks) == 1  # only check_estimator_cloneable


# The checks of scikit-learn's API group that use no numeric data. They are run here by
# hand because scikit-learn skips every check for text-input estimators. Left out:
# check_positive_only_tag_during_fit, check_fit_score_takes_y and the other checks that
# fit on 2-D float arrays; conformance.EstimatorChecks runs their text equivalents.
API_CHECKS = [
    "check_estimator_tags_renamed",
    "check_valid_tag_types",
    "check_estimator_repr",
    "check_no_attributes_set_in_init",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_mixin_order",
    "check_parameters_default_constructible",
    "check_get_params_invariance",
    "check_set_params",
]


@pytest.mark.parametrize("check", API_CHECKS)
@pytest.mark.parametrize("estimator", PUBLIC_ESTIMATORS, ids=_name)
def test_sklearn_api_checks_that_need_no_numeric_data(estimator, check):
    getattr(estimator_checks, check)(_name(estimator), clone(estimator))


# --------------------------------------------------------------------------- pipelines


def _memn2n():
    return MemN2NRanker(epochs=3, embedding_dim=8, random_state=0)


class TestRankingPipelineConformance(RankerConformance):
    param_grid = {"memn2nranker__hops": [1, 2]}
    fit_runs_on_threads = True  # MemN2N trains Hogwild
    fit_is_hogwild = True

    def make_estimator(self):
        return make_ranking_pipeline(MatchTypeFeaturizer(TINY_KB), _memn2n())


def test_ranking_pipeline_delegates_the_ranking_methods_through_the_transforms():
    X, y, _ = make_tiny_dialogs()
    pipe = make_ranking_pipeline(MatchTypeFeaturizer(TINY_KB), _memn2n()).fit(X, y)
    assert isinstance(pipe, RankingPipeline)
    Xt = pipe[0].transform(X)
    ranker = pipe[-1]
    np.testing.assert_array_equal(pipe.rank(X, k=3), ranker.rank(Xt, k=3))
    lists = [list(y[:4]) for _ in X]
    np.testing.assert_array_equal(pipe.rank_candidates(X, lists), ranker.rank_candidates(Xt, lists))
    np.testing.assert_array_equal(pipe.attention(X), ranker.attention(Xt))
    assert pipe.candidates_ is ranker.candidates_
    assert pipe.score(X, y) == ranker.score(Xt, y)


def test_ranking_pipeline_hides_methods_its_ranker_lacks():
    X, y, _ = make_tiny_dialogs()
    pipe = make_ranking_pipeline(MatchTypeFeaturizer(TINY_KB), TfidfRanker()).fit(X, y)
    assert not hasattr(pipe, "attention")
    with pytest.raises(AttributeError, match="attention"):
        pipe.attention(X)


def test_ranking_pipeline_in_grid_search():
    X, y, groups = make_tiny_dialogs()
    pipe = make_ranking_pipeline(MatchTypeFeaturizer(TINY_KB), TfidfRanker())
    search = GridSearchCV(pipe, {"tfidfranker__use_history": [True, False]}, cv=GroupKFold(2))
    search.fit(X, y, groups=groups)
    assert isinstance(search.best_estimator_, RankingPipeline)
    assert search.best_estimator_.rank(X, k=1).shape == (len(X), 1)


def test_set_output_passes_through_the_context_transformers():
    X, y, _ = make_tiny_dialogs()
    pipe = make_pipeline(MatchTypeFeaturizer(TINY_KB), TfidfRanker())
    pipe.set_output(transform="pandas")  # used to raise ValueError
    before = make_pipeline(MatchTypeFeaturizer(TINY_KB), TfidfRanker()).fit(X, y)
    np.testing.assert_array_equal(pipe.fit(X, y).decision_function(X), before.decision_function(X))
    assert MatchTypeFeaturizer(TINY_KB).fit(X).set_output(transform="pandas").transform(X)[0].query


def test_featurizer_fit_checks_its_input():
    with pytest.raises(TypeError, match=r"X\[0\] must be a Context or a str"):
        MatchTypeFeaturizer(TINY_KB).fit([3])


# --------------------------------------------------------------------------- routing


class _RecordingMemN2N(MemN2NRanker):
    """Records the groups each fit receives."""

    calls: list = []

    def fit(self, X, y, groups=None):
        type(self).calls.append(None if groups is None else len(set(groups)))
        return super().fit(X, y, groups=groups)


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def test_metadata_routing_sends_groups_to_fit_inside_grid_search(routing):
    X, y, groups = make_tiny_dialogs()
    _RecordingMemN2N.calls = []
    est = _RecordingMemN2N(epochs=2, early_stopping=True, random_state=0)
    search = GridSearchCV(est.set_fit_request(groups=True), {"hops": [1]}, cv=GroupKFold(3))
    search.fit(X, y, groups=groups)
    # 3 folds of 4 training dialogs each, then the refit on all 6.
    assert _RecordingMemN2N.calls == [4, 4, 4, 6]


def test_metadata_routing_reaches_a_ranker_inside_a_ranking_pipeline(routing):
    X, y, groups = make_tiny_dialogs()
    _RecordingMemN2N.calls = []
    est = _RecordingMemN2N(epochs=2, early_stopping=True, random_state=0)
    pipe = make_ranking_pipeline(MatchTypeFeaturizer(TINY_KB), est.set_fit_request(groups=True))
    GridSearchCV(pipe, {"_recordingmemn2n__hops": [1]}, cv=GroupKFold(2)).fit(X, y, groups=groups)
    assert _RecordingMemN2N.calls == [3, 3, 6]


def test_groups_declined_stay_with_the_splitter_and_unset_requests_are_an_error(routing):
    X, y, groups = make_tiny_dialogs()
    _RecordingMemN2N.calls = []
    est = _RecordingMemN2N(epochs=2, random_state=0)
    search = GridSearchCV(est.set_fit_request(groups=False), {"hops": [1]}, cv=GroupKFold(2))
    search.fit(X, y, groups=groups)
    assert _RecordingMemN2N.calls == [None, None, None]
    unset = GridSearchCV(_RecordingMemN2N(epochs=2), {"hops": [1]}, cv=GroupKFold(2))
    with pytest.raises(sklearn.exceptions.UnsetMetadataPassedError, match="set_fit_request"):
        unset.fit(X, y, groups=groups)


def test_supervised_embeddings_validate_on_whole_groups():
    X, y, groups = make_tiny_dialogs()
    est = SupervisedEmbeddingRanker(
        epochs=3, early_stopping=True, validation_fraction=0.34, random_state=0
    )
    est.fit(X, y, groups=groups)
    assert len(est.validation_scores_) > 0
    with pytest.raises(ValueError, match="groups must have one entry per sample"):
        clone(est).fit(X, y, groups=groups[:3])


def test_entity_symbol_ranker_passes_groups_to_its_ranker():
    X = ["who directed heat", "who directed alien", "who directed heat please"]
    y = ["michael_mann", "ridley_scott", "michael_mann"]
    ranker = EntitySymbolRanker(
        ranker=SupervisedEmbeddingRanker(epochs=2, random_state=0),
        entities=["michael_mann", "ridley_scott"],
        min_count=1,
    )
    ranker.fit(X, y, groups=[0, 1, 0])
    with pytest.raises(TypeError, match="TfidfRanker.fit takes no groups"):
        clone(ranker).set_params(ranker=TfidfRanker()).fit(X, y, groups=[0, 1, 0])


# --------------------------------------------------------------------------- input, repr


def test_a_pandas_series_of_texts_is_accepted_and_a_dataframe_is_refused():
    pd = pytest.importorskip("pandas")
    X, y = ["hello", "a table in paris"], ["hi", "api_call paris"]
    model = TfidfRanker().fit(pd.Series(X), pd.Series(y))
    np.testing.assert_array_equal(
        model.decision_function(pd.Series(X)), TfidfRanker().fit(X, y).decision_function(X)
    )
    frame = pd.DataFrame({"utterance": X, "response": y})
    with pytest.raises(TypeError, match=r"got a DataFrame; pass one column"):
        TfidfRanker().fit(frame, y)
    with pytest.raises(TypeError, match="1-D sequence of responses"):
        TfidfRanker().fit(X, frame)


def test_score_takes_sample_weights():
    X, y, _ = make_tiny_dialogs()
    model = TfidfRanker().fit(X, y)
    right = model.predict(X) == np.asarray(y, dtype=object)
    weights = np.arange(1.0, len(X) + 1)
    assert model.score(X, y, sample_weight=weights) == pytest.approx(
        weights[right].sum() / weights.sum()
    )
    with pytest.raises(ValueError, match="sample_weight must have one entry per context"):
        model.score(X, y, sample_weight=[1.0])


def test_a_2d_array_of_texts_is_refused():
    with pytest.raises(ValueError, match=r"1-D sequence of contexts, got an array of shape"):
        TfidfRanker().fit(np.array([["a", "b"], ["c", "d"]]), ["x", "y"])


def test_reprs_summarise_long_parameters():
    candidates = [f"candidate answer number {i}" for i in range(4212)]
    kb = {f"city_{i}": "R_location" for i in range(500)}
    assert repr(MemN2NRanker(candidates=candidates, hops=2)) == (
        "MemN2NRanker(candidates=<list of 4212 str>, hops=2)"
    )
    text = repr(make_ranking_pipeline(MatchTypeFeaturizer(kb), TfidfRanker(candidates=candidates)))
    assert "<dict of 500 str>" in text and "<list of 4212 str>" in text
    assert len(text.splitlines()) <= 5
    assert repr(TfidfRanker(candidates=["a", "b"])) == "TfidfRanker(candidates=['a', 'b'])"
