"""WarcWriter: fetched pages, with their requests, in gzip'd WARC 1.1 files written by warcio, as
Heritrix, ACHE and web archives keep them (replay with pywb, read back with ``focused web from-
warc``).

``FOCUSED_WARC`` chooses what is kept: ``relevant`` (the default) the pages classified relevant
and the undecided ones (:func:`focused.topic.judge.undecided`: a probability at least
FOCUSED_WARC_UNDECIDED times the cut the verdict was made by), which the crawl's final judge
may call relevant (``focused export --rejudge``); ``all`` every response (non-HTML, error pages
such as 404s, and also the redirects followed and robots.txt, which never reach the spider);
``none`` nothing. A fetch that failed without a response writes nothing. Each page is a
``response`` record and the ``request`` record it answered (``WARC-Concurrent-To``). A page
whose language was identified (:mod:`focused.pipelines.language`) has it in its response
record's ``WARC-Identified-Content-Language`` header, as Common Crawl's response records have
(the code the feed has: ISO 639, two letters where ISO 639-1 has one).

Every fetched page (one the frontier gave a fetch order), kept or not, also gets a ``metadata``
record (``application/json``, ``WARC-Target-URI`` its URL, ``WARC-Concurrent-To`` its response
or revisit record when one is kept, as Heritrix writes its crawl metadata): the page's feed
fields (:data:`METADATA_FIELDS`, main text included), which ``focused export --format parquet``
reads. It costs about 0.06 ms of CPU and 450 gzip'd bytes a page, more with a main text
(``benchmarks/export.py``), little next to a response record, and it makes the files describe
the whole crawl, the pages FOCUSED_WARC does not keep included.

A page that came back unchanged (a maintenance-mode revisit, ``bad = "unchanged"``, or a page
known from an earlier run, :mod:`focused.pipelines.duplicates`) is a ``revisit`` record, profile
identical-payload-digest, pointing at its original response record (``WARC-Refers-To``,
``-Target-URI``, ``-Date``) when that record was written by this crawl and holds the same bytes
(the duplicates pipeline compares texts, not bytes: a page whose markup changed is a new
``response`` record). So each response record writes the crawl's ``warc`` hash in Redis
(:mod:`focused.store.warcindex`): URL fingerprint -> ``"<record id> <WARC-Date> <payload
digest>"``, which ``focused reset --keep-known`` keeps for the next run.

The stored body is Scrapy's ``response.body``: HttpCompressionMiddleware has already decoded
it (and dropped the Content-Encoding it undid; one it could not undo is kept, as the body still
has it), and chunks are joined, so ``Transfer-Encoding`` is dropped and ``Content-Length`` set
to the stored body's length: the stored headers describe the stored body. Redirects and
robots.txt (``all``) are stored as downloaded, before any middleware.

Files (:class:`WarcFiles`) rotate per process in FOCUSED_WARC_DIR (None:
``FOCUSED_HOME/warc/<crawl>/``). Records are written and gzip'd on the reactor thread as each
item is scraped (``benchmarks/warc.py`` measures the cost). Stats: ``focused/warc/records``
(every record written: warcinfo, request, response, revisit, metadata),
``focused/warc/revisits``, ``focused/warc/undecided`` (pages kept as undecided, not relevant),
``focused/warc/files`` (files started), ``focused/warc/bytes``
(gzip'd bytes written).

A record the disk refuses (full, read-only, an I/O error: any OSError) is a disk fault
(:mod:`focused.extensions.diskfaults`): the file is cut back to its last whole page and closed
under its
final name (``.incomplete`` if it cannot be cut back), one error line, the crawl stops, and no
more records are written (the pages fetched from then on are in Redis and ``focused export``,
not in the WARC files).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Request, Response
from scrapy.http.request import NO_CALLBACK
from warcio.recordbuilder import RecordBuilder
from warcio.statusandheaders import StatusAndHeaders
from warcio.timeutils import datetime_to_iso_date
from warcio.utils import Digester
from warcio.warcwriter import WARCWriter

import focused
from focused.errors import FocusedError, exit_on_user_error
from focused.extensions.diskfaults import disk_fault
from focused.items import FEED_FIELDS
from focused.pipelines.duplicates import UNCHANGED
from focused.settings.check import choice
from focused.store.crawler import crawl_name, store_for
from focused.store.embedded import home_dir
from focused.store.warcindex import WarcIndex
from focused.topic.judge import undecided
from focused.topic.plan import crawl_plan

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from twisted.python.failure import Failure
    from warcio.recordloader import ArcWarcRecord

    from focused.items import Page
    from focused.store.crawl import CrawlStore

logger = logging.getLogger(__name__)

WARC_VERSION = "1.1"
BUILDER = RecordBuilder(warc_version=WARC_VERSION)
OPEN_SUFFIX = ".open"
INCOMPLETE_SUFFIX = ".incomplete"  # a file closed after a write failed, not cut back
# The duplicates pipeline's reasons that mean "this URL came back as it was fetched before".
SAME_URL = ("known", "last_modified")
# Not the stored body's (Scrapy joined the chunks; Content-Length is set anew), or a secret.
_RESPONSE_DROPPED = {b"transfer-encoding", b"content-length"}
_REQUEST_DROPPED = {b"proxy-authorization"}
# A page's feed fields its metadata record holds: all but its URL (the record's target) and
# the Markdown copy of its main text.
METADATA_FIELDS = tuple(name for name in FEED_FIELDS if name not in ("url", "markdown"))
METADATA_TYPE = "application/json"
LANGUAGE_HEADER = "WARC-Identified-Content-Language"


@dataclass(frozen=True)
class Original:
    """The response record a revisit refers to."""

    record_id: str
    date: str
    digest: str

    @classmethod
    def parse(cls, value: str) -> Original:
        record_id, date, digest = value.split(" ")
        return cls(record_id, date, digest)

    def __str__(self) -> str:
        return f"{self.record_id} {self.date} {self.digest}"


def warc_date(unix_time: float) -> str:
    """A WARC 1.1 date (UTC, microseconds) of a unix time."""
    moment = datetime.fromtimestamp(unix_time, UTC).replace(tzinfo=None)
    return datetime_to_iso_date(moment, use_micros=True)


def payload_digest(body: bytes) -> str:
    """The WARC-Payload-Digest of a body, as warcio writes it (``sha1:<base32>``)."""
    digester = Digester("sha1")
    digester.update(body)
    return str(digester)


def request_record(request: Request) -> ArcWarcRecord:
    """The ``request`` record of a request as sent (its URI and date come from its response)."""
    parts = urlsplit(request.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = [
        (name.decode("latin-1"), value.decode("latin-1"))
        for name, values in request.headers.items()
        if name.lower() not in _REQUEST_DROPPED
        for value in values
    ]
    if request.headers.get("Host") is None:  # the HTTP client adds it
        headers.insert(0, ("Host", parts.netloc))
    http = StatusAndHeaders(f"{request.method} {target} HTTP/1.1", headers, is_http_request=True)
    return BUILDER.create_warc_record(
        request.url,
        "request",
        payload=BytesIO(request.body),
        length=len(request.body),
        http_headers=http,
    )


def response_http_headers(response: Response) -> StatusAndHeaders:
    """The status line and headers of a response, describing its stored body."""
    try:
        reason = HTTPStatus(response.status).phrase
    except ValueError:
        reason = ""
    headers = [
        (name.decode("latin-1"), value.decode("latin-1"))
        for name, values in response.headers.items()
        if name.lower() not in _RESPONSE_DROPPED
        for value in values
    ]
    headers.append(("Content-Length", str(len(response.body))))
    protocol = response.protocol or "HTTP/1.1"
    return StatusAndHeaders(f"{response.status} {reason}".rstrip(), headers, protocol=protocol)


def response_record(response: Response, date: str, language: str | None = None) -> ArcWarcRecord:
    """The ``response`` record of a response received at ``date`` (a WARC date), with the
    page's ``language`` if it was identified."""
    headers = {"WARC-Date": date}
    if language:
        headers[LANGUAGE_HEADER] = language
    return BUILDER.create_warc_record(
        response.url,
        "response",
        payload=BytesIO(response.body),
        length=len(response.body),
        http_headers=response_http_headers(response),
        warc_headers_dict=headers,
    )


