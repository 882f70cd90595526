"""Serve an offline web bundle over HTTP on 127.0.0.1, as a proxy and by Host header.

The crawler reaches the bundle's made-up hosts exactly as it would reach a real web: either
through ``http_proxy=http://127.0.0.1:PORT`` (the client sends the absolute URL as the request
target) or by sending ``Host: www.x.web.test`` to this port. Every response is logged as one
JSON line ``{"time", "method", "url", "status", "bytes"}`` (``url`` as the bundle spells it when
the page is there, else as requested; ``bytes`` of body sent): the record of what a crawl
fetched, which the evaluation tools score.

Run it in a process of its own (:class:`ServedWeb`, or ``focused web serve BUNDLE``)
so that the crawler's event loop and the server's do not share a core.

A record with a ``behaviour`` (see :mod:`focused.lab.webs.bundle`) is answered by the named
behaviour instead of its fixed body, with its status and headers. ``{{next}}`` and ``{{n}}``
in its body are filled in where a behaviour says so. The families (``chain``, ``calendar``,
``session-ids``, ``repeat``, ``deep``, ``facets``, ``soft-404``) also answer every URL that
starts with the record's URL, and ``farm`` every host under the record's host, so that their
pages never end; their log entries name the URL requested. Each keeps no state per request and
writes only as fast as the client reads, and a stream stops when its client goes away:

- ``chain``: ``URL/N`` (N the path's trailing number, 0 if none) redirects to ``URL/N+1``.
- ``calendar``: ``URL?month=N`` is the page for month N, ``{{next}}`` the link to month N+1.
- ``session-ids``: each ``{{next}}`` of the page links to the record's URL with a session id
  never given before, alternately ``;jsessionid=ID`` and ``?sid=ID`` (``{{n}}``: the id asked).
- ``repeat``: the page for any path (``{{n}}``: the path), whose relative links resolve under
  it, so that ``/bikes/`` with ``href="bikes/"`` leads to ``/bikes/bikes/`` and on.
- ``deep``: ``URL/level-1/level-2/.../level-N/`` is page N (``{{n}}``), ``{{next}}`` page N+1.
- ``facets``: ``URL?QUERY`` is the page of the filters ``QUERY`` (``{{n}}``); each ``{{next}}``
  adds one more filter (a colour, size, brand or order, each in turn).
- ``soft-404``: any path is a 200 "not found" page (``{{n}}``: the path) whose each ``{{next}}``
  links to another path under the record's URL, made from a hash of the URL asked.
- ``farm``: host ``sN.HOST`` (any N) is page N of a link farm (``{{n}}``: N); its ``links``
  (5) ``{{next}}`` link to the new hosts ``s(kN+1).HOST`` to ``s(kN+k).HOST``; its robots.txt
  is a 404. A record on an IP literal makes the farm's hosts the addresses of its /64 (IPv6)
  or /24 (IPv4) network, host N the one N + 1 past the network's address (:func:`farm_host`).
  Farm records with ``of`` (their number) and ``at`` (0 to ``of`` - 1) are one farm spread
  over their hosts' names: host N is under the name of the record ``at`` N mod ``of``.
- ``endless``: the body, repeated for ever (chunked, no Content-Length).
- ``huge``: the body, repeated to ``size`` bytes (Content-Length says so from the start).
- ``slow``: the body one byte (``chunk`` bytes) every ``interval`` seconds (2), after the
  headers (slow loris); with a ``size``, the body is repeated to ``size`` bytes, which
  Content-Length says unless ``chunked`` is 1 (then none does).
- ``truncated``: Content-Length says ``missing`` bytes (1000) more than the body, which is
  sent before the connection is closed.
- ``gzip-bomb``: ``size`` zero bytes (1 GiB), gzip'd (about 1 KB per MiB on the wire), sent
  with ``Content-Encoding: gzip``; the record's body is unused.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import html
import ipaddress
import itertools
import json
import os
import re
import selectors
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any
from urllib.parse import parse_qs, urlsplit

from aiohttp import web
from aiohttp.web_request import BaseRequest
from aiohttp.web_server import Server

import focused
from focused.errors import FocusedError
from focused.lab.webs.bundle import Bundle, Page, url_key

LOG_FLUSH_S = 1.0
_NOT_FOUND = (
    b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>"
    b"<body><h1>Not Found</h1></body></html>\n"
)
_NOT_FOUND_HEADERS: tuple[tuple[str, str], ...] = (("Content-Type", "text/html; charset=utf-8"),)
_READY = re.compile(r"^serving (\d+) pages on http://[^:]+:(\d+) ")
# Request lines this long are read, so that a crawler's overlong URL is seen (and logged), not
# refused by the HTTP parser before the log.
MAX_REQUEST_LINE = 1 << 20
FAMILIES = ("chain", "calendar", "session-ids", "repeat", "deep", "facets", "soft-404")
DOMAINS = ("farm",)  # a record's host and every host under it (or in its IP network)
FARM_NETWORK = {4: 24, 6: 64}  # the prefix of a farm on IP literals, by IP version
# The filters a facets page adds, each in turn, and their values.
FACETS = {
    "color": ("red", "blue", "black", "white", "green", "silver"),
    "size": ("xs", "s", "m", "l", "xl"),
    "brand": ("velo", "pedalo", "rouleur", "grimpeur"),
    "sort": ("price", "name", "rating", "newest"),
}
STREAMS = ("endless", "huge", "slow", "truncated", "gzip-bomb")
_CHUNK = 1 << 16
_MIB = 1 << 20
_NUMBER = re.compile(r"(\d+)$")


class WebServer:
    """An aiohttp server answering every request from one bundle's precomputed pages.

    ``counters`` counts ``requests``, ``bytes`` (of bodies sent) and ``status/<code>``.
    """

    def __init__(
        self,
        bundle: Bundle,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: str | Path | None = None,
    ) -> None:
        if not _is_loopback(host):
            raise FocusedError(f"offline webs are served on the loopback only, not on {host}")
        self.bundle, self.host, self.port = bundle, host, port
        self.log_path = Path(log_path) if log_path is not None else None
        self.counters: collections.Counter[str] = collections.Counter()
        # (url_key prefix, record) of the families, longest first: a page not in the bundle may
        # be one of theirs. Empty for a bundle without behaviours, whose path stays one lookup.
        self._families: list[tuple[str, Page]] = []
        self._domains: list[tuple[str, Page]] = []  # (".host", record) of the domains
        self._networks: list[tuple[IPNetwork, Page]] = []  # a farm on IP literals
        self._spread: dict[int, str] = {}  # a spread farm's names, by their records' "at"
        for page in bundle.pages.values():
            if page.behaviour is not None:
                _check_behaviour(page)
                if page.behaviour["name"] in FAMILIES:
                    self._families.append((url_key(page.url), page))
                elif page.behaviour["name"] in DOMAINS:
                    host = urlsplit(url_key(page.url)).hostname or ""
                    network = farm_network(host)
                    if network is not None:
                        self._networks.append((network, page))
                    else:
                        self._domains.append((f".{host}", page))
                    if "at" in page.behaviour:
                        self._spread[int(page.behaviour["at"])] = host
                elif page.behaviour["name"] == "gzip-bomb":  # made now, not while a client waits
                    gzip_bomb(_bomb_size(page))
        self._families.sort(key=lambda family: -len(family[0]))
        self._session_ids = itertools.count(1)
        self._behaviours: dict[str, Callable[..., Awaitable[tuple[web.StreamResponse, int]]]] = {
            "chain": self._chain,
            "calendar": self._calendar,
            "session-ids": self._session_ids_page,
            "repeat": self._repeat,
            "deep": self._deep,
            "facets": self._facets,
            "soft-404": self._soft_404,
            "farm": self._farm,
            "endless": self._endless,
            "huge": self._huge,
            "slow": self._slow,
            "truncated": self._truncated,
            "gzip-bomb": self._gzip_bomb,
        }
        self._log_lines: list[str] = []
        self._log_file: IO[str] | None = None
        self._flusher: asyncio.Task[None] | None = None
        self._server: Server | None = None
        self._listener: asyncio.Server | None = None

    async def start(self) -> int:
        """Listen, start the log flusher and return the bound port."""
        if self.log_path is not None:
            self._log_file = self.log_path.open("a", encoding="utf-8")
            self._flusher = asyncio.create_task(self._flush_every_second())
        self._server = Server(self._handle, access_log=None, max_line_size=MAX_REQUEST_LINE)
        try:
            self._listener = await asyncio.get_running_loop().create_server(
                self._server, self.host, self.port, backlog=1024
            )
        except OSError as exc:
            await self.stop()
            raise FocusedError(f"cannot listen on {self.host}:{self.port} ({exc})") from exc
        self.port = self._listener.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        """Close connections, then write and close the log."""
        if self._listener is not None:
            self._listener.close()
            if self._server is not None:
                await self._server.shutdown(1.0)
            await self._listener.wait_closed()
        if self._flusher is not None:
            self._flusher.cancel()
        if self._log_file is not None:
            self._flush_log()
            self._log_file.close()
            self._log_file = None

    async def _handle(self, request: BaseRequest) -> web.StreamResponse:
        # A proxy client sends the absolute URL as the target, a plain client the path and a
        # Host header (read directly: request.host looks up this machine's name if it is missing).
        started = time.time()
        target = request.raw_path
        url = f"http://{request.headers.get('Host', '')}{target}" if target[:1] == "/" else target
        page = self._page(url)
        if page is not None and page.behaviour is not None:
            response, sent = await self._behaviours[page.behaviour["name"]](request, page, url)
            if page.behaviour["name"] not in FAMILIES + DOMAINS:
                url = page.url
            self._count(started, request.method, url, response.status, sent)
            return response
        if page is None:
            status, headers, body = 404, _NOT_FOUND_HEADERS, _NOT_FOUND
        else:
            status, headers, body, url = page.status, page.headers, page.body, page.url
        sent = 0 if request.method == "HEAD" else len(body)
        self._count(started, request.method, url, status, sent)
        return web.Response(status=status, headers=headers, body=body)

    def _page(self, url: str) -> Page | None:
        try:
            key = url_key(url)
        except ValueError:  # e.g. a bad port or IPv6 literal: no such page
            return None
        page = self.bundle.pages.get(key)
        if page is None and self._families:
            page = next((p for prefix, p in self._families if key.startswith(prefix)), None)
        if page is None and (self._domains or self._networks):
            host = urlsplit(key).hostname or ""
            page = next((p for domain, p in self._domains if host.endswith(domain)), None)
            address = _ip(host)
            if page is None and address is not None:
                page = next((p for net, p in self._networks if address in net), None)
        return page

    def _count(self, started: float, method: str, url: str, status: int, sent: int) -> None:
        self.counters["requests"] += 1
        self.counters["bytes"] += sent
        self.counters[f"status/{status}"] += 1
        if self._log_file is not None:
            entry = {
                "time": round(started, 3),
                "method": method,
                "url": url,
                "status": status,
                "bytes": sent,
            }
            self._log_lines.append(json.dumps(entry, ensure_ascii=False))

    # The behaviours: each returns its response and the body bytes it sent.

    async def _chain(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        number = _NUMBER.search(urlsplit(url).path)
        location = f"{page.url.rstrip('/')}/{int(number[1]) + 1 if number else 1}"
        return _fill(request, page, location, number[1] if number else "0", Location=location)

    async def _calendar(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        try:
            month = int(parse_qs(urlsplit(url).query).get("month", ["0"])[0])
        except ValueError:  # not a number, or too long a one
            month = 0
        return _fill(request, page, f"{page.url}?month={month + 1}", str(month))

    async def _session_ids_page(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        asked = re.search(r"(?:jsessionid|sid)=(\w+)", url)
        spellings = itertools.cycle((";jsessionid=", "?sid="))
        links = (f"{page.url}{spelling}{next(self._session_ids):08X}" for spelling in spellings)
        return _fill(request, page, links, asked[1] if asked else "")

    async def _repeat(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        return _fill(request, page, "", urlsplit(url).path)

    async def _deep(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        path = urlsplit(url).path
        level = len(re.findall(r"/level-\d+", path))
        return _fill(request, page, f"{path.rstrip('/')}/level-{level + 1}/", str(level))

    async def _facets(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        query = urlsplit(url).query
        n = query.count("=")
        links = (
            f"{page.url}?{query}{'&' if query else ''}{key}={values[n % len(values)]}"
            for key, values in itertools.cycle(FACETS.items())
        )
        return _fill(request, page, links, query)

    async def _soft_404(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        links = (
            f"{page.url.rstrip('/')}/{zlib.crc32(f'{url} {i}'.encode()):08x}"
            for i in itertools.count()
        )
        return _fill(request, page, links, urlsplit(url).path)

    async def _farm(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        parts = urlsplit(url)
        if parts.path == "/robots.txt":
            sent = 0 if request.method == "HEAD" else len(_NOT_FOUND)
            return web.Response(status=404, headers=_NOT_FOUND_HEADERS, body=_NOT_FOUND), sent
        host = parts.hostname or ""
        domain = urlsplit(page.url).hostname or ""
        network, address = farm_network(domain), _ip(host)
        if network is not None and address is not None:
            n = int(address) - int(network.network_address) - 1
        else:
            number = _NUMBER.search(host.partition(".")[0])
            n = int(number[1]) if number else 0
        k = int(_behaviour(page).get("links", 5))
        spread = [self._spread[at] for at in sorted(self._spread)] or [domain]
        links = (
            f"http://{farm_host(spread[m % len(spread)], m)}/" for m in itertools.count(k * n + 1)
        )
        return _fill(request, page, links, str(n))

    async def _endless(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        response = web.StreamResponse(status=page.status, headers=page.headers)
        return response, await _stream(request, response, itertools.repeat(_block(page.body)))

    async def _huge(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        size = int(_behaviour(page)["size"])
        response = web.StreamResponse(status=page.status, headers=page.headers)
        response.content_length = size
        block = _block(page.body)
        whole, rest = divmod(size, len(block))
        blocks = itertools.chain(itertools.repeat(block, whole), [block[:rest]])
        return response, await _stream(request, response, blocks)

    async def _slow(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        response = web.StreamResponse(status=page.status, headers=page.headers)
        size = int(_behaviour(page).get("size", len(page.body)))
        if _behaviour(page).get("chunked"):
            response.enable_chunked_encoding()
        else:
            response.content_length = size
        interval = float(_behaviour(page).get("interval", 2.0))
        chunk = max(1, int(_behaviour(page).get("chunk", 1)))
        whole = (page.body * (size // max(1, len(page.body)) + 1))[:size]
        body = (whole[at : at + chunk] for at in range(0, size, chunk))
        return response, await _stream(request, response, body, interval)

    async def _truncated(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        response = web.StreamResponse(status=page.status, headers=page.headers)
        response.content_length = len(page.body) + int(_behaviour(page).get("missing", 1000))
        sent = await _stream(request, response, [page.body])
        if request.transport is not None:
            request.transport.close()
        return response, sent

    async def _gzip_bomb(
        self, request: BaseRequest, page: Page, url: str
    ) -> tuple[web.StreamResponse, int]:
        body = gzip_bomb(_bomb_size(page))
        headers = {**dict(page.headers), "Content-Encoding": "gzip"}
        response = web.Response(status=page.status, headers=headers, body=body)
        return response, 0 if request.method == "HEAD" else len(body)

    async def _flush_every_second(self) -> None:
        while True:
            await asyncio.sleep(LOG_FLUSH_S)
            self._flush_log()

    def _flush_log(self) -> None:
        if self._log_lines and self._log_file is not None:
            lines, self._log_lines = self._log_lines, []
            self._log_file.write("\n".join(lines) + "\n")
            self._log_file.flush()


def _behaviour(page: Page) -> Mapping[str, Any]:
    """The behaviour of a page that has one (only such pages are answered by a behaviour)."""
    assert page.behaviour is not None
    return page.behaviour


def _check_behaviour(page: Page) -> None:
    """Refuse, naming the page, a behaviour that is not one of ours or options that are not
    numbers (``huge`` needs its ``size``): a bad record fails at start, not in a request."""
    assert page.behaviour is not None
    name = page.behaviour["name"]
    if name not in FAMILIES + DOMAINS + STREAMS:
        known = ", ".join(FAMILIES + DOMAINS + STREAMS)
        raise FocusedError(f"{page.url}: no behaviour {name!r} (known: {known})")
    options = [value for key, value in page.behaviour.items() if key != "name"]
    numbers = all(
        isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in options
    )
    if not numbers or (name == "huge" and not isinstance(page.behaviour.get("size"), int)):
        raise FocusedError(f"{page.url}: behaviour {name!r} takes numbers (huge: a size in bytes)")


def _fill(
    request: BaseRequest,
    page: Page,
    links: str | Iterator[str],
    number: str,
    **headers: str,
) -> tuple[web.StreamResponse, int]:
    """The record's body with ``{{n}}`` and each ``{{next}}`` filled in (a link each, or one),
    escaped for HTML: they come from the URL asked."""
    parts = page.body.replace(b"{{n}}", html.escape(number).encode()).split(b"{{next}}")
    nexts = itertools.repeat(links) if isinstance(links, str) else links
    body = parts[0] + b"".join(html.escape(next(nexts)).encode() + part for part in parts[1:])
    response = web.Response(status=page.status, headers={**dict(page.headers), **headers})
    response.body = body
    return response, 0 if request.method == "HEAD" else len(body)


def _block(unit: bytes) -> bytes:
    """``unit`` repeated to about 64 KiB (at least once): the chunk a stream writes."""
    return unit * max(1, _CHUNK // max(1, len(unit)))


async def _stream(
    request: BaseRequest,
    response: web.StreamResponse,
    chunks: Iterable[bytes],
    interval: float = 0.0,
) -> int:
    """Send the headers, then ``chunks`` as fast as the client reads them (``interval`` seconds
    apart if given) until they end or the client goes away; return the bytes sent."""
    await response.prepare(request)
    sent = 0
    if request.method == "HEAD":
        return sent
    try:
        for chunk in chunks:
            await response.write(chunk)
            sent += len(chunk)
            if interval:
                await asyncio.sleep(interval)
    except ConnectionError:  # the client went away: so does the stream
        pass
    return sent


def _bomb_size(page: Page) -> int:
    return int(_behaviour(page).get("size", 1 << 30))


@functools.cache
def gzip_bomb(size: int) -> bytes:
    """``size`` zero bytes gzip'd (whole MiB): one compressed MiB repeated, which a full flush
    makes independent of the ones before, so a GiB costs its CRC only (about half a second)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(_MIB)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    n = max(1, size // _MIB)
    crc = 0
    for _ in range(n):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # gzip, deflate, no name, no time
    trailer = struct.pack("<II", crc, (n * _MIB) & 0xFFFFFFFF)
    return header + block * n + compressor.flush() + trailer


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def farm_network(name: str) -> IPNetwork | None:
    """The network of a farm on IP literals (``2a05:d018::/64``, or an address of it), or None
    for a farm under a host name."""
    address = _ip(name.split("/")[0].strip("[]"))
    if address is None:
        return None
    return ipaddress.ip_network(f"{address}/{FARM_NETWORK[address.version]}", strict=False)


def farm_host(name: str, n: int) -> str:
    """Host ``n`` of a link farm under ``name``: ``sN.NAME``, or for an IP network the address
    ``n`` + 1 past the network's (bracketed, for IPv6)."""
    network = farm_network(name)
    if network is None:
        return f"s{n}.{name}"
    address = network[n + 1]
    return f"[{address}]" if address.version == 6 else str(address)


def farm_record_url(name: str) -> str:
    """The URL of a farm's record: its name's, or its network's address."""
    network = farm_network(name)
    if network is None:
        return f"http://{name}/"
    address = network.network_address
    return f"http://[{address}]/" if address.version == 6 else f"http://{address}/"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def serve(
    bundle: Bundle,
    host: str = "127.0.0.1",
    port: int = 0,
    log_path: str | Path | None = None,
) -> WebServer:
    """Start serving ``bundle`` in the running event loop; ``await server.stop()`` to end."""
    server = WebServer(bundle, host=host, port=port, log_path=log_path)
    await server.start()
    return server


def serve_forever(
    bundle_path: str | Path, port: int = 0, log_path: str | Path | None = None
) -> None:
    """Load a bundle and serve it on 127.0.0.1 until SIGINT or SIGTERM.

    Prints the ready line ``serving N pages on http://127.0.0.1:PORT (proxy and Host header)``
    first, so that a parent process can read the port.
    """
    bundle = Bundle.load(bundle_path)
    asyncio.run(_serve_until_signal(bundle, port, log_path))


async def _serve_until_signal(bundle: Bundle, port: int, log_path: str | Path | None) -> None:
    server = await serve(bundle, port=port, log_path=log_path)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    print(
        f"serving {len(bundle.pages)} pages on http://{server.host}:{server.port}"
        " (proxy and Host header)",
        flush=True,
    )
    try:
        await stopping.wait()
    finally:
        await server.stop()
    print(
        f"served {server.counters['requests']} requests, {server.counters['bytes']} bytes",
        flush=True,
    )


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """Return the entries of a served log (complete lines only: the server may be writing)."""
    text = Path(path).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines(keepends=True) if line.endswith("\n")]


