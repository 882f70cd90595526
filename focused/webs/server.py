"""Serve an offline web bundle over HTTP on 127.0.0.1, as a proxy and by Host header.

The crawler reaches the bundle's made-up hosts exactly as it would reach a real web: either
through ``http_proxy=http://127.0.0.1:PORT`` (the client sends the absolute URL as the request
target) or by sending ``Host: www.x.web.test`` to this port. Every response is logged as one
JSON line ``{"time", "method", "url", "status", "bytes"}`` (``url`` as the bundle spells it when
the page is there, else as requested; ``bytes`` of body sent): the record of what a crawl
fetched, which the evaluation tools score.

Run it in a process of its own (:class:`ServedWeb`, or ``python -m focused.webs.server BUNDLE``)
so that the crawler's event loop and the server's do not share a core.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import ipaddress
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from aiohttp import web
from aiohttp.web_request import BaseRequest
from aiohttp.web_server import Server

import focused
from focused.errors import FocusedError
from focused.webs.bundle import Bundle, url_key

LOG_FLUSH_S = 1.0
_NOT_FOUND = (
    b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>"
    b"<body><h1>Not Found</h1></body></html>\n"
)
_NOT_FOUND_HEADERS = (("Content-Type", "text/html; charset=utf-8"),)
_READY = re.compile(r"^serving (\d+) pages on http://[^:]+:(\d+) ")


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
        self._server = Server(self._handle, access_log=None)
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
        target = request.raw_path
        url = f"http://{request.headers.get('Host', '')}{target}" if target[:1] == "/" else target
        try:
            page = self.bundle.pages.get(url_key(url))
        except ValueError:  # e.g. a bad port or IPv6 literal: no such page
            page = None
        if page is None:
            status, headers, body = 404, _NOT_FOUND_HEADERS, _NOT_FOUND
        else:
            status, headers, body, url = page.status, page.headers, page.body, page.url
        sent = 0 if request.method == "HEAD" else len(body)
        self.counters["requests"] += 1
        self.counters["bytes"] += sent
        self.counters[f"status/{status}"] += 1
        if self._log_file is not None:
            entry = {
                "time": round(time.time(), 3),
                "method": request.method,
                "url": url,
                "status": status,
                "bytes": sent,
            }
            self._log_lines.append(json.dumps(entry, ensure_ascii=False))
        return web.Response(status=status, headers=headers, body=body)

    async def _flush_every_second(self) -> None:
        while True:
            await asyncio.sleep(LOG_FLUSH_S)
            self._flush_log()

    def _flush_log(self) -> None:
        if self._log_lines and self._log_file is not None:
            lines, self._log_lines = self._log_lines, []
            self._log_file.write("\n".join(lines) + "\n")
            self._log_file.flush()


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
    ``python -m focused.webs.server``; its ready line gives the port. Leaving the block stops it
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
            "focused.webs.server",
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``serve`` arguments: BUNDLE, --port, --log."""
    parser.add_argument("bundle", help="bundle folder or its pages.jsonl.gz")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--log", metavar="FILE", help="append one JSON line per request here")


def run(args: argparse.Namespace) -> int:
    """Serve as ``args`` say until interrupted; return the exit code."""
    serve_forever(args.bundle, port=args.port, log_path=args.log)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m focused.webs.server BUNDLE [--port N] [--log FILE]``."""
    parser = argparse.ArgumentParser(
        prog="python -m focused.webs.server",
        description="Serve an offline web bundle on 127.0.0.1 (HTTP proxy and Host header).",
    )
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except FocusedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
