"""A crawl's own retries of a Redis call (:func:`retrying`), above redis-py's: lost connections
and refused writes are retried with backoff, then the crawl stops (:class:`RedisRefused` says
why Redis refuses writes and what to do)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

import redis

from focused.errors import FocusedError
from focused.store.outages import OUTAGES

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class RedisCall(Protocol[T_co]):
    """A Redis call to run (and retry): called without arguments, it returns the reply.

    ``Callable[[], T]`` says the same, but mypy cannot infer a lambda with default arguments
    (``lambda k=key: ...``, a loop's value bound) against it (python/mypy#15459); it can
    against this."""

    def __call__(self) -> T_co: ...


# Redis's refusals of a write: the code of its error reply (a script's error names it too) ->
# what it means and what to do.
REFUSALS = {
    "OOM": "its used memory is over maxmemory (OOM); raise maxmemory or free memory",
    "READONLY": "it is a read-only replica (READONLY); give the crawl the URL of its master",
    "MISCONF": (
        "it cannot save its snapshot (MISCONF: see its log); give it disk space or a writable "
        "dir, or set stop-writes-on-bgsave-error no"
    ),
    "NOREPLICAS": (
        "fewer of its replicas answer than its min-replicas-to-write (NOREPLICAS); bring them "
        "back or lower min-replicas-to-write"
    ),
}
_REFUSAL = re.compile(r"(?:^|-)(OOM|READONLY|MISCONF|NOREPLICAS) ")


def refusal(error: BaseException | None) -> str | None:
    """What Redis means by refusing a write with ``error``, and what to do (:data:`REFUSALS`);
    None for any other error."""
    if isinstance(error, redis.OutOfMemoryError):  # redis-py takes the code off its message
        return REFUSALS["OOM"]
    if isinstance(error, redis.ReadOnlyError):
        return REFUSALS["READONLY"]
    match = _REFUSAL.search(str(error)) if isinstance(error, redis.ResponseError) else None
    return REFUSALS[match[1]] if match else None


class RedisRefused(FocusedError):
    """Redis refuses writes (:data:`REFUSALS`): the message says why and what to do."""


def retrying(
    call: RedisCall[T],
    *,
    retries: int,
    on_retry: Callable[[int, Exception], None] | None = None,
    given_up: threading.Event | None = None,
) -> T:
    """Run a Redis call, retrying lost connections and refused writes with exponential backoff.

    Each failed attempt is reported through ``on_retry(attempt, error)`` (the frontier logs it and
    counts it in stats); a refused write as a :class:`RedisRefused`. After ``retries`` failures a
    FocusedError is raised (a RedisRefused for a refused write): the caller stops the crawl instead
    of losing a write silently; until Redis answers again, calls make one attempt each
    (:attr:`~focused.store.outages.Outages.given_up`). ``given_up``, once set (another call of the
    crawl gave up: a :class:`~focused.store.crawl.CrawlStore`'s), ends the retries at once, so a
    thread does not keep the stopping crawl waiting; so does a process asked to stop
    (:attr:`~focused.store.outages.Outages.stopping`), for a lost connection.

    A refused write is retried as long as a lost connection (about 16 s by default): the
    refusals often pass that soon (a failover promotes the replica, the next snapshot
    succeeds, someone raises ``maxmemory``), and the pages fetched meanwhile are then
    acknowledged instead of fetched again.
    """
    cause: redis.RedisError  # the attempt's failure
    error: Exception  # what on_retry hears of it
    final: FocusedError  # what is raised if it was the last
    for attempt in range(1, retries + 2):
        try:
            return call()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            cause, error = exc, exc
            after = f"after {attempt - 1} of {retries} retries, the process asked to stop"
            if not OUTAGES.stopping:
                after = f"after {retries} retries"
            final = FocusedError(f"Redis connection lost and not back {after}: {exc}")
        except redis.ResponseError as exc:
            why = refusal(exc)
            if why is None:
                raise
            cause = exc
            error = final = RedisRefused(f"Redis refuses writes: {why}")
        if (
            attempt > retries
            or (given_up is not None and given_up.is_set())
            or (OUTAGES.stopping and not isinstance(final, RedisRefused))
        ):
            if not isinstance(final, RedisRefused):
                OUTAGES.given_up = True
            raise final from cause
        if on_retry is not None:
            on_retry(attempt, error)
        delay = min(0.05 * 2**attempt, 5.0)
        if given_up is None:
            time.sleep(delay)
        else:
            given_up.wait(delay)
    raise AssertionError("unreachable")
