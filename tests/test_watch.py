"""Watching crawls: heartbeats, the crawl-wide Scrapy stats, `focused status --watch`, the
Prometheus exporter and the dashboard in a real headless Chromium, during real crawls."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import lxml.html
import pytest
from prometheus_client.parser import text_string_to_metric_families
from scrapy.utils.test import get_crawler

from focused.extensions import heartbeat as heartbeat_module
from focused.extensions.heartbeat import HUNG_BEATS, Heartbeat
from focused.monitor.snapshot import crawl_snapshot
from focused.settings import defaults
from focused.store import keys
from focused.store.crawl import CrawlStore
from focused.store.frontier.base import Link
from focused.store.processes import ProcessRecords
from focused.store.reads import Reader
from tests.conftest import final_stats, wait_for

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("FOCUSED_TEST_ARTIFACTS", "test-artifacts"))
# Two processes slowed down by the per-host delay, each with a page limit, so that the checks
# made during the crawl find both crawling with a time left.
TWO_PROCESSES = {
    "FOCUSED_HOST_DELAY": 1.0,
    "FOCUSED_HEARTBEAT_S": 1,
    "FOCUSED_STATS_FLUSH_S": 1,
    "CLOSESPIDER_PAGECOUNT": 120,
    "CONCURRENT_REQUESTS": 4,
}


def stats_collector(home: Path, crawl: str):  # noqa: ANN201 - RedisStatsCollector
    crawler = get_crawler(
        settings_dict={
            **{name: getattr(defaults, name) for name in dir(defaults) if name.isupper()},
            "STATS_CLASS": "focused.extensions.stats.RedisStatsCollector",
            "FOCUSED_CRAWL": crawl,
            "FOCUSED_HOME": str(home),
            "FOCUSED_STATS_FLUSH_S": 0,  # written when flushed or closed, not on a timer
            "STATS_DUMP": False,
        }
    )
    crawler.stats.open_spider()
    return crawler.stats


def test_stats_of_two_processes_add_up_in_redis(redis_home, redis_client, crawl_name):
    one, two = stats_collector(redis_home, crawl_name), stats_collector(redis_home, crawl_name)
    for _ in range(3):
        one.inc_value("downloader/request_count")
    two.inc_value("downloader/request_count", 4)
    one.inc_value("downloader/response_bytes", 1000, start=10)
    one.max_value("request_depth_max", 3)
    two.max_value("request_depth_max", 5)
    one.min_value("first_depth", 7)
    two.min_value("first_depth", 2)
    one.set_value("finish_reason", "shutdown")
    started = datetime(2026, 1, 2, tzinfo=UTC)
    two.set_value("start_time", started)
    assert redis_client.hgetall(keys.prefix(crawl_name) + keys.SCRAPY_STATS) == {}  # batched
    one.flush()
    two.flush()
    two.set_value("finish_reason", "finished")  # the last writer's value stays
    two.max_value("request_depth_max", 4)  # lower than the crawl's maximum: no change
    one.inc_value("downloader/request_count")
    one.close_spider(reason="finished")  # closing flushes the rest
    two.close_spider(reason="finished")
    shared = redis_client.hgetall(keys.prefix(crawl_name) + keys.SCRAPY_STATS)
    assert float(shared["downloader/request_count"]) == 8
    assert float(shared["downloader/response_bytes"]) == 1010
    assert (shared["request_depth_max"], shared["first_depth"]) == ("5", "2")
    assert shared["finish_reason"] == "finished"
    assert float(shared["start_time"]) == started.timestamp()
    # Each process still has its own stats, as Scrapy dumps them at the end.
    assert one.get_value("downloader/request_count") == 4
    assert two.get_value("request_depth_max") == 5


@contextmanager
def serving(*args: str) -> Iterator[str]:
    """A `focused` server command on a free port; yields the URL of its ready line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "focused.cli.main", *args, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        match = re.search(r"http://\S+", line)
        if match is None:
            process.wait(30)
            raise AssertionError(f"{args[0]} did not start: {line}{process.stderr.read()}")
        yield match[0]
    finally:
        process.send_signal(signal.SIGINT)
        try:
            assert process.wait(30) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
            process.stderr.close()


