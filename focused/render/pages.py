"""Which pages the browser fetches: the one place that decides (``FOCUSED_RENDER``).

:class:`RenderMiddleware`, a downloader middleware, sends a page of the frontier to the browser
(``meta["playwright"]``) when FOCUSED_RENDER is always, or when its host is one the crawl
renders (:class:`focused.store.render.RenderedHosts`). Under auto it also looks at each page
fetched plainly: one whose HTML holds less than FOCUSED_RENDER_MIN_TEXT characters of visible
text and has a ``<script>`` (an application's empty root) is fetched again in the browser,
through the downloader middlewares (robots.txt, the address guard) but not the scheduler nor
the engine, so the page keeps its lease, is acknowledged once, with the rendered response, and
counts once among the responses received; if the browser fails, the plain response is kept.
A page that gained its text in the browser counts for its host in the store, and
FOCUSED_RENDER_HOST_PAGES of them flag the host for every process.

Stats: ``focused/render/pages``, by reason ``focused/render/reason/<always|little_text|host>``,
``focused/render/failed`` (a re-fetch that failed: the plain page kept),
``focused/render/hosts_flagged``.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached

from focused.items import META
from focused.links.extract import parsed
from focused.relevance.text import page_text
from focused.settings.check import choice
from focused.store.crawler import store_for
from focused.store.render import RenderedHosts

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

PAGES = "focused/render/pages"
REASON = "focused/render/reason/"
FAILED = "focused/render/failed"
FLAGGED = "focused/render/hosts_flagged"
ALWAYS, LITTLE_TEXT, HOST = "always", "little_text", "host"
# The rendering reason a request carries, for its response to be counted under.
RENDER_META = "focused_render"
# How often a process reads the hosts other processes flagged.
HOSTS_POLL_S = 5.0
# A rendered page is taken once its network has been quiet for 500 ms: a page that builds its
# text from data it fetches has it by then, where the load event comes before that data.
GOTO = {"wait_until": "networkidle"}


def little_text(response: HtmlResponse, min_text: int) -> bool:
    """Whether the page holds less than ``min_text`` characters of visible body text."""
    return len(page_text(parsed(response)[0]).text) < min_text


def built_by_scripts(response: HtmlResponse) -> bool:
    """Whether the page has a script that may build its body."""
    return bool(parsed(response)[0].xpath("//script[1]"))


class RenderMiddleware:
    """See the module docstring."""

    def __init__(
        self,
        crawler: Crawler,
        mode: str,
        hosts: RenderedHosts,
        *,
        min_text: int,
        host_pages: int,
    ):
        self.crawler = crawler
        self.stats = crawler.stats
        self.mode = mode
        self.hosts = hosts
        self.min_text = min_text
        self.host_pages = host_pages
        self.flagged: set[str] = set()
        self.polled = float("-inf")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderMiddleware:
        s = crawler.settings
        mode = choice(s, "FOCUSED_RENDER")
        if mode == "never":
            raise NotConfigured  # the default: no message, which Scrapy would log as a warning
        return cls(
            crawler,
            mode,
            RenderedHosts(store_for(crawler)),
            min_text=s.getint("FOCUSED_RENDER_MIN_TEXT"),
            host_pages=s.getint("FOCUSED_RENDER_HOST_PAGES"),
        )

    def _flagged(self, host: str) -> bool:
        """Whether ``host`` is one the crawl renders, as this process last read them."""
        now = time.monotonic()
        if now - self.polled >= HOSTS_POLL_S:
            self.polled = now
            self.flagged |= self.hosts.flagged()
        return host in self.flagged

    def process_request(self, request: Request) -> None:
        if request.meta.get("playwright") or META not in request.meta:
            return  # decided already, or not a page of the frontier (robots.txt)
        if self.mode == "always":
            self._render(request, ALWAYS)
        elif self._flagged(urlparse_cached(request).hostname or ""):
            self._render(request, HOST)

    @staticmethod
    def _render(request: Request, reason: str) -> None:
        request.meta["playwright"] = True
        request.meta["playwright_page_goto_kwargs"] = dict(GOTO)
        request.meta[RENDER_META] = reason

    async def process_response(self, request: Request, response: Response) -> Response:
        if request.meta.get("playwright"):
            reason = request.meta.get(RENDER_META)
            if "playwright" in response.flags and reason:
                self.stats.inc_value(PAGES)
                self.stats.inc_value(f"{REASON}{reason}")
            return response
        if (
            self.mode != "auto"
            or META not in request.meta
            or response.status != 200
            or not isinstance(response, HtmlResponse)
            or not little_text(response, self.min_text)
            or not built_by_scripts(response)
        ):
            return response
        again = request.replace(meta=dict(request.meta), dont_filter=True)
        self._render(again, LITTLE_TEXT)
        assert self.crawler.engine is not None
        try:
            # Through the downloader (its middlewares), not the engine: the engine would signal
            # the rendered response as received once here and once for the request it answers,
            # counting the page twice in response_received_count and CLOSESPIDER_PAGECOUNT.
            rendered = await maybe_deferred_to_future(self.crawler.engine.downloader.fetch(again))
            if not isinstance(rendered, Response):
                raise TypeError(f"the browser's fetch gave {type(rendered).__name__}")
        except Exception as exc:  # any failure of the browser: the plain page is kept
            self.stats.inc_value(FAILED)
            logger.info(
                "Could not render %(url)s (%(error)s: %(message)s); kept as fetched",
                {"url": request.url, "error": type(exc).__name__, "message": exc},
            )
            return response
        if isinstance(rendered, HtmlResponse) and not little_text(rendered, self.min_text):
            host = urlparse_cached(request).hostname or ""
            if self.hosts.rendered(host, self.host_pages):
                self.flagged.add(host)
                self.stats.inc_value(FLAGGED)
                logger.info(
                    "Rendering every page of %(host)s from now on: %(n)d of its pages had "
                    "their text only in the browser",
                    {"host": host, "n": self.host_pages},
                )
        return rendered
