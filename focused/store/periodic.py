"""A crawl-wide periodic job: run every N pages counted crawl-wide, by one process at a time.

The distiller, the genetic strategy's generations and the HMM strategy's fitter each read every
host queue or the whole crawl log, too long for the reactor's thread and pointless twice at once
in one crawl. :class:`PeriodicJob` holds what they share: the trigger (N more pages than at the
last run, as the feature counts them crawl-wide), the crawl's lock (:func:`held_lock`, so one
process runs the job and the others find it held), the run in a thread, no second start while a
run is in progress, and failures logged and counted alike: a Redis outage (FocusedError) as a
skipped run (a warning), anything else as a failed run (an error with its traceback), both
counted in the feature's ``failures`` stat. The next trigger runs the job again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from scrapy.utils.log import failure_to_exc_info
from twisted.internet import threads
from twisted.python.failure import Failure

from focused.errors import FocusedError
from focused.store.connection import held_lock

if TYPE_CHECKING:
    import redis
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

T = TypeVar("T")


class PeriodicJob(Generic[T]):
    """``job`` every ``every`` crawl-wide pages (0: only when started), one process of the crawl
    at a time under the lock ``lock`` (expiring after ``lock_s`` seconds), in a thread.

    ``call`` runs each Redis call of the lock (retries that are safe off the reactor's thread);
    ``done`` gets each run's result, None when another process held the lock. ``name`` names a
    run in the feature's ``log`` ("<name> skipped: ...", "<name> failed"). Without
    ``background`` the job runs in the caller's thread (tests, strategies outside a crawl).
    """

    def __init__(
        self,
        name: str,
        job: Callable[..., T | None],
        *,
        client: redis.Redis,
        lock: str,
        lock_s: float,
        call: Callable[[Callable[[], Any]], Any] = lambda call: call(),
        every: int = 0,
        done: Callable[[T | None], None] = lambda result: None,
        stats: StatsCollector | None = None,
        failures: str = "",
        log: logging.Logger = logger,
        background: bool = True,
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
        self.running = False

    def run(self, *args: Any, **kwargs: Any) -> T | None:
        """The job under the crawl's lock, in the caller's thread; None when another process
        holds the lock."""
        with held_lock(self.client, self.lock, self.lock_s, self.call) as held:
            return self.job(*args, **kwargs) if held else None

    def offer(self, pages: int, last: int, *args: Any, **kwargs: Any) -> bool:
        """Start the job with these arguments if ``every`` pages were counted crawl-wide since
        ``last`` (the count at the last run); whether it started."""
        return self.every > 0 and pages - last >= self.every and self.start(*args, **kwargs)

    def start(self, *args: Any, **kwargs: Any) -> bool:
        """Run the job now (in a thread with ``background``) unless a run is in progress;
        whether it started."""
        if self.running:
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
        self.done(result)

    def _failed(self, failure: Failure) -> None:
        self.running = False
        if self.stats is not None and self.failures:
            self.stats.inc_value(self.failures)
        if failure.check(FocusedError):
            self.log.warning(
                "%(name)s skipped: %(error)s", {"name": self.name, "error": failure.value}
            )
        else:
            self.log.error(
                "%(name)s failed", {"name": self.name}, exc_info=failure_to_exc_info(failure)
            )
