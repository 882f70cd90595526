"""The relevance-model package: page text, the taxonomy reader, the hierarchical classifier
and the model store, on a small synthetic taxonomy."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import numpy as np
import pytest
from lxml import html
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from focused.errors import TopicError
from focused.relevance import (
    HierarchicalClassifier,
    analyze,
    load_or_train,
    page_text,
    read_taxonomy,
)
from focused.relevance.porter import stem as porter_stem
from focused.relevance.text import ENGLISH_STOP_WORDS, MAX_TITLE, words
from focused.relevance.wordnet import find_wordnet

# Each category's own words; documents are drawn from them plus shared filler.
WORDS = {
    "Sports/Cycling": "bicycle cyclist peloton pedal saddle derailleur sprint climb tour wheel",
    "Sports/Football": "goal striker midfielder penalty referee stadium league kick offside",
    "Sports": "athlete coach training championship medal fans season team",
    "Science/Biology/Birds": "feather wing nest beak migration songbird plumage egg hatch owl",
    "Science/Physics": "quantum particle energy momentum relativity photon electron field",
    "Science": "experiment hypothesis laboratory research scientist theory measurement",
}
FILLER = ["people", "world", "year", "time", "make", "place", "great", "known", "large", "number"]


def document(category: str, seed: int, length: int = 60) -> str:
    rng = np.random.default_rng(seed)
    own = WORDS[category].split()
    words = [rng.choice(own) if rng.random() < 0.6 else rng.choice(FILLER) for _ in range(length)]
    return " ".join(words)


@pytest.fixture
def taxonomy(tmp_path: Path) -> Path:
    """Categories with .txt and .html examples, some filed at internal nodes."""
    root = tmp_path / "taxonomy"
    for i, category in enumerate(WORDS):
        folder = root / category
        folder.mkdir(parents=True, exist_ok=True)
        for j in range(6):
            text = document(category, 100 * i + j)
            if j % 2:
                page = f"<html><head><title>{category}</title><script>x = 1</script></head>"
                (folder / f"{j}.html").write_text(f"{page}<body><p>{text}</p></body></html>")
            else:
                (folder / f"{j}.txt").write_text(text)
    (root / "README.txt").write_text("files in the root belong to no category")
    (root / "Science" / "Biology" / "notes.md").write_text("not an example")
    return root


@pytest.fixture
def examples(taxonomy: Path):
    return read_taxonomy(taxonomy)


def fitted(examples, **params) -> HierarchicalClassifier:
    return HierarchicalClassifier(min_df=1, **params).fit(examples.texts, examples.labels)


# -- text ------------------------------------------------------------------------------------


def test_page_text_drops_non_prose_and_collapses_whitespace():
    page = page_text(
        "<html><head><title> The  Title </title><style>p {}</style></head><body>"
        "<h1>Head</h1><script>var x</script><!-- comment --><p>one\n\n  two</p>"
        "<noscript>enable js</noscript><template>t</template>three</body></html>"
    )
    assert page.title == "The Title"
    assert page.text == "Head one two three"
    assert page.document == "The Title\nHead one two three"


def test_page_text_takes_h1_without_title_and_a_parsed_root_unchanged():
    root = html.fromstring("<html><body><h1>Birds</h1><script>x</script><p>owl</p></body></html>")
    before = html.tostring(root)
    assert page_text(root) == ("Birds", "Birds owl")
    assert html.tostring(root) == before


def test_page_text_has_no_control_characters_and_a_bounded_title():
    """A terminal obeys \x1b[31m; the feed, the data set and the logs keep the title."""
    page = page_text(
        "<title>\x01\x1b[31mRed\x9b title\x7f" + " on cycling" * 100_000 + "</title>"
        "<body><p>Bo\x00dy\x07 text \x1b]0;retitled\x07</p></body>"
    )
    assert page.title.startswith("[31mRed title on cycling") and len(page.title) == MAX_TITLE
    assert page.text == "Bo\ufffddy text ]0;retitled"  # libxml2 reads NUL as U+FFFD
    assert not re.search("[\x00-\x1f\x7f-\x9f]", page.title + page.text)


@pytest.mark.parametrize(
    "page", ["", b"", "<!-- only a comment -->", b"\x00\xff\xfe", "<<<>>>", "<frameset/>"]
)
def test_page_text_never_raises(page):
    title, text = page_text(page)
    assert isinstance(title, str) and isinstance(text, str)


def test_page_text_bytes_and_declared_encodings():
    assert page_text("<p>caf\u00e9</p>".encode()).text == "caf\u00e9"
    assert page_text(b'<meta charset="iso-8859-1"><p>caf\xe9</p>').text == "caf\u00e9"
    xml = '<?xml version="1.0" encoding="latin-1"?><html><title>T</title><p>x</p></html>'
    assert page_text(xml) == ("T", "x")


def test_analyze():
    text = "The Birds were running, 2024 x_y a Ünïcode café"
    assert analyze(text) == ["birds", "running", "ünïcode", "café"]
    assert analyze(text, stem=True) == ["bird", "run", "ünïcode", "café"]
    # ASCII once lowered (the Kelvin sign lowers to "k") or not: the same words
    assert words("The K\u212aelvin sign, x 2 y_z") == ["the", "kkelvin", "sign"]
    assert words("The Ünïcode sign, x 2 y_z") == ["the", "ünïcode", "sign"]


def test_stop_words_and_stems_are_scikit_learns_and_nltks():
    """The analyzer's own stop words and Porter stemmer (so that it imports neither package):
    scikit-learn's list, and nltk's stem of every word of a sample of WordNet's lemmas."""
    from nltk.stem.porter import PorterStemmer
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as SCIKIT_LEARNS

    assert ENGLISH_STOP_WORDS == SCIKIT_LEARNS
    lemmas = [
        line.split()[0]
        for pos in ("noun", "verb", "adj", "adv")
        for line in (find_wordnet() / f"index.{pos}").read_text().splitlines()[29::7]
    ]
    tricky = "y yy yyy ayy sky skies dying ies ied dies died spied eed feed agreed ing sing"
    tricky += " geologi theologi radicalli hopefulli controll roll Ünïcode café naïve straße"
    sample = {w for lemma in lemmas for w in words(lemma.replace("_", " "))} | set(tricky.split())
    nltk = PorterStemmer()
    assert len(sample) > 15_000
    assert {w: porter_stem(w) for w in sample} == {w: nltk.stem(w) for w in sample}


# -- taxonomy --------------------------------------------------------------------------------


def test_read_taxonomy(examples):
    assert len(examples.texts) == len(examples.labels) == 6 * len(WORDS)
    assert examples.categories == sorted({*WORDS, "Science/Biology"})
    assert "Science/Biology" not in examples.labels  # an internal node without examples
    assert all("script" not in text and "x = 1" not in text for text in examples.texts)
    assert not any("no category" in text for text in examples.texts)


def test_read_taxonomy_decodes_bad_bytes(taxonomy):
    (taxonomy / "Sports" / "bad.txt").write_bytes(b"caf\xe9 \xff")
    assert "caf\ufffd \ufffd" in read_taxonomy(taxonomy).texts


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda tmp: tmp / "missing", "does not exist"),
        (lambda tmp: (tmp / "file.txt", (tmp / "file.txt").write_text("x"))[0], "not a folder"),
        (lambda tmp: ((tmp / "t" / "A").mkdir(parents=True), tmp / "t")[1], "no example files"),
    ],
)
def test_read_taxonomy_errors(tmp_path, make, problem):
    folder = make(tmp_path)
    with pytest.raises(TopicError, match=problem) as info:
        read_taxonomy(folder)
    assert str(folder) in str(info.value)


