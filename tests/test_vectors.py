"""Word vectors: the lookup, the category model's mechanics on hand-made vectors, the real GloVe
vectors on words no example contains, the vocabulary cache, and the pipeline's mix."""

from __future__ import annotations

import numpy as np
import pytest

from focused.items import PageItem
from focused.pipelines.classify import ClassifierPipeline, log_odds_sum
from focused.relevance.keywords import KeywordModel
from focused.relevance.vectors import MAX_BYTES, CategoryVectors, WordVectors, word_vectors

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
    pipeline = ClassifierPipeline(
        model, threshold=0.5, link_score="anchor", needs_path=False, vectors=vectors
    )
    links = [("http://b.test/", "banana", "banana"), ("http://c.test/", "pharaoh", "pharaoh")]
    item = PageItem(
        url="http://a.test/",
        title="",
        text="an apple",
        links=links,
        bad=None,
        relevance=None,
        relevant=False,
        category=None,
    )
    scores = pipeline.process_item(item)["link_scores"]
    keyword = model.relevance(["banana", "pharaoh"])  # 0 for both: the keyword is "apple"
    expected = log_odds_sum(keyword, vectors.relevance(["banana", "pharaoh"]))
    assert scores == pytest.approx(expected.tolist())
    assert scores[1] < 0.01 < scores[0]  # the keyword model says 0 for both; vectors part them
    assert set(pipeline.vector_relevance) == {"banana", "pharaoh"}  # kept per anchor text
