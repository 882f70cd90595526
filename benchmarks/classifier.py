"""Quality and speed of the hierarchical classifier (focused.relevance).

On Wikispeedia (default): a taxonomy of up to --per-category example pages per labelled
category, the other labelled pages held out. Prints best-category and top-level accuracy;
for each topic the mean R of relevant and other held-out pages, the ROC AUC of R over whole
pages and over titles alone (what an anchor says about its target), and the share of R
strictly between 0.001 and 0.999 (how much ranking information R keeps); then throughput
on one core.

    .venv/bin/python benchmarks/classifier.py                  # Wikispeedia, default model
    .venv/bin/python benchmarks/classifier.py --compare        # NB variants x normalisation
    .venv/bin/python benchmarks/classifier.py --taxonomy DIR --topic A/B   # any folder,
        every 4th example of each category held out
    .venv/bin/python benchmarks/classifier.py --pipeline [--pages 2000]

``--pipeline``: the crawl's classifier pipeline as shipped (the page, its new anchors, their
glosses and word vectors) over the first --pages pages of ``throughput.py``'s synthetic web
(cached in --work), parsed beforehand as the spider parses them, in one pass from a cold
start, as a crawl process meets them. Prints the CPU milliseconds a page, and a digest of
every score: the same digest from two builds means the same scores to the last bit (whatever
PYTHONHASHSEED: tests/test_determinism.py checks that scores do not depend on it).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from common import DEFAULT_WORK, ensure_web
from sklearn.metrics import roc_auc_score
from threadpoolctl import threadpool_limits

from focused.relevance import HierarchicalClassifier, example_files, page_text, read_taxonomy

WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "webs" / "wikispeedia"
COMPARE = (
    [
        {"nb": nb, "pseudo_length": length}
        for nb in ("multinomial", "complement")
        for length in (None, 200.0, 50.0, 20.0)
    ]
    + [{"alpha": alpha} for alpha in (0.01, 1.0)]
    + [{"min_df": 1}, {"stem": False}]
)


class Split:
    """Training examples, and held-out pages with their raw HTML and label sets."""

    def __init__(self) -> None:
        self.train_texts: list[str] = []
        self.train_labels: list[str] = []
        self.test_pages: list[str | bytes] = []
        self.test_labels: list[set[str]] = []


def wikispeedia_split(folder: Path, per_category: int) -> Split:
    pages = {}
    with gzip.open(folder / "pages.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            pages[record["url"]] = record["body"]
    labels = {}
    for line in (folder / "labels.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        url, _, paths = line.partition("\t")
        if paths:
            labels[url] = set(paths.split("|"))
    by_category = defaultdict(list)
    for url in sorted(labels):
        for path in labels[url]:
            by_category[path].append(url)
    rng, used, split = random.Random(0), set(), Split()
    for category in sorted(by_category):
        candidates = [url for url in by_category[category] if url not in used]
        for url in rng.sample(candidates, min(per_category, len(candidates))):
            used.add(url)
            split.train_texts.append(page_text(pages[url]).document)
            split.train_labels.append(category)
    for url in sorted(set(labels) - used):
        split.test_pages.append(pages[url])
        split.test_labels.append(labels[url])
    return split


def folder_split(folder: Path) -> Split:
    examples, split = read_taxonomy(folder), Split()
    files = example_files(folder)
    for i, ((path, _), text, label) in enumerate(
        zip(files, examples.texts, examples.labels, strict=True)
    ):
        if i % 4 == 3:
            split.test_pages.append(path.read_bytes())
            split.test_labels.append({label})
        else:
            split.train_texts.append(text)
            split.train_labels.append(label)
    return split


def is_relevant(labels: set[str], topic: str) -> bool:
    return any(label == topic or label.startswith(topic + "/") for label in labels)


def evaluate(
    split: Split, test_texts: list[str], titles: list[str], topics: list[str], **params: object
) -> HierarchicalClassifier:
    started = time.perf_counter()
    model = HierarchicalClassifier(**params).fit(split.train_texts, split.train_labels)
    fitted = time.perf_counter() - started
    best = model.predict(test_texts)
    leaf = np.mean([b in labels for b, labels in zip(best, split.test_labels, strict=True)])
    top = np.mean(
        [
            b.split("/")[0] in {label.split("/")[0] for label in labels}
            for b, labels in zip(best, split.test_labels, strict=True)
        ]
    )
    proba, title_proba = model.predict_proba(test_texts), model.predict_proba(titles)
    print(
        f"  {params or 'defaults'}: fit {fitted:.1f} s, {len(model.vocabulary_)}"
        f" terms; best category {leaf:.3f}, top level {top:.3f}"
    )
    column = {c: i for i, c in enumerate(model.classes_)}
    for topic in topics:
        relevant = np.array([is_relevant(labels, topic) for labels in split.test_labels])
        r, r_title = proba[:, column[topic]], title_proba[:, column[topic]]
        graded = np.mean((r > 1e-3) & (r < 0.999))
        print(
            f"    {topic:42} n={relevant.sum():4}  R relevant {r[relevant].mean():.3f}"
            f"  other {r[~relevant].mean():.4f}  AUC {roc_auc_score(relevant, r):.4f}"
            f"  title AUC {roc_auc_score(relevant, r_title):.4f}  graded {graded:.2f}"
        )
    return model


def throughput(
    model: HierarchicalClassifier, pages: list[str | bytes], texts: list[str], batch: int = 64
) -> None:
    """Pages per second on one core: page_text + score_pages, score_pages alone, and
    score_pages on each text's first 4 KB (Wikispeedia articles are longer than most pages)."""

    def parse_and_score(chunk: list[str | bytes]) -> object:
        return model.score_pages([page_text(page).document for page in chunk])

    runs = [
        ("page_text + scoring", parse_and_score, pages),
        ("scoring alone", model.score_pages, texts),
        ("scoring 4 KB texts", model.score_pages, [text[:4000] for text in texts]),
    ]
    with threadpool_limits(1):
        for label, work, data in runs:
            started = time.perf_counter()
            for i in range(0, len(data), batch):
                work(data[i : i + batch])
            elapsed = time.perf_counter() - started
            print(f"  {label:20} {len(data) / elapsed:8.0f} pages/s (batches of {batch})")
    kb = np.mean([len(t) for t in texts]) / 1000
    print(f"  mean text {kb:.1f} KB; mean HTML {np.mean([len(p) for p in pages]) / 1000:.1f} KB")


