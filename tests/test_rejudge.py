"""``focused export NAME --rejudge``: every fetched page judged again by the crawl's final judge
(focused/export/rejudge.py), from the WARC files: on hand-written files, then on a crawl whose
topic learns itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

import pyarrow.parquet as pq
import pytest
from scrapy.http import HtmlResponse, Request
from scrapy.utils.test import get_crawler
from warcio.archiveiterator import ArchiveIterator

from focused.export.rejudge import Rejudging
from focused.export.warcpages import WarcPages, crawl_files
from focused.extensions.warc import (
    WarcFiles,
    WarcWriter,
    metadata_record,
    request_record,
    response_record,
)
from focused.items import Page
from focused.pipelines.duplicates import mark_duplicate
from focused.relevance.keywords import KeywordModel
from focused.settings import defaults
from focused.topic.judge import Judge, Verdict, undecided
from focused.topic.methods import PAGE_VECTORS_THRESHOLD
from tests.conftest import Crawl, focused
from tests.pages import page
from tests.test_learning import keywords_topic

if TYPE_CHECKING:
    from focused.store.crawl import CrawlStore

DATE = "2025-01-06T10:00:00.000001Z"


def html(title: str, text: str) -> bytes:
    return f"<html><head><title>{title}</title></head><body><p>{text}</p></body></html>".encode()


def write_warc(folder: Path, pages: list[tuple[str, bytes, bool, str | None, str | None]]) -> None:
    """One WARC file of ``pages`` (URL, HTML, whether its response is kept, title and main
    text in its metadata record), each judged R 0.1 at crawl time."""
    files = WarcFiles(folder, "c", max_size=10**9, info={}, stats=get_crawler().stats)
    for order, (url, body, kept, title, main) in enumerate(pages, 1):
        item = Page(url, 200, 1.7e9, order=order, relevance=0.1, category="T", title=title)
        item.main_text = main
        response = HtmlResponse(url, body=body, request=Request(url))
        if kept:
            record = response_record(response, DATE)
            metadata = metadata_record(item, DATE, record.rec_headers.get_header("WARC-Record-ID"))
            files.write_pair(request_record(response.request), record, metadata)
        else:
            files.write_record(metadata_record(item, DATE, None))
    files.close()


def test_a_page_is_judged_from_its_response_else_its_metadata_and_only_a_kept_one_is_relevant(
    tmp_path: Path,
) -> None:
    judge = Judge(KeywordModel(keywords=["cycling"]).fit(), threshold=0.3, link_score="content")
    pages = [
        ("http://a.test/1", html("Cycling", "cycling cycling bicycle race"), True, "x", None),
        ("http://a.test/2", html("Cooking", "an oven and a recipe"), True, "x", None),
        # Its text is on topic, but only its metadata record is kept: never relevant.
        ("http://a.test/3", html("Cycling", "cycling"), False, "x", "cycling cycling race"),
        # A metadata record without a main text: nothing to judge again.
        ("http://a.test/4", html("Cycling", "cycling"), False, "Cycling", None),
    ]
    write_warc(tmp_path, pages)
    rows = list(WarcPages(crawl_files(tmp_path, "c"), bodies=True).pages())
    rejudging = Rejudging(judge)
    judged = list(rejudging.rows(dict(row, relevant=False) for row in rows))
    # From the response: the text the spider would have judged, title and whole text.
    expected = judge(page("cycling cycling bicycle race", title="Cycling", url="http://a.test/1"))
    assert judged[0]["relevance"] == expected.relevance and judged[0]["relevant"]
    assert [row["judged_from"] for row in judged] == ["response", "response", "metadata", None]
    assert not judged[1]["relevant"]
    third = judge(page("cycling cycling race", title="x", url="http://a.test/3"))
    assert third.relevant and judged[2]["relevance"] == third.relevance
    assert not judged[2]["relevant"]  # held back: no response record kept
    assert judged[3]["relevance"] == 0.1  # nothing to judge again: the crawl's verdict
    assert [row["crawl_relevance"] for row in judged] == [0.1] * 4
    assert all("response" not in row for row in judged)
    counts = rejudging.counts
    assert (counts.from_response, counts.from_metadata, counts.not_rejudged) == (2, 1, 1)
    assert (counts.became_relevant, counts.stopped_relevant, counts.held_back) == (1, 0, 1)


def test_a_revisit_is_judged_from_the_response_it_refers_to(tmp_path: Path) -> None:
    from focused.extensions.warc import Original, payload_digest, revisit_record

    url, body = "http://a.test/1", html("Cycling", "cycling race")
    response = HtmlResponse(url, body=body, request=Request(url))
    files = WarcFiles(tmp_path, "c", max_size=10**9, info={}, stats=get_crawler().stats)
    first = response_record(response, DATE)
    record_id = first.rec_headers.get_header("WARC-Record-ID")
    item = Page(url, 200, 1.7e9, order=1, relevance=0.9, relevant=True)
    files.write_pair(
        request_record(response.request), first, metadata_record(item, DATE, record_id)
    )
    again = revisit_record(response, DATE, Original(record_id, DATE, payload_digest(body)))
    item = Page(url, 200, 1.8e9, order=2, relevance=0.9, relevant=True)
    revisit_id = again.rec_headers.get_header("WARC-Record-ID")
    files.write_pair(
        request_record(response.request), again, metadata_record(item, DATE, revisit_id)
    )
    files.close()
    read = list(WarcPages(crawl_files(tmp_path, "c"), bodies=True).pages())
    assert [row["response"].body for row in read] == [body, body]


def test_the_undecided_are_those_within_the_margin_of_their_cut() -> None:
    verdict = Verdict(0.2, False, None, 0.2, probability=0.2, cut=0.4)
    assert undecided(verdict, 0.5) and not undecided(verdict, 0.51)
    assert not undecided(verdict, 1.0)  # a margin of 1: the relevant pages only


# A crawl whose topic learns itself.


def export(crawl: Crawl, *options: str):
    return focused("export", crawl.name, "--home", str(crawl.home), *options)


def response_urls(folder: Path) -> set[str]:
    """The URLs of the response records in a folder's WARC files, read on their own."""
    urls = set()
    for path in folder.iterdir():
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type == "response":
                    urls.add(record.rec_headers.get_header("WARC-Target-URI"))
    return urls


