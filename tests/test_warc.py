"""WARC files of a crawl (focused/extensions/warc.py): what is kept, rotation, revisit records,
and a round trip through ``focused web from-warc``, a served bundle and a second crawl."""

from __future__ import annotations

import collections
import json
import logging
import re
import signal
from pathlib import Path

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Request, Response
from scrapy.utils.test import get_crawler
from warcio.archiveiterator import ArchiveIterator

from focused.cli.main import main
from focused.extensions.warc import (
    METADATA_FIELDS,
    WarcFiles,
    WarcWriter,
    payload_digest,
    request_record,
    response_record,
)
from focused.lab.webs.bundle import url_key
from focused.lab.webs.server import ServedWeb, read_log
from focused.settings import defaults
from focused.store import keys
from focused.store.admin import reset_crawl
from tests.conftest import Crawl, wait_for

NAME = re.compile(r"^(?P<crawl>.+)-(\d{17})-(\d{5})-(\d+)~(.+)\.warc\.gz$")
PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


def read_records(folder: Path) -> list[dict]:
    """Every record of the closed WARC files in ``folder``, in file-name order (time, serial):
    its type, WARC headers, HTTP status and payload, and the file it is in."""
    records = []
    for path in sorted(folder.glob("*.warc.gz")):
        with path.open("rb") as f:
            for record in ArchiveIterator(f):
                records.append(
                    {
                        "type": record.rec_type,
                        "version": record.rec_headers.protocol,
                        "headers": dict(record.rec_headers.headers),
                        "status": record.http_headers.get_statuscode()
                        if record.http_headers and record.rec_type != "request"
                        else None,
                        "http": record.http_headers,
                        "payload": record.content_stream().read(),
                        "file": path.name,
                    }
                )
    return records


def of_type(records: list[dict], kind: str) -> list[dict]:
    return [r for r in records if r["type"] == kind]


def check_pairs(records: list[dict]) -> None:
    """Each response or revisit record is followed by the request record it answered."""
    for first, second in zip(records, records[1:], strict=False):
        if first["type"] in ("response", "revisit"):
            assert second["type"] == "request"
            assert second["headers"]["WARC-Concurrent-To"] == first["headers"]["WARC-Record-ID"]
            assert second["headers"]["WARC-Target-URI"] == first["headers"]["WARC-Target-URI"]
            assert second["headers"]["WARC-Date"] == first["headers"]["WARC-Date"]


def check_files(folder: Path, stats: dict, crawl: str) -> list[dict]:
    """The files are closed, named as Heritrix names them, each headed by a warcinfo record,
    and the stats count them; returns their records."""
    assert not list(folder.glob("*.open"))
    files = sorted(folder.glob("*.warc.gz"))
    assert files and all(NAME.match(path.name)["crawl"] == crawl for path in files)
    records = read_records(folder)
    heads = [r for r in records if r["type"] == "warcinfo"]
    assert [r["file"] for r in heads] == [path.name for path in files]
    for head in heads:
        info = dict(line.split(": ", 1) for line in head["payload"].decode().splitlines())
        assert info["format"] == "WARC File Format 1.1" and info["isPartOf"] == crawl
        assert info["robots"] == "obey" and info["http-header-user-agent"].startswith("focused/")
        assert info["topic"].endswith("topic.toml")
        assert head["headers"]["WARC-Filename"] == head["file"]
    assert {r["type"] for r in records} <= {
        "warcinfo",
        "request",
        "response",
        "revisit",
        "metadata",
    }
    assert {r["version"] for r in records} == {"WARC/1.1"}
    assert stats["focused/warc/files"] == len(files)
    assert stats["focused/warc/records"] == len(records)
    assert stats["focused/warc/bytes"] == sum(path.stat().st_size for path in files)
    check_pairs(records)
    return records


def test_none_is_not_configured() -> None:
    with pytest.raises(NotConfigured):
        WarcWriter.from_crawler(get_crawler(settings_dict={"FOCUSED_WARC": "none"}))


