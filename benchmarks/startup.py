"""Crawl start-up: the CPU a ``scrapy crawl focused`` process spends on a crawl of a few pages.

    .venv/bin/python benchmarks/startup.py [--crawl 5] [--runs 3] [-s KEY=VALUE ...]

Every scrapyd job is such a process, so what it loads before its first page (imports, the
topic's models, WordNet, the word vectors) is paid once a job. The synthetic web of
``throughput.py`` (cached in --work) is served by its own process; its models are fitted once
before any timing, so the figure is a start with fitted models. Each run is one crawl of
--crawl pages, as shipped (classification, anchor glosses, word vectors, WARC, main text);
reported: the process's whole CPU time (user + system, from ``wait4``) and its CPU up to the
first response (``cpuclock.CpuClock``), the median of --runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import redis
from common import (
    DEFAULT_WORK,
    REPO,
    cpu_settings,
    crawl_env,
    ensure_web,
    focused_command,
    redis_server,
    set_options,
)

from focused.lab.webs.server import ServedWeb
from focused.store.admin import reset_crawl
from focused.topic.files import load_topic
from focused.topic.methods import topic_model

CRAWL = "bench-startup"


def one_crawl(
    topic: Path, work: Path, web: ServedWeb, redis_url: str, args: argparse.Namespace
) -> tuple[float, float]:
    """One crawl's whole CPU seconds and its CPU seconds before the first response."""
    reset_crawl(redis.Redis.from_url(redis_url), CRAWL)
    clock = work / "startup.cpu.json"
    clock.unlink(missing_ok=True)
    settings = {
        "FOCUSED_CRAWL": CRAWL,
        "FOCUSED_MODELS_DIR": work / "models",
        "CLOSESPIDER_ITEMCOUNT": args.crawl,
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
        **cpu_settings(clock),
        **set_options(args.set),
    }
    log = work / "startup.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            focused_command(topic, settings),
            env=crawl_env(web.proxy, redis_url, work),
            cwd=REPO,
            stdout=out,
            stderr=out,
        )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"crawl failed (exit {proc.returncode}), see {log}")
    whole = usage.ru_utime + usage.ru_stime
    after_first = json.loads(clock.read_text())["cpu"]
    return whole, whole - after_first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawl", type=int, default=5, help="pages fetched per crawl")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument(
        "-s", "--set", action="append", metavar="KEY=VALUE", help="a setting of the crawls"
    )
    args = parser.parse_args()
    work = args.work.resolve()
    folder = ensure_web(work / "web-6000-200", 6000, 200)
    topic = folder / "topic.toml"
    topic_model(load_topic(topic), str(work / "models"))  # fitted once, before any timing
    wholes, starts = [], []
    with redis_server(work / "redis") as redis_url, ServedWeb(folder) as web:
        for i in range(args.runs):
            whole, start = one_crawl(topic, work, web, redis_url, args)
            wholes.append(whole)
            starts.append(start)
            print(f"run {i + 1}: CPU {whole:.2f} s, {start:.2f} s of it before the first page")
    print(
        f"median of {args.runs}: CPU {statistics.median(wholes):.2f} s a crawl of {args.crawl}"
        f" pages, {statistics.median(starts):.2f} s of it before the first page"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
