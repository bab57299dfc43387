import gzip
import re

import numpy as np
import pytest
from conformance import RankerConformance
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.naive_bayes import BernoulliNB
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from irdialog.base import Context, Turn
from irdialog.datasets import load_babi_qa
from irdialog.datasets._base import bundled_data_dir
from irdialog.retrieval._ngram import NGramClassifier


class TestNGramConformance(RankerConformance):
    param_grid = {"max_df": [0.5, 1.0]}

    def make_estimator(self):
        return NGramClassifier()


def story(facts, query):
    return Context(history=tuple(Turn("kb", f) for f in facts), query=query)


STORY = story(
    ["Mary went to the kitchen.", "John moved to the garden.", "Mary took the milk."],
    "Where is Mary?",
)


def test_bag_holds_the_question_and_the_sentences_sharing_a_word():
    model = NGramClassifier(ngram_range=(1, 2)).fit([STORY, "where is john?"], ["kitchen", "x"])
    vocab = model.vocabulary_
    assert ("q", "where", "is") in vocab and ("q", "mary", "?") in vocab
    assert ("s", "mary", "went") in vocab and ("s", "the", "milk") in vocab
    assert ("s", "john", "moved") not in vocab  # shares no word with "where is mary ?"
    assert ("s", ".", "mary") not in vocab  # n-grams never cross a sentence boundary
    bag = model._bags(model._documents([STORY], model._tokenizer()))
    assert bag.shape == (1, len(vocab)) and set(bag.data) == {1.0}


def test_max_df_learns_the_filter_stopwords():
    # "the" is in 5 of the 6 distinct sentences, "to" in 3: with max_df=0.5 only "the"
    # stops selecting sentences (punctuation never selects any)
    X = [STORY, story(["Sandra went to the hallway."], "Where is the milk?")]
    model = NGramClassifier(ngram_range=(1, 1), max_df=0.5).fit(X, ["kitchen", "kitchen"])
    assert model.stopwords_ == {"the"}
    docs = model._documents(X, model._tokenizer())
    # "where is the milk ?": "the" no longer matches "Sandra went to the hallway."
    assert ("s", "sandra") not in docs[1]
    loose = NGramClassifier(ngram_range=(1, 1)).fit(X, ["kitchen", "kitchen"])
    assert ("s", "sandra") in loose._documents(X, loose._tokenizer())[1]


@pytest.mark.parametrize("classifier", [LogisticRegression(max_iter=500), LinearSVC()])
def test_classifier_parameters_are_nested(classifier):
    # (The conformance suite's clone test compares parameters with ==, which estimator
    # objects do not define, so an estimator-valued classifier is tested here instead.)
    model = NGramClassifier(ngram_range=(1, 1), classifier=classifier)
    assert model.get_params()["classifier__C"] == 1.0
    data = load_babi_qa(1, "train")
    search = GridSearchCV(model, {"classifier__C": [0.01, 10.0]}, cv=GroupKFold(n_splits=2))
    search.fit(data.X[:100], data.y[:100], groups=data.groups[:100])
    assert search.best_estimator_.classifier_.C in (0.01, 10.0)
    assert not hasattr(model.classifier, "coef_")  # the given estimator is cloned, not fitted
    assert search.best_estimator_.predict(data.X[200:210]).shape == (10,)


def test_unseen_candidates_rank_last_and_one_answer_fits():
    model = NGramClassifier(candidates=["kitchen", "garden", "never"]).fit(
        [STORY, story(["John went to the garden."], "Where is John?")], ["kitchen", "garden"]
    )
    scores = model.decision_function([STORY])
    assert scores[0, 2] < scores[0, :2].min()
    assert model.predict([STORY])[0] == "kitchen"
    single = NGramClassifier().fit([STORY, STORY], ["kitchen", "kitchen"])
    assert single.predict(["anything"])[0] == "kitchen"


def test_bad_parameters():
    with pytest.raises(ValueError, match="ngram_range"):
        NGramClassifier(ngram_range=(2, 1)).fit([STORY], ["kitchen"])
    with pytest.raises(TypeError, match="classifier"):
        NGramClassifier(classifier="logistic").fit([STORY], ["kitchen"])


@pytest.mark.parametrize("classifier", [BernoulliNB(), DecisionTreeClassifier()])
def test_classifier_without_decision_function_fails_in_fit(classifier):
    X = [STORY, story(["John went to the garden."], "Where is John?")]
    with pytest.raises(TypeError, match="decision_function"):
        NGramClassifier(classifier=classifier).fit(X, ["kitchen", "garden"])


def _translated_qa1(tmp_path, lang, word):
    path = next((bundled_data_dir() / "babi-qa" / "en").glob("qa1_*_train.txt.gz"))
    lines = gzip.open(path, "rt", encoding="utf-8").read().splitlines()[:600]
    while lines[-1].split(" ", 1)[0] != "1":  # end on a whole story
        lines.pop()
    lines.pop()
    folder = tmp_path / "babi-qa" / lang
    folder.mkdir(parents=True)
    out = []
    for line in lines:
        ident, rest = line.split(" ", 1)
        fields = rest.split("\t")
        fields[:2] = [
            re.sub(r"[A-Za-z]+", lambda m: word(m.group(0).lower()), f) for f in fields[:2]
        ]
        out.append(ident + " " + "\t".join(fields))
    (folder / "qa1_single-supporting-fact_train.txt").write_text("\n".join(out) + "\n", "utf-8")
    return load_babi_qa(1, "train", lang=lang, data_home=tmp_path)


def test_same_model_on_a_non_english_babi_folder(tmp_path):
    letters = "abcdefghijklmnopqrstuvwxyz"
    devanagari = "कखगघचछजझटठडढतथदधनपफबभमयरलव"
    table = {ord(a): d + "ा" for a, d in zip(letters, devanagari)}
    en = _translated_qa1(tmp_path, "en", lambda w: w)
    hn = _translated_qa1(tmp_path, "hn", lambda w: w.translate(table))
    assert hn.X[0].query != en.X[0].query
    split = len(en.X) * 3 // 4
    fits = [NGramClassifier(max_df=0.5).fit(d.X[:split], d.y[:split]) for d in (en, hn)]
    np.testing.assert_array_equal(
        fits[1].decision_function(hn.X[split:]), fits[0].decision_function(en.X[split:])
    )
    assert fits[1].score(hn.X[split:], hn.y[split:]) == fits[0].score(en.X[split:], en.y[split:])


@pytest.mark.slow
def test_babi_mean_accuracy_above_the_paper(data_home):
    accs = []
    for task in (1, 4, 6, 20):
        train = load_babi_qa(task, "train", data_home=data_home)
        test = load_babi_qa(task, "test", data_home=data_home)
        accs.append(NGramClassifier(max_df=0.5).fit(train.X, train.y).score(test.X, test.y))
    # paper (Table 3): 36, 50, 49, 76
    assert np.mean(accs) >= np.mean([0.36, 0.50, 0.49, 0.76])
