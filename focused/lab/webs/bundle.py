"""Offline web bundles: a folder of recorded pages that a replay server can serve.

A bundle is a folder holding ``pages.jsonl.gz`` (or a plain ``pages.jsonl``), optionally
``labels.tsv`` and ``topics.json``; the pages file on its own is a bundle too. Each line of
the pages file is one JSON object::

    {"url": "http://www.x.web.test/Page", "status": 200,
     "headers": {"Content-Type": "text/html; charset=utf-8"}, "body": "<html>..."}

``body`` is the decoded entity body as text and is served UTF-8 encoded. A body that is not
valid UTF-8 (an image, a page in another charset, a page with broken bytes) is given instead as
``"body_b64"``: the exact bytes, base64-encoded. ``labels.tsv`` has a header line, then
``url`` TAB category paths joined by ``|`` (empty for an unlabelled page). ``topics.json`` is
``{"protocol": ..., "topics": [{"name", "category", "seeds", "training", "budget", ...}]}``.

A record may also ask the server for a response that no fixed body can give (an endless page,
a slow one, a redirect chain without end...): ``"behaviour": {"name": ..., options}``, one of
the named behaviours of :mod:`focused.lab.webs.server`, which uses the record's status, headers and
body as it says (the hostile web of :mod:`focused.lab.webs.hostile` has one of each).
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import io
import json
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from w3lib.url import canonicalize_url

from focused.errors import FocusedError

PAGES_FILE = "pages.jsonl.gz"
LABELS_FILE = "labels.tsv"
TOPICS_FILE = "topics.json"

# The stored body is the decoded entity, so headers about its transfer no longer describe it;
# the server sets its own framing headers.
TRANSPORT_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "content-encoding",
    }
)

# What a server adds to a page it serves at another spelling: a <base> after the redirect a
# real server would send (WebKB's directory pages served without their slash).
_BASE_TAG = re.compile(rb'\A\s*<base href="[^"]*">')

_DEFAULT_PORTS = {"http": "80", "https": "443"}
# userinfo@, then the host (an IPv6 literal or a name, without a trailing dot), then :port.
_NETLOC = re.compile(r"(?:.*@)?(?P<host>\[[^\]]*\]|[^:]*?)\.?(?::(?P<port>[^:]*))?")


def url_key(url: str) -> str:
    """Return the lookup key of ``url``: the same for every spelling a client may send.

    Percent-encoding (``%C3%81`` or ``Á``), host case or IDNA form, userinfo, a trailing dot, a
    default port, the query's order and a fragment do not change the key.
    """
    canonical = canonicalize_url(url)
    scheme, sep, rest = canonical.partition("://")
    netloc, slash, path = rest.partition("/")
    if match := _NETLOC.fullmatch(netloc):
        port = match["port"]
        keep_port = port is not None and port != _DEFAULT_PORTS.get(scheme)
        netloc = f"{match['host']}:{port}" if keep_port else match["host"]
    return f"{scheme}{sep}{netloc}{slash or '/'}{path}"


@dataclass(frozen=True, slots=True)
class Page:
    """One recorded response, with the body already encoded so serving it costs nothing."""

    url: str
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    behaviour: Mapping[str, Any] | None = None  # {"name": ..., options}: see the module


@dataclass(slots=True)
class Bundle:
    """A loaded offline web: pages by :func:`url_key`, plus labels and topics if present."""

    path: Path
    pages: dict[str, Page]
    labels: dict[str, list[str]]
    topics: dict[str, Any] | None
    # The key of a page served at several spellings (``.../``, ``.../index.html``, ``...``)
    # -> the key of the one spelling that stands for it: ``copies_of`` the pages.
    copies: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path) -> Bundle:
        """Read a bundle folder (or its pages file); raise FocusedError naming a bad file/line."""
        path = Path(path)
        if path.is_dir():
            folder = path
            pages_path = next(
                (p for p in (path / PAGES_FILE, path / "pages.jsonl") if p.is_file()),
                path / PAGES_FILE,
            )
        else:
            folder, pages_path = path.parent, path
        if not pages_path.is_file():
            raise FocusedError(f"{pages_path}: no such bundle file")
        pages = {url_key(page.url): page for page in _read_pages(pages_path)}
        labels_path, topics_path = folder / LABELS_FILE, folder / TOPICS_FILE
        labels = _read_labels(labels_path) if labels_path.is_file() else {}
        topics = _read_topics(topics_path) if topics_path.is_file() else None
        return cls(pages_path, pages, labels, topics, copies_of(pages))

    def key(self, url: str) -> str:
        """The key of the page ``url`` names in any spelling, copies included: a page served
        at several URLs has one key."""
        key = url_key(url)
        return self.copies.get(key, key)

    def page(self, url: str) -> Page | None:
        """Return the page recorded for ``url`` in any spelling, or None."""
        return self.pages.get(url_key(url))

    def categories(self, url: str) -> list[str]:
        """Return the category paths labelled for ``url`` (empty if none)."""
        return self.labels.get(url_key(url), [])


def copies_of(pages: Mapping[str, Page]) -> dict[str, str]:
    """The pages served at several spellings, found by their bodies: key -> the key of the
    spelling that stands for them all (one without a ``<base>`` added, then the shortest),
    for the other spellings only. A page's body is the same at every spelling but for the
    ``<base>`` a server adds where it would have redirected."""
    spellings: dict[bytes, list[str]] = {}
    for key, page in pages.items():
        if page.status == 200 and page.behaviour is None:
            digest = hashlib.sha1(_BASE_TAG.sub(b"", page.body)).digest()
            spellings.setdefault(digest, []).append(key)
    copies: dict[str, str] = {}
    for keys in spellings.values():
        if len(keys) > 1:
            first = min(keys, key=lambda k: (bool(_BASE_TAG.match(pages[k].body)), len(k), k))
            copies.update((key, first) for key in keys if key != first)
    return copies


def _open_lines(path: Path) -> Iterator[bytes]:
    """Yield the lines of a gzip or plain file, told apart by the gzip magic number."""
    with path.open("rb") as raw:
        is_gzip = raw.read(2) == b"\x1f\x8b"
    if not is_gzip and path.suffix == ".gz":
        raise FocusedError(f"{path}: not a gzip file")
    with gzip.open(path, "rb") if is_gzip else path.open("rb") as f:
        yield from f


def _read_pages(path: Path) -> Iterator[Page]:
    lineno = 0
    try:
        for lineno, line in enumerate(_open_lines(path), 1):
            if line.strip():
                yield _parse_page(line, path, lineno)
    except (OSError, EOFError, zlib.error) as exc:
        raise FocusedError(f"{path}: line {lineno + 1}: cannot read ({exc})") from exc


def _parse_page(line: bytes, path: Path, lineno: int) -> Page:
    try:
        record = json.loads(line)
        if "body_b64" in record:
            body = base64.b64decode(record["body_b64"], validate=True)
        else:
            body = record["body"].encode("utf-8")
        headers = tuple(
            (str(name), str(value))
            for name, value in record.get("headers", {}).items()
            if name.lower() not in TRANSPORT_HEADERS
        )
        behaviour = record.get("behaviour")
        if behaviour is not None and not isinstance(behaviour.get("name"), str):
            raise ValueError("a behaviour is an object with a name")
        return Page(
            url=record["url"],
            status=int(record["status"]),
            headers=headers,
            body=body,
            behaviour=behaviour,
        )
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error) as exc:
        problem = f"missing field {exc}" if isinstance(exc, KeyError) else f"{exc}"
        raise FocusedError(f"{path}: line {lineno}: bad page record ({problem})") from exc


def _read_labels(path: Path) -> dict[str, list[str]]:
    labels: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            url, tab, paths = line.rstrip("\n").partition("\t")
            if lineno == 1 and url == "url":
                continue
            if not tab:
                raise FocusedError(f"{path}: line {lineno}: expected url TAB categories")
            labels[url_key(url)] = [p for p in paths.split("|") if p]
    return labels


def _read_topics(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise FocusedError(f"{path}: bad JSON ({exc})") from exc


def write_bundle(
    folder: str | Path,
    pages: Iterable[Mapping[str, Any]],
    labels: Mapping[str, Sequence[str]] | None = None,
    topics: Mapping[str, Any] | None = None,
) -> Path:
    """Write a bundle folder and return its path.

    ``pages`` yields mappings with ``url``, ``status``, ``headers`` and ``body`` as ``str`` or
    ``bytes`` (and ``behaviour`` if any); bytes that are not UTF-8 are stored as ``body_b64``.
    ``labels`` maps a url to its category paths.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    # mtime=0 keeps the file the same for the same pages (the generator is deterministic).
    with (
        (folder / PAGES_FILE).open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=5, mtime=0) as compressed,
        io.TextIOWrapper(compressed, encoding="utf-8") as f,
    ):
        for page in pages:
            f.write(json.dumps(_page_record(page), ensure_ascii=False))
            f.write("\n")
    if labels is not None:
        with (folder / LABELS_FILE).open("w", encoding="utf-8") as f:
            f.write("url\tcategories\n")
            f.writelines(f"{url}\t{'|'.join(paths)}\n" for url, paths in labels.items())
    if topics is not None:
        (folder / TOPICS_FILE).write_text(
            json.dumps(topics, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return folder


def _page_record(page: Mapping[str, Any]) -> dict[str, Any]:
    record = {"url": page["url"], "status": page["status"], "headers": dict(page["headers"])}
    if page.get("behaviour") is not None:
        record["behaviour"] = dict(page["behaviour"])
    body = page["body"]
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            record["body_b64"] = base64.b64encode(body).decode("ascii")
            return record
    record["body"] = body
    return record
