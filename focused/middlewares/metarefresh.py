"""Scrapy's meta-refresh middleware, for pages whose ``<base href>`` or refresh URL is no URL.

Scrapy's MetaRefreshMiddleware reads every HTML page's base URL, which raises on a
``<base href="http://[::1">``: the page failed as a bad page and its good links were lost.
A page whose refresh cannot be read is taken as it is, as a browser would; the spider then
resolves its links against the page (:func:`focused.spiders.focused.parsed`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares import redirect

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response


class MetaRefreshMiddleware(redirect.MetaRefreshMiddleware):
    """Registered by the add-on in place of Scrapy's, at its priority (580)."""

    # Scrapy's signature keeps its deprecated spider argument, that Scrapy 2.19 warns about.
    def process_response(  # type: ignore[override]
        self, request: Request, response: Response
    ) -> Request | Response:
        try:
            return super().process_response(request, response)
        except ValueError:  # a base or refresh URL that urljoin and w3lib refuse
            return response
