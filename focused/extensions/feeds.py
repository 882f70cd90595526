"""Local feed files written through, so a killed crawl leaves every exported item in its feed.

Scrapy's ``FileFeedStorage`` hands the exporter a buffered file, flushed when the crawl closes
the feed: a crawl killed outright (SIGKILL, the machine's OOM killer) lost up to 8 KB of items,
all of them in a short crawl. :class:`FlushedFileFeedStorage` (the add-on makes it the storage
of local feeds: plain paths and ``file://`` URIs) flushes each write to the operating system as
the exporter makes it; for JSON lines, one write a line. A kill then loses at most the item
being written, and the items of the last acknowledgement batch not yet exported, whose pages
are acknowledged in Redis anyway (``focused export`` writes them all).

A JSON-lines feed appended to (``-o``, a restarted crawl) that ends in part of a line, written
by a process killed in mid-write, is cut back to its last whole line first, so the next item
does not run on from it (a warning says how many bytes were dropped).

A feed file that cannot be opened or written (a full disk, a read-only folder: any OSError) is a
disk fault (:mod:`focused.extensions.diskfaults`): one error line, the crawl stops, the feed is cut
back to
the end of its last whole item, and takes no more items (``focused export`` writes them all
from Redis).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from scrapy.extensions.feedexport import FileFeedStorage

from focused.extensions.diskfaults import disk_fault
from focused.store.crawler import crawl_name

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

LINE_FORMATS = ("jsonlines", "jl")


# Told of the OSError that ended a feed file's writes.
OnFault = Callable[[OSError], None]


class FlushedWriter(io.BufferedWriter):
    """A buffered file that flushes each write: whole writes reach the file in one call.

    With ``on_fault``, the first write the file refuses (OSError) is handed to it, and every
    write from then on is dropped, so the exporter neither fails nor writes half items. A full
    disk takes the part of the refused write that fits: the file is cut back to the end of the
    last whole write (:attr:`whole`), so the feed does not end in half an item."""

    def __init__(self, raw: io.RawIOBase, on_fault: OnFault | None = None):
        super().__init__(raw)
        self.on_fault = on_fault
        self.failed = False
        self.whole = raw.tell()  # where the last whole write ended (an appended file's end)

    def write(self, data: Any) -> int:
        if self.failed:
            return len(data)
        try:
            written = super().write(data)
            self.flush()
        except OSError as exc:
            if self.on_fault is None:
                raise
            self.failed = True
            with suppress(OSError):  # a file that cannot be cut (/dev/full) has taken nothing
                self.raw.truncate(self.whole)
            self.on_fault(exc)
            return len(data)
        self.whole += written
        return written

    def flush(self) -> None:
        if not self.failed:
            super().flush()

    def close(self) -> None:
        if self.failed:  # what the file refused stays in the buffer: not written again
            self.raw.close()
        super().close()


class FlushedFileFeedStorage(FileFeedStorage):
    """Scrapy's local-file feed storage, written through; in a crawl, a disk fault stops it
    (module doc)."""

    def __init__(
        self,
        uri: str,
        *,
        feed_options: dict[str, Any] | None = None,
        crawler: Crawler | None = None,
    ):
        super().__init__(uri, feed_options=feed_options)
        self.format = (feed_options or {}).get("format")
        self.crawler = crawler

    @classmethod
    def from_crawler(
        cls, crawler: Crawler, uri: str, *, feed_options: dict[str, Any] | None = None
    ) -> FlushedFileFeedStorage:
        return cls(uri, feed_options=feed_options, crawler=crawler)

    def open(self, spider: Spider) -> IO[bytes]:
        path = Path(self.path)
        on_fault = None
        if self.crawler is not None:
            crawler = self.crawler

            def on_fault(exc: OSError) -> None:
                note = f"; `focused export {crawl_name(crawler)}` writes every page fetched"
                disk_fault(crawler, "feed", path, exc, note)

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if self.write_mode == "ab" and self.format in LINE_FORMATS:
                cut_partial_line(path)
            raw = io.FileIO(path, self.write_mode)
        except OSError as exc:
            if on_fault is None:
                raise
            on_fault(exc)
            # takes the items that cannot be written (typeshed wants a RawIOBase: it serves)
            writer = FlushedWriter(io.BytesIO())  # type: ignore[arg-type]
            writer.failed = True
            return writer
        return FlushedWriter(raw, on_fault)


def cut_partial_line(path: Path) -> None:
    """Drop the end of ``path`` after its last newline, if it does not end with one."""
    try:
        out = path.open("r+b")
    except FileNotFoundError:
        return
    with out:
        size = end = out.seek(0, io.SEEK_END)
        if size == 0:
            return
        out.seek(size - 1)
        if out.read(1) == b"\n":
            return
        while end > 0:
            start = max(0, end - 65536)
            out.seek(start)
            newline = out.read(end - start).rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            end = start
        out.truncate(end)
    logger.warning(
        "Feed %(path)s ended in part of a line (a killed process's); dropped its %(bytes)d bytes",
        {"path": path, "bytes": size - end},
    )
