"""The Redis outages this process sees, whichever of its clients sees them (:data:`OUTAGES`).

Every client retries a failed command as redis-py does by default (:class:`OutageRetry`, its
``retry``: :data:`focused.store.client.REDIS_PARAMS`), and reports each attempt here, so an
outage is counted and logged even when the retries hide it from the caller.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import redis
from redis.retry import Retry

logger = logging.getLogger(__name__)
T = TypeVar("T")


# What a timed-out attempt raises: redis-py's TimeoutError, or the socket's own timeout where
# redis-py's connection retries see it (a TLS handshake, say).
TIMEOUTS = (redis.TimeoutError, TimeoutError)


class OutageListener(Protocol):
    def outage_started(self) -> None: ...

    def outage_ended(self, seconds: float) -> None: ...


class Outages:
    """The Redis outages this process sees, whichever of its clients sees them.

    An outage starts when two attempts in a row fail (a pooled connection the server has dropped
    fails once and is made again at once: no outage), or when one attempt times out (a Redis that
    accepts connections and does not answer: the timeouts of
    :data:`~focused.store.client.REDIS_PARAMS`), and ends when one thread has two attempts in a row
    succeed (redis-py counts taking an idle pooled connection as a success before it finds that
    connection's server gone); it lasts from its first failed attempt to the first of those
    successes. Failures before Redis was first reached are not outages: the command that could not
    reach it says so in one line. Each outage is logged twice, a WARNING when it starts and an INFO
    with its length when it ends, and told to the ``listeners`` (a crawl's stats,
    :mod:`focused.extensions.outages`).

    ``given_up`` is set when a caller stops retrying (:func:`~focused.store.retries.retrying`
    raised: the crawl stops); until Redis answers again each call then makes one attempt, so the
    components that still write at the close fail at once instead of each retrying for seconds.

    ``stopping`` is set when the process stops: asked to (SIGINT, SIGTERM: the crawl's
    :mod:`~focused.extensions.outages`), or its crawl gave Redis up (the scheduler). The
    retries of an outage then end at its next failed attempt, so a crawl whose Redis is gone
    stops within seconds of the signal; and during the outage calls make no attempt within
    :data:`STOPPING_RETRY_S` of the last failed one (:meth:`skips`), so the close does not wait
    for a silent Redis once per component.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reached = False
        self.failing_since: float | None = None  # the first failed attempt since a success
        self.last_failed = 0.0  # when the last failed attempt ended
        self.down = False
        self.given_up = False
        self.stopping = False
        self.count = 0
        self.listeners: list[OutageListener] = []
        # During an outage, the time of each thread's success since the last failed attempt.
        self.succeeding: dict[int, float] = {}

    def failed(self, error: Exception) -> None:
        """Note a failed attempt (a lost connection or a timeout)."""
        with self.lock:
            self.succeeding.clear()
            self.last_failed = time.monotonic()
            if not self.reached or self.down:
                return
            if self.failing_since is None:
                self.failing_since = time.monotonic()
                if not isinstance(error, TIMEOUTS):
                    return
            self.down = True
            self.count += 1
        logger.warning("Redis unreachable (%(error)s); retrying", {"error": error})
        for listener in list(self.listeners):
            listener.outage_started()

    def succeeded(self) -> None:
        """Note an attempt that succeeded: an outage, if any, is over at its thread's second."""
        self.reached = True
        if self.failing_since is None and not self.given_up:  # the common case, without the lock
            return
        now, thread = time.monotonic(), threading.get_ident()
        with self.lock:
            if self.down and thread not in self.succeeding:
                self.succeeding[thread] = now  # maybe an idle connection: not over yet
                return
            back = self.succeeding.get(thread, now)
            since, down = self.failing_since, self.down
            self.failing_since, self.down, self.given_up = None, False, False
            self.succeeding.clear()
        if down and since is not None:
            seconds = back - since
            logger.info("Redis reachable again after %(seconds).1f s", {"seconds": seconds})
            for listener in list(self.listeners):
                listener.outage_ended(seconds)

    def skips(self) -> bool:
        """Whether a call fails without an attempt: the process is stopping during an outage,
        and Redis failed the last attempt less than :data:`STOPPING_RETRY_S` ago."""
        return (
            self.stopping and self.down and time.monotonic() - self.last_failed < STOPPING_RETRY_S
        )

    def ongoing(self) -> float | None:
        """How long the outage going on has lasted so far, in seconds; None if there is none."""
        since = self.failing_since
        return time.monotonic() - since if self.down and since is not None else None


# How long after a failed attempt the calls of a stopping process fail without one, during an
# outage: a Redis that does not answer would hold each call of the close for the timeout.
STOPPING_RETRY_S = 5.0

OUTAGES = Outages()


class OutageRetry(Retry):
    """redis-py's retries of a command or a connection, each attempt reported to
    :data:`OUTAGES`: a retry that succeeds hides an outage from the caller, not from the
    count. redis-py copies it into each connection; the count is the process's.

    Some failures are not retried here, and reach the caller at once: a refused password (no retry
    mends it); any failure before this process first reached Redis (the check at the start is one
    attempt: a Redis that is not there is one line within seconds); a timed-out attempt (it has
    already waited the timeout of :data:`~focused.store.client.REDIS_PARAMS`: ten more would keep a
    silent Redis unnoticed for minutes; the crawl's own retries,
    :func:`~focused.store.retries.retrying`, go on); and any failure once the caller has given Redis
    up or the process is stopping during an outage (where a call may make no attempt at all:
    :meth:`Outages.skips`).
    """

    def call_with_retry(self, do: Callable[[], T], fail: Callable[..., Any], *args, **kwargs) -> T:
        if OUTAGES.skips():
            raise redis.ConnectionError(
                f"not tried again within {STOPPING_RETRY_S:g} s of its last failed attempt"
            )

        def failed(error: Exception, *count: int) -> Any:
            if isinstance(error, redis.AuthenticationError):
                raise error  # a password missing or refused: no outage, and no retry mends it
            OUTAGES.failed(error)
            fail(error, *count)
            if (
                not OUTAGES.reached
                or isinstance(error, TIMEOUTS)
                or OUTAGES.given_up
                or (OUTAGES.stopping and OUTAGES.down)
            ):
                raise error

        result = super().call_with_retry(do, failed, *args, **kwargs)
        OUTAGES.succeeded()
        return result
