"""The classifier pipeline on its own, with a real (instant) keyword model."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from scrapy.utils.test import get_crawler

from focused.items import PageItem
from focused.pipelines.classify import ClassifierPipeline
from focused.relevance.gloss import AnchorGlosser
from focused.relevance.keywords import KeywordModel
from focused.relevance.taxonomy import HierarchicalClassifier
from focused.relevance.vectors import CategoryVectors, WordVectors


def page(text: str, links=()) -> PageItem:
    return PageItem(
        url="http://a.test/p",
        title="",
        text=text,
        links=list(links),
        bad=None,
        relevance=None,
        relevant=False,
        category=None,
    )


def pipeline(**options) -> ClassifierPipeline:
    model = KeywordModel(keywords=["swan"], r0=0.5).fit()
    return ClassifierPipeline(
        model, **{"threshold": 0.5, "link_score": "anchor", "needs_path": True, **options}
    )


def test_scores_page_and_anchor_texts_in_one_batch():
    item = pipeline().classify(
        page("a swan", [("http://b.test/", "swan", "swan"), ("http://c.test/", "stocks", "stocks")])
    )
    assert item["relevant"] and item["path_good"]
    assert item["link_scores"][0] > item["link_scores"][1]


def test_context_scores_are_the_geometric_mean_of_anchor_and_context():
    links = [
        ("http://b.test/", "Odette", "the swan Odette of the ballet"),
        ("http://c.test/", "swan", "a swan"),
        ("http://d.test/", "swan", "stocks and bonds swan"),
    ]
    model = KeywordModel(keywords=["swan"], r0=0.5).fit()
    item = pipeline(link_score="context").classify(page("a swan", links))
    anchor = model.relevance([anchor for _, anchor, _ in links])
    context = model.relevance([context for *_, context in links])
    assert item["link_scores"] == ((anchor * context) ** 0.5).tolist()
    assert item["link_scores"][0] == 0  # a bare name the model does not know
    assert item["link_scores"][1] > 0


def test_the_anchor_a_page_was_reached_by_is_scored_with_it():
    def reached() -> PageItem:
        item = page("a swan", [("http://b.test/", "swan", "swan")])
        item["anchor"] = "swan lake"
        return item

    assert pipeline().classify(reached())["anchor_relevance"] > 0
    leaf = reached()
    leaf["links"] = []  # a page without out-links: its arrival is scored all the same
    assert pipeline().classify(leaf)["anchor_relevance"] > 0
    assert "anchor_relevance" not in pipeline(link_score="content").classify(reached())


def test_only_the_first_max_chars_are_scored():
    text = "lake " * 200 + "swan"
    assert pipeline().classify(page(text))["relevance"] > 0
    assert pipeline(max_chars=100).classify(page(text))["relevance"] == 0


def test_bad_pages_pass_through_unscored():
    item = page("a swan")
    item["bad"] = "http_404"
    assert asyncio.run(pipeline().process_item(item))["relevance"] is None


TEXTS = [
    "swan goose duck feathers wings lake",
    "owl hawk prey feathers wings night",
    "stocks bonds market shares trade",
    "bank loans market interest trade",
]
LABELS = ["Birds/Water", "Birds/Prey", "Money/Markets", "Money/Banks"]


@pytest.fixture(scope="module")
def birds() -> HierarchicalClassifier:
    """A two-branch taxonomy, so pages and anchors get categories and R strictly in (0, 1)."""
    return HierarchicalClassifier(good=["Birds"], min_df=1).fit(TEXTS, LABELS)


@pytest.fixture(scope="module")
def glosses_and_vectors() -> dict:
    """WordNet's glosses and word vectors (birds along one axis, money along the other)."""
    words = ["swan", "goose", "owl", "hawk", "bird", "stocks", "bank", "market", "money"]
    matrix = np.array([[1.0, 0.1 * i] if i < 5 else [0.1 * i, 1.0] for i in range(len(words))])
    vectors = WordVectors.from_words(words, matrix.astype(np.float32))
    return {
        "glosser": AnchorGlosser(),
        "vectors": CategoryVectors(good=["Birds"], vectors=vectors).fit(TEXTS, LABELS),
    }


