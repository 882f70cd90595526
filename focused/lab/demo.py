"""``focused demo``: a focused crawl of a synthetic offline web against a breadth-first one.

Generates (or reuses) a synthetic topical web under FOCUSED_HOME, serves it on 127.0.0.1,
and runs two real ``scrapy crawl focused`` processes through it on the embedded Redis: the
topic's soft-focus crawl and a breadth-first crawl from the same seeds. Harvest is scored
against the web's own labels (ground truth), not the crawler's opinion of its pages.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from focused.errors import FocusedError
from focused.lab.crawlproc import crawl_command, crawl_env
from focused.lab.webs.bundle import Bundle
from focused.lab.webs.generate import generate_web
from focused.lab.webs.labels import within
from focused.lab.webs.server import ServedWeb
from focused.monitor.snapshot import crawl_snapshot, crawl_status, plot_harvest
from focused.store.admin import reset_crawl
from focused.store.client import connect
from focused.store.embedded import home_dir
from focused.store.reads import Reader
from focused.topic.files import load_topic

CRAWLERS = (("focused (soft focus)", "demo", ""), ("breadth-first", "demo-bfs", "breadth-first"))
CHECKPOINTS = (50, 100, 250, 500, 1000, 2000)
# Both crawls stop once their topic looks covered (``-s`` overrides it): the demo's topic has
# about 270 pages in its web, so the focused crawl finds them long before its page limit.
DEMO_SETTINGS = {"FOCUSED_CLOSE_COVERED": "0.9"}


def crawl(
    topic: Path,
    crawl_name: str,
    strategy: str,
    pages: int,
    proxy: str,
    home: Path,
    out: Path,
    progress: Progress,
    settings: Mapping[str, str],
) -> Path:
    """One ``scrapy crawl focused`` subprocess; returns its feed (JSON lines)."""
    feed = out / f"{crawl_name}.jsonl"
    feed.unlink(missing_ok=True)
    options = {
        "FOCUSED_CRAWL": crawl_name,
        "FOCUSED_STRATEGY": strategy,
        "CLOSESPIDER_ITEMCOUNT": pages,
        "FOCUSED_LISTS_DIR": str(out / "lists"),
        "LOG_LEVEL": "WARNING",
        **DEMO_SETTINGS,
        **settings,
    }
    command = crawl_command(topic, options, feed)
    client = connect(home=home)
    reader = Reader(client)
    reset_crawl(client, crawl_name)
    task = progress.add_task(crawl_name, total=pages)
    log = out / f"{crawl_name}.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            command, env=crawl_env(proxy, home), stderr=stderr, stdout=subprocess.DEVNULL
        )
        while process.poll() is None:
            progress.update(task, completed=pages_done(reader, crawl_name))
            time.sleep(0.3)
    if process.returncode != 0:
        tail = log.read_text().strip().splitlines()[-1:] or ["no output"]
        raise FocusedError(f"the {crawl_name} crawl failed ({log}): {tail[0]}")
    # The bar ends where the crawl did: a crawl that stopped early ends short of its limit.
    progress.update(task, completed=pages_done(reader, crawl_name))
    return feed


def pages_done(reader: Reader, crawl_name: str) -> int:
    """The pages a crawl has finished, fetched or failed: what its bar and its ending count."""
    return finished(crawl_status(reader, crawl_name))


def finished(status: Mapping[str, Any]) -> int:
    """The pages fetched or failed of a crawl's status or snapshot."""
    return int(status.get("fetched", 0)) + int(status.get("failed", 0))


