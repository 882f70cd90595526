"""The hostile web (issue 14): every case a crawler meets on the open web, served by the
project's own server on 127.0.0.1, and one real crawl of it that must survive them all."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import re
import socket
import subprocess
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import pyarrow.parquet as pq
import pytest
import redis
import requests
from scrapy.settings import default_settings

from focused import settings as project_settings
from focused.errors import FocusedError
from focused.lab.webs.bundle import Bundle, url_key, write_bundle
from focused.lab.webs.generate import HOSTILE_FILE
from focused.lab.webs.hostile import SPELLED_HOST, SPELLINGS, generate_hostile_web
from focused.lab.webs.server import ServedWeb, WebServer, read_log, serve
from focused.relevance.text import MAX_TITLE
from tests.conftest import Crawl, final_stats, focused

pytestmark = pytest.mark.crawl  # all tests but two serve, crawl or make the web in a subprocess

# The crawl: small delays and timeouts so that it lasts about a minute and a half (the 60 s of
# Retry-After included), with CLOSESPIDER_TIMEOUT as a safety net.
HOST_DELAY = 0.25
DEPTH_LIMIT = 6
REDIRECT_MAX_TIMES = 3
DOWNLOAD_TIMEOUT = 5
CLOSESPIDER_TIMEOUT = 170
# The project's own limits (focused/settings/__init__.py, else Scrapy's defaults).
MAXSIZE = project_settings.DOWNLOAD_MAXSIZE
URLLENGTH_LIMIT = getattr(project_settings, "URLLENGTH_LIMIT", default_settings.URLLENGTH_LIMIT)
# A crawl of this web peaks at about 300 MiB; a 1 GiB gzip bomb inflated, or an endless page
# kept, would take it far beyond.
PEAK_RSS_LIMIT = 600 * 2**20


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_hostile_web(
        tmp_path_factory.mktemp("hostile") / "web", n_pages=100, n_hosts=10, seed=3
    )


@pytest.fixture(scope="module")
def cases(hostile: Path) -> dict[str, dict]:
    manifest = json.loads((hostile / HOSTILE_FILE).read_text())
    return {case["name"]: case for case in manifest["cases"]}


@pytest.fixture(scope="module")
def served_hostile(hostile: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedWeb]:
    with ServedWeb(hostile, log_path=tmp_path_factory.mktemp("log") / "served.jsonl") as served:
        yield served


def raw(port: int, request: bytes, limit: int = 1 << 20, timeout: float = 10) -> bytes:
    """Send a raw request; read until the server closes, or ``limit`` bytes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(request)
        data = b""
        while len(data) < limit and (chunk := conn.recv(65536)):
            data += chunk
    return data


# The web


def test_every_case_is_linked_from_the_seeds(hostile: Path, cases: dict[str, dict]) -> None:
    bundle = Bundle.load(hostile)
    topic = (hostile / "topic.toml").read_text()
    seeds = [p for p in bundle.pages.values() if p.url in topic]
    assert len(seeds) == 8
    on_seeds = b"".join(p.body for p in seeds)
    for case in cases.values():
        for link in case["links"]:
            assert link.encode() in on_seeds or link.replace("&", "&amp;").encode() in on_seeds
    kinds = Counter(case["kind"] for case in cases.values())
    assert kinds == {
        "bad-link": 10,
        "base": 5,
        "host-spelling": 1,
        "redirect-chain": 1,
        "redirect-loop": 2,
        "private": 4,
        "trap": 2,
        "bad-page": 8,
        "charset": 1,
        "title": 1,
        "retry-after": 2,
        "robots": 3,
    }
    # Every page to find and every redirect target is there; nothing hostile is labelled.
    for case in cases.values():
        for url in case["good"]:
            assert bundle.page(url) is not None and bundle.page(url).status == 200, url
        assert all(bundle.categories(url) == [] for url in case["good"])


def test_generate_hostile_from_the_command_line(tmp_path: Path, hostile: Path) -> None:
    done = focused("web", "generate", "--hostile", str(tmp_path / "web"), "--pages", "100")
    assert done.returncode == 0, done.stderr
    assert "40 hostile cases" in done.stdout
    assert (tmp_path / "web" / HOSTILE_FILE).is_file()
    # The same seed gives the same web; an ordinary web written over it drops the hostile list.
    again = generate_hostile_web(tmp_path / "again", n_pages=100, n_hosts=10, seed=3)
    for name in ("pages.jsonl.gz", "labels.tsv", HOSTILE_FILE):
        assert (again / name).read_bytes() == (hostile / name).read_bytes(), name
    done = focused("web", "generate", str(tmp_path / "web"), "--pages", "100", "--force")
    assert done.returncode == 0 and not (tmp_path / "web" / HOSTILE_FILE).exists()


