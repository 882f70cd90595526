"""focused evaluate (seed 003): scoring from served logs, the oracle, seed selection, topic
difficulty, the centroid model, every crawler's topic file, validation tasks, and one small
real evaluation."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from focused.errors import FocusedError
from focused.lab.evaluation.coverage import (
    coverage_figures,
    fetched_at,
    nearest_estimate,
    simulated_stop,
    truth_at,
)
from focused.lab.evaluation.graph import WebGraph
from focused.lab.evaluation.oracle import oracle_order
from focused.lab.evaluation.report import (
    averages,
    calibration_k,
    pool_reliability,
    shown_ks,
    tables,
)
from focused.lab.evaluation.run import CRAWLERS, name_words, prepare, thesaurus_from_examples
from focused.lab.evaluation.score import (
    claimed_relevant,
    counted_pages,
    ece,
    feed_verdicts,
    fetches_spent,
    measure,
    served_order,
    steps,
)
from focused.lab.evaluation.tasks import (
    USER_KEYWORDS,
    VALIDATION_CATEGORIES,
    Task,
    difficulty,
    dist_seeds,
    load_tasks,
    overlaps,
    parse_seeds_option,
    read_keywords,
)
from focused.lab.webs.bundle import Bundle, url_key, write_bundle
from focused.lab.webs.labels import within
from focused.relevance.centroid import CentroidModel
from focused.relevance.taxonomy import example_text
from focused.relevance.text import page_text
from focused.topic.files import load_topic
from focused.topic.methods import topic_model

H = "http://www.a.test/"
# ../shared/webs/wikispeedia and webkb beside the checkout, where there are.
WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "webs" / "wikispeedia"
WEBKB = WIKISPEEDIA.parent / "webkb"


def _log(*paths: str) -> list[dict]:
    return [{"url": H + p, "status": 200} for p in paths]


def _zero(keys):
    return [0.0] * len(keys)


def test_served_order_drops_robots_and_duplicates():
    log = _log("robots.txt", "s1", "a", "a", "b", "robots.txt", "A%20b", "A b")
    assert served_order(log) == [H + "s1", H + "a", H + "b", H + "A%20b"]


def test_a_dead_link_is_a_fetch_spent_not_a_page():
    log = [
        *_log("robots.txt", "s1"),
        {"url": H + "gone", "status": 404},
        *_log("a", "a/index.html"),
        {"url": H + "gone2", "status": 404},
        *_log("b"),
    ]

    def key(url: str) -> str:  # the bundle serves a/ at a/index.html too
        return url_key(url).removesuffix("/index.html")

    order = served_order(log, key)
    assert order == [H + "s1", H + "a", H + "b"]
    pages = counted_pages(order, {H + "s1"}, 2)
    spent = fetches_spent(log, pages, [1, 2], key)
    # a: s1, gone, a; b: then a/index.html (another spelling: spent), gone2, b
    assert spent == {"fetches": {"1": 3, "2": 6}, "dead": {"1": 1, "2": 2}}


def test_a_page_served_at_several_spellings_is_one_page(tmp_path: Path):
    home = "<html><body><a href='d/'>d</a><a href='d/index.html'>d again</a></body></html>"
    page = "<html><body><p>the page</p></body></html>"
    write_bundle(
        tmp_path,
        [
            {"url": H, "status": 200, "headers": {}, "body": home},
            {"url": H + "d/", "status": 200, "headers": {}, "body": page},
            {"url": H + "d/index.html", "status": 200, "headers": {}, "body": page},
            {"url": H + "d", "status": 200, "headers": {}, "body": f'<base href="{H}d/">{page}'},
            {"url": H + "other", "status": 200, "headers": {}, "body": "<p>another page</p>"},
        ],
        labels={H + "d/": ["x"], H + "d/index.html": ["x"], H + "d": ["x"]},
    )
    bundle = Bundle.load(tmp_path)
    assert {bundle.key(H + s) for s in ("d/", "d/index.html", "d")} == {H + "d/"}
    assert bundle.key(H + "other") == H + "other"
    graph = WebGraph.from_bundle(bundle)
    assert graph.links[H] == [H + "d/"]
    assert H + "d" not in graph.texts and H + "d/index.html" not in graph.texts
    assert graph.key(H + "d") == H + "d/"


def test_harvest_skips_seeds_and_training_and_stops_at_pages():
    order = served_order(_log("robots.txt", "s1", "t1", "a", "x", "b", "s1", "y", "c"))
    pages = counted_pages(order, {H + "s1", H + "t1"}, 4)
    assert pages == [H + "a", H + "x", H + "b", H + "y"]
    targets = {H + "a", H + "b", H + "c", H + "t1"}
    result = measure(pages, targets, [2, 4], _zero, oracle_found=[1, 2, 2, 3])
    assert result["harvest"] == {"2": 0.5, "4": 0.5}
    assert result["recall"] == {"2": 0.25, "4": 0.5}
    assert result["of_oracle"] == {"2": 0.5, "4": round(2 / 3, 4)}
    assert result["found_curve"] == [1, 1, 2, 2]
    assert result["similarity"] == {"2": 0.0, "4": 0.0}


def test_own_harvest_counts_the_feed_by_the_served_rule():
    log = _log("robots.txt", "s1", "t1", "a", "x", "a", "robots.txt", "b", "y", "c", "z")
    pages = counted_pages(served_order(log), {H + "s1", H + "t1"}, 5)
    assert pages == [H + "a", H + "x", H + "b", H + "y", H + "c"]
    feed = [
        {"url": H + "s1", "relevant": True, "bad": None},  # a seed: never counted
        {"url": H + "t1", "relevant": True, "bad": None},  # a training page: never counted
        {"url": "http://WWW.A.TEST:80/a", "relevant": True, "bad": None},  # a, spelled apart
        {"url": H + "x", "relevant": True, "bad": None},  # called relevant, not a target
        {"url": H + "b", "relevant": False, "bad": None},  # a target it missed
        {"url": H + "y", "relevant": None, "bad": "duplicate"},
        {"url": H + "robots.txt"},
        # c: served, but the crawl stopped before its item reached the feed
    ]
    claimed = claimed_relevant(feed)
    assert claimed == {H + "s1", H + "t1", H + "a", H + "x"}
    targets = {H + "a", H + "b", H + "c", H + "t1"}
    result = measure(pages, targets, [2, 4, 5, 10], _zero, verdicts=feed_verdicts(feed))
    assert result["harvest"] == {"2": 0.5, "4": 0.5, "5": 0.6}
    assert result["own_harvest"] == {"2": 1.0, "4": 0.5, "5": 0.4}
    assert result["calibration_gap"] == {"2": 0.5, "4": 0.0, "5": 0.2}
    assert "own_harvest" not in measure(pages, targets, [2], _zero)  # the oracle: no feed


def _verdict_feed() -> tuple[list[str], set[str], list[dict]]:
    """Counted pages, targets and a feed whose verdicts are worked out by hand below."""
    pages = [H + p for p in ("a", "d", "c", "e", "b", "f", "g")]
    targets = {H + p for p in ("a", "b", "c", "x")}  # x: never fetched
    feed = [
        {"url": H + "a", "relevant": True, "relevance": 0.95},  # target, claimed
        {"url": H + "d", "relevant": True, "relevance": 0.83},  # claimed, not a target
        {"url": H + "c", "relevant": False, "relevance": 0.35},  # target missed
        {"url": H + "e", "relevant": False, "relevance": 0.15},
        {"url": H + "b", "relevant": True, "relevance": 0.85},  # target, claimed
        {"url": H + "g", "relevant": None, "relevance": None, "bad": "duplicate"},  # no score
        {"url": H + "b", "relevant": False, "relevance": 0.05},  # served again: the first kept
        # f: served, not in the feed: not claimed, no score
    ]
    return pages, targets, feed


def test_verdicts_of_the_feed_against_the_labels():
    pages, targets, feed = _verdict_feed()
    verdicts = feed_verdicts(feed)
    assert verdicts.score_of == "relevance" and H + "g" not in verdicts.scores
    assert verdicts.scores[H + "b"] == 0.85
    result = measure(pages, targets, [1, 4, 7], _zero, verdicts=verdicts)
    assert result["reliability_of"] == "relevance"
    # k = 7: claimed a, d, b; relevant a, c, b; both: a, b.
    assert result["verdict_precision"]["7"] == result["verdict_recall"]["7"] == 0.6667
    assert result["verdict_f1"]["7"] == 0.6667 and result["unscored"]["7"] == 2
    bins = result["reliability"]["7"]
    assert [b["pages"] for b in bins] == [0, 1, 0, 1, 0, 0, 0, 0, 2, 1]
    assert bins[8] == {"pages": 2, "relevant": 1, "predicted": 0.84, "share": 0.5}
    assert bins[0] == {"pages": 0, "relevant": 0, "predicted": None, "share": None}
    # (1 * .05 + 2 * .34 + 1 * .65 + 1 * .15) / 5
    assert result["ece"]["7"] == 0.306
    assert result["auc"]["7"] == 0.8333  # 5 of the 6 (relevant, not) pairs ordered right
    # Claiming a, b, d, c (score >= .35): 3 of 3 relevant, 3 of 4 claimed: F1 = 6/7.
    assert result["best_f1"]["7"] == 0.8571
    # k = 4 (a, d, c, e): claimed a, d; relevant a, c.
    assert result["verdict_precision"]["4"] == result["verdict_recall"]["4"] == 0.5
    assert result["ece"]["4"] == 0.42 and result["auc"]["4"] == 0.75
    assert result["best_f1"]["4"] == 0.8 and result["unscored"]["4"] == 0
    # k = 1 (a): one class only, no AUC.
    assert result["verdict_f1"]["1"] == 1.0 and result["auc"]["1"] is None
    # Nothing claimed: precision undefined, counted as 0, and so F1.
    nothing = measure([H + "c", H + "e"], targets, [2], _zero, verdicts=verdicts)
    assert nothing["verdict_precision"] == nothing["verdict_f1"] == {"2": 0.0}
    assert nothing["verdict_recall"] == {"2": 0.0} and nothing["own_harvest"] == {"2": 0.0}
    assert "verdict_f1" not in measure(pages, targets, [7], _zero)  # the oracle: no feed


def test_verdicts_read_the_feeds_probability_when_it_has_one():
    pages, targets, feed = _verdict_feed()
    for item, p in zip(feed[:4], (0.9, 0.1, 0.8, 0.2), strict=True):
        item["probability"] = p  # b has none: no score
    verdicts = feed_verdicts(feed)
    assert verdicts.score_of == "probability" and H + "b" not in verdicts.scores
    result = measure(pages, targets, [4, 7], _zero, verdicts=verdicts)
    assert result["reliability_of"] == "probability" and result["unscored"]["7"] == 3
    assert result["auc"]["4"] == 1.0 and result["best_f1"]["4"] == 1.0
    # k = 4: bins 9 (.9, relevant), 1 (.1, not), 8 (.8, relevant), 2 (.2, not)
    assert result["ece"]["4"] == round((0.1 + 0.1 + 0.2 + 0.2) / 4, 4)
    # The claims are the feed's `relevant`, whatever the score read.
    assert result["verdict_precision"]["7"] == 0.6667


def test_verdict_averages_pool_the_reliability_tables():
    pages, targets, feed = _verdict_feed()
    one = measure(pages, targets, [4, 7], _zero, verdicts=feed_verdicts(feed))
    two = measure(pages[:1] * 4, targets, [4], _zero, verdicts=feed_verdicts(feed))
    assert two["auc"] == {"4": None}  # a, four times: one class
    topics = [_topic("A", 0.5, 0.5), _topic("B", 0.5, 0.5)]
    for topic, figures in zip(topics, (one, two), strict=True):
        topic["crawlers"]["taxonomy"] |= {
            k: v for k, v in figures.items() if k.startswith(("verdict", "reli", "ece", "un"))
        }
        topic["crawlers"]["taxonomy"] |= {"auc": figures["auc"], "best_f1": figures["best_f1"]}
    average = averages(topics, ["taxonomy", "oracle"])
    taxonomy = average["taxonomy"]
    assert taxonomy["verdict_precision"] == {"4": 0.75}  # (.5 + 1) / 2; k = 7 not on B
    assert taxonomy["auc"] == {"4": 0.75}  # B has none: A's alone
    assert taxonomy["ece"] == {"4": round((0.42 + 0.05) / 2, 4)}
    pooled = taxonomy["reliability"]["4"]
    assert pooled[9] == {"pages": 5, "relevant": 5, "predicted": 0.95, "share": 1.0}
    assert pooled == pool_reliability([one["reliability"]["4"], two["reliability"]["4"]])
    # The pooled table: a's five pages (gap .05), d (.83), c (.65), e (.15) over 8 pages.
    assert taxonomy["ece_pooled"] == {"4": round((5 * 0.05 + 0.83 + 0.65 + 0.15) / 8, 4)}
    assert ece(pooled) == taxonomy["ece_pooled"]["4"]
    assert taxonomy["reliability_of"] == "relevance"
    assert average["oracle"]["verdict_f1"] == {} and average["oracle"]["reliability_of"] is None
    report = {"crawlers": ["taxonomy", "oracle"], "ks": [4], "topics": topics}
    verdicts, reliability = tables({**report, "average": average})[3:5]
    cells = {column.header: list(column.cells) for column in verdicts.columns}
    assert cells["crawler"] == ["taxonomy"] and cells["k"] == ["4"]  # no row for the oracle
    assert cells["P"] == [".75"] and cells["AUC"] == [".75"] and cells["score"] == ["R"]
    assert cells["best\nF1"] == [".90"] and cells["pooled\nECE"] == [".23"]
    cells = {column.header: list(column.cells) for column in reliability.columns}
    assert cells["taxonomy (R)"][9] == ".95 / 1.00 (5)" and cells["taxonomy (R)"][0] == "-"


def _topic(category: str, harvest: float, own: float | None) -> dict:
    crawl = {"harvest": {"250": harvest}, "recall": {"250": 0.5}, "similarity": {"250": 0.1}}
    if own is not None:
        gap = round(abs(own - harvest), 4)
        crawl |= {"own_harvest": {"250": own}, "calibration_gap": {"250": gap}}
    figures = {key: None for key in ("cpu_per_page", "pages_per_s", "hubs_on_topic")}
    difficulty = dict.fromkeys(
        ("popularity", "cohesiveness", "authoritativeness", "seed_target_similarity"), 0.5
    )
    return {
        "category": category,
        "difficulty": {"targets": 10, **difficulty},
        "crawlers": {
            "taxonomy": {**crawl, **figures},
            "oracle": {"harvest": {"250": 0.9}, "recall": {"250": 0.9}, **figures},
        },
    }


def test_calibration_gap_is_the_mean_of_the_topics_gaps():
    # Over-claimed on one topic, under-claimed on the other: the means agree, the gaps do not.
    topics = [_topic("A", 0.6, 0.4), _topic("B", 0.2, 0.4)]
    average = averages(topics, ["taxonomy", "oracle"])
    taxonomy = average["taxonomy"]
    assert taxonomy["harvest"] == {"250": 0.4} and taxonomy["own_harvest"] == {"250": 0.4}
    assert taxonomy["calibration_gap"] == {"250": 0.2}
    assert average["oracle"]["own_harvest"] == average["oracle"]["calibration_gap"] == {}
    report = {"crawlers": ["taxonomy", "oracle"], "ks": [100, 250], "topics": topics}
    summary = tables({**report, "average": average})[1]
    cells = {column.header: list(column.cells) for column in summary.columns}
    assert cells["own harvest\n@250"] == [".40", "-"]
    assert cells["calibration gap\n@250"] == [".20", "-"]
    assert calibration_k([100, 250, 1000]) == "250" and calibration_k([60]) == "60"


def test_measure_leaves_out_k_not_reached():
    result = measure(["a", "b"], {"a"}, [1, 100], lambda keys: [0.5] * len(keys))
    assert result["harvest"] == {"1": 1.0} and result["similarity"] == {"1": 0.5}
    assert steps(300) == [100, 250, 300] and steps(60) == [60]


# -- the crawl's estimate of what is left to find, and its stop, against the labels ----------


def test_truth_is_what_the_frontier_reaches_without_fetched_pages():
    # s and a fetched; x, r1 and b linked from them; x links back to a (fetched: not left)
    links = {
        "s": ["a", "x"],
        "a": ["r1", "b"],
        "x": ["r2", "a"],
        "r1": ["y"],
        "y": ["r3"],
        "b": ["r4"],
        "r5": ["s"],  # links into the crawl, but nothing links to it: out of reach
    }
    relevant = {"a", "r1", "r2", "r3", "r4", "r5"}
    order = ["s", "a", "b", "x"]
    truth = truth_at(links, order, relevant, 2)
    assert (truth.found, truth.queued, truth.left) == (1, 1, 4)  # r1 queued; r2, r3, r4 behind
    truth = truth_at(links, order, relevant, 3)
    assert (truth.found, truth.queued, truth.left) == (1, 2, 4)  # r4 queued now
    assert truth_at(links, order, relevant, 0) == truth_at(links, [], relevant, 5)
    assert truth_at(links, order, relevant, 0).left == 0  # nothing fetched: no frontier


def _estimate(pages: int, found: int = 10, left: float = 5.0, high: float = 8.0) -> dict:
    return {
        "found": found,
        "left": left,
        "low": max(0.0, 2 * left - high),
        "high": high,
        "next": 1.0,
        "queued": 40,
        "sampled": False,
        "pages": pages,
        "hosts": 3,
        "time": 0.0,
        "seconds": 0.01,
        "covered_since": None,
    }


def test_the_estimate_scored_at_a_checkpoint_is_the_nearest_within_a_quarter():
    history = [_estimate(pages) for pages in (50, 90, 110, 240, 300, 480, 740)]
    assert nearest_estimate(history, 100)["pages"] == 90  # as near as 110: the earlier
    assert nearest_estimate(history, 250)["pages"] == 240
    assert nearest_estimate(history, 500)["pages"] == 480
    assert nearest_estimate(history, 1000) is None  # 740 is more than 250 away
    assert nearest_estimate([_estimate(126)], 100) is None
    assert nearest_estimate([_estimate(125)], 100)["pages"] == 125
    assert nearest_estimate([], 100) is None


def test_the_stop_waits_close_pages_of_estimates_in_a_row_that_say_covered():
    # found 90, at most 5 left: covered at 0.8 and 0.9 (90 >= 85.5), not at 0.95 (90.25)
    covered, not_yet = {"found": 90, "high": 5.0}, {"found": 90, "high": 50.0}
    plan = {50: not_yet, 100: not_yet, 300: not_yet}  # covered from 150, broken at 300
    history = [_estimate(p, **plan.get(p, covered)) for p in range(50, 650, 50)]
    assert simulated_stop(history, 0.9, 100) == 250  # 150, 200, 250 in a row
    assert simulated_stop(history, 0.9, 200) == 550  # 300 broke the run: 350 to 550
    assert simulated_stop(history, 0.8, 0) == 150  # no wait: the first covered estimate
    assert simulated_stop(history, 0.9, 300) is None  # never 300 pages in a row
    assert simulated_stop(history, 0.95, 100) is None  # never covered at 0.95
    nothing = [_estimate(p, found=0, high=0.0) for p in range(50, 650, 50)]
    assert simulated_stop(nothing, 0.8, 0) is None  # covered needs something found


def test_coverage_figures_on_a_chain():
    # p0 -> p1 -> ... -> p399; every third page relevant; p0 the seed, p1 a training page
    order = [f"p{i}" for i in range(400)]
    links = {a: [b] for a, b in itertools.pairwise(order)}
    relevant = {key for i, key in enumerate(order) if i % 3 == 0}
    targets, skip = relevant - {"p0"}, {"p0", "p1"}
    left_after = {k: sum(i % 3 == 0 for i in range(k, 400)) for k in range(401)}
    history = [
        _estimate(p, found=p // 3, left=left_after[p] + 10, high=left_after[p] + 20)
        for p in range(50, 350, 50)
    ]
    figures = coverage_figures(links, order, relevant, targets, skip, history, 300, 120)
    assert fetched_at(order, skip, 300) == 302 and figures["stop"]["budget"] == 302
    assert set(figures["checkpoints"]) == {"100", "250"}  # 500 is past the budget
    at = figures["checkpoints"]["250"]
    assert at["pages"] == 250 and at["found"] == 83 and at["true_found"] == 84  # p0..p249
    assert at["truth_queued"] == 0 and at["truth_left"] == left_after[250] == 50  # p252..p399
    assert at["error"] == 10.0 and at["holds"] and at["low"] == 50 and at["high"] == 70
    # Never covered (found p/3, up to what is left + 20 more): no stop at any share
    stop = figures["stop"]
    assert stop["recall_budget"] == round(100 / 120, 4)  # p3..p300: 100 targets
    for share in ("0.8", "0.9", "0.95"):
        assert stop["shares"][share] == {
            "pages": 302,
            "stopped": False,
            "savings": 0.0,
            "recall": stop["recall_budget"],
        }
    # A crawl covered early stops there, with the recall of its pages then.
    done = [_estimate(p, found=60, high=1.0) for p in (50, 100, 150, 200, 250, 300)]
    figures = coverage_figures(
        links, order, relevant, targets, skip, done, 300, 120, shares=(0.9,), close_pages=200
    )
    assert figures["stop"]["shares"]["0.9"] == {
        "pages": 250,
        "stopped": True,
        "savings": round(1 - 250 / 302, 4),
        "recall": round(83 / 120, 4),  # p3..p249
    }
    assert coverage_figures(links, order, relevant, targets, skip, [], 300, 120) is None
    none_found = coverage_figures(links, order, relevant, targets, skip, done, 300, 0)
    assert none_found["stop"]["recall_budget"] is None


def _coverage(left: float, truth: int, holds: bool, stop: int, recall: float) -> dict:
    checkpoint = {"left": left, "truth_left": truth, "truth_queued": truth // 2}
    checkpoint |= {"error": left - truth, "holds": holds}
    share = {"pages": stop, "stopped": stop < 300, "savings": 1 - stop / 300, "recall": recall}
    return {
        "checkpoints": {"100": checkpoint},
        "stop": {"budget": 300, "recall_budget": 0.9, "shares": {"0.9": share}},
    }


def test_coverage_averages_and_tables():
    topics = [_topic("A", 0.5, 0.5), _topic("B", 0.3, 0.3), _topic("C", 0.3, None)]
    topics[0]["crawlers"]["taxonomy"]["coverage"] = _coverage(30.0, 20, False, 200, 0.8)
    topics[1]["crawlers"]["taxonomy"]["coverage"] = _coverage(10.0, 20, True, 300, 0.9)
    average = averages(topics, ["taxonomy", "oracle"])
    assert "coverage" not in average["oracle"]  # no estimates: none
    coverage = average["taxonomy"]["coverage"]  # over the two topics that have estimates
    assert coverage["checkpoints"]["100"] == {
        "topics": 2,
        "left": 20.0,
        "truth_left": 20.0,
        "truth_queued": 10.0,
        "abs_error": 10.0,
        "holds": 0.5,
    }
    assert coverage["stop"]["0.9"] == {
        "topics": 2,
        "stopped": 1,
        "pages": 250.0,
        "savings": round(1 / 6, 4),
        "recall": 0.85,
        "recall_budget": 0.9,
    }
    report = {"crawlers": ["taxonomy", "oracle"], "ks": [100, 250], "topics": topics}
    *_, estimates, stops = tables({**report, "average": average})
    cells = {column.header: list(column.cells) for column in estimates.columns}
    assert cells["crawler"] == ["taxonomy"] and cells["k"] == ["100"]
    assert cells["estimate"] == ["20.0"] and cells["|error|"] == ["10.0"]
    assert cells["hold"] == [".50"]
    cells = {column.header: list(column.cells) for column in stops.columns}
    assert cells["stops at"] == ["250"] and cells["stopped"] == ["1/2"]
    assert cells["recall"] == [".85"] and cells["at budget"] == [".90"]
    coverage["checkpoints"].clear()  # no estimate near a checkpoint: the stop only
    assert tables({**report, "average": average})[-1].title.startswith("The stop")
    assert len(tables({**report, "average": average})) == 4
    del topics[0]["crawlers"]["taxonomy"]["coverage"], topics[1]["crawlers"]["taxonomy"]["coverage"]
    assert len(tables({**report, "average": averages(topics, ["taxonomy", "oracle"])})) == 3


@pytest.mark.redis  # an embedded Redis of its own, as a crawl of the evaluation leaves
def test_crawl_estimates_reads_a_finished_crawls_log_and_stops_its_redis(tmp_path: Path):
    from focused.lab.evaluation.run import crawl_estimates
    from focused.store import keys
    from focused.store.client import REDIS_PARAMS
    from focused.store.coverage import CoverageStore
    from focused.store.crawl import CrawlStore
    from focused.store.embedded import embedded_client, embedded_server, stop_if_last

    home = (tmp_path / "crawls" / "taxonomy" / ".focused").resolve()
    client = embedded_client(home, REDIS_PARAMS)  # FOCUSED_REDIS_URL's is never the crawl's
    store = CrawlStore(client, "science")
    client.hset(store.key(keys.STATS), "fetched", 100)
    history = [_estimate(50), _estimate(100, found=20)]
    with store.held_lock(keys.COVERAGE_LOCK, 5) as lease:
        assert lease is not None
        for record in history:
            CoverageStore(store).record(record, lease)
    client.close()
    assert stop_if_last(home) and embedded_server(home) is None  # the crawl has ended
    assert crawl_estimates(home.parent) == history
    assert embedded_server(home) is None  # read and stopped again
    assert crawl_estimates(tmp_path / "never-started") == []


def test_oracle_takes_relevant_frontier_pages_first():
    links = {"s": ["x1", "r1"], "x1": ["r3"], "r1": ["x2", "r2"], "r2": [], "r3": [], "x2": []}
    relevant = {"r1", "r2", "r3"}
    assert oracle_order(links, ["s"], relevant, 10, skip={"s"}) == [
        "s",
        "r1",
        "r2",
        "x1",
        "r3",
        "x2",
    ]
    assert oracle_order(links, ["s"], relevant, 2, skip={"s"}) == ["s", "r1", "r2"]


def test_dist_seeds_are_exactly_dist_links_back():
    # a -> b -> c -> T ; d -> T ; e -> b ; T -> f ; U is a target with no page in the graph
    links = WebGraph({"a": ["b"], "b": ["c"], "c": ["T"], "d": ["T"], "e": ["b"], "T": ["f"]}, {})
    assert dist_seeds(links.digraph, {"T", "U"}, 1, 5) == ["c", "d"]
    assert dist_seeds(links.digraph, {"T"}, 3, 5, exclude={"e"}) == ["a"]
    assert dist_seeds(links.digraph, {"T"}, 4, 5) == []
    assert dist_seeds(links.digraph, {"U"}, 1, 5) == []
    assert len(dist_seeds(links.digraph, {"T"}, 1, 1, seed=3)) == 1
    assert parse_seeds_option("topics") is None and parse_seeds_option("dist:2") == 2
    with pytest.raises(Exception, match="dist:N"):
        parse_seeds_option("dist:x")


def test_difficulty_on_a_hand_made_graph():
    t1, t2, x, y, seed = (H + name for name in ("t1", "t2", "x", "y", "s"))
    links = {t1: [t2, x], t2: [t1], x: [t1], y: [x]}
    texts = {t1: "bird eagle nest", t2: "bird swan nest", x: "car", y: "car", seed: "bird wing"}
    task = Task("Birds", [seed], [], frozenset({t1, t2}), frozenset({t1, t2}))
    figures = difficulty(WebGraph(links, texts), task)
    assert figures["targets"] == 2
    assert figures["popularity"] == 0.75  # t1, t2 and x (links to t1) of 4 pages
    assert figures["cohesiveness"] == round(2 / 3, 4)  # t1->t2, t2->t1 of 3 out-links
    assert figures["authoritativeness"] == round(1.5 / (5 / 4), 4)  # 1.5 in-links vs 1.25
    assert 0 < figures["seed_target_similarity"] < 1


def test_centroid_model():
    docs = ["eagle nest feathers bird", "swan bird lake feathers", "owl bird night"]
    model = CentroidModel(threshold=0.3)
    with pytest.raises(NotFittedError):
        model.relevance(["bird"])
    assert model.fit(docs) is model
    on, off, empty = model.relevance(["a bird with feathers", "engine and gearbox", ""])
    assert 0 < on <= 1 and off == 0 and empty == 0
    relevance, categories = model.score_pages(["bird feathers"])
    assert categories == [None] and relevance[0] == pytest.approx(on, abs=0.2)
    assert model.best_path_good(["bird feathers", "engine"]).tolist() == [True, False]
    copy = clone(model)
    assert copy.get_params() == model.get_params() and not hasattr(copy, "centroid_")
    with pytest.raises(TypeError):
        model.relevance("a single string")
    with pytest.raises(ValueError):
        CentroidModel(threshold=2).fit(docs)


@pytest.mark.crawl
def test_evaluate_end_to_end(web: Path, tmp_path: Path):
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "focused.cli.main",
        "evaluate",
        str(web),
        "--topics",
        "Science",
    ]
    command += ["--pages", "100", "--crawlers", "taxonomy,breadth-first,oracle"]
    command += ["--out", str(out), "-s", "FOCUSED_HOST_DELAY=0", "-s", "FOCUSED_COVERAGE_PAGES=20"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Harvest@100" in done.stdout
    result = json.loads((out / "results.json").read_text())
    assert result["crawlers"] == ["taxonomy", "breadth-first", "oracle"]
    (topic,) = result["topics"]
    assert set(topic["difficulty"]) >= {"popularity", "cohesiveness", "authoritativeness"}
    for name in ("taxonomy", "breadth-first", "oracle"):
        figures = topic["crawlers"][name]
        assert figures["pages"] == 100 and len(figures["found_curve"]) == 100
        assert set(figures) >= {"harvest", "recall", "similarity", "of_oracle"}
    # The crawls' own harvest, from their feeds; the oracle has none.
    taxonomy = topic["crawlers"]["taxonomy"]
    own = taxonomy["own_harvest"]["100"]
    assert 0 < own <= 1 and "own_harvest" not in topic["crawlers"]["oracle"]
    assert taxonomy["calibration_gap"]["100"] == pytest.approx(
        abs(own - taxonomy["harvest"]["100"]), abs=1e-4
    )
    assert "own harvest" in done.stdout and "calibration gap" in done.stdout
    # Its verdicts against the labels, from the same feed (its calibrated probability); the
    # oracle has none.
    assert (
        taxonomy["reliability_of"] == "probability"
        and "verdict_f1" not in topic["crawlers"]["oracle"]
    )
    bins = taxonomy["reliability"]["100"]
    assert len(bins) == 10 and sum(b["pages"] for b in bins) + taxonomy["unscored"]["100"] == 100
    claimed_targets = taxonomy["verdict_precision"]["100"] * own * 100
    assert claimed_targets == pytest.approx(
        taxonomy["verdict_recall"]["100"] * taxonomy["harvest"]["100"] * 100, abs=0.1
    )
    assert 0 <= taxonomy["ece"]["100"] <= 1 and 0 <= taxonomy["best_f1"]["100"] <= 1
    assert (
        "Verdicts against the labels" in done.stdout and "Reliability of the score" in done.stdout
    )
    assert topic["crawlers"]["taxonomy"]["cpu_per_page"] > 0
    # The crawl's top hubs, as `focused hubs` names them from its Redis, scored by the labels
    hubs = topic["crawlers"]["taxonomy"]["hubs"]
    assert 0 < len(hubs) <= 10 and all(url.startswith("http://") for url in hubs)
    assert 0 <= topic["crawlers"]["taxonomy"]["hubs_on_topic"] <= len(hubs)
    assert "top 10 hubs" in done.stdout
    assert (
        topic["crawlers"]["oracle"]["harvest"]["100"]
        >= topic["crawlers"]["taxonomy"]["harvest"]["100"]
    )
    assert set(result["average"]) == {"taxonomy", "breadth-first", "oracle"}
    # The crawls' estimates of what is left, against the labels; the oracle made none.
    assert "coverage" not in topic["crawlers"]["oracle"]
    for name in ("taxonomy", "breadth-first"):
        figures = topic["crawlers"][name]
        coverage, oracle_found = figures["coverage"], topic["crawlers"]["oracle"]["found"]
        for k, at in coverage["checkpoints"].items():  # k = 100, if an estimate was near it
            assert abs(at["pages"] - int(k)) <= int(k) / 4
            assert 0 <= at["truth_queued"] <= at["truth_left"] and at["low"] <= at["high"]
            assert at["true_found"] <= at["pages"] and at["holds"] in (True, False)
        stop = coverage["stop"]
        assert stop["budget"] >= 100 and stop["recall_budget"] == round(
            figures["found"] / oracle_found, 4
        )
        for at in stop["shares"].values():
            assert at["pages"] <= stop["budget"] and 0 <= at["savings"] < 1
            assert at["recall"] <= stop["recall_budget"]
    assert "The stop (FOCUSED_CLOSE_COVERED)" in done.stdout
    assert (out / "curves.png").stat().st_size > 1000
    assert Path(topic["plot"]).stat().st_size > 1000


def test_centroid_topic_file_trains_once(tmp_path: Path):
    from focused.errors import TopicError
    from focused.topic.files import load_topic
    from focused.topic.methods import topic_model

    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "a.txt").write_text("eagle bird nest")
    (tmp_path / "examples" / "b.html").write_text("<title>Swan</title><p>bird lake</p>")
    topic_file = tmp_path / "topic.toml"
    head = 'name = "b"\nseeds = ["http://x.test/"]\n[relevance]\nmethod = "centroid"\n'
    topic_file.write_text(head + 'examples = "examples"\nthreshold = 0.1\n')
    topic = load_topic(topic_file)
    assert topic.relevance["threshold"] == 0.1
    model = topic_model(topic, str(tmp_path / "models"))
    assert model.best_path_good(["swan bird"]).tolist() == [True]
    (saved,) = (tmp_path / "models").glob("centroid-*.npz")
    mtime = saved.stat().st_mtime_ns
    topic_model(topic, str(tmp_path / "models"))
    assert saved.stat().st_mtime_ns == mtime
    topic_file.write_text(head + 'examples = "examples"\nthreshold = 2\n')
    with pytest.raises(TopicError, match="relevance.threshold"):
        load_topic(topic_file)


# -- every crawler's topic file, and validation tasks --------------------------------------


@pytest.fixture(scope="module")
def graph(bundle: Bundle) -> WebGraph:
    return WebGraph.from_bundle(bundle)


@pytest.fixture(scope="module")
def prepared(bundle: Bundle, graph: WebGraph, tmp_path_factory: pytest.TempPathFactory):
    """The synthetic web's topic "Science" (30 training pages), prepared for every crawler."""
    (task,) = load_tasks(bundle, graph, "Science", None)
    folder = tmp_path_factory.mktemp("prepared") / "science"
    return task, folder, prepare(bundle, graph, task, folder, list(CRAWLERS))


