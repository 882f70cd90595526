"""Cost of WARC files (focused/extensions/warc.py) per page, on Wikispeedia.

    .venv/bin/python benchmarks/warc.py [--pages 4604] [--runs 3]

Each Wikispeedia page becomes the response a crawl gets (its body and headers, and a request
with the headers Scrapy sends). Then, --runs times, interleaved, each variant handles every
page, and the median milliseconds per page (one response record and its request record) are
printed, CPU and wall clock, with the ratio to ``build`` measured in the same run:

- ``build``: the two records built by warcio (payload digest included), not written: the
  baseline;
- ``write, no gzip``: built and written by warcio uncompressed (to show gzip's share);
- ``write``: built, gzip'd and written as the extension does (:class:`WarcFiles`);
- ``write + index``: the whole of ``WarcWriter.item_scraped`` for a relevant page, as in a
  crawl: also the record's id in the crawl's ``warc`` hash, one HSET round trip to a
  redis-server on a Unix socket.

All of it runs on the crawler's reactor thread. Also printed: MB of bodies and of WARC files.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import redis
from common import redis_server
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler
from warcio.warcwriter import WARCWriter

from focused.extensions.warc import (
    WARC_VERSION,
    WarcFiles,
    WarcWriter,
    request_record,
    response_record,
    warc_date,
)
from focused.items import Page
from focused.store.crawl import CrawlStore

WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "webs" / "wikispeedia"
SENT = {  # what Scrapy's default middlewares add to a request
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Language": "en",
    "User-Agent": "focused/0.1 (a focused crawler; +https://github.com/focused-crawler)",
    "Accept-Encoding": "gzip, deflate, br, zstd",
}
MAX_SIZE = 1_000_000_000


def responses(limit: int) -> list[HtmlResponse]:
    """Wikispeedia's pages as Scrapy responses (decoded bodies, as the spider sees them)."""
    pages = []
    with gzip.open(WIKISPEEDIA / "pages.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            page = json.loads(line)
            request = Request(page["url"], headers=SENT)
            headers = {**page["headers"], "Date": "Mon, 06 Jan 2025 10:00:00 GMT"}
            body = page["body"].encode()
            pages.append(HtmlResponse(page["url"], body=body, headers=headers, request=request))
            if len(pages) == limit:
                break
    return pages


def timed(handle: Callable[[HtmlResponse, str], None], pages: list[HtmlResponse]) -> tuple:
    """(CPU ms, wall ms) per page of ``handle`` over ``pages``."""
    date = warc_date(time.time())
    cpu, wall = time.process_time(), time.perf_counter()
    for response in pages:
        handle(response, date)
    n = len(pages)
    return (time.process_time() - cpu) * 1000 / n, (time.perf_counter() - wall) * 1000 / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=0, help="pages to use (0: all)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    pages = responses(args.pages)
    work = Path(tempfile.mkdtemp(prefix="warc-bench-"))
    stats = get_crawler().stats
    with redis_server(work / "redis") as url:
        client = redis.Redis.from_url(url, decode_responses=True)

        def build(response: HtmlResponse, date: str) -> None:
            request_record(response.request)
            response_record(response, date)

        def write_plain(response: HtmlResponse, date: str) -> None:
            plain.write_request_response_pair(
                request_record(response.request), response_record(response, date)
            )

        def write(response: HtmlResponse, date: str) -> None:
            files.write_pair(request_record(response.request), response_record(response, date))

        def write_index(response: HtmlResponse, date: str) -> None:
            # no order: a relevant page's response and request records, without a metadata one
            item = Page(response.url, response.status, time.time(), relevant=True)
            writer.item_scraped(item, response)

        variants = {
            "build": build,
            "write, no gzip": write_plain,
            "write": write,
            "write + index": write_index,
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        sizes: dict[str, int] = {}
        for _ in range(args.runs):
            for name, handle in variants.items():
                folder = work / "files"
                folder.mkdir()
                info = {"software": "benchmark"}
                files = WarcFiles(folder, "bench", max_size=MAX_SIZE, info=info, stats=stats)
                store = CrawlStore(client, "bench", retries=0)
                writer = WarcWriter(files, store, keep_all=False, stats=stats)
                with (folder / "plain.warc").open("wb") as out:
                    plain = WARCWriter(out, gzip=False, warc_version=WARC_VERSION)
                    times[name].append(timed(handle, pages))
                files.close()
                sizes[name] = sum(path.stat().st_size for path in folder.iterdir())
                shutil.rmtree(folder)
                client.flushdb()
    shutil.rmtree(work)

    body_mb = sum(len(r.body) for r in pages) / 1e6
    print(f"{len(pages)} pages, {body_mb:.1f} MB of bodies; median of {args.runs} runs")
    base = statistics.median(cpu for cpu, _ in times["build"])
    for name, values in times.items():
        cpu = statistics.median(c for c, _ in values)
        wall = statistics.median(w for _, w in values)
        written = f"  {sizes[name] / 1e6:.1f} MB written" if sizes[name] else ""
        ratio = cpu / base
        print(f"{name:15s} {cpu:6.3f} CPU ms/page  {wall:6.3f} ms/page  {ratio:5.2f}x{written}")


if __name__ == "__main__":
    main()
