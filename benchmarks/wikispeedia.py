"""Harvest of real focused crawls on Wikispeedia, scored by what the server served.

For each development topic of the bundle's topics.json: a taxonomy is built from the bundle's
labels (``focused.webs.labels.taxonomy_from_labels``: the topic's subtree learns from the
topic's 30 training pages only, seeds are never examples), a soft-focus topic file is written,
and ``scrapy crawl focused`` runs through the served bundle until ``--pages`` URLs are fetched.
The score comes from the server's log, never from the crawler's feed: in serving order,
robots.txt dropped, each URL once, seeds and training pages dropped; harvest@k is the share of
the first k remaining pages labelled with the topic's category or one below it (the README's
counting rule). The table sets each topic next to the README's published breadth-first and
best-first figures (graph simulations).

    .venv/bin/python benchmarks/wikispeedia.py                       # nine topics, 300 pages
    .venv/bin/python benchmarks/wikispeedia.py --topics Music,Countries -s FOCUSED_LINK_SCORE=both

Crawl settings (each can be overridden with ``-s KEY=VALUE``), chosen once for all topics, on
top of the crawler's defaults, which include:

- ``FOCUSED_LINK_SCORE=anchor`` (the default): a link's estimate is R of its anchor text, which on
  Wikispeedia is the target's title. Measured averages at 100 / 250 pages: anchor .48 / .28,
  both (mean of parent and anchor) .42 / .25, parent .29 / .24. With ``both`` every out-link
  of a page with R = 1 scores at least 0.5, so the off-topic links of relevant pages outrank
  on-topic links found on pages the classifier missed (Chemical_elements: .18 / .07 against
  .62 / .31 with ``anchor``); with ``parent`` all links of a relevant page tie.
- ``CONCURRENT_REQUESTS=4``: pages in flight were chosen before the pages now arriving were
  scored, so fewer parallel fetches keep the order closer to true best-first. Measured, it
  hardly matters here (1, 4, 8: .48 / .28; 16: .47 / .28), as R is mostly 0 or 1 and the
  frontier's order is probably decided by large ties; 4 keeps a real parallel crawl.
- ``FOCUSED_HOST_DELAY=0.5``: politeness stays on, spreading the crawl over the 400 hosts;
  half a second rarely leaves the best URL waiting (1 s: .48 / .28 as well).
- ``LOG_LEVEL=WARNING``: each crawl's log goes to ``OUT/<topic>/crawl.log``.

Output: ``OUT/<topic>/`` holds the taxonomy, its trained model, topic.toml, the served log, the
crawler's feed and log; ``OUT/results.json`` the figures. A rerun replaces ``OUT/<topic>/``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from focused.errors import FocusedError
from focused.webs.bundle import Bundle, url_key
from focused.webs.labels import taxonomy_from_labels
from focused.webs.server import ServedWeb, read_log

# ../shared/webs/wikispeedia beside the checkout.
WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "webs" / "wikispeedia"
KS = (100, 250, 500, 1000)
DEFAULT_SETTINGS = {
    "CONCURRENT_REQUESTS": "4",
    "FOCUSED_HOST_DELAY": "0.5",
    "LOG_LEVEL": "WARNING",
}

# The README's table (/work/shared/webs/wikispeedia/README.md, "What the simple crawlers get
# here"): harvest at 100 / 250 / 500 / 1000 pages in a graph simulation of each crawler.
PUBLISHED: dict[str, dict[str, tuple[float, float, float, float]]] = {
    "Science/Biology/Birds": {
        "breadth-first": (0.11, 0.05, 0.07, 0.04),
        "best-first": (0.11, 0.19, 0.16, 0.09),
    },
    "Science/Chemistry/Chemical_elements": {
        "breadth-first": (0.28, 0.32, 0.16, 0.08),
        "best-first": (0.26, 0.28, 0.16, 0.08),
    },
    "Science/Physics/Space_Astronomy": {
        "breadth-first": (0.24, 0.12, 0.06, 0.05),
        "best-first": (0.23, 0.20, 0.12, 0.06),
    },
    "History/British_History": {
        "breadth-first": (0.25, 0.17, 0.09, 0.07),
        "best-first": (0.26, 0.20, 0.13, 0.08),
    },
    "Citizenship/Politics_and_government": {
        "breadth-first": (0.10, 0.07, 0.05, 0.04),
        "best-first": (0.13, 0.09, 0.06, 0.04),
    },
    "Design_and_Technology/Railway_transport": {
        "breadth-first": (0.07, 0.03, 0.01, 0.02),
        "best-first": (0.14, 0.10, 0.05, 0.03),
    },
    "Music": {
        "breadth-first": (0.17, 0.08, 0.05, 0.03),
        "best-first": (0.14, 0.14, 0.09, 0.05),
    },
    "Science/Biology": {
        "breadth-first": (0.31, 0.33, 0.26, 0.16),
        "best-first": (0.19, 0.26, 0.30, 0.32),
    },
    "Countries": {
        "breadth-first": (0.58, 0.39, 0.28, 0.16),
        "best-first": (0.61, 0.48, 0.33, 0.18),
    },
}
BASELINES = ("best-first", "breadth-first")


def slug(category: str) -> str:
    """A crawl name for a category: "Science/Biology/Birds" -> "science-biology-birds"."""
    return re.sub(r"[^a-z0-9]+", "-", category.lower()).strip("-")


def write_topic(path: Path, topic: dict[str, Any]) -> Path:
    """The soft-focus topic file of a development topic, next to its ``taxonomy`` folder."""
    seeds = "".join(f"    {json.dumps(url)},\n" for url in topic["seeds"])
    path.write_text(
        f'name = "{slug(topic["category"])}"\nseeds = [\n{seeds}]\nfocus = "soft"\n\n'
        f'[relevance]\nmethod = "taxonomy"\ntaxonomy = "taxonomy"\n'
        f"good = [{json.dumps(topic['category'])}]\n",
        encoding="utf-8",
    )
    return path


def score(bundle: Bundle, log: list[dict[str, Any]], topic: dict[str, Any]) -> dict[str, Any]:
    """Harvest@k of a served log under the README's counting rule."""
    skip = {url_key(url) for url in (*topic["seeds"], *topic["training"])}
    category = topic["category"]
    seen: set[str] = set()
    hits: list[bool] = []
    for entry in log:
        key = url_key(entry["url"])
        if key.endswith("/robots.txt") or key in seen:
            continue
        seen.add(key)
        if key not in skip:
            paths = bundle.categories(key)
            hits.append(any(p == category or p.startswith(category + "/") for p in paths))
    return {
        "served": len(seen),
        "counted": len(hits),
        "relevant": sum(hits),
        "harvest": {str(k): round(sum(hits[:k]) / k, 4) for k in KS if len(hits) >= k},
    }


