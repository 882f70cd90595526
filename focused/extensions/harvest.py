"""HarvestMonitor: Chakrabarti et al. 1999, §4's monitoring in Scrapy's stats and log.

- Harvest: the share of classified pages that are relevant, over this process's last 100
  and 1,000 (``focused/harvest/100``, ``focused/harvest/1000``), next to their mean
  relevance R (``focused/relevance/mean_100``, ``..._1000``).
- Alarms (:func:`focused.monitor.snapshot.alarms`): *stagnation* (the harvest collapses under
  hard focus) and *diffusion* (soft focus drifting into less relevant pages), each logged once
  as a warning with its figures and counted as ``focused/alarm/<name>``; when the harvest falls
  because the topic looks covered (the crawl's last estimate of what is left,
  :mod:`focused.extensions.coverage`, expects little of the best queued URLs), the notice
  *covered* instead, and when the frontier runs dry, the notice *exhausted*, each logged once
  as information.
- Every LOGSTATS_INTERVAL seconds one log line gives pages, relevant pages, the harvest
  and the frontier's queue depth.

The windows are this process's pages; ``focused status``, the dashboard and the exporter show
the whole crawl's from Redis. The crawl's focus, relevance threshold and alarm limits are
written to Redis (``meta``), so that those readers judge the crawl as it does.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from functools import cached_property
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

from focused.errors import FocusedError
from focused.monitor.coverage import Coverage
from focused.monitor.snapshot import alarms
from focused.store.admin import record_settings
from focused.store.coverage import CoverageStore
from focused.store.crawler import frontier_for
from focused.topic.plan import crawl_plan

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.items import Page
    from focused.store.frontier.base import Frontier

logger = logging.getLogger(__name__)
WINDOWS = (100, 1000)
COVERAGE_READ_S = 10.0


class HarvestMonitor:
    def __init__(self, crawler: Crawler, interval: float):
        self.crawler = crawler
        self.stats = crawler.stats
        self.settings = crawler.settings
        self.interval = interval
        self.windows: dict[int, deque[tuple[float, int]]] = {w: deque(maxlen=w) for w in WINDOWS}
        self.sums = {w: [0.0, 0] for w in WINDOWS}  # sum of R, relevant pages in the window
        self.pages = 0
        self.raised: set[str] = set()
        self.coverage: Coverage | None = None  # the crawl's last estimate, read when needed
        self.coverage_read = float("-inf")  # when (monotonic)
        self.task: task.LoopingCall | None = None
        s = crawler.settings  # the alarms' limits, checked on every page
        self.limits: dict[str, Any] = {
            "min_pages": s.getint("FOCUSED_ALARM_MIN_PAGES"),
            "diffusion_ratio": s.getfloat("FOCUSED_DIFFUSION_RATIO"),
            "stagnation_harvest": s.getfloat("FOCUSED_STAGNATION_HARVEST"),
        }

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HarvestMonitor:
        interval = crawler.settings.getfloat("LOGSTATS_INTERVAL")
        if not interval:
            raise NotConfigured
        monitor = cls(crawler, interval)
        crawler.signals.connect(monitor.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(monitor.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(monitor.spider_closed, signal=signals.spider_closed)
        return monitor

    @cached_property
    def focus(self) -> str:
        return crawl_plan(self.crawler).strategy

    def harvest(self, window: int) -> float | None:
        """The share of relevant pages among this process's last ``window`` classified pages."""
        last = self.windows[window]
        return self.sums[window][1] / len(last) if last else None

    def item_scraped(self, item: Page) -> None:
        if item.relevance is None:
            return
        page = (item.relevance, int(item.relevant))
        self.pages += 1
        for window, last in self.windows.items():
            sums = self.sums[window]
            if len(last) == window:
                sums[0] -= last[0][0]
                sums[1] -= last[0][1]
            last.append(page)
            sums[0] += page[0]
            sums[1] += page[1]
            self.stats.set_value(f"focused/harvest/{window}", round(sums[1] / len(last), 4))
            self.stats.set_value(f"focused/relevance/mean_{window}", round(sums[0] / len(last), 4))
        self.check(frontier_empty=False)

    def check(self, frontier_empty: bool) -> None:
        """Raise each alarm once: a warning with its figures (information for a notice), and a
        stats counter. The crawl's estimate of what is left tells a covered topic from a
        drifting crawl: it is read from Redis only when the harvest fell, at most every
        COVERAGE_READ_S seconds."""
        figures = (self.focus, self.harvest(100), self.harvest(1000), self.pages, frontier_empty)
        raised = alarms(*figures, **self.limits, coverage=self.coverage)
        fell = any(alarm.name in ("diffusion", "covered") for alarm in raised)
        if fell and time.monotonic() - self.coverage_read >= COVERAGE_READ_S:
            self.coverage_read = time.monotonic()
            try:
                record = CoverageStore(frontier_for(self.crawler).store).latest()
            except FocusedError:  # Redis is lost (reported by the frontier): judged without
                record = {}
            if record:
                self.coverage = Coverage.from_record(record)
                raised = alarms(*figures, **self.limits, coverage=self.coverage)
        for alarm in raised:
            if alarm.name not in self.raised:
                self.raised.add(alarm.name)
                self.stats.inc_value(f"focused/alarm/{alarm.name}")
                logger.log(
                    logging.WARNING if alarm.level == "warning" else logging.INFO,
                    "%(kind)s, %(name)s: %(message)s",
                    {
                        "kind": "Alarm" if alarm.level == "warning" else "Notice",
                        "name": alarm.name,
                        "message": alarm.message,
                    },
                )

    def spider_opened(self) -> None:
        frontier: Frontier = frontier_for(self.crawler)
        plan = crawl_plan(self.crawler)
        topic = plan.topic
        record_settings(
            frontier.store,
            {
                "focus": self.focus,
                "topic": str(topic.path.resolve()),
                "judge_settings": json.dumps(plan.judge_settings(self.crawler.settings)),
                "host_delay": frontier.host_delay,
                "host_concurrency": frontier.host_concurrency,
                "threshold": plan.threshold,
                "alarm_min_pages": self.limits["min_pages"],
                "diffusion_ratio": self.limits["diffusion_ratio"],
                "stagnation_harvest": self.limits["stagnation_harvest"],
            },
        )
        self.task = task.LoopingCall(self.log)
        self.task.start(self.interval, now=False)

    def spider_closed(self) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()
        self.log()

    def log(self) -> None:
        try:
            counts = frontier_for(self.crawler).counts()
        except FocusedError:  # Redis is lost (reported by the frontier): no frontier figures
            counts = {"queued": -1, "in_flight": -1}
        self.check(frontier_empty=counts.get("queued", 0) == 0 and counts["in_flight"] == 0)
        logger.info(
            "Harvest: %(fetched)d pages, %(relevant)d relevant, harvest %(h100)s (last 100) "
            "%(h1000)s (last 1000); frontier %(queued)d queued, %(flight)d in flight",
            {
                "fetched": self.stats.get_value("focused/pages/fetched", 0),
                "relevant": self.stats.get_value("focused/pages/relevant", 0),
                "h100": self.stats.get_value("focused/harvest/100", "-"),
                "h1000": self.stats.get_value("focused/harvest/1000", "-"),
                "queued": counts.get("queued", 0),
                "flight": counts["in_flight"],
            },
        )
