"""The crawl's verdicts on a labelled bundle's pages, offline: what each method's judge calls
relevant, against the labels, without a crawl.

    .venv/bin/python benchmarks/verdicts.py [--bundle ../shared/webs/webkb]
        [--hosts cornell.edu,utexas.edu] [--topics all] [--methods taxonomy,positives,keywords]
        [--work /tmp/focused-bench/verdicts] [-s FOCUSED_PAGE_SHAPE=False ...] [--json FILE]

Per development task of the bundle, the topic files of ``focused evaluate``'s crawlers are
written and fitted as the evaluation writes them (focused.lab.evaluation.run.prepare, in
``--work``). Then each method's judge, built as a crawl builds it (Judge.from_plan with the
project's defaults and the ``-s`` settings), judges the task's seeds (depth 0) and then every
page of the bundle on ``--hosts`` (its canonical spelling only: Bundle.copies; all hosts
without ``--hosts``), parsed as the spider parses it, in one fixed random order. Printed per
task and method, and on average per method: the AUC of R and the best F1 of any threshold on it
(what the words and shape can tell), the verdicts' precision, recall and F1 (what the judge
calls relevant), and how many pages it called relevant of those labelled with the topic.

On WebKB this is the verdict of a crawl that fetched every Cornell and Texas page: a crawl's
verdicts (``focused evaluate``'s verdict F1) are on the pages it fetched, a tenth of them, so the
two differ; this takes a minute, a crawl of all four topics a quarter of an hour.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from focused.items import Page, PageLink
from focused.lab.evaluation.graph import WebGraph
from focused.lab.evaluation.run import prepare
from focused.lab.evaluation.tasks import load_tasks
from focused.lab.webs.bundle import Bundle
from focused.lab.webs.labels import within
from focused.links.extract import extract_links
from focused.relevance.text import page_text
from focused.settings import defaults
from focused.topic.files import load_topic
from focused.topic.judge import Judge
from focused.topic.plan import CrawlPlan

DEFAULT_WORK = Path("/tmp/focused-bench/verdicts")


def parsed_page(url: str, body: bytes, depth: int = 1) -> Page:
    """A page as the spider yields it: title, text and out-links with anchors."""
    response = HtmlResponse(url, body=body, encoding="utf-8")
    text = page_text(response.selector.root)
    links = [PageLink(*link) for link in extract_links(response)]
    return Page(url, 200, 0.0, depth=depth, title=text.title, text=text.text, links=links)


def bundle_pages(bundle: Bundle, hosts: Sequence[str] = ()) -> list[Page]:
    """The bundle's HTML pages on ``hosts`` (domain suffixes; all without), each once."""
    pages = []
    for key, page in sorted(bundle.pages.items()):
        host = key.split("/")[2]
        if key in bundle.copies or page.status != 200:
            continue
        if hosts and not any(host == h or host.endswith("." + h) for h in hosts):
            continue
        pages.append(parsed_page(page.url, page.body))
    return pages


def judge_of(topic_file: Path, settings: dict[str, Any]) -> Judge:
    """The judge a crawl of ``topic_file`` builds under the defaults and ``settings``."""
    defaults_ = {k: getattr(defaults, k) for k in dir(defaults) if k.startswith("FOCUSED_")}
    crawler = get_crawler(settings_dict={**defaults_, **settings})
    return Judge.from_plan(
        CrawlPlan.from_settings(crawler.settings, load_topic(topic_file)), crawler.settings
    )


def verdict_scores(r: Sequence[float], relevant: Sequence[bool], y: Sequence[bool]) -> dict:
    """AUC of R (ties count half) and its best F1 over thresholds (tied pages on the same
    side); the verdicts' precision, recall and F1, the pages called relevant and labelled."""
    r, called, y = np.asarray(r, float), np.asarray(relevant, bool), np.asarray(y, bool)
    pos, neg = r[y], r[~y]
    auc = (
        float(((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])).mean())
        if len(pos) and len(neg)
        else float("nan")
    )
    order = np.argsort(-r, kind="stable")
    hits, ranked = np.cumsum(y[order]), r[order]
    cuts = np.append(ranked[1:] != ranked[:-1], True)  # a threshold cannot split tied pages
    top = np.arange(1, len(r) + 1)
    best = float(np.max(2 * hits[cuts] / (top[cuts] + y.sum()))) if y.any() else 0.0
    tp = float((called & y).sum())
    precision, recall = tp / max(called.sum(), 1), tp / max(y.sum(), 1)
    f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
    return {
        "auc": auc,
        "best_f1": best,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "called": int(called.sum()),
        "labelled": int(y.sum()),
    }


def judge_all(judge: Judge, seeds: Sequence[Page], pages: Sequence[Page], seed: int = 0):
    """R and verdict of every page, judged after the seeds in a fixed random order (the
    judge's calibration and shape background grow with the pages it has judged)."""
    for page in seeds:
        judge(page)
    r, relevant = np.zeros(len(pages)), np.zeros(len(pages), bool)
    order = list(range(len(pages)))
    random.Random(seed).shuffle(order)
    for i in order:
        page = pages[i]
        verdict = judge(
            Page(
                page.url,
                200,
                0.0,
                depth=1,
                title=page.title,
                text=page.text,
                links=[PageLink(link.url, link.anchor, link.context) for link in page.links],
            )
        )
        r[i], relevant[i] = verdict.relevance, verdict.relevant
    return r, relevant


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    bundle = Bundle.load(args.bundle)
    graph = WebGraph.from_bundle(bundle)
    pages = bundle_pages(bundle, [h for h in args.hosts.split(",") if h])
    settings = dict(pair.split("=", 1) for pair in args.set)
    rows = []
    for task in load_tasks(bundle, graph, args.topics, None):
        folder = args.work / task.category.replace("/", "_")
        crawlers = args.methods.split(",")
        prepare(bundle, graph, task, folder, crawlers)
        y = [any(within(c, task.category) for c in bundle.categories(p.url)) for p in pages]
        seeds = [parsed_page(bundle.page(u).url, bundle.page(u).body, 0) for u in task.seeds]
        for method in crawlers:
            judge = judge_of(
                folder / f"{method}.toml",
                {**settings, "FOCUSED_MODELS_DIR": str(folder / "models")},
            )
            r, relevant = judge_all(judge, seeds, pages)
            rows.append(
                {"topic": task.category, "method": method, **verdict_scores(r, relevant, y)}
            )
            row = rows[-1]
            print(
                f"{task.category:10s} {method:10s} AUC {row['auc']:.3f}"
                f" best F1 {row['best_f1']:.3f}"
                f"  P {row['precision']:.2f} R {row['recall']:.2f} F1 {row['f1']:.3f}"
                f"  ({row['called']} called, {row['labelled']} labelled)",
                flush=True,
            )
    for method in args.methods.split(","):
        mine = [row for row in rows if row["method"] == method]
        means = {k: np.mean([row[k] for row in mine]) for k in ("auc", "best_f1", "f1")}
        print(
            f"{'mean':10s} {method:10s} AUC {means['auc']:.3f}"
            f" best F1 {means['best_f1']:.3f}  F1 {means['f1']:.3f}"
        )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=Path("../shared/webs/webkb"))
    parser.add_argument("--hosts", default="cornell.edu,utexas.edu")
    parser.add_argument("--topics", default="all")
    parser.add_argument("--methods", default="taxonomy,positives,keywords")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    rows = run(args)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    sys.exit(main())
