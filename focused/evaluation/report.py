"""The evaluation's results: averages over topics, terminal tables (rich) and the JSON file."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

__all__ = ["MEASURES", "averages", "tables", "write_json"]

MEASURES = ("harvest", "recall", "of_oracle", "similarity")


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4)


def averages(topics: list[dict[str, Any]], crawlers: Sequence[str]) -> dict[str, Any]:
    """Per crawler, each measure at each k averaged over the topics where every topic has it
    (a crawl that stopped early, or a topic the oracle finds nothing in, leaves k out), and
    the mean CPU seconds per page and pages per second of the real crawls."""
    out: dict[str, Any] = {}
    for name in crawlers:
        rows = [t["crawlers"][name] for t in topics]
        figures: dict[str, Any] = {}
        for measure in MEASURES:
            ks = set.intersection(*(set(r.get(measure, {})) for r in rows)) if rows else set()
            figures[measure] = {
                k: _mean([r[measure][k] for r in rows]) for k in sorted(ks, key=int)
            }
        for key in ("cpu_per_page", "pages_per_s"):
            values = [r[key] for r in rows if r.get(key) is not None]
            figures[key] = _mean(values) if values and len(values) == len(rows) else None
        out[name] = figures
    return out


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}".removeprefix("0")


def tables(result: dict[str, Any]) -> list[Table]:
    """Harvest@k per topic and crawler; the averages of every measure; topic difficulty."""
    crawlers, ks = result["crawlers"], [str(k) for k in result["ks"]]
    shown = ks[-3:]
    per_topic = Table(
        title=f"Harvest@{' / '.join(shown)} (served log; seeds, training not counted)"
    )
    per_topic.add_column("topic", no_wrap=True)
    for name in crawlers:
        per_topic.add_column(name, justify="right", style="bold" if name == "taxonomy" else None)
    for topic in result["topics"]:
        cells = [
            " / ".join(_figure(topic["crawlers"][n]["harvest"].get(k)) for k in shown)
            for n in crawlers
        ]
        per_topic.add_row(topic["category"], *cells)
    average = result["average"]
    per_topic.add_row(
        "average",
        *(" / ".join(_figure(average[n]["harvest"].get(k)) for k in shown) for n in crawlers),
        style="bold",
    )

    summary = Table(title=f"Averages over {len(result['topics'])} topics")
    summary.add_column("crawler", no_wrap=True)
    columns = [(m, k) for m in ("harvest", "of_oracle") for k in shown]
    columns += [("recall", ks[-1]), ("similarity", ks[-1])]
    for measure, k in columns:
        summary.add_column(f"{measure}\n@{k}", justify="right")
    summary.add_column("CPU ms\n/page", justify="right")
    summary.add_column("pages\n/s", justify="right")
    for name in crawlers:
        figures = average[name]
        cpu, rate = figures["cpu_per_page"], figures["pages_per_s"]
        summary.add_row(
            name,
            *(_figure(figures[m].get(k)) for m, k in columns),
            "-" if cpu is None else f"{cpu * 1000:.1f}",
            "-" if rate is None else f"{rate:.1f}",
        )

    hardness = Table(title="Topic difficulty (seed 003)")
    for column in ("topic", "targets", "popularity", "cohesive", "authority", "seed sim"):
        hardness.add_column(column, justify="left" if column == "topic" else "right")
    for topic in result["topics"]:
        d = topic["difficulty"]
        hardness.add_row(
            topic["category"],
            str(d["targets"]),
            *(
                f"{d[key]:.3f}"
                for key in (
                    "popularity",
                    "cohesiveness",
                    "authoritativeness",
                    "seed_target_similarity",
                )
            ),
        )
    return [per_topic, summary, hardness]


def write_json(result: dict[str, Any], path: Path) -> Path:
    """The whole result, curves included, as one JSON file."""
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return path
