"""The Redis frontier: a shared, polite, crash-safe priority queue of URLs.

The frontier knows nothing about topics. It takes URLs with a score in [0, 1] and hands back
the best URL whose host may be hit now. Every operation is one Lua script call (its source in
``focused/store/lua/``, :mod:`focused.store.scripts`), so it is atomic across any number of
crawler processes and costs one round trip.

Order (seed 000 §3): lexicographic on (num_tries ascending, score descending, URLs already
crawled from the same host ascending, a hash of the URL). The four parts are packed into one
integer that is exact in a double (3 + 16 + 12 + 20 bits), lower first:

    packed = tries·2^48 + round((1 - score)·65535)·2^32 + min(crawled(host), 4095)·2^20 + hash

Each host has its own sorted set of queued URLs scored without the host part; the ``ready``
set holds the hosts that may be hit now, scored by their best URL plus their host part. A pop
takes the best ready host's best URL, so it is the best URL overall among hosts that are
ready, and it never waits while any host is ready.

Politeness: a host waits ``host_delay`` seconds (in ``wait``) after each pop and after each
acknowledgement, so the delay separates fetches however long they take, and it never has more
than ``host_concurrency`` URLs leased. Time is Redis's own clock, so it holds across machines.
``back_off`` holds a host longer for every process (a server's Retry-After). A host is its
clean origin (:mod:`focused.links.urls`): every spelling of one server is one host.

URLs: only clean URLs (:func:`focused.links.urls.clean_url`, at most ``max_url_length`` long) are
queued; others are refused (``on_rejected``). No field of a stored record can then hold a
space, and a record that does not parse anyway is dropped and counted (``corrupt``), never
an error in a script.

Leases: a popped URL moves to ``leases`` with a deadline. ``complete_many`` acknowledges a
batch of them (checking the pages for duplicates and pushing their out-links in the same
call); ``release`` puts it back untouched (clean shutdown). A lease that runs out returns the
URL to its host queue with num_tries + 1; after ``max_tries`` tries it is counted as failed.
A crawler killed at any point loses nothing.
A lease names its process when the process has a heartbeat (``owner``): once that process's
heartbeat record has expired, the next pop by any process puts its leases back untouched
(``lease_reclaimed``), so a killed process holds no host for the lease time and charges no try
for fetches that never finished.

Epoch: a crawl process's frontier (``epoch``) sets a token in each shard at its start where
there is none (``epoch``) and names it in every call; a call that finds it gone or another
changes nothing and fails (:class:`~focused.errors.CrawlVanished`): the crawl's state vanished
(a Redis restarted empty, FLUSHALL, a failover to an empty replica, ``focused reset``), and the
process stops rather than crawl an empty frontier under fetch numbers already used.

Dedup: a URL enters the frontier once per crawl. Its fingerprint is 64 bits of BLAKE2b over
w3lib's canonical form (the canonicalisation Scrapy's fingerprinter uses for GET requests),
stored as an integer member of one of ``seen_buckets`` sets, which Redis keeps as compact
intsets (8 bytes a URL while a bucket holds at most 512).

Crawl graph (for the distiller, seed 000 §3.2): ``complete`` of a classified page also stores
the page's links to other servers, compactly: its own fingerprint (8 bytes), then per link the
target host's 32-bit hash and the target's fingerprint (12 bytes), big-endian, in
``graph:<order // 512>``. Links within a server carry no vote and are not stored.

Budgets (:class:`Budgets`, FOCUSED_HOST_MAX_PAGES and the others): a pop that meets a host
over a budget puts it in ``held`` instead of leasing from it; held hosts are served, best
first, only when no host that is not held is ready or waiting out its delay, so a one-site
crawl is never slowed and a link farm or a trap never crowds out the rest. The pop decides,
one read of the host's hash and one of its domain's per host popped: the budgets are checked
where a URL would be leased, whoever queued it (the distiller re-boosting held hosts puts them
back in ``ready``, and the next pop holds them again). A host's registered domain
(:mod:`focused.links.domains`) is worked out here, once per host per call, and stored in its hash at
its first push; Lua never parses a host name. On a cluster a domain's counts are per shard (a
script reaches one shard): each shard counts the fetches and hosts of the domain's hosts it
holds, and applies the host-count budget split evenly between the shards, since hosts are
spread by hash. The hosts under one private suffix of the Public Suffix List (``netlify.app``,
``github.io``: platforms where anyone makes a site, each a registered domain of its own) have a
host-count budget of their own (``suffix_hosts``), counted likewise. A push also drops a
host's worst queued URLs past ``host_queued`` for good (``dropped/host_queue``): one page of
100,000 links to its own host queues 10,000 by default.

Buffer cap (seed 003's MAX_BUFFER, best-N-first): ``drop_worst`` drops the worst queued URLs
beyond a maximum for good; they stay in the seen set, so they never come back. Worst is the
host queues' own order (num_tries, then score, then hash), without the host part: the URLs
that would pop last, retried ones first.

Cost: ``push_many``, ``pop_ready``, ``complete_many``, ``release`` and ``raise_to`` are one
round trip each on one server (one per shard they touch on a cluster); a crawl makes a pop
per batch of leases and an acknowledgement per batch of finished pages. ``__len__`` reads one
hash field and one set size. ``drop_worst`` is one round trip whose work grows with the URLs queued.
"""

