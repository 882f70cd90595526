"""The Redis client of a crawl, built in one place (as scrapy-redis's ``connection.py``).

Without ``FOCUSED_REDIS_URL`` it is a client of the embedded Redis in ``FOCUSED_HOME``
(:mod:`focused.store.embedded`).

A ``redis+cluster://host:port,host:port`` URL (``rediss+cluster://`` with TLS) names a Redis
Cluster (``focused redis cluster`` starts one): the client is then a :class:`RedisCluster`, which
learns the masters from those nodes and sends each command to the master of its keys' slot.

Every client retries a failed command as redis-py does by default, and reports each attempt
to :data:`~focused.store.outages.OUTAGES` (:mod:`focused.store.outages`).
"""

from __future__ import annotations

import os
import re
from typing import Any, TypeGuard, TypeVar
from urllib.parse import unquote, urlsplit

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.cluster import REDIS_ALLOWED_KEYS, ClusterNode, RedisCluster
from redis.connection import parse_url
from redis.exceptions import RedisClusterException

from focused.errors import FocusedError
from focused.store.embedded import DB_FILE, embedded_client, embedded_server, home_dir
from focused.store.outages import OutageRetry

Client = TypeVar("Client", redis.Redis, RedisCluster)

# What a Redis call raises when Redis fails it (lost, refused, timed out, an error reply): the
# store's API for readers that report a failed read instead of failing (the dashboard's API,
# the exporter's ``focused_redis_up``), so that they need not import redis-py.
RedisError = redis.RedisError


# A Redis that does not answer within 5 s (connecting, the TLS handshake, or a reply) has
# failed that attempt: a crawl's calls take milliseconds, and the reactor waits on each. A
# server that refuses connections fails at once and redis-py's own retries (its defaults: 10,
# backing off from 10 ms to 1 s) ride out a short outage; a timed-out attempt is not retried
# by redis-py (:class:`OutageRetry`). A longer outage reaches the caller, which retries in
# turn (:func:`~focused.store.retries.retrying`), then stops.
REDIS_PARAMS: dict[str, Any] = {
    "socket_timeout": 5,
    "socket_connect_timeout": 5,
    "health_check_interval": 30,
    "decode_responses": True,
    "retry": OutageRetry(ExponentialWithJitterBackoff(base=0.01, cap=1), 10),
}


def redis_url(url: str | None = None) -> str | None:
    """The URL to use: an explicit one, else the FOCUSED_REDIS_URL environment variable."""
    return url or os.environ.get("FOCUSED_REDIS_URL") or None


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
        client = embedded_client(home_dir(home).resolve(), REDIS_PARAMS)
    return _reached(client, describe(url, home))


def _reached(client: Client, where: str) -> Client:
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
    _check_version(client, where)
    return client


#: The oldest Redis the frontier's scripts run on (ZADD's LT, which a re-boost uses, came in 6.2).
MIN_VERSION = (6, 2)


def _check_version(client: Client, where: str) -> None:
    """A FocusedError naming the version when a server (a cluster's masters, each) is older
    than :data:`MIN_VERSION`, rather than a script's "unknown command" in the middle of a
    crawl. A server that will not say (``INFO`` renamed or refused) is taken at its word."""
    try:
        if isinstance(client, RedisCluster):
            replies = client.info("server", target_nodes=RedisCluster.PRIMARIES)
            infos = list(replies.values()) if "redis_version" not in replies else [replies]
        else:
            infos = [client.info("server")]
    except (redis.RedisError, RedisClusterException):
        return
    for info in infos:
        version = str(info.get("redis_version", ""))
        numbers = tuple(int(part) for part in version.split(".")[:2] if part.isdigit())
        if len(numbers) == 2 and numbers < MIN_VERSION:
            raise FocusedError(
                f"{where} runs Redis {version}; focused needs Redis "
                f"{'.'.join(map(str, MIN_VERSION))} or later"
            )


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
    return bool(url and url.split("://", 1)[0] in CLUSTER_SCHEMES)


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
