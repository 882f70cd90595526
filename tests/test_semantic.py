"""The semantic method (seed 002): real WordNet 3.0 expansion and Eq. 4, and its topic fields."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from focused.errors import FocusedError, TopicError
from focused.relevance import SemanticModel
from focused.relevance.wordnet import WORDNET_ENV, find_wordnet
from focused.topic.files import load_topic
from focused.topic.methods import topic_model


def fit(**params) -> SemanticModel:
    return SemanticModel(**params).fit()


def test_terms_expand_to_their_wordnet_synonyms_hypernyms_and_hyponyms():
    car = fit(terms=["car"]).expansion_["car"]
    assert {lemma: car[lemma] for lemma in ("car", "auto", "automobile", "motorcar")} == {
        "car": 1.0,
        "auto": 1.0,
        "automobile": 1.0,
        "motorcar": 1.0,
    }
    assert car["motor vehicle"] == 0.5  # hypernym
    assert car["taxi"] == car["convertible"] == car["sports car"] == 0.5  # hyponyms
    assert "truck" not in car  # a sibling, not related by IS-A

    bird = fit(terms=["birds"]).expansion_["birds"]  # inflected: WordNet's morphy finds "bird"
    assert bird["bird"] == 1.0
    assert bird["vertebrate"] == bird["passerine"] == bird["bird of prey"] == 0.5
    assert "dame" not in bird  # "bird" stands for its most frequent sense only


def test_a_synset_name_picks_a_sense_and_instances_count_as_hyponyms():
    dame = fit(terms=["dame.n.01"]).expansion_["dame.n.01"]  # the slang sense of "bird"
    assert dame["bird"] == dame["wench"] == 1.0 and dame["girl"] == 0.5
    java = fit(terms=["java.n.03"]).expansion_["java.n.03"]
    assert java["Java"] == 1.0 and java["object-oriented programming language"] == 0.5
    assert fit(terms=["linux"]).expansion_["linux"]["UNIX"] == 0.5  # instance hypernym


def test_an_on_topic_text_ranks_above_an_off_topic_one():
    model = fit(terms=["bird"])
    docs = [
        "The robin is a passerine bird; birds of prey such as the eagle hunt smaller birds.",
        "The central bank raised interest rates and the stock market fell sharply.",
        "",
    ]
    relevance, categories = model.score_pages(docs)
    assert relevance[0] > 0.2 and relevance[1] == relevance[2] == 0.0
    assert categories == [None, None, None]
    assert model.best_path_good(docs).tolist() == [True, False, False]


def test_eq4_weighs_synonyms_above_hypernyms_and_hyponyms():
    # Eq. 4 with unit topic weights and counts: sum over page terms of sim(k, l) / page terms.
    docs = ["An automobile parked outside.", "A sedan parked outside.", "A lorry parked outside."]
    assert fit(terms=["car"]).relevance(docs) == pytest.approx([1 / 3, 0.5 / 3, 0])
    assert fit(terms=["car"], related_weight=0.25).relevance(docs) == pytest.approx(
        [1 / 3, 0.25 / 3, 0]
    )
    assert fit(terms=["car"], related_weight=0).relevance(docs) == pytest.approx([1 / 3, 0, 0])
    # Every page term meets every topic term: a second topic term halves what "car" gives.
    assert fit(terms=["car", "bird"]).relevance(docs[:1]) == pytest.approx([1 / 6])


def test_multi_word_lemmas_match_as_phrases_after_stemming():
    model = fit(terms=["raptor"])  # its synset: "bird of prey", "raptor", "raptorial bird"
    assert model.expansion_["raptor"]["bird of prey"] == 1.0
    assert "bird prey" in model.terms_  # analysed as pages are: stopword out, stems
    assert model.expansion_["raptor"]["bird"] == 0.5  # its hypernym
    # three page terms each: the phrase (1) counts on top of its word "bird" (0.5)
    docs = ["Birds of prey hunted.", "Birds hunted prey."]
    assert model.relevance(docs) == pytest.approx([1.5 / 3, 0.5 / 3])


def test_description_words_become_terms_and_unknown_ones_match_themselves():
    model = fit(description="Zorbleflax cars of the future")
    assert list(model.expansion_) == ["zorbleflax", "cars", "future"]
    assert model.expansion_["zorbleflax"] == {"zorbleflax": 1.0}
    assert model.expansion_["cars"]["automobile"] == 1.0
    assert model.relevance(["zorbleflax zorbleflax"]) == pytest.approx([1 / 3])


def test_words_of_one_synset_are_one_topic_term():
    assert list(fit(terms=["car", "automobile", "auto"]).expansion_) == ["car"]


def test_bad_parameters_raise_clear_errors():
    with pytest.raises(ValueError, match="'xyzzyplugh' is not in WordNet"):
        fit(terms=["xyzzyplugh"])
    with pytest.raises(ValueError, match="'java.n.99' is not in WordNet"):
        fit(terms=["java.n.99"])
    with pytest.raises(ValueError, match="no terms"):
        fit(terms=[], description="the and of")
    with pytest.raises(ValueError, match="related_weight"):
        fit(terms=["car"], related_weight=2)


def test_fit_returns_self_clone_and_not_fitted():
    unfitted = SemanticModel(terms=["car"], threshold=0.2)
    with pytest.raises(NotFittedError):
        unfitted.relevance(["car"])
    assert unfitted.fit() is unfitted
    copy = clone(unfitted)
    assert copy.get_params() == unfitted.get_params() and not hasattr(copy, "terms_")
    refit = unfitted.set_params(terms=["bird"]).fit()
    assert list(refit.expansion_) == ["bird"] and "car" not in refit.terms_


def test_missing_wordnet_is_one_line_saying_where_and_how(tmp_path, monkeypatch):
    monkeypatch.setenv(WORDNET_ENV, str(tmp_path))
    with pytest.raises(FocusedError) as info:
        fit(terms=["car"])
    message = str(info.value)
    assert "\n" not in message and str(tmp_path) in message and f"${WORDNET_ENV}" in message
    assert "apt-get install wordnet-base" in message


# -- topic files -----------------------------------------------------------------------------

TOPIC = """
name = "cars"
seeds = ["http://www.a.test/Car"]
[relevance]
method = "semantic"
"""


def write(folder: Path, relevance: str) -> Path:
    path = folder / "topic.toml"
    path.write_text(TOPIC + relevance)
    return path


def test_a_semantic_topic_loads_and_builds_its_model(tmp_path):
    topic = load_topic(
        write(tmp_path, 'terms = ["car", "sports car"]\ndescription = "fast cars"\n')
    )
    assert topic.method == "semantic"
    assert topic.relevance == {
        "terms": ["car", "sports car"],
        "description": "fast cars",
        "wordnet": None,
        "threshold": 0.01,
    }
    model = topic_model(topic, str(tmp_path / "models"))
    assert isinstance(model, SemanticModel) and "sports car" in model.expansion_
    assert model.relevance(["An automobile parked."])[0] > 0


def test_the_example_topic_file_loads():
    topic = load_topic(Path(__file__).parent.parent / "topics" / "examples" / "semantic.toml")
    assert topic.method == "semantic" and topic.relevance["terms"]


def test_a_wordnet_folder_in_the_topic_file_is_used(tmp_path):
    folder = find_wordnet()
    topic = load_topic(write(tmp_path, f'terms = ["car"]\nwordnet = "{folder}"\n'))
    assert topic.relevance["wordnet"] == folder


@pytest.mark.parametrize(
    ("relevance", "field", "problem"),
    [
        ("terms = []\n", "relevance.terms", "no terms"),
        ('terms = "car"\n', "relevance.terms", "expected a list"),
        ('terms = ["car", ""]\n', "relevance.terms", "expected a list"),
        ('terms = ["xyzzyplugh"]\n', "relevance.terms", "'xyzzyplugh' is not in WordNet"),
        ("description = 3\n", "relevance.description", "expected a sentence"),
        ('terms = ["car"]\nthreshold = 2\n', "relevance.threshold", "0 to 1"),
        ('terms = ["car"]\nwordnet = "nowhere"\n', "relevance.wordnet", "folder not found"),
        ('terms = ["car"]\nwordnet = "empty"\n', "relevance.wordnet", "WordNet not found"),
        ('terms = ["car"]\nr0 = 0.3\n', "relevance.r0", "not a field of 'semantic'"),
    ],
)
def test_bad_semantic_fields_are_named(tmp_path, relevance, field, problem):
    (tmp_path / "empty").mkdir()
    with pytest.raises(TopicError) as info:
        load_topic(write(tmp_path, relevance))
    assert info.value.field == field and problem in info.value.problem
    assert "\n" not in str(info.value)


def test_a_topic_without_wordnet_names_the_field_and_the_install(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(WORDNET_ENV, str(tmp_path / "empty"))
    with pytest.raises(TopicError) as info:
        load_topic(write(tmp_path, 'terms = ["car"]\n'))
    assert info.value.field == "relevance.wordnet" and "\n" not in str(info.value)
    assert "apt-get install wordnet-base" in info.value.problem
    assert str(tmp_path / "empty") in info.value.problem


def test_scoring_a_batch_is_one_pass_over_pages():
    model = fit(terms=["bird"])
    docs = ["A bird sang. " * 50, "Markets fell. " * 50] * 100
    relevance = model.relevance(docs)
    assert relevance.shape == (200,) and np.all((relevance >= 0) & (relevance <= 1))
    assert relevance[::2] == pytest.approx(np.full(100, 0.5))  # bird, sang: one in two
