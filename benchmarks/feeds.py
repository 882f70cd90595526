"""Cost of writing the feed through (focused/extensions/feeds.py) per item.

    .venv/bin/python benchmarks/feeds.py [--items 20000] [--runs 5]

Scrapy's JSON-lines exporter writes feed items to a file in a temporary folder, as a crawl's
``-o pages.jsonl`` does, through Scrapy's own local-file storage (buffered: written out in
8 KB blocks and at the close) and through :class:`FlushedFileFeedStorage` (each line written
out as it is exported). Two kinds of item: a page without main text (the common case, about
400 bytes a line) and a relevant page with 4 KB of main text. Prints the median microseconds
per item, CPU and wall clock, of ``--runs`` interleaved runs, and the difference.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from scrapy.exporters import JsonLinesItemExporter
from scrapy.extensions.feedexport import FileFeedStorage

from focused.extensions.feeds import FlushedFileFeedStorage
from focused.items import FEED_FIELDS, Page

PROSE = "The heron stood in the shallow water of the lake, waiting for a fish to pass. "


def item(order: int, text_bytes: int) -> Page:
    text = (PROSE * (text_bytes // len(PROSE) + 1))[:text_bytes]
    return Page(
        url=f"http://www.example{order % 97}.test/wiki/Page_{order}",
        order=order,
        time=1736157600.0 + order / 10,
        status=200,
        relevance=0.8731 if text_bytes else 0.1204,
        relevant=bool(text_bytes),
        category="Science/Biology/Birds",
        depth=3,
        parent=f"http://www.example{order % 89}.test/wiki/Page_{order // 7}",
        host=f"www.example{order % 97}.test",
        title=f"Page {order}: a page about herons and lakes",
        bad=None,
        main_text=text or None,
    )


def timed(storage_class: type, path: Path, items: list[Page]) -> tuple[float, float]:
    """(CPU µs, wall µs) per item exported through ``storage_class`` to ``path``."""
    path.unlink(missing_ok=True)
    storage = storage_class(str(path), feed_options={"format": "jsonlines"})
    out = storage.open(None)
    fields = [field for field in FEED_FIELDS if field != "markdown"]  # as a crawl exports
    exporter = JsonLinesItemExporter(out, fields_to_export=fields, encoding="utf-8")
    exporter.start_exporting()
    cpu, wall = time.process_time(), time.perf_counter()
    for page in items:
        exporter.export_item(page)
    exporter.finish_exporting()
    storage.store(out)
    n = len(items)
    return (time.process_time() - cpu) * 1e6 / n, (time.perf_counter() - wall) * 1e6 / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    storages = {"buffered (Scrapy)": FileFeedStorage, "written through": FlushedFileFeedStorage}
    with tempfile.TemporaryDirectory(prefix="feed-bench-") as work:
        path = Path(work) / "feed.jsonl"
        for kind, text_bytes in (("no main text", 0), ("4 KB main text", 4096)):
            items = [item(n, text_bytes) for n in range(1, args.items + 1)]
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in storages}
            for _ in range(args.runs):
                for name, storage_class in storages.items():
                    times[name].append(timed(storage_class, path, items))
            line = path.stat().st_size / len(items)
            print(f"{kind}: {len(items)} items of {line:.0f} bytes, median of {args.runs} runs")
            medians = {
                name: (
                    statistics.median(cpu for cpu, _ in runs),
                    statistics.median(wall for _, wall in runs),
                )
                for name, runs in times.items()
            }
            for name, (cpu, wall) in medians.items():
                print(f"  {name:18} {cpu:6.1f} µs CPU, {wall:6.1f} µs wall per item")
            (cpu0, wall0), (cpu1, wall1) = medians.values()
            print(f"  {'cost':18} {cpu1 - cpu0:+6.1f} µs CPU, {wall1 - wall0:+6.1f} µs wall")


if __name__ == "__main__":
    main()
