"""Pages that need JavaScript (FOCUSED_RENDER): the settings and their one-line errors, the
choice of pages, the guard on the browser's own requests, the per-host flags in the store, and
crawls of the web built by scripts (focused web generate --js) in Debian's Chromium."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis
from scrapy.http import HtmlResponse
from scrapy.settings import Settings

from focused.addon import FocusedAddon
from focused.errors import FocusedError
from focused.lab.webs.scripted import HOSTS_FILE, SCRIPT_PATH, generate_scripted_web
from focused.lab.webs.server import ServedWeb, read_log
from focused.render.guard import SubRequestGuard
from focused.render.pages import built_by_scripts, little_text
from focused.render.setup import HANDLER, launch_options
from focused.settings.check import check_settings
from focused.store.crawl import CrawlStore
from focused.store.render import RenderedHosts
from tests.conftest import Crawl, final_stats, free_port

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium in /usr/bin (scripts/setup.sh)"
)
ITEMS = 60  # the page budget of each crawl


def settings(**values: object) -> Settings:
    """The settings the add-on makes of ``values``."""
    s = Settings(values, priority="cmdline")
    FocusedAddon().update_settings(s)
    return s


# The settings.


def test_never_leaves_the_download_handlers_alone_and_imports_no_playwright(monkeypatch):
    monkeypatch.setitem(sys.modules, "playwright", None)  # importing it fails
    monkeypatch.setitem(sys.modules, "scrapy_playwright", None)
    s = settings()
    assert s["FOCUSED_RENDER"] == "never"
    assert "http" not in s.getdict("DOWNLOAD_HANDLERS")
    assert not any("render" in path for path in s.getdict("DOWNLOADER_MIDDLEWARES"))


@needs_chromium
def test_auto_sets_up_scrapy_playwright_with_a_bounded_browser():
    s = settings(FOCUSED_RENDER="auto", FOCUSED_RENDER_PAGES=3)
    assert s.getdict("DOWNLOAD_HANDLERS") == {"http": HANDLER, "https": HANDLER}
    assert s.getint("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT") == 3
    launch = s.getdict("PLAYWRIGHT_LAUNCH_OPTIONS")
    assert launch["executable_path"] == str(CHROMIUM) and launch["headless"] is True
    assert {"--disable-gpu", "--disable-quic", "--no-first-run"} <= set(launch["args"])


def test_the_browser_goes_through_the_environments_proxy(monkeypatch):
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:3128")
    monkeypatch.setenv("no_proxy", "intranet.test")
    options = launch_options("/usr/bin/chromium")
    assert options["proxy"] == {"server": "http://127.0.0.1:3128", "bypass": "intranet.test"}


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"FOCUSED_RENDER": "sometimes"}, "FOCUSED_RENDER"),
        ({"FOCUSED_RENDER": "auto", "FOCUSED_RENDER_BROWSER": "/nowhere/chromium"}, "apt-get"),
        ({"FOCUSED_RENDER": "always", "FOCUSED_RENDER_PAGES": 0}, "FOCUSED_RENDER_PAGES"),
    ],
)
def test_a_bad_render_setting_is_one_line_naming_it(values, named):
    with pytest.raises(FocusedError) as raised:
        check_settings(Settings(values))
    assert named in str(raised.value) and "\n" not in str(raised.value)


def test_auto_without_scrapy_playwright_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "scrapy_playwright", None)
    with pytest.raises(FocusedError, match=r"FOCUSED_RENDER=auto needs scrapy-playwright: pip"):
        check_settings(Settings({"FOCUSED_RENDER": "auto"}))


# Which pages the browser fetches.


def page(body: str) -> HtmlResponse:
    return HtmlResponse("http://www.a.test/", body=body.encode(), encoding="utf-8")


def test_an_empty_application_root_with_a_script_needs_the_browser():
    shell = page(
        '<html><head><title>T</title><script src="/app.js"></script></head>'
        '<body><div id="app"></div><noscript>Enable JavaScript</noscript></body></html>'
    )
    assert little_text(shell, 200) and built_by_scripts(shell)


def test_a_page_with_its_text_or_without_scripts_does_not():
    text = page(f"<html><body><p>{'word ' * 100}</p><script>x()</script></body></html>")
    assert not little_text(text, 200)
    short = page("<html><body><p>Gone.</p></body></html>")
    assert little_text(short, 200) and not built_by_scripts(short)


# The browser's own requests.


class BrowserRequest:
    """What the guard reads of a playwright Request."""

    def __init__(self, url: str, resource_type: str = "fetch"):
        self.url, self.resource_type = url, resource_type


class Stats(dict):
    def inc_value(self, key: str, count: int = 1) -> None:
        self[key] = self.get(key, 0) + count


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.2:6379/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:10.0.0.1]/",
        "http://0x7f.1/",
        "http://localhost/",
        "file:///etc/passwd",
        "ftp://www.a.test/",
    ],
)
def test_the_browser_may_not_fetch_a_private_address_or_another_scheme(url):
    stats = Stats()
    guard = SubRequestGuard(stats, resolve=False)  # type: ignore[arg-type]
    assert asyncio.run(guard(BrowserRequest(url))) is True
    assert stats == {"focused/render/subrequests/refused": 1}


def test_the_browser_fetches_public_and_allowed_addresses_and_no_images():
    import ipaddress

    stats = Stats()
    allowed = [ipaddress.ip_network("10.0.0.0/8")]
    guard = SubRequestGuard(stats, allowed, resolve=False)  # type: ignore[arg-type]
    for url in ("http://www.a.test/data.json", "https://93.184.215.14/", "http://10.1.2.3/"):
        assert asyncio.run(guard(BrowserRequest(url))) is False
    assert asyncio.run(guard(BrowserRequest("http://www.a.test/p.png", "image"))) is True
    assert stats == {"focused/render/subrequests/blocked": 1}


# The hosts the crawl renders, in the store.


def test_a_host_is_flagged_once_and_every_process_reads_it(redis_client: redis.Redis):
    crawl = f"render-{uuid.uuid4().hex[:8]}"
    one = RenderedHosts(CrawlStore(redis_client, crawl, retries=0))
    other = RenderedHosts(CrawlStore(redis_client, crawl, retries=0))  # another process's
    assert [one.rendered("www.a.test", 3) for _ in range(2)] == [False, False]
    assert other.rendered("www.a.test", 3) is True  # the third page, from the other process
    assert one.rendered("www.a.test", 3) is False  # flagged already
    assert one.flagged() == other.flagged() == {"www.a.test"}
    assert not RenderedHosts(CrawlStore(redis_client, crawl + "-x", retries=0)).flagged()


# Crawls of the web built by scripts.


@pytest.fixture(scope="module")
def scripted_web(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_scripted_web(tmp_path_factory.mktemp("js") / "web", n_pages=300, n_hosts=12)


def scripted_hosts(web: Path) -> set[str]:
    return set(json.loads((web / HOSTS_FILE).read_text())["scripted"])


def test_the_scripted_web_serves_shells_data_and_the_script(scripted_web: Path):
    from focused.lab.webs.bundle import Bundle

    bundle = Bundle.load(scripted_web)
    hosts = scripted_hosts(scripted_web)
    assert 0 < len(hosts) < 12  # some hosts plain, so that auto's flags show
    seed = urlsplit(bundle.topics["topics"][0]["seeds"][0])  # type: ignore[index]
    shell = bundle.page(seed.geturl())
    assert shell is not None and b'<div id="app"' in shell.body
    data = bundle.page(f"http://{seed.hostname}/_data{seed.path}.json")
    assert data is not None and b"<a href=" in data.body
    assert bundle.page(f"http://{seed.hostname}{SCRIPT_PATH}") is not None


def test_generate_js_from_the_command_line(tmp_path: Path):
    from focused.cli.main import main

    assert main(["web", "generate", str(tmp_path / "w"), "--pages", "100", "--hosts", "4",
                 "--js"]) == 0  # fmt: skip
    assert (tmp_path / "w" / HOSTS_FILE).exists()


def run(crawl: Crawl, mode: str) -> tuple[dict[str, float], list[dict]]:
    stats = crawl.run(f"{mode}.jsonl", CLOSESPIDER_ITEMCOUNT=ITEMS, FOCUSED_RENDER=mode)
    return stats, crawl.feed(f"{mode}.jsonl")


@pytest.fixture
def js_crawl(
    scripted_web: Path, redis_home: Path, redis_client: redis.Redis, tmp_path: Path
) -> Iterator[Crawl]:
    with ServedWeb(scripted_web, log_path=tmp_path / "served.jsonl") as served:
        name = f"render-{uuid.uuid4().hex[:8]}"
        yield Crawl(scripted_web / "topic.toml", served.proxy, redis_home, name, tmp_path)


@needs_chromium
@pytest.mark.crawl
def test_auto_renders_the_scripted_pages_and_finds_what_never_cannot(
    js_crawl: Crawl, scripted_web: Path, redis_client: redis.Redis
):
    never_stats, never_feed = run(js_crawl, "never")
    assert not any(k.startswith(("focused/render/", "playwright/")) for k in never_stats)
    never_relevant = sum(item["relevant"] for item in never_feed)

    js_crawl.name += "-auto"
    stats, feed = run(js_crawl, "auto")
    relevant = sum(item["relevant"] for item in feed)
    assert len(feed) == ITEMS > 2 * len(never_feed)  # never: the seeds' shells, no links
    assert relevant >= 2 * never_relevant
    assert stats["focused/render/reason/little_text"] > 0
    assert stats["focused/render/reason/host"] > 0  # pages of hosts flagged on the way
    assert stats["focused/render/pages"] == (
        stats["focused/render/reason/little_text"] + stats["focused/render/reason/host"]
    )
    # Each page is acknowledged once, however often it was fetched.
    assert len({item["url"] for item in feed}) == len(feed)
    flagged = set(redis_client.smembers(f"focused:{{{js_crawl.name}}}:render:hosts"))
    assert flagged and flagged <= scripted_hosts(scripted_web)
    assert stats["focused/render/hosts_flagged"] == len(flagged)
    # The scripted pages' text was read, and their links (built by the script) followed.
    scripted = scripted_hosts(scripted_web)
    relevant_scripted = [i for i in feed if i["relevant"] and i["host"] in scripted]
    assert relevant_scripted and all(len(i["main_text"].split()) > 30 for i in relevant_scripted)
    assert sum(urlsplit(i["parent"] or "").hostname in scripted for i in feed) > len(feed) // 5


class Listener:
    """A TCP server on 127.0.0.2 that counts the connections it gets."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.2", 0))
        self.port = self.server.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


