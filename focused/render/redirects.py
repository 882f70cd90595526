"""The browser's redirects, hop by hop, each asked the guard first.

Playwright calls a route handler once for each request of the browser, not again for the
redirects the browser then follows on its own: a public page's script could fetch a URL that
answers 302 to ``http://127.0.0.1:6379/``, or the page itself could, and the browser would go
there past :class:`focused.render.guard.SubRequestGuard`. So a request the guard lets through is
not handed back to the browser's network stack: :class:`HopByHopRoute` fetches it through
Playwright without following redirects (``route.fetch``) and gives the browser the answer
(``route.fulfill``). A redirect's target is asked the guard; then a navigation (a page, a frame)
is sent there as a new request of the browser, routed and guarded as the first was, and any
other request (a script's fetch, a stylesheet) is followed here, hop by hop, the browser getting
the last hop's answer at the URL it asked for. A refused hop, or more than ``REDIRECT_MAX_TIMES``
of them, aborts the request as the guard's refusal does.
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from playwright.async_api import Error as PlaywrightError

if TYPE_CHECKING:
    from playwright.async_api import Request as BrowserRequest
    from playwright.async_api import Route

    from focused.render.guard import SubRequestGuard

REDIRECTS = frozenset({301, 302, 303, 307, 308})
FOLLOWED = "focused/render/subrequests/redirects"


class HopByHopRoute:
    """The route scrapy-playwright's request handler is given: it aborts as the route does, and
    ``continue_`` (with the handler's overrides of headers, method and body) fetches hop by hop
    as the module docstring says."""

    def __init__(
        self,
        route: Route,
        request: BrowserRequest,
        guard: SubRequestGuard,
        *,
        max_hops: int,
        timeout_ms: float,
    ):
        self.route, self.request, self.guard = route, request, guard
        self.max_hops, self.timeout_ms = max_hops, timeout_ms

    async def abort(self, error_code: str | None = None) -> None:
        await self.route.abort(error_code)

    async def continue_(
        self,
        *,
        headers: dict[str, str] | None = None,
        method: str | None = None,
        post_data: Any = None,
    ) -> None:
        url, method = self.request.url, method or self.request.method
        for hop in range(self.max_hops + 1):
            try:
                response = await self.route.fetch(
                    url=url,
                    method=method,
                    headers=headers,
                    post_data=post_data,
                    max_redirects=0,
                    timeout=self.timeout_ms,
                )
            except PlaywrightError:  # the server's failure, given to the browser as one
                await self._give_up("failed")
                return
            location = response.headers.get("location")
            if response.status not in REDIRECTS or not location:
                await self.route.fulfill(response=response)
                return
            await response.dispose()
            url = urljoin(url, location)
            if hop == self.max_hops or await self.guard.refuses(url):
                await self._give_up("blockedbyclient")
                return
            self.guard.stats.inc_value(FOLLOWED)
            if self.request.is_navigation_request():
                await redirect_navigation(self.route, url)
                return
            if response.status == 303 or (response.status in (301, 302) and method == "POST"):
                method, post_data = "GET", None  # as browsers do

    async def _give_up(self, error_code: str) -> None:
        with suppress(PlaywrightError):  # the page may be gone already
            await self.route.abort(error_code)


async def redirect_navigation(route: Route, url: str) -> None:
    """Send the browser's navigation to ``url`` as a new request, which its route handler sees.

    Playwright does this for the redirects of a recorded session (``route_from_har``) through a
    method of its route's implementation; without it the navigation is aborted, not followed
    past the guard."""
    redirect = getattr(getattr(route, "_impl_obj", None), "_redirect_navigation_request", None)
    if redirect is None:
        await route.abort("blockedbyclient")
        return
    await redirect(url)
