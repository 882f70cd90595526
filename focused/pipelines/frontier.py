"""FrontierPipeline: acknowledge finished pages in batches and queue their out-links."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import DropItem
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import defer

from focused.errors import FocusedError, exit_on_user_error
from focused.links.urls import BadURL, origin
from focused.pipelines.duplicates import duplicate_fields, mark_duplicate
from focused.store.crawler import frontier_for
from focused.store.frontier.base import Ack, Acked, PartlyAcknowledged
from focused.store.frontier.records import fingerprint
from focused.strategies.policy import LinkPolicy
from focused.strategies.registry import strategy_class
from focused.topic.judge import Verdict, found_share
from focused.topic.plan import crawl_plan

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from scrapy.utils.asyncio import CallLaterResult

    from focused.items import Page
    from focused.store.frontier.base import Frontier
    from focused.strategies.base import Strategy

logger = logging.getLogger(__name__)


class FrontierPipeline:
    """Turns a judged page into frontier writes through the topic's strategy and the crawl's
    link policy (:mod:`focused.strategies.policy`).

    Pages wait in a buffer and are acknowledged together (``FOCUSED_ACK_BATCH`` pages of one
    shard's hosts, or after ``FOCUSED_ACK_WAIT`` seconds, and at close), one frontier round trip
    per batch and shard:
    each page is checked for duplicates (:mod:`focused.pipelines.duplicates`), its lease is
    acknowledged, it gets its fetch order, the crawl's counters move, and the out-links the
    strategy keeps are pushed. An item goes on to the next components (feeds, WARC) once its
    batch is acknowledged, with its fetch order. Stats: ``focused/pages/fetched``,
    ``focused/pages/relevant``, ``focused/pages/failed``, ``focused/links/extracted``,
    ``focused/links/new``, ``focused/ack/batches``.

    No exception leaves a flush, which runs in a timer's callback where one would stop every
    acknowledgement after it for good: a page whose URL the frontier cannot take (a browser
    that ended on ``chrome-error://``) is acknowledged as a bad page under the URL its lease
    was taken for (``focused/ack/bad_url``), and a batch that fails otherwise is logged, counted
    (``focused/ack/errors``) and dropped, its leases bringing its URLs back.
    """

    def __init__(
        self,
        frontier: Frontier,
        strategy: Strategy,
        stats: StatsCollector,
        policy: LinkPolicy | None = None,
        *,
        batch: int = 1,
        wait: float = 0.0,
        duplicates: bool = True,
    ):
        self.frontier = frontier
        self.strategy = strategy
        self.stats = stats
        self.policy = policy or LinkPolicy()
        self.batch = max(1, batch)
        self.wait = wait
        self.duplicates = duplicates  # check pages for duplicates (FOCUSED_SKIP_DUPLICATES)
        # Pages waiting for their acknowledgement, each with what its item waits on and the
        # shard of its host (a batch holds one shard's pages where it can, so that each call on
        # a cluster carries a whole batch).
        self.waiting: list[tuple[Ack, defer.Deferred[Acked], int]] = []
        self._timer: CallLaterResult | None = None

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> FrontierPipeline:
        frontier = frontier_for(crawler)
        s = crawler.settings
        return cls(
            frontier,
            strategy_class(crawl_plan(crawler).strategy).from_crawler(crawler, frontier),
            crawler.stats,
            LinkPolicy.from_crawler(crawler, frontier),
            batch=s.getint("FOCUSED_ACK_BATCH"),
            wait=s.getfloat("FOCUSED_ACK_WAIT"),
            duplicates=s.getbool("FOCUSED_SKIP_DUPLICATES"),
        )

    def close_spider(self) -> None:
        self.flush()
        self.strategy.close()

    def ack_of(self, page: Page) -> Ack:
        """What the frontier is told of a finished page: for a judged one, with the out-links
        its strategy and the link policy keep."""
        leased = page.leased
        if leased is not None and not self._takes(page.url):
            self.stats.inc_value("focused/ack/bad_url")
            logger.warning(
                "Acknowledged %(url)s as a bad page: it ended at %(ended)s, which the "
                "frontier cannot take",
                {"url": leased.url, "ended": page.url[:200]},
            )
            return Ack(leased.lease, leased.url, "bad")
        if page.status is None or page.bad:
            return Ack.of(page)
        verdict = self.policy.admitted(page.verdict or Verdict.unjudged(page.links))
        self.policy.learn(page, verdict)
        strategy = self.strategy
        links = self.policy.apply(strategy.links(page, verdict), verdict, strategy.ceiling)
        checksum, last_modified = duplicate_fields(page) if self.duplicates else ("", "")
        return Ack.of(
            page,
            links,
            checksum=checksum,
            last_modified=last_modified,
            found=found_share(verdict),
        )

    @staticmethod
    def _takes(url: str) -> bool:
        """Whether the frontier can acknowledge a page at ``url`` (it has a clean form)."""
        try:
            fingerprint(url)
        except BadURL:
            return False
        return True

    async def process_item(self, page: Page) -> Page:
        ack = self.ack_of(page)
        self.stats.set_value("focused/links/dropped_by_url", self.policy.dropped)
        self.stats.set_value("focused/links/siblings_raised", self.policy.raised)
        self.stats.inc_value("focused/links/extracted", len(page.links))
        if not ack.lease:  # not from the frontier (a dont_filter request): no lease
            self.stats.inc_value("focused/links/new", self.frontier.push_many(ack.links))
            return page
        acked: defer.Deferred[Acked] = defer.Deferred()
        shard = self.frontier.store.shards.of_host(origin(ack.url))
        self.waiting.append((ack, acked, shard))
        if sum(home == shard for _, _, home in self.waiting) >= self.batch:
            self.flush(shard)
        elif self._timer is None:
            self._timer = call_later(self.wait, self.flush)
        done = await maybe_deferred_to_future(acked)
        page.order = done.order or None
        self.stats.inc_value("focused/links/new", done.new)
        if ack.kind == "page":
            mark_duplicate(page, done.duplicate, self.stats)
        if ack.kind == "failed":
            self.stats.inc_value("focused/pages/failed")
        else:
            self.stats.inc_value("focused/pages/fetched")
            if page.relevant:
                self.stats.inc_value("focused/pages/relevant")
        return page

    def flush(self, shard: int | None = None) -> None:
        """Acknowledge the pages waiting (only those of ``shard``'s hosts, when given), in one
        call per shard; each item then goes on, or is dropped unacknowledged if Redis is gone
        or refuses writes (its lease brings the URL back). On a cluster whose one master
        fails, the pages other masters acknowledged go on (``PartlyAcknowledged``), so that the
        feed has every page acknowledged."""
        waiting = self.waiting
        if shard is not None:
            waiting = [w for w in self.waiting if w[2] == shard]
            self.waiting = [w for w in self.waiting if w[2] != shard]
        else:
            self.waiting = []
        if not self.waiting and self._timer is not None:  # the others wait on for theirs
            self._timer.cancel()
        if not self.waiting:
            self._timer = None
        if not waiting:
            return
        try:
            done = self.frontier.complete_many([ack for ack, _, _ in waiting])
        except FocusedError as exc:
            partly = exc.acked if isinstance(exc, PartlyAcknowledged) else {}
            for i, (_, acked, _) in enumerate(waiting):
                if i in partly:
                    acked.callback(partly[i])
                else:
                    acked.errback(DropItem(f"not acknowledged: {exc}", log_level="DEBUG"))
            return
        except Exception as exc:  # noqa: BLE001  # a bug: must not stop the next batches
            self.stats.inc_value("focused/ack/errors")
            logger.error(
                "Could not acknowledge %(n)d pages (%(error)s: %(message)s); their leases "
                "bring them back",
                {"n": len(waiting), "error": type(exc).__name__, "message": exc},
            )
            for _, acked, _ in waiting:
                acked.errback(DropItem(f"not acknowledged: {exc}", log_level="DEBUG"))
            return
        self.stats.inc_value("focused/ack/batches")
        for (_, acked, _), result in zip(waiting, done, strict=True):
            acked.callback(result)