def command_name() -> str:
    """How to call ``focused`` again from here: ``focused`` when that is what the PATH finds,
    else the path the user ran (``.venv/bin/focused``)."""
    ran = Path(sys.argv[0])
    if ran.name != "focused":  # python -m focused.cli.main
        return "focused"
    found = shutil.which("focused")
    if found and Path(found).resolve() == ran.resolve():
        return "focused"
    try:
        return str(ran.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(ran)


def harvest_curve(feed: Path, bundle: Bundle, category: str, skip: set[str]) -> list[bool]:
    """Whether each fetched page (seeds and bad pages left out) is on the topic by the web's
    labels."""
    on_topic = []
    for line in feed.read_text().splitlines():
        page = json.loads(line)
        if page["url"] in skip or page["status"] != 200:
            continue
        labels = bundle.categories(page["url"])
        on_topic.append(any(within(c, category) for c in labels))
    return on_topic


def ending(label: str, snapshot: Mapping[str, Any]) -> str:
    """How a demo crawl ended, in words, from its snapshot (:func:`crawl_snapshot`)."""
    why = {
        "focused_covered": "as its topic looks covered",
        "closespider_itemcount": "at its page limit",
    }.get(snapshot.get("finish_reason") or "", f"({snapshot.get('finish_reason')})")
    line = f"{label}: stopped after {finished(snapshot)} pages {why}"
    if coverage := snapshot.get("coverage"):
        in_reach = coverage["found"] + coverage["left"]
        line += f" ({coverage['found']:.0f} relevant found of about {in_reach:.0f} in reach)"
    return line


def run_demo(
    pages: int = 1000, home: str | None = None, settings: Mapping[str, str] | None = None
) -> int:
    console = Console()
    home_folder = home_dir(home).resolve()
    web = home_folder / "demo-web"
    if not (web / "topic.toml").exists():
        console.print(f"Generating a synthetic web in {web} ...")
        generate_web(web, n_pages=3000, n_hosts=150, seed=0, overwrite=True)
    topic = load_topic(web / "topic.toml")
    bundle = Bundle.load(web)
    category = topic.relevance["good"][0]
    out = home_folder / "demo"
    out.mkdir(parents=True, exist_ok=True)
    console.print(
        f"Crawling a web of {len(bundle.pages):,} pages from {len(topic.seeds)} seeds for topic "
        f"[bold]{category}[/bold], up to {pages:,} pages per crawler ..."
    )
    curves, endings = {}, []
    with (
        ServedWeb(web, log_path=out / "served.jsonl") as served,
        Progress(
            TextColumn("{task.description:<10}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        ) as progress,
    ):
        for label, name, strategy in CRAWLERS:
            feed = crawl(
                topic.path,
                name,
                strategy,
                pages,
                served.proxy,
                home_folder,
                out,
                progress,
                settings or {},
            )
            curves[label] = harvest_curve(feed, bundle, category, set(topic.seeds))
            endings.append(ending(label, crawl_snapshot(Reader(connect(home=home_folder)), name)))
    table = Table(
        title=f"Harvest on '{category}' (share of fetched pages on the topic)",
        caption=f"pages counted in the order fetched; the {len(topic.seeds)} seeds and pages "
        "that failed left out",
    )
    table.add_column("pages counted", justify="right")
    for label in curves:
        table.add_column(label, justify="right")
    shortest = min(len(curve) for curve in curves.values())
    for k in [k for k in CHECKPOINTS if k < shortest] + [shortest]:
        table.add_row(str(k), *(f"{sum(c[:k]) / k:.2f}" for c in curves.values()))
    console.print(table)
    for line in endings:
        console.print(line)
    plot = plot_harvest(
        {
            label: [(k, sum(c[:k]) / k) for k in range(10, len(c) + 1, 10)]
            for label, c in curves.items()
        },
        out / "harvest.png",
        f"Share of fetched pages on '{category}' (by the web's labels)",
    )
    console.print(f"Harvest curves plotted in {plot}")
    command = command_name()
    console.print(
        f"Feeds, logs and the lists of good hubs and sites in {out}; `{command} status demo` "
        f"shows the crawl's state in Redis, `{command} hubs demo` its best hubs."
    )
    return 0