def test_an_unknown_behaviour_is_refused(tmp_path: Path) -> None:
    page = {"url": "http://a.test/x", "status": 200, "headers": {}, "body": ""}
    write_bundle(tmp_path, [{**page, "behaviour": {"name": "explode"}}])
    with pytest.raises(FocusedError, match=r"http://a.test/x: no behaviour 'explode'"):
        WebServer(Bundle.load(tmp_path))
    write_bundle(tmp_path, [{**page, "behaviour": {"name": "huge", "size": "big"}}])
    with pytest.raises(FocusedError, match=r"http://a.test/x: behaviour 'huge' takes numbers"):
        WebServer(Bundle.load(tmp_path))
    (tmp_path / "pages.jsonl.gz").unlink()
    (tmp_path / "pages.jsonl").write_text(json.dumps({**page, "behaviour": "explode"}) + "\n")
    with pytest.raises(FocusedError, match="line 1: bad page record"):
        Bundle.load(tmp_path)


# The server


def test_one_host_answers_to_every_spelling(
    served_hostile: ServedWeb, http: requests.Session
) -> None:
    for name, origin in SPELLINGS.items():
        answer = http.get(f"{origin}/spelling/{name}", proxies={"http": served_hostile.proxy})
        assert answer.status_code == 200 and f"Spelled {name}" in answer.text, origin
    for host in ("WWW.XN--BCHER-KVA.WEB.TEST.:80", f"{SPELLED_HOST}.", f"{SPELLED_HOST}:80"):
        request = f"GET /spelling/dot HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        assert raw(served_hostile.port, request.encode()).startswith(b"HTTP/1.1 200 "), host


def test_chain_calendar_and_session_ids_never_end(
    served_hostile: ServedWeb, cases: dict[str, dict], http: requests.Session
) -> None:
    proxies = {"http": served_hostile.proxy}
    url = cases["redirect-chain"]["url"]
    for n in range(1, 4):
        answer = http.get(url, proxies=proxies, allow_redirects=False)
        assert answer.status_code == 302 and answer.headers["Location"].endswith(f"/chain/{n}")
        url = answer.headers["Location"]
    assert (
        http.get(url.replace("/3", "/123456"), proxies=proxies, allow_redirects=False)
        .headers["Location"]
        .endswith("/chain/123457")
    )
    month = http.get(cases["calendar"]["url"].replace("=0", "=41"), proxies=proxies)
    assert "month 41" in month.text and "calendar?month=42" in month.text
    shop = cases["session-ids"]["url"]
    links = [re.findall(r'href="([^"]+)"', http.get(shop, proxies=proxies).text) for _ in "ab"]
    assert len(set(links[0] + links[1])) == 4
    assert all(
        link.startswith(shop + (";jsessionid=", "?sid=")[i % 2]) for i, link in enumerate(links[0])
    )
    again = http.get(links[0][0], proxies=proxies)
    assert again.status_code == 200 and links[0][0] not in again.text


def test_bad_bodies(served_hostile: ServedWeb, cases: dict[str, dict]) -> None:
    port = served_hostile.port

    def get(url: str, limit: int = 1 << 20) -> tuple[bytes, bytes]:
        request = f"GET {url} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        answer = raw(port, request.encode(), limit)
        head, _, body = answer.partition(b"\r\n\r\n")
        return head, body

    head, body = get(cases["gzip-bomb"]["url"], limit=1 << 22)
    assert b"Content-Encoding: gzip" in head and b"Content-Type: text/html" in head
    assert len(body) < 2 * 2**20 and int.from_bytes(body[-4:], "little") == 2**30
    inflated = zlib.decompressobj(31).decompress(body, 4 * MAXSIZE)
    assert len(inflated) == 4 * MAXSIZE and not inflated.strip(b"\0")
    head, _ = get(cases["huge"]["url"], limit=1000)
    assert f"Content-Length: {64 << 20}".encode() in head
    head, body = get(cases["truncated"]["url"])
    length = int(re.search(rb"Content-Length: (\d+)", head)[1])
    assert length == len(body) + 5000 and body.endswith(b"</html>\n")
    head, body = get(cases["retry-after-429"]["url"])
    assert head.startswith(b"HTTP/1.1 429 ") and b"Retry-After: 60" in head
    head, body = get(cases["wrong-charset"]["url"])
    assert b"charset=utf-16" in head and body.isascii()


