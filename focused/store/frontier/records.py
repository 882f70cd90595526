"""The frontier's records in Redis, as Python reads and writes them: a URL's fingerprint, its
packed order in a host queue, a queued URL's member and a fetched page's ``url:`` record.

The Lua scripts (``focused/store/lua/``) read the same formats; :data:`PACKING` hands them the
packing's units. The layout of every key is in :mod:`focused.store.keys`.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING

from w3lib.url import canonicalize_url

from focused.links.urls import CANONICAL, clean_url
from focused.links.urls import origin as url_origin
from focused.store import keys
from focused.store.shards import crawl_shards

if TYPE_CHECKING:
    import redis
    from redis.cluster import RedisCluster

TRY_UNIT = 1 << 48
SCORE_UNIT = 1 << 32
HOST_UNIT = 1 << 20
SCORE_LEVELS = 65535
HOST_CAP = 4095
HASH_MASK = HOST_UNIT - 1
MAX_TRIES_PACKABLE = 7
# The score buckets of the link-score calibration (score_bucket): their lower edges, finer
# where scores are near 0 or 1, where a best-first crawl's queue keeps most of its URLs and
# where a step of the score changes most the odds of a relevant page.
SCORE_EDGES: tuple[float, ...] = (
    *(0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3),
    *(0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.998),
)
SCORE_BUCKETS = len(SCORE_EDGES)

ANCHOR_CHARS = 80  # characters of anchor text kept with a queued URL
PAGE_RECORD = struct.Struct(">Q")  # a page's own fingerprint, at the head of its graph record
EDGE_RECORD = struct.Struct(">IQ")  # one cross-server link: target host hash, target fingerprint


def fingerprint(url: str) -> int:
    """64-bit fingerprint of a URL's canonical form: w3lib's canonicalisation (sorted query,
    the one Scrapy's request fingerprints use) of its clean form
    (:func:`focused.links.urls.clean_url`;
    BadURL if it has none)."""
    return clean_fingerprint(clean_url(url, 0))


def clean_fingerprint(clean: str) -> int:
    """The fingerprint of a URL already clean (:func:`fingerprint`)."""
    canonical = clean if CANONICAL.fullmatch(clean) else canonicalize_url(clean)
    digest = hashlib.blake2b(canonical.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def url_record(record: str) -> tuple[str, float | None, str]:
    """(URL, R, category) of a ``url:`` record: ``url`` for a page not classified (R None,
    category ""), ``url TAB R TAB category [TAB relevant]`` for a classified one (``-`` for no
    category)."""
    url, *page = record.split("\t", 3)
    if not page:
        return url, None, ""
    return url, float(page[0]), page[1] if len(page) > 1 and page[1] != "-" else ""


def recorded_verdict(record: str, threshold: float | None) -> bool | None:
    """Whether a ``url:`` record's page was judged relevant: the verdict it keeps (``1`` or
    ``0``), else (a record written before verdicts were kept) its R against ``threshold``;
    None when neither is known."""
    url, *page = record.split("\t", 3)
    if len(page) > 2:
        return page[2] == "1"
    if threshold is None:
        return None
    return bool(page) and float(page[0]) >= threshold


def page_urls(
    client: redis.Redis | RedisCluster, crawl: str, orders: Sequence[int | str]
) -> list[str]:
    """URLs of fetched pages by fetch order (from the ``url:`` records; unknown ones left out)."""
    shards = crawl_shards(client, crawl)
    pipe = client.pipeline(transaction=False)
    for order in orders:
        pipe.hget(shards.record_key(keys.URLS, int(order)), order)
    records = pipe.execute() if orders else []
    return [url_record(record)[0] for record in records if record]


def split_member(member: str) -> tuple[str, str, str, str]:
    """(depth, parent, path, anchor) of a host-queue member (module doc, ``keys``); the depth
    field may carry an ``r`` (a revisit) before and ``+N`` (N redirects) after the depth. The
    member keeps the path without its leading ``/`` (a byte less for every queued URL)."""
    depth, parent, rest = member.split(" ", 2)
    path, _, anchor = rest.partition("\t")
    return depth, parent, "/" + path, anchor


def lease_url(lease: str) -> str:
    """The URL a lease (``origin packed owner member``, :mod:`focused.store.keys`) was taken for."""
    origin, _, _, member = lease.split(" ", 3)
    return origin + split_member(member)[2]


def split_url(url: str) -> tuple[str, str]:
    """(origin, rest) of a URL's clean form (:func:`focused.links.urls.clean_url`; BadURL if it has
    none): ``http://host`` and ``/path?query``.

    The origin is the server the frontier is polite to: ``http://Host.:80/a``,
    ``http://user@host/a`` and ``http://host/a`` are one URL on one host.
    """
    clean = clean_url(url, 0)
    host = url_origin(clean)
    return host, clean[len(host) :]


def pack(score: float, tries: int, fp: int) -> int:
    """The packed order of a queued URL (without its host's part); lower pops first."""
    score = min(1.0, max(0.0, score))
    return tries * TRY_UNIT + round((1.0 - score) * SCORE_LEVELS) * SCORE_UNIT + (fp & HASH_MASK)


def unpack_score(packed: int) -> tuple[int, float]:
    """(num_tries, score) of a packed order."""
    tries, rest = divmod(packed, TRY_UNIT)
    return tries, 1.0 - (rest // SCORE_UNIT) / SCORE_LEVELS


def _edge_level(edge: float) -> int:
    """The highest score level whose score is ``edge`` or more, as a packed score rounds it."""
    return int((1.0 - edge) * SCORE_LEVELS + 0.5)


# The highest level of each bucket but the first, from the second bucket up (descending).
BUCKET_TOP_LEVELS = tuple(_edge_level(edge) for edge in SCORE_EDGES[1:])


def score_bucket(packed: int) -> int:
    """The score bucket of a packed order (the last of SCORE_EDGES at or below its score), as
    ``frontier.lua``'s ``score_bucket`` finds it. The acknowledgement counts its pages by the
    bucket their URL was leased in (the link scores' calibration, ``calibration`` in
    :mod:`focused.store.keys`)."""
    level = (packed % TRY_UNIT) // SCORE_UNIT
    bucket = 0
    while bucket < SCORE_BUCKETS - 1 and level <= BUCKET_TOP_LEVELS[bucket]:
        bucket += 1
    return bucket


def bucket_middles() -> list[float]:
    """The score each bucket stands for: the middle of its edges on the logit scale (half its
    upper edge for the first, half-way to 1 for the last)."""

    def logit(p: float) -> float:
        return math.log(p / (1.0 - p))

    middles = [SCORE_EDGES[1] / 2]
    for low, high in itertools.pairwise(SCORE_EDGES[1:]):
        middles.append(1.0 / (1.0 + math.exp(-(logit(low) + logit(high)) / 2)))
    return [*middles, (SCORE_EDGES[-1] + 1.0) / 2]


def bucket_levels() -> list[int]:
    """The lowest score level (``round((1 - score) * SCORE_LEVELS)``) of each score bucket,
    best bucket first, and ``SCORE_LEVELS + 1`` last: bucket b holds levels from
    ``levels[SCORE_BUCKETS - 1 - b]`` up to the next entry (exclusive)."""
    return [0, *(top + 1 for top in reversed(BUCKET_TOP_LEVELS)), SCORE_LEVELS + 1]


# The values the frontier's Lua scripts (``focused/store/lua/``) use besides the key names.
PACKING: dict[str, int | tuple[int, ...]] = {
    "HOST_UNIT": HOST_UNIT,
    "HOST_CAP": HOST_CAP,
    "TRY_UNIT": TRY_UNIT,
    "SCORE_UNIT": SCORE_UNIT,
    "SCORE_LEVELS": SCORE_LEVELS,
    "SCORE_BUCKETS": SCORE_BUCKETS,
    "BUCKET_TOP_LEVELS": BUCKET_TOP_LEVELS,
}
