"""ClassifierPipeline: the judge's verdict on every good page, and its main text where asked."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scrapy.utils.asyncio import run_in_thread, sleep

from focused.errors import exit_on_user_error
from focused.links.extract import LINKS_PER_PAUSE
from focused.relevance.content import main_text
from focused.settings.check import choice
from focused.signals import topic_refitted
from focused.topic.judge import Judge
from focused.topic.plan import crawl_plan

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from focused.items import Page, PageLink


class ClassifierPipeline:
    """Judges each good page with the crawl's :class:`~focused.topic.judge.Judge`
    (:meth:`Page.judged`); bad pages pass through. Glossed anchors are counted in
    ``focused/links/glossed``. A page of a hundred thousand links is worked on in slices or in
    a thread, not in one hold of the reactor: only its ``max_links`` best links are judged
    (:meth:`take_links`). It sets ``main_text`` (and ``markdown``) for the pages
    ``main_text_pages`` names: here, because only here is a page's relevance known, and
    extracting every page adds half again to a crawl's CPU. A judge that reads main text
    (FOCUSED_CLASSIFY_TEXT = main) has every page extracted first."""

    def __init__(
        self,
        judge: Judge,
        *,
        main_text_pages: str = "none",
        markdown: bool = False,
        max_links: int = 0,
        stats: StatsCollector | None = None,
    ):
        self.judge = judge
        self.main_text_pages = main_text_pages
        self.markdown = markdown
        self.max_links = max_links
        self.stats = stats

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> ClassifierPipeline:
        s = crawler.settings
        plan = crawl_plan(crawler)
        pipeline = cls(
            Judge.from_plan(plan, s),
            main_text_pages=choice(s, "FOCUSED_MAIN_TEXT"),
            markdown=s.getbool("FOCUSED_FEED_MARKDOWN"),
            max_links=s.getint("FOCUSED_MAX_LINKS_PER_PAGE"),
            stats=crawler.stats,
        )
        if plan.learns:
            crawler.signals.connect(pipeline.judge.refitted, signal=topic_refitted)
        return pipeline

    def _inc(self, name: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(name, count)

    async def process_item(self, page: Page) -> Page:
        if page.bad:
            return page
        await self.take_links(page)
        if self.judge.main_text:
            await self.extract(page)
        page.judged(verdict := self.judge(page))
        if verdict.glossed:
            self._inc("focused/links/glossed", verdict.glossed)
        if page.main_text is None and (
            self.main_text_pages == "all" or self.main_text_pages == "relevant" and page.relevant
        ):
            await self.extract(page)
        return page

    async def extract(self, page: Page) -> None:
        """Set the page's ``main_text`` (and ``markdown``) from its HTML, extracted in a thread:
        trafilatura takes seconds on a page of a hundred thousand links."""
        extracted = await run_in_thread(main_text, page.html, markdown=self.markdown)
        page.main_text = extracted.text
        if self.markdown:
            page.markdown = extracted.markdown
        self._inc("focused/main_text/extracted")
        if not extracted.text:
            self._inc("focused/main_text/empty")

    async def take_links(self, page: Page) -> None:
        """Keep at most ``max_links`` of the page's links (0: all), so that what a page costs
        to judge and queue is bounded: past that many, a URL's links after its first are
        dropped, then the ``max_links`` whose anchor texts score best without glosses
        (:meth:`Judge.anchor_prior`, LINKS_PER_PAUSE at a time) are kept, in page order;
        where anchors are not scored, the first ones. The others are counted in
        ``focused/links/capped``."""
        if not self.max_links or len(page.links) <= self.max_links:
            return
        first: dict[str, PageLink] = {}
        for link in page.links:
            first.setdefault(link.url, link)
        links = list(first.values())
        if len(links) > self.max_links:
            best: range | np.ndarray = range(self.max_links)
            if self.judge.scores_anchors:
                scores = np.empty(len(links))
                for start in range(0, len(links), LINKS_PER_PAUSE):
                    chunk = links[start : start + LINKS_PER_PAUSE]
                    scores[start : start + len(chunk)] = self.judge.anchor_prior(chunk)
                    await sleep(0)
                best = np.sort(np.argsort(-scores, kind="stable")[: self.max_links])
            self._inc("focused/links/capped", len(links) - self.max_links)
            links = [links[i] for i in best]
        page.links = links