class ServedWeb:
    """A bundle served by a child process on 127.0.0.1, for tests and the demo.

    ``with ServedWeb(path, log_path=log) as web:`` then crawl through ``web.proxy``. The child is
    ``focused web serve``; its ready line gives the port. Leaving the block stops it
    with SIGTERM, which writes out the log.
    """

    def __init__(
        self,
        bundle_path: str | Path,
        *,
        port: int = 0,
        log_path: str | Path | None = None,
        startup_timeout: float = 60.0,
    ) -> None:
        self.bundle_path, self.port = Path(bundle_path), port
        self.log_path = Path(log_path) if log_path is not None else None
        self.startup_timeout = startup_timeout
        self.n_pages = 0
        self._proc: subprocess.Popen[str] | None = None

    @property
    def proxy(self) -> str:
        """The proxy URL, for ``http_proxy`` or a client's ``proxies``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> int:
        """Start the child, wait for its ready line and return the port."""
        cmd = [
            sys.executable,
            "-m",
            "focused.cli.main",
            "web",
            "serve",
            str(self.bundle_path),
            "--port",
            str(self.port),
        ]
        if self.log_path is not None:
            cmd += ["--log", str(self.log_path)]
        package_root = str(Path(focused.__file__).resolve().parent.parent)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                p for p in (package_root, os.environ.get("PYTHONPATH")) if p
            ),
        }
        with tempfile.TemporaryFile("w+", encoding="utf-8") as stderr:
            self._proc = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env
            )
            line = self._ready_line()
            match = _READY.match(line)
            if match is None:
                self.stop()
                stderr.seek(0)
                why = stderr.read().strip().splitlines() or [line.strip() or "no ready line"]
                raise FocusedError(f"web server for {self.bundle_path} did not start: {why[-1]}")
        self.n_pages, self.port = int(match[1]), int(match[2])
        return self.port

    def _ready_line(self) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._proc.stdout, selectors.EVENT_READ)
            if not selector.select(self.startup_timeout):
                return f"no ready line after {self.startup_timeout:g} s"
        return self._proc.stdout.readline()

    def stop(self) -> int | None:
        """Stop the child (SIGTERM, then kill after 10 s) and return its exit code."""
        if self._proc is None:
            return None
        proc, self._proc = self._proc, None
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        return proc.returncode

    def __enter__(self) -> ServedWeb:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
