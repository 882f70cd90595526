"""A light topic that learns itself: the learned model on hand-made pages (a word the keywords
never name gains weight, a drifting refit is refused), its store in Redis, the frontier's
re-scoring, and a keywords crawl that learns, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from focused.relevance.keywords import KeywordModel
from focused.relevance.learned import TOPIC, LearnedTopic
from focused.relevance.vectors import CategoryVectors, WordVectors
from focused.store import keys
from focused.store.frontier.base import Link
from focused.store.learning import LearningStore, SampledPage
from focused.topic.judge import Judge, log_odds_sum
from tests.conftest import focused
from tests.pages import page

# Word vectors with one axis a theme: cycling, running, cooking, football, gardening. "peloton"
# is a word of cycling the keywords never name, nearer running than cycling in the vectors.
WORDS = {
    "cycling": [1.0, 0.0, 0.0, 0.0, 0.0],
    "bicycle": [0.9, 0.1, 0.0, 0.0, 0.0],
    "peloton": [0.5, 0.8, 0.0, 0.0, 0.0],
    "runner": [0.0, 1.0, 0.0, 0.0, 0.0],
    "marathon": [0.1, 0.9, 0.0, 0.0, 0.0],
    "recipe": [0.0, 0.0, 1.0, 0.0, 0.0],
    "oven": [0.0, 0.1, 0.9, 0.0, 0.0],
    "football": [0.0, 0.0, 0.0, 1.0, 0.0],
    "goal": [0.0, 0.1, 0.0, 0.9, 0.0],
    "garden": [0.0, 0.0, 0.1, 0.0, 1.0],
}
KEYWORDS = "cycling bicycle"
ON_TOPIC = ["peloton", "bicycle peloton peloton", "peloton cycling peloton"]
OFF_TOPIC = ["runner marathon", "marathon runner", "recipe oven", "football goal", "garden"]


@pytest.fixture(scope="module")
def vectors() -> WordVectors:
    """Ten words and no general knowledge: the learned models here have no background."""
    return WordVectors.from_words(list(WORDS), np.array(list(WORDS.values()), dtype=np.float32))


def learned(vectors: WordVectors, pages: list[str], verdicts: list[float]) -> LearnedTopic:
    return LearnedTopic(groups=2, background=0, vectors=vectors).fit(pages, verdicts, [KEYWORDS])


def test_a_word_the_keywords_never_name_gains_weight_when_the_relevant_pages_share_it(vectors):
    # The same categories, the topic as the keywords alone give it: peloton is nearer running.
    before = CategoryVectors(good=[TOPIC], vectors=vectors).fit(
        [KEYWORDS, *OFF_TOPIC], [TOPIC, *(f"other/{i}" for i in range(len(OFF_TOPIC)))]
    )
    after = learned(vectors, ON_TOPIC + OFF_TOPIC, [0.9, 0.8, 0.7, 0.05, 0.04, 0.03, 0.02, 0.01])
    assert before.relevance(["peloton"])[0] < 0.5 <= after.relevance(["peloton"])[0]
    assert after.relevance(["runner", "recipe", "football"]).max() < 0.5
    assert after.relevance([KEYWORDS])[0] >= 0.5
    assert after.n_positive_ == 4 and after.n_negative_ == 5  # the keywords among the positives


def test_the_best_pages_are_examples_even_when_none_reaches_the_threshold(vectors):
    """A light topic's first verdicts are cautious: its best tenth are examples anyway."""
    pages = ON_TOPIC + OFF_TOPIC
    texts, labels = LearnedTopic(min_positive_share=0.25, vectors=vectors).examples(
        pages, [0.3, 0.2, 0.15, 0.05, 0.04, 0.03, 0.02, 0.01], [KEYWORDS]
    )
    assert texts[: labels.count(TOPIC)] == [KEYWORDS, *ON_TOPIC[:2]]
    with pytest.raises(ValueError, match="too few pages"):
        LearnedTopic(background=0, vectors=vectors).examples(ON_TOPIC, [0.9, 0.8, 0.7], [KEYWORDS])


