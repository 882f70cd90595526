"""``focused evaluate``: the command side of the evaluation (:mod:`focused.lab.evaluation`),
its options and the tables it prints."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from focused.cli.options import add_settings_argument, parse_settings
from focused.lab.evaluation.evaluate import ALL_CRAWLERS, DEFAULT, ORACLE, evaluate
from focused.lab.evaluation.report import not_run_lines, tables
from focused.lab.evaluation.tasks import VALIDATION_CATEGORIES, read_keywords


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``evaluate`` arguments."""
    parser.add_argument("bundle", type=Path, help="labelled bundle (labels.tsv, topics.json)")
    parser.add_argument(
        "--topics",
        default="all",
        help="'all' or categories of the task set, comma-separated",
    )
    tasks = parser.add_mutually_exclusive_group()
    tasks.add_argument(
        "--validation",
        action="store_true",
        help=f"the {len(VALIDATION_CATEGORIES)} validation categories (not in topics.json;"
        " seeds and training pages drawn as topics.json's) instead of the development topics",
    )
    tasks.add_argument(
        "--categories",
        metavar="CAT,...",
        help="any categories of the labels, comma-separated, with seeds and training pages"
        " drawn as topics.json's",
    )
    parser.add_argument(
        "--keywords",
        type=Path,
        metavar="FILE",
        help='a TOML file of a user\'s keywords by category ("Religion" = ["god", ...]) for'
        " the keywords crawlers, instead of the ones kept with the validation categories",
    )
    parser.add_argument(
        "--topic-file",
        type=Path,
        metavar="FILE",
        help="your own topic file, crawled as it is (its seeds, method and limits) as one more"
        " crawler named after the file, on the one topic it is about (--topics or --categories)",
    )
    parser.add_argument("--pages", type=int, default=300, help="counted pages per crawl")
    parser.add_argument(
        "--crawlers",
        default=",".join(DEFAULT),
        help=f"comma-separated, of: {', '.join(ALL_CRAWLERS)} (default: {','.join(DEFAULT)})",
    )
    parser.add_argument(
        "--seeds",
        default="topics",
        help="'topics' (the tasks' own seeds: topics.json's, or drawn as those were) or"
        " 'dist:N' (pages N links back from the targets)",
    )
    parser.add_argument("--out", type=Path, default=Path("evaluation"), help="output folder")
    add_settings_argument(
        parser,
        "a Scrapy setting for every crawl (repeatable); the baselines keep their own"
        " FOCUSED_STRATEGY, FOCUSED_LINK_SCORE and FOCUSED_LINK_MODEL",
    )
    parser.add_argument("--jobs", type=int, default=1, help="crawls run at the same time")


def run(args: argparse.Namespace) -> int:
    """Evaluate as ``args`` say, print the tables; 1 if a crawl failed, else 0."""
    # Wide enough for the tables when the output goes to a file.
    console = Console() if sys.stdout.isatty() else Console(width=140)
    task_set = "validation" if args.validation else "categories" if args.categories else None
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
        task_set=task_set or "development",
        categories=args.categories.split(",") if args.categories else (),
        keywords=read_keywords(args.keywords) if args.keywords else None,
        topic_file=args.topic_file,
    )
    for table in tables(report):
        console.print(table)
    for line in not_run_lines(report):
        console.print(line, markup=False, highlight=False)
    console.print(f"results in {args.out / 'results.json'}, curves in {args.out}/**/curves.png")
    failed = [
        f"{t['category']} ({name})"
        for t in report["topics"]
        for name, r in t["crawlers"].items()
        if name != ORACLE and "error" not in r and (r["exit_code"] != 0 or not r["served"])
    ]
    if failed:
        console.print(f"crawl failed for {', '.join(failed)}: see its crawl.log", markup=False)
    return 1 if failed or report["not_run"] else 0
