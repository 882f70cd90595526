"""Why a request finally failed, as a short name: the spider counts bad pages under it and the
robots.txt middleware names a robots.txt it could not fetch by it."""

from __future__ import annotations

import gzip
import socket
import ssl
import sys
import zlib

from brotli import error as BrotliError
from OpenSSL.SSL import Error as OpenSSLError
from scrapy.core.downloader.handlers.http11 import TunnelError
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    NotSupported,
    ResponseDataLossError,
    StopDownload,
    UnsupportedURLSchemeError,
)
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils._compression import _DecompressionMaxSizeExceeded
from twisted.internet import error as tx
from twisted.python.failure import Failure
from twisted.web.client import ResponseFailed
from twisted.web.http import PotentialDataLoss, _DataLoss

if sys.version_info >= (3, 14):
    from compression.zstd import ZstdError
else:
    from backports.zstd import ZstdError


class ForbiddenAddress(IgnoreRequest):
    """A request not sent: its host is, or resolves to, an address that is not public."""


class TooSlow(StopDownload):
    """A download stopped because its body came in slower than FOCUSED_MIN_DOWNLOAD_RATE
    (focused.middlewares.slowhosts)."""

    def __init__(self) -> None:
        super().__init__(fail=True)


class SlowSlotsTaken(TooSlow, DownloadTimeoutError):
    """A download stopped because it turned slow while slow downloads held their share of the
    slots (FOCUSED_SLOW_HOST_SLOTS): its page may be good, so it is tried again later, as
    after a timeout (and is one, if its tries run out)."""


class BrowserFailed(Exception):
    """A rendered page the browser did not end on at an http(s) URL: its navigation failed
    into an error page (``chrome-error://``), or became a download (focused.render.handler)."""


class RenderDeadline(BrowserFailed):
    """A rendered page not done within FOCUSED_RENDER_DEADLINE: its browser was killed."""


TIMEOUTS = (DownloadTimeoutError, tx.TimeoutError, tx.TCPTimedOutError, TimeoutError)


# Why a download finally failed, by the exception or any exception behind it (its
# ``__cause__``, and the failures Twisted's ResponseFailed wraps), most specific first: a TLS
# error comes wrapped in a lost connection, a lost connection mid-body is a truncated page.
# Scrapy 2.19's download handlers raise its own exceptions (scrapy.exceptions) from Twisted's
# or the HTTP client's; the compression middleware raises the decompressors' own errors.
FAILURE_REASONS: tuple[tuple[str, tuple[type[BaseException], ...]], ...] = (
    ("forbidden_address", (ForbiddenAddress,)),  # before "dns": it may be a refused lookup
    ("render_deadline", (RenderDeadline,)),
    ("render", (BrowserFailed,)),
    ("tls", (OpenSSLError, ssl.SSLError, tx.SSLError, tx.CertificateError)),
    ("dns", (CannotResolveHostError, tx.DNSLookupError, socket.gaierror)),
    ("too_big", (DownloadCancelledError, _DecompressionMaxSizeExceeded)),
    ("truncated", (ResponseDataLossError, _DataLoss, PotentialDataLoss)),
    ("timeout", TIMEOUTS),
    ("too_slow", (TooSlow,)),
    (
        "refused",
        (DownloadConnectionRefusedError, tx.ConnectionRefusedError, ConnectionRefusedError),
    ),
    ("compression", (zlib.error, gzip.BadGzipFile, EOFError, BrotliError, ZstdError)),
    (
        "connection",
        (
            DownloadFailedError,
            ResponseFailed,
            tx.ConnectError,
            tx.ConnectionClosed,
            tx.ConnectingCancelledError,
            ConnectionError,
            TunnelError,
        ),
    ),
    ("unsupported", (UnsupportedURLSchemeError, NotSupported)),
)
OTHER = "other"


def _causes(error: BaseException) -> list[BaseException]:
    """The error and every exception behind it, outermost first."""
    found: list[BaseException] = []
    todo = [error]
    while todo:
        current = todo.pop(0)
        if any(current is seen for seen in found):
            continue
        found.append(current)
        if current.__cause__ is not None:
            todo.append(current.__cause__)
        todo += [
            f.value
            for f in getattr(current, "reasons", ())
            if isinstance(f, Failure) and f.value is not None
        ]
    return found


def failure_reason(failure: Failure) -> str:
    """A short stats-friendly name for why a request finally failed: ``http_<status>``,
    ``robots_forbidden``, ``forbidden_address`` (focused.middlewares.addresses), one of
    FAILURE_REASONS, ``redirects`` (Scrapy's REDIRECT_MAX_TIMES), ``ignored`` (another
    middleware dropped it), or ``other``."""
    error = failure.value
    assert error is not None  # a Failure holds its exception; twisted types it optional
    if isinstance(error, HttpError):
        return f"http_{error.response.status}"
    if isinstance(error, IgnoreRequest) and "robots.txt" in str(error):
        return "robots_forbidden"
    causes = _causes(error)
    for reason, types in FAILURE_REASONS:
        if any(isinstance(cause, types) for cause in causes):
            return reason
    if isinstance(error, IgnoreRequest):
        return "redirects" if "max redirections" in str(error) else "ignored"
    return OTHER
