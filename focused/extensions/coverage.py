"""CoverageMonitor: the estimate of what is left to find, and the stop when the topic is covered.

Every second it reads the crawl-wide count of fetched pages and the last estimate (one pipelined
round trip). Every FOCUSED_COVERAGE_PAGES pages fetched crawl-wide since the last estimate, or
every 2 % of the pages fetched when that is more (so that a long crawl spends a shrinking share
of its Redis time on it), one process (a :class:`~focused.store.periodic.PeriodicJob` under
``coverage:lock``, in a thread) reads the frontier by link score (every host's queued and leased
URLs per score bucket, or a sample of FOCUSED_COVERAGE_HOSTS hosts past that many, and the
scores' calibration) and records an estimate (:mod:`focused.monitor.coverage`) in the crawl's
``coverage`` records, which ``focused status``, the dashboard, the exporter and the harvest
monitor's alarms read. A run that takes d seconds is not followed by another within 10·d
seconds.

With FOCUSED_CLOSE_COVERED = s (0: never), a crawl whose estimate says at least the share s of
the relevant pages in reach are found, on the upper end of its interval of what is left, for
FOCUSED_CLOSE_COVERED_PAGES pages fetched crawl-wide in a row, is covered: every process
closes with the finish reason ``focused_covered`` (the crawl command exits 0).
Stats: ``focused/coverage/left``, ``.../low``, ``.../high``, ``.../found``, ``.../runs``,
``.../failed``.
"""

from __future__ import annotations

import logging
import time
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_from_coro
from twisted.internet import task

from focused.errors import FocusedError
from focused.monitor.coverage import estimate, recent_counts, recent_window
from focused.store.coverage import CoverageStore, coverage_record
from focused.store.crawler import frontier_for
from focused.store.frontier.records import SCORE_BUCKETS, bucket_middles
from focused.store.lock import LEASE_S

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.store.frontier.queue import RedisFrontier
    from focused.store.lock import Lease

logger = logging.getLogger(__name__)
CHECK_S = 1.0
COVERED = "focused_covered"
# A crawl of n pages estimates again after max(FOCUSED_COVERAGE_PAGES, n / SPACING) more.
SPACING = 50
# The estimates read back to find the calibration of recent_window pages ago: a quarter of the
# pages is 13 estimates made every 2 % of them.
RECENT_RECORDS = 20


class CoverageMonitor:
    def __init__(self, crawler: Crawler, pages: int):
        self.crawler = crawler
        self.stats = crawler.stats
        self.pages = pages
        s = crawler.settings
        self.max_hosts = s.getint("FOCUSED_COVERAGE_HOSTS")
        self.close_share = s.getfloat("FOCUSED_CLOSE_COVERED")
        self.close_pages = s.getint("FOCUSED_CLOSE_COVERED_PAGES")
        self.not_before = 0.0
        self.closing = False
        self.task: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CoverageMonitor:
        pages = crawler.settings.getint("FOCUSED_COVERAGE_PAGES")
        if pages <= 0:
            raise NotConfigured
        monitor = cls(crawler, pages)
        crawler.signals.connect(monitor.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(monitor.spider_closed, signal=signals.spider_closed)
        return monitor

    def spider_opened(self) -> None:
        frontier = frontier_for(self.crawler)
        # The thread gets its own frontier object without the crawl's callbacks (they call into
        # the reactor); it reports by raising.
        self.frontier = frontier.for_thread()
        self.records = CoverageStore(frontier.store)
        self.thread_records = CoverageStore(self.frontier.store)
        self.job = self.thread_records.job(
            self.estimate,
            lock_s=LEASE_S,
            done=self.done,
            stats=self.stats,
            failures="focused/coverage/failed",
            log=logger,
        )
        self.task = task.LoopingCall(self.check)
        self.task.start(CHECK_S, now=False)

    def spider_closed(self) -> None:
        """Stop checking, and leave an estimate of the crawl as it ends for its readers."""
        if self.task is not None and self.task.running:
            self.task.stop()
        if not self.job.running:
            with suppress(FocusedError):  # Redis is lost: the crawl reports it
                self.done(self.job.run(self.frontier))

    def check(self) -> None:
        try:
            fetched, _, last = self.records.progress()
        except FocusedError:  # Redis is lost: the crawl reports it and stops
            return
        record = coverage_record(last)
        self.close_if_covered(fetched, record)
        due = fetched - int(record.get("pages", 0)) >= max(self.pages, fetched // SPACING)
        if due and time.monotonic() >= self.not_before:
            self.job.start(self.frontier)

    def estimate(self, frontier: RedisFrontier, *, lease: Lease) -> dict[str, Any]:
        """Estimate what is left now and record it (in the job's thread, under the lock whose
        ``lease`` fences the record)."""
        started = time.perf_counter()
        records = self.thread_records
        fetched, found, fields = records.progress()
        last = coverage_record(fields)
        queued = frontier.queued_by_score(self.max_hosts)
        calibration = frontier.score_calibration()
        window = recent_window(fetched)
        older = [r for r in records.recent(RECENT_RECORDS) if r["pages"] <= fetched - window]
        then = {b: tuple(pair) for b, pair in enumerate(older[-1]["calibration"])} if older else {}
        coverage = estimate(
            recent_counts(calibration, then),
            queued.hosts,
            found,
            middles=bucket_middles(),
            population=queued.population,
        )
        since = None
        if self.close_share and coverage.covered(self.close_share):
            since = last.get("covered_since")
            since = fetched if since is None else since
        record = {
            **coverage.record(),
            "pages": fetched,
            "hosts": queued.population,
            "time": round(time.time(), 3),
            "seconds": round(time.perf_counter() - started, 4),
            "covered_since": since,
            # what it was made of, per score bucket: the hosts read's URLs, and the calibration
            "by_bucket": [sum(host[b] for host in queued.hosts) for b in range(SCORE_BUCKETS)],
            "calibration": [list(calibration.get(b, (0, 0))) for b in range(SCORE_BUCKETS)],
        }
        records.record(record, lease)
        return record

    def done(self, record: dict[str, Any] | None) -> None:
        if record is None:  # another process is estimating
            return
        self.not_before = time.monotonic() + 10 * record["seconds"]
        self.stats.inc_value("focused/coverage/runs")
        for name in ("found", "left", "low", "high"):
            self.stats.set_value(f"focused/coverage/{name}", record[name])
        logger.info(
            "Coverage at %(pages)d pages: %(found)d relevant found, about %(left).0f more "
            "(%(low).0f-%(high).0f) expected among %(queued)d queued URLs",
            record,
        )

    def close_if_covered(self, fetched: int, record: dict[str, Any]) -> None:
        since = record.get("covered_since")
        if self.closing or not self.close_share or since is None:
            return
        if fetched - since >= self.close_pages:
            self.closing = True
            logger.info(
                "The topic looks covered: %(found)d relevant pages found, at most %(high).0f "
                "expected left, for %(pages)d pages; closing",
                {**record, "pages": fetched - since},
            )
            deferred_from_coro(self.crawler.engine.close_spider_async(reason=COVERED))
