"""Crawl throughput, one process: this crawler against plain Scrapy and scrapy-redis.

    .venv/bin/python benchmarks/throughput.py [--pages 6000] [--hosts 200] [--crawl 2000]
                                              [--runs 2] [--concurrency 32]

A synthetic web (``focused.lab.webs.generate``) is generated once (cached in --work) and served by
its own process; each crawl is a subprocess of its own (its own reactor) reaching the web
through ``http_proxy``. Pages/s is counted from the served log, first to last response of a
run, robots.txt left out. Variants, run --runs times each, interleaved; the median is
reported:

- ``plain``: plain Scrapy, default scheduler and dupefilter, no Redis. The spider parses each
  page as ours does (``page_text`` and ``extract_links`` on the parsed tree), yields one item
  and a ``Request`` per out-link.
- ``scrapy-redis``: the same spider with scrapy-redis's Scheduler, RFPDupeFilter and
  PriorityQueue (SCHEDULER_PERSIST on) on the same Redis server as ours.
- ``ours-noclf``: ``scrapy crawl focused`` with its ClassifierPipeline switched off and the
  breadth-first strategy: frontier, leases, items and pipelines, but no classification.
- ``plain+clf``: the plain spider also scoring each page and its anchors with the same model
  (``score_pages`` on the page, ``relevance`` on its anchor texts), as our pipeline does.
- ``ours``: ``scrapy crawl focused`` as shipped (soft focus, anchor scores).

All: CONCURRENT_REQUESTS=--concurrency, no download delay, per-host concurrency unbounded
(ours: FOCUSED_HOST_DELAY=0, FOCUSED_HOST_CONCURRENCY=1000), ROBOTSTXT_OBEY=False, cookies
off, LOG_LEVEL=WARNING, CLOSESPIDER_ITEMCOUNT=--crawl (one item per fetched URL in all).
Redis: a fresh redis-server on a Unix socket (the embedded Redis's binary), or
FOCUSED_REDIS_URL.

Besides pages/s, each run reports the crawler's CPU milliseconds per page (process CPU time
from the first response to the spider's close, by the ``cpuclock.CpuClock`` extension) and the
Redis server's (INFO cpu). The crawlers are CPU-bound, so pages per CPU-second is what each
would reach on an idle core, and it hardly moves when other work shares the machine, while
pages/s does. It leaves out time the event loop spends blocked on Redis round trips (not
CPU), so it flatters scrapy-redis (about 27 blocking round trips a page) more than ours (one
or two). ``--profile`` runs each crawl under cProfile (WORK/VARIANT.prof).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis
import scrapy
from common import (
    DEFAULT_WORK,
    REPO,
    Run,
    cpu_settings,
    crawl_env,
    ensure_web,
    focused_command,
    measure,
    median_rate,
    median_run,
    read_cpu,
    redis_cpu_seconds,
    set_options,
    start,
    wait_all,
)
from scrapy.http import HtmlResponse, Response

from focused.lab.webs.server import ServedWeb
from focused.links.extract import extract_links
from focused.relevance.text import page_text
from focused.store.admin import reset_crawl
from focused.topic.files import load_topic
from focused.topic.methods import topic_model

VARIANTS = ("plain", "scrapy-redis", "ours-noclf", "plain+clf", "ours")
CRAWL = "bench-throughput"
BASE = {
    "ROBOTSTXT_OBEY": False,
    "DOWNLOAD_DELAY": 0,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 1000,
    "COOKIES_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "RETRY_TIMES": 2,
    "DOWNLOAD_TIMEOUT": 30,
    "USER_AGENT": "focused/0.1 (a focused crawler; +https://github.com/focused-crawler)",
}


class PlainSpider(scrapy.Spider):
    """The baseline spider: our parsing, a Request per out-link, optionally our classifier."""

    name = "plain"

    def __init__(self, topic: str, models: str = "", classify: str = "", **kwargs: Any):
        super().__init__(**kwargs)
        self.topic = load_topic(topic)
        self.model = topic_model(self.topic, models) if classify else None

    async def start(self) -> Any:
        for url in self.topic.seeds:
            yield scrapy.Request(url)

    def parse(self, response: Response) -> Iterator[Any]:
        if not isinstance(response, HtmlResponse):
            return
        text = page_text(response.selector.root)
        links = extract_links(response)
        item: dict[str, Any] = {"url": response.url, "title": text.title}
        if self.model is not None:
            relevance, category = self.model.score_pages([f"{text.title}\n{text.text}"])
            item["relevance"], item["category"] = float(relevance[0]), category[0]
            if links:
                item["link_scores"] = self.model.relevance([a for _, a, _ in links]).tolist()
        yield item
        for url, *_ in links:
            yield scrapy.Request(url, callback=self.parse)


def child(args: argparse.Namespace) -> None:
    """Run one plain or scrapy-redis crawl in this process."""
    from scrapy.crawler import CrawlerProcess

    settings = {
        **BASE,
        "CONCURRENT_REQUESTS": args.concurrency,
        "CLOSESPIDER_ITEMCOUNT": args.crawl,
        "EXTENSIONS": {"cpuclock.CpuClock": 0},
        "BENCH_CPU_FILE": args.cpu_file,
    }
    if args.child == "scrapy-redis":
        settings |= {
            "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
            "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
            "SCHEDULER_QUEUE_CLASS": "scrapy_redis.queue.PriorityQueue",
            "SCHEDULER_PERSIST": True,
            "REDIS_URL": args.redis_url,
        }
    process = CrawlerProcess(settings, install_root_handler=True)
    process.crawl(
        PlainSpider,
        topic=args.topic,
        models=args.models,
        classify="1" if args.child == "plain+clf" else "",
    )
    process.start()


def ours_settings(args: argparse.Namespace, models: Path, classify: bool) -> dict[str, Any]:
    """``-s`` settings of our crawl."""
    settings: dict[str, Any] = {
        **BASE,
        "FOCUSED_CRAWL": CRAWL,
        "FOCUSED_HOST_DELAY": 0,
        "FOCUSED_HOST_CONCURRENCY": 1000,
        "FOCUSED_MODELS_DIR": models,
        "CONCURRENT_REQUESTS": args.concurrency,
        "CLOSESPIDER_ITEMCOUNT": args.crawl,
    }
    settings.update(set_options(args.set))
    if not classify:
        off = {"focused.pipelines.classify.ClassifierPipeline": None}
        settings["ITEM_PIPELINES"] = json.dumps(off)
        settings["FOCUSED_STRATEGY"] = "breadth-first"
    return settings


def run_variant(
    variant: str,
    args: argparse.Namespace,
    web: ServedWeb,
    topic: Path,
    redis_url: str,
    work: Path,
    served_log: Path,
) -> Run:
    """One crawl of one variant; its figures from the served log."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    reset_crawl(client, CRAWL)
    client.delete("plain:requests", "plain:dupefilter")
    env = crawl_env(web.proxy, redis_url, work)
    models = work / "models"
    if variant.startswith("ours"):
        profile = work / f"{variant}.prof" if args.profile else None
        command = focused_command(topic, ours_settings(args, models, variant == "ours"), profile)
    else:
        profile = ["-m", "cProfile", "-o", str(work / f"{variant}.prof")] if args.profile else []
        command = [
            sys.executable, *profile, str(Path(__file__).resolve()),
            "--child", variant, "--topic", str(topic), "--models", str(models),
            "--crawl", str(args.crawl), "--concurrency", str(args.concurrency),
            "--redis-url", redis_url,
        ]  # fmt: skip
        env.pop("SCRAPY_SETTINGS_MODULE")
    clock = work / f"{variant}.cpu.json"
    clock.unlink(missing_ok=True)
    if variant.startswith("ours"):
        command += [
            x for key, value in cpu_settings(clock).items() for x in ("-s", f"{key}={value}")
        ]
    else:
        command += ["--cpu-file", str(clock)]
    log = work / f"{variant}.log"
    redis_before = redis_cpu_seconds(client)
    began = time.time()
    proc = start(command, env, log)
    wait_all([proc], [log])
    ended = time.time()
    redis_cpu = redis_cpu_seconds(client) - redis_before
    cpu, responses = read_cpu([clock])
    run = measure(variant, served_log, began, ended, cpu, redis_cpu)
    run.pages_cpu = responses
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=6000, help="pages of the synthetic web")
    parser.add_argument("--hosts", type=int, default=200, help="hosts of the synthetic web")
    parser.add_argument("--crawl", type=int, default=2000, help="URLs fetched per crawl")
    parser.add_argument("--runs", type=int, default=2, help="runs of each variant")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument(
        "--profile", action="store_true", help="run each crawl under cProfile: WORK/VARIANT.prof"
    )
    parser.add_argument(
        "-s", "--set", action="append", metavar="KEY=VALUE", help="a setting of our crawls"
    )
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    parser.add_argument("--models", help=argparse.SUPPRESS)
    parser.add_argument("--redis-url", help=argparse.SUPPRESS)
    parser.add_argument("--cpu-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    from common import redis_server

    variants = args.variants.split(",")
    work = args.work.resolve()
    folder = ensure_web(work / f"web-{args.pages}-{args.hosts}", args.pages, args.hosts)
    topic = folder / "topic.toml"
    topic_model(load_topic(topic), str(work / "models"))  # train once, before any timing
    served_log = work / "throughput-served.jsonl"
    served_log.unlink(missing_ok=True)
    runs: dict[str, list[Run]] = {v: [] for v in variants}
    with redis_server(work / "redis") as redis_url, ServedWeb(folder, log_path=served_log) as web:
        for i in range(args.runs):
            for variant in variants:
                run = run_variant(variant, args, web, topic, redis_url, work, served_log)
                runs[variant].append(run)
                print(
                    f"run {i + 1} {variant:13} {run.pages:6,} pages in {run.seconds:5.1f} s:"
                    f" {run.rate:6.1f} pages/s (wall {run.wall:.1f} s); crawler CPU"
                    f" {run.cpu_ms:.2f} ms/page, Redis CPU {run.redis_ms:.2f} ms/page",
                    flush=True,
                )
    report(runs, args)


def report(runs: dict[str, list[Run]], args: argparse.Namespace) -> None:
    """The median of each variant and the ratios the goals are stated in.

    Two measures: pages/s from the served log (what the goal names; noisy when other work
    shares the machine) and pages per crawler CPU-second (the crawler is CPU-bound, so this
    is its pages/s on an idle core, and it does not move with the machine's load).
    """
    print(
        f"\n{args.crawl:,} URLs per crawl, CONCURRENT_REQUESTS={args.concurrency}, "
        f"median of {args.runs} runs\n"
    )
    print(
        "| variant | pages/s (median) | runs | ratio to plain | crawler CPU ms/page |"
        " pages per CPU-s | ratio to plain (CPU) | Redis CPU ms/page |"
    )
    print("|---|---|---|---|---|---|---|---|")
    rates = {v: median_rate(r) for v, r in runs.items()}
    cpu = {v: statistics.median(x.cpu_ms for x in r) for v, r in runs.items()}
    redis_ms = {v: statistics.median(x.redis_ms for x in r) for v, r in runs.items()}
    plain = "plain" in rates
    for variant, variant_runs in runs.items():
        each = " / ".join(f"{r.rate:.0f}" for r in variant_runs)
        ratio = f"{rates[variant] / rates['plain']:.2f}x" if plain else "-"
        cpu_ratio = f"{cpu['plain'] / cpu[variant]:.2f}x" if plain else "-"
        print(
            f"| {variant} | {rates[variant]:.0f} | {each} | {ratio} | {cpu[variant]:.2f} |"
            f" {1000 / cpu[variant]:.0f} | {cpu_ratio} | {redis_ms[variant]:.3f} |"
        )
    pairs = [
        ("ours-noclf", "plain", "ours without classification / plain Scrapy (goal >= 0.85)"),
        ("scrapy-redis", "plain", "scrapy-redis / plain Scrapy"),
        ("ours", "plain+clf", "ours / plain Scrapy with the same classifier (goal >= 0.85)"),
        ("ours", "plain", "ours (classifying) / plain Scrapy (not classifying)"),
        ("ours-noclf", "scrapy-redis", "ours without classification / scrapy-redis"),
    ]
    print("\nratio: pages/s (served log) | pages per crawler CPU-second")
    for a, b, what in pairs:
        if a in rates and b in rates:
            print(f"{what}: {rates[a] / rates[b]:.2f} | {cpu[b] / cpu[a]:.2f}")
    for variant, variant_runs in runs.items():
        median = median_run(variant_runs)
        if median.duplicates:
            print(f"note: {variant} fetched {median.duplicates} URLs more than once")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
