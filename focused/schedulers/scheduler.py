"""FrontierScheduler: Scrapy's scheduler contract over the shared Redis frontier.

- ``enqueue_request`` pushes new URLs (seeds, requests other components yield) to the
  frontier, where they are deduplicated for the whole crawl; it returns False for a URL seen
  before (``request_dropped`` fires). A retry of a leased URL goes back to the frontier with
  num_tries + 1 (so it waits for its host's delay, and ``retry_times`` follows num_tries); a
  redirect acknowledges the leased URL and pushes its target as a new link with the count of
  redirects followed so far, so a redirect loop ends at the first URL seen before and a chain
  of new URLs at ``REDIRECT_MAX_TIMES`` (Scrapy's RedirectMiddleware reads the count back).
  Requests with ``dont_filter`` that carry no lease go to the local buffer unpersisted.
- ``next_request`` hands out a request from the local buffer, refilled by one lease-pop of up
  to ``FOCUSED_POP_BATCH`` URLs; it returns None at once when no host is ready and asks the
  engine to call again when the next host's delay runs out (it never sleeps). A strategy that
  pops whole batches (best-N-first: its class names the batch size's setting in
  ``batch_setting``, ``FOCUSED_BEST_N``) gets batches of that size instead, and the next one
  only once every URL of the last has been handed out and acknowledged, released or has run
  out of its lease (the frontier object counts the leases this process holds); meanwhile the
  engine is asked to call again every ``BATCH_POLL_S`` seconds, a check without Redis.
- With ``CLOSESPIDER_ITEMCOUNT`` set, ``next_request`` hands out nothing while this process's
  items plus its requests in flight (downloading, or parsed and waiting for their batch's
  acknowledgement, which is when an item counts) reach the limit: a crawl then ends with the
  limit's items, not with the pages fetched meanwhile (about a batch of acknowledgements).
- ``has_pending_requests`` stays True while any URL of the crawl is queued or leased by any
  process (refreshed from Redis at most every ``POLL_S`` seconds).
- ``open`` logs one INFO line when the crawl resumes: pages fetched before, URLs queued or in
  flight.
- ``close`` returns the buffered, unsent leases to the frontier.

Stats: ``scheduler/enqueued/redis``, ``scheduler/dequeued/redis``, ``focused/frontier/pops``,
``focused/frontier/empty_pops``, ``focused/frontier/retries``, ``focused/redirects/queued``,
``focused/redirects/seen``, ``focused/redis/retries``.

``next_request`` and ``has_pending_requests`` are called after every download and on the
engine's heartbeat, so both cost at most one Redis round trip and usually none.
"""

from __future__ import annotations

import json
import logging
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.core.scheduler import BaseScheduler

from focused.errors import (
    FocusedError,
    exit_on_user_error,
)
from focused.items import META
from focused.store.admin import claim_topic, record_claim
from focused.store.crawler import frontier_for
from focused.store.frontier.base import Link
from focused.topic.plan import crawl_plan

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.spiders import Spider
    from scrapy.statscollectors import StatsCollector

    from focused.store.frontier.base import Frontier, Leased

logger = logging.getLogger(__name__)

POLL_S = 0.5
BATCH_POLL_S = 0.1
_applied: weakref.WeakKeyDictionary[Any, list[str]] = weakref.WeakKeyDictionary()


# What an edited topic file may change in the crawl it resumes: a keywords topic's words,
# applied by scoring the queued links again (focused.extensions.topicedits).
APPLIED = {"relevance.keywords", "relevance.description"}


