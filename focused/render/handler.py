"""scrapy-playwright's download handler, one browser per process with bounded pages.

Scrapy builds a handler for each scheme; :meth:`RenderHandler.from_crawler` gives http and
https the same one, so a process runs one Chromium. At most ``FOCUSED_RENDER_PAGES`` pages
are open in it at once (other rendered requests wait for a page); every
``FOCUSED_RENDER_CONTEXT_PAGES`` pages the next ones open in a fresh browser context, and the
last context is closed once its pages are, so the caches and storage a long crawl leaves in
the browser stay bounded. Requests without ``meta["playwright"]`` go to Scrapy's own HTTP
handler, as scrapy-playwright's do.

The whole browser context is guarded, not only the pages the crawl opens: every request of
the browser is asked :class:`focused.render.guard.SubRequestGuard` first (the pages' routes,
and the context's for what they do not see), and each hop of its redirects too
(:mod:`focused.render.redirects`); its WebSockets are asked the guard; service workers are
blocked; a page a script opens (``window.open``, a link with a target) is closed and its
requests refused (counted in ``focused/render/popups``); Chromium's own host resolver refuses
``localhost`` and the non-public IP literals (:func:`focused.render.guard.resolver_rules`).

Each page is bounded in time: navigation, wait and content together get
``FOCUSED_RENDER_DEADLINE`` seconds; past it the browser is killed (a page's script may have
taken its renderer for good) and started again for the next page, and the page fails
(:class:`~focused.middlewares.failures.RenderDeadline`, a bad page ``render_deadline``,
``focused/render/deadline``). A page the browser did not end on at an http(s) URL (a
navigation that failed into ``chrome-error://``, a download) fails too
(:class:`~focused.middlewares.failures.BrowserFailed`, a bad page ``render``), and so does a
page whose rendered HTML is over ``DOWNLOAD_MAXSIZE`` (a bad page ``too_big``), as a plain fetch
would. V8's heap of a page is bounded (``--max-old-space-size``) in :mod:`focused.render.setup`.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from contextlib import suppress
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import psutil
from playwright.async_api import Error as PlaywrightError
from scrapy.exceptions import DownloadCancelledError
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from focused.middlewares.addresses import proxy_hosts
from focused.middlewares.failures import BrowserFailed, RenderDeadline
from focused.render.guard import SCHEMES, SubRequestGuard, resolver_rules
from focused.render.redirects import HopByHopRoute

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from playwright.async_api import Page, Route
    from playwright.async_api import Request as BrowserRequest
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy_playwright.handler import BrowserContextWrapper

logger = logging.getLogger(__name__)

_handlers: weakref.WeakKeyDictionary[Any, RenderHandler] = weakref.WeakKeyDictionary()

DEADLINE = "focused/render/deadline"
POPUPS = "focused/render/popups"
RESTARTS = "focused/render/browser_restarts"
# How long a browser that is closing, or killed, is waited for before it is killed, or left.
CLOSE_WAIT_S = 10.0


class RenderHandler(ScrapyPlaywrightDownloadHandler):
    """See the module docstring."""

    lazy = False  # built with the crawler: its browser driver starts with the engine

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        s = crawler.settings
        self.abort_request = SubRequestGuard.from_crawler(crawler)
        self.pages = asyncio.Semaphore(s.getint("FOCUSED_RENDER_PAGES"))
        self.context_pages = s.getint("FOCUSED_RENDER_CONTEXT_PAGES")
        self.deadline = s.getfloat("FOCUSED_RENDER_DEADLINE")
        self.maxsize = s.getint("DOWNLOAD_MAXSIZE")
        self.max_hops = s.getint("REDIRECT_MAX_TIMES")
        self.timeout_ms = s.getfloat("DOWNLOAD_TIMEOUT") * 1000
        # Behind a proxy the browser's own network stack goes through it, redirects included,
        # and the proxy refuses what the operator refuses: Playwright's fetch would tunnel
        # plain http through CONNECT, which proxies mostly refuse.
        self.hop_by_hop = "proxy" not in self.config.launch_options
        rules = resolver_rules(self.abort_request.allowed, proxy_hosts())
        args = [*self.config.launch_options.get("args", ()), f"--host-resolver-rules={rules}"]
        self.config.launch_options["args"] = args
        self.own: weakref.WeakSet[Page] = weakref.WeakSet()  # the pages the crawl opened
        self.rendered = 0
        self.closed = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderHandler:
        """The crawler's one handler, for every scheme it is set for."""
        if crawler not in _handlers:
            _handlers[crawler] = cls(crawler)
        return _handlers[crawler]

    async def _download_request(self, request: Request, spider: Spider | None = None) -> Response:
        async with self.pages:
            request.meta["playwright_context"] = f"render-{self.rendered // self.context_pages}"
            self.rendered += 1
            try:
                response = await asyncio.wait_for(
                    super()._download_request(request, spider), self.deadline
                )
            except TimeoutError:
                self.stats.inc_value(DEADLINE)
                await self._restart_browser()
                raise RenderDeadline(
                    f"not rendered within FOCUSED_RENDER_DEADLINE ({self.deadline:g} s); the "
                    "browser was restarted"
                ) from None
            finally:
                await self._close_spent()
        if urlsplit(response.url).scheme not in SCHEMES:
            raise BrowserFailed(f"the browser ended on {response.url[:100]}, not on a web page")
        if self.maxsize and len(response.body) > self.maxsize:
            raise DownloadCancelledError(
                f"the rendered page has {len(response.body)} bytes, over DOWNLOAD_MAXSIZE "
                f"({self.maxsize})"
            )
        return response

    async def _create_browser_context(
        self, name: str, context_kwargs: dict | None, spider: Spider | None = None
    ) -> BrowserContextWrapper:
        """A context whose service workers are blocked, whose every request and WebSocket
        the guard is asked, and whose pages opened by scripts are closed."""
        kwargs = {**(context_kwargs or {}), "service_workers": "block"}
        wrapper = await super()._create_browser_context(name, kwargs, spider)
        await wrapper.context.route("**", self._route_context)
        await wrapper.context.route_web_socket("**", self.abort_request.websocket)
        return wrapper

    async def _create_page(self, request: Request, spider: Spider) -> Page:
        page = await super()._create_page(request, spider)
        self.own.add(page)
        page.on("popup", self._close_popup)
        return page

    def _popup(self, request: BrowserRequest) -> Page | None:
        """The page a script opened that ``request`` is of, if it is of one."""
        try:
            page = request.frame.page
        except PlaywrightError:  # a service worker's request: of no page
            return None
        return None if page in self.own else page

    async def _close_popup(self, page: Page) -> None:
        """Close a page that a page of the crawl opened (its requests are refused)."""
        self.stats.inc_value(POPUPS)
        with suppress(PlaywrightError):
            await page.close()

    async def _route_context(self, route: Route, request: BrowserRequest) -> None:
        """The route of the requests no page route sees (a popup's, a worker's): those of a
        popup refused, the others asked the guard and sent on as a page's are."""
        if self._popup(request) is not None or await self.abort_request(request):
            with suppress(PlaywrightError):
                await route.abort("blockedbyclient")
            return
        if self.hop_by_hop:
            hops = HopByHopRoute(
                route, request, self.abort_request, max_hops=self.max_hops,
                timeout_ms=self.timeout_ms,
            )  # fmt: skip
            await hops.continue_()
        else:
            await route.continue_()

    def _make_request_handler(
        self, *args: Any, **kwargs: Any
    ) -> Callable[[Route, BrowserRequest], Awaitable[None]]:
        """scrapy-playwright's route handler, whose requests go hop by hop past the guard
        unless the browser goes through a proxy."""
        handler = super()._make_request_handler(*args, **kwargs)
        if not self.hop_by_hop:
            return handler
        guard = self.abort_request

        async def hop_by_hop(route: Route, request: BrowserRequest) -> None:
            hops = HopByHopRoute(
                route, request, guard, max_hops=self.max_hops, timeout_ms=self.timeout_ms
            )
            await handler(hops, request)

        return hop_by_hop

    async def _close_spent(self) -> None:
        """Close the contexts that new pages no longer open in, once they have none open."""
        now = f"render-{self.rendered // self.context_pages}"
        for name, wrapper in list(self.context_wrappers.items()):
            if name != now and not wrapper.context.pages:
                with suppress(PlaywrightError):
                    await wrapper.context.close()

    async def _restart_browser(self) -> None:
        """Kill the browser (its pages, with the one past its deadline); scrapy-playwright
        starts another for the next page when it sees this one gone."""
        browser = getattr(self, "browser", None)
        if browser is None:
            return
        gone = asyncio.Event()
        browser.on("disconnected", lambda _: gone.set())
        killed = kill_browsers()
        self.stats.inc_value(RESTARTS)
        logger.warning(
            "Killed the browser (%(n)d processes): a page was not rendered within "
            "FOCUSED_RENDER_DEADLINE (%(deadline)g s); a new one starts for the next page",
            {"n": killed, "deadline": self.deadline},
        )
        with suppress(TimeoutError):
            await asyncio.wait_for(gone.wait(), CLOSE_WAIT_S)

    async def close(self) -> None:
        """Close once, though Scrapy closes the handler of each scheme it serves; a browser
        that does not close in time (a page's script holding it) is killed."""
        if self.closed:
            return
        self.closed = True
        try:
            await asyncio.wait_for(super().close(), CLOSE_WAIT_S)
        except TimeoutError:
            kill_browsers()


def kill_browsers() -> int:
    """Kill the browsers this process started (the children of its Playwright driver), with
    their renderers; returns how many processes were killed."""
    killed = 0
    for driver in psutil.Process().children():
        with suppress(psutil.Error):
            if "run-driver" not in driver.cmdline():
                continue
            for browser in driver.children():
                for process in [*browser.children(recursive=True), browser]:
                    with suppress(psutil.Error):
                        process.kill()
                        killed += 1
    return killed
