"""benchmarks/make_hindi_babi.py: the Hindi-like copy of bAbI QA (the traits of bAbI v1.2's
``hn/``), and the models on it, from the bundled task 1."""

from pathlib import Path

import numpy as np
import pytest
from conftest import import_benchmark

from irdialog.datasets import load_babi_qa
from irdialog.datasets._base import bundled_data_dir
from irdialog.retrieval import NGramClassifier
from irdialog.svm import StructuredSVMQA
from irdialog.text import context_texts, learn_case_folding


@pytest.fixture(scope="module")
def mhb():
    return import_benchmark("make_hindi_babi")


@pytest.fixture(scope="module")
def hindi_home(mhb, tmp_path_factory):
    out = tmp_path_factory.mktemp("babi-hn")
    mhb.make_hindi(bundled_data_dir(), out)
    return out


@pytest.mark.parametrize(
    "english, hindi",
    [
        # two-word place, verb-final with a postposition, the verb in the feminine
        ("Mary went to the kitchen.", "Mary रसोई घर में गई।"),
        ("John went to the kitchen.", "John रसोई घर में गया।"),
        ("Mary and John went back to the kitchen.", "Mary और John रसोई घर में वापस गए।"),
        # one pronoun for he and she: only the verb tells them apart
        ("Then she moved to the office.", "फिर वह दफ़्तर में चली गई।"),
        ("Then he moved to the office.", "फिर वह दफ़्तर में चला गया।"),
        # negation before the verb
        ("Mary is not in the bathroom.", "Mary स्नान घर में नहीं है।"),
        ("Mary is no longer in the bathroom.", "Mary अब स्नान घर में नहीं है।"),
        # names lower-cased in questions
        ("Where is Mary?", "mary कहाँ है?"),
        ("Is Daniel in the cinema?", "क्या daniel सिनेमा घर में है?"),
        ("Yesterday Julie went to the school.", "कल Julie पाठशाला में गई।"),
        ("Bill gave the milk to Fred.", "Bill ने Fred को दूध दिया।"),
        ("The office is north of the kitchen.", "दफ़्तर रसोई घर के उत्तर में है।"),
        ("Cats are afraid of wolves.", "बिल्लियाँ भेड़ियों से डरते हैं।"),
        ("What is gertrude afraid of?", "gertrude किससे डरती है?"),
        ("Is the red square to the left of the triangle?", "क्या लाल वर्ग त्रिभुज के बाएँ है?"),
    ],
)
def test_translate_sentence(mhb, english, hindi):
    assert mhb.translate_sentence(english) == hindi


def test_translate_answer(mhb):
    assert mhb.translate_answer("kitchen") == "रसोई घर"
    assert mhb.translate_answer("apple,milk") == "सेब,दूध"
    assert mhb.translate_answer("none") == "कोई नहीं"
    assert mhb.translate_answer("n,w") == "उ,प"
    assert mhb.translate_answer("Fred") == "Fred"


def test_uncovered_input_stops_the_run_with_its_text(mhb):
    with pytest.raises(ValueError, match="no rule covers the bAbI sentence 'Mary sang.'"):
        mhb.translate_sentence("Mary sang.")
    with pytest.raises(ValueError, match="no Hindi word for 'attic'"):
        mhb.translate_sentence("Mary went to the attic.")
    with pytest.raises(ValueError, match="no gender for the name 'Zoe'"):
        mhb.translate_sentence("Zoe went to the kitchen.")
    with pytest.raises(ValueError, match="line 2: no Hindi word for 'banana'"):
        mhb.translate_file("1 Mary went to the kitchen.\n2 Where is Mary?\tbanana\t1\n")


def test_hindi_copy_keeps_the_structure(hindi_home):
    for split in ("train", "test"):
        en = load_babi_qa(1, split, data_home=bundled_data_dir())
        hn = load_babi_qa(1, split, lang="hn-synth", data_home=hindi_home)
        assert Path(hn.filename).name == Path(en.filename).name
        assert hn.supporting == en.supporting
        np.testing.assert_array_equal(hn.groups, en.groups)
        assert [len(c.history) for c in hn.X] == [len(c.history) for c in en.X]
        assert len(set(hn.y)) == len(set(en.y))
        assert {len(a.split()) for a in hn.y} == {1, 2}  # रसोई घर, स्नान घर, शयन कक्ष
        text = " ".join(context_texts(hn.X, hn.y))
        assert not {"the", "to", "went", "is"} & set(text.split())  # no English left
    # Names are capitalised in the stories and lower-cased in the questions: that is the
    # pairing str.lower already makes, so nothing is learned.
    assert learn_case_folding(context_texts(hn.X, hn.y)) == {}


def test_models_as_good_in_hindi_on_task_1(hindi_home):
    scores = {}
    for lang, home in (("en", bundled_data_dir()), ("hn-synth", hindi_home)):
        train = load_babi_qa(1, "train", lang=lang, data_home=home)
        test = load_babi_qa(1, "test", lang=lang, data_home=home)
        svm = StructuredSVMQA(random_state=0).fit(train.X, train.y, supporting=train.supporting)
        ngram = NGramClassifier().fit(train.X, train.y)
        scores[lang] = svm.score(test.X, test.y), ngram.score(test.X, test.y)
    assert scores["hn-synth"][0] == scores["en"][0] == 1.0
    assert scores["hn-synth"][1] >= scores["en"][1] - 0.02


@pytest.mark.slow
def test_every_english_sentence_of_the_20_tasks_is_covered(mhb, data_home, tmp_path):
    written = mhb.make_hindi(data_home, tmp_path)
    assert len(written) == 40
    for task in (4, 19):  # two-word places in the geometry of 4 and the paths of 19
        hn = load_babi_qa(task, "test", lang="hn-synth", data_home=tmp_path)
        en = load_babi_qa(task, "test", data_home=data_home)
        assert hn.supporting == en.supporting and len(set(hn.y)) == len(set(en.y))