def scrape(url: str) -> dict[tuple[str, tuple], float]:
    """The exporter's samples: (name, sorted labels) -> value."""
    import requests

    response = requests.get(url, timeout=30)
    response.raise_for_status()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def redis_figures(client, crawl: str) -> dict[str, int]:
    """fetched and relevant as the crawl's own counters hold them, read directly."""
    stats = client.hgetall(keys.prefix(crawl) + keys.STATS)
    return {name: int(stats.get(name, 0)) for name in ("fetched", "relevant", "classified")}


def crawling(client, crawl: str, processes: int) -> bool:
    """True once ``processes`` processes crawl with a rate, so a time left is known."""
    snapshot = crawl_snapshot(Reader(client), crawl)
    alive = [p for p in snapshot.get("processes", ()) if p["alive"]]
    return len(alive) == processes and all(p["time_left"] is not None for p in alive)


@contextmanager
def crawls(crawl, count: int, **settings: object) -> Iterator[list[subprocess.Popen]]:
    """``count`` crawler processes of one crawl; they must end well."""
    processes = [crawl.start(f"feed{i}.jsonl", **settings) for i in range(count)]
    try:
        yield processes
        for i, process in enumerate(processes):
            assert process.wait(240) == 0, crawl.log(f"feed{i}.jsonl")[-3000:]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()


