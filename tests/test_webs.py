"""Offline webs: bundle format, synthetic generator and the replay server (on 127.0.0.1 only)."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
import requests

from focused.errors import FocusedError
from focused.lab.webs.bundle import Bundle, url_key, write_bundle
from focused.lab.webs.generate import DEMO_CATEGORY, generate_web
from focused.lab.webs.server import ServedWeb, WebServer, read_log, serve

# ../shared/webs/wikispeedia beside the checkout, where there is one.
WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "webs" / "wikispeedia"
HTML_TYPE = "text/html; charset=utf-8"
HREF = re.compile(rb'href="([^"]+)"')


@pytest.fixture(scope="module")
def served(web: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedWeb]:
    with ServedWeb(web, log_path=tmp_path_factory.mktemp("log") / "served.jsonl") as served:
        yield served


def first_url(bundle: Bundle, pattern: str) -> str:
    return next(p.url for p in bundle.pages.values() if re.search(pattern, p.url))


def raw_get(port: int, request: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(request.encode())
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


# Bundle format


def test_url_key_ignores_spelling() -> None:
    key = url_key("http://www.x.wiki.test/%C3%81ed%C3%A1n?b=2&a=1")
    assert url_key("http://WWW.X.wiki.test:80/Áedán?a=1&b=2#top") == key
    assert url_key("http://www.x.wiki.test") == "http://www.x.wiki.test/"


def test_write_and_load_round_trip(tmp_path: Path) -> None:
    pages = [
        {
            "url": "http://www.x.wiki.test/%C3%81ed%C3%A1n",
            "status": 200,
            "headers": {"Content-Type": "text/html", "Content-Length": "9", "Connection": "close"},
            "body": "<p>Áedán</p>",
        },
        {
            "url": "http://www.x.wiki.test/broken",
            "status": 200,
            "headers": {"Content-Type": "text/html; charset=utf-8"},
            "body": b"<p>\xff\xfe</p>",
        },
    ]
    write_bundle(tmp_path, pages, labels={pages[0]["url"]: ["A/B", "C"]}, topics={"topics": []})
    record = json.loads(gzip.decompress((tmp_path / "pages.jsonl.gz").read_bytes()).splitlines()[1])
    assert "body" not in record and "body_b64" in record
    loaded = Bundle.load(tmp_path)
    page = loaded.page("http://www.x.wiki.test/Áedán")
    assert page is not None and page.body == "<p>Áedán</p>".encode()
    assert page.headers == (("Content-Type", "text/html"),)
    assert loaded.pages[url_key(pages[1]["url"])].body == b"<p>\xff\xfe</p>"
    assert loaded.categories("http://www.x.wiki.test/Áedán") == ["A/B", "C"]
    assert loaded.topics == {"topics": []}


def test_plain_jsonl_file_is_a_bundle(tmp_path: Path) -> None:
    path = tmp_path / "pages.jsonl"
    path.write_text('{"url": "http://a.test/", "status": 200, "headers": {}, "body": "x"}\n\n')
    bundle = Bundle.load(path)
    assert list(bundle.pages) == ["http://a.test/"] and bundle.labels == {}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("pages.jsonl.gz", b"not gzip", "not a gzip file"),
        (
            "pages.jsonl",
            b'{"url": "http://a.test/", "status": 200, "body": ""}\n{"url": ',
            "line 2: bad page record",
        ),
        (
            "pages.jsonl",
            b'{"url": "http://a.test/", "headers": {}, "body": ""}\n',
            "line 1: bad page record (missing field 'status')",
        ),
        (
            "pages.jsonl.gz",
            # mtime=0: the same bytes, so the same test id, in every xdist worker
            gzip.compress(b'{"url": "http://a.test/", "status": 200}\n', mtime=0)[:-12],
            "line 1: cannot read",
        ),
    ],
)
def test_bad_bundle_names_file_and_line(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    (tmp_path / name).write_bytes(content)
    with pytest.raises(FocusedError, match=re.escape(message)) as caught:
        Bundle.load(tmp_path)
    assert str(tmp_path / name) in str(caught.value)


def test_missing_bundle(tmp_path: Path) -> None:
    with pytest.raises(FocusedError, match="no such bundle file"):
        Bundle.load(tmp_path / "nothing")


# Generator


def test_generated_web_has_pages_labels_topics_taxonomy(web: Path, bundle: Bundle) -> None:
    assert len(bundle.pages) == 300 + 7  # pages + 500, png, moved, loop a/b, private, robots
    assert len(bundle.labels) == 300 + 6
    topics = {t["category"]: t for t in bundle.topics["topics"]}
    demo = topics[DEMO_CATEGORY]
    assert len(demo["seeds"]) == 8 and 0 < len(demo["training"]) <= 30  # a small web
    assert not set(demo["seeds"]) & set(demo["training"])
    assert all(bundle.categories(url) == [DEMO_CATEGORY] for url in demo["seeds"])
    assert all(HREF.search(bundle.page(url).body) for url in demo["seeds"])
    examples = sorted((web / "taxonomy").glob("*/*/*.txt"))
    assert len(examples) == 11 * 20 and not set(bundle.pages) & {p.stem for p in examples}
    topic = (web / "topic.toml").read_text()
    assert all(url in topic for url in demo["seeds"]) and 'good = ["Sports/Cycling"]' in topic


def test_generated_links_cluster_by_category(bundle: Bundle) -> None:
    same = total = 0
    for page in bundle.pages.values():
        source = bundle.categories(page.url)
        for href in HREF.findall(page.body) if source else ():
            if target := bundle.categories(href.decode()):
                total += 1
                same += target == source
    assert total > 1000 and same / total > 0.5


def test_generator_is_deterministic(tmp_path: Path, web: Path) -> None:
    again = generate_web(tmp_path / "again", n_pages=300, n_hosts=20, seed=1)
    other = generate_web(tmp_path / "other", n_pages=300, n_hosts=20, seed=2)
    for name in ("pages.jsonl.gz", "labels.tsv", "topics.json"):
        assert (again / name).read_bytes() == (web / name).read_bytes(), name
    # The topic is the same but for its name, the folder's: each web is a crawl of its own.
    name, topic = (web / "topic.toml").read_text().split("\n", 1)
    assert name == 'name = "web"'
    assert (again / "topic.toml").read_text() == f'name = "again"\n{topic}'
    assert (other / "pages.jsonl.gz").read_bytes() != (web / "pages.jsonl.gz").read_bytes()


def test_generator_refuses_a_folder_in_use(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FocusedError, match="not empty"):
        generate_web(tmp_path, n_pages=100, n_hosts=5)


# Server


def test_proxy_request_absolute_form(
    served: ServedWeb, bundle: Bundle, http: requests.Session
) -> None:
    url = first_url(bundle, r"/Pedal|/Sprint|/Cyclist")
    response = http.get(url, proxies={"http": served.proxy}, timeout=5)
    assert response.status_code == 200 and response.content == bundle.page(url).body
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": served.proxy}))
    with opener.open(url, timeout=5) as answer:
        assert answer.read() == bundle.page(url).body
    raw = raw_get(served.port, f"GET {url} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 200 ") and raw.endswith(bundle.page(url).body)


def test_host_header_request(served: ServedWeb, bundle: Bundle, http: requests.Session) -> None:
    url = first_url(bundle, r"/Star|/Planet|/Comet")
    host, path = re.match(r"http://([^/]+)(/.*)", url).groups()
    response = http.get(f"{served.proxy}{path}", headers={"Host": host}, timeout=5)
    assert response.status_code == 200 and response.content == bundle.page(url).body
    raw = raw_get(served.port, f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 200 ")
    bad = raw_get(served.port, f"GET {path} HTTP/1.1\r\nHost: [bad\r\nConnection: close\r\n\r\n")
    assert bad.startswith(b"HTTP/1.1 404 ")


def test_head_404_redirect_and_bad_pages(
    served: ServedWeb, bundle: Bundle, http: requests.Session
) -> None:
    proxies = {"http": served.proxy}
    url = next(iter(bundle.pages.values())).url
    head = http.head(url, proxies=proxies, timeout=5)
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["Content-Length"]) == len(bundle.page(url).body)
    missing = http.get(
        first_url(bundle, "/Server_error").replace("Server_error", "Missing_page"),
        proxies=proxies,
        timeout=5,
    )
    assert missing.status_code == 404 and b"Not Found" in missing.content
    moved_url = first_url(bundle, "/Moved_")
    moved = http.get(moved_url, proxies=proxies, allow_redirects=False, timeout=5)
    assert moved.status_code == 301 and bundle.page(moved.headers["Location"]) is not None
    loop = http.get(first_url(bundle, "/Loop_a"), proxies=proxies, allow_redirects=False)
    assert loop.status_code == 301 and loop.headers["Location"].endswith("/Loop_b")
    assert http.get(first_url(bundle, "/Server_error"), proxies=proxies).status_code == 500
    png = http.get(first_url(bundle, r"\.png$"), proxies=proxies)
    assert png.headers["Content-Type"] == "image/png" and png.content.startswith(b"\x89PNG")


def test_robots_txt(served: ServedWeb, bundle: Bundle, http: requests.Session) -> None:
    robots_url = first_url(bundle, "/robots.txt$")
    robots = http.get(robots_url, proxies={"http": served.proxy}, timeout=5)
    assert robots.status_code == 200 and "Disallow: /private/" in robots.text
    other_host = first_url(bundle, "/Server_error").replace("Server_error", "robots.txt")
    assert http.get(other_host, proxies={"http": served.proxy}).status_code == 404


def test_served_log_lists_what_was_fetched(
    served: ServedWeb, bundle: Bundle, http: requests.Session
) -> None:
    url = first_url(bundle, "/Logo.png")
    http.get(url, proxies={"http": served.proxy}, timeout=5)
    deadline = time.monotonic() + 5
    while not (entries := [e for e in read_log(served.log_path) if e["url"] == url]):
        assert time.monotonic() < deadline, "log not flushed within 5 s"
        time.sleep(0.2)
    assert entries[0]["status"] == 200 and entries[0]["bytes"] == len(bundle.page(url).body)
    assert entries[0]["method"] == "GET" and entries[0]["time"] > 0


SCRAPY_FETCH = """
import json, sys
import scrapy
from scrapy.crawler import CrawlerProcess

