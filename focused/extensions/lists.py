"""ListWriter: Badia et al. 2006's lists of good hubs and sites (:mod:`focused.distill.lists`),
written when a crawl ends."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured

from focused.distill.job import distill
from focused.distill.lists import lists_folder, lists_path, read_lists, write_lists
from focused.errors import FocusedError
from focused.extensions.diskfaults import disk_fault
from focused.store.crawler import frontier_for

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
TOP_HUBS = 10  # distiller hubs in the lists file


class ListWriter:
    """Writes the crawl's good hubs and sites (:mod:`focused.distill.lists`), and the distiller's
    top 10 hubs (as ``focused hubs`` names them), when the spider closes.

    Every process of a crawl writes the same file from Redis; the last one to close has the
    whole crawl's counts. Logs how many it wrote and where; a file that cannot be written is a
    disk fault (:mod:`focused.extensions.diskfaults`). Lists with nothing in them leave an earlier
    run's
    file as it is (a run after ``focused reset --keep-known`` on an unchanged web lists
    nothing).
    """

    def __init__(self, crawler: Crawler, folder: Path):
        self.crawler = crawler
        self.folder = folder
        self.min_relevant = crawler.settings.getint("FOCUSED_LIST_MIN_RELEVANT")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ListWriter:
        folder = lists_folder(crawler.settings)
        if folder is None:
            raise NotConfigured
        writer = cls(crawler, folder)
        crawler.signals.connect(writer.spider_closed, signal=signals.spider_closed)
        return writer

    def spider_closed(self) -> None:
        frontier = frontier_for(self.crawler)
        try:
            lists = read_lists(frontier.store, self.min_relevant)
            # and the reconnaissance of Chakrabarti et al. 1999: the distiller's top hubs
            if frontier.graph:
                result = distill(frontier, boost=None, top=TOP_HUBS)
                lists["top_hubs"] = [{"url": url, "score": round(h, 6)} for url, h in result.hubs]
        except FocusedError:  # Redis is lost (reported by the frontier): nothing to read
            return
        path = lists_path(self.folder, lists["crawl"])
        if not (lists["hubs"] or lists["sites"] or lists.get("top_hubs")) and path.exists():
            logger.info(
                "Found no good hub or site: kept the lists of an earlier run in %(path)s",
                {"path": path},
            )
            return
        try:
            write_lists(lists, self.folder)
        except OSError as exc:
            disk_fault(self.crawler, "lists file", path, exc)
            return
        logger.info(
            "Wrote %(hubs)d good hubs and %(sites)d good sites to %(path)s",
            {"hubs": len(lists["hubs"]), "sites": len(lists["sites"]), "path": path},
        )
