"""focused evaluate (seed 003): scoring from served logs, the oracle, seed selection, topic
difficulty, the centroid model, and one small real evaluation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from focused.evaluation.graph import WebGraph
from focused.evaluation.oracle import oracle_order
from focused.evaluation.score import counted_pages, measure, served_order, steps
from focused.evaluation.tasks import Task, difficulty, dist_seeds, parse_seeds_option
from focused.relevance.centroid import CentroidModel

H = "http://www.a.test/"


def _log(*paths: str) -> list[dict]:
    return [{"url": H + p, "status": 200} for p in paths]


def _zero(keys):
    return [0.0] * len(keys)


def test_served_order_drops_robots_and_duplicates():
    log = _log("robots.txt", "s1", "a", "a", "b", "robots.txt", "A%20b", "A b")
    assert served_order(log) == [H + "s1", H + "a", H + "b", H + "A%20b"]


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


def test_measure_leaves_out_k_not_reached():
    result = measure(["a", "b"], {"a"}, [1, 100], lambda keys: [0.5] * len(keys))
    assert result["harvest"] == {"1": 1.0} and result["similarity"] == {"1": 0.5}
    assert steps(300) == [100, 250, 300] and steps(60) == [60]


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
    # a -> b -> c -> T ; d -> T ; e -> b
    in_links = {"T": ["c", "d"], "c": ["b"], "b": ["a", "e"]}
    assert dist_seeds(in_links, {"T"}, 1, 5) == ["c", "d"]
    assert dist_seeds(in_links, {"T"}, 3, 5, exclude={"e"}) == ["a"]
    assert len(dist_seeds(in_links, {"T"}, 1, 1, seed=3)) == 1
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


def test_evaluate_end_to_end(web: Path, tmp_path: Path):
    out = tmp_path / "out"
    command = [sys.executable, "-m", "focused.cli", "evaluate", str(web), "--topics", "Science"]
    command += ["--pages", "60", "--crawlers", "taxonomy,breadth-first,oracle"]
    command += ["--out", str(out), "-s", "FOCUSED_HOST_DELAY=0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Harvest@60" in done.stdout
    result = json.loads((out / "results.json").read_text())
    assert result["crawlers"] == ["taxonomy", "breadth-first", "oracle"]
    (topic,) = result["topics"]
    assert set(topic["difficulty"]) >= {"popularity", "cohesiveness", "authoritativeness"}
    for name in ("taxonomy", "breadth-first", "oracle"):
        figures = topic["crawlers"][name]
        assert figures["pages"] == 60 and len(figures["found_curve"]) == 60
        assert set(figures) >= {"harvest", "recall", "similarity", "of_oracle"}
    assert topic["crawlers"]["taxonomy"]["cpu_per_page"] > 0
    assert (
        topic["crawlers"]["oracle"]["harvest"]["60"]
        >= topic["crawlers"]["taxonomy"]["harvest"]["60"]
    )
    assert set(result["average"]) == {"taxonomy", "breadth-first", "oracle"}
    assert (out / "curves.png").stat().st_size > 1000
    assert Path(topic["plot"]).stat().st_size > 1000


def test_centroid_topic_file_trains_once(tmp_path: Path):
    from focused.errors import TopicError
    from focused.pipelines.classify import topic_model
    from focused.topic import load_topic

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
    (saved,) = (tmp_path / "models").glob("centroid-*.joblib")
    mtime = saved.stat().st_mtime_ns
    topic_model(topic, str(tmp_path / "models"))
    assert saved.stat().st_mtime_ns == mtime
    topic_file.write_text(head + 'examples = "examples"\nthreshold = 2\n')
    with pytest.raises(TopicError, match="relevance.threshold"):
        load_topic(topic_file)