def test_slow_loris_sends_a_byte_every_two_seconds(
    served_hostile: ServedWeb, cases: dict[str, dict]
) -> None:
    url = cases["slow-loris"]["url"]
    with socket.create_connection(("127.0.0.1", served_hostile.port), timeout=10) as conn:
        start = time.monotonic()
        conn.sendall(f"GET {url} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        head = conn.recv(65536)
        assert head.startswith(b"HTTP/1.1 200 ") and time.monotonic() - start < 1
        received = head.partition(b"\r\n\r\n")[2] or conn.recv(10)
        assert received == b"<" and time.monotonic() - start < 1
        assert conn.recv(10) == b"!" and time.monotonic() - start > 1.5


def test_endless_page_stops_when_the_client_goes(hostile: Path, tmp_path: Path) -> None:
    url = "http://body.hostile.web.test/endless"
    log = tmp_path / "log.jsonl"

    async def read_and_leave() -> WebServer:
        server = await serve(Bundle.load(hostile), log_path=log)
        async with (
            aiohttp.ClientSession() as session,
            session.get(url, proxy=f"http://127.0.0.1:{server.port}") as answer,
        ):
            assert answer.headers["Content-Type"] == "text/html; charset=utf-8"
            assert "Content-Length" not in answer.headers
            await answer.content.readexactly(8 * 2**20)
        for _ in range(50):  # the stream notices the client has gone
            if server.counters["requests"]:
                break
            await asyncio.sleep(0.1)
        await server.stop()
        return server

    server = asyncio.run(read_and_leave())
    assert server.counters["requests"] == 1
    [entry] = read_log(log)
    assert entry["url"] == url and 8 * 2**20 <= entry["bytes"] < 16 * 2**20


# The crawl


@dataclass
class Crawled:
    returncode: int | None
    seconds: float
    peak_rss: int  # bytes, VmHWM of the crawl process
    log: str
    stats: dict[str, float]
    feed: dict[str, dict]  # by url_key
    served: list[dict]  # the server's log
    name: str  # the crawl's
    warc: Path  # its WARC files' folder


@pytest.fixture(scope="module")
def crawled(
    hostile: Path,
    redis_home: Path,
    redis_client: redis.Redis,
    tmp_path_factory: pytest.TempPathFactory,
) -> Crawled:
    return crawl_hostile(hostile, redis_home, tmp_path_factory.mktemp("crawl"))


def crawl_hostile(hostile: Path, redis_home: Path, workdir: Path, **settings: object) -> Crawled:
    """One crawl of the hostile web, watched for its peak memory, its pages described in WARC
    files (the data set's source)."""
    log_path = workdir / "served.jsonl"
    warc = workdir / "warc"
    with ServedWeb(hostile, log_path=log_path) as served:
        name = f"hostile-{uuid.uuid4().hex[:8]}"
        crawl = Crawl(hostile / "topic.toml", served.proxy, redis_home, name, workdir)
        start = time.monotonic()
        process = crawl.start(
            FOCUSED_HOST_DELAY=HOST_DELAY,
            DEPTH_LIMIT=DEPTH_LIMIT,
            REDIRECT_MAX_TIMES=REDIRECT_MAX_TIMES,
            RETRY_TIMES=1,
            DOWNLOAD_TIMEOUT=DOWNLOAD_TIMEOUT,
            CLOSESPIDER_TIMEOUT=CLOSESPIDER_TIMEOUT,
            FOCUSED_WARC_DIR=warc,
            **settings,
        )
        peak = 0
        while process.poll() is None and time.monotonic() - start < CLOSESPIDER_TIMEOUT + 60:
            peak = max(peak, _peak_rss(process.pid))
            time.sleep(0.2)
        if process.poll() is None:
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(10)
        seconds = time.monotonic() - start
    log = crawl.log()
    stats = final_stats(log) if "Dumping Scrapy stats:" in log else {}
    feed = {url_key(item["url"]): item for item in crawl.feed()}
    served_log = read_log(log_path)
    return Crawled(process.returncode, seconds, peak, log, stats, feed, served_log, name, warc)


def _peak_rss(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:  # it has just ended
        return 0
    match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    return int(match[1]) * 1024 if match else 0


def fetched(crawled: Crawled, url: str) -> list[dict]:
    """The server's log entries of ``url`` (in any spelling), robots.txt aside."""
    key = url_key(url)
    return [entry for entry in crawled.served if _key(entry["url"]) == key]


def _key(url: str) -> str | None:
    try:
        return url_key(url)
    except ValueError:
        return None


def test_the_crawl_ends_cleanly(crawled: Crawled) -> None:
    assert crawled.returncode == 0, crawled.log[-3000:]
    assert "Traceback" not in crawled.log, crawled.log[crawled.log.index("Traceback") - 2000 :][
        :5000
    ]
    assert "Spider closed (finished)" in crawled.log
    assert crawled.seconds < CLOSESPIDER_TIMEOUT


def test_memory_stays_bounded(crawled: Crawled, cases: dict[str, dict]) -> None:
    assert 0 < crawled.peak_rss < PEAK_RSS_LIMIT, f"peak RSS {crawled.peak_rss / 2**20:.0f} MiB"
    # The crawler hung up on the endless page and on the huge one: the server stopped
    # sending soon after DOWNLOAD_MAXSIZE.
    for name in ("endless", "huge"):
        entries = fetched(crawled, cases[name]["url"])
        assert entries and all(e["bytes"] < 4 * MAXSIZE for e in entries), (name, entries)


# A byte every 2 s against DOWNLOAD_TIMEOUT and FOCUSED_MIN_RATE_AFTER_S both of 5 s: whichever
# ends it first, the timeout or the rate floor, is right (which one depends on the machine's load).
EITHER_REASON = {"slow-loris": {"timeout", "too_slow"}}


def test_each_bad_page_is_counted_under_its_reason(
    crawled: Crawled, cases: dict[str, dict]
) -> None:
    expected = Counter()
    wrong = {}
    for case in cases.values():
        if case["reason"] is None:
            continue
        item = crawled.feed.get(url_key(case["url"]))
        reasons = EITHER_REASON.get(case["name"], {case["reason"]})
        reason = item["bad"] if item is not None and item["bad"] in reasons else case["reason"]
        expected[reason] += 1
        if item is None or item["bad"] != reason:
            wrong[case["name"]] = item and item["bad"]
    counted = {reason: crawled.stats.get(f"focused/bad_page/{reason}", 0) for reason in expected}
    assert not wrong, f"expected {dict(expected)}, got {wrong}"
    assert all(counted[reason] >= n for reason, n in expected.items()), counted


def test_bad_links_are_skipped_and_counted_and_their_pages_go_on(
    crawled: Crawled, cases: dict[str, dict]
) -> None:
    expected = Counter(reason for case in cases.values() for reason in case["link_reasons"])
    counted = {reason: crawled.stats.get(f"focused/links/bad/{reason}", 0) for reason in expected}
    assert all(counted[reason] >= n for reason, n in expected.items()), counted
    for case in cases.values():
        if case["kind"] in ("bad-link", "base") or case["name"] == "private-links":
            assert len(fetched(crawled, case["url"])) == 1, case["name"]
            item = crawled.feed.get(url_key(case["url"]))
            assert item is not None and item["bad"] is None, (case["name"], item)


def test_good_pages_linked_from_hostile_ones_are_found(
    crawled: Crawled, cases: dict[str, dict]
) -> None:
    missing = [
        url
        for case in cases.values()
        for url in case["good"]
        if (item := crawled.feed.get(url_key(url))) is None or item["bad"] is not None
    ]
    assert not missing


def test_a_wrong_charset_is_read_as_what_it_is(crawled: Crawled, cases: dict[str, dict]) -> None:
    item = crawled.feed.get(url_key(cases["wrong-charset"]["url"]))
    assert item is not None and item["bad"] is None, item
    assert item["title"] == "Declared UTF-16" and item["relevance"] is not None


def test_a_title_of_control_characters_is_cleaned_and_cut(
    crawled: Crawled, cases: dict[str, dict], redis_home: Path, tmp_path: Path
) -> None:
    """In the feed and in the exported data set: a terminal showing either obeys nothing."""
    key = url_key(cases["control-title"]["url"])
    item = crawled.feed.get(key)
    assert item is not None and item["bad"] is None and item["relevance"] is not None, item
    out = tmp_path / "pages.parquet"
    options = ["--format", "parquet", "-o", str(out), "--warc-dir", str(crawled.warc)]
    result = focused("export", crawled.name, "--home", str(redis_home), *options)
    assert result.returncode == 0, result.stderr
    [row] = [row for row in pq.read_table(out).to_pylist() if url_key(row["url"]) == key]
    for title in (item["title"], row["title"]):
        assert (
            title.startswith("[31mRed title [0m on cycling on cycling") and len(title) == MAX_TITLE
        )
        assert not re.search("[\x00-\x1f\x7f-\x9f]", title)


def _private(url: str) -> bool:
    """Whether ``url``'s host is loopback, private, link-local... in any spelling."""
    try:
        host = (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        try:  # 127.1, 0x7f.0.0.1, 2130706433, 017700000001...
            address = ipaddress.ip_address(socket.inet_aton(host))
        except OSError:
            return False
    return not address.is_global


def test_nothing_is_fetched_at_a_private_address(crawled: Crawled, cases: dict[str, dict]) -> None:
    assert crawled.served, "the crawl fetched nothing"
    assert not [e["url"] for e in crawled.served if _private(e["url"])]
    never = {url_key(url) for case in cases.values() for url in case["never"] if _key(url)}
    assert not [e["url"][:200] for e in crawled.served if _key(e["url"]) in never]
    assert all(len(e["url"]) <= URLLENGTH_LIMIT for e in crawled.served)


def test_one_host_however_spelled(crawled: Crawled, cases: dict[str, dict]) -> None:
    case = cases["host-spellings"]
    for url in case["good"]:
        assert len(fetched(crawled, url)) == 1, url
    host = [e for e in crawled.served if urlsplit(e["url"]).hostname == SPELLED_HOST]
    robots = [e for e in host if e["url"].endswith("/robots.txt")]
    assert len(robots) == 1
    times = sorted(e["time"] for e in host)
    gaps = [round(b - a, 3) for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps) >= 0.8 * HOST_DELAY, gaps


def test_redirect_chains_and_loops_end(crawled: Crawled, cases: dict[str, dict]) -> None:
    chain = [e for e in crawled.served if e["url"].startswith(cases["redirect-chain"]["prefix"])]
    assert 1 <= len(chain) <= REDIRECT_MAX_TIMES + 1, [e["url"] for e in chain]
    given_up = [
        item
        for item in crawled.feed.values()
        if item["url"].startswith(cases["redirect-chain"]["prefix"])
    ]
    assert given_up and all(item["bad"] for item in given_up), given_up
    loop = cases["redirect-loop-three"]["url"].removesuffix("1")
    for url in (cases["redirect-loop-self"]["url"], *(f"{loop}{n}" for n in (1, 2, 3))):
        assert len(fetched(crawled, url)) == 1, url


def test_traps_end(crawled: Crawled, cases: dict[str, dict]) -> None:
    calendar = [e for e in crawled.served if e["url"].startswith(cases["calendar"]["prefix"])]
    assert 1 <= len(calendar) <= DEPTH_LIMIT
    shop = [e for e in crawled.served if e["url"].startswith(cases["session-ids"]["prefix"])]
    assert 1 <= len(shop) <= 2**DEPTH_LIMIT


def test_retry_after_holds_the_host(crawled: Crawled, cases: dict[str, dict]) -> None:
    for name in ("retry-after-429", "retry-after-503"):
        host = urlsplit(cases[name]["url"]).hostname
        entries = sorted(
            (e for e in crawled.served if urlsplit(e["url"]).hostname == host),
            key=lambda e: e["time"],
        )
        busy = [e["time"] for e in entries if e["status"] in (429, 503)]
        assert busy, name
        early = [e for e in entries if busy[0] < e["time"] < busy[0] + 59]
        assert not early, (name, [round(e["time"] - busy[0], 1) for e in early])


CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (scripts/setup.sh)")
def test_a_crawl_that_renders_every_hostile_page_ends_by_itself(
    hostile: Path, redis_home: Path, cases: dict[str, dict], tmp_path: Path
) -> None:
    crawled = crawl_hostile(
        hostile, redis_home, tmp_path, FOCUSED_RENDER="always", FOCUSED_RENDER_DEADLINE=20
    )
    assert crawled.returncode == 0 and "Spider closed (finished)" in crawled.log
    assert crawled.seconds < CLOSESPIDER_TIMEOUT
    assert crawled.stats["focused/render/pages"] > 100
    assert 0 < crawled.peak_rss < PEAK_RSS_LIMIT
    # Behind a proxy the browser follows redirects itself (docs/howto/render.md: the proxy
    # refuses them): the only private URLs the offline web, a proxy that refuses nothing, was
    # asked for are the targets of the redirects to private addresses.
    redirected = {
        _address_and_path(url)
        for case in cases.values()
        if case["name"].startswith("redirect-to-")
        for url in case["never"]
    }
    private = {_address_and_path(e["url"]) for e in crawled.served if _private(e["url"])}
    assert private <= redirected, private - redirected


def _address_and_path(url: str) -> tuple[str, str]:
    """(address, path) of a URL whose host spells an IPv4 address (2130706433 is 127.0.0.1)."""
    parts = urlsplit(url)
    return socket.inet_ntoa(socket.inet_aton(parts.hostname or "")), parts.path or "/"
