"""Cost of word vectors (focused.relevance.vectors) in a crawl process, on Wikispeedia.

    .venv/bin/python benchmarks/vectors.py [--pages 1500] [--runs 3]

Start-up and memory: a fresh Python process reads the word vectors as a crawl does (the
sorted vocabulary from its cache, the matrix memory-mapped), and prints the seconds and the
growth of its resident memory, split into private memory and pages shared with every other
process of the machine (the memory-mapped matrix, in the page cache). The first read, which
builds the vocabulary's cache with pyarrow, is timed too (in its own process, with an empty
cache folder).

CPU: a taxonomy of 20 example pages per labelled category (good: Science/Biology/Birds) is
fitted as benchmarks/gloss.py fits it, with its CategoryVectors; --pages held-out pages are
parsed once as the spider parses them. The crawl's Judge (focused.topic.judge) then judges
all of them, --runs times, interleaved, on one core, with anchor glosses and without and
with vectors (each run from empty caches: one crawl of --pages pages); the median CPU
milliseconds per page is printed with its ratio to the run without vectors.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from functools import partial

from classifier import WIKISPEEDIA, wikispeedia_split
from gloss import parsed, report_interleaved
from gloss import run as gloss_run

from focused.items import Page
from focused.relevance import HierarchicalClassifier
from focused.relevance.gloss import AnchorGlosser
from focused.relevance.vectors import CategoryVectors
from focused.topic.judge import Judge

TOPIC = "Science/Biology/Birds"

# Run in a fresh interpreter: the cost of reading the vectors, with what a crawl has loaded
# before it (the relevance package, numpy, scikit-learn) already there.
LOAD = """
import json, sys, time, psutil
import focused.relevance.vectors as v
process = psutil.Process()
before = process.memory_full_info()
started = time.perf_counter()
vectors = v.word_vectors(sys.argv[1] or None)
vectors.embed(["a first text to embed"])
seconds = time.perf_counter() - started
after = process.memory_full_info()
print(json.dumps({"seconds": seconds, "rss": after.rss - before.rss,
                  "private": after.uss - before.uss, "shared": after.shared - before.shared}))
"""


def load_cost(cache: str) -> dict[str, float]:
    """Seconds and memory growth of reading the word vectors in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", LOAD, cache], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


def run(judge: Judge, pages: list[Page]) -> float:
    """CPU ms per page of the judge over ``pages``, from empty caches (every anchor score)."""
    return gloss_run(judge, pages, cached=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as empty:
        first = load_cost(empty)
    warm = load_cost("")
    mb = 1 << 20
    print(
        f"first read (builds the vocabulary's cache): {first['seconds']:.2f} s, "
        f"+{first['rss'] / mb:.0f} MB resident; later reads: {warm['seconds']:.2f} s, "
        f"+{warm['rss'] / mb:.0f} MB resident ({warm['private'] / mb:.0f} MB private, "
        f"{warm['shared'] / mb:.0f} MB shared with other processes)"
    )

    split = wikispeedia_split(WIKISPEEDIA, 20)
    model = HierarchicalClassifier(good=[TOPIC]).fit(split.train_texts, split.train_labels)
    started = time.perf_counter()
    vectors = CategoryVectors(good=[TOPIC]).fit(split.train_texts, split.train_labels)
    print(f"CategoryVectors fitted in {time.perf_counter() - started:.1f} s")
    pages = [
        parsed(body, f"http://wikispeedia.test/wiki/page{i}.html")
        for i, body in enumerate(split.test_pages[: args.pages])
    ]
    glosser = AnchorGlosser()

    def judge(with_vectors: CategoryVectors | None) -> Judge:
        return Judge(
            model,
            threshold=0.5,
            link_score="anchor",
            needs_path=False,
            glosser=glosser,
            vectors=with_vectors,
        )

    variants = {"without vectors": judge(None), "with vectors": judge(vectors)}
    report_interleaved(
        {name: partial(run, j, pages) for name, j in variants.items()},
        args.runs,
        "without vectors",
    )


if __name__ == "__main__":
    main()
