"""``focused evaluate``: seed 003's evaluation framework on a labelled offline web.

Every crawler but the oracle is a real ``scrapy crawl focused`` through the served bundle, and
every figure comes from what the server served (its log). Per topic: the crawlers' harvest,
target recall, share of the oracle's finds, similarity to the topic's examples, CPU per page
and pages per second; the topic's difficulty; averages over the topics; PNG curves.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from focused.errors import FocusedError
from focused.evaluation.graph import WebGraph
from focused.evaluation.oracle import oracle_order
from focused.evaluation.plots import plot_curves
from focused.evaluation.report import averages, tables, write_json
from focused.evaluation.run import CRAWLERS, DEFAULT_SETTINGS, CrawlRun, crawl, prepare, slug
from focused.evaluation.score import counted_pages, measure, served_order, steps
from focused.evaluation.tasks import Task, difficulty, load_tasks, parse_seeds_option
from focused.options import add_settings_argument, parse_settings
from focused.relevance.centroid import CentroidModel
from focused.webs.bundle import Bundle, url_key

__all__ = ["add_arguments", "evaluate", "run"]

ORACLE = "oracle"
ALL_CRAWLERS = (*CRAWLERS, ORACLE)


def _similarity(graph: WebGraph, task: Task) -> Any:
    """Cosine of pages to the centroid of the topic's training pages, cached per page."""
    model = CentroidModel().fit([graph.texts.get(url_key(url), "") for url in task.training])
    cache: dict[str, float] = {}

    def similarity(keys: Sequence[str]) -> list[float]:
        missing = [k for k in dict.fromkeys(keys) if k not in cache]
        if missing:
            values = model.relevance([graph.texts.get(k, "") for k in missing])
            cache.update(zip(missing, values.tolist(), strict=True))
        return [cache[k] for k in keys]

    return similarity


def _crawl_figures(run: CrawlRun, task: Task, pages: int) -> tuple[list[str], dict[str, Any]]:
    """The counted pages of a crawl and its cost figures."""
    order = served_order(run.log)
    fetched = len(order)  # every page the crawl paid for, seeds and training pages included
    figures = {
        "exit_code": run.exit_code,
        "served": fetched,
        "seconds": run.seconds,
        "cpu_seconds": run.cpu_seconds,
        "cpu_per_page": round(run.cpu_seconds / fetched, 5) if fetched else None,
        "pages_per_s": round(fetched / run.log_span, 2) if run.log_span else None,
    }
    return counted_pages(order, task.skip, pages), figures


def evaluate(
    bundle_path: Path,
    out: Path,
    *,
    topics: str = "all",
    crawlers: Sequence[str] = ALL_CRAWLERS,
    pages: int = 300,
    seeds: str = "topics",
    settings: dict[str, str] | None = None,
    jobs: int = 1,
    console: Console | None = None,
) -> dict[str, Any]:
    """Run the evaluation; write ``out/results.json`` and PNGs; return the results."""
    console = console or Console()
    unknown = [name for name in crawlers if name not in ALL_CRAWLERS]
    if unknown or not crawlers:
        raise FocusedError(
            f"--crawlers: unknown crawler {(unknown or [''])[0]!r};"
            f" known: {', '.join(ALL_CRAWLERS)}"
        )
    if pages < 1 or jobs < 1:
        raise FocusedError("--pages and --jobs must be at least 1")
    dist = parse_seeds_option(seeds)
    settings = {**DEFAULT_SETTINGS, **(settings or {})}
    bundle = Bundle.load(bundle_path)
    with console.status("reading the bundle's links and texts"):
        graph = WebGraph.from_bundle(bundle)
    tasks = load_tasks(bundle, graph, topics, dist)
    out.mkdir(parents=True, exist_ok=True)
    ks = steps(pages)
    folders: dict[str, Path] = {}
    results: list[dict[str, Any]] = []
    with console.status("preparing topics: taxonomies, examples, models, difficulty"):
        for task in tasks:
            folders[task.category] = prepare(bundle, graph, task, out / slug(task.category))
            results.append(
                {
                    "category": task.category,
                    "seeds": task.seeds,
                    "difficulty": difficulty(graph, task),
                    "crawlers": {},
                }
            )

    real = [name for name in crawlers if name != ORACLE]
    jobs_list = [(task, name) for task in tasks for name in real]
    runs: dict[tuple[str, str], CrawlRun] = {}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=console) as progress:
        overall = progress.add_task("crawls", total=len(jobs_list))

        def one(task: Task, name: str) -> None:
            items = pages + len(task.skip)
            bar = progress.add_task(f"  {task.category} · {name}", total=items)
            runs[task.category, name] = crawl(
                bundle.path,
                folders[task.category],
                name,
                settings,
                items,
                lambda served: progress.update(bar, completed=min(served, items)),
            )
            progress.remove_task(bar)
            progress.advance(overall)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for future in [pool.submit(one, task, name) for task, name in jobs_list]:
                future.result()

    for task, result in zip(tasks, results, strict=True):
        similarity = _similarity(graph, task)
        oracle = counted_pages(
            oracle_order(
                graph.links, [url_key(url) for url in task.seeds], task.targets, pages, task.skip
            ),
            task.skip,
            pages,
        )
        oracle_found = measure(oracle, task.targets, ks, similarity)["found_curve"]
        for name in crawlers:
            if name == ORACLE:
                counted, cost = oracle, {}
            else:
                counted, cost = _crawl_figures(runs[task.category, name], task, pages)
            figures = measure(counted, task.targets, ks, similarity, oracle_found)
            result["crawlers"][name] = {**cost, **figures}
        curves = {name: result["crawlers"][name]["found_curve"] for name in crawlers}
        png = folders[task.category] / "curves.png"
        result["plot"] = str(plot_curves(curves, len(task.targets), task.category, png))

    report: dict[str, Any] = {
        "bundle": str(bundle_path),
        "pages": pages,
        "ks": ks,
        "seeds": seeds,
        "crawlers": list(crawlers),
        "settings": settings,
        "topics": results,
        "average": averages(results, crawlers),
        "notes": {
            "counting": "served log; robots.txt dropped; each URL once; seeds and training"
            " pages not counted",
            "harvest": "share of the first k counted pages that are targets (= target precision)",
            "cpu_per_page": "user+system CPU seconds of the crawl process / URLs it fetched"
            " (Scrapy start-up, fetching, parsing, classifying, Redis client); model training"
            " and the web server excluded",
            "pages_per_s": "URLs served / seconds from the first to the last response",
        },
    }
    report["average_plot"] = str(_plot_average(results, crawlers, out))
    write_json(report, out / "results.json")
    return report


