"""Every Redis key of a crawl, in one place.

All keys of crawl ``NAME`` live under the prefix ``focused:{NAME}:`` so that several crawls share
one Redis server and ``focused status NAME`` reads one crawl alone. The braces are a Redis
Cluster hash tag: on a cluster every key under the prefix is in one hash slot, and the frontier's
keys are spread over shards ``focused:{NAME/j}:`` (:mod:`focused.store.shards` says which keys are
per shard). The Lua scripts build their keys from the same names (:mod:`focused.store.scripts`
declares the ones a script uses as Lua locals).

=====================  ======  ============================================================
key (after prefix)     type    what it holds
=====================  ======  ============================================================
``q:<origin>``         zset    queued URLs of one host; member ``"<depth> <parent> <path>"`` (path
                               without its leading ``/``; depth
                               ``r0`` for a known page queued again: maintenance mode; ``3+2``
                               for depth 3 reached through 2 redirects)
                               (then TAB and the anchor text, when the link model is on),
                               score = packed (num_tries, 1-R, hash); see ``frontier/queue.py``
``ready``              zset    hosts that may be hit now; score = best queued URL's packed score
                               plus the host's crawled count
``wait``               zset    hosts with queued URLs waiting out their politeness delay;
                               score = unix time they become ready
``leases``             zset    popped, unacknowledged URLs ``"<origin> <score> <owner> <member>"``
                               (owner: the leasing process's id, ``-`` for none); score = lease
                               deadline (unix time)
``owned:<id>``         set     the leases of one process (with a heartbeat): a live process
                               puts them back when the process's ``proc:<id>`` has expired
``reaped``             string  unix time leases of gone processes were last looked for
``epoch``              string  a token the crawl's first process set: every frontier call of a
                               crawl process names it, and fails if it is gone (state lost)
``hung``               hash    "origin member" of a URL taken back from a hung process -> how
                               many times (at the second it fails)
``h:<origin>``         hash    one host: ``i`` URLs leased and not yet acknowledged, ``n`` unix time
                               it may be hit again, ``c`` URLs fetched (the seed-000 server
                               priority); with budgets ``d`` its registered domain, ``s`` popped
                               from before, ``b`` why it is held, ``u`` the private suffix of
                               the Public Suffix List it is under (``netlify.app``), if any,
                               ``f`` with the farm budget its lineage (``fl:``), if any;
                               a hash per host, so each is a few bytes to read
``held``               zset    hosts over a budget, with queued URLs, served only when no other
                               host is ready or waiting; score as in ``ready``
``d:<domain>``         hash    one registered domain (budgets on): ``p`` URLs fetched from its
                               hosts, ``h`` its hosts popped from
``ps:<suffix>``        hash    one private suffix of the Public Suffix List (``github.io``;
                               budgets on): ``h`` the hosts under it popped from
``fl:<lineage>``       hash    the hosts first seen on pages that spread like a link farm's, from
                               the second such page of a chain on (budgets on; named by the
                               registered domain of the chain's first): ``h`` those popped from
``robots:<origin>``    string  a host's robots.txt for every process of the crawl: ``1`` then its
                               body (at most 512 KiB), or ``0`` for one that could not be
                               fetched (everything allowed); expires after a day
``seen:<bucket>``      set     64-bit URL fingerprints (integer members: Redis intset encoding)
``outbox``             hash    on a cluster: fetch order -> "<owner> <time> <links>" of a page whose
                               links to hosts of other shards are being pushed there (JSON;
                               delivered again if its process dies first)
``shards``             string  on a cluster: the hash tags of the crawl's shards, space-separated
``url:<n // 512>``     hash    fetch order n -> URL of every fetched page (parents in the feed),
                               for classified pages ``"<url> TAB <R> TAB <category>"``
``graph:<n // 512>``   hash    fetch order n -> the page's links to other servers (binary; see
                               ``graph.py``): the crawl graph the distiller reads
``distill``            hash    the distiller's last run: pages, edges, seconds, reboosted, its
                               top hubs and authorities (JSON ``[[url, score], ...]``)
``distill:lock``       string  held by the one process distilling (expires: a crash frees it)
``hubscore``           zset    fetch order -> Badia et al. 2006's hub score (links to other sites
per word),
                               for pages at or above FOCUSED_HUB_MIN_SCORE
``sites``              hash    origin -> relevant pages fetched from it (Badia et al. 2006's good
sites)
``found``              hash    fetch order -> relevant pages reached by a link from that page
``revisit``            zset    URL -> R of relevant pages not revisited yet in this round of
                               maintenance mode; ``revisit:next`` those revisited, for the next
``hubs``               zset    fetch order -> hub score of the distiller's last run (top 1,000)
``maintain``           hash    maintenance mode: fetched count at its last round
``stats``              hash    counters: queued, seen, fetched, relevant, failed, hosts (crawled
                               from), found (the pages' found shares added up: the relevant
                               pages found as the estimate of what is left counts them), ...
``recent``             list    R of the last 1,000 classified pages (or up to 100 more: it is
                               trimmed every 100), newest first (harvest and mean relevance of
                               the last pages; ``meta`` has the threshold)
``curve``              hash    per 100 classified pages (bucket b): ``relevance:b`` sum of R,
                               ``relevant:b`` relevant pages (the harvest curve)
``census``             hash    category -> classified pages whose best category it is
``tries``              hash    num_tries -> URLs acknowledged after that many failed tries
``calibration``        hash    the link scores' calibration: per score bucket b of the leases
                               (``score_bucket``, 20 buckets), ``n<b>`` URLs acknowledged and
                               ``r<b>`` those that became new relevant pages (their found
                               shares added up)
``coverage``           hash    the last estimate of what is left to find: pages, found, left,
                               low, high, next (relevant expected among the best 100 queued),
                               queued, hosts, sampled, time, below (pages since the estimate
                               stayed under the covered threshold, or -1)
``coverage:log``       list    every estimate as JSON, oldest first (the last 1,000), with its
                               queued URLs and calibration counts per score bucket
``coverage:lock``      string  held by the one process estimating (a lease)
``linklog``            list    the online link model's training log, one entry per classified
                               page: label, estimate, parent R and category, URL, anchor
``meta``               hash    the crawl's description: focus, topic file, relevance threshold,
                               alarm limits, the settings its judge is made from (JSON)
``checksums``          hash    text checksum -> fingerprint of the first URL fetched with that
                               text (Badia et al. 2006's duplicates; ``pipelines/duplicates.py``)
``modified``           hash    URL fingerprint -> Last-Modified of its latest fetch (duplicates)
``known``              hash    URL fingerprint -> "<checksum> TAB <Last-Modified>" of pages fetched
                               by earlier runs (kept by ``focused reset --keep-known``)
``warc``               hash    URL fingerprint -> "<record id> <WARC-Date> <payload digest>" of its
                               latest WARC response record, for revisit records
                               (``extensions/warc.py``; kept by ``focused reset --keep-known``)
``start_urls``         list    seed URLs pushed into the crawl (``focused seed``; scrapy-redis's
                               ``redis_key``), moved into the frontier by a running process
``start_urls:lock``    string  held by the one process moving pushed seeds (expires)
``procs``              zset    process id -> unix time of its last heartbeat
``proc:<id>``          hash    one process: host, pid, started, state and its figures (expires)
``scrapy``             hash    crawl-wide Scrapy stats: every process's counters added up
``genetic``            hash    Zhang and Yuan 2012's genetic strategy: pages (edge-log records),
last (pages at
                               the last generation), generations and the last one's figures
``genetic:edges:<b>``  string  the genetic strategy's edge log: records of classified pages appended
                               in order, 512 a bucket (``strategies/genetic.py``)
``genetic:lock``       string  held by the one process running a generation (expires)
``isp:energy``         hash    InfoSpiders (``strategies/infospiders.py``): agent id -> energy
                               of every live agent
``isp:w:<id>``         string  one agent's link-scorer weights (JSON array of floats)
``isp:next``           string  the last agent id given out (INCR)
``isp:by:<bucket>``    hash    URL fingerprint // buckets -> "<agent> <link features>" of the
                               agent that queued it; ``-`` once it is fetched
``isp:events``         hash    births, deaths, reseeds of the crawl's agents
``hmm``                hash    Batsakis et al. 2009's HMM strategy (``strategies/hmm.py``): the
fitted model's
                               arrays (binary), its version and the logged count at its fit
                               (``fitted``); ``logged``, the pages logged for training
``hmm:log``            list    the HMM's training log: one binary record per classified page (its
                               fingerprint, its parent's, relevant, its top term counts)
``hmm:alpha:<b>``      hash    URL fingerprint (8 bytes) -> the page's forward vector α (float32 a
                               state), bucket b = fingerprint % 1024
``hmm:lock``           string  held by the one process fitting the HMM (expires)
``learn:pages``        list    a light topic's learning sample: one JSON entry per classified
                               page (R, depth, the start of its text), newest first, trimmed to
                               the last ``FOCUSED_LEARN_SAMPLE`` (``store/learning.py``)
``learned``            hash    the topic learned from it: ``generation``, ``pages`` (fetched at
                               the refit), ``time``, ``top`` (JSON: its top words),
                               ``positive``, ``negative``, ``refused`` (refits refused as drift)
``learned:examples``   string  the last refit's examples (zlib-compressed JSON: texts, labels),
                               which every process fits its own copy from
``learn:lock``         string  held by the one process refitting the topic (expires)
``render:seen``        hash    host -> its pages that had little text until the browser rendered
                               them (FOCUSED_RENDER auto; ``store/render.py``)
``render:hosts``       set     hosts whose pages go straight to the browser, for every process
``near:b:<n>``         hash    near-copies' LSH buckets (``store/nearcopies.py``): band key (the
                               band's number and 6 bytes of the hash of its MinHash values; the
                               hash's first 2 bytes are n) -> id of the first page indexed with it;
                               small hashes, so that Redis keeps each as a listpack
``near:pages``         hash    page id (1, 2, ...) -> its packed MinHash signature, then its URL
=====================  ======  ============================================================
"""