# -- classifier ------------------------------------------------------------------------------


def test_fit_returns_self_and_classes(examples):
    model = HierarchicalClassifier(min_df=1)
    assert model.fit(examples.texts, examples.labels) is model
    assert list(model.classes_) == examples.categories


def test_children_sum_to_their_parent(examples):
    model = fitted(examples)
    docs = [document(c, 999 + i) for i, c in enumerate(WORDS)] + ["", "unknown words only"]
    proba = model.predict_proba(docs)
    assert proba.shape == (len(docs), len(model.classes_))
    column = {c: i for i, c in enumerate(model.classes_)}
    own = set(examples.labels)
    for parent in ["", *model.classes_]:
        children = [c for c in model.classes_ if c.rpartition("/")[0] == parent]
        if not children:
            continue
        total = proba[:, [column[c] for c in children]].sum(axis=1)
        mass = np.ones(len(docs)) if not parent else proba[:, column[parent]]
        if parent in own:  # examples at the node: "itself" keeps the rest of its mass
            assert np.all(total <= mass + 1e-9)
        else:
            np.testing.assert_allclose(total, mass, rtol=1e-6)


def test_relevance_of_a_good_leaf(examples):
    model = fitted(examples, good=["Sports/Cycling"])
    cycling, football = model.relevance(
        [document("Sports/Cycling", 1234), document("Sports/Football", 1234)]
    )
    assert cycling > 0.5 > football
    assert cycling > 10 * football


def test_goodness_is_inherited_and_counted_once(examples):
    birds = [document("Science/Biology/Birds", 2000 + i) for i in range(5)]
    sport = [document("Sports/Football", 2000 + i) for i in range(5)]
    science = fitted(examples, good=["Science"])
    both = fitted(examples, good=["Science", "Science/Biology/Birds", "Science/Physics"])
    assert np.all(science.relevance(birds) > 0.5)
    assert np.all(science.relevance(sport) < 0.5)
    assert np.all(science.best_path_good(birds)) and not np.any(science.best_path_good(sport))
    np.testing.assert_allclose(both.relevance(birds + sport), science.relevance(birds + sport))
    assert np.all(both.relevance(birds + sport) <= 1 + 1e-9)


def test_best_category_on_held_out_documents(examples):
    model = fitted(examples, good=["Sports"])
    categories = list(WORDS)
    docs = [document(c, 5000 + i) for i, c in enumerate(categories)]
    relevance, best = model.score_pages(docs)
    assert best == categories  # leaves, and internal nodes "itself" (Sports, Science)
    assert list(model.predict(docs)) == categories
    np.testing.assert_allclose(relevance, model.relevance(docs))


