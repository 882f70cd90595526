"""The frontier's contract, written as code: what the crawl's components rely on.

:class:`~focused.store.frontier.queue.RedisFrontier` is its one implementation. The scheduler,
the frontier pipeline, the extensions and maintenance mode are written against
:class:`Frontier`, so what they may rely on is stated in one place, and a test holds the
implementation to it (``tests/test_frontier.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Protocol

from focused.errors import FocusedError

if TYPE_CHECKING:
    from focused.items import Page
    from focused.store.crawl import CrawlStore


@dataclass(frozen=True, slots=True)
class Budgets:
    """How much of a crawl one host or registered domain may take (module doc, ``defaults``).

    A host is over its budget past ``host_pages`` fetches and ``host_share`` of the crawl's;
    a domain likewise (its hosts together); a host not popped from yet is over once
    ``domain_hosts`` hosts of its domain have been, or ``suffix_hosts`` hosts under its private
    suffix of the Public Suffix List (``netlify.app``: a platform, where every site is a domain
    of its own), or ``farm_hosts`` hosts of its lineage: the hosts first seen on pages that
    spread like a link farm's (each linking to no page of its own host, and to new hosts
    mostly), from one such host on. ``host_queued`` caps a host's queue. 0 (and
    0 with 0 for the pair): none. The defaults are none, as for a frontier built in a test.
    """

    host_pages: int = 0
    host_share: float = 0.0
    domain_pages: int = 0
    domain_share: float = 0.0
    domain_hosts: int = 0
    host_queued: int = 0
    suffix_hosts: int = 0
    farm_hosts: int = 0
    private_suffixes: tuple[str, ...] = ()

    def by_name(self) -> dict[str, float]:
        """The budgets as the scripts read them (``frontier.lua``: ``budgets.host_pages``)."""
        return {
            field.name: getattr(self, field.name)
            for field in fields(self)
            if field.name != "private_suffixes"
        }

    def of_domains(self) -> bool:
        """Whether a budget needs the hosts' registered domains (and private suffixes)."""
        return bool(
            self.domain_pages
            or self.domain_share
            or self.domain_hosts
            or self.suffix_hosts
            or self.farm_hosts
        )


@dataclass(frozen=True, slots=True)
class Link:
    """A URL to schedule: its score (estimated relevance, 0..1), depth and anchor text.

    Its parent is the page whose ``complete`` call pushes it (none for ``push_many``). The
    anchor is stored with the URL only when given (the online link model learns from it), as
    its first ANCHOR_CHARS characters, whitespace collapsed.
    """

    url: str
    score: float
    depth: int = 0
    anchor: str = ""
    redirects: int = 0  # redirects followed to reach this URL (Scrapy's ``redirect_times``)


NEAR_COPY = "near"  # why a near-copy is a duplicate
# Why a page is dead (its ``bad``): a link to nothing, not a page that failed for a while. A
# host's dead fetches are its expected cost in the frontier (FOCUSED_DEAD_HOST_PRIOR).
DEAD = frozenset({"http_404", "http_410", "dns"})


@dataclass(frozen=True, slots=True)
class Ack:
    """A leased URL to acknowledge (:meth:`RedisFrontier.complete_many`): what became of it,
    the page's classification and out-links, and what its duplicates check reads.

    ``checksum`` is the page's text checksum
    (:func:`~focused.relevance.preprocess.text_checksum`), ``""`` for no duplicates check;
    ``last_modified`` its ``Last-Modified`` as unix seconds (``""`` for none). A
    ``near_copy`` (:mod:`focused.pipelines.nearcopies`) is acknowledged as a duplicate, NEAR_COPY,
    its links queued all the same, unless the duplicates check finds it is an exact one.
    ``found`` is what the page counts for among the relevant pages found, from 0 to 1
    (:func:`~focused.topic.judge.found_share`): the estimate of what is left to find sums it.
    """

    lease: str
    url: str
    kind: str
    relevance: float = 0.0
    relevant: bool = False
    links: Sequence[Link] = ()
    category: str = ""
    hub_score: float | None = None
    checksum: str = ""
    last_modified: str = ""
    revisit: bool = False
    near_copy: bool = False
    found: float = 0.0
    dead: bool = False  # a 404, a 410 or a failed lookup (DEAD)

    @classmethod
    def of(
        cls,
        page: Page,
        links: Sequence[Link] = (),
        *,
        checksum: str = "",
        last_modified: str = "",
        found: float = 0.0,
    ) -> Ack:
        """The acknowledgement of a finished page under its lease: ``failed`` when no response
        came, ``bad`` for a page skipped, else its verdict (``page.verdict``, none for a page
        nobody judged), what it counts for among the relevant pages found (``found``) and the
        out-links to queue."""
        lease = page.leased.lease if page.leased is not None else ""
        if page.status is None or page.bad:
            kind = "failed" if page.status is None else "bad"
            return cls(lease, page.url, kind, dead=page.bad in DEAD)
        verdict = page.verdict
        return cls(
            lease,
            page.url,
            "page",
            page.relevance or 0.0,
            page.relevant,
            links,
            page.category or "",
            verdict.hub_score if verdict is not None else None,
            checksum,
            last_modified,
            page.revisit,
            bool(page.near_duplicate_of),  # a duplicate whose links are queued
            found,
        )


