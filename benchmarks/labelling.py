"""What ``focused label`` gains: crawl with a user's keywords, mark pages of that crawl good or
bad, crawl again with the examples topic the marks make; the bundle's labels mark the pages.

    .venv/bin/python benchmarks/labelling.py [--set validation|development] [--topics all|A,B]
        [--pages 250] [--labels 40] [--order best|uncertain] [--jobs 1]
        [--work /tmp/focused-bench/labelling] [--bundle ../shared/webs/wikispeedia]

Per task of the set (focused.lab.evaluation.tasks: the validation categories, or the
development topics), it does what docs/howto/label.md tells a user to do, with the crawls of
``focused evaluate`` (focused.lab.evaluation.run, one folder per task in ``--work``):

1. crawl the ``keywords`` crawler's topic (the users' keywords, USER_KEYWORDS) for ``--pages``
   counted pages, with ``-s FOCUSED_MAIN_TEXT=all`` so that every page of the feed has its
   main text;
2. mark the first ``--labels`` pages of that feed in the labelling page's order (``best``:
   highest R first, its default; ``uncertain``: R nearest the crawl's boundary first) good if
   the bundle labels them with the category, else bad, passing over seeds and training pages
   (never counted by the evaluation);
3. write the topic of these marks (focused.label.examples) from the keywords crawl's topic, as
   ``focused label --topic`` does: its keywords and seeds, the marked pages as its examples and
   negatives; fit its model, and crawl it for ``--pages`` counted pages with the evaluation's
   settings, as the how-to's second crawl (no ``FOCUSED_MAIN_TEXT``).

Both crawls are scored as ``focused evaluate`` scores its crawlers (``score_crawls``). One
table shows, per task and on average, each crawl's share of the oracle's relevant pages,
harvest, own harvest and calibration gap, its verdicts against the labels (precision, recall
and F1 of the pages its feed marks relevant, and the ECE of its score: ``score.measure``), and
CPU per page, with the marks the labelled crawl learnt from; ``--work``/labelling.json keeps
everything, the marks included. About a minute per crawl on Wikispeedia.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from common import DEFAULT_WORK
from rich.console import Console
from rich.table import Table
from wikispeedia import WIKISPEEDIA

from focused.cli.label import SUFFIX
from focused.lab.evaluation.evaluate import score_crawls
from focused.lab.evaluation.graph import WebGraph
from focused.lab.evaluation.report import averages, calibration_k, shown_ks, write_json
from focused.lab.evaluation.run import CRAWLERS, DEFAULT_SETTINGS, crawl, one_line, prepare, slug
from focused.lab.evaluation.score import steps
from focused.lab.evaluation.tasks import TASK_SETS, Task, load_tasks
from focused.lab.webs.bundle import Bundle, url_key
from focused.label.examples import MARKS, write_examples_topic, write_marks
from focused.label.feed import ORDERS, boundary, label_pages, order, read_feed
from focused.topic.files import load_topic
from focused.topic.methods import topic_model, vector_model

KEYWORDS, LABELLED = "keywords", "labelled"
CRAWLS = (KEYWORDS, LABELLED)
# The first crawl keeps every page's main text (the how-to's step 1): the text of the examples.
FIRST_CRAWL = {"FOCUSED_MAIN_TEXT": "all"}


def mark(items: Sequence[Mapping[str, Any]], task: Task, labels: int, how: str) -> dict[str, str]:
    """The marks of the first ``labels`` pages the labelling page lists for ``items`` in the
    order ``how`` (seeds and training pages passed over): "good" where the bundle labels the
    page with the task's category, else "bad"."""
    pages = label_pages(items)
    listed = (pages[i] for i in order(pages, how, boundary(items)))
    counted = [page.url for page in listed if url_key(page.url) not in task.skip][:labels]
    return {url: "good" if url_key(url) in task.relevant else "bad" for url in counted}


def run_task(
    bundle: Bundle,
    graph: WebGraph,
    task: Task,
    folder: Path,
    *,
    pages: int,
    labels: int,
    how: str,
    settings: Mapping[str, str],
) -> dict[str, Any]:
    """The keywords crawl, the marks and the labelled crawl of ``task`` in ``folder``, scored;
    the labelled crawl is ``{"error": why}`` where its topic cannot be fitted (too few good
    pages)."""
    problems = prepare(bundle, graph, task, folder, [KEYWORDS])
    if problems:
        raise RuntimeError(f"{task.category}: cannot prepare the keywords crawl: {problems}")
    items = pages + len(task.skip)  # as focused evaluate: seeds and training pages not counted
    runs = [crawl(bundle.path, folder, KEYWORDS, {**settings, **FIRST_CRAWL}, items)]
    feed, _ = read_feed(folder / "crawls" / KEYWORDS / "feed.jsonl")
    marks = mark(feed, task, labels, how)
    out = folder / (slug(task.category) + SUFFIX)
    original = load_topic(folder / CRAWLERS[KEYWORDS][0])
    topic_file = write_examples_topic(feed, marks, out, out.name, task.seeds, original=original)
    write_marks(out, marks)
    error = None
    try:
        topic = load_topic(topic_file)
        topic_model(topic, str(folder / "models"))  # fitted here, as prepare fits the others
        vector_model(topic, str(folder / "models"), "auto")
    except Exception as exc:  # e.g. no page marked good: this task has no labelled crawl
        error = one_line(exc)
    else:
        runs.append(crawl(bundle.path, folder, LABELLED, dict(settings), items, topic=topic_file))
    scored = score_crawls(graph, task, pages, folder, runs)
    if error:
        scored[LABELLED] = {"error": error}
    good = sum(m == "good" for m in marks.values())
    return {
        "category": task.category,
        "keywords": list(task.keywords),
        "marks": {"good": good, "bad": len(marks) - good, "order": how, "pages": marks},
        "topic": str(topic_file),
        "crawlers": scored,
    }