def test_a_refit_that_drifts_from_the_keywords_is_refused(vectors):
    # The crawl wandered into cooking and its verdicts followed: cooking pages rated best.
    drifted = LearnedTopic(groups=2, background=0, vectors=vectors).fit(
        ["recipe oven", "oven recipe", "recipe", "cycling bicycle", "bicycle", "football goal"],
        [0.9, 0.8, 0.7, 0.05, 0.04, 0.03],
    )
    assert "1 of the 1 of the topic's own keywords" in drifted.drift([KEYWORDS], [1.0])
    # The seeds: a refit may not call more of them irrelevant than the model before it did.
    sound = learned(vectors, ON_TOPIC + OFF_TOPIC, [0.9, 0.8, 0.7, 0.05, 0.04, 0.03, 0.02, 0.01])
    assert sound.drift([KEYWORDS], [1.0], ON_TOPIC, [0.9, 0.9, 0.9]) == ""
    seeds = ["recipe oven", "football goal", "bicycle"]
    assert "2 of the 3 of the seeds" in sound.drift([KEYWORDS], [1.0], seeds, [0.9, 0.9, 0.9])
    assert sound.drift([KEYWORDS], [1.0], seeds, [0.1, 0.1, 0.9]) == ""  # as many as before
    # Example pages: as many below the threshold as before is no drift (an example may be an
    # outlier; the examples' own model puts half of them below the median).
    examples = ["bicycle peloton", "cycling", "football goal"]
    assert sound.drift(examples, [0.9, 0.9, 0.1]) == ""
    assert "3 of the 3 of the topic's own" in drifted.drift(examples, [0.9, 0.9, 0.1])


def test_every_process_fits_the_same_model_from_the_published_examples(vectors):
    model = LearnedTopic(groups=2, background=0, vectors=vectors)
    texts, labels = model.examples(ON_TOPIC + OFF_TOPIC, [0.9, 0.8, 0.7] + [0.01] * 5, [KEYWORDS])
    one = LearnedTopic(background=0, vectors=vectors).fit_examples(texts, labels)
    other = LearnedTopic(background=0, vectors=vectors).fit_examples(list(texts), list(labels))
    probe = ["peloton", "oven", "cycling goal"]
    assert np.array_equal(one.relevance(probe), other.relevance(probe))


def test_the_learning_store_keeps_the_last_pages_and_publishes_generations(frontier):
    crawl = frontier().store
    store = LearningStore(crawl, sample=5)
    store.add([SampledPage(i / 10, i % 2, f"page {i}") for i in range(7)])
    assert [p.text for p in store.pages()] == [f"page {i}" for i in range(2, 7)]
    assert store.state().generation == 0 and store.generation() is None
    with crawl.held_lock(keys.LEARN_LOCK, 5) as lease:
        assert lease is not None
        assert store.publish(60, ["a", "b"], [TOPIC, "other/0"], ["w1", "w2"], 1, 1, lease) == 1
        store.postpone(110, lease, refused=True)
        assert store.publish(160, ["c"], [TOPIC], [], 1, 0, lease) == 2
    published = store.generation()
    assert (published.number, published.pages, published.texts) == (2, 160, ["c"])
    record = crawl._client.hgetall(crawl.key("learned"))
    assert record["refused"] == "1" and record["generation"] == "2"


def test_a_refit_scores_queued_links_again_up_and_down(frontier):
    f = frontier()
    f.push_many(
        [Link("http://a.test/x", 0.9, anchor="x"), Link("http://b.test/y", 0.2, anchor="y")]
    )
    queued = [
        (origin, member, packed)
        for origin in f.queued_hosts()
        for member, packed, _ in f.host_queue(origin)
    ]
    new = {"x": 0.1, "y": 0.8}
    moved = f.rescore((o, m, p, new[m.partition("\t")[2]]) for o, m, p in queued)
    assert moved == 2
    assert [lease.url for lease in f.pop_ready(2).leased] == ["http://b.test/y", "http://a.test/x"]
    assert f.counts()["rescored"] == 2
    assert f.rescore([(o, m, p, 0.5) for o, m, p in queued]) == 0  # popped meanwhile: left out


