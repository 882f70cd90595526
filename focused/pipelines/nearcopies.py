"""NearCopyPipeline: a page whose main text nearly copies another page's of the crawl."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.asyncio import run_in_thread

from focused.errors import FocusedError, exit_on_user_error
from focused.relevance.content import main_text
from focused.relevance.nearcopies import (
    agreeing_needed,
    band_keys,
    candidate_banding,
    packed,
    signature,
)
from focused.settings.check import choice
from focused.store.crawler import frontier_for
from focused.store.nearcopies import COPY, FULL, NearCopyIndex

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from focused.items import Page

logger = logging.getLogger(__name__)


class NearCopyPipeline:
    """Checks the main text of the pages FOCUSED_NEAR_COPIES names (``relevant`` or ``all``;
    ``none`` turns the pipeline off) against the crawl's near-copies index
    (:mod:`focused.store.nearcopies`, one script call a page), between the classifier, which
    gives a relevant page its main text, and the frontier pipeline.

    A near-copy (estimated Jaccard of two-word shingles at FOCUSED_NEAR_COPY_THRESHOLD or
    above, :mod:`focused.relevance.nearcopies`) gets ``near_duplicate_of``, the URL of the page
    it copies; the frontier pipeline then acknowledges it as a duplicate (reason ``near``,
    :mod:`focused.pipelines.duplicates`): not counted as classified nor relevant. Its links are
    queued all the same (those the page it copies queued are seen already): a page that
    shares most of its text with another may still link elsewhere. Any other page is indexed,
    up to FOCUSED_NEAR_COPY_MAX_PAGES pages (0: no cap); past it pages are still checked, and
    the first one left out is logged. A page without a
    main text yet has it extracted here (in a thread), for the check only. Stats:
    ``focused/nearcopies/checked``, ``.../found``, ``.../short`` (too short to compare),
    ``.../unindexed`` (left out past the cap), ``.../indexed`` (pages in the index, crawl-wide,
    at the last check).
    """

    def __init__(
        self,
        index: NearCopyIndex,
        stats: StatsCollector,
        *,
        pages: str = "relevant",
        threshold: float = 0.8,
        max_pages: int = 0,
    ):
        self.index = index
        self.stats = stats
        self.pages = pages
        self.bands = candidate_banding(threshold)
        self.needed = agreeing_needed(threshold)
        self.max_pages = max_pages
        self.full_logged = False

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> NearCopyPipeline:
        s = crawler.settings
        pages = choice(s, "FOCUSED_NEAR_COPIES")
        if pages == "none":
            raise NotConfigured  # the default: no message, which Scrapy would log as a warning
        return cls(
            NearCopyIndex(frontier_for(crawler).store),
            crawler.stats,
            pages=pages,
            threshold=s.getfloat("FOCUSED_NEAR_COPY_THRESHOLD"),
            max_pages=s.getint("FOCUSED_NEAR_COPY_MAX_PAGES"),
        )

    def checks(self, page: Page) -> bool:
        """Whether a page is checked: a good page, relevant unless every page is checked."""
        if page.bad or page.status is None:
            return False
        return self.pages == "all" or page.relevant

    async def process_item(self, page: Page) -> Page:
        if not self.checks(page):
            return page
        text = page.main_text
        if text is None:
            text = (await run_in_thread(main_text, page.html)).text
        values = signature(text)
        if values is None:
            self.stats.inc_value("focused/nearcopies/short")
            return page
        try:
            checked = self.index.check(
                page.url,
                packed(values),
                band_keys(values, self.bands),
                self.needed,
                self.max_pages,
            )
        except FocusedError as exc:  # Redis given up: unacknowledged, its lease brings it back
            raise DropItem(f"not checked for near-copies: {exc}", log_level="DEBUG") from exc
        self.stats.inc_value("focused/nearcopies/checked")
        self.stats.set_value("focused/nearcopies/indexed", checked.indexed)
        if checked.state == COPY:
            page.near_duplicate_of = checked.copy_of
            self.stats.inc_value("focused/nearcopies/found")
        elif checked.state == FULL:
            self.stats.inc_value("focused/nearcopies/unindexed")
            if not self.full_logged:
                self.full_logged = True
                logger.warning(
                    "The near-copies index holds FOCUSED_NEAR_COPY_MAX_PAGES pages (%(cap)d): "
                    "pages are still checked against it, no more are added",
                    {"cap": self.max_pages},
                )
        return page
