"""Cost of anchor glosses (focused.relevance.gloss) in the crawl's judge, on Wikispeedia.

    .venv/bin/python benchmarks/gloss.py [--pages 1500] [--runs 3]

A taxonomy of 20 example pages per labelled category (good: Science/Biology/Birds) is fitted
as benchmarks/classifier.py fits it; --pages held-out pages are parsed once, as the spider
parses them (text and out-links with anchors). Then each variant's Judge (focused.topic.judge)
judges all of them, --runs times, interleaved, on one core; the median CPU milliseconds per page
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

from classifier import WIKISPEEDIA, wikispeedia_split
from scrapy.http import HtmlResponse
from threadpoolctl import threadpool_limits

from focused.items import Page, PageLink
from focused.links.extract import extract_links
from focused.relevance import HierarchicalClassifier
from focused.relevance.gloss import AnchorGlosser
from focused.relevance.text import page_text
from focused.topic.judge import Judge

TOPIC = "Science/Biology/Birds"


def parsed(body: str | bytes, url: str) -> Page:
    """A page as the spider parses it: title, text and out-links (reached from no frontier
    record, so without an arrival anchor)."""
    raw = body.encode() if isinstance(body, str) else body
    response = HtmlResponse(url, body=raw, encoding="utf-8")
    text = page_text(response.selector.root)
    return Page(
        url,
        200,
        0.0,
        title=text.title,
        text=text.text,
        links=[PageLink(*link) for link in extract_links(response)],
    )


def run(judge: Judge, pages: list[Page], cached: bool) -> float:
    """CPU ms per page of the judge over ``pages``, from empty caches (``cached`` false:
    glossed R forgotten before each page, the anchors' own R still kept)."""
    judge.clear_caches()
    started = time.process_time()
    for page in pages:
        if not cached:
            judge.glossed_relevance.clear()
        judge(page)
    return (time.process_time() - started) * 1000 / len(pages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    split = wikispeedia_split(WIKISPEEDIA, 20)
    model = HierarchicalClassifier(good=[TOPIC]).fit(split.train_texts, split.train_labels)
    pages = [
        parsed(body, f"http://wikispeedia.test/wiki/page{i}.html")
        for i, body in enumerate(split.test_pages[: args.pages])
    ]
    started = time.perf_counter()
    glosser = AnchorGlosser()
    loaded = time.perf_counter() - started
    anchors = [link.anchor for page in pages for link in page.links]
    glossed = sum(bool(glosser.gloss(anchor)) for anchor in anchors)
    print(
        f"{len(pages)} pages, {len(anchors) / len(pages):.1f} anchors a page; WordNet read in "
        f"{loaded:.2f} s; {glossed / len(anchors):.0%} of anchors glossed"
    )

    def judge(with_glosser: AnchorGlosser | None) -> Judge:
        return Judge(
            model, threshold=0.5, link_score="anchor", needs_path=False, glosser=with_glosser
        )

    variants = {
        "off": (judge(None), True),
        "glosses, no cache": (judge(glosser), False),
        "glosses": (judge(glosser), True),
    }
    report_interleaved(
        {name: partial(run, j, pages, cached) for name, (j, cached) in variants.items()},
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
