"""Scrapy settings of the focused project (this package's own names), and the FOCUSED_* settings:
their defaults (:mod:`~focused.settings.defaults`), the checks of their values
(:mod:`~focused.settings.check`) and their documentation, read from the defaults' comments
(:mod:`~focused.settings.docs`)."""

BOT_NAME = "focused"
SPIDER_MODULES = ["focused.spiders"]
NEWSPIDER_MODULE = "focused.spiders"
# `scrapy crawl` exits 3 when the crawl stopped because it lost Redis (focused/commands/crawl.py).
COMMANDS_MODULE = "focused.commands"
ADDONS = {"focused.addon.FocusedAddon": 0}

USER_AGENT = "focused/0.1 (a focused crawler; +https://github.com/focused-crawler)"
ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS = 16
COOKIES_ENABLED = False
RETRY_TIMES = 2
DOWNLOAD_TIMEOUT = 30
DOWNLOAD_MAXSIZE = 10 * 1024 * 1024
REDIRECT_MAX_TIMES = 5
LOG_LEVEL = "INFO"
LOGSTATS_INTERVAL = 60.0
FEED_EXPORT_ENCODING = "utf-8"
