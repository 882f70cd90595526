"""``focused export NAME --format parquet``: a crawl's data set (focused/export/), one row per
fetched page, streamed from its WARC files' metadata records and Redis's records."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler
from warcio.archiveiterator import ArchiveIterator

from focused.errors import FocusedError
from focused.export.pages import CrawlPages, Orders, redis_row
from focused.export.parquet import SCHEMA, ParquetPages
from focused.export.warcpages import WarcPages, crawl_files
from focused.extensions.warc import WarcFiles, metadata_record, request_record, response_record
from focused.items import Page
from focused.settings import defaults
from focused.store.admin import record_settings
from focused.store.reads import Reader
from tests.conftest import Crawl, focused
from tests.test_store_reads import PAGES, fetch

# The feed's fields a row has, with the feed's values.
FEED_COLUMNS = [
    "url",
    "order",
    "status",
    "relevance",
    "relevant",
    "category",
    "depth",
    "parent",
    "host",
    "title",
    "bad",
    "main_text",
]


def read_rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


# The writer.


def test_rows_are_written_a_row_group_at_a_time_with_the_schemas_types(tmp_path: Path) -> None:
    path = tmp_path / "pages.parquet"
    rows = [
        {"url": f"http://a.test/{n}", "order": n, "time": 1_700_000_000.25 + n, "status": 200}
        for n in range(1, 26)
    ]
    rows[0] |= {"relevance": 0.75, "relevant": True, "main_text": "Swans", "warc_offset": 7}
    with ParquetPages(path, row_group=10) as out:
        out.write(rows)
        assert not path.exists() and path.with_name("pages.parquet.part").exists()
    assert out.rows == 25 and not path.with_name("pages.parquet.part").exists()
    data = pq.ParquetFile(path)
    assert data.schema_arrow == SCHEMA
    assert [data.metadata.row_group(i).num_rows for i in range(3)] == [10, 10, 5]
    read = read_rows(path)
    assert read[0]["time"] == datetime(2023, 11, 14, 22, 13, 21, 250000, tzinfo=UTC)
    assert (read[0]["relevance"], read[0]["relevant"], read[0]["main_text"]) == (
        0.75,
        True,
        "Swans",
    )
    assert read[1]["relevance"] is None and read[1]["warc_offset"] is None
    assert [row["order"] for row in read] == list(range(1, 26))


def test_a_write_that_fails_leaves_no_file(tmp_path: Path) -> None:
    path = tmp_path / "pages.parquet"
    with pytest.raises(ValueError), ParquetPages(path) as out:
        out.write([{"url": "http://a.test/", "order": 1}])
        raise ValueError
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(FocusedError) as error:
        ParquetPages(tmp_path / "no" / "pages.parquet")
    assert str(error.value) == f"-o {tmp_path}/no/pages.parquet: No such file or directory"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_full_disk_is_one_line_and_leaves_no_file(tmp_path: Path) -> None:
    path = tmp_path / "pages.parquet"
    path.with_name("pages.parquet.part").symlink_to("/dev/full")
    with pytest.raises(FocusedError) as error, ParquetPages(path, row_group=2) as out:
        out.write({"url": f"http://a.test/{n}", "main_text": "x" * 100_000} for n in range(9))
    assert str(error.value) == f"-o {path}: No space left on device"
    assert list(tmp_path.iterdir()) == []


def test_orders_are_a_bit_each() -> None:
    seen = Orders()
    for order in (1, 9, 1_000_000):
        seen.add(order)
    assert [n in seen for n in (1, 2, 9, 1_000_000, 1_000_001, 5_000_000)] == [
        True,
        False,
        True,
        True,
        False,
        False,
    ]
    assert len(seen.bits) <= 2 * 1_000_000 // 8 + 2


def test_a_redis_row_has_the_feeds_values_of_what_redis_keeps() -> None:
    row = redis_row(3, "http://a.test/x\t0.25\tBirds/Swans", 0.5)
    assert row == {
        "url": "http://a.test/x",
        "order": 3,
        "relevance": 0.25,
        "relevant": False,
        "category": "Birds/Swans",
        "host": "a.test",
    }
    assert redis_row(4, "http://b.test/", 0.5)["relevant"] is False  # not classified
    assert redis_row(4, "http://b.test/", None)["relevant"] is None  # no threshold recorded


def write_pages(folder: Path, crawl: str, pages: dict[str, float], first: int = 1) -> None:
    """WARC files of ``pages`` (URL -> R) fetched in order from ``first``: a metadata record
    each, and the relevant ones' responses."""
    stats = get_crawler().stats
    files = WarcFiles(folder, crawl, max_size=1500, info={"software": "test"}, stats=stats)
    for order, (url, r) in enumerate(pages.items(), first):
        item = Page(url, 200, 1.7e9 + order, order=order, relevance=r, relevant=r >= 0.5)
        item.category, item.title, item.main_text = "T", f"Page {order}", "x"
        response = HtmlResponse(url, body=b"<p>x</p>", request=Request(url))
        date = "2025-01-06T10:00:00.000001Z"
        if item.relevant:
            kept = response_record(response, date)
            record_id = kept.rec_headers.get_header("WARC-Record-ID")
            metadata = metadata_record(item, date, record_id)
            files.write_pair(request_record(response.request), kept, metadata)
        else:
            files.write_record(metadata_record(item, date, None))
    files.close()


