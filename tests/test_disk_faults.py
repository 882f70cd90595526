"""Disk faults (:mod:`focused.extensions.diskfaults`): a crawl whose feed, WARC files or lists
cannot be
written stops with one line and exit code 4, its WARC file closed, nothing acknowledged lost; a
models folder that cannot be written is one line and exit code 2.

The crawls write to a real full file system: a small tmpfs where this user may mount one (root),
and always ``/dev/full``, which refuses every write with ENOSPC. The WARC files' cut-back is
tested on real refused writes too, past the process's file size limit (RLIMIT_FSIZE: EFBIG).
"""

from __future__ import annotations

import errno
import json
import logging
import resource
import subprocess
from pathlib import Path

import pytest
from scrapy.utils.test import get_crawler

from focused.extensions.diskfaults import DISK_ERRORS, disk_fault
from focused.extensions.feeds import FlushedFileFeedStorage
from focused.extensions.warc import WarcFiles, request_record, response_record
from tests.conftest import Crawl, final_stats, focused
from tests.test_durability import fetched, read_feed
from tests.test_warc import check_pairs, page, read_records

DATE = "2025-01-06T10:00:00.000001Z"


@pytest.fixture
def mount_tmpfs(tmp_path: Path):
    """Mounts a tmpfs with these options for the test (skipped where this user may not)."""
    mounted: list[Path] = []

    def mount(options: str) -> Path:
        folder = tmp_path / f"tmpfs{len(mounted)}"
        folder.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True
        )
        if done.returncode:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], check=True)


@pytest.fixture
def tmpfs(mount_tmpfs) -> Path:
    """A 96 KiB tmpfs."""
    return mount_tmpfs("size=96k")


def error_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if "] ERROR: " in line or "] CRITICAL: " in line]


def check_stopped_for_disk(crawl: Crawl, outputs: set[str]) -> dict[str, float]:
    """The crawl stopped for a disk fault: one error line for each output that met one, naming
    the file and what to do, no traceback; its final stats."""
    log = crawl.log("disk")
    assert "Traceback" not in log, log[-3000:]
    assert "Closing spider (focused_disk_error)" in log
    lines = error_lines(log)
    met = [line.split("cannot write the ", 1)[1].split(" /", 1)[0] for line in lines]
    assert sorted(met) == sorted(outputs), lines
    assert all("; stopping the crawl: " in line and "resume" in line for line in lines)
    stats = final_stats(log)
    assert stats[DISK_ERRORS] == len(outputs)
    return stats


def check_exported(crawl: Crawl, redis_client, redis_home: Path, tmp_path: Path) -> list[dict]:
    """``focused export`` writes every page the crawl acknowledged, in fetch order."""
    done = fetched(redis_client, crawl.name)
    out = tmp_path / "exported.jsonl"
    result = focused("export", crawl.name, "--home", str(redis_home), "-o", str(out))
    assert result.returncode == 0, result.stderr
    exported = read_feed(out)
    assert done > 0 and [item["order"] for item in exported] == list(range(1, done + 1))
    return exported


def test_a_full_tmpfs_stops_the_crawl_with_its_warc_files_closed(
    crawl: Crawl, tmpfs: Path, redis_client, redis_home, tmp_path
):
    warc = tmpfs / "warc"
    process = crawl.start(
        str(tmpfs / "feed.jsonl"),
        log="disk",
        FOCUSED_WARC="all",
        FOCUSED_WARC_DIR=str(warc),
        FOCUSED_LISTS_DIR=str(tmpfs / "lists"),
        CLOSESPIDER_PAGECOUNT=250,
    )
    assert process.wait(180) == 4
    # The WARC files and the feed filled the disk; the lists file found it full at the close.
    stats = check_stopped_for_disk(crawl, {"feed", "WARC file", "lists file"})
    assert stats["focused/pages/fetched"] < 200
    assert not list(warc.glob("*.open")) and not list(warc.glob("*.incomplete"))
    records = read_records(warc)  # every file whole: cut back to its last whole page
    check_pairs(records)
    assert len(records) >= 3 and records[-1]["type"] in ("request", "metadata")
    assert not list((tmpfs / "lists").glob("*"))  # no part file left behind
    exported = check_exported(crawl, redis_client, redis_home, tmp_path)
    assert (tmpfs / "feed.jsonl").read_bytes().endswith(b"}\n")  # cut back to a whole item
    fed = read_feed(tmpfs / "feed.jsonl")
    # Every page the feed has (failed fetches have no fetch order), and more.
    pages = {(item["order"], item["url"]) for item in fed if item["order"]}
    assert 0 < len(pages) < len(exported)
    assert pages <= {(item["order"], item["url"]) for item in exported}


def test_a_feed_on_dev_full_stops_the_crawl_at_its_first_item(
    crawl: Crawl, redis_client, redis_home, tmp_path
):
    process = crawl.start("/dev/full", log="disk", FOCUSED_WARC="none", FOCUSED_LISTS_DIR="")
    assert process.wait(180) == 4
    check_stopped_for_disk(crawl, {"feed"})
    [line] = error_lines(crawl.log("disk"))
    assert line.endswith(
        "cannot write the feed /dev/full (No space left on device, ENOSPC); stopping the "
        "crawl: free space on its disk (or raise the quota), then run the crawl again to "
        f"resume; `focused export {crawl.name}` writes every page fetched"
    )
    check_exported(crawl, redis_client, redis_home, tmp_path)