def table(report: dict[str, Any]) -> Table:
    """Per task and on average: each crawl's figures at the k of ``focused evaluate``'s tables
    (its verdicts at the calibration k), and the good and bad pages the labelled crawl learnt
    from."""
    harvest_ks, oracle_ks = shown_ks(report["ks"])
    own_k = calibration_k(report["ks"])
    columns = [("of_oracle", k) for k in oracle_ks] + [("harvest", k) for k in harvest_ks]
    columns += [("own_harvest", own_k), ("calibration_gap", own_k)]
    columns += [(m, own_k) for m in ("verdict_precision", "verdict_recall", "verdict_f1", "ece")]
    result = Table(
        title=f"Keywords, then {report['labels']} pages labelled ({report['order']} first),"
        f" {report['task_set']} set, {report['pages']} counted pages per crawl"
    )
    for header in ("topic", "crawl", "good / bad"):
        result.add_column(header, no_wrap=True)
    for measure, k in columns:
        words = measure.replace("_", "\n")  # "calibration\ngap": narrow columns
        result.add_column(f"{words}\n@{k}", justify="right")
    result.add_column("CPU ms\n/page", justify="right")

    def cells(figures: Mapping[str, Any]) -> list[str]:
        if "error" in figures:
            return ["not run"] + [""] * len(columns)
        values = [figures[m].get(k) for m, k in columns]
        cpu = figures["cpu_per_page"]
        return [*("-" if v is None else f"{v:.3f}" for v in values), f"{cpu * 1000:.1f}"]

    for topic in report["topics"]:
        marks = f"{topic['marks']['good']} / {topic['marks']['bad']}"
        for name in CRAWLS:
            first = name == KEYWORDS
            result.add_row(
                topic["category"] if first else "",
                name,
                "" if first else marks,
                *cells(topic["crawlers"][name]),
                end_section=not first,
            )
    mean = report["average"]
    n = len(report["topics"])
    marks = " / ".join(f"{sum(t['marks'][m] for t in report['topics']) / n:.1f}" for m in MARKS)
    for name in CRAWLS:
        first = name == KEYWORDS
        figures = mean[name] if mean[name]["topics"] else {"error": "no task"}
        result.add_row(
            f"mean ({mean[name]['topics']} tasks)" if first else "",
            name,
            "" if first else marks,
            *cells(figures),
            style="bold",
        )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bundle", type=Path, default=WIKISPEEDIA)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK / "labelling")
    parser.add_argument("--set", choices=("validation", "development"), default="validation")
    parser.add_argument("--topics", default="all", help="categories of the set, comma-separated")
    parser.add_argument("--pages", type=int, default=250, help="counted pages per crawl")
    parser.add_argument("--labels", type=int, default=40, help="pages marked per task")
    parser.add_argument("--order", choices=ORDERS, default="best", help="the labelling order")
    parser.add_argument("--jobs", type=int, default=1, help="tasks run at the same time")
    args = parser.parse_args()

    console = Console() if sys.stdout.isatty() else Console(width=160)
    bundle = Bundle.load(args.bundle)
    graph = WebGraph.from_bundle(bundle)
    tasks = load_tasks(bundle, graph, args.topics, None, task_set=args.set)
    work = args.work.resolve()  # each crawl runs in a folder of its own

    def one(task: Task) -> dict[str, Any]:
        console.print(f"{task.category}: crawling with keywords, labelling, crawling again")
        result = run_task(
            bundle,
            graph,
            task,
            work / slug(task.category),
            pages=args.pages,
            labels=args.labels,
            how=args.order,
            settings=DEFAULT_SETTINGS,
        )
        console.print(f"{task.category}: done")
        return result

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(one, tasks))
    report = {
        "bundle": str(args.bundle),
        "task_set": args.set,
        "task_set_description": TASK_SETS[args.set],
        "pages": args.pages,
        "ks": steps(args.pages),
        "labels": args.labels,
        "order": args.order,
        "settings": {
            KEYWORDS: {**DEFAULT_SETTINGS, **FIRST_CRAWL},
            LABELLED: dict(DEFAULT_SETTINGS),
        },
        "topics": results,
        "average": averages(results, CRAWLS),
    }
    console.print(table(report))
    for topic in results:
        for name in CRAWLS:
            figures = topic["crawlers"][name]
            if "error" in figures:
                console.print(f"{topic['category']}: {name} not run: {figures['error']}")
            elif figures["exit_code"] != 0 or not figures["served"]:
                console.print(f"{topic['category']}: the {name} crawl failed: see its crawl.log")
    console.print(f"results in {write_json(report, work / 'labelling.json')}")


if __name__ == "__main__":
    main()
