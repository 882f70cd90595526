"""The dashboard and the exporter answer only the Host names they were started for
(:mod:`focused.monitor.hosts`): real servers, real HTTP requests with a foreign Host header."""

from __future__ import annotations

import socket
from urllib.parse import urljoin

import pytest

from focused.monitor.hosts import REFUSED, allowed_hosts, host_name, is_allowed
from tests.test_watch import serving


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost:8090", "localhost"),
        ("LocalHost.", "localhost"),
        ("[::1]:8090", "::1"),
        ("[::1]", "::1"),
        ("::1", "::1"),
        ("crawler.example.org:9410", "crawler.example.org"),
    ],
)
def test_host_name_drops_the_port_case_and_final_dot(header: str, name: str) -> None:
    assert host_name(header) == name


def test_the_names_a_server_answers() -> None:
    loopback = allowed_hosts("127.0.0.1")
    for header in ("127.0.0.1:8090", "localhost:8090", "[::1]:8090", "app.localhost", "10.1.2.3"):
        assert is_allowed(header, loopback), header
    assert is_allowed(None, loopback)  # HTTP/1.0: not a browser
    for header in ("rebind.example:8090", "localhost.example", "127.0.0.1.nip.io"):
        assert not is_allowed(header, loopback), header
    # Every address: the machine's own names too; --allow-host adds others.
    every = allowed_hosts("0.0.0.0", ["Crawler.Example.org"])
    assert is_allowed(f"{socket.gethostname()}:8090", every)
    assert is_allowed("crawler.example.org", every)
    assert not is_allowed(f"{socket.gethostname()}:8090", loopback)


@pytest.mark.parametrize(("command", "path"), [("dashboard", "api/crawls"), ("exporter", "")])
def test_a_foreign_host_is_refused_in_one_line(
    redis_client, redis_home, http, command: str, path: str
) -> None:
    options = ("--home", str(redis_home), "--allow-host", "crawler.example.org")
    with serving(command, *options) as url:
        url = urljoin(url, path)
        assert http.get(url, timeout=30).status_code == 200
        port = url.split(":")[2].split("/")[0]
        for host in ("crawler.example.org", f"localhost:{port}", f"[::1]:{port}"):
            assert http.get(url, headers={"Host": host}, timeout=30).status_code == 200, host
        for host in ("rebind.example", f"rebind.example:{port}", "crawler.example.org.evil"):
            refused = http.get(url, headers={"Host": host}, timeout=30)
            assert refused.status_code == 403, host
            assert refused.text == REFUSED and "crawl" not in refused.headers.get("content-type")
