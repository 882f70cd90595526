"""Cost of anchor glosses (focused.relevance.gloss) in the classifier pipeline, on Wikispeedia.

    .venv/bin/python benchmarks/gloss.py [--pages 1500] [--runs 3]

A taxonomy of 20 example pages per labelled category (good: Science/Biology/Birds) is fitted
as benchmarks/classifier.py fits it; --pages held-out pages are parsed once, as the spider
parses them (text and out-links with anchors). Then each variant runs the ClassifierPipeline
over all of them, --runs times, interleaved, on one core; the median CPU milliseconds per page
is printed with its ratio to ``off`` measured in the same run:

- ``off``: FOCUSED_ANCHOR_GLOSS=false, anchors scored alone (the previous default);
- ``glosses, no cache``: every anchor of every page looked up in WordNet, and scored with its
  gloss when it has one (the anchor's own R is kept in all three);
- ``glosses``: as shipped, an anchor text looked up and scored once and its glossed R kept.

Each run starts with empty caches, so a run is one crawl of --pages pages (WordNet's own
caches of synsets stay warm after the first run). Also printed: the seconds to read WordNet
and the share of anchors that WordNet glosses.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from classifier import WIKISPEEDIA, wikispeedia_split
from scrapy.http import HtmlResponse
from threadpoolctl import threadpool_limits

from focused.items import PageItem
from focused.links.extract import extract_links
from focused.pipelines.classify import ClassifierPipeline
from focused.relevance import HierarchicalClassifier
from focused.relevance.gloss import AnchorGlosser
from focused.relevance.text import page_text

TOPIC = "Science/Biology/Birds"


def parsed(body: str | bytes, url: str) -> dict[str, Any]:
    """A page's item fields as the spider parses them: title, text and out-links."""
    raw = body.encode() if isinstance(body, str) else body
    response = HtmlResponse(url, body=raw, encoding="utf-8")
    text = page_text(response.selector.root)
    return {
        "url": url,
        "title": text.title,
        "text": text.text,
        "bad": None,
        "links": extract_links(response),
    }


def run(pipeline: ClassifierPipeline, items: list[dict[str, Any]], cached: bool) -> float:
    """CPU ms per page of the pipeline over ``items``, from empty caches (``cached`` false:
    glossed R forgotten before each page, the anchors' own R still kept)."""
    pipeline.clear_caches()
    started = time.process_time()
    for item in items:
        if not cached:
            pipeline.glossed_relevance.clear()
        pipeline.classify(PageItem(item))
    return (time.process_time() - started) * 1000 / len(items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    split = wikispeedia_split(WIKISPEEDIA, 20)
    model = HierarchicalClassifier(good=[TOPIC]).fit(split.train_texts, split.train_labels)
    items = [
        parsed(body, f"http://wikispeedia.test/wiki/page{i}.html")
        for i, body in enumerate(split.test_pages[: args.pages])
    ]
    started = time.perf_counter()
    glosser = AnchorGlosser()
    loaded = time.perf_counter() - started
    anchors = [anchor for item in items for _, anchor, _ in item["links"]]
    glossed = sum(bool(glosser.gloss(anchor)) for anchor in anchors)
    print(
        f"{len(items)} pages, {len(anchors) / len(items):.1f} anchors a page; WordNet read in "
        f"{loaded:.2f} s; {glossed / len(anchors):.0%} of anchors glossed"
    )

    def pipeline(with_glosser: AnchorGlosser | None) -> ClassifierPipeline:
        return ClassifierPipeline(
            model, threshold=0.5, link_score="anchor", needs_path=False, glosser=with_glosser
        )

    variants = {
        "off": (pipeline(None), True),
        "glosses, no cache": (pipeline(glosser), False),
        "glosses": (pipeline(glosser), True),
    }
    report_interleaved(
        {name: partial(run, p, items, cached) for name, (p, cached) in variants.items()},
        args.runs,
        "off",
    )


def report_interleaved(variants: dict[str, Callable[[], float]], runs: int, base: str) -> None:
    """Run each variant (a call that returns CPU ms per page) ``runs`` times, interleaved, on
    one core, and print each one's median with its ratio to the median of ``base``."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    with threadpool_limits(1):
        for _ in range(runs):
            for name, timed in variants.items():
                times[name].append(timed())
    reference = statistics.median(times[base])
    width = max(map(len, variants))
    for name, values in times.items():
        ms = statistics.median(values)
        print(f"{name:{width}s} {ms:6.2f} CPU ms/page  {ms / reference:.2f}x {base}")


if __name__ == "__main__":
    main()
