"""Bad pages and bad links: each counted under a short reason, the good parts still crawled.

A page full of broken links still has its good links followed; a page that declares a wrong
charset is read in its real one; every download failure has a documented reason, never an
exception's class name; a robots.txt that cannot be fetched is one warning line.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import pytest
from lxml.html import fromstring
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse
from scrapy.utils._download_handlers import wrap_twisted_exceptions
from twisted.internet.error import DNSLookupError
from twisted.python.failure import Failure

from focused.links.extract import extract_links
from focused.middlewares.failures import failure_reason
from focused.spiders.focused import plausible, redecoded, too_many_attributes
from tests.conftest import Crawl, free_port

HUGE = "/" + "x" * 3000
BAD_LINKS = {
    "http://[::1": "syntax",
    "http://[::1/": "syntax",
    "http://x.test:99999/": "port",
    "http://a b.test/": "host",
    "http://x.test:0/": "port",
    HUGE: "too_long",
}
SWAN = "<title>Swans</title><body><p>The mute swan is a large water bird of lakes.</p>"
WHOOPER = "<title>Swans</title><body><p>The whooper swan flies south in winter.</p>"


def html(body: str, head: str = "") -> bytes:
    return f"<html><head>{head}</head>{body}</html>".encode()


def links_page() -> bytes:
    anchors = "".join(f'<a href="{href}">bad</a> ' for href in BAD_LINKS)
    good = '<a href="/good#top">good</a> <a href="ftp://files.test/">ftp</a>'
    return html(f"<body><p>Swans.</p>{anchors}{good}</body>", "<title>Links</title>")


# -- links --------------------------------------------------------------------------------------


def test_bad_links_are_skipped_and_counted_and_good_ones_kept():
    response = HtmlResponse("http://a.test/p", body=links_page(), encoding="utf-8")
    bad: Counter[str] = Counter()
    links = extract_links(response, bad=bad)
    assert [url for url, *_ in links] == ["http://a.test/good"]  # canonical: no fragment
    assert bad == Counter(BAD_LINKS.values())  # ftp: is another scheme, not a bad link
    # Scrapy's URLLENGTH_LIMIT: 0 is no limit, so the long link is followed then.
    unlimited: Counter[str] = Counter()
    assert len(extract_links(response, max_length=0, bad=unlimited)) == 2
    assert "too_long" not in unlimited
    # Callers that do not count (the evaluation, older tests) get the same links.
    assert extract_links(response) == links


def test_links_are_canonical_and_a_bad_base_falls_back_to_the_page():
    body = html(
        '<body><a href="HTTP://User@WWW.Example.COM.:80/a b?q=é">x</a> <a href="/c">c</a></body>',
        '<base href="http://[::1">',
    )
    response = HtmlResponse("http://a.test/p/q", body=body, encoding="utf-8")
    urls = [url for url, *_ in extract_links(response)]
    assert urls == ["http://www.example.com/a%20b?q=%C3%A9", "http://a.test/c"]


# -- charsets -----------------------------------------------------------------------------------


def response(body: bytes, content_type: str = "text/html") -> HtmlResponse:
    return HtmlResponse("http://a.test/", body=body, headers={"Content-Type": content_type})


ASCII = html(SWAN, '<meta charset="utf-16">')
LATIN1 = html("<title>Cygne</title><p>" + "Le cygne tuberculé, oiseau d'été. " * 20, "").replace(
    "é".encode(), b"\xe9"
)


@pytest.mark.parametrize(
    ("page", "codec"),
    [
        (response(ASCII), "utf-8"),  # <meta charset="utf-16"> on ASCII
        (response(html(SWAN), "text/html; charset=utf-16"), "utf-8"),
        (response(html(SWAN), "text/html; charset=utf-16le"), "utf-8"),
        (response(html(SWAN, '<meta charset="utf-32">')), "utf-8"),
        (response(LATIN1, "text/html; charset=utf-8"), "cp1252"),  # Latin-1 said to be UTF-8
    ],
)
def test_a_wrong_charset_is_read_in_the_real_one(page, codec):
    assert not plausible(page, 0.01)
    fixed = redecoded(page, 0.01)
    assert fixed is not None and fixed.encoding == codec
    assert "swan" in fixed.text or "cygne tuberculé" in fixed.text


@pytest.mark.parametrize(
    "page",
    [
        response(html(SWAN)),
        response(
            html("<title>白鳥</title><p>" + "白鳥は大きな水鳥です。" * 300)
            .decode()
            .encode("utf-16-le"),
            "text/html; charset=utf-16le",
        ),
        response(
            html("<title>白鳥</title><p>" + "白鳥は水鳥。" * 50).decode().encode("shift_jis"),
            "text/html; charset=shift_jis",
        ),
        response(
            html("<p>A broken byte: \\xff.</p>" + "<p>swan</p>" * 50).replace(b"\\xff", b"\xff")
        ),
    ],
)
def test_right_charsets_are_left_alone(page):
    assert plausible(page, 0.01)


def test_binary_bytes_cannot_be_read_as_any_charset():
    noise = bytes(range(256)) * 8
    page = response(noise, "text/html; charset=utf-8")
    assert not plausible(page, 0.01) and redecoded(page, 0.01) is None


# -- failure reasons ----------------------------------------------------------------------------


def scrapy_failure(error: Exception) -> Failure:
    """The failure Scrapy 2.19's download handlers make of a Twisted error."""
    try:
        with wrap_twisted_exceptions():
            raise error
    except Exception as wrapped:
        return Failure(wrapped)


