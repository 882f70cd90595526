"""Disk faults: an output of the crawl (the feed, the WARC files, the lists file) that cannot be
written stops the crawl with one line, not a traceback per item.

A full disk (ENOSPC), a quota (EDQUOT), a file too large (EFBIG), a read-only file system
(EROFS), an I/O error (EIO): any OSError on writing. The output that meets it logs one ERROR
line naming the file, the cause and what to do, counts it in ``focused/disk/errors``, writes
nothing more, and stops the crawl with finish reason ``focused_disk_error`` (the crawl command
then exits 4; so it does when the fault comes as the crawl closes, with another reason).
Nothing acknowledged is lost: a page's item reaches the feed and the WARC writer after its
acknowledgement in Redis, so ``focused export`` writes every page the feed missed, and a page
not acknowledged is fetched again on resume.
"""

from __future__ import annotations

import errno
import logging
from typing import TYPE_CHECKING

from scrapy.utils.defer import deferred_from_coro

from focused.errors import DISK_ERROR

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

DISK_ERRORS = "focused/disk/errors"
# What the user does about a fault, by its errno.
_FULL = "free space on its disk (or raise the quota)"
_READ_ONLY = "make its folder writable, or choose another"
_NOT_A_FOLDER = "choose another folder"
REMEDY = {
    errno.ENOSPC: _FULL,
    errno.EDQUOT: _FULL,
    errno.EFBIG: _FULL,
    errno.EROFS: _READ_ONLY,
    errno.EACCES: _READ_ONLY,
    errno.EPERM: _READ_ONLY,
    errno.EEXIST: _NOT_A_FOLDER,  # a file where a folder is needed
    errno.ENOTDIR: _NOT_A_FOLDER,
    errno.EISDIR: _NOT_A_FOLDER,
}


def disk_fault(
    crawler: Crawler, output: str, path: Path | str, exc: OSError, note: str = ""
) -> None:
    """Report that ``output`` (e.g. ``"feed"``) cannot write ``path``, and stop the crawl.

    Called once per output: the caller writes nothing more. ``note`` says what becomes of what
    it did not write."""
    crawler.stats.inc_value(DISK_ERRORS)
    cause = exc.strerror or type(exc).__name__
    number = exc.errno
    if number is not None and number in errno.errorcode:
        cause = f"{cause}, {errno.errorcode[number]}"
    remedy = "check its disk" if number is None else REMEDY.get(number, "check its disk")
    logger.error(
        "cannot write the %(output)s %(path)s (%(cause)s); stopping the crawl: %(remedy)s, then "
        "run the crawl again to resume%(note)s",
        {"output": output, "path": path, "cause": cause, "remedy": remedy, "note": note},
    )
    if crawler.crawling and crawler.engine.spider is not None:
        deferred_from_coro(crawler.engine.close_spider_async(reason=DISK_ERROR))