def revisit_record(response: Response, date: str, original: Original) -> ArcWarcRecord:
    """A ``revisit`` record (identical payload: headers only) of a response whose body is the
    ``original``'s."""
    return BUILDER.create_revisit_record(
        response.url,
        original.digest,
        response.url,
        original.date,
        http_headers=response_http_headers(response),
        warc_headers_dict={"WARC-Date": date, "WARC-Refers-To": original.record_id},
    )


def metadata_record(item: Page, date: str, concurrent_to: str | None) -> ArcWarcRecord:
    """The ``metadata`` record of a page: its :data:`METADATA_FIELDS` as a JSON object, with
    the id of its response (or revisit) record if one is kept."""
    fields = {name: getattr(item, name) for name in METADATA_FIELDS}
    body = json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()
    headers = {"WARC-Date": date}
    if concurrent_to is not None:
        headers["WARC-Concurrent-To"] = concurrent_to
    return BUILDER.create_warc_record(
        item.url,
        "metadata",
        payload=BytesIO(body),
        length=len(body),
        warc_content_type=METADATA_TYPE,
        warc_headers_dict=headers,
    )


def default_folder(home: str | None, crawl: str) -> Path:
    """Where a crawl's WARC files go when FOCUSED_WARC_DIR does not say: ``HOME/warc/<crawl>``."""
    return home_dir(home) / "warc" / crawl


