"""A crawl-wide periodic job: run every N pages counted crawl-wide, by one process at a time.

The distiller, the genetic strategy's generations and the HMM strategy's fitter each read every
host queue or the whole crawl log, too long for the reactor's thread and pointless twice at once
in one crawl. :class:`PeriodicJob` holds what they share: the trigger (N more pages than at the
last run, as the feature counts them crawl-wide), the crawl's lock (:func:`held_lock`, so one
process runs the job and the others find it held), the run in a thread, no second start while a
run is in progress, and failures logged and counted alike: a Redis outage (FocusedError), a
lease lost before a fenced write (LockLost, :mod:`focused.store.lock`) or a write Redis refuses
(OOM, READONLY, ...) as a skipped run (a warning), anything else as a failed run (an error
with its traceback), both counted in the feature's ``failures`` stat.

A failed run is not tried again at once: the next trigger runs the job only after ``backoff``
seconds, doubled after each failure in a row (up to :data:`MAX_BACKOFF_S`), so a Redis that
refuses writes for minutes costs a few runs, not one a second. Only the first failure in a row
is logged (with when the job will be tried again); the others are counted, and a run that
succeeds after failures says how many there were.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from scrapy.utils.log import failure_to_exc_info
from twisted.internet import threads
from twisted.python.failure import Failure

from focused.errors import FocusedError
from focused.store.lock import held_lock
from focused.store.retries import refusal

if TYPE_CHECKING:
    import redis
    from redis.cluster import RedisCluster
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

T = TypeVar("T")

# The wait after a failed run (PeriodicJob's ``backoff``), doubled after each failure in a row,
# and its cap.
BACKOFF_S = 1.0
MAX_BACKOFF_S = 300.0


class PeriodicJob(Generic[T]):
    """``job`` every ``every`` crawl-wide pages (0: only when started), one process of the crawl
    at a time under the lock ``lock`` (a lease of ``lock_s`` seconds, renewed while the job
    runs), in a thread.

    ``job`` gets the lock's ``lease`` (keyword), so that its writes that a holder whose lease
    ran out would get wrong are refused (:func:`~focused.store.lock.fenced`, a LockLost: the run
    is skipped, as on a Redis outage). ``call`` runs each Redis call of the lock (retries that
    are safe off the reactor's thread);
    ``done`` gets each run's result, None when another process held the lock. ``name`` names a
    run in the feature's ``log`` ("<name> skipped: ...", "<name> failed"). Without
    ``background`` the job runs in the caller's thread (tests, strategies outside a crawl).
    After a failed run the job waits ``backoff`` seconds, doubled after each failure in a row.
    """

    def __init__(
        self,
        name: str,
        job: Callable[..., T | None],
        *,
        client: redis.Redis | RedisCluster,
        lock: str,
        lock_s: float,
        call: Callable[[Callable[[], Any]], Any] = lambda call: call(),
        every: int = 0,
        done: Callable[[T | None], None] = lambda result: None,
        stats: StatsCollector | None = None,
        failures: str = "",
        log: logging.Logger = logger,
        background: bool = True,
        backoff: float = BACKOFF_S,
    ):
        self.name = name
        self.job = job
        self.client = client
        self.lock = lock
        self.lock_s = lock_s
        self.call = call
        self.every = every
        self.done = done
        self.stats = stats
        self.failures = failures
        self.log = log
        self.background = background
        self.backoff = backoff
        self.running = False
        self.failed_in_row = 0  # failed runs since the last one that succeeded
        self.not_before = 0.0  # monotonic time before which the job is not started again

    def run(self, *args: Any, **kwargs: Any) -> T | None:
        """The job under the crawl's lock, in the caller's thread, given the lock's ``lease``
        for the writes it fences (:func:`~focused.store.lock.fenced`); None when another
        process holds the lock."""
        with held_lock(self.client, self.lock, self.lock_s, self.call) as lease:
            return self.job(*args, lease=lease, **kwargs) if lease else None

    def offer(self, pages: int, last: int, *args: Any, **kwargs: Any) -> bool:
        """Start the job with these arguments if ``every`` pages were counted crawl-wide since
        ``last`` (the count at the last run); whether it started."""
        return self.every > 0 and pages - last >= self.every and self.start(*args, **kwargs)

    def start(self, *args: Any, **kwargs: Any) -> bool:
        """Run the job now (in a thread with ``background``) unless a run is in progress or
        the job backs off after a failure; whether it started."""
        if self.running or time.monotonic() < self.not_before:
            return False
        self.running = True
        if self.background:
            d = threads.deferToThread(self.run, *args, **kwargs)
            d.addCallbacks(self._finished, self._failed)
            return True
        try:
            result = self.run(*args, **kwargs)
        except Exception:
            self._failed(Failure())
        else:
            self._finished(result)
        return True

    def _finished(self, result: T | None) -> None:
        self.running = False
        if self.failed_in_row:
            self.log.info(
                "%(name)s ran again after %(failed)d failed runs",
                {"name": self.name, "failed": self.failed_in_row},
            )
        self.failed_in_row, self.not_before = 0, 0.0
        self.done(result)

    def _failed(self, failure: Failure) -> None:
        self.running = False
        self.failed_in_row += 1
        wait = min(self.backoff * 2 ** (self.failed_in_row - 1), MAX_BACKOFF_S)
        self.not_before = time.monotonic() + wait
        if self.stats is not None and self.failures:
            self.stats.inc_value(self.failures)
        if self.failed_in_row > 1:
            return
        values = {"name": self.name, "error": failure.value, "wait": wait}
        if failure.check(FocusedError) or refusal(failure.value):
            self.log.warning(
                "%(name)s skipped: %(error)s; tried again in %(wait).0f s at the earliest, "
                "then less often while it fails",
                values,
            )
        else:
            self.log.error(
                "%(name)s failed; tried again in %(wait).0f s at the earliest, then less often "
                "while it fails",
                values,
                exc_info=failure_to_exc_info(failure),
            )
