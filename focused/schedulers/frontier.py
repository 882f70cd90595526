"""The Redis frontier: a shared, polite, crash-safe priority queue of URLs.

The frontier knows nothing about topics. It takes URLs with a score in [0, 1] and hands back
the best URL whose host may be hit now. Every operation is one Lua script call, so it is
atomic across any number of crawler processes and costs one round trip.

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
clean origin (:mod:`focused.urls`): every spelling of one server is one host.

URLs: only clean URLs (:func:`focused.urls.clean_url`, at most ``max_url_length`` long) are
queued; others are refused (``on_rejected``). No field of a stored record can then hold a
space, and a record that does not parse anyway is dropped and counted (``corrupt``), never
an error in a script.

Leases: a popped URL moves to ``leases`` with a deadline. ``complete`` acknowledges it (and
pushes the page's out-links in the same call); ``release`` puts it back untouched (clean
shutdown). A lease that runs out returns the URL to its host queue with num_tries + 1; after
``max_tries`` tries it is counted as failed. A crawler killed at any point loses nothing.
A lease names its process when the process has a heartbeat (``owner``): once that process's
heartbeat record has expired, the next pop by any process puts its leases back untouched
(``lease_reclaimed``), so a killed process holds no host for the lease time and charges no try
for fetches that never finished.

Dedup: a URL enters the frontier once per crawl. Its fingerprint is 64 bits of BLAKE2b over
w3lib's canonical form (the canonicalisation Scrapy's fingerprinter uses for GET requests),
stored as an integer member of one of ``seen_buckets`` sets, which Redis keeps as compact
intsets (8 bytes a URL while a bucket holds at most 512).

Crawl graph (for the distiller, seed 000 §3.2): ``complete`` of a classified page also stores
the page's links to other servers, compactly: its own fingerprint (8 bytes), then per link the
target host's 32-bit hash and the target's fingerprint (12 bytes), big-endian, in
``graph:<order // 512>``. Links within a server carry no vote and are not stored.

Buffer cap (seed 003's MAX_BUFFER, best-N-first): ``drop_worst`` drops the worst queued URLs
beyond a maximum for good; they stay in the seen set, so they never come back. Worst is the
host queues' own order (num_tries, then score, then hash), without the host part: the URLs
that would pop last, retried ones first.

Cost: ``push_many``, ``pop_ready``, ``complete``, ``release`` and ``raise_to`` are one round
trip each; the first four are called about once per page. ``__len__`` reads one hash field and
one set size. ``drop_worst`` is one round trip whose work grows with the URLs queued.
"""

from __future__ import annotations

import hashlib
import json
import struct
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import redis
from w3lib.url import canonicalize_url

from focused.errors import FocusedError
from focused.store import keys
from focused.store.connection import retrying
from focused.store.shards import add_up, crawl_shards, host_hash
from focused.urls import CANONICAL, BadURL, clean_url
from focused.urls import origin as url_origin

TRY_UNIT = 1 << 48
SCORE_UNIT = 1 << 32
HOST_UNIT = 1 << 20
SCORE_LEVELS = 65535
HOST_CAP = 4095
HASH_MASK = HOST_UNIT - 1
MAX_TRIES_PACKABLE = 7
REDELIVER_S = 30.0  # how often a pop on a cluster looks for outbox entries of gone processes

ANCHOR_CHARS = 80  # characters of anchor text kept with a queued URL
PAGE_RECORD = struct.Struct(">Q")  # a page's own fingerprint, at the head of its graph record
EDGE_RECORD = struct.Struct(">IQ")  # one cross-server link: target host hash, target fingerprint


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


class FrontierProtocol(Protocol):
    """What the scheduler and the pipelines need from a frontier."""

    def push_many(self, links: Iterable[Link]) -> int: ...

    def pop_ready(self, n: int) -> Pop: ...

    def complete(
        self,
        lease: str,
        url: str,
        kind: str,
        relevance: float,
        relevant: bool,
        links: Sequence[Link],
        category: str,
    ) -> tuple[int, int]: ...

    def release(self, leases: Iterable[str], *, retry: bool = False) -> int: ...

    def __len__(self) -> int: ...


def fingerprint(url: str) -> int:
    """64-bit fingerprint of a URL's canonical form: w3lib's canonicalisation (sorted query,
    the one Scrapy's request fingerprints use) of its clean form (:func:`focused.urls.clean_url`;
    BadURL if it has none)."""
    return _fingerprint(clean_url(url, 0))