METHOD_OF = {
    "taxonomy": "taxonomy",
    "taxonomy-learning": "taxonomy",
    "taxonomy-reboost": "taxonomy",
    "taxonomy-no-gloss": "taxonomy",
    "taxonomy-no-vectors": "taxonomy",
    "breadth-first": "taxonomy",
    "best-first": "centroid",
    "centroid": "centroid",
    "best-first-anchor": "centroid",
    "best-first-both": "centroid",
    "examples": "examples",
    "positives": "examples",
    "keywords": "keywords",
    "keywords-name": "keywords",
    "keywords-no-learning": "keywords",
    "positives-no-learning": "examples",
    "semantic": "semantic",
    "thesaurus": "thesaurus",
    "best-n-first": "taxonomy",
    "genetic": "taxonomy",
    "genetic-keywords": "keywords",
    "hmm": "taxonomy",
    "infospiders": "taxonomy",
}


@pytest.mark.parametrize("name", list(CRAWLERS))
def test_prepare_writes_a_loadable_topic_file_for_every_crawler(prepared, name: str):
    task, folder, problems = prepared
    assert name not in problems, problems.get(name)
    topic = load_topic(folder / CRAWLERS[name][0])
    assert topic.method == METHOD_OF[name] and topic.seeds == task.seeds
    assert topic_model(topic, str(folder / "models")) is not None


