"""What taking the browser's redirects hop by hop costs: CPU per rendered page, by route.

    .venv/bin/python benchmarks/render_routes.py [--pages 100] [--rounds 3]

Renders ``--pages`` pages built by scripts (the shell, script and data of ``focused web generate
--js``), served on 127.0.0.1 directly (no proxy: the case where the crawl fetches hop by hop),
in Chromium with ``FOCUSED_RENDER_PAGES`` (4) pages at once, each request asked the guard and
then either handed back to the browser's network stack (``browser``, the baseline) or fetched
by Playwright without following redirects (``hop by hop``, :mod:`focused.render.redirects`).
The two alternate for ``--rounds`` rounds in one browser. Prints, for each, seconds, pages/s and
CPU ms per page (this process, the playwright driver and Chromium's, with psutil), the medians
over the rounds, and their ratio to the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import statistics
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import psutil
from playwright.async_api import async_playwright

from focused.lab.webs.scripted import SCRIPT_PATH, _script, shell
from focused.render.guard import SubRequestGuard
from focused.render.redirects import HopByHopRoute
from focused.render.setup import launch_options

PARALLEL = 4
WORDS = [
    "cycling",
    "road",
    "race",
    "stage",
    "climb",
    "sprint",
    "peloton",
    "jersey",
    "gear",
    "wheel",
]


class Site(ThreadingHTTPServer):
    """Pages ``/page/N`` built by the offline web's script from ``/_data/page/N.json``."""

    def __init__(self) -> None:
        script = _script().encode()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                if self.path == SCRIPT_PATH:
                    body, kind = script, "text/javascript"
                elif self.path.startswith("/_data/"):
                    n = int(self.path.rsplit("/", 1)[1].split(".")[0])
                    text = " ".join(WORDS[(n + i) % len(WORDS)] for i in range(300))
                    links = "".join(f'<a href="/page/{n + i}">{i}</a> ' for i in range(1, 20))
                    html = f"<h1>Page {n}</h1><p>{text}</p><p>{links}</p>"
                    body, kind = json.dumps({"html": html}).encode(), "application/json"
                else:
                    page = self.path.rsplit("/", 1)[1]
                    body = shell(f"Page {page}", f"/_data/page/{page}.json").encode()
                    kind = "text/html; charset=utf-8"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()


class Stats(Counter[str]):
    def inc_value(self, key: str, count: int = 1) -> None:
        self[key] += count


def cpu_s() -> float:
    """CPU seconds of this process and every process below it (driver, Chromium)."""
    total = 0.0
    me = psutil.Process()
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
        except psutil.NoSuchProcess:
            continue
    return total


async def render(context: Any, urls: list[str], hop_by_hop: bool) -> None:
    guard = SubRequestGuard(Stats(), [ipaddress.ip_network("127.0.0.1/32")], resolve=False)  # type: ignore[arg-type]

    async def route(route: Any, request: Any) -> None:
        if await guard(request):
            await route.abort()
        elif hop_by_hop:
            await HopByHopRoute(route, request, guard, max_hops=20, timeout_ms=30_000).continue_()
        else:
            await route.continue_()

    pages = asyncio.Semaphore(PARALLEL)

    async def one(url: str) -> None:
        async with pages:
            page = await context.new_page()
            await page.route("**", route)
            await page.goto(url, wait_until="networkidle")
            assert "Page" in await page.inner_text("h1")
            await page.close()

    await asyncio.gather(*(one(url) for url in urls))


async def measure(pages: int, rounds: int) -> dict[str, list[tuple[float, float]]]:
    site = Site()
    results: dict[str, list[tuple[float, float]]] = {"browser": [], "hop by hop": []}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**launch_options("/usr/bin/chromium"))
        for r in range(rounds + 1):  # the first round warms the browser up, and is not counted
            for name in results:
                context = await browser.new_context()
                urls = [f"{site.url}/page/{r * 100_000 + i}" for i in range(pages)]
                cpu, start = cpu_s(), time.monotonic()
                await render(context, urls, name == "hop by hop")
                seconds, used = time.monotonic() - start, cpu_s() - cpu
                await context.close()
                if r:
                    results[name].append((seconds, used))
        await browser.close()
    site.shutdown()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results = asyncio.run(measure(args.pages, args.rounds))
    base = None
    for name, runs in results.items():
        seconds = statistics.median(s for s, _ in runs)
        ms = 1000 * statistics.median(c for _, c in runs) / args.pages
        base = base or ms
        print(
            f"{name:>10}: {seconds:5.1f} s, {args.pages / seconds:5.1f} pages/s, "
            f"{ms:6.1f} CPU ms/page ({ms / base:.2f}x the browser's own fetching)"
        )


if __name__ == "__main__":
    main()