class Fetch(scrapy.Spider):
    name = "fetch"
    start_urls = sys.argv[1:]

    def parse(self, response):
        print(json.dumps({"url": response.url, "status": response.status}), flush=True)

process = CrawlerProcess({"LOG_LEVEL": "ERROR", "TELNETCONSOLE_ENABLED": False,
                          "HTTPERROR_ALLOW_ALL": True})
process.crawl(Fetch)
process.start()
"""


def test_scrapy_through_http_proxy(served: ServedWeb, bundle: Bundle) -> None:
    page_url, moved_url = first_url(bundle, "/Tackle|/Goal|/Cup"), first_url(bundle, "/Moved_")
    env = {**os.environ, "http_proxy": served.proxy, "no_proxy": "", "NO_PROXY": ""}
    env.pop("HTTP_PROXY", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRAPY_FETCH, page_url, moved_url],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    fetched = {r["url"]: r["status"] for r in map(json.loads, done.stdout.splitlines())}
    target = bundle.page(moved_url).headers
    assert fetched == {page_url: 200, dict(target)["Location"]: 200}


@pytest.mark.crawl
def test_in_process_server_counts_and_flushes_on_stop(bundle: Bundle, tmp_path: Path) -> None:
    url = next(iter(bundle.pages.values())).url
    log = tmp_path / "log.jsonl"

    async def fetch_three() -> WebServer:
        server = await serve(bundle, log_path=log)
        async with aiohttp.ClientSession() as session:
            for _ in range(3):
                async with session.get(url, proxy=f"http://127.0.0.1:{server.port}") as answer:
                    assert answer.status == 200
        await server.stop()
        return server

    server = asyncio.run(fetch_three())
    assert server.counters["requests"] == 3 and server.counters["status/200"] == 3
    assert [e["url"] for e in read_log(log)] == [url] * 3


def test_server_refuses_non_loopback(bundle: Bundle) -> None:
    with pytest.raises(FocusedError, match="loopback"):
        WebServer(bundle, host="0.0.0.0")


@pytest.mark.crawl
def test_served_web_reports_a_bad_bundle(tmp_path: Path) -> None:
    (tmp_path / "pages.jsonl.gz").write_bytes(b"oops")
    with pytest.raises(FocusedError, match="not a gzip file"), ServedWeb(tmp_path):
        pass


@pytest.mark.skipif(not WIKISPEEDIA.is_dir(), reason="no Wikispeedia bundle on this machine")
@pytest.mark.crawl
def test_wikispeedia_through_the_proxy(http: requests.Session) -> None:
    with ServedWeb(WIKISPEEDIA) as served:
        assert served.n_pages == 4604
        proxies = {"http": served.proxy}
        bird = http.get("http://www.kegetika.wiki.test/Rock_Bunting", proxies=proxies, timeout=5)
        assert bird.status_code == 200 and "<h1>Rock Bunting</h1>" in bird.text
        king = http.get("http://www.letoga.wiki.test/Áedán_mac_Gabráin", proxies=proxies)
        assert king.status_code == 200 and "Dál Riata" in king.text


def test_damaged_pages_are_served_byte_for_byte(
    served: ServedWeb, bundle: Bundle, http: requests.Session
) -> None:
    html = [p for p in bundle.pages.values() if p.headers == (("Content-Type", HTML_TYPE),)]
    broken = [p for p in html if b"\xff\xfe" in p.body]
    truncated = [p for p in html if not p.body.endswith(b"</html>\n")]
    assert len(broken) == 1 and len(truncated) == 1
    for page in broken + truncated:
        assert http.get(page.url, proxies={"http": served.proxy}).content == page.body