def test_crawlers_are_their_method_and_link_score(prepared):
    import tomllib

    task, folder, _ = prepared
    relevance = tomllib.loads((folder / "taxonomy.toml").read_text())["relevance"]
    assert relevance == {"method": "taxonomy", "taxonomy": "taxonomy", "good": [task.category]}
    assert CRAWLERS["best-first"][1]["FOCUSED_LINK_SCORE"] == "content"
    assert CRAWLERS["best-first-anchor"][1]["FOCUSED_LINK_SCORE"] == "anchor"
    assert CRAWLERS["best-first-both"][1]["FOCUSED_LINK_SCORE"] == "both"
    # Seed 002's best-first crawlers score anchors and pages as the paper does, without
    # glosses or word vectors; the centroid crawler is the same topic with the defaults.
    assert all(
        CRAWLERS[n][1]["FOCUSED_ANCHOR_GLOSS"] == CRAWLERS[n][1]["FOCUSED_VECTORS"] == "False"
        for n in CRAWLERS
        if n.startswith("best-first")
    )
    assert CRAWLERS["centroid"] == ("best-first.toml", {})
    # The papers' strategies are ours with another strategy, the defaults otherwise.
    for name in ("best-n-first", "genetic", "hmm", "infospiders"):
        assert CRAWLERS[name] == ("taxonomy.toml", {"FOCUSED_STRATEGY": name})
    assert CRAWLERS["taxonomy-no-gloss"][1] == {"FOCUSED_ANCHOR_GLOSS": "false"}
    # No user wrote keywords for the synthetic web's topics: the name's words stand in.
    assert load_topic(folder / "keywords.toml").relevance["keywords"] == ["science"]
    assert load_topic(folder / "keywords-name.toml").relevance["keywords"] == ["science"]
    assert name_words("Science/Physics/Space_Astronomy") == ["space", "astronomy"]
    assert name_words("Citizenship/Politics_and_government") == ["politics", "government"]
    assert name_words("History/British_History_15001750") == ["british", "history"]


