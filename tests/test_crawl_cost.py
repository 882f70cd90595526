"""What a crawl process pays: the judge's scores come out the same to the last bit from the
kept term columns and word rows and the models' own products as from scikit-learn's vectorizer,
SciPy's sparse product and a search of the vocabulary, and a default crawl process imports no
package it does not use."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
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


class VectorizerTerms:
    """Term counts from scikit-learn's CountVectorizer over the model's vocabulary."""

    def __init__(self, model: object, vocabulary: dict[str, int], stem: bool):
        self.vectorizer = CountVectorizer(
            analyzer=partial(analyze, stem=stem), vocabulary=vocabulary, dtype=np.float32
        )

    def count(self, texts: list[str]) -> counts.Rows:
        matrix = self.vectorizer.transform(texts)
        return counts.Rows(matrix.indptr, matrix.indices, matrix.data)


def scipy_product(rows: counts.Rows, matrix: np.ndarray, dtype: type) -> np.ndarray:
    shape = (len(rows.indptr) - 1, len(matrix))
    product = sp.csr_matrix((rows.values, rows.columns, rows.indptr), shape=shape) @ matrix
    return np.asarray(product, dtype=dtype)


def scored(fast: bool, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    texts = [document(c, i) for i, c in enumerate(WORDS) for _ in range(3)]
    labels = [c for c in WORDS for _ in range(3)]
    model = HierarchicalClassifier(good=["Sports"], min_df=1).fit(texts, labels)
    word_vectors = vectors()
    category_vectors = CategoryVectors(good=["Sports"], vectors=word_vectors).fit(texts, labels)
    if not fast:  # scikit-learn's vectorizer, SciPy's product, a search for every word
        monkeypatch.setattr("focused.relevance.taxonomy.terms", VectorizerTerms)
        monkeypatch.setattr("focused.relevance.taxonomy.rows_times", scipy_product)
        monkeypatch.setattr("focused.relevance.vectors.rows_times", scipy_product)
        monkeypatch.setattr(word_vectors, "lookup", word_vectors._search)
    judge = Judge(
        model, threshold=0.5, link_score="anchor", needs_path=True, vectors=category_vectors
    )
    items = [asdict(judge(item)) for item in pages()]
    assert (model in counts._TERMS) == fast  # the kept columns counted
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
    table = counts.Terms(vectorizer.vocabulary_, stem)
    for batch in (texts, texts[::-1], texts[-3:], []):
        got, expected = table.count(batch), vectorizer.transform(batch)
        assert np.array_equal(got.indptr, expected.indptr)
        assert np.array_equal(got.columns, expected.indices)
        assert np.array_equal(got.values, expected.data)


@pytest.mark.parametrize(
    ("dtype", "outcomes"), [(np.float32, 2), (np.float32, 14), (np.float64, 50)]
)
def test_the_product_adds_as_scipys_does_to_the_last_bit(dtype, outcomes):
    rng = np.random.default_rng(outcomes)
    matrix = rng.normal(scale=5, size=(3000, outcomes)).astype(dtype)
    for _ in range(20):
        lengths = rng.integers(0, 1500, int(rng.integers(1, 8)))
        lengths[rng.random(len(lengths)) < 0.3] = 0  # texts without a known word
        columns = [np.sort(rng.choice(len(matrix), n, replace=False)) for n in lengths]
        values = rng.integers(1, 9, int(lengths.sum())) * rng.random(int(lengths.sum()))
        rows = counts.Rows(
            np.concatenate(([0], np.cumsum(lengths))),
            np.concatenate(columns).astype(np.int64),
            values.astype(dtype),
        )
        got = counts.rows_times(rows, matrix, dtype)
        assert got.dtype == dtype
        bits = f"i{got.itemsize}"  # the same bits, not only equal values
        assert np.array_equal(got.view(bits), scipy_product(rows, matrix, dtype).view(bits))


# Modules a default crawl does not use: rendering, near copies, exports, main text (loaded at
# the first page whose main text is kept), scikit-learn (fitting a model, a learning topic's
# refit), nltk (the semantic method's WordNet).
UNUSED = (
    "playwright",
    "scrapy_playwright",
    "datasketch",
    "duckdb",
    "trafilatura",
    "sklearn",
    "nltk",
)


def modules_loaded(code: str, cwd: Path) -> set[str]:
    """The modules a fresh Python process has imported once ``code`` ran: ``code`` prints
    ``json.dumps(sorted(sys.modules))`` last."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


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
    loaded = modules_loaded(code, tmp_path)
    assert "focused" in loaded and "scrapy" in loaded
    assert not loaded & set(UNUSED), loaded & set(UNUSED)


# What a crawl with fitted models needs none of: scikit-learn (and the SciPy statistics and
# pandas it imports) fits models, nltk's package reads WordNet for the semantic method only.
FITTING = ("sklearn", "nltk", "scipy.stats", "pandas")


@pytest.mark.redis  # a subprocess
def test_fitted_models_load_and_score_without_scikit_learn_or_nltk(web, tmp_path):
    """A taxonomy topic's model and word vectors, loaded as a crawl's classifier pipeline
    loads them once fitted, score a page and its glossed anchors without importing either."""
    from focused.topic.files import load_topic
    from focused.topic.methods import topic_model, vector_model

    topic = load_topic(web / "topic.toml")
    models = tmp_path / "models"
    topic_model(topic, str(models))  # fitted here, as the first crawl process fits them
    assert vector_model(topic, str(models), "true") is not None
    code = f"""
import json, sys
from focused.relevance.gloss import AnchorGlosser
from focused.topic.files import load_topic
from focused.topic.methods import topic_model, vector_model
topic = load_topic({str(web / "topic.toml")!r})
model = topic_model(topic, {str(models)!r})
vectors = vector_model(topic, {str(models)!r}, "true")
glosser = AnchorGlosser()
anchors = ["Tawny Owls", "Music of Thailand", "Bicycle wheel"]
texts = ["A page on wheels, saddles and a peloton", *anchors]
texts += [f"{{anchor}}\\n{{glosser.gloss(anchor)}}" for anchor in anchors]
relevance, categories = model.score_pages(texts)
assert len(relevance) == len(categories) == 7 and len(vectors.relevance(texts)) == 7
print(json.dumps(sorted(sys.modules)))
"""
    loaded = modules_loaded(code, tmp_path)
    assert "focused.relevance.taxonomy" in loaded and "focused.relevance.nouns" in loaded
    assert not loaded & set(FITTING), loaded & set(FITTING)