from __future__ import annotations

import copy
import json
import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from focused.errors import FocusedError
from focused.links.domains import RegisteredDomains
from focused.links.urls import BadURL, clean_url
from focused.links.urls import origin as url_origin
from focused.store import keys
from focused.store.crawl import CrawlStore
from focused.store.frontier.base import (
    Ack,
    Acked,
    Budgets,
    Leased,
    Link,
    PartlyAcknowledged,
    Pop,
)
from focused.store.frontier.records import (
    ANCHOR_CHARS,
    EDGE_RECORD,
    HASH_MASK,
    MAX_TRIES_PACKABLE,
    PACKING,
    PAGE_RECORD,
    clean_fingerprint,
    fingerprint,
    pack,
    split_member,
    split_url,
    unpack_score,
    url_record,
)
from focused.store.shards import add_up, host_hash

if TYPE_CHECKING:
    import redis

REDELIVER_S = 30.0  # how often a pop on a cluster looks for outbox entries of gone processes
SHARD_REST_S = 0.5  # longest a pop leaves alone a shard that had too few hosts ready


def _after_prefix(prefix: str, scan: Callable[[], Iterable[str]]) -> list[str]:
    """What follows ``prefix`` in each key a SCAN finds."""
    return [key[len(prefix) :] for key in scan()]


@dataclass(frozen=True, slots=True)
class _Resting:
    """A shard that had fewer hosts ready than a pop asked for: until when the pop leaves it
    alone (unless ``changes`` moves), and its counts then."""

    until: float
    changes: int
    queued: int
    in_flight: int


def _check(ack: Ack) -> tuple[str, str, str, str]:
    """What a page's duplicates check reads (``duplicate_check.lua``), as strings."""
    return ack.checksum, str(fingerprint(ack.url)), ack.last_modified, "1" if ack.revisit else ""


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _parented(away: dict[int, list[tuple[int, str]]], orders: list[int]) -> dict[int, list[str]]:
    """A batch's links for other shards (shard -> (page in the batch, packed links)) as the
    push script's (parent fetch order, packed links) pairs; the links of a page whose order
    is 0 (a duplicate, a failed fetch, a lease that did not parse) are not queued."""
    return {
        shard: [x for n, lines in pages if orders[n] for x in (str(orders[n]), lines)]
        for shard, pages in away.items()
    }


