"""The labelling page: a crawl's pages, one key press to mark each good or bad.

``GET /`` is a self-contained page (``static/label.html`` with its ``label.css`` and
``label.js``; it loads nothing else, so it works offline) whose script reads
``GET /api/pages`` once: the pages (url, title, relevance, category, a snippet of the main text,
whether the feed has any), their two orders as lists of indices (:mod:`focused.label.feed`),
the crawl's boundary, the marks so far and a summary. Each mark is
``POST /api/marks {"url": URL, "mark": "good" | "bad" | null}``, answered with the new summary
(counts of good, bad and unmarked pages, good pages still needed, the topic file) once the marks
file and the topic are rewritten (:mod:`focused.label.examples`), so a mark the page
shows as saved survives a reload and a restart. Marks are written one at a time, in a worker
thread.

A mark must come as ``application/json``: another site's page in the same browser cannot send
that without asking first (a CORS preflight), which this server never grants. Like the
dashboard, it answers only the Host names it was started for (:mod:`focused.monitor.hosts`).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

from focused.label.examples import (
    MARKS,
    positives_needed,
    read_marks,
    write_examples_topic,
    write_marks,
)
from focused.label.feed import ORDERS, Page, order, snippet
from focused.monitor.hosts import allowed_hosts
from focused.monitor.webapp import LOOPBACK, guarded_app, serve, serve_files, static_texts
from focused.topic.files import Topic

__all__ = ["STATIC", "Labelling", "make_app", "run"]

# The page's files (package data, see pyproject.toml): the path each is served on, and as what.
STATIC = {
    "label.html": ("/", "text/html"),
    "label.css": ("/label.css", "text/css"),
    "label.js": ("/label.js", "text/javascript"),
}


class Labelling:
    """The pages being labelled, their marks and the folder the topic goes to.

    ``items`` are the feed's items (the text of each example), ``pages`` those listed;
    ``threshold`` is the crawl's boundary; the topic is ``out/NAME.toml`` with ``seeds``, the
    crawl's own topic ``original`` and the marked pages
    (:func:`~focused.label.examples.write_examples_topic`). Marks already kept in ``out`` are
    read back; those of pages not in this feed (marked in another) keep their examples.
    """

    def __init__(
        self,
        items: Sequence[Mapping[str, Any]],
        pages: Sequence[Page],
        threshold: float,
        out: Path,
        name: str,
        seeds: Sequence[str],
        allowed_networks: Sequence[str] = (),
        original: Topic | None = None,
    ):
        self.items, self.pages, self.threshold = items, pages, threshold
        self.out, self.name, self.seeds = out, name, seeds
        self.allowed_networks, self.original = allowed_networks, original
        self.marks = read_marks(out)
        self.urls = {page.url for page in pages}
        self.topic = self.write()

    def write(self) -> Path:
        """Rewrite the topic from the marks; its topic file."""
        return write_examples_topic(
            self.items,
            self.marks,
            self.out,
            self.name,
            self.seeds,
            allowed_networks=self.allowed_networks,
            original=self.original,
        )

    def mark(self, url: str, mark: str | None) -> None:
        """Mark the page ``url`` ("good", "bad", None: unmarked): rewrite the topic, then keep
        the mark in the marks file, what a restart reads. When either cannot be written
        (OSError), the mark is undone; the next write or start makes the topic agree again."""
        before = self.marks.get(url)
        self._set(url, mark)
        try:
            self.topic = self.write()
            write_marks(self.out, self.marks)
        except OSError:
            self._set(url, before)
            raise

    def _set(self, url: str, mark: str | None) -> None:
        if mark is None:
            self.marks.pop(url, None)
        else:
            self.marks[url] = mark

    def summary(self) -> dict[str, Any]:
        """What the page shows about the marks: counts, good pages still needed, the topic."""
        shown = [self.marks.get(page.url) for page in self.pages]
        good = shown.count("good")
        return {
            "counts": {"good": good, "bad": shown.count("bad"), "unmarked": shown.count(None)},
            "needed": positives_needed(self.out, self.original),
            "topic": str(self.topic),
        }

    def listing(self) -> dict[str, Any]:
        """``GET /api/pages`` (module doc)."""
        return {
            "name": self.name,
            "threshold": self.threshold,
            "pages": [
                {
                    "url": page.url,
                    "title": page.title,
                    "relevance": page.relevance,
                    "category": page.category,
                    "snippet": snippet(page.main_text or ""),
                    "text": page.main_text is not None,
                }
                for page in self.pages
            ],
            "orders": {how: order(self.pages, how, self.threshold) for how in ORDERS},
            "marks": {url: mark for url, mark in self.marks.items() if url in self.urls},
            **self.summary(),
        }


def _refused(status: int, problem: str) -> web.Response:
    return web.json_response({"error": problem}, status=status)


def make_app(labelling: Labelling, allowed: frozenset[str]) -> web.Application:
    """The labelling page's routes, for requests whose Host is ``allowed``."""
    writing = asyncio.Lock()

    async def pages(request: web.Request) -> web.Response:
        return web.json_response(labelling.listing())

    async def marks(request: web.Request) -> web.Response:
        if request.content_type != "application/json":
            return _refused(415, "a mark is sent as application/json")
        try:
            body = await request.json()
        except ValueError:  # not JSON, or not UTF-8
            return _refused(400, "not JSON")
        if not isinstance(body, dict) or set(body) != {"url", "mark"}:
            return _refused(400, 'expected {"url": URL, "mark": "good" | "bad" | null}')
        url, mark = body["url"], body["mark"]
        if mark is not None and mark not in MARKS:
            return _refused(400, f'a mark is "good", "bad" or null, not {mark!r}')
        if not isinstance(url, str) or url not in labelling.urls:
            return _refused(404, f"not a page of this feed: {url!r}")
        async with writing:
            try:
                await asyncio.to_thread(labelling.mark, url, mark)
            except OSError as exc:
                return _refused(500, f"cannot write {labelling.out}: {exc}")
            return web.json_response(labelling.summary())

    app = guarded_app(allowed)
    serve_files(app, static_texts(__package__, STATIC), STATIC)
    app.router.add_get("/api/pages", pages)
    app.router.add_post("/api/marks", marks)
    return app


def run(labelling: Labelling, feed: Path, host: str, port: int, allow: Iterable[str] = ()) -> int:
    """Serve the labelling page of ``labelling`` (read from ``feed``) on ``host:port`` until
    SIGINT or SIGTERM, to requests for ``host`` and the names in ``allow``.

    Prints the ready line ``labelling N pages of FEED on http://HOST:PORT/ (topic: PATH)``.
    """
    if host not in LOOPBACK:
        print(
            f"focused: the labelling page on {host} shows the crawl's pages to anyone who can "
            "reach it, and takes their marks",
            file=sys.stderr,
        )
    app = make_app(labelling, allowed_hosts(host, allow))
    pages = len(labelling.pages)
    serve(
        app,
        host,
        port,
        lambda url: f"labelling {pages} pages of {feed} on {url} (topic: {labelling.topic})",
    )
    return 0
