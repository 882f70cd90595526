"""A real Redis Cluster on 127.0.0.1 (``focused redis cluster``, :mod:`focused.store.cluster`) and
the clients ``redis+cluster://`` URLs give (:func:`focused.store.client.connect`).

Besides the project's own code, these pin what the crawl's cluster code relies on in redis-py
and this redis-server: which multi-key commands, scripts and pipelines work across masters.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import redis
from redis.cluster import RedisCluster
from scrapy.settings import Settings

from focused.errors import FocusedError
from focused.store import cluster as cluster_module
from focused.store.client import REDIS_PARAMS, connect, describe_url, from_settings
from focused.store.cluster import BUS_OFFSET, SLOTS, free_ports, running_cluster
from focused.store.server import _check_port
from tests.conftest import stop

pytestmark = pytest.mark.cluster  # every test starts or uses a cluster

HOST = "127.0.0.1"


@pytest.fixture
def tag() -> str:
    """A prefix of the test's own keys on the session's cluster."""
    return f"test-{uuid.uuid4().hex[:8]}:"


def node(port: int) -> redis.Redis:
    """A plain client of one node: it answers for its own slots only (MOVED for the others)."""
    return redis.Redis(host=HOST, port=port, decode_responses=True)


def master_ports(client: RedisCluster) -> list[int]:
    return sorted(primary.port for primary in client.get_primaries())


def key_on(client: RedisCluster, port: int, prefix: str) -> str:
    """The first key ``prefix<i>`` that the master on ``port`` serves."""
    return next(
        f"{prefix}{i}"
        for i in range(100_000)
        if client.get_node_from_key(f"{prefix}{i}").port == port
    )


def keys_on_every_master(client: RedisCluster, prefix: str) -> list[str]:
    return [key_on(client, port, prefix) for port in master_ports(client)]


def test_the_cluster_serves_every_slot_over_three_masters(redis_cluster):
    ports = [int(address.rpartition(":")[2]) for address in redis_cluster[16:].split(",")]
    assert redis_cluster == "redis+cluster://" + ",".join(f"{HOST}:{port}" for port in ports)
    assert len(set(ports)) == 3
    for port in ports:
        with node(port) as client:
            info = client.cluster("INFO")
            assert info["cluster_state"] == "ok"
            assert int(info["cluster_slots_assigned"]) == SLOTS
            assert int(info["cluster_known_nodes"]) == 3
            assert client.info("replication")["role"] == "master"
            ranges = sorted(
                (start, end, owner[1]) for start, end, owner, *_ in client.cluster("SLOTS")
            )
        # The ranges follow each other from slot 0 to the last, each master serving some.
        assert ranges[0][0] == 0 and ranges[-1][1] == SLOTS - 1
        assert all(ranges[i][1] + 1 == ranges[i + 1][0] for i in range(len(ranges) - 1))
        assert {owner for *_, owner in ranges} == set(ports)


def test_connect_gives_a_cluster_client_that_writes_to_every_master(redis_cluster, cluster, tag):
    assert isinstance(cluster, RedisCluster)
    assert master_ports(cluster) == sorted(
        int(address.rpartition(":")[2]) for address in redis_cluster[16:].split(",")
    )
    keys = keys_on_every_master(cluster, tag)
    for key in keys:
        assert cluster.set(key, f"value of {key}")
    assert [cluster.get(key) for key in keys] == [f"value of {key}" for key in keys]  # text
    for port, key in zip(master_ports(cluster), keys, strict=True):
        with node(port) as client:  # each key is on its own master, and there only
            assert client.get(key) == f"value of {key}"
            for other in set(keys) - {key}:
                with pytest.raises(redis.exceptions.MovedError):
                    client.get(other)
    # The project's timeouts reach the nodes' connections.
    pool = cluster.get_redis_connection(cluster.get_primaries()[0]).connection_pool
    assert pool.connection_kwargs["socket_timeout"] == REDIS_PARAMS["socket_timeout"]
    assert cluster.retry.get_retries() == 10


def test_a_one_key_script_runs_on_the_master_of_its_key(cluster, tag):
    script = cluster.register_script(
        "redis.call('SET', KEYS[1], ARGV[1])\n"
        "return tonumber(string.match(redis.call('INFO', 'server'), 'tcp_port:(%d+)'))"
    )
    for port in master_ports(cluster):
        key = key_on(cluster, port, tag)
        assert script(keys=[key], args=[f"written on {port}"]) == port  # where it ran
        with node(port) as client:
            assert client.get(key) == f"written on {port}"


def test_a_script_reaches_the_keys_of_its_hash_tag_and_no_other_master(cluster, tag):
    """(a) A script given one key of ``{x}`` reads and writes other keys of ``{x}`` (the same
    slot); (b) a key of another master is an error of the script, raised by the server."""
    hashed = f"{{{tag}x}}"
    elsewhere = next(
        key
        for key in keys_on_every_master(cluster, tag)
        if cluster.get_node_from_key(key) != cluster.get_node_from_key(hashed)
    )
    touch = cluster.register_script(
        "redis.call('SET', KEYS[1], ARGV[1])\n"
        "redis.call('SET', ARGV[2], ARGV[1])\n"
        "return redis.call('GET', ARGV[2])"
    )
    assert touch(keys=[f"{hashed}:a"], args=["v", f"{hashed}:b"]) == "v"
    assert cluster.get(f"{hashed}:b") == "v"
    with pytest.raises(redis.ResponseError, match="non local key in a cluster node"):
        touch(keys=[f"{hashed}:a"], args=["w", elsewhere])
    assert cluster.get(elsewhere) is None
    with pytest.raises(redis.exceptions.RedisClusterException, match="same key slot"):
        touch(keys=[f"{hashed}:a", elsewhere], args=["w", f"{hashed}:b"])  # redis-py refuses


def test_commands_over_keys_of_every_master(cluster, tag):
    """What a reader of a cluster relies on: (c) a pipeline without a transaction sends each
    command to its master and returns the replies in order; (d) ``scan_iter`` scans every
    master; (e) ``unlink`` of keys in several slots deletes them all; (f) a script flushed from
    one master is loaded again by ``Script.__call__``."""
    keys = keys_on_every_master(cluster, tag)
    for i, key in enumerate(keys):
        cluster.hset(f"{key}:h", mapping={"n": i})
        cluster.zadd(f"{key}:z", {f"m{j}": j for j in range(i + 1)})
        cluster.rpush(f"{key}:l", i, i + 1)
    assert len({cluster.keyslot(f"{key}:h") for key in keys}) == 3
    pipe = cluster.pipeline(transaction=False)
    for key in keys:
        pipe.hgetall(f"{key}:h").zcard(f"{key}:z").lrange(f"{key}:l", 0, -1)
    assert pipe.execute() == [
        reply for i in range(3) for reply in ({"n": str(i)}, i + 1, [str(i), str(i + 1)])
    ]

    assert sorted(cluster.scan_iter(match=f"{tag}*:h", count=100)) == sorted(
        f"{key}:h" for key in keys
    )

    assert cluster.unlink(*(f"{key}:{kind}" for key in keys for kind in "hzl")) == 9
    assert not any(cluster.exists(f"{key}:{kind}") for key in keys for kind in "hzl")

    read = cluster.register_script("return redis.call('GET', KEYS[1])")
    for key in keys:
        cluster.set(key, key)
    assert [read(keys=[key]) for key in keys] == keys
    flushed = cluster.get_node_from_key(keys[1])
    cluster.get_redis_connection(flushed).script_flush()
    assert cluster.get_redis_connection(flushed).script_exists(read.sha) == [False]
    assert [read(keys=[key]) for key in keys] == keys
    assert cluster.get_redis_connection(flushed).script_exists(read.sha) == [True]


def test_from_settings_reads_a_cluster_url_in_either_setting(redis_cluster, tag):
    for settings in ({"FOCUSED_REDIS_URL": redis_cluster}, {"REDIS_URL": redis_cluster}):
        client = from_settings(Settings(settings))
        assert isinstance(client, RedisCluster)
        assert client.set(f"{tag}k", "v") and client.get(f"{tag}k") == "v"
        client.close()


def test_bad_cluster_urls_are_clear_errors(tmp_path):
    for url, message in (
        ("redis+cluster://", "names its nodes"),
        ("redis+cluster:///0", "names its nodes"),
        ("redis+cluster://127.0.0.1:port", "'127.0.0.1:port' is not a node"),
        ("redis+cluster://127.0.0.1:7000,", "'' is not a node"),
        ("redis+cluster://127.0.0.1:7000/2", "database 0 only"),
    ):
        with pytest.raises(FocusedError, match=message):
            connect(url)
    (port,) = free_ports(1)
    with pytest.raises(FocusedError, match=f"cannot reach redis\\+cluster://u:\\*\\*\\*@{HOST}"):
        connect(f"redis+cluster://u:secret@{HOST}:{port}")
    assert describe_url("rediss+cluster://u:secret@h:1,h:2") == "rediss+cluster://u:***@h:1,h:2"
    with pytest.raises(FocusedError, match="at least 3"), running_cluster(tmp_path, masters=2):
        pass


def test_a_node_that_cannot_start_is_an_error_with_its_log(tmp_path):
    home = tmp_path / "home"
    for port in free_ports(3):
        (home / f"node-{port}").mkdir(parents=True)
        (home / f"node-{port}" / "nodes.conf").write_text("not a node\nnor a node\n")
    failed = pytest.raises(FocusedError, match=r"stopped \(exit code 1\): .*cluster config")
    with failed, running_cluster(home):
        pass


def test_a_port_taken_after_it_was_chosen_is_chosen_again(tmp_path, monkeypatch):
    """Ports chosen free can be taken before the node listens (by another test's server, or
    an outgoing connection): the cluster starts on others, and leaves no folder of the first."""
    taken = socket.create_server((HOST, 0))
    chosen = [[taken.getsockname()[1], *free_ports(2)]]
    monkeypatch.setattr(
        cluster_module,
        "free_ports",
        lambda count, bind: chosen.pop() if chosen else free_ports(count),
    )
    with taken, running_cluster(tmp_path / "home") as cluster:
        assert taken.getsockname()[1] not in cluster.ports
        assert connect(cluster.url).ping()
        folders = sorted(path.name for path in (tmp_path / "home").iterdir())
    assert folders == sorted(f"node-{port}" for port in cluster.ports)
    assert not chosen  # the taken port was tried first


def consecutive_free_ports(count: int) -> int:
    """The first of ``count`` free ports in a row, whose bus ports are free too."""
    for first in free_ports(50):
        try:
            for port in range(first, first + count):
                _check_port(HOST, port)
                _check_port(HOST, port + BUS_OFFSET)
        except FocusedError:
            continue
        return first
    raise AssertionError("no free ports in a row")


def run_cluster_command(*args: str) -> tuple[subprocess.Popen, list[str], str]:
    """``focused redis cluster ARGS`` in the background: the process, what it printed until its
    URL, and the URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "focused.cli.main", "redis", "cluster", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("FOCUSED_REDIS_URL="):
            return process, lines, line.strip().partition("=")[2]
    stop(process, 30)
    raise AssertionError(f"no URL printed: {lines} {process.stderr.read()}")


