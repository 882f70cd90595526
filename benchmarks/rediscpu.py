"""Where a whole crawl's Redis time goes: Redis CPU per page, and per command and per script.

    .venv/bin/python benchmarks/rediscpu.py                    # Wikispeedia, 300 pages
    .venv/bin/python benchmarks/rediscpu.py --pages 1000 --procs 2 -s FOCUSED_HOST_DELAY=0
    .venv/bin/python benchmarks/rediscpu.py --masters 3          # on a 3-master Redis Cluster

One crawl with the project's default settings (``-s KEY=VALUE`` adds or overrides any) of
``--topic``, a development topic of the Wikispeedia bundle beside the checkout
(``../shared/webs/wikispeedia``; its topic files made as ``focused evaluate`` makes them, the
``taxonomy`` crawler), or of a generated synthetic web when that bundle is not there, on a
fresh redis-server (the embedded Redis's binary, no persistence; or FOCUSED_REDIS_URL).

Everything the crawl does in Redis is counted over the crawl: the server's CPU from
``INFO cpu`` before and after, per page fetched, and net of what the server spends on its own
housekeeping when idle (measured for ``--idle`` seconds before the crawl: at Redis's default
``hz 10`` about 1.5 ms a second on this project's machines, which a slow crawl pays per page);
``INFO commandstats`` (every command, including those scripts call); and with ``--breakdown``
the ``SLOWLOG`` with a threshold of 0, which times each top-level call, so each Lua script's
calls and microseconds are told apart (named by their SHA1s, from the scripts' sources in the
project). Logging every call costs CPU too: measure CPU per page without ``--breakdown``.

With ``--masters N`` the crawl runs on a fresh Redis Cluster of N masters on 127.0.0.1
(:mod:`focused.store.cluster`, persistence turned off as on the single server) and the figures
are per master: its CPU per page of the whole crawl, its idle housekeeping, its share, which
shows whether the shards share the work evenly; ``--breakdown`` prints each master's tables.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import shutil
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis
from common import (
    DEFAULT_WORK,
    REPO,
    crawl_env,
    ensure_web,
    focused_command,
    redis_cpu_seconds,
    redis_server,
    set_options,
    start,
    terminated_as_exit,
    wait_all,
)

from focused.lab.evaluation.graph import WebGraph
from focused.lab.evaluation.run import prepare
from focused.lab.evaluation.tasks import load_tasks
from focused.lab.webs.bundle import Bundle
from focused.lab.webs.server import ServedWeb
from focused.monitor.snapshot import crawl_status
from focused.store import scripts
from focused.store.admin import reset_crawl
from focused.store.client import connect
from focused.store.cluster import running_cluster
from focused.store.frontier.core import script_values
from focused.store.reads import Reader
from focused.store.shards import crawl_shards

CRAWL = "bench-rediscpu"
WIKISPEEDIA = REPO.parent / "shared" / "webs" / "wikispeedia"
SLOWLOG_LEN = 2_000_000


def script_names() -> dict[str, str]:
    """SHA1 of every Lua script the project registers -> its name (:mod:`focused.store.scripts`;
    the frontier's values given to each, which the others do not use)."""
    return {
        hashlib.sha1(scripts.source(name, **script_values(name)).encode()).hexdigest(): name
        for name in scripts.SCRIPTS
    }


def start_profile(client: redis.Redis, breakdown: bool) -> float:
    """Reset the server's command counters (and with ``breakdown`` its slowlog, logging every
    call); its CPU seconds now."""
    client.config_resetstat()
    if breakdown:
        client.config_set("slowlog-log-slower-than", 0)
        client.config_set("slowlog-max-len", SLOWLOG_LEN)
        client.slowlog_reset()
    return redis_cpu_seconds(client)


def calls_by_name(client: redis.Redis) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """From the SLOWLOG: each top-level command or script -> [calls, microseconds], and each
    script -> its own commands -> [calls, microseconds].

    A script's commands are logged too (by the client ``?:0``), just before the script itself:
    scripts are atomic, so the commands logged since the last top-level call are its own.
    """
    names = script_names()
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    inner: dict[str, Any] = defaultdict(lambda: defaultdict(lambda: [0, 0.0]))
    pending: list[tuple[str, float]] = []
    for entry in sorted(client.slowlog_get(SLOWLOG_LEN), key=lambda e: e["id"]):
        words = entry["command"].split()
        name = words[0].decode().lower() if words else "?"
        if entry["client_address"] == b"?:0":
            pending.append((name, entry["duration"]))
            continue
        if name == "evalsha" and len(words) > 1:
            name = names.get(words[1].decode(), "script " + words[1].decode()[:8])
        elif name == "eval":
            name = "eval (unnamed)"
        totals[name][0] += 1
        totals[name][1] += entry["duration"]
        for command, us in pending:
            inner[name][command][0] += 1
            inner[name][command][1] += us
        pending = []
    return totals, inner


def idle_cpu(clients: list[redis.Redis], seconds: float) -> list[float]:
    """Each server's CPU seconds per second when nothing is asked of it (its own cron)."""
    before = [redis_cpu_seconds(client) for client in clients]
    time.sleep(seconds)
    return [(redis_cpu_seconds(c) - b) / seconds for c, b in zip(clients, before, strict=True)]


def report(
    client: redis.Redis, pages: int, cpu_s: float, wall: float, idle: float, breakdown: bool
) -> None:
    """Print Redis CPU per page, the commandstats table, and with ``breakdown`` the SLOWLOG's
    per-script tables."""
    per_page = 1000 / max(pages, 1)
    print(f"\n{pages:,} pages fetched in {wall:.1f} s of wall time")
    print(
        f"Redis CPU: {cpu_s:.3f} s = {per_page * cpu_s:.3f} ms/page; idle housekeeping"
        f" {1000 * idle:.2f} ms/s = {per_page * idle * wall:.3f} ms/page of it; net"
        f" {per_page * (cpu_s - idle * wall):.3f} ms/page"
    )
    if breakdown:
        slowlog_tables(client, pages, cpu_s)
    stats = client.info("commandstats")
    print("\ncommands, scripts' own included (INFO commandstats)")
    print("| command | calls | calls/page | µs/call | µs/page |")
    print("|---|---|---|---|---|")
    rows = sorted(stats.items(), key=lambda kv: -kv[1]["usec"])
    for name, row in rows:
        if name.removeprefix("cmdstat_") in ("slowlog", "config", "info"):
            continue
        print(
            f"| {name.removeprefix('cmdstat_')} | {row['calls']:,} | {row['calls'] / pages:.2f} |"
            f" {row['usec_per_call']:.2f} | {row['usec'] / pages:.1f} |"
        )


def slowlog_tables(client: redis.Redis, pages: int, cpu_s: float) -> None:
    """Print each top-level call's and each script's own commands' time from the SLOWLOG."""
    totals, inner = calls_by_name(client)
    timed = sum(us for _, us in totals.values())
    print(f"\ntop-level calls (SLOWLOG; {timed / 1000:.0f} ms timed of {cpu_s * 1000:.0f} ms CPU)")
    print("| call | calls | calls/page | µs/call | µs/page | share |")
    print("|---|---|---|---|---|---|")
    for name, (calls, us) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
        print(
            f"| {name} | {calls:,} | {calls / pages:.2f} | {us / calls:.1f} | {us / pages:.1f} |"
            f" {100 * us / max(timed, 1):.1f} % |"
        )
    for script, (calls, us) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
        if script not in inner or us < 0.02 * timed:
            continue
        own = sum(t for _, t in inner[script].values())
        print(
            f"\n{script}: {us / calls:.1f} µs a call, {own / calls:.1f} µs in its commands,"
            f" {(us - own) / calls:.1f} µs in Lua and the call itself"
        )
        print("| command | per call | µs/call of the script |")
        print("|---|---|---|")
        for command, (n, t) in sorted(inner[script].items(), key=lambda kv: -kv[1][1]):
            print(f"| {command} | {n / calls:.2f} | {t / calls:.1f} |")


def topic_file(args: argparse.Namespace, work: Path) -> tuple[Path, Path]:
    """(the web's bundle folder, the topic file of the crawl), prepared once in ``work``."""
    if not args.bundle.exists():
        folder = ensure_web(work / "web-6000-200", 6000, 200)
        return folder, folder / "topic.toml"
    folder = work / "rediscpu-topic"
    if not (folder / "taxonomy.toml").exists():
        bundle = Bundle.load(args.bundle)
        graph = WebGraph.from_bundle(bundle)
        (task,) = load_tasks(bundle, graph, args.topic, None)
        prepare(bundle, graph, task, folder, ["taxonomy"])
    return args.bundle, folder / "taxonomy.toml"


@contextlib.contextmanager
def fresh_cluster(folder: Path, masters: int) -> Iterator[tuple[str, list[redis.Redis]]]:
    """(URL, a plain client of each master) of a new cluster without persistence."""
    shutil.rmtree(folder, ignore_errors=True)
    with terminated_as_exit(), running_cluster(folder, masters) as cluster:
        nodes = [redis.Redis(port=port, decode_responses=True) for port in cluster.ports]
        for node in nodes:
            node.config_set("appendonly", "no")
            node.config_set("save", "")
        yield cluster.url, nodes


def cluster_report(
    nodes: list[redis.Redis],
    shard_ports: list[int],
    pages: int,
    cpu: list[float],
    wall: float,
    idle: list[float],
) -> None:
    """Print each master's CPU per page of the whole crawl, gross and net of idle, and the
    pages/s the busiest master would allow on a core of its own."""
    per_page = 1000 / max(pages, 1)
    print(f"\n{pages:,} pages fetched in {wall:.1f} s of wall time: {pages / wall:.1f} pages/s")
    print("| master | shards | Redis CPU ms/page | idle ms/s | net ms/page | share |")
    print("|---|---|---|---|---|---|")
    for node, cpu_s, idle_s in zip(nodes, cpu, idle, strict=True):
        port = node.connection_pool.connection_kwargs["port"]
        held = [str(j) for j, p in enumerate(shard_ports) if p == port]
        print(
            f"| :{port} | {', '.join(held) or '-'} | {per_page * cpu_s:.3f} |"
            f" {1000 * idle_s:.2f} | {per_page * (cpu_s - idle_s * wall):.3f} |"
            f" {100 * cpu_s / sum(cpu):.0f} % |"
        )
    net = sum(cpu) - sum(idle) * wall
    total = per_page * sum(cpu)
    print(f"| all | | {total:.3f} | {1000 * sum(idle):.2f} | {per_page * net:.3f} | |")
    busiest = max(per_page * (c - i * wall) for c, i in zip(cpu, idle, strict=True))
    print(f"busiest master {busiest:.3f} ms/page net: {1000 / busiest:,.0f} pages/s on a core")


def run_crawl(
    args: argparse.Namespace, work: Path, proxy: str, url: str, topic: Path, settings: dict
) -> float:
    """Run ``--procs`` crawler processes of the crawl to their end; their wall time."""
    env = crawl_env(proxy, url, work)
    logs = [work / f"rediscpu-{i}.log" for i in range(args.procs)]
    began = time.perf_counter()
    wait_all([start(focused_command(topic, settings), env, log) for log in logs], logs)
    return time.perf_counter() - began


def run_on_cluster(
    args: argparse.Namespace, work: Path, bundle: Path, topic: Path, settings: dict[str, Any]
) -> None:
    """The crawl on a fresh cluster of ``--masters`` masters; per-master figures."""
    folder = work / f"cluster-{args.masters}"
    with fresh_cluster(folder, args.masters) as (url, nodes), ServedWeb(bundle) as web:
        idle = idle_cpu(nodes, args.idle)
        raws = [redis.Redis(port=node.connection_pool.connection_kwargs["port"]) for node in nodes]
        before = [start_profile(raw, args.breakdown) for raw in raws]
        wall = run_crawl(args, work, web.proxy, url, topic, settings)
        cpu = [redis_cpu_seconds(n) - b for n, b in zip(nodes, before, strict=True)]
        client = connect(url)
        pages = int(crawl_status(Reader(client), CRAWL)["fetched"])
        shard_ports = [
            client.nodes_manager.get_node_from_slot(client.keyslot(prefix)).port
            for prefix in crawl_shards(client, CRAWL).prefixes
        ]
        cluster_report(nodes, shard_ports, pages, cpu, wall, idle)
        if args.breakdown:
            for raw, cpu_s in zip(raws, cpu, strict=True):
                print(f"\nmaster :{raw.connection_pool.connection_kwargs['port']}")
                slowlog_tables(raw, pages, cpu_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=300, help="URLs to fetch (all processes)")
    parser.add_argument("--procs", type=int, default=1, help="crawler processes")
    parser.add_argument("--topic", default="Science/Biology/Birds")
    parser.add_argument("--bundle", type=Path, default=WIKISPEEDIA)
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of idle measured")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument(
        "--breakdown", action="store_true", help="time every call and script (SLOWLOG)"
    )
    parser.add_argument(
        "--masters", type=int, default=0, help="run on a Redis Cluster of this many masters"
    )
    parser.add_argument("-s", "--set", action="append", metavar="KEY=VALUE")
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    bundle, topic = topic_file(args, work)
    settings: dict[str, Any] = {
        "FOCUSED_CRAWL": CRAWL,
        "FOCUSED_MODELS_DIR": topic.parent / "models",
        "LOG_LEVEL": "WARNING",
        "CLOSESPIDER_ITEMCOUNT": -(-args.pages // args.procs),
    }
    settings.update(set_options(args.set))
    if args.masters:
        run_on_cluster(args, work, bundle, topic, settings)
        return
    with redis_server(work / "redis-rediscpu") as redis_url, ServedWeb(bundle) as web:
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        raw = redis.Redis.from_url(redis_url)
        reset_crawl(client, CRAWL)
        (idle,) = idle_cpu([client], args.idle)
        cpu_before = start_profile(client, args.breakdown)
        wall = run_crawl(args, work, web.proxy, redis_url, topic, settings)
        cpu_s = redis_cpu_seconds(client) - cpu_before
        pages = int(crawl_status(Reader(client), CRAWL).get("fetched", 0))
        report(raw, pages, cpu_s, wall, idle, args.breakdown)


if __name__ == "__main__":
    main()
