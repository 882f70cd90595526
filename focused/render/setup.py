"""The settings a crawl that renders pages runs with: scrapy-playwright's download handler for
http and https (it hands requests without ``meta["playwright"]`` to Scrapy's own handler), the
browser it launches, and the middleware that picks the pages it fetches.

Each is set at add-on priority, so ``settings.py`` and ``-s`` still override any of them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING
from urllib.request import getproxies

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

HANDLER = "focused.render.handler.RenderHandler"
MIDDLEWARE = "focused.render.pages.RenderMiddleware"
# After HttpCompressionMiddleware (590), RedirectMiddleware (600) and RetryMiddleware (550) in
# the responses' order: it sees a final, decoded page.
MIDDLEWARE_ORDER = 540

# What Chromium needs to run headless in a container or a VM without a display, what it would
# otherwise fetch on its own (updates, sync, field trials, QUIC to Google's servers) or connect
# to ahead of a page's requests (DNS prefetch), and a bound on a page's JavaScript heap (MiB).
JS_HEAP_MB = 512
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--metrics-recording-only",
    "--dns-prefetch-disable",
    f"--js-flags=--max-old-space-size={JS_HEAP_MB}",
]


def launch_options(browser: str) -> dict[str, object]:
    """Playwright's launch options for the Chromium at ``browser``: headless, without the
    sandbox as root (the sandbox cannot start there), through the environment's proxy as
    Scrapy's own requests go."""
    args = list(CHROMIUM_ARGS)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")
    options: dict[str, object] = {"executable_path": browser, "headless": True, "args": args}
    proxies = getproxies()
    server = proxies.get("http") or proxies.get("https")
    if server:
        proxy = {"server": server}
        if proxies.get("no"):
            proxy["bypass"] = proxies["no"]
        options["proxy"] = proxy
    return options


def use_browser(settings: BaseSettings) -> None:
    """Set the crawl up to render pages (the add-on calls it when FOCUSED_RENDER is not never)."""
    for scheme in ("http", "https"):
        settings["DOWNLOAD_HANDLERS"].setdefault(scheme, HANDLER)
    settings["DOWNLOADER_MIDDLEWARES"].setdefault(MIDDLEWARE, MIDDLEWARE_ORDER)
    settings.set(
        "PLAYWRIGHT_LAUNCH_OPTIONS",
        launch_options(settings.get("FOCUSED_RENDER_BROWSER")),
        priority="addon",
    )
    pages = settings.getint("FOCUSED_RENDER_PAGES")
    settings.set("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT", pages, priority="addon")
    # The context being used and the one it replaced, until the last page of that one closes.
    settings.set("PLAYWRIGHT_MAX_CONTEXTS", 2, priority="addon")
    # A page waits for the browser as long as a plain fetch would wait for its server.
    timeout_ms = settings.getfloat("DOWNLOAD_TIMEOUT") * 1000
    settings.set("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT", timeout_ms, priority="addon")
