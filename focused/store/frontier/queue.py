"""The Redis frontier: a shared, polite, crash-safe priority queue of URLs.

The frontier knows nothing about topics. It takes URLs with a score in [0, 1] and hands back
the best URL whose host may be hit now. Every operation is one Lua script call (its source in
``focused/store/lua/``, :mod:`focused.store.scripts`), so it is atomic across any number of
crawler processes and costs one round trip.

Order (Chakrabarti et al. 1999, §3): lexicographic on (num_tries ascending, score descending, URLs
already crawled from the same host ascending, a hash of the URL). The four parts are packed into one
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

Crawl graph (for the distiller, Chakrabarti et al. 1999, §3.2): ``complete`` of a classified page
also stores the page's links to other servers, compactly: its own fingerprint (8 bytes), then per
link the target host's 32-bit hash and the target's fingerprint (12 bytes), big-endian, in
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

Buffer cap (Srinivasan et al. 2005's MAX_BUFFER, best-N-first): ``drop_worst`` drops the worst
queued URLs beyond a maximum for good; they stay in the seen set, so they never come back. Worst is
the host queues' own order (num_tries, then score, then hash), without the host part: the URLs
that would pop last, retried ones first.

Cost: ``push_many``, ``pop_ready``, ``complete_many``, ``release`` and ``raise_to`` are one
round trip each on one server (one per shard they touch on a cluster); a crawl makes a pop
per batch of leases and an acknowledgement per batch of finished pages. ``__len__`` reads one
hash field and one set size. ``drop_worst`` is one round trip whose work grows with the URLs queued.
"""

from __future__ import annotations

from focused.store.frontier.ack import Acknowledging
from focused.store.frontier.pop import Popping
from focused.store.frontier.reorder import Reordering
from focused.store.frontier.scores import ScoreCounts


class RedisFrontier(Acknowledging, Popping, Reordering, ScoreCounts):
    """The frontier of one crawl in Redis (see the module docstring for order and layout): the
    :class:`~focused.store.frontier.base.Frontier` the crawl's components are written against.

    A crawler has one (:func:`focused.store.crawler.frontier_for`), over the crawler's
    :class:`~focused.store.crawl.CrawlStore` (``store``), whose retries and lost-connection
    report its calls go through; commands, tests and benchmarks make one with
    :meth:`for_crawl`.

    Its roles are one module each: its state and calls (:mod:`~focused.store.frontier.core`),
    pushes (:mod:`~focused.store.frontier.push`), pops (:mod:`~focused.store.frontier.pop`),
    acknowledgements (:mod:`~focused.store.frontier.ack`), the cluster outbox
    (:mod:`~focused.store.frontier.outbox`), re-ordering
    (:mod:`~focused.store.frontier.reorder`) and the counts by link score
    (:mod:`~focused.store.frontier.scores`).
    """
