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
        model, **{"threshold": 0.5, "link_score": "anchor", "needs_path": True, **options}
    )


def test_scores_page_and_anchor_texts_in_one_batch():
    item = pipeline().process_item(
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
    item = pipeline(link_score="context").process_item(page("a swan", links))
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

    assert pipeline().process_item(reached())["anchor_relevance"] > 0
    leaf = reached()
    leaf["links"] = []  # a page without out-links: its arrival is scored all the same
    assert pipeline().process_item(leaf)["anchor_relevance"] > 0
    assert "anchor_relevance" not in pipeline(link_score="content").process_item(reached())


def test_only_the_first_max_chars_are_scored():
    text = "lake " * 200 + "swan"
    assert pipeline().process_item(page(text))["relevance"] > 0
    assert pipeline(max_chars=100).process_item(page(text))["relevance"] == 0


def test_bad_pages_pass_through_unscored():
    item = page("a swan")
    item["bad"] = "http_404"
    assert pipeline().process_item(item)["relevance"] is None
