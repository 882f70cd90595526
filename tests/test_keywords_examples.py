"""The keyword-vector model (seed 001) and the examples model, on small made-up texts about
cycling and football."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline

from focused.errors import TopicError
from focused.relevance.centroid import CentroidModel
from focused.relevance.examples import ExamplesModel, read_examples
from focused.relevance.keywords import KeywordModel

CYCLING = "bicycle cyclist peloton pedal saddle derailleur sprint climb wheel"
FOOTBALL = "goal striker midfielder penalty referee stadium league kick offside"
FILLER = "people world year time make place great known large number"


def document(words: str, seed: int, length: int = 60) -> str:
    """A text drawing 60% of its words from ``words``, the rest from shared filler."""
    rng = np.random.default_rng(seed)
    own, filler = words.split(), FILLER.split()
    return " ".join(
        rng.choice(own) if rng.random() < 0.6 else rng.choice(filler) for _ in range(length)
    )


PAGES = [document(CYCLING, 1), document(FOOTBALL, 2), FILLER, ""]


# -- KeywordModel ----------------------------------------------------------------------------


def test_keywords_rank_cycling_above_football_and_unrelated_text():
    model = KeywordModel(keywords=["bicycle", "peloton", "cyclists", "saddle"]).fit()
    cycling, football, unrelated, empty = model.relevance(PAGES)
    assert cycling > 0.5
    assert football == unrelated == empty == 0.0


def test_keyword_weights_shape_the_topic_vector():
    model = KeywordModel(keywords={"bicycle": 3.0, "goal": 1.0}).fit()
    bicycle, goal, both = model.relevance(["a bicycle", "a goal", "a bicycle and a goal"])
    assert goal < bicycle
    assert both == pytest.approx((3 + 1) / np.sqrt(10) / np.sqrt(2))
    assert np.allclose(np.linalg.norm(model.topic_), 1.0)


def test_relevance_is_a_cosine_so_page_length_and_repetition_cancel():
    """Seed 001 divides a page's counts by its most frequent keyword's; a cosine is the same."""
    model = KeywordModel(keywords={"bicycle": 2.0, "pedal": 1.0}).fit()
    short, repeated = model.relevance(
        ["bicycle bicycle pedal", "bicycle pedal " * 3 + "bicycle " * 3]
    )
    assert short == pytest.approx(repeated)
    assert short == pytest.approx(1.0)


def test_phrase_keywords_count_phrase_occurrences_on_the_analysed_tokens():
    model = KeywordModel(keywords=["yellow jersey"]).fit()
    assert model.terms_ == ["yellow jersey"]
    relevance = model.relevance(
        [
            "He took the Yellow Jerseys home.",  # case, plural: stemmed like the page
            "a jersey, yellow and wet",  # both words, not the phrase
            "yellow",  # the phrase's first word at the end of the text
        ]
    )
    assert relevance.tolist() == [1.0, 0.0, 0.0]
    counts = model.vectorizer_.transform(["yellow jersey, the yellow jersey and a yellow"])
    assert counts.toarray().tolist() == [[2.0]]


def test_phrases_and_words_are_separate_dimensions():
    model = KeywordModel(keywords=["tour", "yellow jersey"]).fit()
    counts = model.vectorizer_.transform(["the tour, the yellow jersey of the tour"]).toarray()
    assert dict(zip(model.terms_, counts[0], strict=True)) == {"tour": 2.0, "yellow jersey": 1.0}


def test_r0_is_the_threshold_of_best_path_good():
    keywords = ["bicycle", "peloton", "saddle", "pedal"]
    pages = ["a bicycle", "bicycle peloton saddle pedal", "a goal"]  # cosines 0.5, 1, 0
    assert KeywordModel(keywords=keywords, r0=0.5).fit().best_path_good(pages).tolist() == [
        True,
        True,
        False,
    ]
    assert KeywordModel(keywords=keywords, r0=0.6).fit().best_path_good(pages).tolist() == [
        False,
        True,
        False,
    ]


def test_description_alone_is_the_topic():
    model = KeywordModel(description="Cycling races: the cyclists of the peloton.").fit()
    assert model.terms_ == ["cycl", "race", "cyclist", "peloton"]
    cycling, football, *_ = model.relevance(PAGES)
    assert cycling > 0.3 > football


def test_description_words_are_added_without_overriding_a_keyword_weight():
    model = KeywordModel(keywords={"cycling": 4.0}, description="cycling and climbing").fit()
    assert model.terms_ == ["cycl", "climb"]
    assert model.topic_ == pytest.approx(np.array([4.0, 1.0]) / np.sqrt(17))


def test_stem_false_matches_exact_words_only():
    model = KeywordModel(keywords=["cyclist"], stem=False).fit()
    assert model.relevance(["a cyclist", "the cyclists"]).tolist() == [1.0, 0.0]


def test_score_pages_has_no_categories():
    model = KeywordModel(keywords=CYCLING.split()).fit()
    relevance, categories = model.score_pages(PAGES)
    assert relevance.shape == (4,)
    assert relevance == pytest.approx(model.relevance(PAGES))
    assert categories == [None] * 4
    assert ((relevance >= 0) & (relevance <= 1)).all()


def test_keyword_model_is_an_estimator():
    model = KeywordModel(keywords=["bicycle"], r0=0.4)
    with pytest.raises(NotFittedError):
        model.relevance(["a bicycle"])
    assert model.fit() is model
    assert model.fit(["ignored"], [1]) is model
    copy = clone(model)
    assert copy.get_params() == model.get_params()
    assert not hasattr(copy, "terms_")
    model.set_params(keywords=["goal"]).fit()  # a refit replaces the topic
    assert model.terms_ == ["goal"]
    assert model.relevance(["a goal", "a bicycle"]).tolist() == [1.0, 0.0]


def test_fitted_keyword_model_survives_pickling():
    model = KeywordModel(keywords=["yellow jersey", "bicycle"]).fit()
    loaded = pickle.loads(pickle.dumps(model))  # as joblib's workers and sklearn's clone do
    assert loaded.relevance(PAGES) == pytest.approx(model.relevance(PAGES))


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({}, "no keywords"),
        ({"keywords": ["the"]}, "'the' has no terms"),
        ({"keywords": {"bicycle": 0}}, "weight must be a number > 0"),
        ({"keywords": ["bicycle"], "r0": 1.5}, "r0 must be in"),
    ],
)
def test_keyword_model_checks_its_parameters_in_fit(params, error):
    model = KeywordModel(**params)  # construction never fails: clone and set_params stay safe
    with pytest.raises(ValueError, match=error):
        model.fit()


def test_a_single_string_is_one_keyword():
    assert KeywordModel(keywords="yellow jersey").fit().terms_ == ["yellow jersey"]


def test_scoring_rejects_a_single_string():
    with pytest.raises(TypeError, match="list of documents"):
        KeywordModel(keywords=["bicycle"]).fit().relevance("a bicycle")


# -- examples --------------------------------------------------------------------------------


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """Cycling pages (positives) and football pages (negatives), as .txt and .html."""
    positive, negative = tmp_path / "cycling", tmp_path / "football"
    for folder, words, offset in ((positive, CYCLING, 0), (negative, FOOTBALL, 100)):
        folder.mkdir()
        for i in range(6):
            text = document(words, offset + i)
            if i % 2:
                page = f"<html><head><title>page {i}</title><script>var x</script></head>"
                (folder / f"{i}.html").write_text(f"{page}<body><p>{text}</p></body></html>")
            else:
                (folder / f"{i}.txt").write_text(text)
    return positive, negative


def test_read_examples_labels_both_folders(folders):
    positive, negative = folders
    texts, labels = read_examples(positive, negative)
    assert labels == [1] * 6 + [0] * 6
    assert texts[1].startswith("page 1\n")  # HTML read through page_text
    assert not any("var x" in text for text in texts)
    assert read_examples(positive) == (texts[:6], [1] * 6)


def test_read_examples_names_an_empty_or_missing_folder(folders, tmp_path):
    positive, _ = folders
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TopicError, match=f"{empty}: no example files"):
        read_examples(positive, empty)
    with pytest.raises(TopicError, match="missing: examples folder does not exist"):
        read_examples(tmp_path / "missing")


def test_examples_with_negatives_learn_a_classifier(folders):
    texts, labels = read_examples(*folders)
    model = ExamplesModel().fit(texts, labels)
    assert isinstance(model.estimator_, Pipeline)
    assert model.scale_ is None
    cycling, football = model.relevance([document(CYCLING, 50), document(FOOTBALL, 51)])
    assert cycling > 0.5 > football
    relevance, categories = model.score_pages(PAGES)
    assert ((relevance >= 0) & (relevance <= 1)).all()
    assert categories == [None] * 4
    assert model.best_path_good(PAGES).tolist() == (relevance >= 0.5).tolist()


def test_examples_without_negatives_fall_back_to_a_scaled_centroid(folders):
    texts, labels = read_examples(folders[0])
    model = ExamplesModel(threshold=0.9).fit(texts, labels)
    assert isinstance(model.estimator_, CentroidModel)
    cosines = model.estimator_.relevance(texts)
    assert model.scale_ == pytest.approx(np.median(cosines))
    relevance = model.relevance(texts)
    assert (relevance == 1.0).sum() == len(texts) // 2  # capped: those above the median
    cycling, football, unrelated, empty = model.relevance([document(CYCLING, 50), *PAGES[1:]])
    assert cycling > football > empty == 0.0
    assert model.best_path_good([document(CYCLING, 50), PAGES[1]]).tolist() == [True, False]
    assert (ExamplesModel().fit(texts).relevance(PAGES) == model.relevance(PAGES)).all()


def test_examples_model_is_an_estimator(folders):
    texts, labels = read_examples(*folders)
    model = ExamplesModel(threshold=0.6, C=5.0)
    with pytest.raises(NotFittedError):
        model.relevance(texts)
    with pytest.raises(NotFittedError):
        model.best_path_good(texts)
    assert model.fit(texts, labels) is model
    copy = clone(model)
    assert copy.get_params() == model.get_params()
    assert not hasattr(copy, "estimator_")
    model.fit(texts[:6], labels[:6])  # a refit replaces everything, here with the fallback
    assert isinstance(model.estimator_, CentroidModel)
    assert model.scale_ is not None


@pytest.mark.parametrize(
    ("labels", "error"),
    [([1, 2], "labels must be 1"), ([0, 0], "no positive examples"), ([1], "2 documents")],
)
def test_examples_model_checks_its_labels(labels, error):
    with pytest.raises(ValueError, match=error):
        ExamplesModel().fit(["a bicycle", "a goal"], labels)