def test_a_tag_of_too_many_attributes_is_found_before_lxml_reads_it():
    flood = "<p " + " ".join(f'a{i}="1"' for i in range(300_000)) + ">x</p>"
    started = time.perf_counter()
    assert too_many_attributes(f"<html><body>{flood}</body></html>", 1000) == 300_000
    assert time.perf_counter() - started < 2.0  # lxml: minutes
    # Values are read whole: a ">" in one does not end the tag; attributes need no space.
    tricky = "<p " + "".join(f'a{i}=">"' for i in range(1500)) + ">"
    assert too_many_attributes(tricky, 1000) == 1500
    page = "<html><body>" + '<div class="c" id="d" title="a > b">x</div>' * 10_000 + "</body>"
    assert too_many_attributes(page, 1000) == 0
    assert too_many_attributes(page.replace('id="d"', 'id="d" e f g'), 5) == 6
    # A quote that opens no value is a character of a name, to lxml as to a browser: a stray
    # one, or one in the tag's name, hides no attribute.
    names = " ".join(f"a{i}" for i in range(2000))
    assert too_many_attributes(f'<p b"c {names}>', 1000) == 2001
    assert too_many_attributes(f'<p="{names}">', 1000) == 1999


# Shapes of 1997 markup (the WebKB pages') that a count pairing every two quotes took for tags
# of thousands of attributes, among Web Accessibility marks (<!WA0>): a quoted value left open,
# a quote at the end of an unquoted value, a value that runs over the next attribute's name.
# Each has an odd number of quotes: the pairing went wrong from there to the page's end.
OLD_MARKUP = {
    "open-quote": '<!WA38><!WA38><A HREF="http://www.cs.example.edu/cade-14.html>\n\t\tCADE 14'
    '\t</A> --\n  <LI> <B>Publishers: </B>\n\t<A HREF="http://science.example.de">   Springer'
    "\t</A> --\n",
    "quote-in-unquoted-value": '<!WA9><!WA9><a href=http://www.cs.example.edu/spoken-math.ps">'
    "\nHere </a> is the Postscript file of the examples, in case\nyou want them first.\n<p>\n",
    "value-over-a-name": '<BODY BACKGROUND="/gif.dir/rust.jpg BGCOLOR="#FFFACD" LINK="#FF0000">'
    '\n<!WA0><IMG SRC="http://cs.example.edu/gif.dir/badge.gif" ALT="Badge.gif">\n'
    '<i>"To Compute and To Serve"</i><br>\n',
}
# What follows on those pages: a list of links.
LINK_ITEM = '<LI> <!WA40><!WA40><A HREF="http://www.example.edu/~{0}/">Home page {0}</A> --\n'


@pytest.mark.parametrize("shape", sorted(OLD_MARKUP))
def test_old_markup_is_counted_as_lxml_reads_it(shape: str) -> None:
    links = "".join(LINK_ITEM.format(n) for n in range(300))
    page = f"<html><title>Old</title><body><UL>{OLD_MARKUP[shape]}{links}</UL></body></html>"
    assert too_many_attributes(page, 1000) == 0
    most = max(len(element.attrib) for element in fromstring(page).iter())
    assert too_many_attributes(page, most - 1) >= most  # never fewer than lxml reads


def test_failure_reasons_are_short_names_not_class_names():
    assert failure_reason(scrapy_failure(DNSLookupError("no.such.test"))) == "dns"
    assert failure_reason(Failure(IgnoreRequest("Forbidden by robots.txt"))) == "robots_forbidden"
    assert failure_reason(Failure(IgnoreRequest("max redirections reached"))) == "redirects"
    assert failure_reason(Failure(KeyError("surprise"))) == "other"


# -- a real crawl of a hostile server -----------------------------------------------------------


