"""Monitoring: alarms, and the report read from Redis after a real crawl."""

from __future__ import annotations

import json
import subprocess
import sys

from focused.monitor.snapshot import alarms

LIMITS = {"min_pages": 200, "diffusion_ratio": 0.5, "stagnation_harvest": 0.1}


def names(*args, **kwargs) -> list[str]:
    return [alarm.name for alarm in alarms(*args, **{**LIMITS, **kwargs})]


def test_no_alarm_on_a_healthy_crawl():
    assert names("soft", 0.4, 0.45, 500, False) == []
    assert names("hard", 0.4, 0.45, 500, False) == []


def test_frontier_running_dry_is_stagnation_in_any_mode():
    assert names("soft", 0.4, 0.45, 50, True) == ["stagnation"]
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
    assert stats["focused/alarm/stagnation"] == 1
    assert crawl.log().count("Alarm, stagnation: the frontier ran dry") == 1
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
    assert [a["name"] for a in report["alarms"]][:1] == ["stagnation"]
    assert png.read_bytes().startswith(b"\x89PNG")
