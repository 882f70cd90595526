"""Heartbeat: each crawler process records itself in Redis, so readers see who is crawling.

Every FOCUSED_HEARTBEAT_S seconds one script call writes the process's ``proc:<id>`` hash
(host, pid, started, state, its pages, items and relevant pages, their rates over the last
RATE_WINDOW_S seconds (start-up, before the first response, left out), its page and item
limits CLOSESPIDER_PAGECOUNT / CLOSESPIDER_ITEMCOUNT) and
its last beat in the crawl's ``procs`` zset (on a cluster, of every shard: each shard's lease
reaper reads its own; readers read shard 0's). Times are Redis's clock, so they
compare across machines. The hash expires three beats after the last one: a process not
heard from in three beats is gone, and the frontier then puts the leases it held back in
their queues without charging a try (``owned:<id>``, :mod:`focused.store.frontier.queue`), so a
restarted or surviving process goes on within seconds. When the spider closes the process
records ``finished`` and the close reason, kept for FINISHED_KEEP_S so that readers show how it
ended; the leases it still holds then go back at the next pop of any process. A process that
could not record its end (Redis lost at its close) leaves a record that says running: the next
process of the crawl on the same machine deletes it at its start if its pid is gone
(:func:`forget_dead_here`), so a resume gets those leases back at once.

The beats come from a thread of their own, so that a process whose reactor is busy (a page that
takes long to read, a slow strategy) still beats and is not taken for dead while it works. The
reactor marks itself alive every beat; a reactor not heard from in HUNG_BEATS beats is hung: the
thread records ``hung`` once and stops beating until it is heard from again. The next pop of any
process then puts the hung process's leases back one try later, since the page it was reading
may be what hangs it, and a URL taken back from hung processes twice fails
(``failed/hung``): a page that hangs every process that reads it is not handed on for ever.

Readers: :func:`focused.monitor.snapshot.crawl_snapshot` (``focused status``, the dashboard, the
exporter).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

from focused.errors import FocusedError
from focused.store.crawler import frontier_for
from focused.store.processes import ProcessRecords

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.store.crawl import CrawlStore
    from focused.store.frontier.base import Frontier

GONE_BEATS = 3  # a running process's record expires this many beats after its last one
FINISHED_KEEP_S = 3600.0  # how long a finished process's record stays
RATE_WINDOW_S = 15.0  # pages/s and items/s are measured over this long: what the crawl does now
RATE_MIN_S = 5.0  # and not before this long after the first one: no time left from a few pages
LIVE_BEAT_S = 1.0  # while items flow, a process also beats as often as this: figures stay live
HUNG_BEATS = 60  # a reactor not heard from in this many beats is hung: its process stops beating


def pid_alive(pid: int) -> bool:
    """Whether a process of this machine has this pid (another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def forget_dead_here(store: CrawlStore, host: str) -> list[str]:
    """Delete the records that say running of the crawl's processes on this machine (``host``)
    whose pid is gone, and return their ids: a process that exited without recording its end
    (Redis lost at its close, exit code 3) holds no leases then, since the next pop puts them
    back (``reap`` in ``frontier.lua``), rather than three beats later. A pid now used by another
    process (this one's included) keeps its record until it expires."""
    records = ProcessRecords(store)
    dead = [
        process.id
        for process in records.heard_of()
        if process.state == "running"
        and process.host == host
        and process.pid
        and not pid_alive(process.pid)
    ]
    records.forget(dead)
    return dead


class Heartbeat:
    """Records this process in the crawl's ``procs`` and ``proc:<id>`` keys (module doc)."""

    def __init__(self, crawler: Crawler, interval: float, page_limit: int, item_limit: int):
        self.crawler = crawler
        self.stats = crawler.stats
        self.interval = interval
        self.page_limit = page_limit
        self.item_limit = item_limit
        self.host = socket.gethostname()
        self.id = f"{'_'.join(self.host.split())}:{os.getpid()}:{secrets.token_hex(2)}"
        # (when, count) of responses and of items, each since its first (start-up left out)
        self.counts: dict[str, deque[tuple[float, int]]] = {"pages": deque(), "items": deque()}
        self.last_beat = float("-inf")  # monotonic
        self.task: task.LoopingCall | None = None  # the reactor's sign of life
        self.reactor_seen = time.monotonic()
        self.stopped = threading.Event()
        self.wake = threading.Event()  # a beat is due before the interval is up
        self.lock = threading.Lock()  # one beat at a time, none after the last

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Heartbeat:
        s = crawler.settings
        interval = s.getfloat("FOCUSED_HEARTBEAT_S")
        if interval <= 0:
            raise NotConfigured
        heartbeat = cls(
            crawler, interval, s.getint("CLOSESPIDER_PAGECOUNT"), s.getint("CLOSESPIDER_ITEMCOUNT")
        )
        crawler.signals.connect(heartbeat.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(heartbeat.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(heartbeat.item_scraped, signal=signals.item_scraped)
        return heartbeat

    def spider_opened(self) -> None:
        self.frontier: Frontier = frontier_for(self.crawler)
        self.records = ProcessRecords(self.frontier.store)
        with contextlib.suppress(FocusedError):  # a lost Redis is reported by the crawl's store
            forget_dead_here(self.frontier.store, self.host)
        self.beat(self.records)
        self.task = task.LoopingCall(self.reactor_alive)
        self.task.start(self.interval, now=True)
        # A daemon: a beat stuck on a dead Redis must not keep the process up.
        threading.Thread(
            target=self.beat_on,
            args=(self.records.for_thread(),),
            name="heartbeat",
            daemon=True,
        ).start()
        # Leases now carry this id: once this record expires (a killed process), a live
        # process of the crawl puts them back at once, without charging a try.
        self.frontier.owner = self.id

    def spider_closed(self, reason: str) -> None:
        if self.task is None:  # never opened
            return
        if self.task.running:
            self.task.stop()
        self.stopped.set()
        self.wake.set()  # the thread ends
        self.beat(self.records, finished=reason)

    def reactor_alive(self) -> None:
        self.reactor_seen = time.monotonic()

    def item_scraped(self) -> None:
        """Wakes the thread for a beat when the last is LIVE_BEAT_S old, so that readers see the
        process's counts next to the crawl's (which move with every acknowledgement), not up to
        a beat behind; the beat itself stays off the reactor's thread."""
        if time.monotonic() - self.last_beat >= LIVE_BEAT_S:
            self.wake.set()

    def beat_on(self, records: ProcessRecords) -> None:
        """The thread's loop: a beat every interval, or sooner when woken, while the reactor is
        alive; once, when it is found hung, a record that says so."""
        hung = False
        while True:
            self.wake.wait(self.interval)
            self.wake.clear()
            if self.stopped.is_set():
                return
            alive = time.monotonic() - self.reactor_seen < HUNG_BEATS * self.interval
            if alive or not hung:
                self.beat(records, hung=not alive)
            hung = not alive

    def beat(
        self, records: ProcessRecords, finished: str | None = None, hung: bool = False
    ) -> None:
        """Record this process now: running, hung, or finished with its close reason."""
        with self.lock:
            if finished is None and self.stopped.is_set():
                return  # the process has recorded its end
            self.record(records, finished, hung)

    def rate(self, name: str, now: float, count: int) -> float:
        """Responses or items a second over the last RATE_WINDOW_S seconds, from the last time
        there were none (start-up is not the crawl's pace); 0 until RATE_MIN_S of them."""
        samples = self.counts[name]
        if not count:
            samples.clear()
        samples.append((now, count))
        while len(samples) > 2 and now - samples[1][0] >= RATE_WINDOW_S:
            samples.popleft()
        then, count_then = samples[0]
        return round((count - count_then) / (now - then), 3) if now - then >= RATE_MIN_S else 0

    def record(self, records: ProcessRecords, finished: str | None, hung: bool = False) -> None:
        pages = self.stats.get_value("response_received_count", 0)
        items = self.stats.get_value("item_scraped_count", 0)
        now = self.last_beat = time.monotonic()
        record = {
            "host": self.host,
            "pid": os.getpid(),
            "state": "finished" if finished is not None else "hung" if hung else "running",
            "reason": finished or "",
            "pages": pages,
            "items": items,
            "relevant": self.stats.get_value("focused/pages/relevant", 0),
            "pages_per_s": self.rate("pages", now, pages),
            "items_per_s": self.rate("items", now, items),
            "page_limit": self.page_limit,
            "item_limit": self.item_limit,
        }
        # A hung process's record stays until its reactor is back or it is killed: its leases
        # go back one try later (``reap`` in ``frontier.lua``).
        running = finished is None and not hung
        keep = GONE_BEATS * self.interval if running else FINISHED_KEEP_S
        # A lost Redis is reported by the crawl's store (the reactor's), which stops the crawl.
        with contextlib.suppress(FocusedError):
            records.beat(self.id, record, keep)