def test_prepare_fits_only_the_crawlers_asked_for(bundle: Bundle, graph: WebGraph, tmp_path):
    (task,) = load_tasks(bundle, graph, "Arts/Music", None)
    assert prepare(bundle, graph, task, tmp_path / "t", ["breadth-first"]) == {}
    assert sorted(p.name for p in (tmp_path / "t").glob("*.toml")) == ["taxonomy.toml"]
    assert not (tmp_path / "t" / "negatives").exists()
    with pytest.raises(Exception, match="unknown crawler"):
        prepare(bundle, graph, task, tmp_path / "u", ["depth-first"])


def test_negatives_are_the_taxonomy_of_the_other_categories(bundle: Bundle, prepared):
    task, folder, _ = prepared
    taxonomy = {p.relative_to(folder / "taxonomy") for p in (folder / "taxonomy").rglob("*.*")}
    negatives = {p.relative_to(folder / "negatives") for p in (folder / "negatives").rglob("*.*")}
    assert negatives and negatives < taxonomy
    assert {
        p for p in taxonomy - negatives if not within("/".join(p.parts[:-1]), task.category)
    } == set()
    assert all(not within("/".join(p.parts[:-1]), task.category) for p in negatives)


def test_generated_thesaurus_ranks_a_training_page_above_an_off_topic_page(
    bundle: Bundle, graph: WebGraph, prepared
):
    task, folder, _ = prepared
    text = (folder / "topic.thesaurus.toml").read_text()
    assert "stands in for a thesaurus a person would write" in text
    model = topic_model(load_topic(folder / "thesaurus.toml"), str(folder / "models"))
    assert list(model.facets_) == ["science"] and model.thesaurus_.negative == ()
    assert 20 <= len(model.thesaurus_.facets[0].terms) <= 40
    off_topic = next(k for k, paths in sorted(bundle.labels.items()) if "Sports" in paths[0])
    training = [graph.texts[url_key(url)] for url in task.training]
    on, off = model.relevance([training[0], graph.texts[off_topic]])
    assert on > off
    assert model.relevance(training).mean() > model.relevance([graph.texts[off_topic]])[0]