@needs_chromium
@pytest.mark.crawl
def test_a_page_cannot_make_the_browser_fetch_a_private_address(
    tmp_path: Path, redis_home: Path, redis_client: redis.Redis
):
    listener = Listener()
    beacon = f"http://127.0.0.2:{listener.port}/track"
    web = generate_scripted_web(tmp_path / "web", n_pages=200, n_hosts=6, beacon=beacon)
    with ServedWeb(web, log_path=tmp_path / "served.jsonl") as served:
        crawl = Crawl(web / "topic.toml", served.proxy, redis_home, f"ssrf-{free_port()}", tmp_path)
        # 127.0.0.1 only: the listener's 127.0.0.2 stays refused.
        stats = crawl.run(
            CLOSESPIDER_ITEMCOUNT=20, FOCUSED_RENDER="always", FOCUSED_ALLOWED_NETWORKS="127.0.0.1"
        )
    listener.server.close()
    asked = [entry["url"] for entry in read_log(tmp_path / "served.jsonl")]
    # Every page went to the browser (a page that failed there is an item too).
    assert stats["focused/render/pages"] == stats["focused/render/reason/always"] >= 15
    shells = sum(
        1 for item in crawl.feed() if urlsplit(item["url"]).hostname in scripted_hosts(web)
    )
    assert stats["focused/render/subrequests/refused"] >= shells // 2 > 0
    # Not fetched directly, nor through the proxy (Playwright sends loopback through it).
    assert listener.connections == 0
    assert not [url for url in asked if url.endswith("/track")]


@pytest.mark.crawl
def test_a_missing_browser_is_one_line_at_start(js_crawl: Crawl):
    process = js_crawl.start(FOCUSED_RENDER="auto", FOCUSED_RENDER_BROWSER="/nowhere/chromium")
    assert process.wait(60) == 2
    log = js_crawl.log()
    assert "Traceback" not in log
    errors = [line for line in log.splitlines() if "FOCUSED_RENDER_BROWSER" in line]
    assert len(errors) == 1 and "apt-get install chromium" in errors[0]
    assert not final_stats_or_none(log)


def final_stats_or_none(log: str) -> dict[str, float] | None:
    return final_stats(log) if "Dumping Scrapy stats:" in log else None