def test_a_warc_offset_points_at_the_pages_response_record(tmp_path: Path) -> None:
    pages = {f"http://a.test/{n}": n / 10 for n in range(10)}
    write_pages(tmp_path, "birds", pages)
    write_pages(tmp_path, "birds-2", pages)  # another crawl's files
    files = crawl_files(tmp_path, "birds")
    assert len(files) > 1 and all(path.name.startswith("birds-2026") for path in files)
    read = list(WarcPages(files).pages())
    assert [page["url"] for page in read] == list(pages)
    for page in read:
        assert page["title"] == f"Page {page['order']}"
        assert (page["warc_file"] is not None) == page["relevant"]
        if page["relevant"]:
            with (tmp_path / page["warc_file"]).open("rb") as stream:
                stream.seek(page["warc_offset"])
                record = next(iter(ArchiveIterator(stream)))
            assert record.rec_type == "response"
            assert record.rec_headers.get_header("WARC-Target-URI") == page["url"]


def test_a_file_cut_short_is_read_up_to_its_last_whole_record(tmp_path: Path) -> None:
    write_pages(tmp_path, "birds", {f"http://a.test/{n}": 0.2 for n in range(30)})
    path = crawl_files(tmp_path, "birds")[0]
    whole = len(list(WarcPages([path]).pages()))
    path.write_bytes(path.read_bytes()[:-20])
    warc = WarcPages([path])
    assert len(list(warc.pages())) == whole - 1 and warc.cut == [path]


# The join, on a real Redis.


def test_warc_pages_are_checked_against_redis_and_the_rest_come_from_it(
    frontier, redis_client, crawl_name, tmp_path: Path
) -> None:
    one = frontier()
    fetch(one, PAGES)
    record_settings(one.store, {"threshold": 0.5})
    reader = Reader(redis_client)
    urls = [record.split("\t")[0] for _, record in reader.fetched(crawl_name).records]
    # The WARC files describe the first two pages, and a page of an earlier run at order 3.
    write_pages(tmp_path, crawl_name, {urls[0]: PAGES[urls[0]], urls[1]: PAGES[urls[1]]})
    write_pages(tmp_path, crawl_name, {"http://old.test/": 0.9}, first=3)
    warc = WarcPages(crawl_files(tmp_path, crawl_name))
    pages = CrawlPages(reader, crawl_name, reader.fetched(crawl_name), warc.pages())
    rows = list(pages.rows())
    assert [row["url"] for row in rows] == urls
    assert (pages.from_warc, pages.from_redis) == (2, 1)
    assert [row.get("title") for row in rows] == ["Page 1", "Page 2", None]
    assert [row["relevance"] for row in rows] == [PAGES[url] for url in urls]
    relevant = CrawlPages(
        reader,
        crawl_name,
        reader.fetched(crawl_name),
        WarcPages(crawl_files(tmp_path, crawl_name)).pages(),
        relevant_only=True,
    )
    assert {row["url"] for row in relevant.rows()} == {u for u in urls if PAGES[u] >= 0.5}


# A real crawl.


def export(crawl: Crawl, redis_home: Path, *options: str):
    return focused("export", crawl.name, "--home", str(redis_home), *options)