def pages_sharing_anchors() -> list[PageItem]:
    """Pages whose links repeat the same anchors (navigation), within a page and across them."""
    nav = [("http://a.test/", "Home", "Home"), ("http://a.test/owls", "Owls", "tawny owl prey")]
    items = []
    for i, (text, anchor, extra) in enumerate(
        [
            ("a swan on the lake", "", [("http://b.test/1", "swan", "a swan and a goose")]),
            ("owls and hawks at night", "Owls", [("http://b.test/2", "Home", "market shares")]),
            ("stocks and bonds", "swan", [("http://b.test/3", "bank loans", "bank loans")]),
            ("a goose and a duck", "Home", [("http://b.test/4", "swan", "stocks")]),
        ]
    ):
        item = page(text, [*nav, *extra, *nav[:1]])
        item["url"], item["anchor"] = f"http://a.test/{i}", anchor
        items.append(item)
    return items


@pytest.mark.parametrize("link_score", ["anchor", "context"])
@pytest.mark.parametrize("glossed", [False, True])
def test_kept_anchor_scores_are_those_of_scoring_each_page_afresh(
    birds, glosses_and_vectors, link_score, glossed
):
    options = glosses_and_vectors if glossed else {}
    kept = ClassifierPipeline(
        birds, threshold=0.5, link_score=link_score, needs_path=False, **options
    )
    fresh = ClassifierPipeline(
        birds, threshold=0.5, link_score=link_score, needs_path=False, **options
    )
    fields = ("relevance", "category", "link_scores", "anchor_relevance")
    for item in pages_sharing_anchors():
        fresh.clear_caches()
        expected = fresh.classify(item.copy())
        got = kept.classify(item.copy())
        assert [got.get(f) for f in fields] == [expected.get(f) for f in fields]
    assert set(kept.anchor_scores) == {"Home", "Owls", "swan", "bank loans"}  # once each


def test_past_the_cap_the_best_scored_links_are_kept_and_the_rest_counted():
    """A page of 3,000 links (each URL twice): its URLs collapse to their first link, and of the
    1,500 left the 10 whose anchors name the topic are kept, in page order; 1,490 counted."""
    stats = get_crawler().stats
    capped = pipeline(max_links=10, stats=stats)
    links = [
        (f"http://b.test/{i}", "a swan" if i % 150 == 7 else f"stocks {i}", "") for i in range(1500)
    ]
    item = asyncio.run(capped.process_item(page("a swan", links + links[::-1])))
    assert [url for url, *_ in item["links"]] == [f"http://b.test/{i}" for i in range(7, 1500, 150)]
    assert len(item["link_scores"]) == 10 and min(item["link_scores"]) > 0
    assert stats.get_value("focused/links/capped") == 1490
    assert capped.anchor_scores.keys() == {"a swan"}  # the others were not scored in full
    # Up to the cap, a page keeps every link, duplicates too; under the content link score
    # (no anchor scored) the first ones are kept.
    assert len(asyncio.run(capped.process_item(page("a swan", links[:5] * 2)))["links"]) == 10
    first = asyncio.run(pipeline(max_links=10, link_score="content").process_item(page("a", links)))
    assert first["links"] == links[:10]


def test_queued_anchors_are_scored_again_as_a_page_scores_its_links(birds, glosses_and_vectors):
    """A refit scores the frontier's anchors with ``anchor_relevance``: the R a page's links
    get from ``classify`` (model, gloss and word vectors), whatever the pipeline saw before."""
    options = {"threshold": 0.5, "link_score": "anchor", "needs_path": False}
    classifier = ClassifierPipeline(birds, **options, **glosses_and_vectors)
    scorer = ClassifierPipeline(birds, **options, **glosses_and_vectors)
    for item in pages_sharing_anchors():
        scored = classifier.classify(item.copy())
        anchors = [anchor for _, anchor, _ in item["links"]]
        assert scorer.anchor_relevance(anchors).tolist() == pytest.approx(scored["link_scores"])


def test_a_page_the_keywords_name_is_relevant():
    """A keywords topic's page whose title is a keyword is relevant, whatever its R."""
    model = KeywordModel(keywords=["medicine", "Tour de France"], r0=0.5).fit()
    scorer = pipeline(named=model.named)
    item = page("the practice of healing by many means")
    item["title"] = "Medicine"
    assert scorer.classify(item)["relevant"] and item["relevance"] == 0.5
    for title in ("Tours de France", "medicine"):
        assert model.named([title])[0]
    assert not model.named(["Medicine Hat"])[0] and not model.named(["History of medicine"])[0]