@pytest.mark.parametrize(
    ("setting", "value", "error"),
    [
        ("FOCUSED_WARC", "some", 'expected one of "relevant", "all", "none", got \'some\''),
        ("FOCUSED_WARC_MAX_SIZE", 0, "expected bytes above 0, got 0"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(
    caplog: pytest.LogCaptureFixture, setting: str, value: object, error: str
) -> None:
    settings = {"FOCUSED_WARC": "relevant", "FOCUSED_WARC_MAX_SIZE": 1000, setting: value}
    with caplog.at_level(logging.CRITICAL), pytest.raises(SystemExit) as stop:
        WarcWriter.from_crawler(get_crawler(settings_dict=settings))
    assert stop.value.code == 2
    assert [r.getMessage() for r in caplog.records] == [f"focused: error: {setting}: {error}"]


def page(url: str, text: str) -> Response:
    body = f"<html><body><p>{text}</p></body></html>".encode()
    request = Request(url, headers={"User-Agent": "test"})
    return HtmlResponse(
        url,
        body=body,
        request=request,
        headers={"Content-Type": "text/html", "Transfer-Encoding": "chunked"},
    )


def test_files_rotate_past_their_size_and_are_renamed_when_closed(tmp_path: Path) -> None:
    stats = get_crawler().stats
    files = WarcFiles(tmp_path, "birds", max_size=2000, info={"software": "test"}, stats=stats)
    responses = [page(f"http://a.test/{n}", f"Swans {n} " * (n * 20)) for n in range(12)]
    for response in responses:
        files.write_pair(
            request_record(response.request),
            response_record(response, "2025-01-06T10:00:00.000001Z"),
        )
        if files.out is not None:
            assert files.path is not None and (tmp_path / (files.path.name + ".open")).exists()
    files.close()
    names = sorted(path.name for path in tmp_path.iterdir())
    assert len(names) > 2 and all(NAME.match(name) for name in names)
    assert [NAME.match(name)[3] for name in names] == [f"{n:05d}" for n in range(len(names))]
    records = read_records(tmp_path)
    assert len(records) == stats.get_value("focused/warc/records") == len(names) + 24
    responses_read = of_type(records, "response")
    assert [r["headers"]["WARC-Target-URI"] for r in responses_read] == [r.url for r in responses]
    for written, read in zip(responses, responses_read, strict=True):
        assert read["payload"] == written.body
        assert read["headers"]["WARC-Payload-Digest"] == payload_digest(written.body)
        # The stored headers describe the stored (decoded) body.
        assert read["http"].get_header("Content-Length") == str(len(written.body))
        assert read["http"].get_header("Transfer-Encoding") is None
    request = of_type(records, "request")[0]
    assert request["http"].protocol == "GET" and request["http"].get_header("Host") == "a.test"


def test_relevant_pages_are_kept_and_unchanged_revisits_refer_to_them(
    crawl: Crawl, redis_client, tmp_path: Path
) -> None:
    folder = tmp_path / "warc"
    stats = crawl.run(
        FOCUSED_WARC_DIR=str(folder),
        FOCUSED_REVISIT_SHARE=0.2,
        FOCUSED_REVISIT_EVERY=40,
        FOCUSED_HOST_DELAY=0.2,
    )
    records = check_files(folder, stats, crawl.name)
    feed = crawl.feed()
    # Exactly the feed's relevant and undecided pages, each once, with its body and status.
    threshold = float(redis_client.hget(keys.prefix(crawl.name) + keys.META, "threshold"))
    relevant = [item["url"] for item in feed if item["relevant"]]
    undecided = [
        item["url"]
        for item in feed
        if not item["relevant"]
        and item["relevance"] is not None
        and item["relevance"] >= defaults.FOCUSED_WARC_UNDECIDED * threshold
    ]
    responses = of_type(records, "response")
    uris = sorted(r["headers"]["WARC-Target-URI"] for r in responses)
    assert uris == sorted(relevant + undecided)
    assert stats.get("focused/warc/undecided", 0) == len(undecided)
    assert len(relevant) > 10 and all(r["status"] == "200" for r in responses)
    # Every unchanged revisit of maintenance mode is a revisit record of the original.
    unchanged = [item["url"] for item in feed if item["bad"] == "unchanged"]
    revisits = of_type(records, "revisit")
    assert unchanged and stats["focused/warc/revisits"] == len(revisits) == len(unchanged)
    by_id = {r["headers"]["WARC-Record-ID"]: r for r in responses}
    for revisit in revisits:
        headers = revisit["headers"]
        original = by_id[headers["WARC-Refers-To"]]["headers"]
        assert headers["WARC-Profile"] == PROFILE
        assert headers["WARC-Refers-To-Target-URI"] == headers["WARC-Target-URI"]
        assert headers["WARC-Target-URI"] == original["WARC-Target-URI"]
        assert headers["WARC-Refers-To-Date"] == original["WARC-Date"] < headers["WARC-Date"]
        assert headers["WARC-Payload-Digest"] == original["WARC-Payload-Digest"]
        assert revisit["payload"] == b"" and revisit["status"] == "200"
    assert "Closed WARC file " in crawl.log()
    check_metadata(records, feed)


def check_metadata(records: list[dict], feed: list[dict]) -> None:
    """Every fetched page of the feed has a metadata record of its feed fields, after its
    response or revisit record and concurrent to it when that is kept."""
    fetched = {item["order"]: item for item in feed if item["order"] is not None}
    metadata = of_type(records, "metadata")
    assert sorted(json.loads(r["payload"])["order"] for r in metadata) == sorted(fetched)
    ids = {r["headers"]["WARC-Record-ID"] for r in of_type(records, "response")}
    ids |= {r["headers"]["WARC-Record-ID"] for r in of_type(records, "revisit")}
    for record in metadata:
        fields = json.loads(record["payload"])
        item = fetched[fields["order"]]
        assert record["headers"]["Content-Type"] == "application/json"
        assert record["headers"]["WARC-Target-URI"] == item["url"]
        assert fields == {name: item.get(name) for name in METADATA_FIELDS}
        concurrent = record["headers"].get("WARC-Concurrent-To")
        assert concurrent is None or concurrent in ids
    kept = [r for r in metadata if "WARC-Concurrent-To" in r["headers"]]
    assert len(kept) == len(ids)


def served_urls(log: Path) -> set[str]:
    return {url_key(entry["url"]) for entry in read_log(log)}


def test_all_responses_round_trip_through_a_bundle(
    crawl: Crawl, served: ServedWeb, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "warc"
    stats = crawl.run(
        FOCUSED_WARC="all", FOCUSED_WARC_DIR=str(folder), FOCUSED_WARC_MAX_SIZE=50_000
    )
    records = check_files(folder, stats, crawl.name)
    assert stats["focused/warc/files"] >= 3  # rotated
    responses = of_type(records, "response")
    kept = collections.Counter(r["headers"]["WARC-Target-URI"] for r in responses)
    statuses = {r["headers"]["WARC-Target-URI"]: r["status"] for r in responses}
    # Every page with a response: non-HTML, 404s and 500s too; also redirects and robots.txt,
    # which never reach the spider; a fetch without a response (truncated) is not there.
    feed = crawl.feed()
    with_response = {item["url"] for item in feed if item["status"] is not None}
    assert with_response <= kept.keys() and max(kept.values()) == 1
    assert {"301", "404", "500"} <= set(statuses.values())
    assert any(url.endswith("/robots.txt") for url in kept)
    assert not {item["url"] for item in feed if item["status"] is None} & kept.keys()

    served.stop()  # writes out its log
    bundle = tmp_path / "bundle"
    files = sorted(str(path) for path in folder.glob("*.warc.gz"))
    assert main(["web", "from-warc", *files, "-o", str(bundle)]) == 0
    assert f"wrote {len(kept)} pages to {bundle}" in capsys.readouterr().out
    with ServedWeb(bundle, log_path=tmp_path / "replayed.jsonl") as replayed:
        again = Crawl(crawl.topic, replayed.proxy, crawl.home, crawl.name + "-again", tmp_path)
        again.run("again.jsonl", FOCUSED_WARC="none")
    assert served_urls(tmp_path / "replayed.jsonl") == served_urls(served.log_path)
    assert not (crawl.home / "warc" / again.name).exists()  # "none" writes nothing


def test_a_keep_known_run_writes_revisits_of_the_first_runs_records(
    crawl: Crawl, redis_client, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "warc"
    first = crawl.run(FOCUSED_WARC_DIR=str(folder), CLOSESPIDER_PAGECOUNT=60)
    originals = {
        r["headers"]["WARC-Record-ID"]: r
        for r in of_type(check_files(folder, first, crawl.name), "response")
    }
    assert originals
    # The next run knows every page: it fetches the seeds again, which are unchanged.
    assert reset_crawl(redis_client, crawl.name, keep_known=True)
    assert redis_client.hlen(keys.prefix(crawl.name) + keys.WARC) == len(originals)
    second_folder = tmp_path / "warc2"
    second = crawl.run("again.jsonl", FOCUSED_WARC_DIR=str(second_folder))
    known = [item["url"] for item in crawl.feed("again.jsonl") if item["bad"] == "duplicate"]
    revisits = of_type(check_files(second_folder, second, crawl.name), "revisit")
    assert revisits and second["focused/warc/revisits"] == len(revisits)
    # Those of the known pages that the first run kept (relevant or undecided), and only those.
    kept = {r["headers"]["WARC-Target-URI"] for r in originals.values()}
    assert {r["headers"]["WARC-Target-URI"] for r in revisits} == set(known) & kept
    for revisit in revisits:
        original = originals[revisit["headers"]["WARC-Refers-To"]]["headers"]
        assert revisit["headers"]["WARC-Refers-To-Date"] == original["WARC-Date"]
        assert revisit["headers"]["WARC-Payload-Digest"] == original["WARC-Payload-Digest"]
    # Both runs' files read back as one bundle: a revisit holds no body and is skipped.
    files = sorted(str(path) for path in [*folder.glob("*.gz"), *second_folder.glob("*.gz")])
    assert main(["web", "from-warc", *files, "-o", str(tmp_path / "bundle")]) == 0
    assert f"{len(revisits)} revisit" in capsys.readouterr().out


def test_ctrl_c_closes_the_file(crawl: Crawl, tmp_path: Path) -> None:
    folder = tmp_path / "warc"
    process = crawl.start(FOCUSED_WARC="all", FOCUSED_WARC_DIR=str(folder), FOCUSED_HOST_DELAY=1)
    try:
        wait_for(lambda: any(folder.glob("*.open")))
        process.send_signal(signal.SIGINT)
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert "Spider closed (shutdown)" in crawl.log()
    assert not list(folder.glob("*.open"))
    assert len(list(folder.glob("*.warc.gz"))) == 1
    records = read_records(folder)
    assert records[0]["type"] == "warcinfo" and of_type(records, "response")