def _fingerprint(clean: str) -> int:
    canonical = clean if CANONICAL.fullmatch(clean) else canonicalize_url(clean)
    digest = hashlib.blake2b(canonical.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def url_record(record: str) -> tuple[str, float | None, str]:
    """(URL, R, category) of a ``url:`` record: ``url`` for a page not classified (R None,
    category ""), ``url TAB R TAB category`` for a classified one (``-`` for no category)."""
    url, *page = record.split("\t", 2)
    if not page:
        return url, None, ""
    return url, float(page[0]), page[1] if len(page) > 1 and page[1] != "-" else ""


def page_urls(client: redis.Redis, crawl: str, orders: Sequence[int | str]) -> list[str]:
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


def split_url(url: str) -> tuple[str, str]:
    """(origin, rest) of a URL's clean form (:func:`focused.urls.clean_url`; BadURL if it has
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


# Every script runs on one shard (``focused.store.shards``): KEYS[1] is its key prefix, ARGV[1] its
# index and the number of shards ("0 1" on one server), ARGV[2] and ARGV[3] the host
# concurrency and delay.
_LUA_COMMON = """
local P = KEYS[1]
-- This shard's index and the crawl's number of shards (1 on one server; ``focused.store.shards``).
local SHARD, SHARDS = string.match(ARGV[1], '^(%%d+) (%%d+)$')
SHARD, SHARDS = tonumber(SHARD), tonumber(SHARDS)
local CONC = tonumber(ARGV[2])
local DELAY = tonumber(ARGV[3])
local HOST_UNIT = %(host_unit)d
local HOST_CAP = %(host_cap)d
local function k(name) return P .. name end
local function qkey(o) return P .. '%(queue)s' .. o end
-- A host's own hash: i (URLs leased), n (unix time it may be hit again), c (URLs fetched).
local function hkey(o) return P .. '%(host)s' .. o end
local function now_s()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local function int(x) return string.format('%%.0f', x) end
-- The fetch order of the page a queued member was found on ('0' for none, or for a member
-- that does not parse: no stored record can make a script fail).
local function parent_of(m) return string.match(m, '^%%S+ (%%d+) ') or '0' end
-- (origin, packed score, owner, member) of a lease, or nil for a record that does not parse.
local function split_lease(lm) return string.match(lm, '^(%%S+) (%%S+) (%%S+) (.*)$') end
local function secs(x) return string.format('%%.6f', x) end
-- The url: or graph: bucket of fetch order n, a page of this shard (n %% SHARDS == SHARD).
local function record_key(name, n) return P .. name .. math.floor(n / SHARDS / %(url_bucket)d) end

-- Host o may not be hit again before DELAY seconds from now: after a fetch starts (a pop)
-- and after it ends (an ack), so the delay holds however long fetches take. Returns the time
-- the host may be hit again (a later one set by back_off is kept).
local function hold(o, now)
  local nxt = tonumber(redis.call('HGET', hkey(o), 'n') or '0')
  if DELAY > 0 and now + DELAY > nxt then
    nxt = now + DELAY
    redis.call('HSET', hkey(o), 'n', secs(nxt))
  end
  return nxt
end

-- Put host o in 'ready', scored by its best URL's packed order head plus its crawled count
-- (the seed-000 server priority, capped).
local function make_ready(o, head, crawled)
  crawled = math.min(tonumber(crawled or '0'), HOST_CAP)
  redis.call('ZADD', k('%(ready)s'), int(head + crawled * HOST_UNIT), o)
end

-- Put host o, known to be in neither 'ready' nor 'wait', in one of them if it has a queued
-- URL: 'wait' until nxt, else 'ready'.
local function place(o, now, nxt)
  local head = redis.call('ZRANGE', qkey(o), 0, 0, 'WITHSCORES')
  if #head == 0 then return end
  if nxt > now then
    redis.call('ZADD', k('%(wait)s'), secs(nxt), o)
  else
    make_ready(o, tonumber(head[2]), redis.call('HGET', hkey(o), 'c'))
  end
end

-- Put host o in 'ready' or 'wait' (or neither) from its queue, slots and delay, wherever it
-- was; inflight and nxt are given when the caller has just read or written them.
local function schedule(o, now, inflight, nxt)
  redis.call('ZREM', k('%(ready)s'), o)
  redis.call('ZREM', k('%(wait)s'), o)
  if not inflight then
    local state = redis.call('HMGET', hkey(o), 'i', 'n')
    inflight, nxt = tonumber(state[1] or '0'), tonumber(state[2] or '0')
  end
  if inflight >= CONC then return end
  place(o, now, nxt)
end

-- Host o's best queued URL is now a new one, packed s: it moves up in 'ready', or goes into
-- 'ready' or 'wait' if it was in neither (its queue was empty). A host in 'wait' stays there
-- (its score is its time n), and one whose slots are all taken stays out of both.
local function head_changed(o, now, s)
  local state = redis.call('HMGET', hkey(o), 'i', 'n', 'c')
  if tonumber(state[1] or '0') >= CONC then return end
  local nxt = tonumber(state[2] or '0')
  if nxt > now then
    redis.call('ZADD', k('%(wait)s'), secs(nxt), o)
  else
    redis.call('ZREM', k('%(wait)s'), o)  -- due, and not moved to 'ready' by a pop yet
    make_ready(o, s, state[3])
  end
end

-- Push links given as 6-tuples of ARGV (origin, depth, rest, packed score, seen bucket,
-- seen member) from index first, found on page number parent; returns the number of new URLs.
-- A host whose best queued URL is now a new one is placed anew (head_changed), but for host
-- own, which the caller schedules itself; one whose head did not change keeps its place.
local function push_links(first, parent, now, own)
  local new, best, head = 0, {}, {}
  for i = first, #ARGV, 6 do
    if redis.call('SADD', k('%(seen)s') .. ARGV[i + 4], ARGV[i + 5]) == 1 then
      local o, s = ARGV[i], tonumber(ARGV[i + 3])
      local m = ARGV[i + 1] .. ' ' .. parent .. ' ' .. ARGV[i + 2]
      redis.call('ZADD', qkey(o), ARGV[i + 3], m)
      if not best[o] or s < best[o] then best[o], head[o] = s, m end
      new = new + 1
    end
  end
  for o, m in pairs(head) do
    if o ~= own and redis.call('ZRANGE', qkey(o), 0, 0)[1] == m then
      head_changed(o, now, best[o])
    end
  end
  if new > 0 then
    redis.call('HINCRBY', k('%(stats)s'), 'queued', new)
    redis.call('HINCRBY', k('%(stats)s'), 'seen', new)
  end
  return new
end

-- Take lease lm off 'leases' and put its URL back in its host queue, one try later when bump
-- is 1 (a failed attempt); a URL that has had max_tries tries is counted as failed instead.
-- Returns 1 if the URL was queued again.
local function unlease(lm, bump, max_tries, touched, now)
  if redis.call('ZREM', k('%(leases)s'), lm) == 0 then return 0 end
  local o, s, w, m = split_lease(lm)
  if not o or not tonumber(s) then
    redis.call('HINCRBY', k('%(stats)s'), 'corrupt', 1)
    return 0
  end
  if w ~= '-' then redis.call('SREM', k('%(owned)s') .. w, lm) end
  redis.call('HINCRBY', hkey(o), 'i', -1)
  if bump == 1 then hold(o, now) end
  touched[o] = true
  local score = tonumber(s) + bump * %(try_unit)d
  if math.floor(score / %(try_unit)d) >= max_tries then
    redis.call('HINCRBY', k('%(stats)s'), 'failed', 1)
    redis.call('HINCRBY', k('%(stats)s'), 'failed/tries', 1)
    return 0
  end
  redis.call('ZADD', qkey(o), int(score), m)
  redis.call('HINCRBY', k('%(stats)s'), 'queued', 1)
  return 1
end

-- Leases of processes that are gone (their heartbeat record ``proc:<id>`` expired) go back
-- to their queues untouched: a fetch that never finished costs no try. At most once a second.
local function reap(max_tries, touched, now)
  if now - tonumber(redis.call('GET', k('%(reaped)s')) or '0') < 1 then return end
  redis.call('SET', k('%(reaped)s'), secs(now))
  for _, id in ipairs(redis.call('ZRANGE', k('%(procs)s'), 0, -1)) do
    local owned = k('%(owned)s') .. id
    if redis.call('EXISTS', k('%(proc)s') .. id) == 0 and redis.call('EXISTS', owned) == 1 then
      local back = 0
      for _, lm in ipairs(redis.call('SMEMBERS', owned)) do
        back = back + unlease(lm, 0, max_tries, touched, now)
      end
      redis.call('DEL', owned)
      redis.call('HINCRBY', k('%(stats)s'), 'lease_reclaimed', back)
    end
  end
end
"""

# ARGV: shard, conc, delay, parent (fetch order, 0 for none), links
_LUA_PUSH = """
return push_links(5, ARGV[4], now_s(), nil)
"""

# ARGV: shard, conc, delay, n, lease_s, max_tries, owner ('-' for none)
_LUA_POP = """
local n, lease_s, max_tries, w = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local now = now_s()
local touched = {}
reap(max_tries, touched, now)
for _, lm in ipairs(redis.call('ZRANGEBYSCORE', k('%(leases)s'), '-inf', secs(now),
                                'LIMIT', 0, 200)) do
  unlease(lm, 1, max_tries, touched, now)
  redis.call('HINCRBY', k('%(stats)s'), 'lease_expired', 1)
end
for o in pairs(touched) do schedule(o, now) end
-- Hosts whose delay is over: a host in 'wait' has a free slot (it had one when it went there,
-- and only a pop, from 'ready', takes one), so it goes straight to 'ready'.
local due = redis.call('ZRANGEBYSCORE', k('%(wait)s'), '-inf', secs(now), 'LIMIT', 0, 1000)
if #due > 0 then
  redis.call('ZREM', k('%(wait)s'), unpack(due))
  for _, o in ipairs(due) do place(o, now, 0) end
end
local out = {}
local popped = 0
while popped < n do
  local top = redis.call('ZPOPMIN', k('%(ready)s'))
  if #top == 0 then break end
  local o = top[1]
  local item = redis.call('ZPOPMIN', qkey(o))
  if #item > 0 and not string.match(item[1], '^r?%%d+%%+?%%d* %%d+ ') then
    redis.call('HINCRBY', k('%(stats)s'), 'corrupt', 1)
    redis.call('HINCRBY', k('%(stats)s'), 'queued', -1)
    schedule(o, now)
  elseif #item > 0 then
    local m, s = item[1], item[2]
    local lm = o .. ' ' .. s .. ' ' .. w .. ' ' .. m
    redis.call('ZADD', k('%(leases)s'), secs(now + lease_s), lm)
    if w ~= '-' then redis.call('SADD', k('%(owned)s') .. w, lm) end
    local inflight = redis.call('HINCRBY', hkey(o), 'i', 1)
    local nxt = hold(o, now)
    local parent = parent_of(m)
    local purl = ''
    if parent ~= '0' and tonumber(parent) %% SHARDS == SHARD then  -- else the client reads it
      purl = redis.call('HGET', record_key('%(urls)s', tonumber(parent)), parent) or ''
    end
    out[#out + 1] = lm
    out[#out + 1] = purl
    popped = popped + 1
    -- The host left 'ready' with the pop: back in a set unless its slots are all taken.
    if inflight < CONC then place(o, now, nxt) end
  end
end
if popped > 0 then redis.call('HINCRBY', k('%(stats)s'), 'queued', -popped) end
local wake = ''
local w = redis.call('ZRANGE', k('%(wait)s'), 0, 0, 'WITHSCORES')
if #w > 0 then wake = tonumber(w[2]) - now end
local l = redis.call('ZRANGE', k('%(leases)s'), 0, 0, 'WITHSCORES')
if #l > 0 and (wake == '' or tonumber(l[2]) - now < wake) then wake = tonumber(l[2]) - now end
table.insert(out, 1, tostring(wake))
table.insert(out, 1, redis.call('ZCARD', k('%(leases)s')))
table.insert(out, 1, tonumber(redis.call('HGET', k('%(stats)s'), 'queued') or '0'))
return out
"""

# ARGV: shard, conc, delay, lease, url, kind (page|bad|redirect|failed), relevance, relevant,
# category, graph record ('' for none), hub score ('' for none), '1' to keep relevant pages for
# revisits, links to hosts of other shards ('' for none: JSON, kept in 'outbox' until they are
# pushed there), fetch orders whose outbox entries are delivered, links...
_LUA_COMPLETE = """
local lm, url, kind = ARGV[4], ARGV[5], ARGV[6]
local now = now_s()
local o, s, w, m = split_lease(lm)
if not o or not tonumber(s) then
  redis.call('ZREM', k('%(leases)s'), lm)
  redis.call('HINCRBY', k('%(stats)s'), 'corrupt', 1)
  return {0, 0}
end
if w ~= '-' then redis.call('SREM', k('%(owned)s') .. w, lm) end
local inflight, nxt
if redis.call('ZREM', k('%(leases)s'), lm) == 1 then
  inflight = redis.call('HINCRBY', hkey(o), 'i', -1)
  nxt = hold(o, now)
else
  -- The lease ran out first: the URL went back to its queue (take it out again) or was
  -- already counted as failed.
  if redis.call('ZREM', qkey(o), m) == 1 then
    redis.call('HINCRBY', k('%(stats)s'), 'queued', -1)
  end
  redis.call('HINCRBY', k('%(stats)s'), 'lease_late', 1)
end
if redis.call('HINCRBY', hkey(o), 'c', 1) == 1 then
  redis.call('HINCRBY', k('%(stats)s'), 'hosts', 1)
end
local order = 0
if kind == 'failed' then
  redis.call('HINCRBY', k('%(stats)s'), 'failed', 1)
else
  order = redis.call('HINCRBY', k('%(stats)s'), 'fetched', 1) * SHARDS + SHARD
  local record = url
  if kind == 'page' then record = url .. '\t' .. ARGV[7] .. '\t' .. ARGV[9] end
  redis.call('HSET', record_key('%(urls)s', order), order, record)
  if kind == 'page' then
    local n = redis.call('HINCRBY', k('%(stats)s'), 'classified', 1)
    local bucket = math.floor((n - 1) / %(curve_bucket)d)
    if ARGV[8] == '1' then
      redis.call('HINCRBY', k('%(stats)s'), 'relevant', 1)
      redis.call('HINCRBY', k('%(curve)s'), 'relevant:' .. bucket, 1)
    end
    redis.call('HINCRBYFLOAT', k('%(stats)s'), 'relevance_sum', ARGV[7])
    redis.call('HINCRBYFLOAT', k('%(curve)s'), 'relevance:' .. bucket, ARGV[7])
    if redis.call('LPUSH', k('%(recent)s'), ARGV[7]) > %(recent_len)d + 100 then
      redis.call('LTRIM', k('%(recent)s'), 0, %(recent_len)d - 1)
    end
    redis.call('HINCRBY', k('%(census)s'), ARGV[9], 1)
    if ARGV[10] ~= '' then
      redis.call('HSET', record_key('%(graph)s', order), order, ARGV[10])
    end
    if ARGV[11] ~= '' then redis.call('ZADD', k('%(hubs)s'), ARGV[11], order) end
    if ARGV[8] == '1' then
      -- seed 004's lists: relevant pages per site, and found through each parent page
      redis.call('HINCRBY', k('%(sites)s'), o, 1)
      local parent = parent_of(m)
      if parent ~= '0' then redis.call('HINCRBY', k('%(found)s'), parent, 1) end
      if ARGV[12] == '1' and string.sub(m, 1, 1) ~= 'r' then
        redis.call('ZADD', k('%(revisit)s'), ARGV[7], url)
      end
    end
  else
    redis.call('HINCRBY', k('%(stats)s'), kind, 1)
  end
end
redis.call('HINCRBY', k('%(tries)s'), math.floor(tonumber(s) / %(try_unit)d), 1)
if ARGV[13] ~= '' and order > 0 then
  redis.call('HSET', k('%(outbox)s'), order, w .. ' ' .. secs(now) .. ' ' .. ARGV[13])
end
for done in string.gmatch(ARGV[14], '%%d+') do redis.call('HDEL', k('%(outbox)s'), done) end
local new = push_links(15, order, now, o)
if inflight and inflight + 1 >= CONC then
  place(o, now, nxt)  -- the host was full: in neither 'ready' nor 'wait'
else
  schedule(o, now, inflight, nxt)
end
return {order, new}
"""

# ARGV: shard, conc, delay, bump (1: one more try), max_tries, leases...
_LUA_RELEASE = """
local bump, max_tries = tonumber(ARGV[4]), tonumber(ARGV[5])
local now = now_s()
local touched = {}
local back = 0
for i = 6, #ARGV do back = back + unlease(ARGV[i], bump, max_tries, touched, now) end
for o in pairs(touched) do schedule(o, now) end
return back
"""

# ARGV: shard, conc, delay, origin, seconds: the host asked to be left alone (Retry-After)
_LUA_BACK_OFF = """
local o, now = ARGV[4], now_s()
local nxt = now + tonumber(ARGV[5])
if nxt > tonumber(redis.call('HGET', hkey(o), 'n') or '0') then
  redis.call('HSET', hkey(o), 'n', secs(nxt))
end
redis.call('HINCRBY', k('%(stats)s'), 'backed_off', 1)
schedule(o, now)
return 1
"""

# ARGV: shard, conc, delay, then (origin, member, packed) triples: the distiller's re-boost
_LUA_RAISE = """
local touched = {}
local raised = 0
for i = 4, #ARGV, 3 do
  local n = redis.call('ZADD', qkey(ARGV[i]), 'XX', 'LT', 'CH', ARGV[i + 2], ARGV[i + 1])
  if n > 0 then
    raised = raised + n
    touched[ARGV[i]] = true
  end
end
local now = now_s()
for o in pairs(touched) do schedule(o, now) end
if raised > 0 then redis.call('HINCRBY', k('%(stats)s'), 'reboosted', raised) end
return raised
"""

# ARGV: shard, conc, delay, then (origin, member, packed) triples: known pages to fetch again
_LUA_REQUEUE = """
local touched = {}
local queued = 0
for i = 4, #ARGV, 3 do
  if redis.call('ZADD', qkey(ARGV[i]), 'NX', ARGV[i + 2], ARGV[i + 1]) == 1 then
    queued = queued + 1
    touched[ARGV[i]] = true
  end
end
local now = now_s()
for o in pairs(touched) do schedule(o, now) end
if queued > 0 then
  redis.call('HINCRBY', k('%(stats)s'), 'queued', queued)
  redis.call('HINCRBY', k('%(stats)s'), 'revisits', queued)
end
return queued
"""

# ARGV: shard, conc, delay, max_queued. A host with queued URLs is in 'ready' or 'wait', or
# has all its slots leased (then it is in 'leases'), so those three list every such host at a
# cost bounded by the queue, not by the hosts ever crawled. A heap of hosts by their worst
# queued URL then yields the worst URLs overall one by one, each host's from its tail: the
# work is one read per host and per URL dropped, never a sort of the whole queue.
_LUA_DROP_WORST = """
local excess = tonumber(redis.call('HGET', k('%(stats)s'), 'queued') or '0') - tonumber(ARGV[4])
if excess <= 0 then return 0 end
-- A max-heap of hosts in three arrays (score, origin, URLs cut so far): no table per step.
local hs, ho, hc, listed = {}, {}, {}, {}
local function worse(i, j) return hs[i] > hs[j] or (hs[i] == hs[j] and ho[i] < ho[j]) end
local function swap(i, j)
  hs[i], hs[j] = hs[j], hs[i]
  ho[i], ho[j] = ho[j], ho[i]
  hc[i], hc[j] = hc[j], hc[i]
end
local function sift_up(i)
  while i > 1 and worse(i, math.floor(i / 2)) do
    swap(i, math.floor(i / 2))
    i = math.floor(i / 2)
  end
end
local function sift_down(i)
  while true do
    local top, l, r = i, 2 * i, 2 * i + 1
    if l <= #hs and worse(l, top) then top = l end
    if r <= #hs and worse(r, top) then top = r end
    if top == i then return end
    swap(i, top)
    i = top
  end
end
-- Put host o in the heap by its (cut + 1)-th worst queued URL, if it has one.
local function offer(o, cut)
  local tail = redis.call('ZRANGE', qkey(o), -cut - 1, -cut - 1, 'WITHSCORES')
  if #tail > 0 then
    local n = #hs + 1
    hs[n], ho[n], hc[n] = tonumber(tail[2]), o, cut
    sift_up(n)
  end
end
local function list(o)
  if not listed[o] then
    listed[o] = true
    offer(o, 0)
  end
end
for _, o in ipairs(redis.call('ZRANGE', k('%(ready)s'), 0, -1)) do list(o) end
for _, o in ipairs(redis.call('ZRANGE', k('%(wait)s'), 0, -1)) do list(o) end
for _, lm in ipairs(redis.call('ZRANGE', k('%(leases)s'), 0, -1)) do
  local o = split_lease(lm)
  if o then list(o) end
end
local cuts, dropped = {}, 0
while dropped < excess and #hs > 0 do
  local o, cut, last = ho[1], hc[1] + 1, #hs
  swap(1, last)
  hs[last], ho[last], hc[last] = nil, nil, nil
  sift_down(1)
  dropped = dropped + 1
  cuts[o] = cut
  offer(o, cut)
end
local now = now_s()
for o, cut in pairs(cuts) do
  redis.call('ZREMRANGEBYRANK', qkey(o), -cut, -1)
  schedule(o, now)
end
if dropped > 0 then
  redis.call('HINCRBY', k('%(stats)s'), 'queued', -dropped)
  redis.call('HINCRBY', k('%(stats)s'), 'dropped/buffer', dropped)
end
return dropped
"""

_LUA_NAMES = {
    "queue": keys.HOST_QUEUE,
    "ready": keys.READY,
    "wait": keys.WAIT,
    "leases": keys.LEASES,
    "owned": keys.OWNED,
    "reaped": keys.REAPED,
    "procs": keys.PROCS,
    "proc": keys.PROC,
    "host": keys.HOST,
    "seen": keys.SEEN,
    "outbox": keys.OUTBOX,
    "urls": keys.URLS,
    "graph": keys.GRAPH,
    "hubs": keys.HUB_SCORES,
    "sites": keys.SITES,
    "found": keys.FOUND,
    "revisit": keys.REVISIT,
    "stats": keys.STATS,
    "recent": keys.RECENT,
    "curve": keys.CURVE,
    "census": keys.CENSUS,
    "tries": keys.TRIES,
    "curve_bucket": keys.CURVE_BUCKET,
    "url_bucket": keys.URL_BUCKET,
    "recent_len": keys.RECENT_LEN,
    "host_unit": HOST_UNIT,
    "host_cap": HOST_CAP,
    "try_unit": TRY_UNIT,
}


def _lua(body: str) -> str:
    return (_LUA_COMMON + body) % _LUA_NAMES


class RedisFrontier:
    """The frontier of one crawl in Redis (see the module docstring for order and layout).

    Built by :class:`~focused.schedulers.scheduler.FrontierScheduler` and the frontier
    pipeline from settings; constructed directly in tests and benchmarks.
    """

    def __init__(
        self,
        client: redis.Redis,
        crawl: str,
        *,
        host_delay: float = 1.0,
        host_concurrency: int = 1,
        lease_s: float = 300.0,
        max_tries: int = 3,
        seen_buckets: int = 4096,
        retries: int = 8,
        graph: bool = True,
        revisits: bool = False,
        max_url_length: int = 2083,
        seen_cache: int = 262_144,
        on_retry: Callable[[int, Exception], None] | None = None,
        on_lost: Callable[[FocusedError], None] | None = None,
        on_rejected: Callable[[BadURL], None] | None = None,
    ):
        if not 1 <= max_tries <= MAX_TRIES_PACKABLE:
            raise ValueError(f"max_tries must be 1..{MAX_TRIES_PACKABLE}, got {max_tries}")
        if host_concurrency < 1:
            raise ValueError(f"host_concurrency must be >= 1, got {host_concurrency}")
        self.client = client
        self.crawl = crawl
        self.prefix = keys.prefix(crawl)  # the crawl's own keys (shard 0's on a cluster)
        self.shards = crawl_shards(client, crawl, create=True)
        self.host_delay = host_delay
        self.host_concurrency = host_concurrency
        self.lease_s = lease_s
        self.max_tries = max_tries
        self.seen_buckets = seen_buckets
        self.retries = retries
        self.graph = graph  # store each classified page's cross-server links (the crawl graph)
        self.revisits = revisits  # keep relevant pages in ``revisit`` (maintenance mode)
        self.max_url_length = max_url_length  # longer URLs are not queued (0: no limit)
        self.on_rejected = on_rejected  # called with each URL refused (``BadURL``)
        # Fingerprints this process's calls have put in the seen set (emptied when it holds more
        # than ``seen_cache``): a link to one of them is not sent again, Redis has it seen.
        self.seen_cache = seen_cache
        self.known: set[int] = set()
        # This process's id in the crawl's heartbeat records (``proc:<id>``), "-" for none: with
        # one, its leases go back untouched soon after its record expires (a killed process).
        self.owner = "-"
        self.on_retry = on_retry
        self.on_lost = on_lost
        self.lost = False  # the connection stayed lost through all retries
        self.changes = 0  # writes by this object that may have made a host ready
        # Leases this object popped and has not acknowledged or released -> the local time
        # they run out (the scheduler of a best-N-first crawl waits for a whole batch).
        self.held: dict[str, float] = {}
        self._first_shard = 0  # the shard the next pop draws from first
        # Outbox entries (fetch orders) this process has delivered, by shard: deleted with its
        # next call there (``complete``) or at its close (``settle``).
        self._delivered: dict[int, list[str]] = {}
        self._redeliver_at = 0.0  # when the pop next looks for outbox entries of gone processes
        self._push = client.register_script(_lua(_LUA_PUSH))
        self._pop = client.register_script(_lua(_LUA_POP))
        self._complete = client.register_script(_lua(_LUA_COMPLETE))
        self._release = client.register_script(_lua(_LUA_RELEASE))
        self._raise = client.register_script(_lua(_LUA_RAISE))
        self._requeue = client.register_script(_lua(_LUA_REQUEUE))
        self._drop_worst = client.register_script(_lua(_LUA_DROP_WORST))
        self._back_off = client.register_script(_lua(_LUA_BACK_OFF))

    def _call(self, script: Any, args: list[Any], shard: int = 0) -> Any:
        """Run one of the scripts on one shard (its keys' prefix in KEYS routes it there)."""
        if script is not self._pop and script is not self._drop_worst:
            self.changes += 1
        fixed = [f"{shard} {len(self.shards)}", self.host_concurrency, self.host_delay]
        prefix = [self.shards.prefixes[shard]]
        return self.retrying(lambda: script(keys=prefix, args=[*fixed, *args]))

    def retrying(self, call: Callable[[], Any]) -> Any:
        """Run a Redis call with retries; a connection that stays lost is reported, then raised."""
        retries = 0 if self.lost else self.retries  # reported once; after that, fail fast
        try:
            return retrying(call, retries=retries, on_retry=self.on_retry)
        except FocusedError as exc:
            if not self.lost and self.on_lost is not None:
                self.on_lost(exc)
            self.lost = True
            raise

    def _link_args(
        self, links: Iterable[Link], edges: bytearray | None = None, page_origin: str = ""
    ) -> tuple[dict[int, list[Any]], list[int]]:
        """ARGV 6-tuples per link (origin, depth, rest, packed score, seen bucket, seen member)
        by the shard of the link's host, and the fingerprints of the links in them.

        Only clean URLs (:func:`focused.urls.clean_url`, at most ``max_url_length`` long) are
        queued; the others go to ``on_rejected``. Links this process has stored before
        (``known``) are left out. With ``edges``, the links to servers other than
        ``page_origin`` are appended to it as crawl-graph records (every one of them).
        """
        by_shard: dict[int, list[Any]] = {}
        sent: list[int] = []
        for link in links:
            try:
                url = clean_url(link.url, self.max_url_length)
            except BadURL as exc:
                if self.on_rejected is not None:
                    self.on_rejected(exc)
                continue
            fp = _fingerprint(url)
            link_origin = url_origin(url)
            if edges is not None and link_origin != page_origin:
                edges += EDGE_RECORD.pack(host_hash(link_origin), fp)
            if fp in self.known:
                continue
            sent.append(fp)
            rest = url[len(link_origin) + 1 :]  # its path after the "/" every clean URL has
            # The seen set: a bucket, and a member that fits a signed 64-bit integer.
            bucket, member = fp % self.seen_buckets, (fp >> 1) // self.seen_buckets
            if link.anchor:
                rest += "\t" + " ".join(link.anchor.split())[:ANCHOR_CHARS]
            depth = f"{link.depth}+{link.redirects}" if link.redirects else link.depth
            args = by_shard.setdefault(self.shards.of_host(link_origin), [])
            args += (link_origin, depth, rest, pack(link.score, 0, fp), bucket, member)
        return by_shard, sent

    def _remember(self, fingerprints: list[int]) -> None:
        """Add the fingerprints of a call that stored its links to ``known``."""
        self.known.update(fingerprints)
        if len(self.known) > self.seen_cache:
            self.known.clear()

    def _push_shards(self, by_shard: dict[int, list[Any]], parent: int = 0) -> int:
        """Push link arguments (:meth:`_link_args`) to their shards; returns how many were new."""
        return sum(int(self._call(self._push, [parent, *a], j)) for j, a in by_shard.items())

    def push_many(self, links: Iterable[Link]) -> int:
        """Queue the URLs not seen before in this crawl; returns how many were new."""
        by_shard, sent = self._link_args(links)
        if not by_shard:
            return 0
        new = self._push_shards(by_shard)
        self._remember(sent)
        return new

    def pop_ready(self, n: int) -> Pop:
        """Lease up to ``n`` of the best URLs whose hosts may be hit now.

        On several shards the pop draws from one shard after another, starting from the next
        one each call, until it has ``n``: every shard gets its turn first. The order within a
        shard is the frontier's; across shards it is fair, not global. Queued and in-flight
        counts are those of the shards it drew from (all of them when it leases fewer than n).
        """
        shards = len(self.shards)
        if shards > 1 and time.monotonic() >= self._redeliver_at:
            self.redeliver()
        popped: list[tuple[int, str, str]] = []  # (shard, lease, parent's url: record)
        queued = in_flight = 0
        wakes: list[float] = []
        for step in range(shards):
            shard = (self._first_shard + step) % shards
            args = [n - len(popped), self.lease_s, self.max_tries, self.owner]
            out = self._call(self._pop, args, shard)
            queued, in_flight = queued + int(out[0]), in_flight + int(out[1])
            if out[2]:
                wakes.append(float(out[2]))
            popped += [(shard, out[i], out[i + 1]) for i in range(3, len(out), 2)]
            if len(popped) >= n:
                break
        self._first_shard = (self._first_shard + 1) % shards
        deadline = time.monotonic() + self.lease_s
        leased = []
        for lease, record in self._parent_records(popped):
            self.held[lease] = deadline
            origin, packed, _, member = lease.split(" ", 3)
            depth, parent, rest, anchor = split_member(member)
            revisit = depth.startswith("r")
            depth, _, redirects = depth.removeprefix("r").partition("+")
            parent_url, parent_relevance, parent_category = url_record(record)
            tries, score = unpack_score(int(packed))
            leased.append(
                Leased(
                    origin + rest,
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
            and self.shards.of_order(parent) != shard
        ]
        records = [record for _, _, record in popped]
        if other:

            def read() -> list[Any]:  # a new pipeline per try: a failed execute empties it
                pipe = self.client.pipeline(transaction=False)
                for _, parent in other:
                    pipe.hget(self.shards.record_key(keys.URLS, parent), parent)
                return pipe.execute()

            for (i, _), record in zip(other, self.retrying(read), strict=True):
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
        """Acknowledge a leased URL and queue its page's out-links, in one call.

        ``kind`` is ``page`` (fetched and classified), ``bad`` (fetched, not usable),
        ``redirect`` (a redirect, whose target is among ``links``) or ``failed`` (no response).
        A page's relevance goes into the crawl's harvest curve and its ``category`` (any label)
        into the census, and its links to other servers into the crawl graph. A relevant page
        counts for its site and its parent page, and a ``hub_score`` is kept (seed 004's lists
        of good sites and hubs, :mod:`focused.distill.lists`). Returns (fetch order, 0 for failed;
        new URLs queued).

        On several shards the call goes to the shard of the URL's host with the links to hosts
        of that shard; the links to other shards' hosts are kept in its ``outbox`` in the same
        call, then pushed to their shards (one call each), and the outbox entry is deleted
        with this process's next call there: a process killed in between loses none of them
        (:meth:`redeliver`).
        """
        edges = None
        if kind == "page" and self.graph:
            edges = bytearray(PAGE_RECORD.pack(fingerprint(url)))
        by_shard, sent = self._link_args(links, edges, url_origin(url))
        home = self.shards.of_host(lease.split(" ", 1)[0])
        own = by_shard.pop(home, [])
        args = [lease, url, kind, repr(float(relevance)), int(relevant), category or "-"]
        hub = "" if hub_score is None else repr(float(hub_score))
        outbox = json.dumps(by_shard, separators=(",", ":")) if by_shard else ""
        done = self._delivered.pop(home, [])
        extra = [bytes(edges or b""), hub, "1" if self.revisits else "", outbox, " ".join(done)]
        order, new = self._call(self._complete, [*args, *extra, *own], home)
        order, new = int(order), int(new)
        if order:  # 0: failed (no links), or a lease that did not parse (links not pushed)
            if by_shard:
                new += self._push_shards(by_shard, order)
                self._delivered.setdefault(home, []).append(str(order))
            self._remember(sent)
        self.held.pop(lease, None)
        return order, new

    def redeliver(self) -> int:
        """Push the links kept in the shards' outboxes by processes that are gone (their
        heartbeat expired; for one without a heartbeat, after the lease time) to their shards,
        and delete those entries; returns how many entries were delivered. Pushing links
        twice is harmless (the seen set), so an entry delivered by two processes at once is
        too. The pop runs it every ``REDELIVER_S`` seconds on a cluster.
        """
        self._redeliver_at = time.monotonic() + REDELIVER_S
        delivered = 0
        for shard, prefix in enumerate(self.shards.prefixes):
            entries = self.retrying(lambda p=prefix: self.client.hgetall(p + keys.OUTBOX))
            if not entries:
                continue
            seconds, micros = self.retrying(self.client.time)
            owners = sorted({entry.split(" ", 1)[0] for entry in entries.values()} - {"-"})
            alive = self.retrying(lambda p=prefix, o=owners: self._alive(p, o))
            for order, entry in entries.items():
                owner, at, payload = entry.split(" ", 2)
                if owner == "-":
                    gone = seconds + micros / 1e6 - float(at) > self.lease_s
                else:
                    gone = not alive[owner] and order not in self._delivered.get(shard, ())
                if not gone:
                    continue
                by_shard = {int(j): args for j, args in json.loads(payload).items()}
                self._push_shards(by_shard, int(order))
                self.retrying(lambda p=prefix, o=order: self.client.hdel(p + keys.OUTBOX, o))
                delivered += 1
        return delivered

    def _alive(self, prefix: str, ids: list[str]) -> dict[str, bool]:
        """Process id -> whether its heartbeat record on a shard is still there."""
        pipe = self.client.pipeline(transaction=False)
        for process_id in ids:
            pipe.exists(prefix + keys.PROC + process_id)
        return dict(zip(ids, map(bool, pipe.execute()), strict=True)) if ids else {}

    def settle(self) -> None:
        """Delete the outbox entries this process has delivered (at its close)."""
        for shard, done in list(self._delivered.items()):
            prefix = self.shards.prefixes[shard]
            self.retrying(lambda p=prefix, d=done: self.client.hdel(p + keys.OUTBOX, *d))
            del self._delivered[shard]

    def _by_shard(self, leases: Iterable[str]) -> dict[int, list[str]]:
        """Leases (or anything starting with an origin and a space) grouped by shard."""
        grouped: dict[int, list[str]] = {}
        for lease in leases:
            grouped.setdefault(self.shards.of_host(lease.split(" ", 1)[0]), []).append(lease)
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
        self._call(self._back_off, [origin, max(0.0, seconds)], self.shards.of_host(origin))

    def holding(self) -> int:
        """Leases this object popped that are neither acknowledged, released nor run out.

        A lease whose item never reached the frontier pipeline (dropped on the way) counts
        until its deadline: by then the frontier has its URL back anyway.
        """
        now = time.monotonic()
        for lease in [lease for lease, deadline in self.held.items() if deadline <= now]:
            del self.held[lease]
        return len(self.held)

    def _per_shard(self, script: Any, triples: list[tuple[str, str, int]]) -> int:
        """Run a script of (origin, member, packed) triples on each shard with its hosts'."""
        grouped: dict[int, list[Any]] = {}
        for origin, member, packed in triples:
            grouped.setdefault(self.shards.of_host(origin), []).extend((origin, member, packed))
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
        hosts = []
        for prefix in self.shards.prefixes:
            start, pattern = len(prefix + keys.HOST_QUEUE), keys.pattern(prefix, keys.HOST_QUEUE)
            hosts += self.retrying(
                lambda p=pattern, s=start: [
                    key[s:] for key in self.client.scan_iter(match=p, count=1000)
                ]
            )
        return hosts

    def host_queue(self, origin: str) -> list[tuple[str, int, str]]:
        """(member, packed order, URL) of every URL queued for one host, best first."""
        key = self.shards.host_prefix(origin) + keys.HOST_QUEUE + origin
        queue = self.retrying(lambda: self.client.zrange(key, 0, -1, withscores=True))
        return [(member, int(packed), origin + split_member(member)[2]) for member, packed in queue]

    def raise_to(self, score: float, queued: Iterable[tuple[str, str, int]]) -> int:
        """Raise queued URLs, given as (origin, member, packed order), to ``score``.

        Their tries are kept; URLs already at ``score`` or better, and URLs no longer queued
        (popped meanwhile), are left as they are. Returns how many moved, also counted as
        ``reboosted`` in the crawl's stats.
        """
        triples = []
        for origin, member, packed in queued:
            tries, _ = unpack_score(packed)
            triples.append((origin, member, pack(score, tries, packed & HASH_MASK)))
        return self._per_shard(self._raise, triples)

    def drop_worst(self, max_queued: int) -> int:
        """Drop the worst queued URLs beyond ``max_queued``, for good; returns how many.

        They stay seen, so they are never queued again, and are counted as ``dropped/buffer``
        in the crawl's stats. One atomic call: processes trimming at once never go below
        ``max_queued``. Its work grows with the URLs queued (module doc), so call it when
        the queue is capped, not on an unbounded one. On several shards each keeps its share
        of ``max_queued`` (its worst beyond that go).
        """
        shards = len(self.shards)
        return sum(
            int(self._call(self._drop_worst, [max_queued // shards + (j < max_queued % shards)], j))
            for j in range(shards)
        )

    def counts(self) -> dict[str, float]:
        """The crawl's counters (queued, seen, fetched, relevant, ...) and URLs in flight,
        added up over its shards."""

        def read() -> list[Any]:  # a new pipeline per try: a failed execute empties it
            pipe = self.client.pipeline(transaction=False)
            for prefix in self.shards.prefixes:
                pipe.hgetall(prefix + keys.STATS)
                pipe.zcard(prefix + keys.LEASES)
            return pipe.execute()

        replies = self.retrying(read)
        counts = add_up(replies[::2])
        counts["in_flight"] = sum(replies[1::2])
        return counts

    def __len__(self) -> int:
        """URLs queued or leased."""
        counts = self.counts()
        return int(counts.get("queued", 0) + counts["in_flight"])