def claim_crawl(
    frontier: Frontier, topic_file: str, decisions: dict[str, Any], resume_anyway: bool
) -> list[str]:
    """Record which topic file a crawl belongs to and what it decides, and refuse to resume
    the crawl from another file, or from the same file deciding otherwise.

    The first process of a crawl records its topic file and ``decisions``
    (:meth:`focused.topic.files.Topic.decisions`) in ``meta``; a later start under the same
    name with a different file would merge two crawls into one frontier, and one whose file
    was edited meanwhile (other keywords, examples, thresholds, strategy) would carry on with
    the frontier, scores and pages of the old topic as if they were the new one's. Both are
    refused with a FocusedError (one line, naming what changed) unless ``resume_anyway``
    (FOCUSED_RESUME_ANYWAY), which records the new file and decisions. Changes that can be
    applied (:data:`APPLIED`, keywords of a keywords topic) are recorded and returned, for the
    queue to be scored again; otherwise [].
    """
    store, crawl = frontier.store, frontier.store.crawl
    decided = json.dumps(decisions, sort_keys=True)
    started, before = claim_topic(store, topic_file, decided)
    if started == topic_file and before == decided:
        return []
    old = json.loads(before)
    changed = sorted(
        name for name in old.keys() | decisions.keys() if old.get(name) != decisions.get(name)
    )
    keywords = old.get("relevance.method") == decisions.get("relevance.method") == "keywords"
    if started == topic_file and keywords and set(changed) <= APPLIED:
        record_claim(store, topic_file, decided)
        return changed
    if resume_anyway:
        record_claim(store, topic_file, decided)
        logger.warning(
            "Resuming crawl %(crawl)s, started from %(started)s, with %(topic)s%(changed)s",
            {
                "crawl": crawl,
                "started": started,
                "topic": topic_file,
                "changed": f" ({', '.join(changed)} changed)" if changed else "",
            },
        )
        return []
    if started != topic_file:
        problem = f"was started from {started}, not {topic_file}"
    else:
        problem = f"was started from {topic_file} with a different {', '.join(changed)}"
    raise FocusedError(
        f"crawl {crawl!r} in this Redis {problem}: `focused reset {crawl}` starts it afresh,"
        " another `name` (or FOCUSED_CRAWL) starts another crawl,"
        " -s FOCUSED_RESUME_ANYWAY=True resumes it with this topic"
    )


def applied_topic_changes(crawler: Crawler) -> list[str]:
    """The topic's edits that this process's start applied to the crawl it resumes
    (:func:`claim_crawl`), for the queue to be scored again with them; [] for none."""
    return _applied.get(crawler, [])


