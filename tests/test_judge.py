"""The judge, and the classifier pipeline that applies it, with real (instant) models."""

from __future__ import annotations

import asyncio
from dataclasses import asdict

import numpy as np
import pytest
from scrapy.utils.test import get_crawler

from focused.items import Page
from focused.pipelines.classify import ClassifierPipeline
from focused.relevance.gloss import AnchorGlosser
from focused.relevance.keywords import KeywordModel
from focused.relevance.taxonomy import HierarchicalClassifier
from focused.relevance.vectors import CategoryVectors, WordVectors
from focused.topic.judge import Judge, Verdict, category_names, link_estimate, name_matcher
from tests.pages import page


def judge(**options) -> Judge:
    model = KeywordModel(keywords=["swan"], r0=0.5).fit()
    return Judge(model, **{"threshold": 0.5, "link_score": "anchor", "needs_path": True, **options})


def anchor_r(verdict: Verdict) -> list[float | None]:
    return [link.anchor_relevance for link in verdict.links]


def test_scores_page_and_anchor_texts_in_one_batch():
    verdict = judge()(
        page("a swan", [("http://b.test/", "swan", "swan"), ("http://c.test/", "stocks", "stocks")])
    )
    assert verdict.relevant and verdict.path_good
    assert anchor_r(verdict)[0] > anchor_r(verdict)[1]


@pytest.mark.parametrize("link_score", ["content", "anchor", "both", "context"])
def test_each_link_is_estimated_from_its_parent_and_anchor_by_the_link_score(link_score):
    """The estimate of a link's target: the parent's R (content), the anchor's (anchor,
    context), their mean (both); the parent's where the anchor is not scored."""
    links = [("http://b.test/", "swan", "a swan"), ("http://c.test/", "stocks", "stocks")]
    verdict = judge(link_score=link_score)(page("a swan on a lake", links))
    parent = verdict.relevance
    for link in verdict.links:
        assert link.estimate == link_estimate(link_score, parent, link.anchor_relevance)
    if link_score == "content":
        assert anchor_r(verdict) == [None, None]
        assert [link.estimate for link in verdict.links] == [parent, parent]
    else:
        assert verdict.links[0].estimate > verdict.links[1].estimate
    assert link_estimate("both", 0.6, 0.2) == pytest.approx(0.4)
    assert link_estimate("anchor", 0.6, None) == 0.6


def test_the_link_the_page_was_reached_by_is_estimated_for_the_link_model():
    """The arrival's estimate is made as the estimates of the page's own links are: from the
    parent's R (carried by the lease) and the arrival anchor's R."""
    reached = judge(link_score="both")(page("a swan", anchor="swan lake", parent=0.2))
    assert reached.arrival is not None and reached.arrival > 0
    assert reached.arrival_estimate == pytest.approx((0.2 + reached.arrival) / 2)
    assert judge()(page("a swan")).arrival_estimate is None  # a seed: no parent R


def test_context_scores_are_the_geometric_mean_of_anchor_and_context():
    links = [
        ("http://b.test/", "Odette", "the swan Odette of the ballet"),
        ("http://c.test/", "swan", "a swan"),
        ("http://d.test/", "swan", "stocks and bonds swan"),
    ]
    model = KeywordModel(keywords=["swan"], r0=0.5).fit()
    verdict = judge(link_score="context")(page("a swan", links))
    anchor = model.relevance([anchor for _, anchor, _ in links])
    context = model.relevance([context for *_, context in links])
    assert anchor_r(verdict) == ((anchor * context) ** 0.5).tolist()
    assert anchor_r(verdict)[0] == 0  # a bare name the model does not know
    assert anchor_r(verdict)[1] > 0


def test_the_anchor_a_page_was_reached_by_is_scored_with_it():
    links = [("http://b.test/", "swan", "swan")]
    assert judge()(page("a swan", links, anchor="swan lake")).arrival > 0
    # a page without out-links: its arrival is scored all the same
    assert judge()(page("a swan", anchor="swan lake")).arrival > 0
    assert judge(link_score="content")(page("a swan", links, anchor="swan lake")).arrival is None


def test_only_the_first_max_chars_are_scored():
    text = "lake " * 200 + "swan"
    assert judge()(page(text)).relevance > 0
    assert judge(max_chars=100)(page(text)).relevance == 0


def test_the_pipeline_judges_good_pages_and_passes_bad_ones_through():
    good = asyncio.run(ClassifierPipeline(judge()).process_item(page("a swan")))
    assert good.relevant and good.verdict is not None and good.relevance == good.verdict.relevance
    item = page("a swan")
    item.bad = "http_404"
    assert asyncio.run(ClassifierPipeline(judge()).process_item(item)).relevance is None


def test_the_hub_score_counts_links_to_other_sites_per_word_of_content():
    """Badia et al. 2006's hub score: a page of many links out and few words is a hub; a page
    linking only within its site is none."""
    links = [(f"http://site{i}.test/", "site", "") for i in range(20)]
    hub = judge()(page("links to good sites", links))
    assert hub.hub_score is not None and hub.hub_score >= 1
    inside = [(f"http://a.test/{i}", "page", "") for i in range(20)]
    assert judge()(page("links to good sites", inside)).hub_score is None
    assert judge()(page("word " * 2000, links)).hub_score is None  # under the minimum


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


