"""``focused evaluate``: Srinivasan et al. 2005's evaluation framework on a labelled offline web.

Every crawler but the oracle is a real ``scrapy crawl focused`` through the served bundle, and
every figure comes from what the server served (its log). Per topic: the crawlers' harvest,
target recall, share of the oracle's finds, similarity to the topic's examples, CPU per page
and pages per second; the crawl's own harvest (what its feed calls relevant) and how far that
is from the true one; the topic's difficulty; averages over the topics; PNG curves. The topics
are a task set (:data:`focused.lab.evaluation.tasks.TASK_SETS`): the development topics, the
validation categories, or categories given. A user's own topic file is one more crawler, named
after the file, on the one topic it is about. A crawler whose topic file or model cannot load
for a topic is not run there, and the report says why in one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from focused.errors import FocusedError
from focused.lab.evaluation.coverage import coverage_figures
from focused.lab.evaluation.graph import WebGraph
from focused.lab.evaluation.oracle import oracle_order
from focused.lab.evaluation.plots import plot_curves
from focused.lab.evaluation.report import averages, write_json
from focused.lab.evaluation.run import (
    CRAWLERS,
    DEFAULT_CRAWLERS,
    DEFAULT_SETTINGS,
    CrawlRun,
    crawl,
    fit_models,
    main_text_view,
    prepare,
    slug,
)
from focused.lab.evaluation.score import (
    FeedVerdicts,
    counted_pages,
    feed_verdicts,
    fetches_spent,
    measure,
    served_order,
    steps,
)
from focused.lab.evaluation.tasks import (
    TASK_SETS,
    Task,
    difficulty,
    load_tasks,
    parse_seeds_option,
)
from focused.lab.webs.bundle import Bundle
from focused.lab.webs.server import read_log
from focused.relevance.centroid import CentroidModel
from focused.settings import defaults
from focused.topic.files import load_topic

__all__ = ["evaluate", "score_crawls"]

ORACLE = "oracle"
ALL_CRAWLERS = (*CRAWLERS, ORACLE)
DEFAULT = (*DEFAULT_CRAWLERS, ORACLE)


def _similarity(graph: WebGraph, task: Task) -> Any:
    """Cosine of pages to the centroid of the topic's training pages, cached per page."""
    model = CentroidModel().fit([graph.texts.get(graph.key(url), "") for url in task.training])
    cache: dict[str, float] = {}

    def similarity(keys: Sequence[str]) -> list[float]:
        missing = [k for k in dict.fromkeys(keys) if k not in cache]
        if missing:
            values = model.relevance([graph.texts.get(k, "") for k in missing])
            cache.update(zip(missing, values.tolist(), strict=True))
        return [cache[k] for k in keys]

    return similarity


def _crawl_figures(run: CrawlRun, task: Task, pages: int) -> tuple[list[str], dict[str, Any]]:
    """The counted pages of a crawl and its cost figures: CPU and time per fetch (a 404 too
    is a fetch), and the fetches spent by each k of counted pages (``fetches_spent``)."""
    order = served_order(run.log, task.key)
    counted = counted_pages(order, task.skip, pages)
    fetched = sum(not entry["url"].endswith("/robots.txt") for entry in run.log)
    figures = {
        "exit_code": run.exit_code,
        "served": fetched,
        "seconds": run.seconds,
        "cpu_seconds": run.cpu_seconds,
        "cpu_per_page": round(run.cpu_seconds / fetched, 5) if fetched else None,
        "pages_per_s": round(fetched / run.log_span, 2) if run.log_span else None,
        # Chakrabarti et al. 1999's reconnaissance: how many of the crawl's top hubs are pages of
        # the topic
        "hubs": run.hubs,
        "hubs_on_topic": sum(task.key(url) in task.targets for url in run.hubs),
        **fetches_spent(run.log, counted, steps(pages), task.key),
    }
    return counted, figures


def _claimed(folder: Path, crawler: str, task: Task) -> FeedVerdicts:
    """What the crawl's own feed (``feed.jsonl`` of its folder, as ``run.crawl`` lays it out)
    says of its pages: those it calls relevant and their scores (:func:`feed_verdicts`), read
    once; complete lines only, as a killed crawl may leave the last one cut."""
    feed = folder / "crawls" / crawler / "feed.jsonl"
    return feed_verdicts(read_log(feed) if feed.exists() else [], task.key)