def test_thesaurus_from_examples_picks_words_of_the_positives():
    positives = ["the eagles nest in tall trees", "an eagle and its nest", "eagle feathers nest"]
    negatives = ["engines and gearboxes", "an engine nest of wires", "the gearbox of a car"]
    text = thesaurus_from_examples(positives, negatives, "birds", n_terms=2, min_df=2)
    import tomllib

    terms = tomllib.loads(text)["facets"]["birds"]["terms"]
    assert terms[0] == "eagle" and "engine" not in terms and len(terms) <= 2
    with pytest.raises(Exception, match="no word"):
        thesaurus_from_examples(["car"], ["car"], "x")


def test_validation_tasks_know_only_their_seeds_and_training_pages(
    bundle: Bundle, graph: WebGraph, tmp_path: Path
):
    (task,) = load_tasks(bundle, graph, "all", None, task_set="categories", categories=["Sports"])
    pages = {k for k, paths in bundle.labels.items() if any(within(p, "Sports") for p in paths)}
    seeds, training = {url_key(u) for u in task.seeds}, {url_key(u) for u in task.training}
    assert len(seeds) == 8 and len(training) == 30 and not seeds & training
    assert seeds | training <= pages and all(graph.links.get(k) for k in seeds)
    assert task.relevant == pages and task.targets == pages - seeds - training
    again = load_tasks(bundle, graph, "Sports", None, task_set="categories", categories=["Sports"])
    assert again == [task]
    other = load_tasks(bundle, graph, "all", None, 1, task_set="categories", categories=["Sports"])
    assert other[0].training != task.training

    # What the crawlers are given holds no page of the topic but the training pages.
    assert prepare(bundle, graph, task, tmp_path / "t", list(CRAWLERS)).keys() <= {"semantic"}
    page_of = {graph.texts[k]: k for k in pages}
    page_of |= {page_text(bundle.pages[k].body).document: k for k in pages}
    files = [p for p in (tmp_path / "t").rglob("*.*") if p.suffix in (".txt", ".html")]
    given = {page_of.get(example_text(p, p.parent)) for p in files} - {None}
    assert given == training
    thesaurus = (tmp_path / "t" / "topic.thesaurus.toml").read_text()
    assert '[facets."sports"]' in thesaurus
    for name in ("taxonomy.toml", "examples.toml"):
        assert load_topic(tmp_path / "t" / name).seeds == task.seeds