def pages_sharing_anchors() -> list[Page]:
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
        items.append(page(text, [*nav, *extra, *nav[:1]], url=f"http://a.test/{i}", anchor=anchor))
    return items


@pytest.mark.parametrize("link_score", ["anchor", "context"])
@pytest.mark.parametrize("glossed", [False, True])
def test_kept_anchor_scores_are_those_of_scoring_each_page_afresh(
    birds, glosses_and_vectors, link_score, glossed
):
    options = glosses_and_vectors if glossed else {}
    kept = Judge(birds, threshold=0.5, link_score=link_score, **options)
    fresh = Judge(birds, threshold=0.5, link_score=link_score, **options)
    for item in pages_sharing_anchors():
        fresh.clear_caches()
        expected = asdict(fresh(item))  # a copy: the judge sets the page's links in place
        assert asdict(kept(item)) == expected
    assert set(kept.anchor_scores) == {"Home", "Owls", "swan", "bank loans"}  # once each


def test_past_the_cap_the_best_scored_links_are_kept_and_the_rest_counted():
    """A page of 3,000 links (each URL twice): its URLs collapse to their first link, and of the
    1,500 left the 10 whose anchors name the topic are kept, in page order; 1,490 counted."""
    stats = get_crawler().stats
    capped = ClassifierPipeline(judge(), max_links=10, stats=stats)
    links = [
        (f"http://b.test/{i}", "a swan" if i % 150 == 7 else f"stocks {i}", "") for i in range(1500)
    ]
    item = asyncio.run(capped.process_item(page("a swan", links + links[::-1])))
    assert [link.url for link in item.links] == [f"http://b.test/{i}" for i in range(7, 1500, 150)]
    assert min(anchor_r(item.verdict)) > 0
    assert stats.get_value("focused/links/capped") == 1490
    assert capped.judge.anchor_scores.keys() == {"a swan"}  # the others were not scored in full
    # Up to the cap, a page keeps every link, duplicates too; under the content link score
    # (no anchor scored) the first ones are kept.
    assert len(asyncio.run(capped.process_item(page("a swan", links[:5] * 2))).links) == 10
    content = ClassifierPipeline(judge(link_score="content"), max_links=10)
    first = asyncio.run(content.process_item(page("a", links)))
    assert [(k.url, k.anchor, k.context) for k in first.links] == links[:10]


def test_queued_anchors_are_scored_again_as_a_page_scores_its_links(birds, glosses_and_vectors):
    """A refit scores the frontier's anchors with ``anchor_relevance``: the R a page's links
    get from the judge (model, gloss and word vectors), whatever the judge saw before."""
    options = {"threshold": 0.5, "link_score": "anchor"}
    classifier = Judge(birds, **options, **glosses_and_vectors)
    scorer = Judge(birds, **options, **glosses_and_vectors)
    for item in pages_sharing_anchors():
        scored = classifier(item)
        anchors = [link.anchor for link in item.links]
        assert scorer.anchor_relevance(anchors).tolist() == pytest.approx(anchor_r(scored))


def test_a_page_the_keywords_name_is_relevant():
    """A keywords topic's page whose title is a keyword is relevant, whatever its R."""
    model = KeywordModel(keywords=["medicine", "Tour de France"], r0=0.5).fit()
    scorer = judge(named=model.named)
    item = page("the practice of healing by many means")
    item.title = "Medicine"
    verdict = scorer(item)
    assert verdict.relevant and verdict.relevance == 0.5
    for title in ("Tours de France", "medicine"):
        assert model.named([title])[0]
    assert not model.named(["Medicine Hat"])[0] and not model.named(["History of medicine"])[0]


def test_an_anchor_that_names_a_good_category_is_estimated_at_least_at_the_threshold(birds):
    """Pages of a kind rarely name their kind, so the taxonomy's model scores the anchors
    that do near 0: "Birds of the stock market" names the good category "Birds", "Bird market" does
    not name it more than "birds" alone, every stemmed word of the name counts."""
    links = [
        ("http://b.test/1", "Birds of the stock market", ""),
        ("http://b.test/2", "stocks and bonds", ""),
        ("http://b.test/3", "bird market", ""),
    ]
    plain = Judge(birds, threshold=0.5, link_score="anchor")(page("stocks and bonds", links))
    names = name_matcher(category_names(birds.good))
    named = Judge(birds, threshold=0.5, link_score="anchor", names_topic=names)(
        page("stocks and bonds", links)
    )
    before, after = anchor_r(plain), anchor_r(named)
    assert after[0] == max(before[0], 0.5) and after[1] == before[1]
    assert after[2] == max(before[2], 0.5)  # "bird" is the stem of "Birds"
    assert before[0] < 0.5 and before[2] < 0.5 and after[1] < 0.5


def test_names_of_categories_are_the_last_parts_of_their_paths():
    assert category_names(["Science/Biology/Birds", "student", "Arts/Visual_arts"]) == [
        "Birds",
        "student",
        "Visual arts",
    ]
    assert category_names("Science/Biology/Birds") == ["Birds"]
    names = name_matcher(["Visual arts", "student"])
    assert names is not None
    assert names("Graduate students") and names("the visual arts") and not names("arts")
    assert name_matcher([]) is None and name_matcher(["the"]) is None