def keywords_topic(web: Path, tmp_path: Path) -> Path:
    """The web's topic with two keywords for its relevance, a topic that learns itself."""
    topic = tmp_path / "keywords.toml"
    text = (web / "topic.toml").read_text()
    topic.write_text(
        text[: text.index("[relevance]")]
        + '[relevance]\nmethod = "keywords"\nkeywords = ["cycling", "bicycle"]\n'
    )
    return topic


def test_a_keywords_crawl_learns_its_topic_as_it_goes(crawl, web, tmp_path, redis_client):
    crawl.topic = keywords_topic(web, tmp_path)
    # Refits are due at 30, 60 and 120 pages fetched; each runs in a thread, so a loaded
    # machine may end the crawl before the third: two must be done by then.
    stats = crawl.run(CLOSESPIDER_ITEMCOUNT=200, FOCUSED_LEARN_PAGES=30)
    assert stats["focused/learn/refits"] >= 2 and stats["focused/learn/generation"] >= 1
    assert stats["focused/learn/rescored"] > 0
    assert "Topic refitted at" in crawl.log()
    record = redis_client.hgetall(f"focused:{{{crawl.name}}}:learned")
    assert int(record["generation"]) >= 2 and json.loads(record["top"])
    status = focused("status", crawl.name, "--home", str(crawl.home))
    assert "topic weighs most" in status.stdout and json.loads(record["top"])[0] in status.stdout


def test_a_resumed_crawl_refits_without_an_error(crawl, web, tmp_path):
    """A resume starts with many links queued: its refit's thread scores their anchors again,
    glossing them with WordNet while the crawl's thread glosses the new pages' links."""
    crawl.topic = keywords_topic(web, tmp_path)
    crawl.run(CLOSESPIDER_ITEMCOUNT=40, FOCUSED_LEARN_PAGES=30, FOCUSED_ANCHOR_GLOSS=True)
    stats = crawl.run(
        "resumed.jsonl",
        CLOSESPIDER_ITEMCOUNT=150,
        FOCUSED_LEARN_PAGES=30,
        FOCUSED_ANCHOR_GLOSS=True,
    )
    assert stats["focused/learn/rescored"] > 0 and stats["focused/links/glossed"] > 0
    for log in (crawl.log(), crawl.log("resumed.jsonl")):
        assert " ERROR: " not in log and "Traceback" not in log, log[-3000:]


def test_after_a_refit_pages_are_judged_by_it_and_keep_their_first_r(vectors):
    """The judge takes a refit up: it gives the page's R and joins its links' (log-odds),
    while ``first_relevance``, what the next refit learns from, stays the first model's."""
    first = CategoryVectors(good=[TOPIC], vectors=vectors).fit(
        [KEYWORDS, *OFF_TOPIC], [TOPIC, *(f"other/{i}" for i in range(len(OFF_TOPIC)))]
    )
    keywords = KeywordModel(keywords=KEYWORDS.split()).fit()
    judge = Judge(keywords, threshold=0.5, link_score="anchor", page_vectors=first)
    refit = learned(vectors, ON_TOPIC + OFF_TOPIC, [0.9, 0.8, 0.7, 0.05, 0.04, 0.03, 0.02, 0.01])
    doc, links = "peloton peloton", [("http://b.test/", "peloton", "peloton")]

    before = judge(page(doc, links))
    assert before.first_relevance == before.relevance < 0.5
    assert [k.anchor_relevance for k in before.links] == keywords.relevance(["peloton"]).tolist()
    judge.refitted(refit)
    after = judge(page(doc, links))
    assert after.relevance == pytest.approx(refit.relevance([f"\n{doc}"])[0], abs=1e-6)
    assert after.relevant and after.first_relevance == before.first_relevance
    expected = log_odds_sum(keywords.relevance(["peloton"]), refit.relevance(["peloton"]))
    assert [k.anchor_relevance for k in after.links] == pytest.approx(expected.tolist())