@pytest.mark.crawl
def test_a_learning_crawl_is_judged_again_by_its_final_topic(
    crawl: Crawl, web: Path, tmp_path: Path, redis_client
) -> None:
    crawl.topic = keywords_topic(web, tmp_path)
    folder = tmp_path / "warc"
    stats = crawl.run(
        CLOSESPIDER_ITEMCOUNT=150,
        FOCUSED_LEARN_PAGES=30,
        FOCUSED_WARC_DIR=str(folder),
        FOCUSED_MAIN_TEXT="all",  # every page's main text in its metadata record
        FOCUSED_CALIBRATE=False,  # R against the threshold, here and in the final verdict
    )
    assert stats["focused/learn/refits"] >= 1
    feed = {item["order"]: item for item in crawl.feed() if item["order"] is not None}
    generation = redis_client.hget(f"focused:{{{crawl.name}}}:learned", "generation")

    out = tmp_path / "final.jsonl"
    result = export(crawl, "--rejudge", "-o", str(out), "--warc-dir", str(folder))
    assert result.returncode == 0, result.stderr
    rows = {row["order"]: row for row in map(json.loads, out.read_text().splitlines())}
    # Every page fetched (a crawl stopped by CLOSESPIDER_ITEMCOUNT may fetch one more than
    # its feed has: Redis has every page).
    assert set(feed) <= set(rows) and len(rows) <= len(feed) + 2
    # The crawl's verdicts beside the final ones.
    for order, item in feed.items():
        row = rows[order]
        assert (row["crawl_relevance"], row["crawl_relevant"], row["crawl_category"]) == (
            item["relevance"],
            item["relevant"],
            item["category"],
        )
    classified = [row for row in rows.values() if row["crawl_relevance"] is not None]
    assert len(classified) >= 100
    # Judged again from its response where one is kept, else from its metadata record's
    # main text; a page with neither keeps its verdict.
    sources = {"response": 0, "metadata": 0, None: 0}
    for row in classified:
        sources[row["judged_from"]] += 1
        if row["judged_from"] is None:
            assert row["order"] not in feed or not feed[row["order"]]["main_text"]
            assert row["relevance"] == row["crawl_relevance"]
    assert sources["metadata"] > sources["response"] > 10
    judged = [row for row in classified if row["judged_from"] is not None]
    assert any(row["relevance"] != row["crawl_relevance"] for row in judged)
    # Only pages whose responses are kept are relevant, and every one is in the WARC files.
    relevant = [row for row in rows.values() if row["relevant"]]
    assert relevant and all(row["judged_from"] == "response" for row in relevant)
    kept = response_urls(folder)
    assert {row["url"] for row in relevant} <= kept
    # Under FOCUSED_WARC=relevant, the pages kept besides the relevant ones: the undecided.
    margin = defaults.FOCUSED_WARC_UNDECIDED * PAGE_VECTORS_THRESHOLD  # a light topic's
    undecided = [
        row["url"]
        for row in classified
        if not row["crawl_relevant"] and row["crawl_relevance"] >= margin
    ]
    assert stats.get("focused/warc/undecided", 0) == len(undecided)
    assert kept == {row["url"] for row in classified if row["crawl_relevant"]} | set(undecided)
    for row in judged:  # R at the threshold, where the topic as given supports it
        if row["judged_from"] == "response" and row["relevant"]:
            assert row["relevance"] >= PAGE_VECTORS_THRESHOLD
    # What stderr says is what the rows say.
    became = sum(row["relevant"] and not row["crawl_relevant"] for row in rows.values())
    stopped = sum(row["crawl_relevant"] and not row["relevant"] for row in rows.values())
    before = sum(bool(row["crawl_relevant"]) for row in rows.values())
    assert (
        f"with its topic refitted at generation {generation}: {sources['response']} from"
        f" their response records, {sources['metadata']} from their metadata records"
        f" ({sources[None]} classified pages kept their crawl-time verdict"
    ) in result.stderr
    lines = result.stderr.splitlines()
    assert (
        f"verdicts changed: {became} became relevant, {stopped} stopped being relevant "
        f"({before} relevant at crawl time, {len(relevant)} now)"
    ) in lines

    # The same verdicts in the data set, with --relevant-only the final relevant ones.
    data = tmp_path / "final.parquet"
    result = export(
        crawl, "--rejudge", "--format", "parquet", "--relevant-only", "-o", str(data),
        "--warc-dir", str(folder),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    table = pq.read_table(data).to_pylist()
    assert sorted(row["order"] for row in table) == sorted(row["order"] for row in relevant)
    assert all(row["warc_file"] and row["judged_from"] == "response" for row in table)

    # No WARC files to judge the pages from is one line.
    empty = tmp_path / "empty"
    empty.mkdir()
    result = export(crawl, "--rejudge", "--warc-dir", str(empty))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"focused: error: --rejudge: no WARC files of crawl {crawl.name!r} in {empty}, which the"
        " pages are judged again from (--warc-dir names their folder)"
    )

    # A topic that cannot be recovered is one line.
    edited = crawl.topic.read_text().replace('"bicycle"', '"tandem"')
    crawl.topic.write_text(edited)
    result = export(crawl, "--rejudge", "--warc-dir", str(folder))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"focused: error: --rejudge: the topic file {crawl.topic.resolve()} of crawl"
        f" {crawl.name!r} was edited since the crawl (relevance.keywords changed): its judge"
        " cannot be made again"
    )
    shutil.move(crawl.topic, tmp_path / "moved.toml")
    result = export(crawl, "--rejudge", "--warc-dir", str(folder))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith(f"focused: error: --rejudge: the topic of crawl {crawl.name!r} is lost:")
    assert str(crawl.topic.resolve()) in last


def test_the_warc_writer_keeps_the_undecided_but_no_duplicate(tmp_path: Path) -> None:
    files = WarcFiles(tmp_path, "c", max_size=10**9, info={}, stats=get_crawler().stats)
    store = SimpleNamespace(key=lambda name: f"focused:{{c}}:{name}")
    writer = WarcWriter(
        files,
        cast("CrawlStore", store),
        keep_all=False,
        stats=get_crawler().stats,
        undecided_margin=0.5,
    )

    def judged(r: float) -> Page:
        item = Page("http://a.test/", 200, 1.7e9)
        item.judged(Verdict(r, r >= 0.5, None, r, probability=r, cut=0.5))
        return item

    assert [writer.keeps(judged(r)) for r in (0.9, 0.3, 0.2)] == [True, True, False]
    duplicate = judged(0.3)
    mark_duplicate(duplicate, "text", get_crawler().stats)  # its verdict set aside
    assert not writer.keeps(duplicate)