def test_exporter_and_status_watch_two_processes(crawl, redis_home, redis_client):
    with (
        serving("exporter", "--home", str(redis_home)) as url,
        crawls(crawl, 2, **TWO_PROCESSES),
    ):
        # Both processes crawling, and pages classified (the harvest is there to export).
        wait_for(
            lambda: (
                crawling(redis_client, crawl.name, 2)
                and crawl_snapshot(Reader(redis_client), crawl.name)["harvest_100"] is not None
            ),
            timeout=120,
        )
        ids = set(redis_client.zrange(keys.prefix(crawl.name) + keys.PROCS, 0, -1))
        before = redis_figures(redis_client, crawl.name)
        samples = scrape(url)
        after = redis_figures(redis_client, crawl.name)
        label = (("crawl", crawl.name),)
        fetched = samples["focused_pages_fetched_total", label]
        assert before["fetched"] <= fetched <= after["fetched"]
        for process in ids:  # both processes, crawling
            labels = tuple(sorted({"crawl": crawl.name, "process": process}.items()))
            assert samples["focused_process_up", labels] == 1
            assert samples["focused_process_pages_total", labels] >= 0
            assert samples["focused_process_time_left_seconds", labels] > 0
            assert samples["focused_process_last_heartbeat_timestamp_seconds", labels] > 0
        assert len(ids) == 2 and samples["focused_processes_alive", label] == 2
        assert samples["focused_crawl_running", label] == 1
        assert ("focused_frontier_queued", label) in samples
        assert ("focused_harvest_ratio", (*label, ("window", "100"))) in samples
        for alarm in ("stagnation", "diffusion"):
            assert ("focused_alarm", (("alarm", alarm), *label)) in samples
        assert samples["focused_redis_up", ()] == 1

        # `focused status --watch` during the crawl: a couple of refreshes, then Ctrl-C.
        watch = subprocess.Popen(
            [sys.executable, "-m", "focused.cli.main", "status", crawl.name, "--watch", "0.3"]
            + ["--home", str(redis_home)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONFAULTHANDLER": "1"},  # SIGABRT prints its stacks
        )
        lines = []
        while sum("(Ctrl-C stops)" in line for line in lines) < 3:
            lines.append(watch.stdout.readline())
            assert lines[-1], watch.stderr.read()
        watch.send_signal(signal.SIGINT)
        try:
            rest, errors = watch.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # where it hangs, for whoever reads the failure
            watch.send_signal(signal.SIGABRT)
            pytest.fail("status --watch did not stop on Ctrl-C:\n" + watch.communicate()[1])
        assert watch.returncode == 130 and "Traceback" not in errors
        first = "".join(lines).split("(Ctrl-C stops)")[1]  # one whole refresh
        rows = dict(re.findall(r"^(\S.*?)  +(\S.*)$", first, re.MULTILINE))
        assert rows["state"] == "running, 2 processes alive"
        assert float(rows["pages/s"]) > 0
        assert re.fullmatch(r"\d+ (s|min \d\d s)", rows["time left (to page/item limit)"])
        assert rows["processes alive"] == "2 of 2 recorded"
        assert all(f"  {process}  running  " in first for process in ids)

    # After the crawl: each process recorded how it ended; the Scrapy stats of both add up.
    snapshot = crawl_snapshot(Reader(redis_client), crawl.name)
    assert snapshot["state"] == "finished" and snapshot["alive"] == 0
    assert {p["id"] for p in snapshot["processes"]} == ids
    assert {(p["state"], p["page_limit"]) for p in snapshot["processes"]} == {("finished", 120)}
    finals = [final_stats(crawl.log(f"feed{i}.jsonl")) for i in range(2)]
    for stat in ("response_received_count", "item_scraped_count", "downloader/request_count"):
        assert snapshot["scrapy"][stat] == sum(final[stat] for final in finals), stat
    assert {p["pages"] for p in snapshot["processes"]} == {
        final["response_received_count"] for final in finals
    }
    with serving("exporter", "--home", str(redis_home)) as url:
        samples = scrape(url)
    label = (("crawl", crawl.name),)
    assert samples["focused_pages_fetched_total", label] == snapshot["fetched"]
    assert samples["focused_pages_relevant_total", label] == snapshot["relevant"]
    assert samples["focused_crawl_running", label] == 0
    stat = (*label, ("stat", "item_scraped_count"))
    assert samples["focused_scrapy_stat", stat] == snapshot["scrapy"]["item_scraped_count"]


def chromium(url: str, tmp_path: Path, *options: str) -> str:
    """Load ``url`` in a headless Chromium, let its script run; returns stdout."""
    result = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / f'chromium-{uuid.uuid4().hex[:8]}'}",
            "--virtual-time-budget=4000",
            *options,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def shown(url: str, tmp_path: Path, crawl: str) -> dict:
    """The figures the dashboard shows for one crawl, from the DOM after its script ran."""
    page = lxml.html.fromstring(chromium(url, tmp_path, "--dump-dom"))
    assert page.xpath("//body/@data-crawls"), "the page's script did not render"
    card = page.xpath("//section[@data-crawl=$c]", c=crawl)[0]

    def values(figure: str) -> list[str]:
        return card.xpath(".//*[@data-figure=$f]/@data-value", f=figure)

    figures = {
        name: values(name)[0]
        for name in ("queued", "in_flight", "fetched", "relevant", "state", "harvest")
        + ("harvest_100", "harvest_1000", "pages_per_s", "time_left", "curve")
    }
    figures["processes"] = {
        row.get("data-process"): {
            cell.get("data-figure"): cell.get("data-value")
            for cell in row.xpath(".//*[@data-figure]")
        }
        for row in card.xpath(".//tr[@data-process]")
    }
    figures["census"] = {
        row.get("data-category"): int(row.xpath(".//*[@data-figure='census']/@data-value")[0])
        for row in card.xpath(".//tr[@data-category]")
    }
    figures["hubs"] = values("hub")
    figures["authorities"] = values("authority")
    figures["alarms"] = values("alarm")
    figures["scrapy"] = {
        cell.get("data-stat"): cell.get("data-value")
        for cell in card.xpath(".//*[@data-figure='scrapy']")
    }
    return figures


def number(text: str) -> float | None:
    return float(text) if text else None


