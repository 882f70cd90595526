"""Server-side request forgery: only public addresses are fetched, in every spelling, after DNS
and redirects, through a proxy too, unless a setting or the topic allows a network.

The crawls here fetch only 127.0.0.0/8: a "public" site on 127.0.0.2 (allowed by the setting or
the topic), and an "internal" server on 127.0.0.1 that must receive nothing. Links to
169.254.169.254 and 10.255.255.1 are refused before any connection, so nothing leaves the
machine.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import scrapy.resolver
from twisted.internet.testing import MemoryReactorClock

from focused.errors import FocusedError, TopicError
from focused.middlewares.addresses import (
    AddressResolver,
    ForbiddenLookup,
    host_refusal,
    parse_networks,
    proxy_hosts,
    refusal,
)
from focused.topic.files import load_topic
from tests.conftest import Crawl

PUBLIC = "127.0.0.2"  # the crawled site's address, allowed by each crawl
TOPIC = """name = "ssrf"
seeds = ["{seed}"]
{extra}
[relevance]
method = "keywords"
keywords = ["swan"]
"""


# -- the rule ----------------------------------------------------------------------------------

REFUSED = {
    # every spelling of the loopback
    "127.0.0.1": "loopback",
    "127.1": "loopback",
    "127.0.1": "loopback",
    "0x7f.0.0.1": "loopback",
    "0x7f000001": "loopback",
    "0x7F.1": "loopback",
    "2130706433": "loopback",
    "017700000001": "loopback",
    "0177.0.0.1": "loopback",
    "127.0.0.1.": "loopback",
    "127.255.255.254": "loopback",
    "localhost": "loopback",
    "LOCALHOST.": "loopback",
    "www.localhost": "loopback",
    "::1": "loopback",
    "[::1]": "loopback",
    "0:0:0:0:0:0:0:1": "loopback",
    "::ffff:127.0.0.1": "loopback",  # IPv4-mapped
    "[::ffff:7f00:1]": "loopback",
    "2002:7f00:1::": "loopback",  # 6to4 of 127.0.0.1
    # the cloud's metadata service and other link-local addresses
    "169.254.169.254": "link-local",
    "0xa9.0xfe.0xa9.0xfe": "link-local",
    "2852039166": "link-local",
    "::ffff:169.254.169.254": "link-local",
    "fe80::1": "link-local",
    # private networks
    "10.255.255.1": "private",
    "012.0.0.1": "private",
    "172.16.0.1": "private",
    "192.168.1.1": "private",
    "64:ff9b::a00:1": "private",  # NAT64 of 10.0.0.1
    "fc00::1": "private",
    "fd00:ec2::254": "private",
    "fec0::1": "site-local",
    "100.64.0.1": "non-public",  # carrier-grade NAT
    # unspecified, multicast, reserved
    "0.0.0.0": "unspecified",
    "0": "unspecified",
    "::": "unspecified",
    "224.0.0.1": "multicast",
    "239.255.255.250": "multicast",
    "ff02::1": "multicast",
    "240.0.0.1": "reserved",
    "255.255.255.255": "reserved",
}
PUBLIC_HOSTS = [
    "8.8.8.8",
    "93.184.216.34",
    "134744072",  # 8.8.8.8
    "2606:4700::1111",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",  # NAT64 of 8.8.8.8
    "2002:808:808::",  # 6to4 of 8.8.8.8
]


@pytest.mark.parametrize("host, kind", REFUSED.items())
def test_every_spelling_of_a_non_public_address_is_refused(host: str, kind: str):
    reason = host_refusal(host)
    assert reason is not None and reason.endswith(f" {kind} address"), (host, reason)


@pytest.mark.parametrize("host", PUBLIC_HOSTS)
def test_public_addresses_pass(host: str):
    assert host_refusal(host) is None


@pytest.mark.parametrize("host", ["www.example.com", "localhost.example.com", "1.2.3.999"])
def test_names_are_left_to_the_resolver(host: str):
    assert host_refusal(host) is None


def test_the_reason_names_the_address():
    assert host_refusal("0x7f.1") == "127.0.0.1 is a loopback address"
    assert host_refusal("0") == "0.0.0.0 is an unspecified address"


def test_allowed_networks_open_exactly_their_addresses():
    allowed = parse_networks(["127.0.0.2/32", " 10.0.0.0/8", "fd00::/8", "192.168.1.7"], "x")
    for host in ["127.0.0.2", "[::ffff:127.0.0.2]", "10.255.255.1", "012.1.2.3", "fd00::1"]:
        assert host_refusal(host, allowed) is None, host
    assert host_refusal("192.168.1.7", allowed) is None
    for host in ["127.0.0.1", "127.0.0.3", "localhost", "192.168.1.8", "169.254.169.254"]:
        assert host_refusal(host, allowed) is not None, host
    assert refusal(ipaddress.ip_address("::1"), parse_networks(["::1/128"], "x")) is None


@pytest.mark.parametrize("value", ["10.0.0.0/33", "10.0.0", "localhost", "", "fe80::/200"])
def test_a_bad_network_is_one_line_naming_where(value: str):
    with pytest.raises(FocusedError, match=r"^setting FOCUSED_ALLOWED_NETWORKS: .* not a network"):
        parse_networks([value], "setting FOCUSED_ALLOWED_NETWORKS")


def test_the_topic_file_allows_networks(tmp_path: Path):
    path = tmp_path / "topic.toml"
    extra = 'allowed_networks = ["10.0.0.0/8", "fd00::/8"]'
    path.write_text(TOPIC.format(seed="http://a.test/", extra=extra))
    assert load_topic(path).allowed_networks == ("10.0.0.0/8", "fd00::/8")
    path.write_text(TOPIC.format(seed="http://a.test/", extra=""))
    assert load_topic(path).allowed_networks == ()


@pytest.mark.parametrize(
    "value, problem",
    [
        ('["10.0.0.0/33"]', "not a network such as 10.0.0.0/8: '10.0.0.0/33'"),
        ('"10.0.0.0/8"', "expected a list of strings, got '10.0.0.0/8'"),
        ("[10]", "expected a list of strings, got [10]"),
    ],
)
def test_a_bad_topic_network_names_the_field(tmp_path: Path, value: str, problem: str):
    path = tmp_path / "topic.toml"
    path.write_text(TOPIC.format(seed="http://a.test/", extra=f"allowed_networks = {value}"))
    with pytest.raises(TopicError) as caught:
        load_topic(path)
    assert str(caught.value) == f"{path}: allowed_networks: {problem}"


def test_the_resolver_fails_names_of_refused_addresses(monkeypatch: pytest.MonkeyPatch):
    """Looked up through Scrapy's DNS cache (filled here, so no lookup leaves the process)."""
    for name, address in [("intranet.test", "10.1.2.3"), ("www.test", "93.184.216.34")]:
        monkeypatch.setitem(scrapy.resolver.dnscache, name, address)
    monkeypatch.setitem(scrapy.resolver.dnscache, "proxy.test", "127.0.0.1")
    monkeypatch.setitem(scrapy.resolver.dnscache, "lab.test", "192.168.5.5")
    resolver = AddressResolver(
        MemoryReactorClock(), 100, 1.0, parse_networks(["192.168.5.0/24"], "x"), ["Proxy.test"]
    )
    results: dict[str, object] = {}
    for name in ["intranet.test", "www.test", "proxy.test", "lab.test"]:
        resolver.getHostByName(name).addBoth(
            lambda result, name=name: results.update({name: result})
        )
    assert results["intranet.test"].check(ForbiddenLookup)
    assert results["www.test"] == "93.184.216.34"
    assert results["proxy.test"] == "127.0.0.1"  # the operator's proxy
    assert results["lab.test"] == "192.168.5.5"  # an allowed network
    assert resolver.refused == {
        "intranet.test": "intranet.test resolves to 10.1.2.3, a private address"
    }
    # The same name with a public address again (Scrapy's cache was cleared): no longer refused.
    monkeypatch.setitem(scrapy.resolver.dnscache, "intranet.test", "93.184.216.35")
    resolver.getHostByName("intranet.test").addBoth(lambda result: results.update(again=result))
    assert results["again"] == "93.184.216.35" and resolver.refused == {}


