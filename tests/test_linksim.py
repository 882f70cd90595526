"""benchmarks/linksim.py's simulation loop and shares, on a hand-made 6-page graph."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "linksim.py"


@pytest.fixture(scope="module")
def linksim() -> ModuleType:
    spec = importlib.util.spec_from_file_location("linksim", PATH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["linksim"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# S seeds; T is a training page. C is found first through a poor anchor of A, then through
# a good one of B: the shipped frontier keeps the first score, anchor_max raises it.
ANCHORS = {
    "S": [("A", "alpha"), ("B", "beta"), ("T", "tee"), ("F", "phi")],
    "A": [("C", "poor"), ("D", "fair")],
    "B": [("C", "great")],
    "C": [("E", "eta")],
    "D": [],
    "E": [],
    "F": [],
    "T": [],
}
ANCHOR_R = {
    "alpha": 0.9,
    "beta": 0.6,
    "tee": 0.99,
    "poor": 0.2,
    "fair": 0.5,
    "great": 0.95,
    "eta": 0.1,
    "phi": 0.55,
}


def task() -> dict:
    pages = list(ANCHORS)
    return {
        "category": "X",
        "set": "development",
        "seeds": ["S"],
        "training": ["T"],
        "relevant": {"C", "E", "T"},
        "targets": {"C", "E"},
        "page_r": {p: (0.9 if p in {"B", "C"} else 0.1) for p in pages},
        "page_cat": {},
        "anchor_raw": dict(ANCHOR_R),
        "anchor_r": dict(ANCHOR_R),
    }


def test_first_link_score_versus_best(linksim: ModuleType) -> None:
    first = linksim.crawl(task(), ANCHORS, linksim.anchor_first(), pages=10)
    best = linksim.crawl(task(), ANCHORS, linksim.anchor_max(), pages=10)
    assert first == ["S", "T", "A", "B", "F", "D", "C", "E"]
    assert best == ["S", "T", "A", "B", "C", "F", "D", "E"]


def test_pages_and_shares_skip_seeds_and_training(linksim: ModuleType) -> None:
    order = linksim.crawl(task(), ANCHORS, linksim.anchor_max(), pages=3)
    assert order == ["S", "T", "A", "B", "C"]
    assert linksim.found_at(order, task(), (1, 3, 5)) == {1: 0, 3: 1, 5: 1}
    # the oracle: A, then C and E as soon as they are discovered
    assert linksim.oracle_found(ANCHORS_LINKS, task(), (3, 5)) == {3: 2, 5: 2}


ANCHORS_LINKS = {page: [target for target, _ in links] for page, links in ANCHORS.items()}


def test_sibling_rescores_the_parents_links(linksim: ModuleType) -> None:
    """Fetching C (relevant) raises the yield of its parent A, so A's link to D is re-scored
    above F: without the yield (w = 0) F comes first."""
    assert linksim.crawl(task(), ANCHORS, linksim.sibling(0.5), pages=10)[5:] == ["D", "F", "E"]
    assert linksim.crawl(task(), ANCHORS, linksim.sibling(0.0), pages=10)[5:] == ["F", "D", "E"]


def test_ideas_by_name(linksim: ModuleType) -> None:
    names = [name for name, _ in linksim.chosen("mult_parent:0.3,anchor_first,noisy_or")]
    assert names == ["mult_parent 0.3", "anchor_first", "noisy_or 0.5", "noisy_or 0.9"]
    with pytest.raises(SystemExit):
        linksim.chosen("nope")