class FrontierScheduler(BaseScheduler):
    """A Scrapy scheduler whose queue is the crawl's Redis frontier (see the module doc)."""

    def __init__(
        self,
        frontier: Frontier,
        *,
        stats: StatsCollector,
        batch: int,
        whole_batches: bool = False,
        wake: Callable[[float], None] | None = None,
        item_limit: int = 0,
        in_flight: Callable[[], int] | None = None,
    ):
        self.frontier = frontier
        self.stats = stats
        self.batch = batch
        self.whole_batches = whole_batches  # pop the next batch once the last is all acked
        self.wake = wake  # make the engine ask again after that many seconds
        self.item_limit = item_limit  # CLOSESPIDER_ITEMCOUNT (0: none)
        self.in_flight = in_flight  # requests handed out that may still yield an item
        self.buffer: deque[Request] = deque()
        self.spider: Spider | None = None
        self._pending = True
        self._checked = 0.0
        self._next_poll = 0.0
        self._changes = -1

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> FrontierScheduler:
        def in_flight() -> int:
            engine = crawler.engine
            slot = engine.scraper.slot
            return len(engine.downloader.active) + (len(slot.active) if slot is not None else 0)

        def wake(delay: float) -> None:
            # The engine polls on a 5 s heartbeat; ask it to poll when a host becomes ready.
            slot = getattr(crawler.engine, "_slot", None)
            if slot is not None:
                slot.nextcall.schedule(delay)

        s = crawler.settings
        frontier = frontier_for(crawler)
        topic = getattr(crawler.spider, "topic", None)
        batch_setting = ""
        if topic is not None:
            _applied[crawler] = claim_crawl(
                frontier,
                str(topic.path.resolve()),
                topic.decisions(),
                s.getbool("FOCUSED_RESUME_ANYWAY"),
            )
            batch_setting = crawl_plan(crawler).batch_setting

        return cls(
            frontier,
            stats=crawler.stats,
            batch=s.getint(batch_setting or "FOCUSED_POP_BATCH"),
            whole_batches=bool(batch_setting),
            wake=wake,
            item_limit=s.getint("CLOSESPIDER_ITEMCOUNT"),
            in_flight=in_flight,
        )

    def open(self, spider: Spider) -> None:
        """Say so when the crawl resumes, before this process adds to its frontier: a crawl
        name that was used before otherwise carries on silently where that run left off."""
        self.spider = spider
        counts = self.frontier.counts()
        fetched, queued = int(counts.get("fetched", 0)), int(counts.get("queued", 0))
        if fetched or queued or counts["in_flight"]:
            logger.info(
                "Resuming crawl %(crawl)s: %(fetched)d fetched before, %(queued)d queued, "
                "%(in_flight)d in flight",
                {
                    "crawl": self.frontier.store.crawl,
                    "fetched": fetched,
                    "queued": queued,
                    "in_flight": counts["in_flight"],
                },
            )

    def close(self, reason: str) -> None:
        leases = [leased.lease for r in self.buffer if (leased := r.meta.get(META)) is not None]
        try:
            back = self.frontier.release(leases)
            self.frontier.settle()
        except FocusedError:
            logger.warning(
                "Could not return %(n)d unsent leased URLs; they come back when their leases "
                "run out",
                {"n": len(leases)},
            )
            return
        if back:
            logger.info("Returned %(n)d unsent leased URLs to the frontier", {"n": back})
        self.buffer.clear()

    def has_pending_requests(self) -> bool:
        if self.buffer:
            return True
        now = time.monotonic()
        if now - self._checked > POLL_S:
            try:
                self._pending = len(self.frontier) > 0
            except FocusedError:  # reported by the frontier, and the crawl is stopping
                self._pending = False
            self._checked = now
        return self._pending

    def enqueue_request(self, request: Request) -> bool:
        try:
            return self._enqueue(request)
        except FocusedError:  # reported by the frontier, and the crawl is stopping
            return False

    def _enqueue(self, request: Request) -> bool:
        leased: Leased | None = request.meta.get(META)
        if leased is None:
            if request.dont_filter:
                self.buffer.append(request)
                return True
            link = Link(request.url, 1.0, request.meta.get("depth", 0))
            if not self.frontier.push_many([link]):
                return False
        elif request.url == leased.url and not self._redirected(request, leased):
            # A retry: back to the frontier one try later, behind the URLs not tried yet, and
            # under the host's politeness like any other fetch.
            self.frontier.release([leased.lease], retry=True)
            self.stats.inc_value("focused/frontier/retries")
        else:
            # A redirect: the target is a new link of the redirecting URL (deduplicated, so a
            # redirect loop ends at the first URL seen before).
            # It carries the redirects followed so far: REDIRECT_MAX_TIMES ends a chain.
            redirects = request.meta.get("redirect_times", 0)
            link = Link(request.url, leased.score, request.meta.get("depth", 0), "", redirects)
            _, new = self.frontier.complete(leased.lease, leased.url, "redirect", links=[link])
            self.stats.inc_value(f"focused/redirects/{'queued' if new else 'seen'}")
            if not new:
                return False
        self.stats.inc_value("scheduler/enqueued/redis")
        return True

    @staticmethod
    def _redirected(request: Request, leased: Leased) -> bool:
        """Whether a request for its leased URL is a redirect to itself, not a retry: Scrapy's
        RedirectMiddleware counted one more redirect than the URL was leased with."""
        return request.meta.get("redirect_times", 0) > leased.redirects

    def next_request(self) -> Request | None:
        if self._limit_in_sight():
            return None  # the engine asks again as each request in flight ends
        # Poll when the wait is over, or at once when this process changed the frontier
        # (acknowledged a URL or pushed links), which may have made a host ready.
        changed = self.frontier.changes != self._changes
        polls = changed or time.monotonic() >= self._next_poll
        if not self.buffer and polls and not self._batch_out():
            self._changes = self.frontier.changes
            try:
                self._refill()
            except FocusedError:  # reported by the frontier, and the crawl is stopping
                return None
        if not self.buffer:
            return None
        self.stats.inc_value("scheduler/dequeued/redis")
        return self.buffer.popleft()

    def _limit_in_sight(self) -> bool:
        """Whether the items so far and the requests in flight, each of which may yield one,
        reach CLOSESPIDER_ITEMCOUNT. Items count only once their acknowledgement batch is
        done, so without this the downloader would fetch on while a batch waits, and the crawl
        would end that many items past its limit."""
        if not self.item_limit or self.in_flight is None:
            return False
        items = self.stats.get_value("item_scraped_count", 0)
        return items + self.in_flight() >= self.item_limit

    def _batch_out(self) -> bool:
        """Whether URLs of the last whole batch are still out; then the engine is asked to call
        again soon, since the download that ends the batch may already have been handed on."""
        if not self.whole_batches or not self.frontier.holding():
            return False
        if self.wake is not None:
            self.wake(BATCH_POLL_S)
        return True

    def _refill(self) -> None:
        pop = self.frontier.pop_ready(self.batch)
        self.stats.inc_value("focused/frontier/pops")
        self._pending = bool(pop.leased) or pop.queued + pop.in_flight > 0
        self._checked = time.monotonic()
        if not pop.leased:
            self.stats.inc_value("focused/frontier/empty_pops")
            delay = min(max(pop.wake_in or POLL_S, 0.01), POLL_S)
            self._next_poll = time.monotonic() + delay
            if self.wake is not None and self._pending:
                self.wake(delay)
            return
        assert self.spider is not None
        for leased in pop.leased:
            self.buffer.append(
                Request(
                    leased.url,
                    callback=self.spider.parse,
                    errback=getattr(self.spider, "errback", None),
                    dont_filter=True,
                    meta={
                        "depth": leased.depth,
                        "retry_times": leased.tries,
                        "redirect_times": leased.redirects,
                        META: leased,
                    },
                )
            )
