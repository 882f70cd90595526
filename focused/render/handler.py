"""scrapy-playwright's download handler, one browser per process with bounded pages.

Scrapy builds a handler for each scheme; :meth:`RenderHandler.from_crawler` gives http and
https the same one, so a process runs one Chromium. At most ``FOCUSED_RENDER_PAGES`` pages
are open in it at once (other rendered requests wait for a page); every
``FOCUSED_RENDER_CONTEXT_PAGES`` pages the next ones open in a fresh browser context, and the
last context is closed once its pages are, so the caches and storage a long crawl leaves in
the browser stay bounded. Every request of the browser is asked
:class:`focused.render.guard.SubRequestGuard` first. Requests without ``meta["playwright"]`` go
to Scrapy's own HTTP handler, as scrapy-playwright's do.
"""

from __future__ import annotations

import asyncio
import weakref
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from focused.render.guard import SubRequestGuard

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

_handlers: weakref.WeakKeyDictionary[Any, RenderHandler] = weakref.WeakKeyDictionary()


class RenderHandler(ScrapyPlaywrightDownloadHandler):
    """See the module docstring."""

    lazy = False  # built with the crawler: its browser driver starts with the engine

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.abort_request = SubRequestGuard.from_crawler(crawler)
        self.pages = asyncio.Semaphore(crawler.settings.getint("FOCUSED_RENDER_PAGES"))
        self.context_pages = crawler.settings.getint("FOCUSED_RENDER_CONTEXT_PAGES")
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
                return await super()._download_request(request, spider)
            finally:
                await self._close_spent()

    async def _close_spent(self) -> None:
        """Close the contexts that new pages no longer open in, once they have none open."""
        now = f"render-{self.rendered // self.context_pages}"
        for name, wrapper in list(self.context_wrappers.items()):
            if name != now and not wrapper.context.pages:
                with suppress(PlaywrightError):
                    await wrapper.context.close()

    async def close(self) -> None:
        """Close once, though Scrapy closes the handler of each scheme it serves."""
        if self.closed:
            return
        self.closed = True
        await super().close()
