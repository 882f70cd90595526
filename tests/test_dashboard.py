"""The dashboard's page: its static files as a package ships and the app serves them, and what
the page makes of hostile names and URLs in Redis, in a real headless Chromium."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import lxml.html
import pytest

import focused
from focused.label import server as label
from focused.monitor import dashboard
from focused.monitor.coverage import Coverage
from focused.monitor.snapshot import NO_CATEGORY
from focused.store import keys
from focused.store.admin import reset_crawl
from focused.store.coverage import CoverageStore
from focused.store.crawl import CrawlStore
from tests.test_watch import CHROMIUM, chromium, serving

SOURCE = Path(focused.__file__).parent
STATIC = SOURCE / "monitor" / "static"
LABEL = SOURCE / "label" / "static"
# Markup that runs script if a name or URL is ever put into the page as HTML.
HOSTILE = '<img src=x onerror="document.title=1">'


@pytest.fixture
def hostile(redis_client) -> Iterator[str]:
    """A crawl in Redis whose name, focus, category, hub URLs and Scrapy stat are markup."""
    name = f"crawl {HOSTILE}"
    prefix = keys.prefix(name)
    redis_client.hset(prefix + keys.STATS, mapping={"fetched": 3, "classified": 3, "queued": 1})
    redis_client.hset(prefix + keys.META, mapping={"focus": HOSTILE, "threshold": 0.5})
    redis_client.hset(prefix + keys.CENSUS, mapping={f"category {HOSTILE}": 3})
    redis_client.hset(prefix + keys.SCRAPY_STATS, mapping={f"stat {HOSTILE}": HOSTILE})
    hubs = [["javascript:document.title=1", 0.5], [f"https://example.org/{HOSTILE}", 0.000031]]
    redis_client.hset(
        prefix + keys.DISTILL,
        mapping={
            **dict.fromkeys(("time", "fetched", "pages", "edges", "authorities"), 1),
            **dict.fromkeys(("reboosted", "seconds", "runs"), 1),
            "top_hubs": json.dumps(hubs),
            "top_authorities": json.dumps(hubs[::-1]),
        },
    )
    redis_client.hset(
        prefix + keys.LEARNED,
        mapping={
            "generation": 2,
            "pages": 100,
            "time": 1,
            "refused": 1,
            "top": json.dumps(["peloton", HOSTILE]),
        },
    )
    yield name
    reset_crawl(redis_client, name)


def test_the_page_and_its_files_are_served(hostile, redis_home, http):
    with serving("dashboard", "--home", str(redis_home)) as url:
        response = http.get(url, timeout=30)
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        page = lxml.html.fromstring(response.text)
        # REFRESH_S reaches the script as JSON, not formatted into the HTML.
        config = json.loads(page.xpath("//script[@id='config']/text()")[0])
        assert config == {"refresh_ms": round(dashboard.REFRESH_S * 1000)}
        # Every file the page loads is the app's own (relative, so it works offline).
        loaded = page.xpath("//script/@src | //link/@href")
        assert sorted(loaded) == ["dashboard.css", "dashboard.js"]
        for name in loaded:
            served = http.get(urljoin(url, name), timeout=30)
            assert served.headers["content-type"].split(";")[0] == dashboard.STATIC[name][1]
            assert served.text == (STATIC / name).read_text(encoding="utf-8")
        crawls = http.get(urljoin(url, "api/crawls"), timeout=30).json()
    assert hostile in [crawl["crawl"] for crawl in crawls["crawls"]]


@pytest.mark.crawl  # builds the package and loads the page in a subprocess
def test_a_built_package_ships_the_page(tmp_path):
    """What a wheel or ``pip install .`` holds: bdist_wheel gathers a package with setuptools'
    build_py, run here on a copy of the tree (the venv has no ``wheel`` for bdist_wheel
    itself). The page is then read from that package zipped, as importlib.resources allows."""
    tree = tmp_path / "tree"
    shutil.copytree(SOURCE, tree / "focused", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(SOURCE.parent / name, tree)
    built = tmp_path / "built"
    subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "-q"]
        + ["build_py", "--build-lib", str(built)],
        cwd=tree,
        check=True,
        capture_output=True,
    )
    # The dashboard's page, and focused label's (tests/test_label.py serves it).
    for package, static, served in (("monitor", STATIC, dashboard), ("label", LABEL, label)):
        shipped = built / "focused" / package / "static"
        names = sorted(path.name for path in static.iterdir())
        assert set(served.STATIC) <= set(names)
        assert sorted(path.name for path in shipped.iterdir()) == names
    archive = tmp_path / "focused.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in built.rglob("*"):
            zipped.write(path, path.relative_to(built))
    script = (
        "import sys; from focused.monitor import dashboard; "
        "assert dashboard.__file__.startswith(sys.argv[1]), dashboard.__file__; "
        "print(dashboard.static_files()['dashboard.html'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(archive)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(archive)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert '<script id="config" type="application/json">{"refresh_ms": 2000}' in result.stdout


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium in /usr/bin (scripts/setup.sh)"
)
def test_hostile_names_and_urls_stay_text(hostile, redis_home, tmp_path):
    with serving("dashboard", "--home", str(redis_home)) as url:
        page = lxml.html.fromstring(chromium(url, tmp_path, "--dump-dom"))
    assert page.xpath("//body/@data-crawls"), "the page's script did not render"
    assert page.findtext(".//title") == "focused · crawls"
    assert not page.xpath("//img | //*[@onerror]")
    card = page.xpath("//section[@data-crawl=$c]", c=hostile)[0]
    assert card.findtext(".//h2") == hostile
    assert HOSTILE in card.xpath("string(.//div[@class='title'])")
    assert card.xpath(".//tr/@data-category") == [f"category {HOSTILE}"]
    assert card.xpath(".//*[@data-figure='scrapy']/@data-stat") == [f"stat {HOSTILE}"]
    links = card.xpath(".//*[@data-figure='hub']//a")
    assert [link.get("title") for link in links] == [
        "javascript:document.title=1",
        f"https://example.org/{HOSTILE}",
    ]
    assert [link.get("href") for link in links] == [None, f"https://example.org/{HOSTILE}"]
    # A big graph's hub scores are tiny, and shown as such, not as 0.0000.
    scores = card.xpath(".//*[@data-figure='hub']/td[last()]/text()")
    assert scores == ["0.5000", "3.10e-5"]
    # A topic that learns itself: its generation and top words (markup among them, as text).
    assert card.xpath(".//*[@data-figure='learned_generation']/@data-value") == ["2"]
    top = card.xpath(".//*[@data-figure='learned_top']")[0]
    assert top.get("data-value") == f"peloton, {HOSTILE}" and HOSTILE in top.text_content()


def test_the_defences_are_shown(redis_client, redis_home, tmp_path):
    name = "defended"
    prefix = keys.prefix(name)
    redis_client.hset(
        prefix + keys.STATS,
        mapping={"fetched": 9, "queued": 4, "held/hosts": 3, "dropped/host_queue": 12},
    )
    redis_client.zadd(prefix + keys.HELD, {"http://s4.farm.test": 1, "http://s5.farm.test": 2})
    redis_client.hset(
        prefix + keys.SCRAPY_STATS,
        mapping={
            "focused/links/out_of_scope/hops": 5,
            f"focused/links/out_of_scope/{HOSTILE}": 1,
            "focused/links/capped": 40,
        },
    )
    try:
        with serving("dashboard", "--home", str(redis_home)) as url:
            page = lxml.html.fromstring(chromium(url, tmp_path, "--dump-dom"))
    finally:
        reset_crawl(redis_client, name)
    card = page.xpath("//section[@data-crawl=$c]", c=name)[0]
    shown = {
        cell.get("data-figure"): cell.text
        for cell in card.xpath(".//*[@data-figure and @data-crawl=$c]", c=name)
    }
    assert shown["hosts_held"] == "2" and shown["held_hosts"] == "3"
    assert shown["held_host"] == "0" and shown["dropped_host_queue"] == "12"
    assert shown["out_of_scope_hops"] == "5" and shown["links_capped"] == "40"
    assert shown[f"out_of_scope_{HOSTILE}"] == "1"
    assert not page.xpath("//img | //*[@onerror]")


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium in /usr/bin (scripts/setup.sh)"
)
def test_a_topic_without_categories_has_no_census(redis_client, redis_home, tmp_path):
    """Its pages are of no category ("-" in Redis): the census says so, with no row of "-"."""
    name = "uncategorised"
    prefix = keys.prefix(name)
    redis_client.hset(prefix + keys.STATS, mapping={"fetched": 3, "classified": 3})
    redis_client.hset(prefix + keys.CENSUS, mapping={NO_CATEGORY: 3})
    try:
        with serving("dashboard", "--home", str(redis_home)) as url:
            page = lxml.html.fromstring(chromium(url, tmp_path, "--dump-dom"))
    finally:
        reset_crawl(redis_client, name)
    card = page.xpath("//section[@data-crawl=$c]", c=name)[0]
    assert card.xpath(".//tr/@data-category") == []
    note = card.xpath(".//*[@data-figure='census_none']")
    assert [n.text_content() for n in note] == ["the topic has no categories"]


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium in /usr/bin (scripts/setup.sh)"
)
def test_a_covered_topic_shows_its_estimate_and_a_notice_not_an_alarm(
    redis_client, redis_home, tmp_path
):
    """A crawl whose harvest fell while its best queued URLs hold little that looks relevant:
    relevant found / in reach from its last estimate, and the covered notice in blue."""
    name = "covered"
    prefix = keys.prefix(name)
    redis_client.hset(
        prefix + keys.STATS,
        mapping={"fetched": 1000, "classified": 1000, "relevant": 217, "queued": 900},
    )
    redis_client.hset(prefix + keys.META, mapping={"focus": "soft", "threshold": 0.5})
    # newest first: the last 100 pages irrelevant, the 900 before a third relevant
    redis_client.rpush(prefix + keys.RECENT, *([0.1] * 100 + [0.9, 0.1, 0.1] * 300))
    estimate = Coverage(found=217, left=7.2, low=0.0, high=16.5, next=0.6, queued=900)
    store = CrawlStore(redis_client, name)
    with store.held_lock(keys.COVERAGE_LOCK, 5) as lease:
        assert lease is not None
        CoverageStore(store).record(
            {**estimate.record(), "pages": 990, "hosts": 150, "covered_since": None}, lease
        )
    try:
        with serving("dashboard", "--home", str(redis_home)) as url:
            page = lxml.html.fromstring(chromium(url, tmp_path, "--dump-dom"))
    finally:
        reset_crawl(redis_client, name)
    card = page.xpath("//section[@data-crawl=$c]", c=name)[0]
    assert card.xpath(".//*[@data-figure='in_reach']")[0].text == "217 / 224"
    detail = card.xpath(".//*[@data-figure='coverage']")[0].text_content()
    assert "217–234" in detail and "0.6 relevant" in detail and "990 pages" in detail
    badge = card.xpath(".//*[@data-figure='alarm']")
    assert [(b.get("data-value"), b.get("class")) for b in badge] == [("covered", "badge notice")]
    assert card.xpath(".//div[contains(@class, 'alarms')]/@class") == ["alarms calm"]