def file_names(crawl: str) -> re.Pattern[str]:
    """The names :class:`WarcFiles` gives ``crawl``'s files, open, closed or incomplete."""
    suffixes = "|".join(map(re.escape, (OPEN_SUFFIX, INCOMPLETE_SUFFIX)))
    return re.compile(rf"{re.escape(crawl)}-\d{{17}}-\d{{5}}-\d+~[^/]*\.warc\.gz({suffixes})?")


class WarcFiles:
    """One process's series of gzip'd WARC files in ``folder``, named as Heritrix names them:
    ``<crawl>-<UTC time, 17 digits>-<serial>-<pid>~<host>.warc.gz``.

    A file is started on the first record written after the last one closed, as
    ``<name>.open`` with a ``warcinfo`` record (``info``) at its head; it is closed and renamed
    to ``<name>`` once it holds ``max_size`` bytes or more (so by at most one page more), and
    by :meth:`close`. Each record is a gzip member of its own, flushed as written: the ``.open``
    file of a killed process is readable up to its last record. Logs each file closed.

    A write that fails (OSError, raised again) closes the file at once, cut back to the end of
    its last whole page: under its final name, or removed if it held nothing yet, or, if it
    cannot be cut back, as ``<name>.incomplete``, whose last record may be cut.
    """

    def __init__(
        self,
        folder: Path,
        crawl: str,
        *,
        max_size: int,
        info: dict[str, str],
        stats: StatsCollector,
    ):
        self.folder = folder
        self.crawl = crawl
        self.max_size = max_size
        self.info = info
        self.stats = stats
        self.serial = 0
        self.path: Path | None = None  # the file being written, by its final name
        self.out: BinaryIO | None = None
        self.writer: WARCWriter | None = None
        self.records = 0

    def write_pair(
        self,
        request: ArcWarcRecord,
        response: ArcWarcRecord,
        metadata: ArcWarcRecord | None = None,
    ) -> None:
        """Write a response (or revisit) record, then the request record it answered, then the
        page's metadata record if given."""

        def write(writer: WARCWriter) -> None:
            writer.write_request_response_pair(request, response)
            if metadata is not None:
                writer.write_record(metadata)

        self._write(write, 2 if metadata is None else 3)

    def write_record(self, record: ArcWarcRecord) -> None:
        """Write one record: the metadata record of a page whose response is not kept."""
        self._write(lambda writer: writer.write_record(record), 1)

    def _write(self, write: Callable[[WARCWriter], None], records: int) -> None:
        """One page's records, cut back to the page before them if the disk refuses one."""
        if self.out is None:
            self._open()
        assert self.out is not None and self.writer is not None
        start = self.out.tell()
        try:
            write(self.writer)
        except OSError:
            self._abandon(start)
            raise
        self._count(records, self.out.tell() - start)
        if self.out.tell() >= self.max_size:
            self.close()

    def close(self) -> None:
        """Close the file being written, if any, and give it its final name."""
        if self.out is None or self.path is None:
            return
        size, out = self.out.tell(), self.out
        self.out = self.writer = None  # not closed twice if closing fails
        out.close()
        os.replace(self.path.with_name(self.path.name + OPEN_SUFFIX), self.path)
        self._log_closed(size)

    def _open(self) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")[:17]
        host = socket.gethostname()
        name = f"{self.crawl}-{stamp}-{self.serial:05d}-{os.getpid()}~{host}.warc.gz"
        self.serial += 1
        self.path = self.folder / name
        self.out = (self.folder / (name + OPEN_SUFFIX)).open("xb")
        self.writer = WARCWriter(self.out, gzip=True, warc_version=WARC_VERSION)
        self.records = 0
        self.stats.inc_value("focused/warc/files")
        try:
            self.writer.write_record(self.writer.create_warcinfo_record(name, self.info))
        except OSError:
            self._abandon(0)
            raise
        self._count(1, self.out.tell())

    def _abandon(self, end: int) -> None:
        """Close the file being written after a write failed, cut back to ``end`` bytes (its
        whole records: warcio flushes each one) and named for what it then holds."""
        assert self.out is not None and self.path is not None
        opened = self.path.with_name(self.path.name + OPEN_SUFFIX)
        with contextlib.suppress(OSError):  # flushing what the disk refused fails again
            self.out.close()
        self.out = self.writer = None
        try:
            os.truncate(opened, end)
            if end:
                os.replace(opened, self.path)
            else:
                opened.unlink()
        except OSError:
            incomplete = self.path.with_name(self.path.name + INCOMPLETE_SUFFIX)
            try:
                os.replace(opened, incomplete)
            except OSError:  # it stays .open, as a killed process's file
                return
            logger.info(
                "Closed WARC file %(path)s; its last record may be cut", {"path": incomplete}
            )
            return
        if end:
            self._log_closed(end)

    def _log_closed(self, size: int) -> None:
        logger.info(
            "Closed WARC file %(path)s: %(records)d records, %(size)d bytes",
            {"path": self.path, "records": self.records, "size": size},
        )

    def _count(self, records: int, size: int) -> None:
        self.records += records
        self.stats.inc_value("focused/warc/records", records)
        self.stats.inc_value("focused/warc/bytes", size)