def _plot_average(results: list[dict[str, Any]], crawlers: Sequence[str], out: Path) -> Path:
    """Mean curves over topics, each curve cut to the shortest topic's length."""
    curves = {}
    for name in crawlers:
        found = [r["crawlers"][name]["found_curve"] for r in results]
        n = min(map(len, found))
        curves[name] = np.mean([f[:n] for f in found], axis=0) if n else []
    targets = round(float(np.mean([r["difficulty"]["targets"] for r in results])))
    title = f"mean over {len(results)} topics (recall against {targets} targets, the mean)"
    return plot_curves(curves, targets, title, out / "curves.png")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``evaluate`` arguments."""
    parser.add_argument("bundle", type=Path, help="labelled bundle (labels.tsv, topics.json)")
    parser.add_argument("--topics", default="all", help="'all' or categories, comma-separated")
    parser.add_argument("--pages", type=int, default=300, help="counted pages per crawl")
    parser.add_argument(
        "--crawlers",
        default=",".join(ALL_CRAWLERS),
        help=f"comma-separated, of: {', '.join(ALL_CRAWLERS)}",
    )
    parser.add_argument(
        "--seeds",
        default="topics",
        help="'topics' (topics.json's seeds) or 'dist:N' (pages N links back from the targets)",
    )
    parser.add_argument("--out", type=Path, default=Path("evaluation"), help="output folder")
    add_settings_argument(
        parser,
        "a Scrapy setting for every crawl (repeatable); the baselines keep their own"
        " FOCUSED_STRATEGY and FOCUSED_LINK_SCORE",
    )
    parser.add_argument("--jobs", type=int, default=1, help="crawls run at the same time")


def run(args: argparse.Namespace) -> int:
    """Evaluate as ``args`` say, print the tables; 1 if a crawl failed, else 0."""
    # Wide enough for the tables when the output goes to a file.
    console = Console() if sys.stdout.isatty() else Console(width=140)
    report = evaluate(
        args.bundle,
        args.out,
        topics=args.topics,
        crawlers=[name.strip() for name in args.crawlers.split(",") if name.strip()],
        pages=args.pages,
        seeds=args.seeds,
        settings=parse_settings(args.set),
        jobs=args.jobs,
        console=console,
    )
    for table in tables(report):
        console.print(table)
    console.print(f"results in {args.out / 'results.json'}, curves in {args.out}/**/curves.png")
    failed = [
        f"{t['category']} ({name})"
        for t in report["topics"]
        for name, r in t["crawlers"].items()
        if name != ORACLE and (r["exit_code"] != 0 or not r["served"])
    ]
    if failed:
        console.print(f"crawl failed for {', '.join(failed)}: see its crawl.log", markup=False)
        return 1
    return 0
