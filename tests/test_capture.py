"""Offline webs from real captures: WARC files and saved-page folders become served bundles."""

from __future__ import annotations

import argparse
import collections
import gzip
import io
from pathlib import Path

import pytest
import requests
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focused.cli.web import (
    add_from_pages_arguments,
    add_from_warc_arguments,
    run_from_pages,
    run_from_warc,
)
from focused.errors import FocusedError
from focused.lab.webs.bundle import Bundle
from focused.lab.webs.capture import bundle_from_folder, bundle_from_warc
from focused.lab.webs.server import ServedWeb

SITE = "http://www.site.test"
INDEX_HTML = b'<html><body><a href="/page">page</a> <a href="/old">old</a></body></html>'
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"
ZIPPED_HTML = "<html><body>caf\u00e9, chunked and gzip'd</body></html>".encode()


def http_headers(status: str, *headers: tuple[str, str]) -> StatusAndHeaders:
    return StatusAndHeaders(status, list(headers), protocol="HTTP/1.1")


def write_warc(path: Path, *, compress: bool) -> Path:
    """A small crawl: pages of every kind, plus the records a converter must skip."""
    with path.open("wb") as f:
        writer = WARCWriter(f, gzip=compress)

        def response(url: str, headers: StatusAndHeaders, payload: bytes) -> None:
            record = writer.create_warc_record(
                url, "response", payload=io.BytesIO(payload), http_headers=headers
            )
            writer.write_record(record)

        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "test"}))
        request = StatusAndHeaders(
            "GET / HTTP/1.1", [("Host", "www.site.test")], is_http_request=True
        )
        writer.write_record(
            writer.create_warc_record(
                f"{SITE}/", "request", payload=io.BytesIO(b""), http_headers=request
            )
        )
        html = ("Content-Type", "text/html; charset=utf-8")
        response(
            f"{SITE}/",
            http_headers("200 OK", html, ("Content-Length", str(len(INDEX_HTML)))),
            INDEX_HTML,
        )
        response(f"{SITE}/missing", http_headers("404 Not Found", html), b"<p>gone</p>")
        response(f"{SITE}/old", http_headers("301 Moved Permanently", ("Location", "/")), b"")
        response(f"{SITE}/logo.png", http_headers("200 OK", ("Content-Type", "image/png")), PNG)
        zipped = gzip.compress(ZIPPED_HTML)
        chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(zipped), zipped)
        response(
            f"{SITE}/zipped",
            http_headers(
                "200 OK", html, ("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")
            ),
            chunked,
        )
        # Captured twice: the later capture wins.
        response(f"{SITE}/page", http_headers("500 Internal Server Error", html), b"oops")
        response(
            f"{SITE}/page",
            http_headers("200 OK", html, ("Vary", "Accept"), ("Vary", "Cookie")),
            b"<p>page</p>",
        )
        writer.write_record(
            writer.create_revisit_record(
                f"{SITE}/", "sha1:AAAA", f"{SITE}/", "2024-01-01T00:00:00Z"
            )
        )
        writer.write_record(
            writer.create_warc_record(
                f"{SITE}/",
                "metadata",
                payload=io.BytesIO(b"outlink: /page\r\n"),
                warc_content_type="application/warc-fields",
            )
        )
        writer.write_record(
            writer.create_warc_record(
                "dns:www.site.test",
                "response",
                payload=io.BytesIO(b"www.site.test. 60 IN A 127.0.0.1\n"),
                warc_content_type="text/dns",
            )
        )
    return path


# WARC files


