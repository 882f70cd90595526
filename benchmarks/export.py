"""Cost of ``focused export NAME --format parquet`` (focused/export/) at sizes, and of the WARC
metadata records it reads (focused/extensions/warc.py).

    .venv/bin/python benchmarks/export.py [--sizes 10000 100000 1000000] [--relevant 0.2]

For each size N, a crawl of N fetched pages is made as a crawl leaves it: in a redis-server
(the embedded Redis's binary, :func:`common.redis_server`), the ``url:`` records of the N pages
in the frontier's format (``URL TAB R TAB category``, :func:`focused.store.frontier.records.
url_record`) with the ``stats`` and ``meta`` the export reads; and WARC files written by
:class:`~focused.extensions.warc.WarcFiles` as the WARC writer writes them (FOCUSED_WARC
``relevant``): a metadata record for every page, and for the relevant share (``--relevant``)
its main text (about 1,500 characters) in it and its response (a 4 KB page) and request
records. Then each export runs in a subprocess of its own, as a user runs it:

- ``jsonl``: ``focused export NAME -o x.jsonl``, what Redis keeps (the baseline);
- ``parquet``: ``focused export NAME --format parquet -o x.parquet``.

Printed per size and export: rows/s, CPU µs per row, peak RSS (the subprocess's ru_maxrss, by
``os.wait4``), the output's size, and the ratios to ``jsonl`` of the same size.

Then the write side, on 2,000 of the pages: CPU ms per page of building and writing (gzip'd,
through WarcFiles) a page's records: its metadata record alone (a page FOCUSED_WARC does not
keep: no main text), the metadata record of a relevant page (its main text in it), and its
response and request records (the baseline, what a kept page cost before), with the gzip'd
bytes of each.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis
from common import redis_server
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler
from warcio.recordloader import ArcWarcRecord

from focused.extensions.warc import (
    WarcFiles,
    metadata_record,
    request_record,
    response_record,
    warc_date,
)
from focused.items import Page
from focused.store import keys
from focused.store.crawl import CrawlStore

HOSTS = 2000
WORDS = [
    "".join(random.Random(n).choices("abcdefghijklmnopqrstuvwxyz", k=3 + n % 7))
    for n in range(5000)
]
CATEGORIES = ["Sports/Cycling", "Sports/Running", "Science/Birds", "Arts/Music"]
MAX_SIZE = 1_000_000_000


def url(order: int) -> str:
    return f"http://www.h{order % HOSTS}.bench.test/page/{order}"


def main_text(rng: random.Random) -> str:
    lines = (" ".join(rng.choices(WORDS, k=rng.randint(15, 30))) + "." for _ in range(8))
    return "\n".join(lines)


def page(order: int, rng: random.Random, share: float) -> tuple[Page, HtmlResponse | None]:
    """A fetched page, and its response if it is relevant (kept in the WARC files)."""
    relevance = rng.random()
    relevant = relevance < share
    relevance = 0.5 + relevance / share / 2 if relevant else (relevance - share) / 2
    item = Page(
        url=url(order),
        order=order,
        time=1.7e9 + order / 10,
        status=200,
        relevance=round(relevance, 4),
        relevant=relevant,
        category=rng.choice(CATEGORIES),
        depth=rng.randint(0, 8),
        parent=url(max(1, order // 3)),
        host=f"www.h{order % HOSTS}.bench.test",
        title=" ".join(rng.choices(WORDS, k=6)),
        bad=None,
        main_text=main_text(rng) if relevant else None,
    )
    if not relevant:
        return item, None
    filler = " ".join(rng.choices(WORDS, k=300))
    body = f"<html><head><title>{item.title}</title></head><body><nav>{filler}</nav>"
    body += f"<article><p>{item.main_text}</p></article></body></html>"
    request = Request(item.url, headers={"User-Agent": "focused/bench"})
    headers = {"Content-Type": "text/html; charset=utf-8"}
    return item, HtmlResponse(item.url, body=body.encode(), headers=headers, request=request)


def records(item: Page, response: HtmlResponse | None) -> list[ArcWarcRecord]:
    """The records the WARC writer writes for a page: [metadata] or [request, response,
    metadata]."""
    date = warc_date(item.time)
    if response is None:
        return [metadata_record(item, date, None)]
    assert response.request is not None
    kept = response_record(response, date)
    record_id = kept.rec_headers.get_header("WARC-Record-ID")
    return [request_record(response.request), kept, metadata_record(item, date, record_id)]


def make_crawl(client: redis.Redis, crawl: str, n: int, share: float, folder: Path) -> None:
    """The Redis records and WARC files of a crawl of ``n`` pages (module doc)."""
    store = CrawlStore(client, crawl)
    folder.mkdir()
    files = WarcFiles(folder, crawl, max_size=MAX_SIZE, info={}, stats=get_crawler().stats)
    rng = random.Random(n)
    bucket: dict[str, str] = {}
    for order in range(1, n + 1):
        item, response = page(order, rng, share)
        written = records(item, response)
        if len(written) == 1:
            files.write_record(written[0])
        else:
            files.write_pair(written[0], written[1], written[2])
        bucket[str(order)] = f"{item.url}\t{item.relevance}\t{item.category}"
        if (order + 1) % keys.URL_BUCKET == 0 or order == n:
            client.hset(store.key(keys.URLS, order // keys.URL_BUCKET), mapping=bucket)
            bucket = {}
    files.close()
    client.hset(store.key(keys.STATS), "fetched", n)
    client.hset(store.key(keys.META), "threshold", 0.5)


def run_export(args: list[str]) -> tuple[float, float, int]:
    """(wall s, CPU s, peak RSS in bytes) of ``focused export ARGS`` in a subprocess."""
    command = [sys.executable, "-m", "focused.cli.main", "export", *args]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    assert process.stderr is not None
    errors = process.stderr.read().decode()
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"focused export {' '.join(args)} failed:\n{errors}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def bench_write(share: float, work: Path, n: int = 2000) -> None:
    rng = random.Random(0)
    relevant, other = [], []
    while len(relevant) < n or len(other) < n:
        item, response = page(len(relevant) + len(other) + 1, rng, share)
        (relevant if response is not None else other).append((item, response))
    Fetched = tuple[Page, HtmlResponse | None]

    def pair(files: WarcFiles, fetched: Fetched) -> None:
        item, response = fetched
        assert response is not None and response.request is not None
        date = warc_date(item.time)
        files.write_pair(request_record(response.request), response_record(response, date))

    def metadata(files: WarcFiles, fetched: Fetched) -> None:
        item, response = fetched
        concurrent = None if response is None else "<urn:uuid:the-response>"
        files.write_record(metadata_record(item, warc_date(item.time), concurrent))

    variants = {
        "response + request (baseline)": (pair, relevant),
        "metadata, page not kept": (metadata, other),
        "metadata, relevant page": (metadata, relevant),
    }
    print(f"\nwriting a page's WARC records ({n} pages, gzip'd, through WarcFiles):")
    base = None
    for name, (write, pages) in variants.items():
        folder = work / "write"
        folder.mkdir()
        files = WarcFiles(folder, "w", max_size=MAX_SIZE, info={}, stats=get_crawler().stats)
        files.write_record(metadata_record(Page("http://a.test/", None, 0.0, order=0), "", None))
        start_bytes = files.out.tell() if files.out else 0
        cpu = time.process_time()
        for one in pages[:n]:
            write(files, one)
        ms = (time.process_time() - cpu) * 1000 / n
        size = ((files.out.tell() if files.out else 0) - start_bytes) / n
        files.close()
        shutil.rmtree(folder)
        base = base or ms
        print(f"  {name:30s} {ms:6.3f} ms CPU/page ({ms / base:4.2f}x)  {size:7.0f} bytes/page")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--relevant", type=float, default=0.2, help="share of relevant pages")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="export-bench-"))
    try:
        with redis_server(work / "redis") as redis_url:
            client = redis.Redis.from_url(redis_url, decode_responses=True)
            print(f"{'pages':>9} {'export':8} {'rows/s':>9} {'µs CPU/row':>11} {'peak RSS':>9} ")
            for n in args.sizes:
                crawl, folder = f"bench{n}", work / f"warc{n}"
                started = time.perf_counter()
                make_crawl(client, crawl, n, args.relevant, folder)
                warc_mb = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
                made = time.perf_counter() - started
                common = [crawl, "--redis-url", redis_url]
                base: tuple[float, float, int] | None = None
                for name, options in (
                    ("jsonl", ["-o", str(work / "x.jsonl")]),
                    ("parquet", ["--format", "parquet", "-o", str(work / "x.parquet")]),
                ):
                    options += ["--warc-dir", str(folder)] if name == "parquet" else []
                    wall, cpu, rss = run_export(common + options)
                    base = base or (wall, cpu, rss)
                    out = work / f"x.{name}"
                    print(
                        f"{n:9,d} {name:8} {n / wall:9,.0f} {cpu / n * 1e6:11.1f} "
                        f"{rss / 2**20:7.0f} MB  ({base[0] / wall:.2f}x rows/s, "
                        f"{rss / base[2]:.2f}x RSS; {out.stat().st_size / 1e6:.0f} MB out)"
                    )
                    out.unlink()
                print(f"{'':9} (made in {made:.0f} s: {warc_mb:.0f} MB of WARC files)")
                shutil.rmtree(folder)
                client.flushdb()
        bench_write(args.relevant, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
