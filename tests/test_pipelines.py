"""The classifier pipeline on its own, with a real (instant) keyword model."""

from __future__ import annotations

from focused.items import PageItem
from focused.pipelines.classify import ClassifierPipeline
from focused.relevance.keywords import KeywordModel


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
        model, **{"threshold": 0.5, "score_anchors": True, "needs_path": True, **options}
    )


def test_scores_page_and_anchor_texts_in_one_batch():
    item = pipeline().process_item(
        page("a swan", [("http://b.test/", "swan"), ("http://c.test/", "stocks")])
    )
    assert item["relevant"] and item["path_good"]
    assert item["link_scores"][0] > item["link_scores"][1]


def test_only_the_first_max_chars_are_scored():
    text = "lake " * 200 + "swan"
    assert pipeline().process_item(page(text))["relevance"] > 0
    assert pipeline(max_chars=100).process_item(page(text))["relevance"] == 0


def test_bad_pages_pass_through_unscored():
    item = page("a swan")
    item["bad"] = "http_404"
    assert pipeline().process_item(item)["relevance"] is None
