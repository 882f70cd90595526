"""LanguagePipeline: each page's language, and a page in a language the topic does not keep is
never relevant.

After the classifier (ITEM_PIPELINES order 120, so a relevant page's main text is extracted):
the language is identified (:mod:`focused.relevance.language`) from the page's main text
where it was extracted, else from its visible text, and set in the item's ``language``
(``und`` for a page of too little text); the feed and the WARC files keep it. A page whose
language the topic file's ``languages`` does not list is *off-language*: its R, the R it had
by the topic as the user gave it and its links' estimates are set to 0, and it is neither
relevant nor on a good path, so Redis's records, ``focused export``, the harvest and the
frontier all see an irrelevant page, and the URLs first found on it wait at the bottom of
the frontier with an irrelevant page's links. An undetermined page is never off-language.

Stats: ``focused/language/<code>`` per identified page, ``focused/language/off_topic`` per
page kept out. Runs only where the crawl plan identifies languages (FOCUSED_LANGUAGE_ID).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured

from focused.errors import exit_on_user_error
from focused.relevance.language import LanguageIdentifier, kept_out
from focused.topic.plan import crawl_plan

if TYPE_CHECKING:
    from collections.abc import Collection

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from focused.items import Page

OFF_TOPIC = "off_topic"  # the stat of pages kept out: focused/language/off_topic


class LanguagePipeline:
    """Sets each good page's ``language``; keeps out those not in ``languages`` (empty: any)."""

    def __init__(
        self,
        identifier: LanguageIdentifier,
        languages: Collection[str],
        stats: StatsCollector | None = None,
    ):
        self.identifier = identifier
        self.languages = frozenset(languages)
        self.stats = stats

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> LanguagePipeline:
        plan = crawl_plan(crawler)
        if not plan.identifies_language:
            raise NotConfigured  # without a message: Scrapy would warn on every crawl
        return cls(LanguageIdentifier(), plan.languages, crawler.stats)

    def process_item(self, page: Page) -> Page:
        if page.bad:
            return page
        code, _ = self.identifier.identify(page.main_text or page.text or "")
        page.language = code
        if self.stats is not None:
            self.stats.inc_value(f"focused/language/{code}")
        if kept_out(code, self.languages):
            page.kept_out()
            if self.stats is not None:
                self.stats.inc_value(f"focused/language/{OFF_TOPIC}")
        return page