@pytest.mark.parametrize("kind", ["plain", "gzip per record", "gzip whole file"])
def test_warc_becomes_bundle(tmp_path: Path, kind: str) -> None:
    warc = write_warc(tmp_path / "crawl.warc", compress=kind == "gzip per record")
    if kind == "gzip whole file":
        warc = tmp_path / "crawl.warc.gz"
        warc.write_bytes(gzip.compress((tmp_path / "crawl.warc").read_bytes()))
    stats: collections.Counter[str] = collections.Counter()
    bundle = Bundle.load(bundle_from_warc([warc], tmp_path / "bundle", stats=stats))

    assert sorted(page.url for page in bundle.pages.values()) == [
        f"{SITE}/",
        f"{SITE}/logo.png",
        f"{SITE}/missing",
        f"{SITE}/old",
        f"{SITE}/page",
        f"{SITE}/zipped",
    ]
    index = bundle.page(f"{SITE}/")
    assert index is not None and index.status == 200 and index.body == INDEX_HTML
    assert dict(index.headers) == {"Content-Type": "text/html; charset=utf-8"}
    assert bundle.page(f"{SITE}/missing").status == 404
    old = bundle.page(f"{SITE}/old")
    assert (old.status, dict(old.headers)["Location"]) == (301, "/")
    assert bundle.page(f"{SITE}/logo.png").body == PNG
    zipped = bundle.page(f"{SITE}/zipped")
    assert zipped.body == ZIPPED_HTML
    assert {name.lower() for name, _ in zipped.headers} == {"content-type"}
    page = bundle.page(f"{SITE}/page")
    assert (page.status, page.body, dict(page.headers)["Vary"]) == (
        200,
        b"<p>page</p>",
        "Accept, Cookie",
    )
    assert stats == {
        "records": 12,
        "pages": 6,
        "replaced": 1,
        "skipped/warcinfo": 1,
        "skipped/request": 1,
        "skipped/revisit": 1,
        "skipped/metadata": 1,
        "skipped/non-http": 1,
    }


@pytest.mark.crawl
def test_warc_bundle_is_served(tmp_path: Path, http: requests.Session) -> None:
    warc = write_warc(tmp_path / "crawl.warc.gz", compress=True)
    folder = bundle_from_warc([warc], tmp_path / "bundle")
    proxies = {"http": ""}
    with ServedWeb(folder) as web:
        proxies["http"] = web.proxy
        assert web.n_pages == 6
        index = http.get(f"{SITE}/", proxies=proxies, timeout=10)
        assert (index.status_code, index.content) == (200, INDEX_HTML)
        old = http.get(f"{SITE}/old", proxies=proxies, timeout=10, allow_redirects=False)
        assert (old.status_code, old.headers["Location"]) == (301, "/")
        zipped = http.get(f"{SITE}/zipped", proxies=proxies, timeout=10)
        assert zipped.content == ZIPPED_HTML
        assert http.get(f"{SITE}/logo.png", proxies=proxies, timeout=10).content == PNG


def test_warc_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(FocusedError, match=r"nothing\.warc: cannot open"):
        bundle_from_warc([tmp_path / "nothing.warc"], tmp_path / "out")
    text = tmp_path / "notes.warc"
    text.write_text("these are notes, not a WARC\n")
    with pytest.raises(FocusedError, match=r"notes\.warc: not a WARC file at offset 0"):
        bundle_from_warc([text], tmp_path / "out")

    good = write_warc(tmp_path / "crawl.warc", compress=False).read_bytes()
    second = good.index(b"WARC/1.", 10)
    broken = tmp_path / "broken.warc"
    broken.write_bytes(good[:second] + b"WARC/1.0\r\nWARC-Type: response\r\nnot a header line")
    with pytest.raises(FocusedError, match=rf"broken\.warc: broken record at offset {second}"):
        bundle_from_warc([broken], tmp_path / "out")

    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(write_warc(tmp_path / "whole.warc.gz", compress=True).read_bytes()[:-20])
    cut_short = r"cut\.warc\.gz: cannot read \(gzip cut short"
    with pytest.raises(FocusedError, match=cut_short):
        bundle_from_warc([cut], tmp_path / "out")
    corrupt = tmp_path / "corrupt.warc.gz"
    # A gzip header, then a deflate block of the reserved type 3: corrupt, whatever the WARC.
    corrupt.write_bytes(gzip.compress(b"", mtime=0)[:10] + b"\xff" * 200)
    with pytest.raises(FocusedError, match=r"corrupt\.warc\.gz: cannot read \(corrupt gzip"):
        bundle_from_warc([corrupt], tmp_path / "out")

    only_requests = tmp_path / "empty.warc"
    with only_requests.open("wb") as f:
        writer = WARCWriter(f, gzip=False)
        writer.write_record(writer.create_warcinfo_record("empty.warc", {"software": "test"}))
    with pytest.raises(FocusedError, match=r"no HTTP response records in .*empty\.warc"):
        bundle_from_warc([only_requests], tmp_path / "out")


def test_from_warc_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    warc = write_warc(tmp_path / "crawl.warc.gz", compress=True)
    parser = argparse.ArgumentParser()
    add_from_warc_arguments(parser)
    args = parser.parse_args([str(warc), "-o", str(tmp_path / "bundle")])
    assert run_from_warc(args) == 0
    assert capsys.readouterr().out == (
        f"wrote 6 pages to {tmp_path / 'bundle'} (from 12 records; skipped 1 metadata,"
        " 1 non-http, 1 request, 1 revisit, 1 warcinfo; 1 replaced by a later capture)\n"
    )