@dataclass(frozen=True, slots=True)
class Acked:
    """What one acknowledgement did: the page's fetch order (0 for failed), the new URLs it
    queued, and why it is a duplicate (``known``, ``text``, ``last_modified``, NEAR_COPY,
    ``unchanged`` for a revisit found as it was; ``""`` for none)."""

    order: int
    new: int
    duplicate: str = ""


class PartlyAcknowledged(FocusedError):
    """``complete_many`` failed part-way (Redis lost, or refusing writes): ``acked`` holds what
    it did for the pages already acknowledged (on a cluster, those of the shards called
    before), by their index in the batch; the others are not (their leases bring them back)."""

    def __init__(self, error: FocusedError, acked: dict[int, Acked]):
        super().__init__(str(error))
        self.acked = acked


@dataclass(frozen=True, slots=True)
class Leased:
    """A URL popped from the frontier and leased to this process."""

    url: str
    lease: str  # the lease token, passed back to ``complete`` or ``release``
    depth: int
    parent: int  # fetch order of the page the URL was found on; 0 for seeds and pushes
    parent_url: str
    tries: int
    score: float
    anchor: str = ""  # the anchor text the URL was queued with, if any
    parent_relevance: float | None = None  # R of the parent page, if it was classified
    parent_category: str = ""
    revisit: bool = False  # a known page fetched again (maintenance mode, ``requeue``)
    redirects: int = 0  # redirects followed to reach this URL


@dataclass(frozen=True, slots=True)
class Pop:
    """What one ``pop_ready`` returns: the leased URLs and the frontier's state."""

    leased: list[Leased]
    queued: int
    in_flight: int
    wake_in: float | None  # seconds until a waiting host or a lease deadline; None: nothing


class Frontier(Protocol):
    """One crawl's shared, polite, crash-safe priority queue of URLs, as the scheduler, the
    frontier pipeline, the extensions and maintenance mode use it.

    Every crawler process of a crawl has one (``frontier_for``); all of them share its state.

    - ``push_many(links)`` queues the links whose URLs this crawl has not seen before (by
      canonical URL, crawl-wide) and returns how many were new; a URL that is not clean or
      too long is refused, never an error.
    - ``pop_ready(n)`` leases up to ``n`` of the best URLs whose hosts may be hit now: a host
      waits ``host_delay`` seconds between fetches and has at most ``host_concurrency`` URLs
      leased. The :class:`~focused.store.frontier.base.Pop` also says how many URLs are
      queued and in flight, and in how many seconds a host or a lease deadline is due.
    - Every lease ends once. ``complete_many`` acknowledges a batch of them (an
      :class:`~focused.store.frontier.base.Ack` each: kind ``page``, ``bad``, ``redirect``,
      ``failed``, ...), checks the pages for duplicates and queues their out-links, in one
      atomic call per shard, returning an :class:`~focused.store.frontier.base.Acked` each
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
      component of the process: a Redis that stays lost, or keeps refusing writes, is
      reported once through it, and every call above then raises
      :class:`~focused.errors.FocusedError`.
    - ``owner`` names this process's heartbeat record (``-`` for none), so that its leases
      go back soon after it dies; ``host_delay`` and ``host_concurrency`` are the politeness
      above, recorded in the crawl's ``meta`` for its readers.

    The strategies, the distiller and the coverage monitor take the concrete
    ``RedisFrontier``: they read and re-order its queues (``raise_to``, ``drop_worst``,
    ``host_queue``, ``queued_by_score``, the crawl graph), which the rest of the crawl never
    does.
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
