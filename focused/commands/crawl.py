"""``scrapy crawl`` with an exit code that says when the crawl stopped for want of Redis.

Scrapy's own command exits 0 whatever a crawl's finish reason, so a crawl that stopped because
it lost its Redis (reason ``focused_redis_lost``: still unreachable after
``FOCUSED_REDIS_RETRIES`` retries) looked like one that ended. The project's settings name this
package (``COMMANDS_MODULE``), so ``scrapy crawl`` in the project, and scrapyd's jobs, which
run ``scrapy crawl`` through ``scrapy.cmdline`` with the project's settings, run this command.

Exit codes: 0, the crawl ended (its frontier empty, a ``CLOSESPIDER_*`` limit, Ctrl-C); 1,
Scrapy could not start it; 2, a mistake the user can fix, in one line (a topic file, a
setting, no Redis at the start); 3, it stopped because Redis was lost or kept refusing writes;
4, an output (feed, WARC files, lists) could not be written (:mod:`focused.extensions.diskfaults`);
5, no seed could be fetched, nor any page (:class:`focused.extensions.seeds.SeedCheck`)
(:data:`EXIT_CODES`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.commands import crawl

from focused.errors import DISK_ERROR, NO_SEED, REDIS_LOST, REDIS_REFUSED, REDIS_VANISHED
from focused.extensions.diskfaults import DISK_ERRORS

if TYPE_CHECKING:
    import argparse

    from scrapy import Spider
    from scrapy.crawler import Crawler

# Finish reasons that end the command with an exit code of their own.
EXIT_CODES = {REDIS_LOST: 3, REDIS_REFUSED: 3, REDIS_VANISHED: 3, DISK_ERROR: 4, NO_SEED: 5}


class Command(crawl.Command):
    def __init__(self) -> None:
        super().__init__()
        self.crawlers: list[Crawler] = []

    def long_desc(self) -> str:
        return (
            f"{self.short_desc()}. Exit code 3 when the crawl stopped because it lost its "
            "Redis (finish reason focused_redis_lost) or Redis kept refusing writes "
            "(focused_redis_refused); 4 when an output (feed, WARC files, lists) could not "
            "be written (focused_disk_error); 5 when no seed could be fetched, nor any page "
            "(focused_no_seed)."
        )

    def _create_crawler(self, spidercls: type[Spider] | str) -> Crawler:
        crawler = super()._create_crawler(spidercls)
        self.crawlers.append(crawler)  # the process forgets it once it has run
        return crawler

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        super().run(args, opts)
        if self.exitcode:  # Scrapy's own (1: the crawl could not start)
            return
        reasons = {crawler.stats.get_value("finish_reason") for crawler in self.crawlers}
        # An output that failed as the crawl closed did so after its finish reason was set.
        if any(crawler.stats.get_value(DISK_ERRORS) for crawler in self.crawlers):
            reasons.add(DISK_ERROR)
        self.exitcode = max((EXIT_CODES.get(reason, 0) for reason in reasons), default=0)