# Saved-page folders


def save_site(root: Path) -> Path:
    """A ``wget -r`` tree: host folders, index pages, a query in a file name, no suffixes."""
    files = {
        "www.site.test/index.html": INDEX_HTML,
        "www.site.test/docs/index.html": b"<html>docs</html>",
        "www.site.test/docs/a b.html": "<html>caf\u00e9</html>".encode(),
        "www.site.test/logo.png": PNG,
        "www.site.test/search?q=x": b"  <!DOCTYPE html><html>results</html>",
        "www.site.test/.listing": b"hidden",
        "localhost:8000/data.bin": b"\x00\x01",
    }
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(body)
    return root


@pytest.mark.crawl
def test_wget_tree_becomes_bundle(tmp_path: Path, http: requests.Session) -> None:
    stats: collections.Counter[str] = collections.Counter()
    site = save_site(tmp_path / "site")
    folder = bundle_from_folder(site, tmp_path / "bundle", stats=stats)
    bundle = Bundle.load(folder)
    pages = {page.url: page for page in bundle.pages.values()}
    assert set(pages) == {
        f"{SITE}/",
        f"{SITE}/docs",
        f"{SITE}/docs/",
        f"{SITE}/docs/a%20b.html",
        f"{SITE}/docs/index.html",
        f"{SITE}/index.html",
        f"{SITE}/logo.png",
        f"{SITE}/search?q=x",
        "http://localhost:8000/data.bin",
    }
    assert stats == {"files": 6, "pages": 9}
    assert all(page.status == 200 for url, page in pages.items() if url != f"{SITE}/docs")
    assert (pages[f"{SITE}/docs"].status, pages[f"{SITE}/docs"].headers) == (
        301,
        (("Location", f"{SITE}/docs/"),),
    )
    assert pages[f"{SITE}/"].body == pages[f"{SITE}/index.html"].body == INDEX_HTML
    content_type = {url: dict(page.headers).get("Content-Type") for url, page in pages.items()}
    assert content_type[f"{SITE}/docs/"] == "text/html"
    assert content_type[f"{SITE}/logo.png"] == "image/png"
    assert content_type[f"{SITE}/search?q=x"] == "text/html"
    assert content_type["http://localhost:8000/data.bin"] == "application/octet-stream"
    assert bundle.page(f"{SITE}/docs/a b.html") is not None

    with ServedWeb(folder) as web:
        proxies = {"http": web.proxy}
        docs = http.get(f"{SITE}/docs", proxies=proxies, timeout=10)
        assert (docs.status_code, docs.url, docs.content) == (
            200,
            f"{SITE}/docs/",
            b"<html>docs</html>",
        )
        page = http.get(f"{SITE}/docs/a%20b.html", proxies=proxies, timeout=10)
        assert page.content.decode() == "<html>caf\u00e9</html>"


def test_flat_folder_takes_a_base_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "Article.html").write_bytes(INDEX_HTML)
    (saved / "index.html").write_bytes(b"<html>home</html>")
    with pytest.raises(FocusedError, match=r"saved: its first level is not host names"):
        bundle_from_folder(saved, tmp_path / "out")
    with pytest.raises(FocusedError, match=r"ftp://x/: the base URL must be http"):
        bundle_from_folder(saved, tmp_path / "out", base_url="ftp://x/")
    with pytest.raises(FocusedError, match=r"nowhere: no such folder"):
        bundle_from_folder(tmp_path / "nowhere", tmp_path / "out", base_url=SITE)

    parser = argparse.ArgumentParser()
    add_from_pages_arguments(parser)
    # The bundle is written inside the folder: a second run must not take it for a page.
    out = saved / "bundle"
    args = parser.parse_args([str(saved), "-o", str(out), "--base-url", f"{SITE}/wiki"])
    for _ in range(2):
        assert run_from_pages(args) == 0
        assert capsys.readouterr().out == f"wrote 3 pages to {out} (from 2 files)\n"
    urls = sorted(page.url for page in Bundle.load(out).pages.values())
    assert urls == [f"{SITE}/wiki/", f"{SITE}/wiki/Article.html", f"{SITE}/wiki/index.html"]
