"""Taxonomies made from labelled bundles (focused.lab.webs.labels)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from focused.cli.web import add_from_labels_arguments, run_from_labels
from focused.errors import FocusedError
from focused.lab.webs.bundle import Bundle, write_bundle
from focused.lab.webs.labels import taxonomy_from_labels, within
from focused.relevance import page_text, read_taxonomy
from focused.relevance.shape import example_shape
from focused.relevance.taxonomy import example_text

TOPIC = "Science"


@pytest.fixture(scope="module")
def topic(bundle: Bundle) -> dict:
    assert bundle.topics is not None
    return next(t for t in bundle.topics["topics"] if t["category"] == TOPIC)


def _tree(bundle: Bundle) -> set[str]:
    nodes = set()
    for paths in bundle.labels.values():
        for path in paths:
            parts = path.split("/")
            nodes |= {"/".join(parts[: i + 1]) for i in range(len(parts))}
    return nodes


def _folders(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir()}


def _examples(root: Path) -> dict[str, list[str]]:
    """Category -> sorted file names of its own examples (.txt, and .html for the topic's)."""
    return {
        folder: sorted(p.name for p in (root / folder).glob("*.*")) for folder in _folders(root)
    }


def _texts(root: Path, under: Path | None = None, pattern: str = "*.*") -> set[str]:
    """The documents of the example files below ``under`` (else ``root``), as the taxonomy
    reads them."""
    return {example_text(p, root) for p in (under or root).rglob(pattern) if p.is_file()}


def _documents(bundle: Bundle, urls: list[str]) -> set[str]:
    """What an example file of each page holds."""
    return {page_text(bundle.page(url).body).document for url in urls}


def test_folders_are_the_category_tree(bundle: Bundle, tmp_path: Path) -> None:
    root = taxonomy_from_labels(bundle, tmp_path / "tax", per_category=5)
    assert root == tmp_path / "tax"
    assert _folders(root) == _tree(bundle)
    examples = _examples(root)
    for category, names in examples.items():
        filed = [u for u, paths in bundle.labels.items() if category in paths]
        assert len(names) == min(5, len(filed)), category
    assert read_taxonomy(root).categories == sorted(_tree(bundle))


def test_examples_are_the_pages_text(bundle: Bundle, tmp_path: Path) -> None:
    root = taxonomy_from_labels(bundle, tmp_path / "tax", per_category=3)
    leaf = sorted(p for paths in bundle.labels.values() for p in paths)[0]
    filed = [u for u, paths in bundle.labels.items() if leaf in paths]
    texts = {p.read_text(encoding="utf-8") for p in root.joinpath(*leaf.split("/")).glob("*.txt")}
    assert len(texts) == 3
    assert texts <= _documents(bundle, filed)


def test_topic_subtree_holds_exactly_the_topic_examples(
    bundle: Bundle, topic: dict, tmp_path: Path
) -> None:
    root = taxonomy_from_labels(
        bundle,
        tmp_path / "tax",
        per_category=50,
        topic_category=TOPIC,
        topic_examples=topic["training"],
        exclude=topic["seeds"],
    )
    inside = {c: n for c, n in _examples(root).items() if within(c, TOPIC)}
    assert sum(len(names) for names in inside.values()) == len(topic["training"])
    for url in topic["training"]:
        (path,) = bundle.categories(url)  # one leaf per page in a generated web
        filed = _texts(root, root.joinpath(*path.split("/")))
        assert _documents(bundle, [url]) <= filed
    assert _texts(root, root.joinpath(TOPIC)) == _documents(bundle, topic["training"])
    # the topic's own examples are the pages, naming their URLs, so their shape is known
    saved = sorted(root.joinpath(TOPIC).rglob("*.html"))
    assert len(saved) == len(topic["training"])
    assert all(example_shape(path)[0] is not None for path in saved)
    assert not list(root.joinpath(TOPIC).rglob("*.txt"))

    topic_pages = [u for u, paths in bundle.labels.items() if any(within(p, TOPIC) for p in paths)]
    outside_texts = {
        p.read_text(encoding="utf-8")
        for p in root.rglob("*.txt")
        if not within(p.parent.relative_to(root).as_posix(), TOPIC)
    }
    assert outside_texts
    assert not outside_texts & _documents(bundle, topic_pages)


def test_seeds_are_never_examples(bundle: Bundle, topic: dict, tmp_path: Path) -> None:
    other = next(t for t in bundle.topics["topics"] if not within(t["category"], TOPIC))
    root = taxonomy_from_labels(
        bundle,
        tmp_path / "tax",
        per_category=1000,
        topic_category=TOPIC,
        topic_examples=topic["training"],
        exclude=other["seeds"],
    )
    assert not _texts(root) & _documents(bundle, other["seeds"])


def test_deterministic_and_seeded(bundle: Bundle, topic: dict, tmp_path: Path) -> None:
    def build(name: str, seed: int) -> dict[str, str]:
        root = taxonomy_from_labels(
            bundle,
            tmp_path / name,
            per_category=4,
            topic_category=TOPIC,
            topic_examples=topic["training"],
            seed=seed,
        )
        return {
            p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in root.rglob("*.*")
        }

    first = build("a", 0)
    assert build("b", 0) == first
    assert build("c", 1) != first


def test_internal_nodes_and_several_labels(tmp_path: Path) -> None:
    urls = [f"http://www.h.web.test/P{i}" for i in range(8)]
    labels = {
        urls[0]: ["A"],
        urls[1]: ["A"],
        urls[2]: ["A/B"],
        urls[3]: ["A/B", "C"],
        urls[4]: ["A/B/D"],
        urls[5]: ["C"],
        urls[6]: ["C", "A/B/D"],
        urls[7]: [],
    }
    pages = [
        {
            "url": url,
            "status": 200,
            "headers": {"Content-Type": "text/html; charset=utf-8"},
            "body": f"<html><title>Page {i}</title><body><p>words {i}</p></body></html>",
        }
        for i, url in enumerate(urls)
    ]
    bundle = Bundle.load(write_bundle(tmp_path / "web", pages, labels=labels))

    root = taxonomy_from_labels(bundle, tmp_path / "all", per_category=2)
    examples = _examples(root)
    assert set(examples) == {"A", "A/B", "A/B/D", "C"}
    assert len(examples["A"]) == 2  # an internal node keeps the pages filed at it
    assert sum(len(names) for names in examples.values()) == 7  # each page filed once

    root = taxonomy_from_labels(
        bundle, tmp_path / "topic", topic_category="A/B", topic_examples=[urls[6], urls[2]]
    )
    examples = _examples(root)
    assert len(examples["A/B"]) == 1 and len(examples["A/B/D"]) == 1
    texts = _texts(root)
    # P3 and P6 are also labelled C, but they are topic pages: C keeps only P5.
    assert examples["C"] and len(examples["C"]) == 1
    assert (root / "C" / examples["C"][0]).read_text(encoding="utf-8") == "Page 5\nwords 5"
    assert "Page 3\nwords 3" not in texts


def test_refusals(bundle: Bundle, tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "old.txt").write_text("stale")
    with pytest.raises(FocusedError, match="not an empty folder"):
        taxonomy_from_labels(bundle, tmp_path / "full")
    with pytest.raises(FocusedError, match="not in the labels"):
        taxonomy_from_labels(bundle, tmp_path / "a", topic_category="No/Such")
    with pytest.raises(FocusedError, match="no page"):
        taxonomy_from_labels(
            bundle, tmp_path / "b", topic_category=TOPIC, topic_examples=["http://nowhere.test/"]
        )


def test_command(web: Path, bundle: Bundle, topic: dict, tmp_path: Path, capsys) -> None:
    parser = argparse.ArgumentParser()
    add_from_labels_arguments(parser)
    out = tmp_path / "tax"
    args = parser.parse_args([str(web), "-o", str(out), "--per-category", "3", "--topic", TOPIC])
    assert run_from_labels(args) == 0
    assert "examples to" in capsys.readouterr().out
    assert _texts(out, out.joinpath(TOPIC)) == _documents(bundle, topic["training"])
    with pytest.raises(FocusedError, match="no topic"):
        run_from_labels(parser.parse_args([str(web), "-o", str(tmp_path / "x"), "--topic", "Nope"]))