def test_the_proxies_are_the_environments(monkeypatch: pytest.MonkeyPatch):
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:3128")
    monkeypatch.setenv("https_proxy", "squid.corp:8080")
    monkeypatch.setenv("no_proxy", "nothing.test")
    assert proxy_hosts() == {"127.0.0.1", "squid.corp"}


# -- real crawls --------------------------------------------------------------------------------


class Server:
    """An HTTP server on one loopback address, answering from ``pages`` (path: (status,
    headers, body)) and recording every request it gets, proxied ones included."""

    def __init__(self, address: str, pages: dict[str, tuple[int, dict[str, str], str]]):
        self.pages = pages
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                server.requests.append(self.path)
                path = urlsplit(self.path).path or "/"  # a proxied request has the whole URL
                status, headers, body = server.pages.get(path, (404, {}, "not found"))
                data = body.encode()
                self.send_response(status)
                for name, value in {"Content-Type": "text/html", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer((address, 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def internal() -> Iterator[Server]:
    """The server a page must not reach (think of a local Redis or an admin page)."""
    server = Server("127.0.0.1", {"/": (200, {}, "<title>secret</title>")})
    yield server
    server.close()


@pytest.fixture
def site() -> Iterator[Server]:
    server = Server(PUBLIC, {})
    yield server
    server.close()


def page(*links: str) -> tuple[int, dict[str, str], str]:
    anchors = "".join(f'<a href="{link}">swan {n}</a> ' for n, link in enumerate(links))
    return 200, {}, f"<html><title>swans</title><body><p>A swan.</p>{anchors}</body></html>"


def redirect(location: str) -> tuple[int, dict[str, str], str]:
    return 302, {"Location": location}, ""


class DirectCrawl(Crawl):
    """A crawl with no proxy: it connects to every host itself."""

    def env(self) -> dict[str, str]:
        env = {key: value for key, value in super().env().items() if key.lower()[-6:] != "_proxy"}
        if self.proxy:
            env["http_proxy"] = self.proxy
        return env


@pytest.fixture
def make_crawl(redis_home: Path, redis_client, crawl_name: str, tmp_path: Path):
    def make(seed: str, extra: str = "", proxy: str = "") -> DirectCrawl:
        topic = tmp_path / "topic.toml"
        topic.write_text(TOPIC.format(seed=seed, extra=extra))
        return DirectCrawl(topic, proxy, redis_home, crawl_name, tmp_path)

    return make


def forbidden(crawl: Crawl) -> set[str]:
    return {
        urlsplit(item["url"]).path for item in crawl.feed() if item["bad"] == "forbidden_address"
    }


def assert_no_remote_code(log: str) -> None:
    """Neither of Scrapy's servers that run Python sent to the crawl is on."""
    assert "Telnet console listening" not in log and "Telnet Password" not in log
    assert "Remote control HTTP server" not in log


@pytest.mark.crawl
def test_a_page_cannot_make_the_crawler_fetch_private_addresses(site, internal, make_crawl):
    to = f"{internal.port}"
    refused = {
        f"http://127.0.0.1:{to}/a": "/a",
        f"http://127.1:{to}/b": "/b",
        f"http://0x7f.0.0.1:{to}/c": "/c",
        f"http://2130706433:{to}/d": "/d",
        f"http://localhost:{to}/e": "/e",
        f"http://[::1]:{to}/f": "/f",
        f"http://[::ffff:127.0.0.1]:{to}/g": "/g",
        "http://169.254.169.254/latest/meta-data/": "/latest/meta-data/",
        "http://10.255.255.1/h": "/h",
        f"http://{PUBLIC}:{site.port}/redirect": "/r",  # redirected to the internal server
    }
    site.pages.update(
        {
            "/": page(*refused, "/ok"),
            "/ok": page(),
            "/redirect": redirect(f"http://127.0.0.1:{to}/r"),
        }
    )
    crawl = make_crawl(f"http://{PUBLIC}:{site.port}/")
    stats = crawl.run(FOCUSED_ALLOWED_NETWORKS=f"{PUBLIC}/32", DOWNLOAD_TIMEOUT=5)

    assert internal.requests == []
    assert forbidden(crawl) == set(refused.values())
    assert stats["focused/bad_page/forbidden_address"] == len(refused)
    assert stats["focused/addresses/refused"] == len(refused)
    fetched = {item["url"]: item for item in crawl.feed() if item["bad"] is None}
    assert f"http://{PUBLIC}:{site.port}/ok" in fetched  # the allowed site is crawled
    log = crawl.log()
    assert "Refused <GET http://" in log and "(allow its network with FOCUSED_ALLOWED" in log
    assert_no_remote_code(log)


@pytest.mark.crawl
def test_a_name_that_resolves_to_a_private_address_is_refused(site, internal, make_crawl):
    """This machine's own name resolves to a loopback address: a link to it passes the URL's
    spelling check but not the DNS check, on the page and on a redirect."""
    name = socket.gethostname().lower()
    try:
        address = ipaddress.ip_address(socket.gethostbyname(name))
    except OSError:
        pytest.skip(f"this machine's name {name} does not resolve")
    if address not in ipaddress.ip_network("127.0.0.0/8") or str(address) == PUBLIC:
        pytest.skip(f"this machine's name {name} resolves to {address}, not the loopback")
    site.pages.update(
        {
            "/": page(f"http://{name}:{internal.port}/dns", "/redirect", "/ok"),
            "/ok": page(),
            "/redirect": redirect(f"http://{name}:{internal.port}/dns2"),
        }
    )
    crawl = make_crawl(f"http://{PUBLIC}:{site.port}/", f'allowed_networks = ["{PUBLIC}/32"]')
    stats = crawl.run(DOWNLOAD_TIMEOUT=5)

    assert internal.requests == []
    assert forbidden(crawl) == {"/dns", "/dns2"}
    assert stats["focused/bad_page/forbidden_address"] == 2
    # Each page, and the robots.txt of the name's host, refused once all retries failed.
    assert stats["focused/addresses/refused"] == 3
    log = crawl.log()
    assert f"resolves to {address}, a loopback address" in log
    assert "Gave up retrying" not in log  # a retry of a refused name is refused at once
    assert f"http://{PUBLIC}:{site.port}/ok" in {item["url"] for item in crawl.feed()}


@pytest.mark.crawl
def test_the_proxy_keeps_working_and_spelled_addresses_are_still_refused(
    site, internal, make_crawl
):
    """The site serves as the HTTP proxy, on a loopback address that is not allowed: the
    operator's proxy is reached, the made-up host through it, and a spelled private address is
    refused before it reaches the proxy."""
    site.pages.update({"/": page(f"http://127.0.0.1:{internal.port}/a", "/ok"), "/ok": page()})
    crawl = make_crawl("http://www.site.test/", proxy=f"http://{PUBLIC}:{site.port}")
    stats = crawl.run(DOWNLOAD_TIMEOUT=5)

    assert "http://www.site.test/ok" in site.requests  # through the proxy
    assert not any("127.0.0.1" in request for request in site.requests)
    assert internal.requests == []
    assert forbidden(crawl) == {"/a"} and stats["focused/addresses/refused"] == 1
    assert_no_remote_code(crawl.log())


@pytest.mark.crawl
def test_the_telnet_console_opens_only_when_asked(site, make_crawl):
    site.pages.update({"/": page()})
    crawl = make_crawl(f"http://{PUBLIC}:{site.port}/")
    crawl.run(FOCUSED_ALLOWED_NETWORKS=f"{PUBLIC}/32", TELNETCONSOLE_ENABLED=True)
    assert "Telnet console listening on 127.0.0.1:" in crawl.log()


@pytest.mark.crawl
def test_the_remote_control_server_opens_only_when_asked(site, make_crawl, tmp_path):
    site.pages.update({"/": page()})
    crawl = make_crawl(f"http://{PUBLIC}:{site.port}/")
    crawl.run(
        FOCUSED_ALLOWED_NETWORKS=f"{PUBLIC}/32",
        REMOTE_CONTROL_ENABLED=True,
        REMOTE_CONTROL_JOBS_DIR=str(tmp_path / "jobs"),
    )
    assert "Remote control HTTP server listening on port " in crawl.log()
