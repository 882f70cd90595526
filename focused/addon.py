"""The Scrapy add-on that turns a project into a focused crawler.

``ADDONS = {"focused.addon.FocusedAddon": 0}`` loads every ``FOCUSED_*`` default (from
:mod:`focused.settings.defaults`) and the components at add-on priority, so ``settings.py`` and
``-s KEY=VALUE`` still override each of them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from focused.errors import exit_on_user_error
from focused.items import FEED_FIELDS
from focused.settings import defaults
from focused.settings.check import check_settings, choice

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)
PIPELINES = {
    "focused.pipelines.classify.ClassifierPipeline": 100,
    "focused.pipelines.language.LanguagePipeline": 120,
    "focused.pipelines.nearcopies.NearCopyPipeline": 150,
    "focused.pipelines.frontier.FrontierPipeline": 200,
}


class FocusedAddon:
    @classmethod
    def update_pre_crawler_settings(cls, settings: BaseSettings) -> None:
        """The crawler process's own settings: its DNS resolver refuses non-public addresses
        (focused.middlewares.addresses), reading the same defaults as the crawlers."""
        settings.setmodule(defaults, priority="addon")
        settings.set(
            "TWISTED_DNS_RESOLVER", "focused.middlewares.addresses.AddressResolver", "addon"
        )

    def update_settings(self, settings: BaseSettings) -> None:
        settings.setmodule(defaults, priority="addon")
        # A bad value stops here with one line, before a component trips over it.
        for warning in exit_on_user_error(check_settings)(settings):
            logger.warning("%(warning)s", {"warning": warning})
        settings.set("SCHEDULER", "focused.schedulers.FrontierScheduler", priority="addon")
        # Every field of a page is exported, but for its Markdown where none is made.
        markdown = settings.getbool("FOCUSED_FEED_MARKDOWN")
        fields = [f for f in FEED_FIELDS if markdown or f != "markdown"]
        settings.set("FEED_EXPORT_FIELDS", fields, priority="addon")
        for path, order in PIPELINES.items():
            settings["ITEM_PIPELINES"].setdefault(path, order)
        settings["EXTENSIONS"].setdefault("focused.extensions.harvest.HarvestMonitor", 500)
        settings["EXTENSIONS"].setdefault("focused.extensions.distiller.Distiller", 510)
        settings["EXTENSIONS"].setdefault("focused.extensions.coverage.CoverageMonitor", 512)
        settings["EXTENSIONS"].setdefault("focused.extensions.learner.TopicLearner", 515)
        settings["EXTENSIONS"].setdefault("focused.extensions.lists.ListWriter", 520)
        settings["EXTENSIONS"].setdefault("focused.extensions.maintenance.Maintenance", 530)
        settings["EXTENSIONS"].setdefault("focused.extensions.seeds.SeedFeeder", 535)
        settings["EXTENSIONS"].setdefault("focused.extensions.seeds.SeedCheck", 536)
        settings["EXTENSIONS"].setdefault("focused.extensions.seeds.SeedRelevance", 536)
        settings["EXTENSIONS"].setdefault("focused.extensions.topicedits.TopicEdits", 537)
        settings["EXTENSIONS"].setdefault("focused.extensions.warc.WarcWriter", 540)
        settings["EXTENSIONS"].setdefault("focused.extensions.heartbeat.Heartbeat", 550)
        settings["EXTENSIONS"].setdefault("focused.extensions.outages.RedisOutages", 560)
        settings["EXTENSIONS"].setdefault("focused.extensions.memory.MemoryGiveBack", 570)
        # Local feeds written through: a killed crawl leaves every exported item in its feed.
        for scheme in ("", "file"):
            settings["FEED_STORAGES"].setdefault(
                scheme, "focused.extensions.feeds.FlushedFileFeedStorage"
            )
        # Sees a response before Scrapy's RetryMiddleware (550) retries it.
        settings["DOWNLOADER_MIDDLEWARES"].setdefault(
            "focused.middlewares.retryafter.RetryAfterMiddleware", 560
        )
        # Stops too slow bodies and backs their hosts off; sees a timeout before RetryMiddleware.
        settings["DOWNLOADER_MIDDLEWARES"].setdefault(
            "focused.middlewares.slowhosts.SlowDownloadMiddleware", 570
        )
        # Refuses non-public addresses before robots.txt (100) is asked for them.
        settings["DOWNLOADER_MIDDLEWARES"].setdefault(
            "focused.middlewares.addresses.AddressMiddleware", 50
        )
        # Scrapy's robots.txt middleware, at its place, logging a failed fetch in one line.
        settings["DOWNLOADER_MIDDLEWARES"].setdefault(
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware", None
        )
        settings["DOWNLOADER_MIDDLEWARES"].setdefault(
            "focused.middlewares.robots.RobotsTxtMiddleware", 100
        )
        # Scrapy's meta-refresh middleware, at its place, taking a page with a broken base as is.
        settings["DOWNLOADER_MIDDLEWARES"].setdefault(
            "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware", None
        )
        settings["DOWNLOADER_MIDDLEWARES"].setdefault(
            "focused.middlewares.metarefresh.MetaRefreshMiddleware", 580
        )
        # Scrapy's telnet console runs code for whoever has its password: only when asked.
        settings.set("TELNETCONSOLE_ENABLED", False, priority="addon")
        # Scrapy's remote control runs posted Python for the token in its job file (which a
        # killed crawl leaves behind): off too.
        settings.set("REMOTE_CONTROL_ENABLED", False, priority="addon")
        # Every process's Scrapy stats also added up in Redis, for the crawl-wide readers.
        settings.set("STATS_CLASS", "focused.extensions.stats.RedisStatsCollector", "addon")
        # Politeness is the frontier's (per host, across processes): Scrapy's own per-slot
        # delay and concurrency must not add to it.
        settings.set("DOWNLOAD_DELAY", 0, priority="addon")
        settings.set("CONCURRENT_REQUESTS_PER_DOMAIN", 1000, priority="addon")
        settings.set("AUTOTHROTTLE_ENABLED", False, priority="addon")
        # One item per response and synchronous pipelines: Scrapy's default of 100 parallel
        # item workers per response only costs task creation (about 1 ms of CPU a page).
        settings.set("CONCURRENT_ITEMS", 1, priority="addon")
        # Pages that need JavaScript: a browser through scrapy-playwright, only when asked for
        # (FOCUSED_RENDER never leaves the handlers alone and never imports playwright).
        if choice(settings, "FOCUSED_RENDER") != "never":
            from focused.render.setup import use_browser

            use_browser(settings)