def pipeline_cost(work: Path, n_pages: int) -> None:
    """CPU ms a page of the crawl's judge, and a digest of its verdicts."""
    from types import SimpleNamespace

    from scrapy.http import HtmlResponse
    from scrapy.utils.test import get_crawler

    from focused.items import Page, PageLink
    from focused.links.extract import extract_links
    from focused.settings import defaults
    from focused.store.frontier.base import Leased
    from focused.topic.files import load_topic
    from focused.topic.judge import Judge
    from focused.topic.plan import CrawlPlan

    folder = ensure_web(work / "web-6000-200", 6000, 200)
    items = []
    with gzip.open(folder / "pages.jsonl.gz", "rt") as lines:
        for line in lines:
            page = json.loads(line)
            if "body" not in page:
                continue
            response = HtmlResponse(page["url"], body=page["body"].encode(), encoding="utf-8")
            text = page_text(response.selector.root)
            links = extract_links(response)
            # reached by the anchor of its first link, to score an arrival anchor as the crawl does
            anchor = links[0][1] if links else ""
            leased = Leased(page["url"], "", 0, 0, "", 0, 1.0, anchor=anchor)
            items.append(
                Page(
                    page["url"],
                    200,
                    0.0,
                    leased=leased,
                    title=text.title,
                    text=text.text,
                    links=[PageLink(*link) for link in links],
                )
            )
            if len(items) == n_pages:
                break
    settings = {k: getattr(defaults, k) for k in dir(defaults) if k.startswith("FOCUSED_")}
    crawler = get_crawler(settings_dict={**settings, "FOCUSED_MODELS_DIR": work / "models"})
    crawler.spider = SimpleNamespace(
        plan=CrawlPlan.from_settings(crawler.settings, load_topic(folder / "topic.toml"))
    )
    plan = crawler.spider.plan
    judge = Judge.from_plan(plan, crawler.settings)
    started = time.process_time()
    verdicts = [judge(item) for item in items]
    seconds = time.process_time() - started
    anchors = plan.link_score != "content"
    scores = [
        [
            v.relevance,
            v.first_relevance,
            v.category,
            v.path_good,
            [link.anchor_relevance for link in v.links] if anchors and v.links else None,
        ]
        for v in verdicts
    ]
    digest = hashlib.sha256(repr(scores).encode())
    print(
        f"judge: {1000 * seconds / len(items):.3f} CPU ms a page over"
        f" {len(items)} pages; scores' digest {digest.hexdigest()[:16]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wikispeedia", type=Path, default=WIKISPEEDIA)
    parser.add_argument("--taxonomy", type=Path, help="a taxonomy folder instead of Wikispeedia")
    parser.add_argument("--topic", action="append", help="a category to score as the topic")
    parser.add_argument("--per-category", type=int, default=20)
    parser.add_argument("--compare", action="store_true", help="also try other settings")
    parser.add_argument("--pipeline", action="store_true", help="the crawl's pipeline's cost")
    parser.add_argument("--pages", type=int, default=2000, help="pages of --pipeline")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    args = parser.parse_args()
    if args.pipeline:
        pipeline_cost(args.work.resolve(), args.pages)
        return

    if args.taxonomy:
        split, topics = folder_split(args.taxonomy), args.topic or []
    else:
        split = wikispeedia_split(args.wikispeedia, args.per_category)
        listed = json.loads((args.wikispeedia / "topics.json").read_text())["topics"]
        topics = args.topic or [t["category"] for t in listed][:4]
    texts = [page_text(page) for page in split.test_pages]
    documents, titles = [t.document for t in texts], [t.title for t in texts]
    print(
        f"{len(split.train_texts)} training examples in"
        f" {len(set(split.train_labels))} categories; {len(documents)} held out"
    )
    model = evaluate(split, documents, titles, topics)
    for params in COMPARE if args.compare else []:
        evaluate(split, documents, titles, topics, **params)
    throughput(model, split.test_pages, documents)


if __name__ == "__main__":
    main()