def my_id(folder: Path) -> str:
    """The node id a node's nodes.conf gives itself."""
    lines = (folder / "nodes.conf").read_text().splitlines()
    return next(line.split()[0] for line in lines if "myself," in line)


def test_the_command_runs_a_cluster_until_sigterm_and_restarts_it(tmp_path):
    home, first = tmp_path / "home", consecutive_free_ports(3)
    ports = [first, first + 1, first + 2]
    url = "redis+cluster://" + ",".join(f"{HOST}:{port}" for port in ports)

    process, printed, printed_url = run_cluster_command("--home", str(home), "--port", str(first))
    try:
        assert printed_url == url
        assert "Redis Cluster of 3 masters" in printed[0] and "new" in printed[0]
        client = connect(url)
        keys = keys_on_every_master(client, "kept:")
        for key in keys:
            client.set(key, key)
        client.close()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0, process.stderr.read()
    assert "saved and stopped" in process.stdout.read()
    for port in ports:  # every node ended
        _check_port(HOST, port)
        assert (home / f"node-{port}" / "server.rdb").is_file()

    # Again on the same home, without --port: the same cluster, its data kept, not made anew.
    ids = {port: my_id(home / f"node-{port}") for port in ports}
    process, printed, printed_url = run_cluster_command("--home", str(home))
    try:
        assert printed_url == url and "restarted" in printed[0]
        client = connect(url)
        assert [client.get(key) for key in keys] == keys
        assert {
            primary.port: client.cluster_myid(primary) for primary in client.get_primaries()
        } == ids
        client.close()
    finally:
        stop(process, 60)
    assert process.returncode == 0, process.stderr.read()


def test_a_home_of_another_cluster_is_not_made_anew(tmp_path):
    with running_cluster(tmp_path) as cluster:
        ports = cluster.ports
    moved = [port + 1 for port in ports]
    with (
        pytest.raises(FocusedError, match="holds a cluster on ports"),
        running_cluster(tmp_path, ports=moved),
    ):
        pass
    assert not (tmp_path / f"node-{ports[0] + 1}").exists()
    (tmp_path / f"node-{ports[2]}").rename(tmp_path / "elsewhere")
    lost = pytest.raises(FocusedError, match=f"nodes on ports {ports[2]} have lost their folder")
    with lost, running_cluster(tmp_path):
        pass
