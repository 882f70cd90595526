"""Maintenance: seed 000's maintenance mode, re-visiting known pages for new links.

With ``FOCUSED_REVISIT_SHARE`` above 0, after every ``FOCUSED_REVISIT_EVERY`` fetched pages
(crawl-wide; one process claims each round atomically) about that share of them is spent on
pages already fetched, queued again through the frontier (so politeness and leases hold) at
the top of their hosts' queues, best first by ``FOCUSED_REVISIT_ORDER``:

- ``relevance``: the relevant pages, by R; each is revisited once per cycle (``revisit``
  holds the pages not revisited yet in this cycle, ``revisit:next`` the others; a new cycle
  starts when the first is empty);
- ``hub``: the best hubs of the distiller's last run (its ``hubs`` scores; each run refills
  them).

A revisited page that comes back with the text or ``Last-Modified`` it had is acknowledged as
``unchanged`` and not classified again; one that changed is classified again and its new links
are queued (``pipelines/duplicates.py``). Stats: ``focused/revisit/queued``,
``focused/revisit/unchanged``, ``focused/revisit/changed``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

from focused import keys
from focused.errors import FocusedError, exit_on_user_error
from focused.schedulers.frontier import page_urls
from focused.schedulers.scheduler import frontier_for

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.schedulers.frontier import RedisFrontier

logger = logging.getLogger(__name__)
ORDERS = ("relevance", "hub")
CHECK_S = 1.0

# KEYS: stats, maintain. ARGV: pages per round. Claims a round when that many pages were fetched
# since the last one (of any process): returns 1, else 0.
_CLAIM = """
local fetched = tonumber(redis.call('HGET', KEYS[1], 'fetched') or '0')
local last = tonumber(redis.call('HGET', KEYS[2], 'fetched') or '0')
if fetched - last < tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[2], 'fetched', fetched)
redis.call('HINCRBY', KEYS[2], 'rounds', 1)
return 1
"""

# KEYS: revisit, revisit:next. ARGV: count. Pops the best pages not revisited in this cycle
# (a new cycle when none is left) and keeps them for the next; returns URLs.
_NEXT_RELEVANT = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  if redis.call('EXISTS', KEYS[2]) == 0 then return {} end
  redis.call('RENAME', KEYS[2], KEYS[1])
end
local popped = redis.call('ZPOPMAX', KEYS[1], ARGV[1])
local urls = {}
for i = 1, #popped, 2 do
  redis.call('ZADD', KEYS[2], popped[i + 1], popped[i])
  urls[#urls + 1] = popped[i]
end
return urls
"""


def revisit_round(frontier: RedisFrontier, order: str, count: int) -> int:
    """Queue up to ``count`` known pages again, best first by ``order``; returns how many."""
    prefix, client = frontier.prefix, frontier.client
    if order == "relevance":
        urls = frontier.retrying(
            lambda: client.eval(
                _NEXT_RELEVANT, 2, prefix + keys.REVISIT, prefix + keys.REVISIT + ":next", count
            )
        )
    else:
        popped = frontier.retrying(lambda: client.zpopmax(prefix + keys.HUBS, count))
        orders = [member for member, _ in popped]
        urls = frontier.retrying(lambda: page_urls(client, frontier.crawl, orders))
    return frontier.requeue(urls)


class Maintenance:
    def __init__(self, crawler: Crawler, share: float, order: str, every: int):
        self.crawler = crawler
        self.share = share
        self.order = order
        self.every = every
        self.task: task.LoopingCall | None = None

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> Maintenance:
        s = crawler.settings
        share, order = s.getfloat("FOCUSED_REVISIT_SHARE"), s.get("FOCUSED_REVISIT_ORDER")
        if share <= 0:
            raise NotConfigured
        if not share < 1:
            raise FocusedError(f"FOCUSED_REVISIT_SHARE: expected a share below 1, got {share}")
        if order not in ORDERS:
            raise FocusedError(f"FOCUSED_REVISIT_ORDER: expected one of {ORDERS}, got {order!r}")
        maintenance = cls(crawler, share, order, s.getint("FOCUSED_REVISIT_EVERY"))
        crawler.signals.connect(maintenance.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(maintenance.spider_closed, signal=signals.spider_closed)
        return maintenance

    def spider_opened(self) -> None:
        self.frontier = frontier_for(self.crawler)
        self.claim = self.frontier.client.register_script(_CLAIM)
        self.task = task.LoopingCall(self.check)
        self.task.start(CHECK_S, now=False)

    def spider_closed(self) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()

    def check(self) -> None:
        prefix = self.frontier.prefix
        claim_keys = [prefix + keys.STATS, prefix + keys.MAINTAIN]
        try:
            if not self.frontier.retrying(lambda: self.claim(keys=claim_keys, args=[self.every])):
                return
            queued = revisit_round(
                self.frontier, self.order, max(1, round(self.every * self.share))
            )
        except FocusedError:  # Redis is lost: the frontier reports it and stops the crawl
            return
        self.crawler.stats.inc_value("focused/revisit/queued", queued)
        logger.info(
            "Maintenance: queued %(queued)d known pages again (by %(order)s)",
            {"queued": queued, "order": self.order},
        )
