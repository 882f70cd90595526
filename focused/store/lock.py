"""A lock in Redis, held by one process of a crawl at a time (a periodic job's run, the intake
of pushed seeds).

The lock is a lease its holder renews while it holds it, as Redisson's watchdog does: a run
may take as long as it needs, and a holder that dies (SIGKILL, a lost machine) lets go within
one lease, so the crawl's other processes take the job over within seconds rather than after
the longest run anyone expected.

A lease can still be lost while its holder runs: a holder paused past its lease (SIGSTOP, a
swapped-out machine, a stop-the-world pause) finds, when it goes on, that another process took
the lock meanwhile. Its renewals then fail, but the holder itself is between two lines of its
job and does not know it. So a holder's writes that a stale holder would get wrong are fenced
(:func:`fenced`): one script call checks that the lock still holds the holder's token and only
then writes, atomically, and a write refused raises :class:`LockLost`.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import redis
from redis.cluster import RedisCluster

from focused.errors import FocusedError
from focused.store import scripts

if TYPE_CHECKING:
    from redis.typing import EncodableT

logger = logging.getLogger(__name__)

RENEWALS = 3  # renewals per lease: a holder misses two before its lease runs out
# A crawl's locks' lease unless a setting says otherwise: a process that dies lets go within it.
LEASE_S = 15.0


@dataclass(frozen=True)
class Lease:
    """A lock held: its key and its holder's token, which the lock's value stays while the
    holder holds it (what :func:`fenced` checks)."""

    key: str
    token: str


class LockLost(FocusedError):
    """A fenced write refused: the holder's lease ran out and the lock is no longer its own
    (another process may hold it and do the same work)."""

    def __init__(self, lease: Lease):
        super().__init__(f"the lock {lease.key} ran out before its holder wrote: write refused")


@contextmanager
def held_lock(
    client: redis.Redis | RedisCluster,
    key: str,
    seconds: float,
    run: Callable[[Callable[[], Any]], Any] = lambda call: call(),
) -> Iterator[Lease | None]:
    """Try to take the lock ``key`` for the block; yields its :class:`Lease` when this process
    holds it, else None.

    One process of a crawl at a time: SET NX PX, released only by its holder (compare and
    delete). ``seconds`` is the lease: a thread renews it every ``seconds`` / RENEWALS while
    the block runs, so a holder that stops (crashes, is killed) lets go after at most
    ``seconds``. ``run`` runs each Redis call (a frontier's ``retrying``).
    """
    token = uuid.uuid4().hex
    lease_ms = int(seconds * 1000)
    taken = bool(run(lambda: client.set(key, token, nx=True, px=lease_ms)))
    if not taken:
        yield None
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
        yield Lease(key, token)
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


def fenced(
    client: redis.Redis | RedisCluster,
    lease: Lease,
    commands: Sequence[tuple[EncodableT, ...]],
    run: Callable[[Callable[[], Any]], Any] = lambda call: call(),
) -> Any:
    """Run the write ``commands`` (each its name, its key, then its arguments) at once, only
    while ``lease`` holds its lock (``fenced.lua``); returns the last one's reply. Raises
    :class:`LockLost`, having written nothing, when the lock is no longer the holder's. ``run``
    runs the Redis call (a store's ``retrying``). On a cluster the keys are the lock's crawl's
    (one slot)."""
    names = [lease.key, *(str(command[1]) for command in commands)]
    args: list[EncodableT] = [lease.token]
    for name, _, *rest in commands:
        args += [name, len(rest), *rest]
    reply = run(lambda: client.eval(scripts.source("fenced"), len(names), *names, *args))
    if reply is None:
        raise LockLost(lease)
    return reply
