"""Real crawls for the evaluation: each crawler is a ``scrapy crawl focused`` subprocess
through its own served copy of the bundle, with a fresh FOCUSED_HOME (a fresh Redis)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from focused.crawlproc import crawl_command, crawl_env
from focused.evaluation.graph import WebGraph
from focused.evaluation.tasks import Task
from focused.pipelines.classify import topic_model
from focused.topic import load_topic
from focused.webs.bundle import Bundle, url_key
from focused.webs.labels import taxonomy_from_labels
from focused.webs.server import ServedWeb, read_log

__all__ = ["CRAWLERS", "DEFAULT_SETTINGS", "CrawlRun", "crawl", "prepare", "slug"]

# On top of the crawler's defaults for every crawl (``-s`` overrides them): a real parallel
# crawl that stays polite, spread over the hosts; the crawl's log goes to its folder.
DEFAULT_SETTINGS = {
    "CONCURRENT_REQUESTS": "4",
    "FOCUSED_HOST_DELAY": "0.5",
    "LOG_LEVEL": "WARNING",
}

# Crawler -> (its topic file, settings that make it that crawler; these win over ``-s``,
# which is meant for the project's own method). Breadth-first still classifies its pages
# (with the taxonomy), so its CPU per page includes that.
CRAWLERS: dict[str, tuple[str, dict[str, str]]] = {
    "taxonomy": ("taxonomy.toml", {}),
    "breadth-first": ("taxonomy.toml", {"FOCUSED_STRATEGY": "breadth-first"}),
    "best-first": ("best-first.toml", {"FOCUSED_STRATEGY": "soft", "FOCUSED_LINK_SCORE": "parent"}),
}


def slug(category: str) -> str:
    """A crawl name for a category: "Science/Biology/Birds" -> "science-biology-birds"."""
    return re.sub(r"[^a-z0-9]+", "-", category.lower()).strip("-")


@dataclass(frozen=True)
class CrawlRun:
    """What one crawl left: its exit code, the server's log entries, wall seconds, and the
    crawl process's CPU seconds."""

    crawler: str
    exit_code: int
    log: list[dict[str, Any]]
    seconds: float
    cpu_seconds: float
    log_span: float  # seconds from the first to the last response served


def prepare(bundle: Bundle, graph: WebGraph, task: Task, folder: Path) -> Path:
    """Write the topic's taxonomy, example pages and topic files into a fresh ``folder``, and
    train both models there, so no crawl spends its CPU time on training.

    The taxonomy comes from the labels (the topic's subtree from its training pages only,
    seeds never examples); best-first's examples are the training pages alone.
    """
    if folder.exists():
        shutil.rmtree(folder)  # a fresh folder is a fresh crawl (and a fresh Redis)
    folder.mkdir(parents=True)
    taxonomy_from_labels(
        bundle,
        folder / "taxonomy",
        topic_category=task.category,
        topic_examples=task.training,
        exclude=task.seeds,
    )
    examples = folder / "examples"
    examples.mkdir()
    for i, url in enumerate(task.training):
        text = graph.texts.get(url_key(url))
        if text:
            (examples / f"{i:03d}.txt").write_text(text, encoding="utf-8")
    seeds = "".join(f"    {json.dumps(url)},\n" for url in task.seeds)
    head = f'name = "{slug(task.category)}"\nseeds = [\n{seeds}]\nfocus = "soft"\n\n'
    (folder / "taxonomy.toml").write_text(
        f'{head}[relevance]\nmethod = "taxonomy"\ntaxonomy = "taxonomy"\n'
        f"good = [{json.dumps(task.category)}]\n",
        encoding="utf-8",
    )
    (folder / "best-first.toml").write_text(
        f'{head}[relevance]\nmethod = "centroid"\nexamples = "examples"\n', encoding="utf-8"
    )
    for name in ("taxonomy.toml", "best-first.toml"):
        topic_model(load_topic(folder / name), str(folder / "models"))
    return folder


def crawl(
    bundle_path: Path,
    folder: Path,
    crawler: str,
    settings: dict[str, str],
    items: int,
    on_progress: Callable[[int], None] | None = None,
) -> CrawlRun:
    """Run one crawler in ``folder/crawls/CRAWLER/`` until ``items`` URLs are fetched or its
    frontier is empty, through a served bundle logging to ``served.jsonl`` there.

    CPU time is the crawl process's user + system time, from ``os.wait4`` on that one child
    (so parallel crawls do not mix): Scrapy start-up, fetching, parsing, classifying, the
    Redis client, and the embedded Redis server if the crawl stopped it. Not the web server
    (another process), not model training (done in ``prepare``). ``on_progress`` gets the
    number of responses served so far, about twice a second.
    """
    topic_file, own = CRAWLERS[crawler]
    run_dir = folder / "crawls" / crawler
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    log = run_dir / "served.jsonl"
    options = {**settings, **own, "CLOSESPIDER_ITEMCOUNT": str(items)}
    options["FOCUSED_MODELS_DIR"] = str(folder / "models")
    command = crawl_command(folder / topic_file, options, run_dir / "feed.jsonl")
    started = time.perf_counter()
    with (
        ServedWeb(bundle_path, log_path=log) as web,
        (run_dir / "crawl.log").open("w", encoding="utf-8") as stderr,
    ):
        process = subprocess.Popen(
            command,
            env=crawl_env(web.proxy, run_dir / ".focused"),
            cwd=run_dir,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            while True:
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    break
                if on_progress is not None and log.exists():
                    on_progress(_count_lines(log))
                time.sleep(0.5)
        except BaseException:
            process.kill()
            process.wait()
            raise
        process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    entries = read_log(log) if log.exists() else []
    span = entries[-1]["time"] - entries[0]["time"] if len(entries) > 1 else 0.0
    return CrawlRun(
        crawler,
        process.returncode,
        entries,
        round(seconds, 2),
        round(usage.ru_utime + usage.ru_stime, 2),
        round(span, 2),
    )


def _count_lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 16), b""))
