"""``focused dashboard``: one web page for every crawl in one Redis, refreshing itself.

``GET /`` is a self-contained page (``static/dashboard.html`` with its ``dashboard.css`` and
``dashboard.js``, served by the same app, and inline SVG: it loads nothing else, so it works
offline) whose script polls ``GET /api/crawls`` every REFRESH_S seconds. That answers
``{"redis": WHERE, "crawls": [...]}``, each crawl's :func:`focused.monitor.snapshot.crawl_snapshot`
with its harvest curve thinned to at most CURVE_POINTS points. Redis is read in a worker thread, so
a slow read never stalls the server. Every figure on the page carries ``data-crawl``,
``data-figure`` and ``data-value`` (the raw value), for tests and scrapers. It answers only
the Host names it was started for (:mod:`focused.monitor.hosts`).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from focused.monitor.hosts import allowed_hosts
from focused.monitor.snapshot import crawl_snapshots
from focused.monitor.webapp import LOOPBACK, guarded_app, serve, serve_files, static_texts
from focused.store.client import RedisError

if TYPE_CHECKING:
    from focused.store.reads import Reader

REFRESH_S = 2.0
CURVE_POINTS = 300
# The page's files (package data, see pyproject.toml): the path each is served on, and as what.
STATIC = {
    "dashboard.html": ("/", "text/html"),
    "dashboard.css": ("/dashboard.css", "text/css"),
    "dashboard.js": ("/dashboard.js", "text/javascript"),
}
# Stands in the page for its config, a JSON object: <script id="config" type="application/json">.
CONFIG_MARK = "__CONFIG__"
# Keeps JSON inert inside a <script> element (no "</script>", no "<!--"), as Django's json_script.
JSON_IN_HTML = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def thin(points: list[dict[str, Any]], most: int = CURVE_POINTS) -> list[dict[str, Any]]:
    """At most about ``most`` of a curve's points, evenly spaced, the last one kept."""
    step = -(-len(points) // most)
    if step <= 1:
        return points
    kept = points[::step]
    return kept if kept[-1] is points[-1] else [*kept, points[-1]]


def make_app(reader: Reader, where: str, allowed: frozenset[str]) -> web.Application:
    """The dashboard's routes: the page, its files and its JSON, for requests whose Host is
    ``allowed``."""

    async def crawls(request: web.Request) -> web.Response:
        try:
            snapshots = await asyncio.to_thread(crawl_snapshots, reader)
        except RedisError as exc:
            return web.json_response({"error": f"cannot read {where}: {exc}"}, status=503)
        for snapshot in snapshots:
            snapshot["curve"] = thin(snapshot["curve"])
        return web.json_response({"redis": where, "crawls": snapshots})

    app = guarded_app(allowed)
    serve_files(app, static_files(), STATIC)
    app.router.add_get("/api/crawls", crawls)
    return app


def static_files() -> dict[str, str]:
    """The page's files by name, read from the package (so from a wheel or a zip too), with the
    page's config (its refresh period) set in it as JSON, never formatted into its HTML."""
    files = static_texts(__package__, STATIC)
    config = json.dumps({"refresh_ms": round(REFRESH_S * 1000)}).translate(JSON_IN_HTML)
    files["dashboard.html"] = files["dashboard.html"].replace(CONFIG_MARK, config)
    return files


def run(reader: Reader, where: str, host: str, port: int, allow: Iterable[str] = ()) -> int:
    """Serve the dashboard on ``host:port`` until SIGINT or SIGTERM, to requests for ``host``
    and the names in ``allow`` (:mod:`focused.monitor.hosts`).

    Prints the ready line ``dashboard of the crawls in WHERE on http://HOST:PORT/``.
    """
    if host not in LOOPBACK:
        print(
            f"focused: the dashboard on {host} shows the crawls to anyone who can reach it",
            file=sys.stderr,
        )
    app = make_app(reader, where, allowed_hosts(host, allow))
    serve(app, host, port, lambda url: f"dashboard of the crawls in {where} on {url}")
    return 0
