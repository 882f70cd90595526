"""benchmarks/verdicts.py: the judge's verdicts on a labelled bundle's pages, offline."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from focused.lab.webs.bundle import Bundle

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def verdicts() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verdicts", BENCH / "verdicts.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.unit
def test_scores_of_verdicts_against_labels(verdicts: ModuleType) -> None:
    # both labelled pages rank above both others: AUC 1, and the top two give F1 1; the judge
    # called the first and the third relevant: P = R = F1 = 1/2
    got = verdicts.verdict_scores([0.9, 0.8, 0.3, 0.1], [True, False, True, False], [1, 1, 0, 0])
    assert got == {
        "auc": 1.0,
        "best_f1": 1.0,
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "called": 2,
        "labelled": 2,
    }
    tied = verdicts.verdict_scores([0.5, 0.5, 0.2], [False] * 3, [1, 0, 0])
    assert tied["auc"] == pytest.approx(0.75) and tied["f1"] == 0.0  # a tie counts half
    assert tied["best_f1"] == pytest.approx(2 / 3)  # the tied top two: 2 * 1 / (2 + 1)


@pytest.mark.unit
def test_a_topic_of_the_synthetic_web_is_judged_on_every_page(
    verdicts: ModuleType, web: Path, bundle: Bundle, tmp_path: Path, capsys
) -> None:
    assert bundle.topics is not None
    category = bundle.topics["topics"][0]["category"]
    args = argparse.Namespace(
        bundle=web, hosts="", topics=category, methods="taxonomy", work=tmp_path, set=[]
    )
    (row,) = verdicts.run(args)
    pages = verdicts.bundle_pages(bundle)
    labelled = sum(any(c.startswith(category) for c in bundle.categories(p.url)) for p in pages)
    assert row["topic"] == category and row["labelled"] == labelled > 0
    assert row["auc"] > 0.9 and 0 < row["f1"] <= row["best_f1"] <= 1
    assert "mean       taxonomy" in capsys.readouterr().out


@pytest.mark.unit
def test_the_shape_is_learnt_where_word_vectors_judge_pages(
    verdicts: ModuleType, web: Path, bundle: Bundle, tmp_path: Path
) -> None:
    from focused.lab.evaluation.graph import WebGraph
    from focused.lab.evaluation.tasks import load_tasks
    from focused.relevance.vectors import vectors_installed

    graph = WebGraph.from_bundle(bundle)
    task = load_tasks(bundle, graph, bundle.topics["topics"][0]["category"], None)[0]
    verdicts.prepare(bundle, graph, task, tmp_path, ["taxonomy", "positives"])
    settings = {"FOCUSED_MODELS_DIR": str(tmp_path / "models")}
    taxonomy = verdicts.judge_of(tmp_path / "taxonomy.toml", settings)
    positives = verdicts.judge_of(tmp_path / "positives.toml", settings)
    assert taxonomy.shape is None  # a taxonomy's R is 0 or 1 on most pages
    if vectors_installed():
        # the training pages, saved with their URLs: every one tells its URL's shape
        assert positives.shape is not None
        assert positives.shape.examples_[0, 1] == len(task.training)
    off = verdicts.judge_of(tmp_path / "positives.toml", {**settings, "FOCUSED_PAGE_SHAPE": False})
    assert off.shape is None
