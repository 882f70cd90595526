"""benchmarks/labelling.py on the synthetic web: the bundle's labels mark a keyword crawl's
pages, and the keywords topic with those pages added is written and crawled."""

from __future__ import annotations

import importlib.util
import json
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from focused.lab.evaluation.graph import WebGraph
from focused.lab.evaluation.report import averages
from focused.lab.evaluation.run import DEFAULT_SETTINGS
from focused.lab.evaluation.score import steps
from focused.lab.evaluation.tasks import load_tasks
from focused.lab.webs.bundle import Bundle, url_key
from focused.label.examples import example_file

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def labelling() -> ModuleType:
    sys.path.insert(0, str(BENCH))  # it imports the benchmarks' common and wikispeedia
    try:
        spec = importlib.util.spec_from_file_location("labelling", BENCH / "labelling.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


@pytest.mark.crawl
def test_a_keyword_crawl_labelled_from_the_bundle_is_crawled_again(
    labelling: ModuleType, bundle: Bundle, tmp_path: Path
):
    graph = WebGraph.from_bundle(bundle)
    (task,) = load_tasks(bundle, graph, "Science", None)
    settings = {**DEFAULT_SETTINGS, "FOCUSED_HOST_DELAY": "0"}
    folder = tmp_path / "science"
    result = labelling.run_task(
        bundle, graph, task, folder, pages=40, labels=12, how="best", settings=settings
    )

    # The first crawl kept every page's main text, and the marks are the bundle's labels of
    # the pages it fetched, seeds and training pages passed over.
    feed = [json.loads(line) for line in (folder / "crawls/keywords/feed.jsonl").open()]
    texts = {item["url"]: item["main_text"] for item in feed}
    marks = result["marks"]["pages"]
    assert len(marks) == 12 and marks.keys() <= texts.keys()
    assert all(texts[url] for url in marks)
    assert not {url_key(url) for url in marks} & task.skip
    assert all((mark == "good") == (url_key(url) in task.relevant) for url, mark in marks.items())
    good = [url for url, mark in marks.items() if mark == "good"]
    assert result["marks"]["good"] == len(good) >= 2 and result["marks"]["bad"] == 12 - len(good)

    # The keywords topic with the marked pages added, with the task's seeds, crawled for as
    # many pages.
    topic_file = Path(result["topic"])
    topic = tomllib.loads(topic_file.read_text())
    assert topic["seeds"] == task.seeds and topic["relevance"]["method"] == "keywords"
    keywords = tomllib.loads((folder / "keywords.toml").read_text())["relevance"]["keywords"]
    assert topic["relevance"]["keywords"] == keywords and keywords
    assert topic["relevance"]["examples"] == "positives"
    positives = {path.name for path in (topic_file.parent / "positives").iterdir()}
    assert positives == {example_file(url) for url in good}
    # Negatives only while a page was marked bad: the best-ranked 12 may all be good.
    bad = {example_file(url) for url in marks.keys() - set(good)}
    if bad:
        assert topic["relevance"]["negatives"] == "negatives"
        assert {path.name for path in (topic_file.parent / "negatives").iterdir()} == bad
    else:
        assert "negatives" not in topic["relevance"]
        assert not (topic_file.parent / "negatives").exists()
    for name in ("keywords", "labelled"):
        figures = result["crawlers"][name]
        assert figures["exit_code"] == 0 and figures["pages"] == 40
        assert figures["cpu_per_page"] > 0 and "40" in figures["own_harvest"]
    assert (folder / "crawls/labelled/feed.jsonl").stat().st_size > 0
    assert (
        result["crawlers"]["oracle"]["harvest"]["40"]
        >= result["crawlers"]["labelled"]["harvest"]["40"]
    )

    report = {
        "task_set": "development",
        "pages": 40,
        "ks": steps(40),
        "labels": 12,
        "order": "best",
        "topics": [result],
        "average": averages([result], labelling.CRAWLS),
    }
    table = labelling.table(report)
    assert table.row_count == 4
    assert [column.header for column in table.columns][:3] == ["topic", "crawl", "good / bad"]
    # Each crawl's verdicts against the labels, as focused evaluate measures them.
    cells = {column.header: list(column.cells) for column in table.columns}
    for measure in ("verdict\nprecision", "verdict\nrecall", "verdict\nf1", "ece"):
        for row, name in enumerate(labelling.CRAWLS):
            value = result["crawlers"][name][measure.replace("\n", "_")]["40"]
            assert cells[f"{measure}\n@40"][row] == f"{value:.3f}"


def test_marks_follow_the_labelling_pages_order_past_seeds_and_training(labelling: ModuleType):
    """Best first: highest R first; least certain first: R nearest the boundary (the least R
    the crawl called relevant, .6 here) first. The seed S and the training page T are never
    marked; a page without text (X) is not listed."""
    from focused.lab.evaluation.tasks import Task

    h = "http://www.a.test/"
    rs = {"S": 0.95, "T": 0.9, "A": 0.8, "B": 0.6, "C": 0.55, "D": 0.1, "X": 0.99}
    feed = [
        {"url": h + p, "relevance": r, "relevant": r >= 0.6, "title": p, "main_text": p}
        for p, r in rs.items()
    ]
    feed[-1]["main_text"] = ""
    task = Task(
        "Topic",
        [h + "S"],
        [h + "T"],
        frozenset({h + "S", h + "T", h + "B", h + "D"}),
        frozenset({h + "B", h + "D"}),
    )
    best = labelling.mark(feed, task, 3, "best")
    assert list(best.items()) == [(h + "A", "bad"), (h + "B", "good"), (h + "C", "bad")]
    uncertain = labelling.mark(feed, task, 3, "uncertain")
    assert list(uncertain.items()) == [(h + "B", "good"), (h + "C", "bad"), (h + "A", "bad")]
