"""Scale-out: 1, 2 and 4 ``scrapy crawl focused`` processes on one crawl.

    .venv/bin/python benchmarks/scaleout.py [--procs 1,2,4] [--crawl 3000] [--pages 6000]

Each configuration starts a fresh crawl (same name, same Redis) and K processes at once, each
with CLOSESPIDER_ITEMCOUNT = --crawl / K, through one served synthetic web (generated once,
cached in --work). Reported from the served log: pages served, pages/s overall (first to
last response) and duplicate fetches (URLs served more than once, robots.txt and 5xx left
out; must be 0), and the crawlers' CPU milliseconds per page (first response to close, all
processes). Settings as in ``throughput.py`` (no host delay, per-host concurrency
unbounded, CONCURRENT_REQUESTS=32 per process, ROBOTSTXT_OBEY=False); ``-s KEY=VALUE`` adds
or overrides any, e.g. ``-s FOCUSED_HOST_DELAY=0.5 -s FOCUSED_HOST_CONCURRENCY=1`` to check
politeness holds across processes.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path
from typing import Any

import redis
from common import (
    DEFAULT_WORK,
    Run,
    cpu_settings,
    crawl_env,
    ensure_web,
    focused_command,
    measure,
    read_cpu,
    redis_server,
    set_options,
    start,
    wait_all,
)

from focused.lab.webs.server import ServedWeb
from focused.store import keys
from focused.store.admin import reset_crawl
from focused.topic.files import load_topic
from focused.topic.methods import topic_model

CRAWL = "bench-scaleout"


def settings_for(args: argparse.Namespace, work: Path, count: int) -> dict[str, Any]:
    """``-s`` settings of one process."""
    settings: dict[str, Any] = {
        "FOCUSED_CRAWL": CRAWL,
        "FOCUSED_HOST_DELAY": 0,
        "FOCUSED_HOST_CONCURRENCY": 1000,
        "FOCUSED_MODELS_DIR": work / "models",
        "CONCURRENT_REQUESTS": 32,
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "WARNING",
        "CLOSESPIDER_ITEMCOUNT": count,
    }
    settings.update(set_options(args.set))
    return settings


def run_config(
    k: int, args: argparse.Namespace, web: ServedWeb, topic: Path, redis_url: str, work: Path,
    served_log: Path,
) -> tuple[Run, dict[str, str]]:  # fmt: skip
    """K processes on one fresh crawl; the served log's figures and the crawl's Redis stats."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    reset_crawl(client, CRAWL)
    env = crawl_env(web.proxy, redis_url, work)
    settings = settings_for(args, work, math.ceil(args.crawl / k))
    logs = [work / f"scaleout-{k}-{i}.log" for i in range(k)]
    clocks = [work / f"scaleout-{k}-{i}.cpu.json" for i in range(k)]
    commands = [focused_command(topic, {**settings, **cpu_settings(clock)}) for clock in clocks]
    began = time.time()
    procs = [start(command, env, log) for command, log in zip(commands, logs, strict=True)]
    wait_all(procs, logs)
    run = measure(f"{k} processes", served_log, began, time.time())
    run.cpu, run.pages_cpu = read_cpu(clocks)
    return run, client.hgetall(keys.prefix(CRAWL) + keys.STATS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", default="1,2,4", help="process counts to run")
    parser.add_argument("--crawl", type=int, default=3000, help="URLs fetched per crawl, total")
    parser.add_argument("--pages", type=int, default=6000, help="pages of the synthetic web")
    parser.add_argument("--hosts", type=int, default=200, help="hosts of the synthetic web")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("-s", "--set", action="append", metavar="KEY=VALUE")
    args = parser.parse_args()
    work = args.work.resolve()
    folder = ensure_web(work / f"web-{args.pages}-{args.hosts}", args.pages, args.hosts)
    topic = folder / "topic.toml"
    topic_model(load_topic(topic), str(work / "models"))  # train once, before any timing
    served_log = work / "scaleout-served.jsonl"
    served_log.unlink(missing_ok=True)
    print(f"{os.cpu_count()} CPUs; {args.crawl:,} URLs per crawl in all")
    rows = []
    with redis_server(work / "redis") as redis_url, ServedWeb(folder, log_path=served_log) as web:
        for k in (int(x) for x in args.procs.split(",")):
            run, stats = run_config(k, args, web, topic, redis_url, work, served_log)
            rows.append((k, run, stats))
            print(
                f"{k} processes: {run.pages:,} pages in {run.seconds:.1f} s,"
                f" {run.rate:.0f} pages/s, {run.duplicates} duplicate fetches",
                flush=True,
            )
    base = rows[0][1].rate
    print("\n| processes | pages served | seconds | pages/s | speed-up | duplicate fetches |"
          " fetched (Redis) | crawler CPU ms/page |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for k, run, stats in rows:
        print(
            f"| {k} | {run.pages:,} | {run.seconds:.1f} | {run.rate:.0f} | {run.rate / base:.2f}x |"
            f" {run.duplicates} | {stats.get('fetched', '0')} | {run.cpu_ms:.2f} |"
        )


if __name__ == "__main__":
    main()
