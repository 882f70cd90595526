"""What a crawl process pays: the judge's scores come out the same to the last bit from the
kept term columns and word rows as from scikit-learn's vectorizer and a search of the
vocabulary, and a default crawl process imports no package it does not use."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict
from functools import partial

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from focused.items import Page
from focused.relevance import HierarchicalClassifier, analyze, counts
from focused.relevance.vectors import CategoryVectors, WordVectors
from focused.topic.judge import Judge
from tests.pages import page
from tests.test_relevance import FILLER, WORDS, document

# Words the models do not know, stop words, capitals, digits, other scripts, hyphens.
ODD = "The Café naïve ÉCOLE x y2k über-cool 1999 and of ΑΘΗΝΑ москва bicycles Feathers"


def pages(n: int = 120) -> list[Page]:
    rng = np.random.default_rng(7)
    names = list(WORDS)
    out = []
    for i in range(n):
        text = document(names[i % len(names)], 1000 + i, length=int(rng.integers(0, 300)))
        anchors = [" ".join(rng.choice([*FILLER, *ODD.split()], 2)) for _ in range(i % 9)]
        anchors += [WORDS[names[(i + k) % len(names)]].split()[k] for k in range(i % 4)]
        out.append(
            page(
                f"{text} {ODD if i % 3 == 0 else ''}",
                [(f"http://b.test/{i}/{k}", a, a) for k, a in enumerate(anchors)],
                url=f"http://a.test/{i}",
                title=f"Page {i} {ODD if i % 5 == 0 else ''}",
                anchor=anchors[0] if anchors else "",
            )
        )
    return out


def vectors() -> WordVectors:
    words = sorted({w for text in WORDS.values() for w in text.split()} | set(FILLER))
    matrix = np.random.default_rng(3).normal(size=(len(words), 8)).astype(np.float32)
    return WordVectors.from_words(words, matrix)


def scored(fast: bool, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    texts = [document(c, i) for i, c in enumerate(WORDS) for _ in range(3)]
    labels = [c for c in WORDS for _ in range(3)]
    model = HierarchicalClassifier(good=["Sports"], min_df=1).fit(texts, labels)
    word_vectors = vectors()
    category_vectors = CategoryVectors(good=["Sports"], vectors=word_vectors).fit(texts, labels)
    if not fast:  # scikit-learn's vectorizer and a search of the vocabulary for every word
        monkeypatch.setattr(counts, "_columns", lambda vectorizer: None)
        monkeypatch.setattr(word_vectors, "lookup", word_vectors._search)
    judge = Judge(
        model, threshold=0.5, link_score="anchor", needs_path=True, vectors=category_vectors
    )
    items = [asdict(judge(item)) for item in pages()]
    assert (model.vectorizer_ in counts._COLUMNS) == fast  # the kept columns counted
    return items


def test_the_judge_scores_pages_the_same_to_the_last_bit(monkeypatch):
    fast = scored(True, monkeypatch)
    plain = scored(False, monkeypatch)
    assert [json.dumps(item, sort_keys=True) for item in fast] == [
        json.dumps(item, sort_keys=True) for item in plain
    ]
    assert any(link["anchor_relevance"] for item in fast for link in item["links"])


@pytest.mark.parametrize("stem", [True, False])
def test_term_counts_are_the_vectorizers_matrix(stem):
    texts = [document(c, i, length=i * 7) for i, c in enumerate(WORDS)] + [ODD, "", "1 2 3"]
    vectorizer = CountVectorizer(analyzer=partial(analyze, stem=stem), dtype=np.float32)
    vectorizer.fit(texts[:4])
    for batch in (texts, texts[::-1], texts[-3:], []):
        got, expected = counts.count_terms(vectorizer, batch), vectorizer.transform(batch)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        for part in ("data", "indices", "indptr"):
            assert np.array_equal(getattr(got, part), getattr(expected, part)), part


def test_another_vectorizer_counts_by_itself():
    vectorizer = CountVectorizer().fit(["a swan", "the swans"])
    got = counts.count_terms(vectorizer, ["swan swan"])
    assert (got != vectorizer.transform(["swan swan"])).nnz == 0


def test_kept_word_rows_are_the_searched_ones_and_start_again_when_full(monkeypatch):
    word_vectors = vectors()
    monkeypatch.setattr("focused.relevance.vectors.MAX_KEPT_ROWS", 5)
    words = ["bicycle", "nope", "owl", "bicycle", "zzz", "feather", "quantum", "year", "café"]
    for batch in (words, words[::-1], words[2:], [], ["owl"]):
        assert word_vectors.lookup(batch).tolist() == word_vectors._search(batch).tolist()
        assert len(word_vectors._rows) <= max(5, len(set(words)))  # or one batch's words
    word_vectors.lookup(["pear", "apple", "plum", "fig", "kiwi", "lime"])  # a sixth: anew
    assert set(word_vectors._rows) == {"pear", "apple", "plum", "fig", "kiwi", "lime"}


# Modules a default crawl does not use: rendering, near copies, exports, main text (loaded at
# the first page whose main text is kept), k-means (a learning topic's refit).
UNUSED = (
    "playwright",
    "scrapy_playwright",
    "datasketch",
    "duckdb",
    "trafilatura",
    "sklearn.cluster",
)


@pytest.mark.redis  # a subprocess
def test_a_default_crawl_process_loads_no_package_it_does_not_use(tmp_path):
    """The crawl's spider, add-on and every component its settings name, imported as
    ``scrapy crawl focused`` imports them."""
    code = """
import json, sys
from scrapy.utils.misc import load_object
from scrapy.settings import Settings
import focused.settings
from focused.addon import FocusedAddon
import focused.spiders.focused
settings = Settings()
settings.setmodule(focused.settings)
FocusedAddon().update_settings(settings)
for name in ("ITEM_PIPELINES", "EXTENSIONS", "DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES"):
    for path, order in settings.getwithbase(name).items():
        if order is not None:
            load_object(path)
for name in ("SCHEDULER", "DUPEFILTER_CLASS"):
    load_object(settings[name])
print(json.dumps(sorted(sys.modules)))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert "focused" in loaded and "scrapy" in loaded
    assert not loaded & set(UNUSED), loaded & set(UNUSED)
