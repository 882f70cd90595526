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

from focused.cli.options import add_redis_arguments, add_settings_argument, parse_settings
from focused.errors import FocusedError
from focused.store.frontier.records import recorded_verdict, url_record

if TYPE_CHECKING:
    from focused.export.pages import CrawlPages
    from focused.export.warcpages import WarcPages
    from focused.store.reads import Reader


FORMATS = ("jsonl", "parquet")
# A line of ``--rejudge`` as JSON lines: the final verdict, the crawl's, and what it was made from.
REJUDGED_FIELDS = (
    "url",
    "order",
    "relevance",
    "relevant",
    "category",
    "crawl_relevance",
    "crawl_relevant",
    "crawl_category",
    "judged_from",
)


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
        "--rejudge",
        action="store_true",
        help="judge every page again with the crawl's final judge (its topic as last refitted) "
        "from the WARC files, export the final verdicts with the crawl's beside them, and say "
        "how many changed",
    )
    parser.add_argument(
        "--warc-dir",
        metavar="DIR",
        help="parquet or --rejudge: the folder of the crawl's WARC files, if FOCUSED_WARC_DIR "
        "put them elsewhere (default: FOCUSED_HOME/warc/NAME)",
    )
    add_settings_argument(
        parser,
        "--rejudge: a setting of the judge given anew, over the one the crawl recorded "
        "(repeatable)",
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
    if args.warc_dir and args.format != "parquet" and not args.rejudge:
        raise FocusedError("--warc-dir: only with --format parquet or --rejudge")
    if args.set and not args.rejudge:
        raise FocusedError("-s: only with --rejudge")
    overrides = parse_settings(args.set)
    client, where = connect_existing(args.redis_url, args.home)
    print(f"reading {where}", file=sys.stderr)
    reader = Reader(client)
    if args.rejudge:
        return write_rejudged(reader, args, overrides)
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


def crawl_pages(
    reader: Reader, args: argparse.Namespace, *, bodies: bool = False
) -> tuple[CrawlPages, WarcPages]:
    """The rows of the crawl's pages from its WARC files and Redis (module doc), with each
    page's kept response if ``bodies``, and the WARC files read."""
    from focused.export.pages import CrawlPages
    from focused.export.warcpages import WarcPages, crawl_files
    from focused.extensions.warc import default_folder

    fetched = reader.fetched(args.name)
    if fetched is None:
        raise reader.no_such_crawl(args.name)
    folder = Path(args.warc_dir) if args.warc_dir else default_folder(args.home, args.name)
    if args.warc_dir and not folder.is_dir():
        raise FocusedError(f"--warc-dir {folder}: no such folder")
    warc = WarcPages(crawl_files(folder, args.name), bodies=bodies)
    if bodies and not warc.files:
        raise FocusedError(
            f"--rejudge: no WARC files of crawl {args.name!r} in {folder}, which the pages are"
            " judged again from (--warc-dir names their folder)"
        )
    print(f"WARC files of crawl {args.name!r} in {folder}: {len(warc.files)}", file=sys.stderr)
    # --rejudge: the pages relevant in the end are chosen after judging
    only = args.relevant_only and not bodies
    return CrawlPages(reader, args.name, fetched, warc.pages(), relevant_only=only), warc


def write_parquet(reader: Reader, args: argparse.Namespace) -> int:
    """``--format parquet``: the crawl's pages from its WARC files and Redis (module doc)."""
    from focused.export.parquet import ParquetPages

    pages, warc = crawl_pages(reader, args)
    path = Path(args.output)
    with ParquetPages(path) as out:
        out.write(pages.rows())
    report_written(args, warc, pages, out.rows, path)
    return 0


def report_written(
    args: argparse.Namespace, warc: WarcPages, pages: CrawlPages, rows: int, path: Path | None
) -> None:
    for cut in warc.cut:
        print(f"{cut.name} ends in part of a record: read up to it", file=sys.stderr)
    print(
        f"wrote {rows} pages of crawl {args.name!r} to {path or 'stdout'} ({pages.from_warc} "
        f"described by the WARC files, {pages.from_redis} from Redis only)",
        file=sys.stderr,
    )


def write_rejudged(reader: Reader, args: argparse.Namespace, overrides: dict[str, str]) -> int:
    """``--rejudge``: every page judged again by the crawl's final judge
    (:mod:`focused.export.rejudge`), in either format, and how many verdicts changed."""
    from focused.export.parquet import ParquetPages
    from focused.export.rejudge import Rejudging, final_judge

    if reader.fetched(args.name) is None:
        raise reader.no_such_crawl(args.name)
    final = final_judge(reader, args.name, overrides, args.home)
    if not final.recorded:
        print(
            f"crawl {args.name!r} recorded no settings of its judge: judged with the defaults"
            " and -s",
            file=sys.stderr,
        )
    pages, warc = crawl_pages(reader, args, bodies=True)
    rejudging = Rejudging(
        final.judge,
        languages=final.plan.languages,
        max_garbled=final.settings.getfloat("FOCUSED_MAX_REPLACEMENT_SHARE"),
    )
    rows = rejudging.rows(pages.rows())
    if args.relevant_only:
        rows = (row for row in rows if row["relevant"])
    path = Path(args.output) if args.output else None
    if args.format == "parquet":
        assert path is not None
        with ParquetPages(path) as out:
            out.write(rows)
        count = out.rows
    else:
        try:
            target = path.open("w", encoding="utf-8") if path else nullcontext(sys.stdout)
        except OSError as exc:
            raise FocusedError(f"-o {path}: {exc.strerror}") from None
        with target as lines:
            count = write_lines(({n: row.get(n) for n in REJUDGED_FIELDS} for row in rows), lines)
    report_written(args, warc, pages, count, path)
    for line in rejudging.summary(args.name, final.generation):
        print(line, file=sys.stderr)
    return 0