def test_a_crawls_data_set_has_a_row_per_fetched_page_with_the_feeds_values(
    crawl: Crawl, redis_home: Path, redis_client, tmp_path: Path
) -> None:
    folder = tmp_path / "warc"
    crawl.run(FOCUSED_WARC_DIR=str(folder), CLOSESPIDER_ITEMCOUNT=80)
    feed = {item["order"]: item for item in crawl.feed() if item["order"] is not None}
    out = tmp_path / "pages.parquet"
    result = export(
        crawl, redis_home, "--format", "parquet", "-o", str(out), "--warc-dir", str(folder)
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"wrote {len(feed)} pages of crawl {crawl.name!r} to {out} ({len(feed)} described by "
        "the WARC files, 0 from Redis only)"
    )
    assert pq.read_schema(out) == SCHEMA
    rows = read_rows(out)
    assert sorted(row["order"] for row in rows) == sorted(feed) and len(feed) >= 50
    meta = Reader(redis_client).meta(crawl.name)
    margin = defaults.FOCUSED_WARC_UNDECIDED * float(meta["threshold"])
    relevant = 0
    for row in rows:
        item = feed[row["order"]]
        assert {name: row[name] for name in FEED_COLUMNS} == {n: item[n] for n in FEED_COLUMNS}
        assert math.isclose(row["time"].timestamp(), item["time"], abs_tol=1e-6)
        assert row["language"] == item.get("language")
        assert row["near_duplicate_of"] == item.get("near_duplicate_of")
        assert row["rendered"] == item.get("rendered")
        # FOCUSED_WARC=relevant: the relevant and undecided pages' responses are kept, and
        # found.
        undecided = item["relevance"] is not None and item["relevance"] >= margin
        assert (row["warc_file"] is not None) == (item["relevant"] or undecided)
        if row["warc_file"]:
            relevant += 1
            with (folder / row["warc_file"]).open("rb") as stream:
                stream.seek(row["warc_offset"])
                record = next(iter(ArchiveIterator(stream)))
            assert record.rec_type in ("response", "revisit")
            assert record.rec_headers.get_header("WARC-Target-URI") == row["url"]
    assert relevant >= 10 and any(row["main_text"] for row in rows)

    # --relevant-only, both formats.
    only = tmp_path / "relevant.parquet"
    result = export(
        crawl,
        redis_home,
        "--format",
        "parquet",
        "--relevant-only",
        "-o",
        str(only),
        "--warc-dir",
        str(folder),
    )
    assert result.returncode == 0, result.stderr
    assert sorted(row["url"] for row in read_rows(only)) == sorted(
        item["url"] for item in feed.values() if item["relevant"]
    )
    lines = tmp_path / "relevant.jsonl"
    assert export(crawl, redis_home, "--relevant-only", "-o", str(lines)).returncode == 0
    exported = [json.loads(line) for line in lines.read_text().splitlines()]
    assert [item["order"] for item in exported] == sorted(
        order for order, item in feed.items() if item["relevant"]
    )

    # --rejudge: this crawl's topic does not learn, so its final judge is the one it judged
    # with: a page judged again from its response keeps its R and category; its verdict may
    # change only by the calibration, fitted now on every page, and stderr counts the changes.
    again = tmp_path / "again.jsonl"
    result = export(crawl, redis_home, "--rejudge", "-o", str(again), "--warc-dir", str(folder))
    assert result.returncode == 0, result.stderr
    assert "with its own judge:" in result.stderr
    rejudged = [json.loads(line) for line in again.read_text().splitlines()]
    assert sorted(row["order"] for row in rejudged) == sorted(feed)
    from_response = [row for row in rejudged if row["judged_from"] == "response"]
    assert len(from_response) == relevant
    for row in from_response:
        assert row["relevance"] == pytest.approx(row["crawl_relevance"], abs=1e-6)
        assert row["category"] == row["crawl_category"]
    became = sum(row["relevant"] and not row["crawl_relevant"] for row in rejudged)
    stopped = sum(row["crawl_relevant"] and not row["relevant"] for row in rejudged)
    assert f"verdicts changed: {became} became relevant, {stopped} stopped" in result.stderr
    assert became + stopped <= len(from_response) // 4

    # Without its WARC files, each page has what Redis keeps, nulls elsewhere.
    empty = tmp_path / "empty"
    empty.mkdir()
    bare = tmp_path / "bare.parquet"
    result = export(
        crawl, redis_home, "--format", "parquet", "-o", str(bare), "--warc-dir", str(empty)
    )
    assert result.returncode == 0, result.stderr
    assert f"(0 described by the WARC files, {len(feed)} from Redis only)" in result.stderr
    for row in read_rows(bare):
        item = feed[row["order"]]
        assert (row["url"], row["relevance"], row["host"]) == (
            item["url"],
            item["relevance"],
            item["host"],
        )
        assert row["relevant"] == item["relevant"]
        assert row["title"] is row["main_text"] is row["time"] is row["warc_file"] is None

    # A --warc-dir that is not there is one line.
    nowhere = tmp_path / "nowhere"
    result = export(
        crawl, redis_home, "--format", "parquet", "-o", str(bare), "--warc-dir", str(nowhere)
    )
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == f"focused: error: --warc-dir {nowhere}: no such folder"


@pytest.mark.crawl
@pytest.mark.parametrize(
    ("options", "error"),
    [
        (
            ["no-such-crawl", "--format", "parquet", "-o", "x.parquet"],
            "no crawl named 'no-such-crawl'",
        ),
        (["web", "--format", "parquet"], "--format parquet: name the file to write with -o"),
        (["web", "--warc-dir", "w", "-o", "x.parquet"], "--warc-dir: only with --format parquet"),
        (["web", "-s", "FOCUSED_VECTORS=false"], "-s: only with --rejudge"),
        (["web", "--rejudge", "-s", "FOCUSED_VECTORS"], "-s 'FOCUSED_VECTORS': expected KEY=VALUE"),
    ],
)
def test_a_bad_export_is_one_line(
    redis_client, redis_home: Path, tmp_path: Path, options: list[str], error: str
) -> None:
    result = focused("export", *options, "--home", str(redis_home), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1].startswith(f"focused: error: {error}")
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []
