"""The page's main text (focused.relevance.content): on its own, in the classifier and in real
crawls."""

from __future__ import annotations

import asyncio

import pytest
from lxml import html
from scrapy.settings import Settings

from focused.errors import FocusedError
from focused.items import Page
from focused.lab.evaluation.graph import WebGraph
from focused.lab.evaluation.run import main_text_view
from focused.lab.webs.bundle import Bundle
from focused.pipelines.classify import ClassifierPipeline
from focused.relevance.content import MainText, main_text
from focused.relevance.keywords import KeywordModel
from focused.relevance.text import page_text
from focused.settings.check import check_settings, choice
from focused.topic.judge import Judge
from tests import pages

ARTICLE = [
    "The mute swan is a large waterbird of the family Anatidae, native to much of Eurasia.",
    "Swans pair for life; the pair builds a large nest of reeds at the edge of a lake and both"
    " birds guard the cygnets through their first summer.",
    "In winter mute swans gather on open water in flocks that may number several hundred"
    " birds, and they feed on submerged plants they reach with their long necks.",
]
PAGE = f"""<!DOCTYPE html><html><head><title>Mute swan</title></head><body>
<header><a href="/">Birds of Europe</a><nav><ul>
<li><a href="/stocks">Stock markets</a></li><li><a href="/football">Football results</a></li>
<li><a href="/weather">Weather forecast</a></li><li><a href="/shop">Online shop</a></li>
</ul></nav></header>
<div class="wrapper"><div id="content"><h1>Mute swan</h1>
<p>{ARTICLE[0]}</p><h2>Breeding</h2><p>{ARTICLE[1]}</p><ul><li>{ARTICLE[2]}</li></ul></div>
<aside class="sidebar"><h3>Popular articles</h3><ul>
<li><a href="/bonds">Government bonds</a></li><li><a href="/cars">Electric cars</a></li>
</ul></aside></div>
<footer><a href="/privacy">Privacy policy</a> | <a href="/terms">Terms of use</a>
<p>Copyright 2026 Birds of Europe. All rights reserved.</p></footer></body></html>"""
BOILERPLATE = ["Stock markets", "Football", "Online shop", "Government bonds", "Privacy policy"]


def test_main_text_keeps_the_article_and_drops_navigation_and_footer():
    extracted = main_text(PAGE)
    for sentence in ARTICLE:
        assert sentence in extracted.text
    for words in [*BOILERPLATE, "Copyright"]:
        assert words not in extracted.text
    assert extracted.markdown is None
    # The whole page's text, what the classifier reads by default, has all of it.
    assert all(words in page_text(PAGE).text for words in BOILERPLATE)


def test_markdown_comes_from_the_same_extraction():
    extracted = main_text(PAGE.encode(), markdown=True)
    assert extracted.text == main_text(PAGE).text
    assert "## Breeding" in extracted.markdown
    assert f"- {ARTICLE[2]}" in extracted.markdown
    assert "Privacy policy" not in extracted.markdown


def test_a_page_without_text_has_an_empty_main_text():
    assert main_text("<html><body><div></div></body></html>") == MainText("", None)
    assert main_text("", markdown=True) == MainText("", "")


def item(html: str) -> Page:
    text = page_text(html)
    return pages.page(text.text, url="http://birds.test/Mute_swan", title=text.title, html=html)


def classifier(main_text: bool = False, **options) -> ClassifierPipeline:
    model = KeywordModel(keywords=["stock markets", "bonds"], r0=0.5).fit()
    judge = Judge(model, threshold=0.5, link_score="content", main_text=main_text)
    return ClassifierPipeline(judge, **options)


def classified(pipeline: ClassifierPipeline, page: Page) -> Page:
    return asyncio.run(pipeline.process_item(page))


def test_the_classifier_reads_the_main_text_only_when_asked():
    """Navigation about stocks makes the whole page relevant to a stocks topic; its main
    text, about swans, is not."""
    assert classified(classifier(), item(PAGE)).relevant
    scored = classified(classifier(main_text=True), item(PAGE))
    assert not scored.relevant and ARTICLE[0] in scored.main_text


def test_main_text_for_relevant_pages_all_or_none():
    relevant, other = item(PAGE), item(PAGE.replace("Stock markets", "Lakes").replace("bonds", ""))
    pipeline = classifier(main_text_pages="relevant")
    assert ARTICLE[0] in classified(pipeline, relevant).main_text
    assert classified(pipeline, other).main_text is None
    assert classified(classifier(main_text_pages="none"), item(PAGE)).main_text is None
    every = classified(classifier(main_text_pages="all", markdown=True), other)
    assert ARTICLE[0] in every.main_text and "## Breeding" in every.markdown


def test_a_setting_outside_its_choices_is_refused():
    with pytest.raises(FocusedError, match='FOCUSED_MAIN_TEXT: expected one of "relevant"'):
        choice(Settings({"FOCUSED_MAIN_TEXT": "some"}), "FOCUSED_MAIN_TEXT")
    assert choice(Settings({"FOCUSED_CLASSIFY_TEXT": " Main "}), "FOCUSED_CLASSIFY_TEXT") == "main"
    assert choice(Settings(), "FOCUSED_CLASSIFY_TEXT") == "page"  # the default
    with pytest.raises(FocusedError, match="FOCUSED_WARC: expected one of"):
        check_settings(Settings({"FOCUSED_WARC": "some"}))


def paragraphs(bundle: Bundle, url: str) -> list[str]:
    """The text of a synthetic page's paragraphs: its main content, without the title and the
    "See also" list."""
    return [p.text_content() for p in html.fromstring(bundle.page(url).body).iter("p")]


def test_the_feed_carries_the_main_text_of_relevant_pages(crawl, bundle):
    stats = crawl.run(CLOSESPIDER_ITEMCOUNT=60)
    feed = [i for i in crawl.feed() if not i["bad"]]
    relevant = [i for i in feed if i["relevant"]]
    assert relevant and len(relevant) < len(feed)
    for page in relevant:
        assert page["main_text"].split("\n") == paragraphs(bundle, page["url"])
        assert "markdown" not in page
    assert all(i["main_text"] is None for i in feed if not i["relevant"])
    assert stats["focused/main_text/extracted"] == len(relevant)


def test_markdown_and_main_text_of_every_page_when_asked(crawl, bundle):
    crawl.run(CLOSESPIDER_ITEMCOUNT=40, FOCUSED_MAIN_TEXT="all", FOCUSED_FEED_MARKDOWN=True)
    feed = crawl.feed()
    good = [i for i in feed if not i["bad"]]
    assert len(good) >= 30
    for page in good:
        assert page["main_text"].split("\n") == paragraphs(bundle, page["url"])
        assert len(page["markdown"].split("\n\n")) == len(page["main_text"].split("\n"))
    assert all(i["main_text"] is None and i["markdown"] is None for i in feed if i["bad"])


def test_evaluation_examples_are_read_as_main_text_crawls_read_pages(bundle):
    """With FOCUSED_CLASSIFY_TEXT = "main", ``focused evaluate`` writes its examples from this
    view: a page's title and main text, without its "See also" list."""
    graph = WebGraph.from_bundle(bundle)
    view, view_graph = main_text_view(bundle, graph)
    key = next(k for k, page in bundle.pages.items() if b"<h2>See also</h2>" in page.body)
    whole, main = page_text(bundle.pages[key].body), page_text(view.pages[key].body)
    assert main.title == whole.title and "See also" not in main.text
    assert main.text == " ".join(main_text(bundle.pages[key].body.decode()).text.split())
    assert view_graph.texts[key].split() == main.document.split()
    assert view_graph.links == graph.links and "See also" in graph.texts[key]
