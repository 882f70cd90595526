"""``focused export NAME``: the pages a crawl has fetched, from Redis, as JSON lines (the
default), or with ``--format parquet`` as a data set of the pages with their texts, from the
crawl's WARC files and Redis (:mod:`focused.export`).

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

The Parquet file has a row per fetched page with every column of
:data:`focused.export.parquet.SCHEMA`: the WARC files' metadata records have each page's feed
fields (:mod:`focused.export.pages` joins them with Redis's records, the only source for the
pages fetched while no WARC file was written). Both stream: a Parquet export of a million pages
holds one row group and a bit per page (``benchmarks/export.py``).
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
from focused.store.frontier.records import recorded_verdict, url_record

if TYPE_CHECKING:
    from focused.store.reads import Reader


FORMATS = ("jsonl", "parquet")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="crawl name")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where to write the pages (default: stdout; a file for parquet)",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="jsonl",
        help="jsonl: what Redis keeps of each page, a JSON object a line (the default); "
        "parquet: a data set of the pages with their titles and main texts, from the "
        "crawl's WARC files and Redis",
    )
    parser.add_argument(
        "--relevant-only", action="store_true", help="only the pages classified relevant"
    )
    parser.add_argument(
        "--warc-dir",
        metavar="DIR",
        help="parquet: the folder of the crawl's WARC files, if FOCUSED_WARC_DIR put them "
        "elsewhere (default: FOCUSED_HOME/warc/NAME)",
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
        verdict = recorded_verdict(record, None if threshold is None else float(threshold))
        if verdict is not None:
            item["relevant"] = verdict
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

    if args.format == "parquet" and not args.output:
        raise FocusedError("--format parquet: name the file to write with -o")
    if args.warc_dir and args.format != "parquet":
        raise FocusedError("--warc-dir: only with --format parquet")
    client, where = connect_existing(args.redis_url, args.home)
    print(f"reading {where}", file=sys.stderr)
    reader = Reader(client)
    if args.format == "parquet":
        return write_parquet(reader, args)
    pages = fetched_pages(reader, args.name)
    if args.relevant_only:
        pages = (item for item in pages if item.get("relevant"))
    path = Path(args.output) if args.output else None
    try:
        target = path.open("w", encoding="utf-8") if path else nullcontext(sys.stdout)
    except OSError as exc:
        raise FocusedError(f"-o {path}: {exc.strerror}") from None
    with target as out:
        count = write_lines(pages, out)
    print(f"wrote {count} pages of crawl {args.name!r} to {path or 'stdout'}", file=sys.stderr)
    return 0


def write_parquet(reader: Reader, args: argparse.Namespace) -> int:
    """``--format parquet``: the crawl's pages from its WARC files and Redis (module doc)."""
    from focused.export.pages import CrawlPages
    from focused.export.parquet import ParquetPages
    from focused.export.warcpages import WarcPages, crawl_files
    from focused.extensions.warc import default_folder

    fetched = reader.fetched(args.name)
    if fetched is None:
        raise reader.no_such_crawl(args.name)
    folder = Path(args.warc_dir) if args.warc_dir else default_folder(args.home, args.name)
    if args.warc_dir and not folder.is_dir():
        raise FocusedError(f"--warc-dir {folder}: no such folder")
    warc = WarcPages(crawl_files(folder, args.name))
    print(f"WARC files of crawl {args.name!r} in {folder}: {len(warc.files)}", file=sys.stderr)
    pages = CrawlPages(reader, args.name, fetched, warc.pages(), relevant_only=args.relevant_only)
    path = Path(args.output)
    with ParquetPages(path) as out:
        out.write(pages.rows())
    for cut in warc.cut:
        print(f"{cut.name} ends in part of a record: read up to it", file=sys.stderr)
    print(
        f"wrote {out.rows} pages of crawl {args.name!r} to {path} ({pages.from_warc} described "
        f"by the WARC files, {pages.from_redis} from Redis only)",
        file=sys.stderr,
    )
    return 0
