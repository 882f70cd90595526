"""The frontier's contract, written as code: what the crawl's components rely on.

:class:`~focused.schedulers.frontier.RedisFrontier` is its one implementation. The scheduler,
the frontier pipeline, the extensions and maintenance mode are written against
:class:`Frontier`, so what they may rely on is stated in one place, and a test holds the
implementation to it (``tests/test_frontier.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from focused.schedulers.frontier import Ack, Acked, Link, Pop
    from focused.store.crawl import CrawlStore

__all__ = ["Frontier"]


class Frontier(Protocol):
    """One crawl's shared, polite, crash-safe priority queue of URLs, as the scheduler, the
    frontier pipeline, the extensions and maintenance mode use it.

    Every crawler process of a crawl has one (``frontier_for``); all of them share its state.

    - ``push_many(links)`` queues the links whose URLs this crawl has not seen before (by
      canonical URL, crawl-wide) and returns how many were new; a URL that is not clean or
      too long is refused, never an error.
    - ``pop_ready(n)`` leases up to ``n`` of the best URLs whose hosts may be hit now: a host
      waits ``host_delay`` seconds between fetches and has at most ``host_concurrency`` URLs
      leased. The :class:`~focused.schedulers.frontier.Pop` also says how many URLs are
      queued and in flight, and in how many seconds a host or a lease deadline is due.
    - Every lease ends once. ``complete_many`` acknowledges a batch of them (an
      :class:`~focused.schedulers.frontier.Ack` each: kind ``page``, ``bad``, ``redirect``,
      ``failed``, ...), checks the pages for duplicates and queues their out-links, in one
      atomic call per shard, returning an :class:`~focused.schedulers.frontier.Acked` each
      (fetch order, 0 for ``failed``; new URLs queued; why it is a duplicate). ``complete``
      is the same for one page without the duplicates check, returning (fetch order, new
      URLs). ``release`` puts leases back
      untouched (a clean shutdown) or, with ``retry``, one try later (failed after the last
      try). A lease that none of them ends returns by itself when it runs out, so a killed
      process loses nothing.
    - ``requeue(urls, score)`` queues known pages again as revisits (maintenance mode).
    - ``holding()`` counts this object's leases not yet ended nor run out (whole batches);
      ``changes`` counts its writes that may have made a host ready (poll again at once).
    - ``counts()`` gives the crawl's counters (queued, seen, fetched, relevant, failed, ...)
      and ``in_flight``; ``len()`` the URLs queued or leased.
    - ``settle()`` finishes this process's share of cross-shard work, at its close.
    - ``store`` is the crawl's :class:`~focused.store.crawl.CrawlStore`, shared by every
      component of the process: a Redis that stays lost is reported once through it, and
      every call above then raises :class:`~focused.errors.FocusedError`.
    - ``owner`` names this process's heartbeat record (``-`` for none), so that its leases
      go back soon after it dies; ``host_delay`` and ``host_concurrency`` are the politeness
      above, recorded in the crawl's ``meta`` for its readers.

    The strategies and the distiller take the concrete ``RedisFrontier``: they read and
    re-order its queues (``raise_to``, ``drop_worst``, ``host_queue``, the crawl graph),
    which the rest of the crawl never does.
    """

    store: CrawlStore
    owner: str
    changes: int
    host_delay: float
    host_concurrency: int

    def push_many(self, links: Iterable[Link]) -> int: ...

    def pop_ready(self, n: int) -> Pop: ...

    def complete(
        self,
        lease: str,
        url: str,
        kind: str,
        relevance: float = 0.0,
        relevant: bool = False,
        links: Sequence[Link] = (),
        category: str = "",
        hub_score: float | None = None,
    ) -> tuple[int, int]: ...

    def complete_many(self, acks: Sequence[Ack]) -> list[Acked]: ...

    def release(self, leases: Iterable[str], *, retry: bool = False) -> int: ...

    def requeue(self, urls: Iterable[str], score: float = 1.0) -> int: ...

    def holding(self) -> int: ...

    def settle(self) -> None: ...

    def counts(self) -> dict[str, float]: ...

    def __len__(self) -> int: ...