def test_task_sets_refuse_what_they_cannot_draw(bundle: Bundle, graph: WebGraph):
    with pytest.raises(Exception, match="too few"):
        load_tasks(bundle, graph, "all", None, task_set="categories", categories=["Arts/Cinema"])
    with pytest.raises(Exception, match="no page is labelled"):
        load_tasks(bundle, graph, "all", None, task_set="categories", categories=["Nope"])
    with pytest.raises(Exception, match="Wikispeedia"):
        load_tasks(bundle, graph, "all", None, task_set="validation")
    with pytest.raises(Exception, match="no topic"):
        load_tasks(bundle, graph, "Sports", None, task_set="categories", categories=["Arts"])
    assert overlaps("Science", "Science/Astronomy") and overlaps("Science/Astronomy", "Science")
    assert not overlaps("Science", "Sciences") and not overlaps("Arts/Music", "Arts/Cinema")


def test_shown_ks():
    assert shown_ks([100, 250, 300]) == (["100", "250", "300"], ["100", "250"])
    assert shown_ks([100, 250, 500, 1000]) == (["100", "250", "1000"], ["100", "250"])
    assert shown_ks([60]) == (["60"], ["60"])


def test_evaluate_on_categories_reports_the_task_set_and_what_did_not_run(
    web: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from focused.lab.evaluation import evaluate
    from focused.lab.evaluation.report import not_run_lines, tables

    # No WordNet where FOCUSED_WORDNET points: semantic cannot load, in one line, and no crawl.
    (tmp_path / "no-wordnet").mkdir()
    monkeypatch.setenv("FOCUSED_WORDNET", str(tmp_path / "no-wordnet"))
    report = evaluate(
        web,
        tmp_path / "out",
        crawlers=["semantic", "oracle"],
        pages=40,
        task_set="categories",
        categories=["Sports"],
    )
    assert report["task_set"] == "categories" and "drawn" in report["task_set_description"]
    (topic,) = report["topics"]
    assert topic["category"] == "Sports" and topic["crawlers"]["oracle"]["pages"] == 40
    assert "validation" not in tables(report)[0].title and "categories" in tables(report)[0].title
    assert set(topic["crawlers"]["semantic"]) == {"error"}
    (line,) = not_run_lines(report)
    assert line.startswith("semantic: not run on any topic: ") and "\n" not in line
    assert "wordnet" in line.lower()
    assert [c.header for c in tables(report)[1].columns][:1] == ["crawler"]
    assert report["average"]["semantic"]["topics"] == 0


@pytest.mark.skipif(not (WIKISPEEDIA / "labels.tsv").exists(), reason="no Wikispeedia bundle")
def test_validation_categories_do_not_overlap_the_development_topics():
    import json

    labels = (WIKISPEEDIA / "labels.tsv").read_text().splitlines()
    paths = [p for line in labels for p in line.partition("\t")[2].split("|") if p]
    topics = json.loads((WIKISPEEDIA / "topics.json").read_text())["topics"]
    dev = [t["category"] for t in topics]
    for category in VALIDATION_CATEGORIES:
        assert not any(overlaps(category, d) for d in dev), category
        size = sum(
            1
            for line in labels
            if any(within(p, category) for p in line.partition("\t")[2].split("|"))
        )
        assert 80 <= size <= 700, (category, size)
        assert any(within(p, category) for p in paths)
    assert not any(
        overlaps(a, b) for a in VALIDATION_CATEGORIES for b in VALIDATION_CATEGORIES if a != b
    )


@pytest.mark.skipif(not (WIKISPEEDIA / "topics.json").exists(), reason="no Wikispeedia bundle")
def test_users_keywords_cover_every_development_topic_and_validation_category():
    topics = json.loads((WIKISPEEDIA / "topics.json").read_text())["topics"]
    wanted = {t["category"] for t in topics} | set(VALIDATION_CATEGORIES)
    if (WEBKB / "topics.json").exists():  # its classes, but the catch-all "other"
        webkb = json.loads((WEBKB / "topics.json").read_text())["topics"]
        wanted |= {t["category"] for t in webkb} | {"department", "staff"}
    assert set(USER_KEYWORDS) == wanted
    assert all(len(set(words)) == 5 for words in USER_KEYWORDS.values())


def test_a_keywords_file_gives_the_keywords_crawler_its_topic(
    bundle: Bundle, graph: WebGraph, tmp_path
):
    path = tmp_path / "keywords.toml"
    path.write_text('"Arts/Music" = ["song", "melody"]\n')
    (task,) = load_tasks(bundle, graph, "Arts/Music", None, keywords=read_keywords(path))
    assert task.keywords == ("song", "melody")
    prepare(bundle, graph, task, tmp_path / "t", ["keywords", "keywords-name"])
    assert load_topic(tmp_path / "t" / "keywords.toml").relevance["keywords"] == list(task.keywords)
    assert load_topic(tmp_path / "t" / "keywords-name.toml").relevance["keywords"] == ["music"]
    path.write_text('"Arts/Music" = "song"\n')
    with pytest.raises(FocusedError, match="expected a list of words"):
        read_keywords(path)


@pytest.mark.crawl
def test_evaluate_scores_a_users_own_topic_file(web: Path, tmp_path: Path):
    """`--topic-file`: the user's file crawled as it is, one more crawler named after it."""
    topics = json.loads((web / "topics.json").read_text())["topics"]
    (science,) = [topic for topic in topics if topic["category"] == "Science"]
    mine = tmp_path / "science.toml"
    mine.write_text(
        f'name = "mine"\nseeds = {json.dumps(science["seeds"])}\n\n[relevance]\n'
        'method = "keywords"\nkeywords = ["virus", "evolution", "nebula", "molecule", "mineral"]\n'
    )
    out = tmp_path / "out"
    command = [sys.executable, "-m", "focused.cli.main", "evaluate", str(web)]
    command += ["--topics", "Science", "--topic-file", str(mine), "--crawlers", "oracle"]
    command += ["--pages", "40", "--out", str(out), "-s", "FOCUSED_HOST_DELAY=0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads((out / "results.json").read_text())
    assert result["crawlers"] == ["science.toml", "oracle"]
    (topic,) = result["topics"]
    figures = topic["crawlers"]["science.toml"]
    assert figures["pages"] == 40 and figures["exit_code"] == 0
    assert 0 < figures["harvest"]["40"] <= topic["crawlers"]["oracle"]["harvest"]["40"]
    assert "own_harvest" in figures and "science.toml" in done.stdout
    # One topic at a time, and a bad file is one line.
    command[command.index("Science")] = "all"
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and "--topic-file: 4 topics; name the one" in done.stderr
    mine.write_text('name = "mine"\n')
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert str(mine) in done.stderr
