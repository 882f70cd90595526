"""``focused export NAME``: the pages a crawl has fetched, from Redis, as JSON lines.

Every URL acknowledged in the frontier has a record in the crawl's ``url:`` hashes (fetch order
n -> the URL, and for a classified page ``URL TAB R TAB category``; :mod:`focused.store.keys`),
written in the same script call as the acknowledgement. So this export holds every page the crawl
has fetched, however its processes ended (a killed one's feed may lack the item it was writing),
and it can run at any time, while the crawl runs too. It reads only: one HGETALL per 512 pages
of a shard, each shard's pages up to its ``fetched`` count at the start, all in fetch order.

Each line has the feed's field names for what Redis keeps: ``url`` and ``order``, and for a
classified page ``relevance``, ``category`` and ``relevant`` (R against the threshold the
crawl recorded in ``meta``). Pages not classified (bad, duplicates, redirects) have the first
two only; the rest of a page (its text, title, parent) is in the feed and the WARC files.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from focused.cli.options import add_redis_arguments
from focused.errors import FocusedError
from focused.store.frontier.records import url_record

if TYPE_CHECKING:
    from focused.store.reads import Reader


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="crawl name")
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="where to write the JSON lines (default: stdout)"
    )
    add_redis_arguments(parser)


def fetched_pages(reader: Reader, crawl: str) -> Iterator[dict[str, Any]]:
    """The crawl's fetched pages in fetch order, with the feed's fields Redis has (module doc).
    A FocusedError at once if there is no such crawl."""
    fetched = reader.fetched(crawl)
    if fetched is None:
        raise reader.no_such_crawl(crawl)
    return (page(order, record, fetched.threshold) for order, record in fetched.records)


def page(order: int, record: str, threshold: str | None) -> dict[str, Any]:
    """One ``url:`` record as a feed item."""
    url, relevance, category = url_record(record)
    item: dict[str, Any] = {"url": url, "order": order}
    if relevance is not None:
        item["relevance"] = relevance
        if threshold is not None:
            item["relevant"] = relevance >= float(threshold)
        item["category"] = category or None
    return item


def write_lines(pages: Iterator[dict[str, Any]], out: IO[str]) -> int:
    """Write ``pages`` to ``out``, one JSON object a line; returns how many."""
    count = 0
    for item in pages:
        out.write(json.dumps(item, ensure_ascii=False) + "\n")
        count += 1
    return count


def run(args: argparse.Namespace) -> int:
    from focused.store.client import connect_existing
    from focused.store.reads import Reader

    client, where = connect_existing(args.redis_url, args.home)
    print(f"reading {where}", file=sys.stderr)
    pages = fetched_pages(Reader(client), args.name)
    path = Path(args.output) if args.output else None
    try:
        target = path.open("w", encoding="utf-8") if path else nullcontext(sys.stdout)
    except OSError as exc:
        raise FocusedError(f"-o {path}: {exc.strerror}") from None
    with target as out:
        count = write_lines(pages, out)
    print(f"wrote {count} pages of crawl {args.name!r} to {path or 'stdout'}", file=sys.stderr)
    return 0
