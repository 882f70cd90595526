"""A lock in Redis, held by one process of a crawl at a time (a periodic job's run, the intake
of pushed seeds).

The lock is a lease its holder renews while it holds it, as Redisson's watchdog does: a run
may take as long as it needs, and a holder that dies (SIGKILL, a lost machine) lets go within
one lease, so the crawl's other processes take the job over within seconds rather than after
the longest run anyone expected.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import redis
from redis.cluster import RedisCluster

from focused.store import scripts

logger = logging.getLogger(__name__)

RENEWALS = 3  # renewals per lease: a holder misses two before its lease runs out
# A crawl's locks' lease unless a setting says otherwise: a process that dies lets go within it.
LEASE_S = 15.0


@contextmanager
def held_lock(
    client: redis.Redis | RedisCluster,
    key: str,
    seconds: float,
    run: Callable[[Callable[[], Any]], Any] = lambda call: call(),
) -> Iterator[bool]:
    """Try to take the lock ``key`` for the block; yields whether this process holds it.

    One process of a crawl at a time: SET NX PX, released only by its holder (compare and
    delete). ``seconds`` is the lease: a thread renews it every ``seconds`` / RENEWALS while
    the block runs, so a holder that stops (crashes, is killed) lets go after at most
    ``seconds``. ``run`` runs each Redis call (a frontier's ``retrying``).
    """
    token = uuid.uuid4().hex
    lease_ms = int(seconds * 1000)
    taken = bool(run(lambda: client.set(key, token, nx=True, px=lease_ms)))
    if not taken:
        yield False
        return
    done = threading.Event()
    renewal = threading.Thread(
        target=_renew,
        args=(client, key, token, lease_ms, done),
        name=f"focused-lock-{key}",
        daemon=True,
    )
    renewal.start()
    try:
        yield True
    finally:
        done.set()
        renewal.join()
        run(lambda: client.eval(scripts.source("unlock"), 1, key, token))


def _renew(
    client: redis.Redis | RedisCluster, key: str, token: str, lease_ms: int, done: threading.Event
) -> None:
    """Extend the lock's lease every lease / RENEWALS until ``done``; stop, saying so, if the
    lock was lost (its lease ran out while the holder's renewals could not reach Redis)."""
    source = scripts.source("renew")
    while not done.wait(lease_ms / 1000 / RENEWALS):
        try:
            renewed = client.eval(source, 1, key, token, lease_ms)
        except redis.RedisError:
            continue  # Redis is out of reach: the holder's own calls report it
        if not renewed:
            logger.warning("The lock %s ran out before its holder renewed it", key)
            return
