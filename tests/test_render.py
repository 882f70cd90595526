"""Pages that need JavaScript (FOCUSED_RENDER): the settings and their one-line errors, the
choice of pages, the guard on the browser's own requests, the per-host flags in the store, and
crawls of the web built by scripts (focused web generate --js) in Debian's Chromium."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis
from scrapy.exceptions import DropItem
from scrapy.http import HtmlResponse
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler
from twisted.internet import defer
from twisted.python.failure import Failure

from focused.addon import FocusedAddon
from focused.errors import FocusedError
from focused.items import Page
from focused.lab.webs.scripted import HOSTS_FILE, SCRIPT_PATH, generate_scripted_web
from focused.lab.webs.server import ServedWeb, read_log
from focused.pipelines.frontier import FrontierPipeline
from focused.render.guard import SubRequestGuard, ipv4_patterns, resolver_rules
from focused.render.pages import built_by_scripts, little_text
from focused.render.setup import HANDLER, launch_options
from focused.settings.check import check_settings
from focused.store.crawl import CrawlStore
from focused.store.frontier.base import Ack, Acked, Link
from focused.store.render import RenderedHosts
from tests.conftest import Crawl, final_stats, free_port, wait_for

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


def test_chromium_refuses_the_non_public_literals_but_the_allowed_and_the_proxy():
    import ipaddress

    assert ipv4_patterns(ipaddress.IPv4Network("10.0.0.0/8")) == ["10.*.*.*"]
    assert ipv4_patterns(ipaddress.IPv4Network("172.16.0.0/12"))[::15] == [
        "172.16.*.*",
        "172.31.*.*",
    ]
    assert ipv4_patterns(ipaddress.IPv4Network("127.0.0.2/31")) == ["127.0.0.2", "127.0.0.3"]
    rules = resolver_rules([ipaddress.ip_network("127.0.0.2/32")], ["127.0.0.1"]).split(", ")
    assert rules[:2] == ["EXCLUDE 127.0.0.1", "EXCLUDE 127.0.0.2"]
    for pattern in (
        *("127.*.*.*", "169.254.*.*", "192.168.*.*", "100.127.*.*", "255.*.*.*"),
        *("localhost", "*.localhost", "::1", "fe8*:*", "::ffff:*"),
    ):
        assert f"MAP {pattern} ~NOTFOUND" in rules
    assert not [rule for rule in rules if rule.startswith("MAP 8.") or "MAP 93." in rule]


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


# The acknowledgement of a page the browser ended elsewhere.


def waiting_outcomes(pipeline: FrontierPipeline, acks: list[Ack]) -> list[object]:
    """Put ``acks`` in the pipeline's batch; the list fills with what each one's item gets."""
    outcomes: list[object] = [None] * len(acks)
    for i, ack in enumerate(acks):
        acked: defer.Deferred = defer.Deferred()
        acked.addBoth(lambda result, i=i: outcomes.__setitem__(i, result))
        pipeline.waiting.append((ack, acked, 0))
    return outcomes


def test_a_page_that_ended_on_chrome_error_is_acknowledged_under_its_leased_url(frontier):
    queue = frontier()
    queue.push_many([Link(f"http://www.a.test/{n}", 0.5) for n in range(3)])
    leased = queue.pop_ready(3).leased
    stats = get_crawler().stats
    pipeline = FrontierPipeline(queue, None, stats, batch=3)  # type: ignore[arg-type]
    items = [Page(lease.url, 200, 0.0, leased=lease, bad="empty") for lease in leased]
    items[1].url = "chrome-error://chromewebdata/"
    outcomes = waiting_outcomes(pipeline, [pipeline.ack_of(item) for item in items])
    pipeline.flush()
    assert all(isinstance(outcome, Acked) and outcome.order for outcome in outcomes)
    assert queue.counts()["in_flight"] == 0
    assert stats.get_value("focused/ack/bad_url") == 1


def test_a_batch_that_cannot_be_acknowledged_stops_no_other_batch(frontier):
    queue = frontier()
    queue.push_many([Link(f"http://www.a.test/{n}", 0.5) for n in range(4)])
    leased = queue.pop_ready(4).leased
    stats = get_crawler().stats
    pipeline = FrontierPipeline(queue, None, stats, batch=2)  # type: ignore[arg-type]
    acks = [Ack(lease.lease, lease.url, "bad") for lease in leased]
    # A page whose URL the frontier cannot take, past the pipeline's own check.
    bad = replace(acks[1], url="chrome-error://chromewebdata/", kind="page", checksum="c")
    broken = waiting_outcomes(pipeline, [acks[0], bad])
    pipeline.flush()  # raises nothing: the batch is dropped, its leases bring it back
    assert all(isinstance(outcome, Failure) and outcome.check(DropItem) for outcome in broken)
    assert stats.get_value("focused/ack/errors") == 1
    after = waiting_outcomes(pipeline, acks[2:])
    pipeline.flush()
    assert all(isinstance(outcome, Acked) and outcome.order for outcome in after)
    assert queue.counts()["in_flight"] == 2


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


def reasons_in(stats: dict[str, float], reason: str) -> float:
    return stats.get(f"focused/render/reason/{reason}", 0)


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
    assert {item["rendered"] for item in never_feed} == {None}

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
    # The feed says which pages the browser fetched, and why.
    reasons = Counter(item["rendered"] for item in feed)
    assert set(reasons) == {None, "little_text", "host"}
    for reason in ("little_text", "host"):
        assert 0 < reasons[reason] <= stats[f"focused/render/reason/{reason}"]
    assert all(i["host"] in scripted_hosts(scripted_web) for i in feed if i["rendered"])
    # A page fetched again in the browser is one response received (what
    # CLOSESPIDER_PAGECOUNT counts), though the downloader answered it twice.
    not_received = sum(
        count
        for name, count in stats.items()
        if re.fullmatch(r"downloader/response_status_count/[35]\d\d", name)
    )
    assert stats["response_received_count"] == (
        stats["downloader/response_count"] - not_received - reasons_in(stats, "little_text")
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
    """A TCP server (on 127.0.0.2 unless told) that counts the connections it gets."""

    def __init__(self, host: str = "127.0.0.2") -> None:
        self.server = socket.create_server((host, 0))
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


@needs_chromium
@pytest.mark.crawl
@pytest.mark.xfail(
    strict=True,
    reason="behind a proxy the browser follows redirects itself (Playwright's own fetch tunnels "
    "http through CONNECT, which proxies and the offline web's server refuse) and the proxy "
    "resolves the names, so the proxy is where they are refused: docs/howto/render.md says "
    "exactly what it must refuse; the offline web's server, a proxy that refuses nothing, "
    "is asked for the private address",
)
def test_behind_a_proxy_a_redirect_cannot_make_the_browser_fetch_a_private_address(
    tmp_path: Path, redis_home: Path, redis_client: redis.Redis
):
    listener = Listener()
    private = f"http://127.0.0.2:{listener.port}/track"
    web = tmp_path / "web"
    generate_scripted_web(web, n_pages=200, n_hosts=6)
    host = sorted(scripted_hosts(web))[0]
    # A script's fetch answered 302 to the private address, and a page whose own navigation is.
    beacon, moved = f"http://{host}/beacon", f"http://{host}/moved"
    generate_scripted_web(
        web,
        n_pages=200,
        n_hosts=6,
        beacon=beacon,
        redirects={beacon: private, moved: private},
        overwrite=True,
    )
    topic = web / "topic.toml"
    topic.write_text(topic.read_text().replace("seeds = [\n", f'seeds = [\n    "{moved}",\n', 1))
    with ServedWeb(web, log_path=tmp_path / "served.jsonl") as served:
        crawl = Crawl(topic, served.proxy, redis_home, f"hops-{free_port()}", tmp_path)
        stats = crawl.run(
            CLOSESPIDER_ITEMCOUNT=20, FOCUSED_RENDER="always", FOCUSED_ALLOWED_NETWORKS="127.0.0.1"
        )
    listener.server.close()
    asked = [entry["url"] for entry in read_log(tmp_path / "served.jsonl")]
    # The redirects were answered (the guard saw their targets, not the first URLs only)...
    assert moved in asked and asked.count(beacon) >= 5
    assert stats["focused/render/subrequests/refused"] >= asked.count(beacon)
    # ...and their target fetched neither directly nor through the proxy.
    assert listener.connections == 0
    assert not [url for url in asked if url.endswith("/track")]


class RedirectingServer(ThreadingHTTPServer):
    """A site on 127.0.0.1 whose page's script and frame, and another page, redirect to
    ``private``, and whose ``/hop`` redirects to its page."""

    def __init__(self, private: str):
        page = (
            b'<html><body><p>The page.</p><script src="/script.js"></script>'
            b'<iframe src="/frame"></iframe></body></html>'
        )
        routes = {
            "/page": (200, {"Content-Type": "text/html"}, page),
            "/hop": (301, {"Location": "/page"}, b""),
            "/script.js": (302, {"Location": private}, b""),
            "/frame": (302, {"Location": private}, b""),
            "/moved": (302, {"Location": private}, b""),
        }

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, headers, body = routes[self.path]
                self.send_response(status)
                for name, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()


async def render(urls: list[str], guard: SubRequestGuard) -> list[tuple[str, str]]:
    """Each of ``urls`` in Chromium whose requests are routed as the crawl routes them: asked
    the guard, then fetched hop by hop. Returns (url the page ended at, its text or error)."""
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    from focused.render.redirects import HopByHopRoute

    async def route(route, request) -> None:  # type: ignore[no-untyped-def]
        if await guard(request):
            await route.abort()
        else:
            await HopByHopRoute(route, request, guard, max_hops=5, timeout_ms=10_000).continue_()

    pages = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(**launch_options(str(CHROMIUM)))
        page = await browser.new_page()
        await page.route("**", route)
        for url in urls:
            try:
                await page.goto(url, wait_until="networkidle", timeout=10_000)
                pages.append((page.url, await page.inner_text("body")))
            except PlaywrightError as error:
                pages.append((url, str(error).splitlines()[0]))
        await browser.close()
    return pages


@needs_chromium
@pytest.mark.crawl
def test_each_redirect_of_the_browser_is_asked_the_guard_and_followed_when_allowed():
    import ipaddress

    listener = Listener()
    site = RedirectingServer(f"http://127.0.0.2:{listener.port}/track")
    stats = Stats()
    allowed = [ipaddress.ip_network("127.0.0.1/32")]
    guard = SubRequestGuard(stats, allowed, resolve=False)  # type: ignore[arg-type]
    pages = asyncio.run(render([f"{site.url}/hop", f"{site.url}/moved"], guard))
    site.shutdown()
    listener.server.close()
    # An allowed redirect is followed, to the page; its script's and frame's are refused,
    # and so is the navigation's.
    assert pages[0] == (f"{site.url}/page", "The page.")
    assert "ERR_BLOCKED_BY_CLIENT" in pages[1][1]
    assert stats["focused/render/subrequests/refused"] >= 3
    assert stats["focused/render/subrequests/redirects"] >= 1
    assert listener.connections == 0


# A web whose pages turn the browser against the crawl: the crawl ends by itself, every other
# page fetched, and nothing reaches the addresses it refuses.

TRAP_WORDS = "cycling road race stage climb sprint peloton jersey gear wheel " * 20
PAGES = 24  # the plain pages of the traps' web, /p/0 (the seed) to /p/23
# Each vector: the page's body, with {private} the URL of its listener on 127.0.0.1.
VECTORS = {
    "popup": "<script>window.open('{private}')</script>",
    "popup_redirect": "<script>window.open('/moved?to={private}')</script>",
    "service_worker": "<script>navigator.serviceWorker.register('/sw.js?to={private}')</script>",
    "websocket": "<script>new WebSocket('{ws}')</script>",
    "worker_websocket": "<script>new Worker('/ws-worker.js?to={ws}')</script>",
    "iframe": '<iframe src="{private}"></iframe>',
    "object": '<object data="{private}"></object>',
    "embed": '<embed src="{private}">',
}
# Pages the browser cannot end on: navigation to a closed port, a download clicked by script.
FAILING = {
    "closed_port": "<script>setTimeout(() => location = 'http://127.0.0.2:1/x', 50)</script>",
    "download": '<a id="d" download href="/file.bin">file</a>'
    "<script>document.getElementById('d').click()</script>",
}
# A page whose script makes it larger than DOWNLOAD_MAXSIZE (10 MiB).
HUGE = "<script>document.body.append('x'.repeat(11e6))</script>"
# A script that builds 2,000,000 DOM nodes, each in the last, once the page has loaded: the
# browser takes minutes over its content, and a crawl without a deadline hangs.
BOMB = (
    "<script>addEventListener('load', () => setTimeout(() => {{ let e = document.body;"
    " for (let i = 0; i < 2e6; i++) {{ const d = document.createElement('div');"
    " e.appendChild(d); e = d; }} }}, 0))</script>"
)
SERVICE_WORKER = (
    "const to = new URL(location).searchParams.get('to');\n"
    "self.addEventListener('install', e => e.waitUntil(fetch(to + 'install').catch(() => 0)));\n"
    "self.addEventListener('activate', e => e.waitUntil(fetch(to + 'activate').catch(() => 0)));\n"
)
WORKER = "new WebSocket(new URL(location).searchParams.get('to'));\n"


class TrapSite(ThreadingHTTPServer):
    """Plain pages on 127.0.0.2 linking to each of ``traps`` (name -> body), with a listener
    on 127.0.0.1 per trap that counts the connections the browser makes there."""

    def __init__(self, traps: dict[str, str]) -> None:
        self.listeners = {name: Listener("127.0.0.1") for name in traps}
        self.asked: list[str] = []
        pages = {}
        for name, body in traps.items():
            private = f"http://127.0.0.1:{self.listeners[name].port}/"
            ws = f"ws://127.0.0.1:{self.listeners[name].port}/"
            pages[f"/trap/{name}"] = body.format(private=private, ws=ws)
        links = "".join(f'<a href="{path}">{path}</a> ' for path in pages)
        for n in range(PAGES):
            more = "".join(
                f'<a href="/p/{m}">page {m}</a> ' for m in range(n + 1, min(n + 4, PAGES))
            )
            pages[f"/p/{n}"] = (links if n == 0 else "") + more
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.asked.append(self.path)
                path, _, query = self.path.partition("?")
                to = query.removeprefix("to=")
                status, kind, body = 200, "text/html", ""
                if path in pages:
                    body = (
                        f"<html><head><title>{path}</title></head><body><p>{TRAP_WORDS}</p>"
                        f"{pages[path]}</body></html>"
                    )
                elif path == "/moved":
                    status = 302
                elif path == "/sw.js":
                    kind, body = "text/javascript", SERVICE_WORKER
                elif path == "/ws-worker.js":
                    kind, body = "text/javascript", WORKER
                elif path == "/file.bin":
                    kind, body = "application/octet-stream", "x" * 1000
                else:
                    status = 404
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                if status == 302:
                    self.send_header("Location", to)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.2", 0), Handler)
        self.url = f"http://127.0.0.2:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def connections(self) -> dict[str, int]:
        return {name: listener.connections for name, listener in self.listeners.items()}

    def close(self) -> None:
        self.shutdown()
        self.server_close()
        for listener in self.listeners.values():
            listener.server.close()


def trap_crawl(site: TrapSite, tmp_path: Path, redis_home: Path) -> Crawl:
    """A crawl of ``site`` from its first page, straight (no proxy), 127.0.0.2 allowed."""
    topic = tmp_path / "topic.toml"
    topic.write_text(
        f'name = "traps"\nseeds = ["{site.url}/p/0"]\nstrategy = "soft"\n\n[relevance]\n'
        'method = "keywords"\nkeywords = ["cycling", "race", "peloton"]\nr0 = 0.1\n'
    )
    crawl = Crawl(topic, "", redis_home, f"traps-{uuid.uuid4().hex[:8]}", tmp_path)
    crawl.extra_env = {"http_proxy": None, "https_proxy": None, "HTTP_PROXY": None}
    return crawl


TRAP_SETTINGS = {
    "FOCUSED_RENDER": "always",
    "FOCUSED_ALLOWED_NETWORKS": "127.0.0.2/32",
    "DOWNLOAD_TIMEOUT": 10,
    "FOCUSED_RENDER_DEADLINE": 15,
    "CLOSESPIDER_TIMEOUT": 240,
}


@needs_chromium
@pytest.mark.crawl
def test_a_crawl_of_pages_that_turn_the_browser_against_it_ends_by_itself(
    tmp_path: Path, redis_home: Path, redis_client: redis.Redis
):
    site = TrapSite({**VECTORS, **FAILING, "huge": HUGE, "bomb": BOMB})
    crawl = trap_crawl(site, tmp_path, redis_home)
    try:
        stats = crawl.run(timeout=200, **TRAP_SETTINGS)
    finally:
        site.close()
    feed = {urlsplit(item["url"]).path: item for item in crawl.feed()}
    log = crawl.log()
    assert "Spider closed (finished)" in log and "Traceback" not in log
    assert stats.get("focused/ack/refused", 0) == 0
    # Every plain page and every trap page acknowledged; those the browser could not end on,
    # or not within the deadline, as bad pages under the request's own URL.
    assert {f"/p/{n}" for n in range(PAGES)} <= set(feed)
    assert all(feed[f"/p/{n}"]["bad"] is None for n in range(PAGES))
    assert feed["/trap/closed_port"]["bad"] == "render"
    # The download is the page's response (its file, not HTML), or the page failed.
    download = feed.get("/trap/download") or feed["/file.bin"]
    assert download["bad"] in ("render", "not_html")
    assert feed["/trap/huge"]["bad"] == "too_big"
    assert feed["/trap/bomb"]["bad"] == "render_deadline"
    assert all(item["url"].startswith("http://") for item in feed.values())
    assert stats["focused/render/deadline"] == 1
    # Not one connection to a refused address, whatever the vector.
    assert site.connections() == dict.fromkeys(site.listeners, 0)


@needs_chromium
@pytest.mark.crawl
def test_sigterm_is_answered_while_a_bomb_page_renders(tmp_path: Path, redis_home: Path):
    site = TrapSite({"bomb": BOMB})
    crawl = trap_crawl(site, tmp_path, redis_home)
    deadline = 10  # well after the SIGTERM, 3 s into the render; the crawl ends at it
    try:
        process = crawl.start(**{**TRAP_SETTINGS, "FOCUSED_RENDER_DEADLINE": deadline})
        wait_for(lambda: "/trap/bomb" in site.asked, 120)
        time.sleep(3)  # the browser is building the bomb's nodes, or reading them
        asked = time.monotonic()
        process.send_signal(signal.SIGTERM)
        crawl.finish(process, 0, deadline + 30)
        answered = time.monotonic() - asked
    finally:
        site.close()
    log = crawl.log()
    assert "Spider closed (shutdown)" in log and "Traceback" not in log
    assert answered < deadline + 30