import re

PREFIX = "focused:{{{crawl}}}:"
HOST_QUEUE = "q:"
READY = "ready"
WAIT = "wait"
LEASES = "leases"
OWNED = "owned:"
REAPED = "reaped"
EPOCH = "epoch"
HUNG_RECLAIMS = "hung"
HOST = "h:"
HELD = "held"
DOMAIN = "d:"
PRIVATE_SUFFIX = "ps:"
LINEAGE = "fl:"
ROBOTS = "robots:"
SEEN = "seen:"
OUTBOX = "outbox"
SHARDS = "shards"
URLS = "url:"
GRAPH = "graph:"
DISTILL = "distill"
HUB_SCORES = "hubscore"
SITES = "sites"
FOUND = "found"
REVISIT = "revisit"
REVISIT_NEXT = "revisit:next"
HUBS = "hubs"
MAINTAIN = "maintain"
DISTILL_LOCK = "distill:lock"
STATS = "stats"
RECENT = "recent"
CURVE = "curve"
CENSUS = "census"
TRIES = "tries"
CALIBRATION = "calibration"
COVERAGE = "coverage"
COVERAGE_LOG = "coverage:log"
COVERAGE_LOCK = "coverage:lock"
META = "meta"
LINK_LOG = "linklog"
CHECKSUMS = "checksums"
MODIFIED = "modified"
KNOWN = "known"
WARC = "warc"
START_URLS = "start_urls"
START_URLS_LOCK = "start_urls:lock"
PROCS = "procs"
PROC = "proc:"
SCRAPY_STATS = "scrapy"
HMM = "hmm"
HMM_LOG = "hmm:log"
HMM_ALPHA = "hmm:alpha:"
HMM_LOCK = "hmm:lock"
AGENT_ENERGY = "isp:energy"
AGENT_WEIGHTS = "isp:w:"
AGENT_IDS = "isp:next"
QUEUED_BY = "isp:by:"
AGENT_EVENTS = "isp:events"
GENETIC = "genetic"
GENETIC_EDGES = "genetic:edges:"
GENETIC_LOCK = "genetic:lock"
LEARN_PAGES = "learn:pages"
LEARNED = "learned"
LEARNED_EXAMPLES = "learned:examples"
LEARN_LOCK = "learn:lock"
RENDER_SEEN = "render:seen"
RENDER_HOSTS = "render:hosts"
NEAR_BUCKETS = "near:b:"
NEAR_PAGES = "near:pages"

URL_BUCKET = 512
RECENT_LEN = 1000
CURVE_BUCKET = 100
HMM_ALPHA_BUCKETS = 1024


# A crawl's name: it is part of every key of the crawl (the topic file's ``name``, or
# FOCUSED_CRAWL), so it keeps to characters that need no quoting anywhere.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def prefix(crawl: str) -> str:
    """The key prefix of one crawl."""
    return PREFIX.format(crawl=crawl)


def _escape(text: str) -> str:
    return text.replace("[", "\\[").replace("*", "\\*").replace("?", "\\?")


def pattern(key_prefix: str, start: str = "") -> str:
    """A SCAN pattern matching every key under ``key_prefix`` (a crawl's or a shard's, or a
    key name under one: ``q:`` for the host queues) that starts with ``start`` (a key name
    above, free of glob characters)."""
    return _escape(key_prefix) + start + "*"


def crawl_patterns(crawl: str) -> list[str]:
    """SCAN patterns matching every key of one crawl, its shards' included, and nothing of any
    other crawl (a crawl name has no ``/``)."""
    name = _escape(crawl)
    return [PREFIX.format(crawl=name) + "*", PREFIX.format(crawl=name + "/*") + "*"]
