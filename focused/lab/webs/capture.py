"""Offline webs from real captures: WARC files, or a folder of saved pages.

Both write an ordinary bundle (:func:`focused.lab.webs.bundle.write_bundle`), so a captured site is
served by ``focused web serve`` and crawled exactly like a generated or Wikispeedia web.

WARC files, gzip'd per record, gzip'd whole or plain: every HTTP ``response`` record
becomes a page with its captured status, headers and entity body. The body is decoded
(chunked transfer coding, gzip/deflate/br content coding) because the server sends it as is;
the headers about that transfer are dropped for the same reason. ``request``, ``revisit``,
``metadata``, ``warcinfo`` and ``resource`` records are skipped and counted: a revisit holds
no body of its own. A URL captured more than once keeps its **last** capture (files in the
order given, records in file order), as a replay of the most recent crawl would show it.

A folder of saved pages (``wget -r`` output, "Save page as", or any tree of files): each file
is a 200 page whose type comes from its suffix. See :func:`bundle_from_folder` for the URLs.
"""

from __future__ import annotations

import collections
import gzip
import mimetypes
import re
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote, urlsplit

from warcio.archiveiterator import WARCIterator
from warcio.bufferedreaders import BufferedReader
from warcio.exceptions import ArchiveLoadFailed
from warcio.recordloader import ArcWarcRecord

from focused.errors import FocusedError
from focused.lab.webs.bundle import TRANSPORT_HEADERS, url_key, write_bundle

Stats = collections.Counter[str]

# A first level of host names (``www.example.com``, ``localhost:8000``) marks a wget tree.
_HOST_DIR = re.compile(r"^(localhost|([a-z0-9-]+\.)+[a-z0-9-]+)(:\d+)?$", re.IGNORECASE)
INDEX_FILE = "index.html"
_HTML_START = (b"<!doctype html", b"<html")


def bundle_from_warc(
    files: Sequence[str | Path], out_folder: str | Path, *, stats: Stats | None = None
) -> Path:
    """Write a bundle of the HTTP responses in the WARC ``files`` and return its folder.

    ``stats``, if given, counts ``records``, ``pages``, ``replaced`` (captures superseded by
    a later one of the same URL) and ``skipped/<why>`` (a record type, ``non-http``,
    ``bad-url``, ``bad-status`` or ``encoding/<coding>`` for a content coding that cannot be
    decoded). Raises FocusedError naming the file, and the record's offset if one is broken.
    """
    stats = stats if stats is not None else collections.Counter()
    # All pages are held until the end so a later capture can replace an earlier one; the
    # server holds them all in memory anyway.
    pages: dict[str, dict[str, Any]] = {}
    for file in map(Path, files):
        for key, page in _warc_pages(file, stats):
            if key in pages:
                stats["replaced"] += 1
            pages[key] = page
    if not pages:
        raise FocusedError(f"no HTTP response records in {', '.join(map(str, files))}")
    stats["pages"] = len(pages)
    return write_bundle(out_folder, pages.values())


def _warc_pages(path: Path, stats: Stats) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(url_key, page)`` for each usable response record of one file."""
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise FocusedError(f"{path}: cannot open ({exc.strerror})") from exc
    with raw, _decompressed(raw) as stream:
        records = WARCIterator(stream)
        n_records = 0
        try:
            for record in records:
                n_records += 1
                found = _page(record, stats)
                if found is not None:
                    yield found
        except OSError as exc:  # the file or its gzip layer, not a record: no offset to give
            raise FocusedError(f"{path}: cannot read ({_first_line(exc)})") from exc
        except Exception as exc:
            # warcio's parser fails on malformed input with whatever it hits (e.g. an
            # AttributeError for a record without a URI), and a bad file must be one line naming
            # it. records.offset: where the record being read starts (uncompressed if gzip'd).
            not_warc = n_records == 0 and isinstance(exc, ArchiveLoadFailed)
            where = "not a WARC file" if not_warc else "broken record"
            raise FocusedError(
                f"{path}: {where} at offset {records.offset} ({_first_line(exc)})"
            ) from exc
        stats["records"] += n_records


def _decompressed(raw: IO[bytes]) -> IO[bytes] | gzip.GzipFile:
    """Return ``raw`` unzipped if it is gzip'd: one member per record or the whole file alike.

    warcio reads the first kind only; :mod:`gzip` reads both as one stream.
    """
    is_gzip = raw.read(2) == b"\x1f\x8b"
    raw.seek(0)
    return _StrictGzipFile(fileobj=raw, mode="rb") if is_gzip else raw


class _StrictGzipFile(gzip.GzipFile):
    """A gzip stream whose every fault is an OSError: warcio takes an EOFError (a cut file)
    for the file's end, and a zlib.error would pass for a broken record."""

    def read(self, size: int | None = -1) -> bytes:
        try:
            return super().read(size)
        except EOFError as exc:
            raise gzip.BadGzipFile(f"gzip cut short: {exc}") from exc
        except zlib.error as exc:
            raise gzip.BadGzipFile(f"corrupt gzip: {exc}") from exc