def keep(picture: Path) -> None:
    """Keep a screenshot as a test artefact (FOCUSED_TEST_ARTIFACTS, else test-artifacts/)."""
    assert picture.read_bytes().startswith(b"\x89PNG")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(picture, ARTIFACTS / picture.name)


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium in /usr/bin (scripts/setup.sh)"
)
def test_dashboard_shows_redis_figures_in_chromium(crawl, redis_home, redis_client, tmp_path):
    with (
        serving("dashboard", "--home", str(redis_home)) as url,
        crawls(crawl, 2, **{**TWO_PROCESSES, "FOCUSED_DISTILL_PAGES": 30}),
    ):
        wait_for(lambda: crawling(redis_client, crawl.name, 2), timeout=120)
        before = redis_figures(redis_client, crawl.name)
        during = shown(url, tmp_path, crawl.name)
        after = redis_figures(redis_client, crawl.name)
        picture = tmp_path / "dashboard-during-crawl.png"
        chromium(url, tmp_path, f"--screenshot={picture}", "--window-size=1280,1800")
        keep(picture)
        for name in ("fetched", "relevant"):
            assert before[name] <= int(during[name]) <= after[name], name
        assert during["state"] == "running" and float(during["pages_per_s"]) > 0
        assert number(during["time_left"]) > 0
        ids = set(redis_client.zrange(keys.prefix(crawl.name) + keys.PROCS, 0, -1))
        assert set(during["processes"]) == ids and len(ids) == 2
        assert {p["state"] for p in during["processes"].values()} == {"running"}

    # After the crawl every figure shown is Redis's exactly.
    with serving("dashboard", "--home", str(redis_home)) as url:
        final = shown(url, tmp_path, crawl.name)
        picture = tmp_path / "dashboard-after-crawl.png"
        chromium(url, tmp_path, f"--screenshot={picture}", "--window-size=1280,1800")
        keep(picture)
    snapshot = crawl_snapshot(Reader(redis_client), crawl.name)
    figures = redis_figures(redis_client, crawl.name)
    for name in ("fetched", "relevant"):
        assert int(final[name]) == figures[name], name
    for name in ("queued", "in_flight", "harvest", "harvest_100", "harvest_1000", "time_left"):
        assert number(final[name]) == snapshot[name], name
    assert number(final["harvest"]) == round(figures["relevant"] / figures["classified"], 4)
    assert final["state"] == "finished" and int(final["curve"]) == len(snapshot["curve"])
    assert final["processes"] == {
        p["id"]: {
            "state": "finished",
            "pages": str(p["pages"]),
            "items": str(p["items"]),
            "relevant": str(p["relevant"]),
            "pages_per_s": str(p["pages_per_s"]),
            "time_left": "",
        }
        for p in snapshot["processes"]
    }
    census = redis_client.hgetall(keys.prefix(crawl.name) + keys.CENSUS)
    top = sorted(census.items(), key=lambda c: -int(c[1]))[:12]
    assert final["census"] == {category: int(n) for category, n in top}
    assert final["hubs"] == [hub["url"] for hub in snapshot["distill"]["top_hubs"]]
    assert final["hubs"] and final["authorities"]
    assert final["alarms"] == [alarm["name"] for alarm in snapshot["alarms"]]
    shared = redis_client.hgetall(keys.prefix(crawl.name) + keys.SCRAPY_STATS)
    numbers = {name: float(v) for name, v in shared.items() if re.fullmatch(r"[-+\d.e]+", v)}
    assert numbers and {name: float(final["scrapy"][name]) for name in numbers} == numbers


def test_a_killed_process_is_gone_after_three_beats(crawl, redis_client):
    process = crawl.start(FOCUSED_HOST_DELAY=1.0, FOCUSED_HEARTBEAT_S=0.5)
    try:
        wait_for(lambda: crawl_snapshot(Reader(redis_client), crawl.name).get("alive") == 1, 120)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    # It recorded no end: its record expires three beats after the last one.
    wait_for(lambda: not crawl_snapshot(Reader(redis_client), crawl.name)["processes"], 30)
    snapshot = crawl_snapshot(Reader(redis_client), crawl.name)
    assert (snapshot["state"], snapshot["alive"], snapshot["pages_per_s"]) == ("stopped", 0, 0)