def crawl(
    bundle_path: Path, run_dir: Path, topic_toml: Path, settings: dict[str, str]
) -> tuple[int, Path]:
    """Run one ``scrapy crawl focused`` through a served bundle; (exit code, served log)."""
    log = run_dir / "served.jsonl"
    options = [arg for key, value in settings.items() for arg in ("-s", f"{key}={value}")]
    with (
        ServedWeb(bundle_path, log_path=log) as web,
        (run_dir / "crawl.log").open("w", encoding="utf-8") as stderr,
    ):
        env = {
            **os.environ,
            "http_proxy": web.proxy,
            "SCRAPY_SETTINGS_MODULE": "focused.settings",
            "FOCUSED_HOME": str(run_dir / ".focused"),
        }
        command = [sys.executable, "-m", "scrapy", "crawl", "focused"]
        command += ["-a", f"topic={topic_toml}", "-s", f"FOCUSED_MODELS_DIR={run_dir / 'models'}"]
        command += [*options, "-o", f"{run_dir / 'feed.jsonl'}:jsonlines"]
        done = subprocess.run(command, env=env, cwd=run_dir, stderr=stderr, check=False)
    return done.returncode, log


def run_topic(
    bundle: Bundle, topic: dict[str, Any], out: Path, settings: dict[str, str]
) -> dict[str, Any]:
    """Build the topic's taxonomy and topic file, crawl, and score the served log."""
    run_dir = out / slug(topic["category"])
    if run_dir.exists():
        shutil.rmtree(run_dir)  # a fresh folder is a fresh crawl (and a fresh Redis)
    run_dir.mkdir(parents=True)
    taxonomy_from_labels(
        bundle,
        run_dir / "taxonomy",
        topic_category=topic["category"],
        topic_examples=topic["training"],
        exclude=topic["seeds"],
    )
    topic_toml = write_topic(run_dir / "topic.toml", topic)
    started = time.perf_counter()
    code, log = crawl(bundle.path, run_dir, topic_toml, settings)
    result = {"category": topic["category"], "exit_code": code}
    result["seconds"] = round(time.perf_counter() - started, 1)
    result.update(score(bundle, read_log(log) if log.exists() else [], topic))
    result["published"] = {
        name: PUBLISHED.get(topic["category"], {}).get(name) for name in BASELINES
    }
    return result


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}".removeprefix("0")