def _page(record: ArcWarcRecord, stats: Stats) -> tuple[str, dict[str, Any]] | None:
    """Return ``(url_key, page)`` of an HTTP response record, or None (counted as skipped)."""
    if record.rec_type != "response":
        stats[f"skipped/{record.rec_type}"] += 1
        return None
    http = record.http_headers
    if http is None:  # dns:, whois: or an empty record
        stats["skipped/non-http"] += 1
        return None
    url = record.rec_headers.get_header("WARC-Target-URI")
    try:
        key = url_key(url)
    except ValueError:
        stats["skipped/bad-url"] += 1
        return None
    try:
        status = int(http.get_statuscode())
    except ValueError:
        stats["skipped/bad-status"] += 1
        return None
    coding = (http.get_header("Content-Encoding") or "identity").strip().lower()
    if coding != "identity" and coding not in BufferedReader.get_supported_decompressors():
        stats[f"skipped/encoding/{coding}"] += 1
        return None
    headers: dict[str, str] = {}
    for name, value in http.headers:
        if name.lower() not in TRANSPORT_HEADERS:
            # Repeated fields join as one (RFC 9110 5.3); write_bundle stores a mapping.
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
    body = record.content_stream().read()
    return key, {"url": url, "status": status, "headers": headers, "body": body}


def _first_line(exc: BaseException) -> str:
    """Return the first line of an error (warcio's messages run over several lines)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0][:200] if lines else type(exc).__name__


def bundle_from_folder(
    folder: str | Path,
    out_folder: str | Path,
    *,
    base_url: str | None = None,
    stats: Stats | None = None,
) -> Path:
    """Write a bundle of the files under ``folder`` and return its folder.

    Each file is a 200 page at ``base_url`` + its path relative to ``folder``; without
    ``base_url`` the folder must be a ``wget -r`` tree whose first level is host names
    (``www.example.com/a/b.html`` is ``http://www.example.com/a/b.html``). A ``?`` in a file
    name (wget's spelling of a query) starts the query. ``index.html`` also answers for its
    directory's URL (``…/a/``), and ``…/a`` redirects there as a server would. The type comes
    from the suffix; a file with none that starts like HTML is HTML. Hidden files and the
    output folder are left out. ``stats``, if given, counts ``files`` and ``pages``.
    """
    folder, out_folder = Path(folder), Path(out_folder)
    stats = stats if stats is not None else collections.Counter()
    if not folder.is_dir():
        raise FocusedError(f"{folder}: no such folder")
    out = out_folder.resolve()
    files = sorted(
        path
        for path in folder.rglob("*")
        if path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
        and out not in path.resolve().parents
    )
    if not files:
        raise FocusedError(f"{folder}: no files")
    if base_url is None:
        relative = [path.relative_to(folder).parts for path in files]
        if not all(len(parts) > 1 and _HOST_DIR.match(parts[0]) for parts in relative):
            raise FocusedError(
                f"{folder}: its first level is not host names (a wget -r tree);"
                " give the URL it was saved from (--base-url)"
            )
    else:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise FocusedError(f"{base_url}: the base URL must be http:// or https:// and a host")
        base_url = base_url.rstrip("/") + "/"
    pages = _folder_pages(folder, files, base_url, stats)
    return write_bundle(out_folder, pages)


def _folder_pages(
    folder: Path, files: list[Path], base_url: str | None, stats: Stats
) -> Iterator[dict[str, Any]]:
    """Yield the pages of ``files``, read one at a time (a saved site can be large)."""
    for path in files:
        parts = path.relative_to(folder).parts
        if base_url is None:
            prefix, parts = f"http://{parts[0]}/", parts[1:]
        else:
            prefix = base_url
        try:
            body = path.read_bytes()
        except OSError as exc:
            raise FocusedError(f"{path}: cannot read ({exc.strerror})") from exc
        stats["files"] += 1
        headers = {"Content-Type": _content_type(parts[-1], body)}
        yield _page_at(prefix + _url_path("/".join(parts)), 200, headers, body, stats)
        if parts[-1] == INDEX_FILE:
            directory = prefix + _url_path("".join(f"{part}/" for part in parts[:-1]))
            yield _page_at(directory, 200, headers, body, stats)
            if len(parts) > 1:
                yield _page_at(directory[:-1], 301, {"Location": directory}, b"", stats)


def _page_at(
    url: str, status: int, headers: dict[str, str], body: bytes, stats: Stats
) -> dict[str, Any]:
    stats["pages"] += 1
    return {"url": url, "status": status, "headers": headers, "body": body}


def _url_path(path: str) -> str:
    """Percent-encode a file path for a URL (spaces, ``#``, non-ASCII), keeping what a URL may
    hold as is: ``?`` in a wget file name is the query, ``%XX`` wget's own escapes."""
    return quote(path, safe="/?&=;:@!$'()*+,~%")


def _content_type(name: str, body: bytes) -> str:
    guessed, _ = mimetypes.guess_type(name.partition("?")[0], strict=False)
    if guessed is not None:
        return guessed
    looks_html = body.lstrip()[:20].lower().startswith(_HTML_START)
    return "text/html" if looks_html else "application/octet-stream"