def test_evidence_cap_makes_relevance_independent_of_length(examples):
    mixed = document("Sports/Cycling", 7, length=60) + " " + document("Sports/Football", 7, 40)
    docs = [mixed, " ".join([mixed] * 30)]  # same words, 30 times as long
    capped = fitted(examples, good=["Sports/Football"]).relevance(docs)
    raw = fitted(examples, good=["Sports/Football"], pseudo_length=None).relevance(docs)
    np.testing.assert_allclose(capped[0], capped[1], rtol=1e-4)
    assert capped[1] > 1e-20  # no underflow
    assert raw[1] < 1e-6 * raw[0] or 1 - raw[1] < 1e-6 * (1 - raw[0])  # pushed to 0 or 1


def test_not_fitted_and_clone(examples):
    model = HierarchicalClassifier(good=("Science",), alpha=0.5)
    for method in ("predict_proba", "relevance", "score_pages", "best_path_good", "predict"):
        with pytest.raises(NotFittedError):
            getattr(model, method)(["text"])
    model.fit(examples.texts, examples.labels)
    copy = clone(model)
    assert copy.get_params() == model.get_params()
    assert not hasattr(copy, "classes_")
    copy.set_params(good=["Sports"]).fit(examples.texts, examples.labels)  # refit replaces
    assert list(copy.classes_) == list(model.classes_)


def test_scikit_learns_conventions_without_its_base_class(examples):
    """Models derive from the project's Estimator, which keeps scikit-learn's conventions so
    that its tools take them: parameters (nested too), the repr, tags, clone."""
    from sklearn.pipeline import Pipeline
    from sklearn.utils import get_tags

    from focused.relevance.base import Estimator

    model = HierarchicalClassifier(good=["Sports"], min_df=1)
    assert isinstance(model, Estimator)
    assert repr(model) == "HierarchicalClassifier(good=['Sports'], min_df=1)"
    assert model.get_params(deep=False) == {
        "alpha": 0.01,
        "good": ["Sports"],
        "max_features": None,
        "min_df": 1,
        "nb": "multinomial",
        "pseudo_length": 50.0,
        "stem": True,
    }
    assert model.set_params(alpha=0.5) is model and model.alpha == 0.5
    with pytest.raises(ValueError, match="Invalid parameter 'alpah'"):
        model.set_params(alpah=1)

    class Wrapper(Estimator):
        def __init__(self, model: object = None):
            self.model = model

    wrapper = Wrapper(model)  # an estimator among the parameters: its own, as name__parameter
    assert wrapper.get_params()["model__alpha"] == 0.5
    assert wrapper.set_params(model__alpha=0.25).model is model and model.alpha == 0.25
    assert get_tags(model).estimator_type is None
    piped = Pipeline([("model", model)])
    assert clone(piped).steps[0][1].get_params() == model.get_params()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"good": ["Science/Bird"]}, "'Science/Bird' is not in the taxonomy"),
        ({"nb": "gaussian"}, "nb must be"),
        ({"alpha": 0}, "alpha"),
        ({"pseudo_length": -1}, "pseudo_length"),
    ],
)
def test_fit_validates(examples, params, message):
    with pytest.raises(ValueError, match=message):
        HierarchicalClassifier(**params).fit(examples.texts, examples.labels)


def test_scoring_wants_a_list(examples):
    with pytest.raises(TypeError, match="list of documents"):
        fitted(examples).relevance("one string")


# -- store -----------------------------------------------------------------------------------


def test_load_or_train_caches_and_retrains(taxonomy, tmp_path, caplog):
    models = tmp_path / "models"
    caplog.set_level(logging.INFO, logger="focused.relevance")
    first = load_or_train(taxonomy, ["Sports"], models, min_df=1)
    assert len(caplog.records) == 1 and "trained" in caplog.records[0].getMessage()
    saved = list(models.iterdir())
    assert len(saved) == 1 and saved[0].suffix == ".npz"
    stamp = saved[0].stat().st_mtime_ns

    second = load_or_train(taxonomy, ["Sports"], models, min_df=1)
    assert len(caplog.records) == 1  # loaded, not trained
    assert saved[0].stat().st_mtime_ns == stamp
    np.testing.assert_array_equal(second.classes_, first.classes_)

    example = taxonomy / "Sports" / "0.txt"
    example.write_text(example.read_text() + " more")
    os.utime(example, ns=(stamp + 10**9, stamp + 10**9))
    load_or_train(taxonomy, ["Sports"], models, min_df=1)
    load_or_train(taxonomy, ["Sports"], models, min_df=2)  # other hyper-parameters
    assert len(caplog.records) == 3
    assert len(list(models.iterdir())) == 3
    assert not list(models.glob("*.tmp"))


def test_load_or_train_unknown_good_category(taxonomy, tmp_path):
    with pytest.raises(TopicError, match="good: category 'Sport' is not in the taxonomy"):
        load_or_train(taxonomy, ["Sport"], tmp_path / "models")