def score_crawls(
    graph: WebGraph, task: Task, pages: int, folder: Path, runs: Sequence[CrawlRun]
) -> dict[str, dict[str, Any]]:
    """The figures of ``task``'s crawls ``runs`` (in ``folder``, as ``run.crawl`` lays it out)
    and of the oracle (ORACLE), by run name, on their first ``pages`` counted pages: one
    scoring for ``evaluate`` and for benchmarks that crawl topics of their own. A crawl that
    estimated what is left to find has its estimates and their stop scored under
    ``coverage`` (:func:`~focused.lab.evaluation.coverage.coverage_figures`)."""
    ks = steps(pages)
    similarity = _similarity(graph, task)
    seeds = [task.key(url) for url in task.seeds]
    oracle = counted_pages(
        oracle_order(graph.links, seeds, task.targets, pages, task.skip), task.skip, pages
    )
    oracle_found = measure(oracle, task.targets, ks, similarity)["found_curve"]
    scored = {ORACLE: measure(oracle, task.targets, ks, similarity, oracle_found)}
    for run in runs:
        counted, cost = _crawl_figures(run, task, pages)
        verdicts = _claimed(folder, run.crawler, task)
        figures = measure(counted, task.targets, ks, similarity, oracle_found, verdicts)
        scored[run.crawler] = {**cost, **figures}
        coverage = coverage_figures(
            graph.links,
            served_order(run.log, task.key),
            task.relevant,
            task.targets,
            task.skip,
            run.estimates,
            pages,
            oracle_found[-1] if oracle_found else 0,
        )
        if coverage is not None:
            scored[run.crawler]["coverage"] = coverage
    return scored


