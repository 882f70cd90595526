"""The crawl-wide periodic job (distiller, genetic generations, HMM fits) on a real Redis: its
trigger, its lock, no second start while a run is in progress, and its failures."""

from __future__ import annotations

import logging
import time

from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from focused.errors import FocusedError
from focused.store import keys
from focused.store.lock import Lease
from focused.store.periodic import PeriodicJob

FAILURES = "focused/test/failed"


def periodic(redis_client, crawl_name, job, every: int = 3, **options):
    """A job run in the caller's thread (the crawl's runs it in a thread), with what each run
    handed to ``done`` in ``results``."""
    results: list = []
    runner = PeriodicJob(
        "Test job",
        job,
        client=redis_client,
        lock=keys.prefix(crawl_name) + "test:lock",
        lock_s=5,
        every=every,
        done=results.append,
        stats=MemoryStatsCollector(get_crawler()),
        failures=FAILURES,
        background=False,
        **options,
    )
    return runner, results


def test_the_job_runs_every_n_pages_counted_crawl_wide(redis_client, crawl_name):
    runner, results = periodic(redis_client, crawl_name, lambda n, lease: n * 10)
    assert not runner.offer(2, 0, 1) and results == []  # two pages since the last run
    assert runner.offer(3, 0, 2) and results == [20]  # three: due, with its arguments
    assert not runner.offer(5, 3, 3) and results == [20]
    assert runner.offer(9, 3, 4) and results == [20, 40]
    never, ran = periodic(redis_client, crawl_name, lambda lease: 1, every=0)
    assert not never.offer(1000, 0) and ran == []  # every 0: only when started
    assert never.start() and ran == [1]
    assert not redis_client.exists(runner.lock)  # each run let the lock go


def test_a_run_in_progress_is_not_entered_again(redis_client, crawl_name):
    def job(lease: Lease) -> str:
        inside.append((runner.running, runner.offer(100, 0), runner.start()))
        return "done"

    inside: list = []
    runner, results = periodic(redis_client, crawl_name, job)
    assert runner.offer(3, 0)
    assert inside == [(True, False, False)] and results == ["done"]  # no second run within
    assert not runner.running and runner.offer(6, 3) and len(inside) == 2  # the next one runs


def test_one_process_at_a_time_under_the_crawl_lock(redis_client, crawl_name):
    calls: list = []
    runner, results = periodic(redis_client, crawl_name, lambda lease: calls.append(1) or "ran")
    redis_client.set(runner.lock, "another process", px=5000)
    assert runner.start() and calls == [] and results == [None]  # held elsewhere: not run
    assert redis_client.get(runner.lock) == "another process"  # and left to its holder
    redis_client.delete(runner.lock)
    assert runner.start() and calls == [1] and results == [None, "ran"]


def test_a_failing_run_is_logged_once_and_counted_and_the_job_backs_off(
    redis_client, crawl_name, caplog
):
    errors = [RuntimeError("broken model"), FocusedError("Redis connection lost")]

    def job(lease: Lease) -> str:
        if errors:
            raise errors.pop(0)
        return "ran"

    runner, results = periodic(redis_client, crawl_name, job, backoff=0.3)
    with caplog.at_level(logging.INFO, logger="focused.store.periodic"):
        assert runner.offer(3, 0)
        assert not runner.offer(6, 3) and not runner.start()  # backing off
        time.sleep(0.3)
        assert runner.offer(6, 3)  # not stuck "running" after the failure; fails again
        time.sleep(0.3)
        assert not runner.start()  # the wait doubled after a second failure in a row
        time.sleep(0.3)
        assert runner.offer(9, 6) and results == ["ran"]
    assert runner.stats.get_value(FAILURES) == 2
    failed, again = caplog.records  # the second failure in a row is counted, not logged
    assert (failed.levelname, failed.getMessage()) == (
        "ERROR",
        "Test job failed; tried again in 0 s at the earliest, then less often while it fails",
    )
    assert failed.exc_info and "broken model" in caplog.text  # with its traceback
    assert (again.levelname, again.getMessage()) == (
        "INFO",
        "Test job ran again after 2 failed runs",
    )
    assert not redis_client.exists(runner.lock)  # a failed run lets the lock go too
    assert runner.offer(12, 9) and results == ["ran", "ran"]  # no wait after a success


def test_a_skipped_run_is_a_warning(redis_client, crawl_name, caplog):
    def job(lease: Lease) -> None:
        raise FocusedError("Redis connection lost")

    runner, _ = periodic(redis_client, crawl_name, job)
    with caplog.at_level(logging.WARNING, logger="focused.store.periodic"):
        assert runner.offer(3, 0)
    (skipped,) = caplog.records
    assert (skipped.levelname, skipped.getMessage()) == (
        "WARNING",
        "Test job skipped: Redis connection lost; tried again in 1 s at the earliest, then "
        "less often while it fails",
    )