class WarcWriter:
    """Writes the pages FOCUSED_WARC keeps (see the module doc) when their items are scraped,
    after every pipeline, so the relevant flag is known. Under ``relevant`` the undecided pages
    too: those whose probability reaches ``undecided_margin`` times their verdict's cut.

    Its calls on the crawl's ``warc`` hash go through the crawl's store, with its retries.
    With Redis lost the page is still written, as a response record. With ``on_fault``, the
    first write the disk refuses is handed to it (the file and the OSError) and nothing more
    is written.
    """

    def __init__(
        self,
        files: WarcFiles,
        store: CrawlStore,
        *,
        keep_all: bool,
        stats: StatsCollector,
        on_fault: Callable[[Path, OSError], None] | None = None,
        undecided_margin: float = 1.0,
    ):
        self.files = files
        self.index = WarcIndex(store)
        self.keep_all = keep_all
        self.undecided_margin = undecided_margin
        self.stats = stats
        self.on_fault = on_fault
        self.failed = False

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> WarcWriter:
        s = crawler.settings
        keep, max_size = choice(s, "FOCUSED_WARC"), s.getint("FOCUSED_WARC_MAX_SIZE")
        if keep == "none":
            raise NotConfigured
        if max_size <= 0:
            raise FocusedError(f"FOCUSED_WARC_MAX_SIZE: expected bytes above 0, got {max_size}")
        crawl = crawl_name(crawler)
        folder = Path(s.get("FOCUSED_WARC_DIR") or default_folder(s.get("FOCUSED_HOME"), crawl))
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            why = f"cannot create {folder} ({exc.strerror})"
            raise FocusedError(f"FOCUSED_WARC_DIR: {why}") from exc
        plan = crawl_plan(crawler)
        topic = plan.topic
        info = {
            "software": f"focused/{focused.__version__} (Scrapy {scrapy.__version__}, warcio)",
            "format": "WARC File Format 1.1",
            "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
            "warc-format/warc-1.1/",
            "isPartOf": crawl,
            "description": f"focused crawl of topic {topic.name!r}: {keep} pages",
            "hostname": socket.gethostname(),
            "topic": str(topic.path),
            "robots": "obey" if s.getbool("ROBOTSTXT_OBEY") else "ignore",
            "http-header-user-agent": s.get("USER_AGENT"),
        }
        files = WarcFiles(folder, crawl, max_size=max_size, info=info, stats=crawler.stats)
        writer = cls(
            files,
            store_for(crawler),
            keep_all=keep == "all",
            stats=crawler.stats,
            on_fault=functools.partial(disk_fault, crawler, "WARC file"),
            undecided_margin=s.getfloat("FOCUSED_WARC_UNDECIDED"),
        )
        crawler.signals.connect(writer.item_scraped, signal=signals.item_scraped)
        if writer.keep_all:
            crawler.signals.connect(writer.response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(writer.spider_closed, signal=signals.spider_closed)
        return writer

    def item_scraped(self, item: Page, response: Response | Failure) -> None:
        if isinstance(response, Response) and 300 <= response.status < 400:
            return  # redirects are kept when downloaded
        pair = None
        if isinstance(response, Response) and response.request is not None:
            pair = self.page_records(item, response)
        metadata = None
        if item.order is not None:  # a fetched page (not a URL given up)
            record_id = pair[1].rec_headers.get_header("WARC-Record-ID") if pair else None
            metadata = metadata_record(item, warc_date(item.time), record_id)
        if pair is None:
            if metadata is not None:
                self.write_record(metadata)
            return
        request, record = pair
        if self.write_pair(request, record, metadata):
            if record.rec_type == "revisit":
                self.stats.inc_value("focused/warc/revisits")
            else:
                self.remember(record.rec_headers.get_header("WARC-Target-URI"), record)
                if not (self.keep_all or item.relevant) and self.keeps(item):
                    self.stats.inc_value("focused/warc/undecided")

    def page_records(
        self, item: Page, response: Response
    ) -> tuple[ArcWarcRecord, ArcWarcRecord] | None:
        """The request record and the response (or revisit) record of a page FOCUSED_WARC
        keeps; None for a page it does not."""
        assert response.request is not None
        date = warc_date(item.time)
        unchanged = item.bad == UNCHANGED or item.duplicate in SAME_URL
        original = self.original(response.url) if unchanged else None
        if original is not None and original.digest == payload_digest(response.body):
            return request_record(response.request), revisit_record(response, date, original)
        # A page the pipelines found unchanged while its bytes changed: kept if the first was.
        if not (self.keep_all or self.keeps(item) or original is not None):
            return None
        return (
            request_record(response.request),
            response_record(response, date, item.language),
        )

    def keeps(self, item: Page) -> bool:
        """Whether FOCUSED_WARC ``relevant`` keeps a page: relevant, or undecided (a page
        whose verdict was set aside, a duplicate or an unchanged revisit, is neither)."""
        if item.relevant:
            return True
        verdict = item.verdict
        return (
            verdict is not None
            and item.relevance is not None
            and undecided(verdict, self.undecided_margin)
        )

    def response_downloaded(self, response: Response, request: Request) -> None:
        """``all``: keep the responses that never reach the spider, as downloaded: redirects
        followed and robots.txt."""
        if 300 <= response.status < 400 or request.callback is NO_CALLBACK:
            record = response_record(response, BUILDER.curr_warc_date())
            self.write_pair(request_record(request), record)

    def write_pair(
        self,
        request: ArcWarcRecord,
        response: ArcWarcRecord,
        metadata: ArcWarcRecord | None = None,
    ) -> bool:
        """Write a response record, its request's and the page's metadata record, unless the
        disk refused one before: whether they were written."""
        return self._write(lambda: self.files.write_pair(request, response, metadata))

    def write_record(self, record: ArcWarcRecord) -> bool:
        """Write one record, unless the disk refused one before: whether it was written."""
        return self._write(lambda: self.files.write_record(record))

    def _write(self, write: Callable[[], None]) -> bool:
        if self.failed:
            return False
        try:
            write()
        except OSError as exc:
            self.fault(exc)
            return False
        return True

    def fault(self, exc: OSError) -> None:
        if self.on_fault is None:
            raise exc
        self.failed = True
        self.on_fault(self.files.path or self.files.folder, exc)

    def original(self, url: str) -> Original | None:
        """The response record this crawl wrote for ``url``, if any."""
        try:
            value = self.index.written(url)
        except FocusedError:  # Redis is lost: reported by the store
            return None
        return Original.parse(value) if value else None

    def remember(self, url: str, record: ArcWarcRecord) -> None:
        """Record the response record just written for ``url``, for later revisits."""
        headers = record.rec_headers
        written = Original(
            headers.get_header("WARC-Record-ID"),
            headers.get_header("WARC-Date"),
            headers.get_header("WARC-Payload-Digest"),
        )
        with contextlib.suppress(FocusedError):  # Redis is lost: reported by the store
            self.index.remember(url, str(written))

    def spider_closed(self) -> None:
        try:
            self.files.close()
        except OSError as exc:
            self.fault(exc)