def records_while_busy(
    crawl, redis_client, seconds: float, beat_s: float
) -> list[tuple[float, int, list[str]]]:
    """Run a crawl whose reactor is held ``seconds`` at its third page (tests/busy_reactor.py)
    and count its process records every 0.05 s from its first beat to its end, but those that
    say hung (0: its record expired or says hung, the process taken for dead): (time, records,
    their states) triples."""
    repository = str(Path(__file__).parents[1])
    crawl.extra_env["PYTHONPATH"] = repository
    process = crawl.start(
        EXTENSIONS=json.dumps({"tests.busy_reactor.BusyReactor": 0}),
        BUSY_REACTOR_S=seconds,
        FOCUSED_HEARTBEAT_S=beat_s,
        FOCUSED_HOST_DELAY=0.2,
        CLOSESPIDER_PAGECOUNT=10,
    )
    records = []
    try:
        wait_for(lambda: crawl_snapshot(Reader(redis_client), crawl.name).get("processes"), 120)
        while process.poll() is None:
            processes = crawl_snapshot(Reader(redis_client), crawl.name).get("processes", [])
            states = [p["state"] for p in processes]
            records.append((time.monotonic(), len(states) - states.count("hung"), states))
            time.sleep(0.05)
        assert process.wait() == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert f"Holding the reactor for {seconds:.1f} s" in crawl.log()
    return records


def test_a_busy_process_goes_on_beating(crawl, redis_client):
    # 6 s busy: 12 beats of 0.5 s, where three missed beats take a process for dead.
    records = records_while_busy(crawl, redis_client, 6.0, 0.5)
    assert records[-1][0] - records[0][0] > 6.0 and all(n == 1 for _, n, _ in records)


def test_a_hung_process_stops_beating_until_its_reactor_is_back(crawl, redis_client):
    # Hung after HUNG_BEATS beats of 0.2 s (12 s): its record says so (its leases go back one
    # try later) and says running again with the reactor, 4 s on.
    assert HUNG_BEATS * 0.2 == 12.0
    records = records_while_busy(crawl, redis_client, 16.0, 0.2)
    gone = [at for at, n, _ in records if n == 0]
    assert gone and records[0][1] == 1 and records[-1][1] == 1
    assert 2.0 < gone[-1] - gone[0] < 6.0  # gone for about 16 - 12 s, once
    assert all(n == 0 for at, n, _ in records if gone[0] <= at <= gone[-1])
    assert all(states == ["hung"] for at, _, states in records if gone[0] < at < gone[-1])


