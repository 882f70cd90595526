"""Monitoring: alarms, and the report read from Redis after a real crawl."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from focused.monitor.snapshot import (
    NO_CATEGORY,
    _process,
    alarms,
    crawl_snapshot,
    format_report,
    format_status,
    status_rows,
)
from focused.store import keys
from focused.store.admin import reset_crawl
from focused.store.reads import Reader

ROOT = Path(__file__).resolve().parents[1]

LIMITS = {"min_pages": 200, "diffusion_ratio": 0.5, "stagnation_harvest": 0.1}


def names(*args, **kwargs) -> list[str]:
    return [alarm.name for alarm in alarms(*args, **{**LIMITS, **kwargs})]


def test_no_alarm_on_a_healthy_crawl():
    assert names("soft", 0.4, 0.45, 500, False) == []
    assert names("hard", 0.4, 0.45, 500, False) == []


def test_frontier_running_dry_is_a_notice_not_an_alarm_in_any_mode():
    for focus in ("soft", "hard", "breadth-first"):
        raised = alarms(focus, 0.4, 0.45, 50, True, **LIMITS)
        assert [(a.name, a.level) for a in raised] == [("exhausted", "notice")]
    assert names("soft", None, None, 0, True) == []  # nothing crawled yet


def test_harvest_collapse_under_hard_focus_is_stagnation():
    assert names("hard", 0.05, 0.4, 500, False) == ["stagnation"]
    assert names("hard", 0.05, 0.4, 150, False) == []  # too early to tell


def test_soft_focus_drifting_is_diffusion():
    assert names("soft", 0.1, 0.4, 500, False) == ["diffusion"]
    assert names("soft", 0.3, 0.4, 500, False) == []
    alarm = alarms("soft", 0.1, 0.4, 500, False, **LIMITS)[0]
    assert "0.100" in alarm.message and "0.400" in alarm.message and "500 pages" in alarm.message


def test_report_after_a_crawl(crawl, redis_home, tmp_path):
    stats = crawl.run()  # the whole web: the frontier runs dry at the end
    # A web crawled to its end: a notice, logged as information, no alarm and no warning.
    assert stats["focused/alarm/exhausted"] == 1 and "focused/alarm/stagnation" not in stats
    assert crawl.log().count("INFO: Notice, exhausted: the frontier ran dry") == 1
    assert "Alarm" not in crawl.log()
    png = tmp_path / "curve.png"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "focused.cli.main",
            "report",
            crawl.name,
            "--home",
            str(redis_home),
            "--png",
            str(png),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert sum(report["census"].values()) == report["classified"] > 0
    assert sum(report["tries"].values()) == report["fetched"] + report["failed"]
    assert report["curve"][-1]["pages"] == report["classified"]
    # The curve's harvest: the share of relevant pages among each 100 classified.
    first = [item for item in crawl.feed() if item["relevance"] is not None][:100]
    assert report["curve"][0]["harvest_100"] == round(sum(i["relevant"] for i in first) / 100, 4)
    assert [a["name"] for a in report["alarms"]][:1] == ["exhausted"]
    assert png.read_bytes().startswith(b"\x89PNG")


def test_the_status_page_explains_every_line_and_no_other(redis_client, crawl_name):
    """docs/reference/status.md has a row for each line of ``focused status`` (those of a topic
    that learns itself, of a crawl that renders pages and of one that identifies languages
    included), in the same words, and none that it does not print."""
    prefix = keys.prefix(crawl_name)
    redis_client.hset(prefix + keys.STATS, mapping={"fetched": 3, "classified": 3})
    try:
        every_crawl = [
            label for label, _ in status_rows(crawl_snapshot(Reader(redis_client), crawl_name))
        ]
        redis_client.hset(prefix + keys.LEARNED, mapping={"generation": 1, "top": "[]"})
        redis_client.hset(prefix + keys.SCRAPY_STATS, mapping={"focused/render/pages": 1})
        redis_client.hset(prefix + keys.SCRAPY_STATS, mapping={"focused/language/en": 2})
        printed = [
            label for label, _ in status_rows(crawl_snapshot(Reader(redis_client), crawl_name))
        ]
    finally:
        reset_crawl(redis_client, crawl_name)
    page = (ROOT / "docs" / "reference" / "status.md").read_text(encoding="utf-8")
    explained = re.findall(r"^\| `([^`]+)` \|", page, re.M)
    assert len(printed) > 20
    assert explained == printed
    # A row only some crawls print never widens the lines (labels are aligned) of every crawl.
    optional = set(printed) - set(every_crawl)
    assert "rendered pages" in optional
    widest = max(len(label) for label in every_crawl)
    assert all(len(label) <= widest for label in optional), optional


def test_the_exporter_serves_rendered_pages_by_reason_and_hosts_flagged(redis_client, crawl_name):
    from focused.monitor.metrics import CrawlCollector

    prefix = keys.prefix(crawl_name)
    stats = {"focused/render/pages": 5, "focused/render/reason/little_text": 3}
    stats |= {"focused/render/reason/host": 2, "focused/render/hosts_flagged": 1}
    redis_client.hset(prefix + keys.STATS, mapping={"fetched": 6, "classified": 6})
    redis_client.hset(prefix + keys.SCRAPY_STATS, mapping=stats)
    try:
        samples = {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in CrawlCollector(Reader(redis_client)).collect()
            for sample in family.samples
        }
    finally:
        reset_crawl(redis_client, crawl_name)
    crawl = ("crawl", crawl_name)
    rendered = {
        reason: samples["focused_pages_rendered_total", (crawl, ("reason", reason))]
        for reason in ("always", "little_text", "host")
    }
    assert rendered == {"always": 0, "little_text": 3, "host": 2}
    assert samples["focused_hosts_rendered_total", (crawl,)] == 1


def test_the_report_says_what_its_figures_count(redis_client, crawl_name):
    """A topic without categories has no census (not one of a category "-"), the num_tries
    histogram is in words, and a process's count is of responses (robots.txt included), which
    ``fetched`` is not."""
    prefix = keys.prefix(crawl_name)
    redis_client.hset(prefix + keys.STATS, mapping={"fetched": 3, "classified": 3, "relevant": 2})
    redis_client.hset(prefix + keys.CENSUS, mapping={NO_CATEGORY: 3})
    redis_client.hset(prefix + keys.TRIES, mapping={"0": 2, "1": 1})
    redis_client.zadd(prefix + keys.PROCS, {"vm:1:ab": 1})
    record = {"host": "vm", "pid": 1, "started": 1, "beat": 2, "state": "finished"}
    record |= {"reason": "finished", "pages": 5, "items": 3, "relevant": 2}
    redis_client.hset(prefix + keys.PROC + "vm:1:ab", mapping=record)
    try:
        report = format_report(crawl_snapshot(Reader(redis_client), crawl_name)).splitlines()
    finally:
        reset_crawl(redis_client, crawl_name)
    census = report.index("census of classified pages by best category (top 15):")
    assert report[census + 1] == "  none: the topic has no categories"
    tries = report.index("URLs acknowledged, by failed tries before (num_tries):")
    assert report[tries + 1 : tries + 3] == [
        "         2  at the first try",
        "         1  after 1 failed try",
    ]
    assert "  vm:1:ab  finished (finished)  5 responses, 3 items, 2 relevant" in report


def test_a_hung_process_is_shown_as_hung_and_not_as_an_ended_one(redis_client, crawl_name):
    """A hung process's record has no finish reason: the crawl's picture (status, dashboard,
    exporter) shows it as hung, and the crawl as stopped, where it raised a KeyError."""
    prefix = keys.prefix(crawl_name)
    redis_client.hset(prefix + keys.STATS, mapping={"fetched": 3, "classified": 3})
    redis_client.zadd(prefix + keys.PROCS, {"vm:1:ab": 1})
    record = {"host": "vm", "pid": 1, "started": 1, "beat": 2, "state": "hung", "pages": 5}
    redis_client.hset(prefix + keys.PROC + "vm:1:ab", mapping=record)
    try:
        snapshot = crawl_snapshot(Reader(redis_client), crawl_name)
    finally:
        reset_crawl(redis_client, crawl_name)
    assert (snapshot["state"], snapshot["alive"]) == ("stopped", 0)
    assert "  vm:1:ab  hung  5 responses, 0 items, 0 relevant" in format_report(snapshot)


def test_time_left_is_counted_from_now_not_from_the_last_beat():
    """A process 50 pages from its limit at 10 pages/s, heard from 4 s ago, has 1 s left."""
    record = {
        "state": "running", "beat": "100", "pages": "950", "pages_per_s": "10",
        "page_limit": "1000", "items": "0", "items_per_s": "0", "item_limit": "0",
    }  # fmt: skip
    assert _process("p", record, now=104.0)["time_left"] == 1.0
    assert _process("p", record, now=110.0)["time_left"] == 0.0  # never below 0


def test_status_and_report_show_no_control_character(redis_client, crawl_name):
    """What Redis holds goes to a terminal, which would obey \x1b[31m or \x1b]0;...\x07."""
    prefix = keys.prefix(crawl_name)
    redis_client.hset(prefix + keys.STATS, mapping={"fetched": 3, "classified": 3})
    redis_client.zadd(prefix + keys.PROCS, {"vm:1:ab": 1})
    record = {"host": "vm", "pid": 1, "started": 1, "beat": 2, "state": "finished"}
    record |= {"reason": "\x1b[31mred\x1b]0;retitled\x07\x9b", "pages": 5, "items": 3}
    redis_client.hset(prefix + keys.PROC + "vm:1:ab", mapping=record)
    try:
        snapshot = crawl_snapshot(Reader(redis_client), crawl_name)
    finally:
        reset_crawl(redis_client, crawl_name)
    for shown in (format_status(snapshot), format_report(snapshot)):
        assert "finished ( [31mred ]0;retitled  )" in shown
        assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", shown)
