"""A lock in Redis, held by one process of a crawl at a time (a periodic job's run, the intake
of pushed seeds)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import redis
from redis.cluster import RedisCluster

from focused.store import scripts


@contextmanager
def held_lock(
    client: redis.Redis | RedisCluster,
    key: str,
    seconds: float,
    run: Callable[[Callable[[], Any]], Any] = lambda call: call(),
) -> Iterator[bool]:
    """Try to take the lock ``key`` for the block; yields whether this process holds it.

    One process of a crawl at a time: SET NX PX, released only by its holder (compare and
    delete), and expiring after ``seconds``, so a holder that crashes lets go. ``run`` runs
    each Redis call (a frontier's ``retrying``).
    """
    token = uuid.uuid4().hex
    taken = bool(run(lambda: client.set(key, token, nx=True, px=int(seconds * 1000))))
    try:
        yield taken
    finally:
        if taken:
            run(lambda: client.eval(scripts.source("unlock"), 1, key, token))