@pytest.mark.crawl
def test_readers_need_a_redis_with_crawls(tmp_path):
    """The dashboard and the exporter only read: no Redis is made where there was none."""
    for command in ("dashboard", "exporter"):
        home = tmp_path / command
        result = subprocess.run(
            [sys.executable, "-m", "focused.cli.main", command, "--home", str(home), "--port", "0"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2 and result.stderr.startswith("focused: error: no ")
        assert not home.exists()


def test_status_shows_finished_processes_and_harvest(crawl, redis_home, redis_client):
    crawl.run(CLOSESPIDER_ITEMCOUNT=40, FOCUSED_HEARTBEAT_S=1)
    result = subprocess.run(
        [sys.executable, "-m", "focused.cli.main", "status", crawl.name, "--home", str(redis_home)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    snapshot = crawl_snapshot(Reader(redis_client), crawl.name)
    rows = dict(re.findall(r"^(\S.*?)  +(\S.*)$", result.stdout, re.MULTILINE))
    assert rows["state"] == "finished (closespider_itemcount)"
    assert rows["harvest (relevant share)"] == f"{snapshot['harvest']:.3f}"
    assert rows["processes alive"] == "0 of 1 recorded"
    (process,) = snapshot["processes"]
    assert f"{process['id']}  finished (closespider_itemcount)" in result.stdout
    assert process["item_limit"] == 40 and process["items"] >= 40


@pytest.mark.crawl
def test_status_watch_waits_for_a_crawl_that_has_not_started(
    redis_home, redis_client, frontier, crawl_name
):
    """Without --watch a crawl not in Redis is an error; with it, the watch waits (saying so
    once), shows the crawl when its first URL is queued and stops on Ctrl-C."""
    command = [sys.executable, "-m", "focused.cli.main", "status", crawl_name]
    command += ["--home", str(redis_home)]
    once = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert once.returncode == 2
    missing = f"focused: error: no crawl named {crawl_name!r} in this Redis ("
    assert once.stderr.startswith(missing) and once.stderr.count("\n") == 1
    watch = subprocess.Popen(
        [*command, "--watch", "0.2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert watch.stdout.readline().startswith("reading embedded Redis")
        line = watch.stdout.readline()
        assert line == f"waiting for crawl {crawl_name!r} to start in this Redis (Ctrl-C stops)\n"
        frontier().push_many([Link("http://www.example.test/first", 1.0)])
        lines = []
        while not any(line.startswith("frontier (queued)") for line in lines):
            lines.append(watch.stdout.readline())
            assert lines[-1], watch.stderr.read()
        assert not any(line.startswith("waiting for crawl") for line in lines)
        assert lines[-1].split() == ["frontier", "(queued)", "1"]
        watch.send_signal(signal.SIGINT)
        _, errors = watch.communicate(timeout=30)
        assert watch.returncode == 130 and "Traceback" not in errors
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.communicate()


def test_a_process_rate_is_its_pace_now_not_since_its_start(redis_client, crawl_name, monkeypatch):
    """Start-up (no response yet) and pages long past do not slow the rate the time left is
    counted from: a process that waited 60 s, then crawls at 10 pages/s, shows 10 pages/s."""
    crawler = get_crawler(settings_dict={"CLOSESPIDER_PAGECOUNT": 1000})
    crawler.stats.open_spider()
    heartbeat = Heartbeat(crawler, 5.0, page_limit=1000, item_limit=0)
    store = CrawlStore(redis_client, crawl_name)
    records = ProcessRecords(store)
    clock = iter(range(0, 200, 5))  # a beat every 5 s, the heartbeat's clock alone
    monkeypatch.setattr(heartbeat_module, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    for pages in [0] * 12 + [50, 100, 150]:  # a minute of start-up, then 10 pages/s
        crawler.stats.set_value("response_received_count", pages)
        heartbeat.record(records, finished=None)
    beat = redis_client.hgetall(store.key(keys.PROC, heartbeat.id))
    assert beat["pages"] == "150" and float(beat["pages_per_s"]) == 10.0
    # A few seconds of pages give no rate yet (so no time left), rather than a wild one.
    assert heartbeat.rate("items", 0.0, 0) == 0 and heartbeat.rate("items", 2.0, 3) == 0
    assert heartbeat.rate("items", 6.0, 63) == 10.5


def test_a_process_beats_while_items_flow_so_its_figures_stay_live(crawl, redis_client):
    """With beats 30 s apart, a crawl of a few seconds still shows its items as they grow
    (a beat a second while items flow), never far behind the crawl's own fetched count."""
    process = crawl.start(FOCUSED_HEARTBEAT_S=30, FOCUSED_HOST_DELAY=0, CLOSESPIDER_ITEMCOUNT=250)
    beats, behind = set(), []
    try:
        while process.poll() is None:
            snapshot = crawl_snapshot(Reader(redis_client), crawl.name)
            for p in snapshot.get("processes", []) if snapshot.get("alive") else []:
                beats.add(p["beat"])
                behind.append(snapshot["fetched"] - p["items"])
            time.sleep(0.2)
    finally:
        crawl.finish(process, 0, 120)
    assert len(beats) >= 3, beats
    assert max(behind) < 100, behind