@pytest.fixture
def file_size_limit():
    """Sets this process's file size limit (RLIMIT_FSIZE) for the test: the kernel refuses a
    write past it (EFBIG; Python ignores SIGXFSZ)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    yield lambda size: resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def test_a_warc_file_the_disk_refuses_is_cut_back_to_its_last_whole_page(
    tmp_path: Path, file_size_limit
):
    stats = get_crawler().stats
    files = WarcFiles(tmp_path, "birds", max_size=10**9, info={"software": "t"}, stats=stats)
    responses = [page(f"http://a.test/{n}", f"Swans {n} " * 300) for n in range(40)]
    file_size_limit(6000)
    written = 0
    with pytest.raises(OSError) as refused:
        for response in responses:
            files.write_pair(request_record(response.request), response_record(response, DATE))
            written += 1
    file_size_limit(resource.RLIM_INFINITY)
    assert refused.value.errno == errno.EFBIG and 0 < written < len(responses)
    [path] = tmp_path.iterdir()
    assert path.name.endswith(".warc.gz") and path.stat().st_size <= 6000
    records = read_records(tmp_path)
    check_pairs(records)
    uris = [r["headers"]["WARC-Target-URI"] for r in records if r["type"] == "response"]
    assert uris == [response.url for response in responses[:written]]
    assert files.out is None  # the next page starts a new file


def test_a_warc_file_that_cannot_be_cut_back_is_named_incomplete(
    tmp_path: Path, file_size_limit, monkeypatch
):
    stats = get_crawler().stats
    files = WarcFiles(tmp_path, "birds", max_size=10**9, info={"software": "t"}, stats=stats)
    response = page("http://a.test/", " ".join(str(n * 7919 % 100003) for n in range(3000)))
    file_size_limit(4000)
    # A disk that also refuses the cut (EIO): the only stand-in here, os.truncate failing.
    monkeypatch.setattr("os.truncate", lambda *_: (_ for _ in ()).throw(OSError(errno.EIO, "")))
    with pytest.raises(OSError):
        files.write_pair(request_record(response.request), response_record(response, DATE))
    file_size_limit(resource.RLIM_INFINITY)
    [path] = tmp_path.iterdir()
    assert path.name.endswith(".warc.gz.incomplete")


def test_a_feed_file_that_cannot_be_opened_is_one_fault(tmp_path: Path, caplog):
    crawler = get_crawler(settings_dict={"FOCUSED_CRAWL": "birds"})
    (tmp_path / "file").write_text("")
    uri = str(tmp_path / "file" / "feed.jsonl")  # under a file: no folder can be made
    storage = FlushedFileFeedStorage.from_crawler(crawler, uri, feed_options={"format": "jl"})
    with caplog.at_level(logging.ERROR):
        out = storage.open(None)
        for _ in range(3):
            out.write(b'{"url": "a"}\n')
        out.close()
    [record] = caplog.records
    assert record.getMessage().startswith(f"cannot write the feed {uri} (File exists, EEXIST)")
    assert crawler.stats.get_value(DISK_ERRORS) == 1


def test_a_feed_the_disk_refuses_is_cut_back_to_its_last_whole_item(
    tmp_path: Path, file_size_limit, caplog
):
    crawler = get_crawler(settings_dict={"FOCUSED_CRAWL": "birds"})
    path = tmp_path / "feed.jsonl"
    path.write_bytes(b'{"url": "before"}\n')  # a feed appended to: its items stay
    storage = FlushedFileFeedStorage.from_crawler(crawler, str(path), feed_options={"format": "jl"})
    line = json.dumps({"url": "http://a.test/", "title": "S" * 91}).encode() + b"\n"
    assert len(line) == 130
    file_size_limit(1000)  # the 8th item half fits: the disk takes 72 of its 130 bytes
    with caplog.at_level(logging.ERROR):
        out = storage.open(None)
        for _ in range(10):
            out.write(line)
        out.close()
    file_size_limit(resource.RLIM_INFINITY)
    [record] = caplog.records
    assert "(File too large, EFBIG)" in record.getMessage()
    assert path.read_bytes() == b'{"url": "before"}\n' + line * 7  # 18 + 7 x 130 bytes


def test_a_fault_with_an_unknown_errno_says_to_check_the_disk(caplog):
    crawler = get_crawler()
    with caplog.at_level(logging.ERROR):
        disk_fault(crawler, "feed", "x.jsonl", OSError(errno.EIO, "Input/output error"))
    assert caplog.records[0].getMessage() == (
        "cannot write the feed x.jsonl (Input/output error, EIO); stopping the crawl: check "
        "its disk, then run the crawl again to resume"
    )


def check_models_refused(crawl: Crawl, models: Path, cause: str) -> None:
    log = crawl.log()
    assert "Traceback" not in log and "never retrieved" not in log, log[-3000:]
    [line] = error_lines(log)
    assert f"focused: error: cannot save the model {models}/" in line
    assert line.endswith(
        f"({cause}): FOCUSED_MODELS_DIR must name a folder this user can write, with room for "
        "the model"
    )


@pytest.mark.crawl
def test_a_models_folder_that_cannot_be_made_is_one_line(crawl: Crawl, redis_client, tmp_path):
    (tmp_path / "file").write_text("")
    models = tmp_path / "file" / "models"  # under a file: no folder can be made (any user)
    assert crawl.start(FOCUSED_MODELS_DIR=str(models)).wait(120) == 2
    check_models_refused(crawl, models, "Not a directory")


@pytest.mark.crawl
def test_a_read_only_models_folder_is_one_line(crawl: Crawl, redis_client, mount_tmpfs):
    models = mount_tmpfs("ro,size=64k")  # empty and read-only, for root too
    assert crawl.start(FOCUSED_MODELS_DIR=str(models)).wait(120) == 2
    check_models_refused(crawl, models, "Read-only file system")
