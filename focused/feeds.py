"""Local feed files written through, so a killed crawl leaves every exported item in its feed.

Scrapy's ``FileFeedStorage`` hands the exporter a buffered file, flushed when the crawl closes
the feed: a crawl killed outright (SIGKILL, the machine's OOM killer) lost up to 8 KB of items,
all of them in a short crawl. :class:`FlushedFileFeedStorage` (the add-on makes it the storage
of local feeds: plain paths and ``file://`` URIs) flushes each write to the operating system as
the exporter makes it; for JSON lines, one write a line. A kill then loses at most the item
being written, whose page is acknowledged in Redis anyway (``focused export`` writes them all).

A JSON-lines feed appended to (``-o``, a restarted crawl) that ends in part of a line, written
by a process killed in mid-write, is cut back to its last whole line first, so the next item
does not run on from it (a warning says how many bytes were dropped).
"""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from scrapy.extensions.feedexport import FileFeedStorage

if TYPE_CHECKING:
    from scrapy import Spider

logger = logging.getLogger(__name__)

LINE_FORMATS = ("jsonlines", "jl")


class FlushedWriter(io.BufferedWriter):
    """A buffered file that flushes each write: whole writes reach the file in one call."""

    def write(self, data: Any) -> int:
        written = super().write(data)
        self.flush()
        return written


class FlushedFileFeedStorage(FileFeedStorage):
    """Scrapy's local-file feed storage, written through (module doc)."""

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None):
        super().__init__(uri, feed_options=feed_options)
        self.format = (feed_options or {}).get("format")

    def open(self, spider: Spider) -> IO[bytes]:
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if self.write_mode == "ab" and self.format in LINE_FORMATS:
            cut_partial_line(path)
        return FlushedWriter(io.FileIO(path, self.write_mode))


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