def table(results: list[dict[str, Any]], average: dict[str, dict[str, float | None]]) -> Table:
    """Ours next to the README's best-first and breadth-first, at each k reached."""
    ks = [k for k in KS if any(str(k) in r["harvest"] for r in results)]
    view = Table(title="Harvest@k on Wikispeedia (ours: served log; best, bfs: README)")
    view.add_column("topic", no_wrap=True)
    for k in ks:
        view.add_column(f"ours\n@{k}", justify="right", style="bold")
        view.add_column(f"best\n@{k}", justify="right")
        view.add_column(f"bfs\n@{k}", justify="right")
    view.add_column("pages", justify="right")
    view.add_column("s", justify="right")
    for r in results:
        row = [r["category"]]
        for k in ks:
            row.append(_figure(r["harvest"].get(str(k))))
            row += [_figure(_published(r["category"], name, k)) for name in BASELINES]
        view.add_row(*row, str(r["counted"]), f"{r['seconds']:.0f}")
    row = ["average"]
    for k in ks:
        row += [_figure(average[name].get(str(k))) for name in ("ours", *BASELINES)]
    view.add_row(*row, "", "", style="bold")
    return view


def _published(category: str, name: str, k: int) -> float | None:
    figures = PUBLISHED.get(category, {}).get(name)
    return figures[KS.index(k)] if figures else None


def averages(results: list[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Mean harvest@k over the topics, ours and published, where every topic reached k."""
    out: dict[str, dict[str, float | None]] = {name: {} for name in ("ours", *BASELINES)}
    for k in KS:
        ours = [r["harvest"].get(str(k)) for r in results]
        if not results or None in ours:
            continue
        out["ours"][str(k)] = round(sum(ours) / len(ours), 4)
        for name in BASELINES:
            published = [_published(r["category"], name, k) for r in results]
            if None not in published:
                out[name][str(k)] = round(sum(published) / len(published), 4)
    return out


def parse_settings(pairs: list[str]) -> dict[str, str]:
    """``-s KEY=VALUE`` options over the defaults."""
    settings = dict(DEFAULT_SETTINGS)
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise FocusedError(f"-s expects KEY=VALUE, got {pair!r}")
        settings[key] = value
    return settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=WIKISPEEDIA, help="labelled bundle")
    parser.add_argument("--pages", type=int, default=300, help="URLs to fetch per topic")
    parser.add_argument("--topics", default="all", help="'all' or categories, comma-separated")
    parser.add_argument("--out", type=Path, default=Path("wikispeedia-bench"), help="folder")
    parser.add_argument("-s", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    # Wide enough for the table when the output goes to a file.
    console = Console() if sys.stdout.isatty() else Console(width=120)
    try:
        settings = {**parse_settings(args.settings), "CLOSESPIDER_ITEMCOUNT": str(args.pages)}
        bundle = Bundle.load(args.bundle)
        topics = (bundle.topics or {}).get("topics", [])
        if args.topics != "all":
            wanted = [name.strip() for name in args.topics.split(",") if name.strip()]
            unknown = set(wanted) - {t["category"] for t in topics}
            if unknown:
                raise FocusedError(f"no topic {sorted(unknown)[0]!r} in {args.bundle}")
            topics = [t for t in topics if t["category"] in wanted]
        if not topics:
            raise FocusedError(f"{args.bundle}: no topics to run")
        args.out.mkdir(parents=True, exist_ok=True)
        results = []
        for i, topic in enumerate(topics, 1):
            result = run_topic(bundle, topic, args.out.resolve(), settings)
            results.append(result)
            harvest = " ".join(f"@{k} {v:.2f}" for k, v in result["harvest"].items())
            status = "ok" if result["exit_code"] == 0 else f"FAILED (exit {result['exit_code']})"
            console.print(
                f"[{i}/{len(topics)}] {topic['category']}: {status}, {result['served']} served,"
                f" {result['counted']} counted, {result['relevant']} relevant in"
                f" {result['seconds']:.0f} s; harvest {harvest or '-'}",
                markup=False,
            )
    except FocusedError as exc:
        console.print(f"error: {exc}", markup=False)
        return 2
    average = averages(results)
    console.print(table(results, average))
    report = {
        "bundle": str(args.bundle),
        "pages": args.pages,
        "settings": settings,
        "topics": results,
        "average": average,
        "reference": f"{args.bundle / 'README.md'}, table 'What the simple crawlers get here'",
    }
    (args.out / "results.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    console.print(f"results in {args.out / 'results.json'}")
    failed = [r["category"] for r in results if r["exit_code"] != 0 or not r["served"]]
    if failed:
        console.print(f"crawl failed for {', '.join(failed)}: see its crawl.log", markup=False)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