class HostileServer:
    """A TCP server on 127.0.0.1 that misbehaves by path, as servers on the open web do."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.routes: dict[str, Callable[[socket.socket], None]] = {
            "/robots.txt": lambda c: send(c, "404 Not Found", b"none"),
            "/links": lambda c: send(c, "200 OK", links_page()),
            "/good": lambda c: send(c, "200 OK", html("<title>Good</title><p>A swan.</p>")),
            "/utf16-meta": lambda c: send(c, "200 OK", ASCII, ""),
            "/utf16-header": lambda c: send(c, "200 OK", html(WHOOPER), "; charset=utf-16"),
            "/latin1": lambda c: send(c, "200 OK", LATIN1, "; charset=utf-8"),
            "/binary": lambda c: send(c, "200 OK", bytes(range(256)) * 8, "; charset=utf-8"),
            "/truncated": lambda c: c.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5000\r\n\r\n<p>"
            ),
            "/close": lambda c: None,
            "/slow": lambda c: time.sleep(8),
            "/big": lambda c: send(c, "200 OK", b"<p>" + b"swan " * 30_000),
            "/badgzip": lambda c: send(c, "200 OK", b"this is not gzip data", gzip=True),
        }
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.answer, args=(connection,), daemon=True).start()

    def answer(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(10)
            request = b""
            try:
                while b"\r\n\r\n" not in request:
                    if not (chunk := connection.recv(4096)):
                        return
                    request += chunk
                    if not request.startswith(b"GET "[: len(request)]):
                        connection.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")  # TLS hello
                        return
                path = urlsplit(request.split()[1].decode()).path
                self.routes.get(path, lambda c: send(c, "404 Not Found", b"no"))(connection)
            except OSError:
                return

    def close(self) -> None:
        self.listener.close()


def send(
    connection: socket.socket, status: str, body: bytes, charset: str = "", gzip: bool = False
) -> None:
    head = f"HTTP/1.1 {status}\r\nContent-Type: text/html{charset}\r\nConnection: close\r\n"
    if gzip:
        head += "Content-Encoding: gzip\r\n"
    connection.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    server = HostileServer()
    yield server
    server.close()


@pytest.fixture
def plain() -> Iterator[HostileServer]:
    """Another one, whose port is asked for https:// (Scrapy shares robots.txt by host:port)."""
    server = HostileServer()
    yield server
    server.close()


TOPIC = """
name = "hostile"
seeds = {seeds}
allowed_networks = ["127.0.0.0/8"]
[relevance]
method = "keywords"
keywords = ["swan"]
"""

EXPECTED = {
    "/truncated": "truncated",
    "/close": "connection",
    "/slow": "timeout",
    "/big": "too_big",
    "/badgzip": "compression",
    "/binary": "encoding",
}


@pytest.mark.crawl
def test_a_crawl_of_bad_pages_counts_each_reason_and_goes_on(
    hostile, plain, redis_home, redis_client, crawl_name, tmp_path
):
    refused = free_port()
    base = f"http://127.0.0.1:{hostile.port}"
    seeds = [f"{base}{path}" for path in ("/links", "/utf16-meta", "/utf16-header", "/latin1")]
    seeds += [f"{base}{path}" for path in EXPECTED]
    seeds += [f"http://127.0.0.1:{refused}/page", f"https://127.0.0.1:{plain.port}/tls"]
    topic = tmp_path / "topic.toml"
    topic.write_text(TOPIC.format(seeds=repr(seeds).replace("'", '"')))
    crawl = Crawl(topic, "", redis_home, crawl_name, tmp_path)
    # The timeout of /slow leaves the host alone FOCUSED_SLOW_HOST_BACKOFF_S (tests/
    # test_politeness.py checks that): 2 s, not a minute, before the pages left.
    stats = crawl.run(
        RETRY_TIMES=0,
        DOWNLOAD_TIMEOUT=3,
        DOWNLOAD_MAXSIZE=100_000,
        FOCUSED_SLOW_HOST_BACKOFF_S=2,
    )
    feed = {urlsplit(item["url"]).path: item for item in crawl.feed()}
    log = crawl.log()

    # Every failure has its documented reason; no stat is an exception's class name.
    for path, reason in {**EXPECTED, "/page": "refused", "/tls": "tls"}.items():
        assert feed[path]["bad"] == reason, (path, feed[path])
    bad_pages = {k.split("/")[-1] for k in stats if k.startswith("focused/bad_page/")}
    assert bad_pages == {*EXPECTED.values(), "refused", "tls"}
    # The page of bad links was crawled and its good link followed; the bad ones counted.
    assert feed["/links"]["bad"] is None and feed["/good"]["relevance"] > 0
    for reason, count in Counter(BAD_LINKS.values()).items():
        assert stats[f"focused/links/bad/{reason}"] == count, reason
    # Pages that declare a wrong charset are read in their real one, and scored.
    assert stats["focused/pages/charset_fixed"] == 3
    for path in ("/utf16-meta", "/utf16-header"):
        assert feed[path]["bad"] is None and feed[path]["title"] == "Swans"
        assert feed[path]["relevance"] > 0, path
    assert feed["/latin1"]["title"] == "Cygne"
    # robots.txt that could not be fetched: one warning line each, no traceback.
    assert "Traceback" not in log
    for url, reason in (
        (f"http://127.0.0.1:{refused}/robots.txt", "refused"),
        (f"https://127.0.0.1:{plain.port}/robots.txt", "tls"),
    ):
        assert re.search(rf"WARNING: Could not fetch {re.escape(url)} \({reason}: ", log), url
    assert "Spider closed (finished)" in log


def test_robots_middleware_replaces_scrapys_at_its_place():
    from scrapy.settings import Settings

    from focused.addon import FocusedAddon

    settings = Settings()
    settings.setmodule("focused.settings")
    FocusedAddon().update_settings(settings)
    middlewares = settings.getwithbase("DOWNLOADER_MIDDLEWARES")
    assert middlewares["focused.middlewares.robots.RobotsTxtMiddleware"] == 100
    assert middlewares["scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"] is None
