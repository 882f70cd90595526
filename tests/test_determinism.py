"""Scores do not depend on the process: two processes with different PYTHONHASHSEED fit the same
topic models and give the same pages, anchors and anchor glosses the same scores, to the last
bit (a crawl's processes share one frontier, and a crawl run again must rank alike)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from focused.relevance.text import page_text

pytestmark = pytest.mark.crawl  # subprocesses

TOPICS = Path(__file__).resolve().parents[1] / "topics"
ANCHORS = [
    "bicycle",
    "bank",
    "mouse",
    "star",
    "python",
    "Tawny Owls",
    "Krypton",
    "Music of Thailand",
    "Tanzania",
    "Great Crested Grebe",
]
PAGES = 12

# What each process prints: for each topic, its model's terms (if it has any) and the exact
# scores of the pages, the anchors alone and with their glosses (the pipeline's texts), by its
# model and its word vectors; and the glosses themselves.
SCORE = """
import json, sys
from focused.relevance.gloss import AnchorGlosser
from focused.topic.files import load_topic
from focused.topic.methods import topic_model, vector_model

given = json.loads(open(sys.argv[1]).read())
glosser = AnchorGlosser()
glosses = [glosser.gloss(anchor) for anchor in given["anchors"]]
texts = given["pages"] + given["anchors"] + [
    f"{anchor}\\n{gloss}" for anchor, gloss in zip(given["anchors"], glosses) if gloss
]
out = {"glosses": glosses}
for path in given["topics"]:
    topic = load_topic(path)
    model = topic_model(topic, given["models"])
    r, labels = model.score_pages(texts)
    vectors = vector_model(topic, given["models"], "auto")
    out[path] = {
        "terms": getattr(model, "terms_", None),
        "r": [float(x).hex() for x in r],
        "labels": labels,
        "vectors": None if vectors is None else [float(x).hex() for x in vectors.relevance(texts)],
    }
print(json.dumps(out))
"""


def keywords_topic(web: Path, folder: Path) -> Path:
    """The web's topic with keywords for its relevance (its word vectors fit a background)."""
    text = (web / "topic.toml").read_text()
    path = folder / "keywords.toml"
    path.write_text(
        text[: text.index("[relevance]")]
        + '[relevance]\nmethod = "keywords"\nkeywords = ["cycling", "bicycle", "wheel"]\n'
    )
    return path


def scores(given: Path, seed: int, models: Path) -> dict:
    """What SCORE prints in a process of its own with PYTHONHASHSEED ``seed``, fitting its
    models into ``models`` (so that neither process loads the other's)."""
    data = json.loads(given.read_text())
    given.write_text(json.dumps({**data, "models": str(models)}))
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    done = subprocess.run(
        [sys.executable, "-c", SCORE, str(given)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_two_processes_with_other_hash_seeds_score_alike(web, tmp_path):
    with gzip.open(web / "pages.jsonl.gz", "rt") as lines:
        bodies = [page["body"] for page in map(json.loads, lines) if "body" in page]
    given = tmp_path / "given.json"
    topics = [web / "topic.toml", keywords_topic(web, tmp_path), TOPICS / "examples/semantic.toml"]
    given.write_text(
        json.dumps(
            {
                "topics": [str(topic) for topic in topics],
                "pages": [page_text(body).document for body in bodies[:PAGES]],
                "anchors": ANCHORS,
            }
        )
    )
    first = scores(given, 1, tmp_path / "models-1")
    second = scores(given, 2, tmp_path / "models-2")
    glossed = sum(map(bool, first["glosses"]))
    assert glossed == len(ANCHORS)  # WordNet knows them all: each gloss has an order to keep
    taxonomy, keywords, semantic = (first[str(topic)] for topic in topics)
    assert len(taxonomy["r"]) == PAGES + len(ANCHORS) + glossed
    assert taxonomy["vectors"] and keywords["vectors"] and semantic["terms"]
    assert first["glosses"] == second["glosses"]
    for topic in map(str, topics):
        assert first[topic] == second[topic], topic