def evaluate(
    bundle_path: Path,
    out: Path,
    *,
    topics: str = "all",
    crawlers: Sequence[str] = DEFAULT,
    pages: int = 300,
    seeds: str = "topics",
    settings: dict[str, str] | None = None,
    jobs: int = 1,
    console: Console | None = None,
    task_set: str = "development",
    categories: Sequence[str] = (),
    keywords: Mapping[str, Sequence[str]] | None = None,
    topic_file: Path | None = None,
) -> dict[str, Any]:
    """Run the evaluation on a task set (``load_tasks``: ``topics`` of it); write
    ``out/results.json`` and PNGs; return the results. ``keywords`` (category -> a user's
    keywords) replaces USER_KEYWORDS for the ``keywords`` crawlers. ``topic_file``, a user's
    own topic file, is crawled as it is (its seeds, method and limits) as one more crawler,
    named after the file, on the one topic of the task set, which it must be about.

    A crawler that cannot be prepared for a topic (``prepare``'s reason) gets
    ``{"error": reason}`` there instead of figures, is left out of that topic's averages and
    curves, and is listed under ``not_run``.
    """
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
    tasks = load_tasks(
        bundle, graph, topics, dist, task_set=task_set, categories=categories, keywords=keywords
    )
    own = None
    if topic_file is not None:
        load_topic(topic_file)  # a bad file is one line (TopicError) before any work
        if len(tasks) != 1:
            raise FocusedError(
                f"--topic-file: {len(tasks)} topics; name the one category the file is about"
                " with --topics or --categories"
            )
        topic_file, own = topic_file.resolve(), topic_file.name
        oracle = [ORACLE] if ORACLE in crawlers else []
        crawlers = [*(name for name in crawlers if name != ORACLE), own, *oracle]
    out = out.resolve()  # each crawl runs in a folder of its own: its paths must not be relative
    out.mkdir(parents=True, exist_ok=True)
    ks = steps(pages)
    real = [name for name in crawlers if name != ORACLE]
    folders: dict[str, Path] = {}
    problems: dict[str, dict[str, str]] = {}  # topic -> crawler -> why it cannot run
    results: list[dict[str, Any]] = []
    # Examples are classified as the crawls classify pages: the whole page or its main text.
    examples = bundle, graph
    classify = settings.get("FOCUSED_CLASSIFY_TEXT", defaults.FOCUSED_CLASSIFY_TEXT)
    if str(classify).strip().lower() == "main":
        with console.status("extracting the main text of every page, for the examples"):
            examples = main_text_view(bundle, graph)
    with console.status("preparing topics: taxonomies, examples, models, difficulty"):
        for task in tasks:
            folders[task.category] = out / slug(task.category)
            stock = [name for name in real if name != own]
            problems[task.category] = prepare(*examples, task, folders[task.category], stock)
            if topic_file is not None and (
                problem := fit_models(topic_file, folders[task.category])
            ):
                problems[task.category][topic_file.name] = problem
            results.append(
                {
                    "category": task.category,
                    "seeds": task.seeds,
                    "keywords": list(task.keywords),
                    "difficulty": difficulty(graph, task),
                    "crawlers": {},
                }
            )

    jobs_list = [
        (task, name) for task in tasks for name in real if name not in problems[task.category]
    ]
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
                topic=topic_file if name == own else None,
                key=task.key,
            )
            progress.remove_task(bar)
            progress.advance(overall)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for future in [pool.submit(one, task, name) for task, name in jobs_list]:
                future.result()

    for task, result in zip(tasks, results, strict=True):
        ran = [runs[task.category, name] for name in real if (task.category, name) in runs]
        scored = score_crawls(graph, task, pages, folders[task.category], ran)
        for name in crawlers:
            if name in problems[task.category]:
                result["crawlers"][name] = {"error": problems[task.category][name]}
            else:
                result["crawlers"][name] = scored[name]
        curves = {
            name: figures["found_curve"]
            for name, figures in result["crawlers"].items()
            if "error" not in figures
        }
        png = folders[task.category] / "curves.png"
        result["plot"] = str(plot_curves(curves, len(task.targets), task.category, png))

    report: dict[str, Any] = {
        "bundle": str(bundle_path),
        "pages": pages,
        "ks": ks,
        "seeds": seeds,
        "task_set": task_set,
        "task_set_description": TASK_SETS[task_set],
        "crawlers": list(crawlers),
        "not_run": {
            name: {t: problems[t][name] for t in problems if name in problems[t]}
            for name in crawlers
            if any(name in p for p in problems.values())
        },
        "settings": settings,
        "topics": results,
        "average": averages(results, crawlers),
        "notes": {
            "counting": "served log; pages only (2xx responses; a 404 is a fetch spent);"
            " robots.txt dropped; each page once, whatever spelling of it was fetched (the"
            " bundle's copies); seeds and training pages not counted",
            "fetches": "fetches, dead at k: every request served (robots.txt aside) until the"
            " k-th counted page's first response, and those that were no page (404s, errors);"
            " averaged as means over topics; dead_per_found: the topics' dead fetches over the"
            " targets they found by k, pooled",
            "harvest": "share of the first k counted pages that are targets (= target precision)",
            "own_harvest": "share of the first k counted pages that the crawl's feed marks"
            " relevant (a page missing from the feed: not relevant); none for the oracle",
            "calibration_gap": "|own_harvest - harvest| at k; averaged as the mean over topics"
            " of the absolute gaps",
            "verdicts": "verdict_precision, verdict_recall, verdict_f1 at k: of the first k"
            " counted pages, claimed = those the feed marks relevant (a page missing from the"
            " feed: not claimed), truth = the targets; precision = claimed targets / claimed"
            " (0 when nothing is claimed), recall = claimed targets / targets (0 when there are"
            " none), F1 = 2PR/(P+R) (0 when either is 0); none for the oracle",
            "reliability": "at k, the first k counted pages in 10 equal-width bins of the"
            " feed's score in [0, 1] (reliability_of: its 'probability' field if the feed has"
            " one, else 'relevance', R): per bin pages, relevant (truly relevant pages),"
            " predicted (mean score), share (relevant / pages); a page missing from the feed or"
            " without a score is left out and counted in unscored. ece = sum over bins of"
            " pages_b / pages * |predicted_b - share_b|. Averages: ece, the mean over topics;"
            " reliability, the topics' tables pooled (counts summed), and ece_pooled, its ECE",
            "auc": "ROC AUC of the score against the labels over the first k counted pages that"
            " have a score; null when they are all relevant or all not",
            "best_f1": "the F1 of claiming the pages scored at least t, for the best t, chosen"
            " knowing the labels: an upper bound of what a threshold on the score can do, not"
            " a figure a crawl can reach (recall against all targets of the first k pages)",
            "verdict_averages": "verdict_*, ece, auc, best_f1, unscored: means over the topics"
            " where defined (null where undefined on every topic)",
            "of_oracle": "targets found in the first k counted pages / the oracle's; averaged"
            " as the mean of the topics' ratios",
            "cpu_per_page": "user+system CPU seconds of the crawl process / URLs it fetched"
            " (Scrapy start-up, fetching, parsing, classifying, Redis client); model training"
            " and the web server excluded",
            "pages_per_s": "URLs served / seconds from the first to the last response",
            "coverage": "at each k of fetched pages (seeds included), the crawl's estimate of"
            " the relevant pages left made nearest k, against the labels: truth_left, the"
            " relevant pages reachable from the pages the first `pages` served link to without"
            " passing through those; truth_queued, the relevant pages they link to. stop:"
            " FOCUSED_CLOSE_COVERED simulated on the estimates; recall = targets found by"
            " then / the oracle's at the budget",
        },
    }
    report["average_plot"] = str(_plot_average(results, crawlers, out))
    write_json(report, out / "results.json")
    return report


def _plot_average(results: list[dict[str, Any]], crawlers: Sequence[str], out: Path) -> Path:
    """Mean curves over the topics a crawler ran in, each cut to the shortest one's length."""
    curves = {}
    for name in crawlers:
        found = [
            r["crawlers"][name]["found_curve"]
            for r in results
            if "error" not in r["crawlers"][name]
        ]
        if not found:
            continue
        n = min(map(len, found))
        curves[name] = np.mean([f[:n] for f in found], axis=0) if n else []
    targets = round(float(np.mean([r["difficulty"]["targets"] for r in results])))
    title = f"mean over {len(results)} topics (recall against {targets} targets, the mean)"
    return plot_curves(curves, targets, title, out / "curves.png")