class RedisFrontier:
    """The frontier of one crawl in Redis (see the module docstring for order and layout): the
    :class:`~focused.store.frontier.base.Frontier` the crawl's components are written against.

    A crawler has one (:func:`focused.store.crawler.frontier_for`), over the crawler's
    :class:`~focused.store.crawl.CrawlStore` (``store``), whose retries and lost-connection
    report its calls go through; commands, tests and benchmarks make one with
    :meth:`for_crawl`.
    """

    def __init__(
        self,
        store: CrawlStore,
        *,
        host_delay: float = 1.0,
        host_concurrency: int = 1,
        lease_s: float = 300.0,
        max_tries: int = 3,
        seen_buckets: int = 4096,
        graph: bool = True,
        revisits: bool = False,
        max_url_length: int = 2083,
        seen_cache: int = 262_144,
        budgets: Budgets | None = None,
        on_rejected: Callable[[BadURL], None] | None = None,
        epoch: bool = False,
    ):
        if not 1 <= max_tries <= MAX_TRIES_PACKABLE:
            raise ValueError(f"max_tries must be 1..{MAX_TRIES_PACKABLE}, got {max_tries}")
        if host_concurrency < 1:
            raise ValueError(f"host_concurrency must be >= 1, got {host_concurrency}")
        # The crawl's Redis, shared with every component of this process (``store_for``).
        self.store = store
        # The crawl's epoch on each shard, named by every call (a crawl process's, ``epoch``:
        # its calls fail once the crawl's state has vanished), else "-" (no check).
        self.epochs = self._join() if epoch else ["-"] * len(self.store.shards)
        self.host_delay = host_delay
        self.host_concurrency = host_concurrency
        self.lease_s = lease_s
        self.max_tries = max_tries
        self.seen_buckets = seen_buckets
        self.graph = graph  # store each classified page's cross-server links (the crawl graph)
        self.revisits = revisits  # keep relevant pages in ``revisit`` (maintenance mode)
        self.max_url_length = max_url_length  # longer URLs are not queued (0: no limit)
        self.on_rejected = on_rejected  # called with each URL refused (``BadURL``)
        self.budgets = budgets = budgets or Budgets()
        self._limits = budgets.limits()
        # Registered domains of the links' hosts, sent with them when a budget needs them.
        self._domains = (
            RegisteredDomains(budgets.private_suffixes) if budgets.of_domains() else None
        )
        # Fingerprints this process's calls have put in the seen set (emptied when it holds more
        # than ``seen_cache``): a link to one of them is not sent again, Redis has it seen.
        self.seen_cache = seen_cache
        self.known: set[int] = set()
        # This process's id in the crawl's heartbeat records (``proc:<id>``), "-" for none: with
        # one, its leases go back untouched soon after its record expires (a killed process).
        self.owner = "-"
        self.changes = 0  # writes by this object that may have made a host ready
        # Leases this object popped and has not acknowledged or released -> the local time
        # they run out (the scheduler of a best-N-first crawl waits for a whole batch).
        self.held: dict[str, float] = {}
        self._first_shard = 0  # the shard the next pop draws from first
        # Outbox entries (fetch orders) this process has delivered, by shard: deleted with its
        # next call there (``complete``) or at its close (``settle``).
        self._delivered: dict[int, list[str]] = {}
        self._redeliver_at = 0.0  # when the pop next looks for outbox entries of gone processes
        self._resting: dict[int, _Resting] = {}  # shards the pop leaves alone for now

        def script(name: str) -> Any:
            return self.store.script(name, **PACKING)

        self._push = script("push")
        self._pop = script("pop")
        self._complete = script("complete")
        self._release = script("release")
        self._raise = script("raise")
        self._requeue = script("requeue")
        self._drop_worst = script("drop_worst")
        self._back_off = script("back_off")
        self._duplicates = self.store.script("duplicates")

    @classmethod
    def for_crawl(
        cls,
        client: redis.Redis,
        crawl: str,
        *,
        retries: int = 8,
        on_retry: Callable[[int, Exception], None] | None = None,
        on_lost: Callable[[FocusedError], None] | None = None,
        **options: Any,
    ) -> RedisFrontier:
        """The frontier of crawl ``crawl`` in the Redis of ``client``, with a store of its own
        (:class:`CrawlStore`, its retries and report of a lost connection): for commands,
        tests and benchmarks, which have no crawler to share a store with."""
        store = CrawlStore(
            client, crawl, retries=retries, create=True, on_retry=on_retry, on_lost=on_lost
        )
        return cls(store, **options)

    def _join(self) -> list[str]:
        """The crawl's epoch on each shard (``keys.EPOCH``), set now where there is none (the
        crawl's first process, or the first after its state vanished)."""
        store, token = self.store, secrets.token_hex(8)
        epochs: list[str] = []
        for shard in range(len(store.shards)):
            key = store.key(keys.EPOCH, shard=shard)
            store.retrying(partial(store.client.set, key, token, nx=True))
            epochs.append(cast(str, store.retrying(partial(store.client.get, key))))  # set above
        return epochs

    def for_thread(self) -> RedisFrontier:
        """A copy for a worker thread (the distiller's, a genetic generation's): it shares this
        object's state but reports a lost connection by raising only
        (:meth:`CrawlStore.for_thread`)."""
        worker = copy.copy(self)
        worker.store = self.store.for_thread()
        return worker

    def _call(self, script: Any, args: list[Any], shard: int = 0) -> Any:
        """Run one of the scripts on one shard (its keys' prefix in KEYS routes it there)."""
        if script is not self._pop and script is not self._drop_worst:
            self.changes += 1
        fixed = [
            f"{shard} {len(self.store.shards)} {self.epochs[shard]} {self._limits}",
            self.host_concurrency,
            self.host_delay,
        ]
        prefix = [self.store.shards.prefixes[shard]]
        return self.store.retrying(lambda: script(keys=prefix, args=[*fixed, *args]))

    def _pack_links(
        self, links: Iterable[Link], edges: bytearray | None = None, page_origin: str = ""
    ) -> tuple[dict[int, str], list[int]]:
        """The links packed one a line (origin, packed score, seen bucket, seen member, depth,
        then the path without its leading ``/`` and a TAB and the anchor, if any), by the shard
        of the link's host, and the fingerprints of the links in them.

        One string a page rather than six arguments a link: the script splits it with one
        pattern, which costs Redis less than taking each field as an argument
        (``benchmarks/frontier.py``). Only clean URLs (:func:`focused.links.urls.clean_url`, at most
        ``max_url_length`` long) are queued; the others go to ``on_rejected``. Links this
        process has stored before (``known``) are left out. With ``edges``, the links to
        servers other than ``page_origin`` are appended to it as crawl-graph records (every
        one of them). When a budget needs them, the hosts' registered domains follow the links
        after an empty line, one ``origin domain`` a line, or ``origin domain suffix`` for a
        host under a private suffix of the Public Suffix List.
        """
        by_shard: dict[int, list[str]] = {}
        hosts: dict[int, set[str]] = {}
        domains = self._domains
        sent: list[int] = []
        for link in links:
            try:
                url = clean_url(link.url, self.max_url_length)
            except BadURL as exc:
                if self.on_rejected is not None:
                    self.on_rejected(exc)
                continue
            fp = clean_fingerprint(url)
            link_origin = url_origin(url)
            if edges is not None and link_origin != page_origin:
                edges += EDGE_RECORD.pack(host_hash(link_origin), fp)
            if fp in self.known:
                continue
            sent.append(fp)
            rest = url[len(link_origin) + 1 :]  # its path after the "/" every clean URL has
            if link.anchor:
                rest += "\t" + " ".join(link.anchor.split())[:ANCHOR_CHARS]
            depth = f"{link.depth}+{link.redirects}" if link.redirects else link.depth
            # The seen set: a bucket, and a member that fits a signed 64-bit integer.
            bucket, member = fp % self.seen_buckets, (fp >> 1) // self.seen_buckets
            shard = self.store.shards.of_host(link_origin)
            by_shard.setdefault(shard, []).append(
                f"{link_origin} {pack(link.score, 0, fp)} {bucket} {member} {depth} {rest}"
            )
            if domains is not None:
                hosts.setdefault(shard, set()).add(link_origin)
        if domains is not None:
            for shard, origins in hosts.items():
                by_shard[shard] += [
                    "",
                    *(
                        f"{o} {domains(o)} {domains.platform(o) or ''}".rstrip()
                        for o in sorted(origins)
                    ),
                ]
        return {shard: "\n".join(lines) for shard, lines in by_shard.items()}, sent

    def _remember(self, fingerprints: list[int]) -> None:
        """Add the fingerprints of a call that stored its links to ``known``."""
        self.known.update(fingerprints)
        if len(self.known) > self.seen_cache:
            self.known.clear()

    def _push_shards(self, by_shard: dict[int, list[Any]]) -> int:
        """Push (parent, packed links) pairs to their shards, one call a shard; returns how
        many URLs were new."""
        return sum(int(self._call(self._push, pairs, j)) for j, pairs in by_shard.items() if pairs)

    def push_many(self, links: Iterable[Link]) -> int:
        """Queue the URLs not seen before in this crawl; returns how many were new."""
        packed, sent = self._pack_links(links)
        if not packed:
            return 0
        new = self._push_shards({shard: [0, lines] for shard, lines in packed.items()})
        self._remember(sent)
        return new

    def pop_ready(self, n: int) -> Pop:
        """Lease up to ``n`` of the best URLs whose hosts may be hit now.

        On several shards the pop draws from one shard after another, starting from the next
        one each call, until it has ``n``: every shard gets its turn first. The order within a
        shard is the frontier's; across shards it is fair, not global. A shard that had fewer
        ready than asked is left alone until its next host is due (at most ``SHARD_REST_S``)
        unless this object has written since: a polite crawl's pops then cost one call, not
        one per shard. Queued and in-flight counts are those of the shards it drew from
        (all of them when it leases fewer than n), the last ones read for a shard left alone.
        """
        shards = len(self.store.shards)
        now = time.monotonic()
        if shards > 1 and now >= self._redeliver_at:
            self.redeliver()
        popped: list[tuple[int, str, str]] = []  # (shard, lease, parent's url: record)
        queued = in_flight = 0
        wakes: list[float] = []
        for step in range(shards):
            shard = (self._first_shard + step) % shards
            rest = self._resting.get(shard)
            if rest is not None and rest.until > now and rest.changes == self.changes:
                queued, in_flight = queued + rest.queued, in_flight + rest.in_flight
                wakes.append(rest.until - now)
                continue
            asked = n - len(popped)
            args = [asked, self.lease_s, self.max_tries, self.owner]
            out = self._call(self._pop, args, shard)
            queued, in_flight = queued + int(out[0]), in_flight + int(out[1])
            if out[2]:
                wakes.append(float(out[2]))
            got = [(shard, out[i], out[i + 1]) for i in range(3, len(out), 2)]
            popped += got
            if shards > 1 and len(got) < asked:
                wake = min(float(out[2]) if out[2] else SHARD_REST_S, SHARD_REST_S)
                self._resting[shard] = _Resting(
                    now + max(wake, 0.0), self.changes, int(out[0]), int(out[1])
                )
            else:
                self._resting.pop(shard, None)
            if len(popped) >= n:
                break
        self._first_shard = (self._first_shard + 1) % shards
        deadline = time.monotonic() + self.lease_s
        leased = []
        for lease, record in self._parent_records(popped):
            self.held[lease] = deadline
            origin, packed, _, member = lease.split(" ", 3)
            depth, parent, tail, anchor = split_member(member)
            revisit = depth.startswith("r")
            depth, _, redirects = depth.removeprefix("r").partition("+")
            parent_url, parent_relevance, parent_category = url_record(record)
            tries, score = unpack_score(int(packed))
            leased.append(
                Leased(
                    origin + tail,
                    lease,
                    int(depth),
                    int(parent),
                    parent_url,
                    tries,
                    score,
                    anchor,
                    parent_relevance,
                    parent_category,
                    revisit,
                    int(redirects or 0),
                )
            )
        return Pop(leased, queued, in_flight, min(wakes) if wakes else None)

    def _parent_records(self, popped: list[tuple[int, str, str]]) -> list[tuple[str, str]]:
        """(lease, parent's ``url:`` record) of popped URLs: a pop script reads the records of
        its own shard's pages; those of parents on other shards are read here, in one
        pipelined round trip."""
        other = [
            (i, parent)
            for i, (shard, lease, _) in enumerate(popped)
            if (parent := int(split_member(lease.split(" ", 3)[3])[1]))
            and self.store.shards.of_order(parent) != shard
        ]
        records = [record for _, _, record in popped]
        if other:

            def read() -> list[Any]:  # a new pipeline per try: a failed execute empties it
                pipe = self.store.client.pipeline(transaction=False)
                for _, parent in other:
                    pipe.hget(self.store.shards.record_key(keys.URLS, parent), parent)
                return pipe.execute()

            for (i, _), record in zip(other, self.store.retrying(read), strict=True):
                records[i] = record or ""
        return [(lease, record) for (_, lease, _), record in zip(popped, records, strict=True)]

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
    ) -> tuple[int, int]:
        """Acknowledge one leased URL and queue its page's out-links (:meth:`complete_many`
        of one page, without the duplicates check); returns (fetch order, 0 for failed; new
        URLs queued)."""
        done = self.complete_many(
            [Ack(lease, url, kind, relevance, relevant, links, category, hub_score)]
        )[0]
        return done.order, done.new

    def complete_many(self, acks: Sequence[Ack]) -> list[Acked]:
        """Acknowledge leased URLs and queue their pages' out-links: one call per shard.

        ``kind`` is ``page`` (fetched and classified), ``bad`` (fetched, not usable),
        ``redirect`` (a redirect, whose target is among the links) or ``failed`` (no
        response). A page with a ``checksum`` is first checked for duplicates
        (:mod:`focused.pipelines.frontier`): a duplicate is acknowledged as such (``duplicate``,
        or ``unchanged`` for a revisit found as it was) and none of its links are queued. A
        page's relevance goes into the crawl's harvest curve and its ``category`` (any label)
        into the census, and its links to other servers into the crawl graph. A relevant page
        counts for its site and its parent page, and a ``hub_score`` is kept (seed 004's lists
        of good sites and hubs, :mod:`focused.distill.lists`).

        On one server the whole batch is one call. On several shards each shard gets one call
        with its hosts' pages, shard 0 first: it holds the crawl-wide keys, so its call checks
        the whole batch's duplicates (a call of its own when the batch has no page there). A
        page's links to other shards' hosts are kept in its shard's ``outbox`` in the same
        call; they ride with the call of a shard that comes later in the batch, and the rest
        are pushed at the end, one call per shard. The outbox entry is deleted with this
        process's next call there: a process killed in between loses none of them
        (:meth:`redeliver`). A call that fails raises :class:`PartlyAcknowledged`, with the
        results of the pages acknowledged before it.
        """
        shards = self.store.shards
        homes: dict[int, list[int]] = {}
        for i, ack in enumerate(acks):
            homes.setdefault(shards.of_host(ack.lease.split(" ", 1)[0]), []).append(i)
        checked = [i for i, ack in enumerate(acks) if ack.checksum and ack.kind == "page"]
        verdicts = [""] * len(acks)
        if checked and 0 not in homes:  # no call to the first shard to check them in
            verdicts = self._duplicates_of(acks, checked)
            checked = []
        results: dict[int, Acked] = {}
        # Links for other shards' hosts, with their parents' fetch orders: they ride with the
        # acknowledgement of a shard called later, and the rest are pushed at the end.
        riding: dict[int, list[Any]] = {}
        extra_new = 0
        for home in sorted(homes):  # the first shard first: it checks the batch's duplicates
            indices = homes[home]
            # The first shard checks the batch's pages, its own and the others', in order.
            checks = checked if home == 0 else []
            places = {i: n + 1 for n, i in enumerate(indices)}
            others = [i for i in checks if i not in places]
            args, away, sent = self._page_args(acks, indices, home, verdicts)
            outbox = _json(away) if away else ""
            delivered = self._delivered.pop(home, [])
            extra = [
                "1" if self.revisits else "",
                outbox,
                " ".join(delivered),
                _json([[*_check(acks[i]), places.get(i, 0)] for i in checks]) if checks else "",
                _json(riding.pop(home)) if home in riding else "",
            ]
            try:
                reply = self._call(self._complete, [*extra, *args], home)
            except FocusedError as exc:  # the shards called before acknowledged theirs
                raise PartlyAcknowledged(exc, results) from exc
            replies = [reply[3 * n : 3 * n + 3] for n in range(len(indices))]
            extra_new += int(reply[3 * len(indices)])
            for i, why in zip(others, reply[3 * len(indices) + 1 :], strict=True):
                verdicts[i] = why
            orders = [0 if why else int(order) for order, _, why in replies]
            for shard, pairs in _parented(away, orders).items():
                riding.setdefault(shard, []).extend(pairs)
            if away and any(orders):
                self._delivered.setdefault(home, []).append(str(next(o for o in orders if o)))
            for n, (i, (order, new, why)) in enumerate(zip(indices, replies, strict=True)):
                if orders[n]:
                    self._remember(sent[n])
                results[i] = Acked(int(order), int(new), why or "")
                self.held.pop(acks[i].lease, None)
        try:  # for shards called before their links were known
            extra_new += self._push_shards(riding)
        except FocusedError as exc:  # every page is acknowledged, its links in an outbox
            raise PartlyAcknowledged(exc, results) from exc
        done = [results[i] for i in range(len(acks))]
        if extra_new and done:  # the other shards' new URLs count with the batch's first page
            done[0] = Acked(done[0].order, done[0].new + extra_new, done[0].duplicate)
        return done

    def _page_args(
        self,
        acks: Sequence[Ack],
        indices: list[int],
        home: int,
        verdicts: list[str],
    ) -> tuple[list[Any], dict[int, list[tuple[int, str]]], list[list[int]]]:
        """The ``complete`` script's values for the pages of one shard; their links to other
        shards' hosts (shard -> (page among them, packed links)); the fingerprints of each
        page's links sent."""
        args: list[Any] = []
        away: dict[int, list[tuple[int, str]]] = {}
        sent: list[list[int]] = []
        for n, i in enumerate(indices):
            ack = acks[i]
            edges = None
            if ack.kind == "page" and self.graph:
                edges = bytearray(PAGE_RECORD.pack(fingerprint(ack.url)))
            packed, fps = self._pack_links(ack.links, edges, url_origin(ack.url))
            sent.append(fps)
            for shard, lines in packed.items():
                if shard != home:
                    away.setdefault(shard, []).append((n, lines))
            args += (
                ack.lease,
                ack.url,
                ack.kind,
                repr(float(ack.relevance)),
                int(ack.relevant),
                ack.category or "-",
                bytes(edges or b""),
                "" if ack.hub_score is None else repr(float(ack.hub_score)),
                verdicts[i],
                packed.get(home, ""),
            )
        return args, away, sent

    def _duplicates_of(self, acks: Sequence[Ack], checked: list[int]) -> list[str]:
        """Why each page is a duplicate ('' for none or not checked), in one call to the first
        shard (a batch with no page of its own there)."""
        store = self.store
        args = [value for i in checked for value in _check(acks[i])]
        names = [store.key(keys.CHECKSUMS), store.key(keys.MODIFIED), store.key(keys.KNOWN)]
        self.changes += 1
        reply = store.retrying(lambda: self._duplicates(keys=names, args=args))
        verdicts = [""] * len(acks)
        for i, why in zip(checked, reply, strict=True):
            verdicts[i] = why
        return verdicts

    def redeliver(self) -> int:
        """Push the links kept in the shards' outboxes by processes that are gone (their
        heartbeat expired; for one without a heartbeat, after the lease time) to their shards,
        and delete those entries; returns how many entries were delivered. Pushing links
        twice is harmless (the seen set), so an entry delivered by two processes at once is
        too. The pop runs it every ``REDELIVER_S`` seconds on a cluster.
        """
        self._redeliver_at = time.monotonic() + REDELIVER_S
        store, client = self.store, self.store.client
        delivered = 0
        for shard in range(len(store.shards)):
            outbox = store.key(keys.OUTBOX, shard=shard)
            entries = cast(dict[str, str], store.retrying(partial(client.hgetall, outbox)))
            if not entries:
                continue
            seconds, micros = store.retrying(client.time)
            owners = sorted({entry.split(" ", 1)[0] for entry in entries.values()} - {"-"})
            alive = store.retrying(partial(self._alive, shard, owners))
            for key, entry in entries.items():
                owner, at, orders, payload = entry.split(" ", 3)
                if owner == "-":
                    gone = seconds + micros / 1e6 - float(at) > self.lease_s
                else:
                    gone = not alive[owner] and key not in self._delivered.get(shard, ())
                if not gone:
                    continue
                away = {int(j): pages for j, pages in json.loads(payload).items()}
                self._push_shards(_parented(away, [int(order) for order in orders.split(",")]))
                store.retrying(partial(client.hdel, outbox, key))
                delivered += 1
        return delivered

    def _alive(self, shard: int, ids: list[str]) -> dict[str, bool]:
        """Process id -> whether its heartbeat record on a shard is still there."""
        pipe = self.store.client.pipeline(transaction=False)
        for process_id in ids:
            pipe.exists(self.store.key(keys.PROC, process_id, shard=shard))
        return dict(zip(ids, map(bool, pipe.execute()), strict=True)) if ids else {}

    def settle(self) -> None:
        """Delete the outbox entries this process has delivered (at its close)."""
        store = self.store
        for shard, done in list(self._delivered.items()):
            outbox = store.key(keys.OUTBOX, shard=shard)
            store.retrying(partial(store.client.hdel, outbox, *done))
            del self._delivered[shard]

    def _by_shard(self, leases: Iterable[str]) -> dict[int, list[str]]:
        """Leases (or anything starting with an origin and a space) grouped by shard."""
        grouped: dict[int, list[str]] = {}
        for lease in leases:
            grouped.setdefault(self.store.shards.of_host(lease.split(" ", 1)[0]), []).append(lease)
        return grouped

    def release(self, leases: Iterable[str], *, retry: bool = False) -> int:
        """Return leased URLs to the frontier; returns how many were queued again.

        Unchanged on a clean shutdown; with ``retry`` (a failed attempt to fetch them) one try
        later, behind the URLs not tried yet, and counted as failed after ``max_tries``.
        """
        leases = list(leases)
        back = 0
        for shard, part in self._by_shard(leases).items():
            back += int(self._call(self._release, [int(retry), self.max_tries, *part], shard))
        for lease in leases:
            self.held.pop(lease, None)
        return back

    def back_off(self, url: str, seconds: float) -> None:
        """Leave the host of ``url`` alone for ``seconds`` from now, in every process of the
        crawl (a server's Retry-After); a later time already set is kept."""
        origin = split_url(url)[0]
        self._call(self._back_off, [origin, max(0.0, seconds)], self.store.shards.of_host(origin))

    def holding(self) -> int:
        """Leases this object popped that are neither acknowledged, released nor run out.

        A lease whose item never reached the frontier pipeline (dropped on the way) counts
        until its deadline: by then the frontier has its URL back anyway.
        """
        now = time.monotonic()
        for lease in [lease for lease, deadline in self.held.items() if deadline <= now]:
            del self.held[lease]
        return len(self.held)

    def _per_shard(self, script: Any, triples: list[tuple[str, str, int]], *head: str) -> int:
        """Run a script of (origin, member, packed) triples on each shard with its hosts',
        after the arguments ``head``."""
        grouped: dict[int, list[Any]] = {}
        for origin, member, packed in triples:
            grouped.setdefault(self.store.shards.of_host(origin), list(head)).extend(
                (origin, member, packed)
            )
        return sum(int(self._call(script, args, shard)) for shard, args in grouped.items())

    def requeue(self, urls: Iterable[str], score: float = 1.0) -> int:
        """Queue known URLs again (past the seen set), marked as revisits, at ``score``.

        A URL already queued is left as it is. Returns how many were queued, also counted as
        ``revisits`` in the crawl's stats (maintenance mode, :mod:`focused.schedulers.revisits`).
        """
        triples = []
        for url in urls:
            origin, rest = split_url(url)
            triples.append((origin, f"r0 0 {rest[1:]}", pack(score, 0, fingerprint(url))))
        return self._per_shard(self._requeue, triples)

    def queued_hosts(self) -> list[str]:
        """Origins with URLs queued (a SCAN over the host queues: for periodic jobs only)."""
        store, hosts = self.store, []
        for shard in range(len(store.shards)):
            queues = store.key(keys.HOST_QUEUE, shard=shard)  # then the host's origin
            scan = partial(store.client.scan_iter, match=keys.pattern(queues), count=1000)
            hosts += store.retrying(partial(_after_prefix, queues, scan))
        return hosts

    def host_queue(self, origin: str) -> list[tuple[str, int, str]]:
        """(member, packed order, URL) of every URL queued for one host, best first."""
        store = self.store
        key = store.host_key(keys.HOST_QUEUE, origin)
        queue = cast(
            list[tuple[str, float]],
            store.retrying(lambda: store.client.zrange(key, 0, -1, withscores=True)),
        )
        return [(member, int(packed), origin + split_member(member)[2]) for member, packed in queue]

    def raise_to(self, score: float, queued: Iterable[tuple[str, str, int]]) -> int:
        """Raise queued URLs, given as (origin, member, packed order), to ``score``.

        Their tries are kept; URLs already at ``score`` or better, and URLs no longer queued
        (popped meanwhile), are left as they are. Returns how many moved, also counted as
        ``reboosted`` in the crawl's stats.
        """
        return self._set_scores(((o, m, p, score) for o, m, p in queued), "raise")

    def rescore(self, queued: Iterable[tuple[str, str, int, float]]) -> int:
        """Give queued URLs, as (origin, member, packed order, new score), new scores, up or
        down: a refitted topic's estimates. Their tries are kept; URLs no longer queued
        (popped meanwhile) are left out. Returns how many moved, also counted as
        ``rescored`` in the crawl's stats."""
        return self._set_scores(queued, "set")

    def rescore_anchors(self, score: Callable[[list[str]], Iterable[float]]) -> int:
        """Give every queued URL that has anchor text the score ``score`` gives its anchor (a
        topic's estimate of links, refitted or edited), up or down, as :meth:`rescore`; URLs
        without anchor text (seeds) keep theirs. A SCAN over the host queues: for jobs that run
        now and then, not per page."""
        queued = []
        for origin in self.queued_hosts():
            for member, packed, _ in self.host_queue(origin):
                if anchor := member.partition("\t")[2]:
                    queued.append((origin, member, packed, anchor))
        if not queued:
            return 0
        scores = score([anchor for *_, anchor in queued])
        return self.rescore(
            (origin, member, packed, float(r))
            for (origin, member, packed, _), r in zip(queued, scores, strict=True)
        )

    def _set_scores(self, queued: Iterable[tuple[str, str, int, float]], how: str) -> int:
        """``raise.lua`` on (origin, member, packed order, score): each URL repacked with its
        new score and its tries kept; ``how`` is "raise" (only up) or "set"."""
        triples = []
        for origin, member, packed, score in queued:
            tries, _ = unpack_score(packed)
            triples.append((origin, member, pack(score, tries, packed & HASH_MASK)))
        return self._per_shard(self._raise, triples, how)

    def drop_worst(self, max_queued: int) -> int:
        """Drop the worst queued URLs beyond ``max_queued``, for good; returns how many.

        They stay seen, so they are never queued again, and are counted as ``dropped/buffer``
        in the crawl's stats. One atomic call: processes trimming at once never go below
        ``max_queued``. Its work grows with the URLs queued (module doc), so call it when
        the queue is capped, not on an unbounded one. On several shards each keeps its share
        of ``max_queued`` (its worst beyond that go).
        """
        shards = len(self.store.shards)
        return sum(
            int(self._call(self._drop_worst, [max_queued // shards + (j < max_queued % shards)], j))
            for j in range(shards)
        )

    def counts(self) -> dict[str, float]:
        """The crawl's counters (queued, seen, fetched, relevant, ...) and URLs in flight,
        added up over its shards."""

        def read() -> list[Any]:  # a new pipeline per try: a failed execute empties it
            pipe = self.store.client.pipeline(transaction=False)
            for shard in range(len(self.store.shards)):
                pipe.hgetall(self.store.key(keys.STATS, shard=shard))
                pipe.zcard(self.store.key(keys.LEASES, shard=shard))
            return pipe.execute()

        replies = self.store.retrying(read)
        counts = add_up(replies[::2])
        counts["in_flight"] = sum(replies[1::2])
        return counts

    def __len__(self) -> int:
        """URLs queued or leased."""
        counts = self.counts()
        return int(counts.get("queued", 0) + counts["in_flight"])
