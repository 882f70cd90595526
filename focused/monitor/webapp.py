"""What the web pages of ``focused`` (the dashboard, the labelling page) share: an aiohttp app
that answers only the Host names it was started for (:mod:`focused.monitor.hosts`), its page's
files read from a package's ``static/`` folder, and serving it until SIGINT or SIGTERM with a
ready line that names its URL (a parent process reads the port from it)."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import resources

from aiohttp import web
from aiohttp.typedefs import Handler

from focused.errors import FocusedError
from focused.monitor.hosts import REFUSED, is_allowed

__all__ = ["LOOPBACK", "guarded_app", "serve", "serve_files", "static_texts"]

# Bind addresses only this machine reaches: any other one is said aloud when serving.
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def guarded_app(allowed: frozenset[str]) -> web.Application:
    """An app that refuses, with 403 and one line, requests whose Host is not ``allowed``."""

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if is_allowed(request.headers.get("Host"), allowed):
            return await handler(request)
        return web.Response(status=403, text=REFUSED)

    return web.Application(middlewares=[guard])


def static_texts(package: str, names: Iterable[str]) -> dict[str, str]:
    """The named files of ``package``'s ``static/`` folder (package data, see pyproject.toml),
    read through importlib.resources, so from a wheel or a zip too."""
    static = resources.files(package) / "static"
    return {name: (static / name).read_text(encoding="utf-8") for name in names}


def serve_files(
    app: web.Application, texts: Mapping[str, str], routes: Mapping[str, tuple[str, str]]
) -> None:
    """Add a GET route for each file of ``texts``: ``routes[name]`` is its (path, content
    type). The text is read once, when the app is made."""
    for name, text in texts.items():
        path, content_type = routes[name]
        app.router.add_get(path, _serve_text(text, content_type))


def _serve_text(text: str, content_type: str) -> Handler:
    async def serve_text(request: web.Request) -> web.Response:
        return web.Response(text=text, content_type=content_type)

    return serve_text


def serve(app: web.Application, host: str, port: int, ready: Callable[[str], str]) -> None:
    """Serve ``app`` on ``host:port`` until SIGINT or SIGTERM. Once it listens, prints
    ``ready(URL)`` (URL ``http://HOST:PORT/`` with the port it got, for port 0); a port it
    cannot listen on is a FocusedError."""
    asyncio.run(_serve(app, host, port, ready))


async def _serve(app: web.Application, host: str, port: int, ready: Callable[[str], str]) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        await runner.cleanup()
        raise FocusedError(f"cannot listen on {host}:{port} ({exc})") from exc
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    shown = f"[{host}]" if ":" in host else host
    print(ready(f"http://{shown}:{runner.addresses[0][1]}/"))
    sys.stdout.flush()
    try:
        await stopping.wait()
    finally:
        await runner.cleanup()
