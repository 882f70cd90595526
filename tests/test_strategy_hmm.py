"""Seed 002's HMM crawler: the model's counting and recursion by hand, the strategy on a real
Redis with hand-made pages, the paths file's checks, and a two-process crawl."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler
from sklearn.base import clone

from focused.errors import TopicError
from focused.items import Page, PageLink
from focused.relevance.hmm import PathHMM, read_paths, term_counts
from focused.store import keys
from focused.store.crawl import CrawlStore
from focused.strategies.hmm import HMMStrategy, decode_pages, dump_model, encode_page, load_model
from focused.topic.files import load_topic_text
from focused.topic.judge import Verdict
from focused.topic.plan import CrawlPlan
from tests.conftest import final_stats

CYCLING = "cycling bicycle peloton derailleur saddle sprint"
HUB = "directory index list of links resources pages"
COOKING = "cooking recipe pasta sauce oven kitchen"


def fitted_by_hand() -> PathHMM:
    """Two paths and a branch: A -> B -> C (relevant) -> F, and D -> E.

    States: A 2, B 1, C 0, F 3 (after the last relevant page), D 3, E 3 (no relevant page).
    """
    texts = [HUB, HUB + " more", CYCLING, COOKING, COOKING + " food", COOKING + " grill"]
    relevant = [False, False, True, False, False, False]
    parents = [-1, 0, 1, -1, 3, 2]
    return PathHMM(n_clusters=1).fit(term_counts(texts), relevant, parents)


def test_matrices_are_counted_with_additive_smoothing():
    model = fitted_by_hand()
    assert model.states_.tolist() == [2, 1, 0, 3, 3, 3]
    assert model.labels_.tolist() == [1, 1, 0, 1, 1, 1]
    # π: the share of pages in each state, counts [1, 1, 1, 3] plus 1 each.
    assert np.allclose(model.startprob_, np.array([2, 2, 2, 4]) / 10)
    # A: transitions 2->1, 1->0, 0->3, 3->3, plus 1 each, over each row's total.
    expected = np.array([[1, 1, 1, 2], [2, 1, 1, 1], [1, 2, 1, 1], [1, 1, 1, 2]]) / 5
    assert np.allclose(model.transmat_, expected)
    # B: state 0 emits cluster 0 once; states 1 and 2 cluster 1 once; state 3 cluster 1 3x.
    expected = np.array([[2 / 3, 1 / 3], [1 / 3, 2 / 3], [1 / 3, 2 / 3], [1 / 5, 4 / 5]])
    assert np.allclose(model.emissionprob_, expected)


def test_forward_recursion_matches_a_hand_computation():
    model = fitted_by_hand()
    pi = [Fraction(2, 10), Fraction(2, 10), Fraction(2, 10), Fraction(4, 10)]
    a = [[1, 1, 1, 2], [2, 1, 1, 1], [1, 2, 1, 1], [1, 1, 1, 2]]
    a = [[Fraction(x, 5) for x in row] for row in a]
    b1 = [Fraction(1, 3), Fraction(2, 3), Fraction(2, 3), Fraction(4, 5)]  # cluster 1
    b0 = [Fraction(2, 3), Fraction(1, 3), Fraction(1, 3), Fraction(1, 5)]  # cluster 0

    def step(before, emission):
        alpha = [emission[j] * sum(before[i] * a[i][j] for i in range(4)) for j in range(4)]
        return [x / sum(alpha) for x in alpha]

    first = step(pi, b1)  # a path's first page, in cluster 1: from α_0 = π
    second = step(first, b0)  # then a relevant page
    assert np.allclose(model.forward(None, 1), [float(x) for x in first])
    assert np.allclose(model.forward(model.forward(None, 1), 0), [float(x) for x in second])
    next_relevant = sum(second[i] * a[i][0] for i in range(4))
    assert model.next_relevant(np.array([float(x) for x in second])) == pytest.approx(
        float(next_relevant)
    )


def test_estimator_conventions():
    model = fitted_by_hand()
    assert clone(model).get_params() == model.get_params()
    with pytest.raises(ValueError, match="relevant and irrelevant"):
        PathHMM().fit(term_counts([HUB, COOKING]), [False, False], [-1, 0])
    with pytest.raises(ValueError, match="parents"):
        PathHMM().fit(term_counts([HUB, CYCLING]), [False, True], [-1, 1])


def test_observation_is_the_nearest_centroid():
    texts = [CYCLING, CYCLING + " tour", "football goal striker league", "football match goal"]
    texts += [COOKING, COOKING + " food"]
    model = PathHMM(n_clusters=2).fit(
        term_counts(texts), [True, True, False, False, False, False], [-1] * 6
    )
    football, cooking = model.labels_[2], model.labels_[4]
    assert football != cooking and 0 not in (football, cooking)
    probes = term_counts(["league football striker", "pasta oven", "peloton cycling"])
    assert model.observation(probes).tolist() == [football, cooking, 0]
    # The crawl's classifier decides cluster 0; the rest go to the nearest other cluster.
    assert model.observation(probes, [True, False, False])[[0, 1]].tolist() == [0, cooking]
    assert model.observation(probes, [False, False, False])[2] in (football, cooking)
    similarity = model.centroid_similarity(probes)
    assert similarity[2] > 0.5 > max(similarity[0], similarity[1])


def hub_web() -> tuple[list[str], list[bool], list[int]]:
    """Paths where hub pages lead to relevant pages in one link and cooking pages lead only
    to more cooking pages."""
    texts, relevant, parents = [], [], []
    for n in range(6):
        hub = len(texts)
        texts += [f"{HUB} {n}", f"{CYCLING} {n}", f"{COOKING} {n}", f"{COOKING} again {n}"]
        relevant += [False, True, False, False]
        parents += [-1, hub, -1, hub + 2]
    return texts, relevant, parents


def test_a_page_one_link_from_relevant_pages_ranks_its_links_first():
    texts, relevant, parents = hub_web()
    model = PathHMM(n_clusters=2).fit(term_counts(texts), relevant, parents)
    hub, cooking = model.observation(term_counts([HUB, COOKING]), [False, False])
    assert hub != cooking
    assert model.priority(model.forward(None, hub)) > model.priority(model.forward(None, cooking))


def test_a_stored_model_is_the_same_model():
    model = fitted_by_hand()
    loaded = load_model(dump_model(model))
    probes = term_counts([CYCLING, COOKING, "nothing known here"])
    assert np.array_equal(loaded.similarities(probes), model.similarities(probes))
    alpha = model.forward(None, 1)
    assert np.array_equal(loaded.forward(alpha, 0), model.forward(alpha, 0))
    record = encode_page(7, 3, True, term_counts([CYCLING]))
    heads, counts = decode_pages([record, encode_page(8, 7, False, term_counts([COOKING]))])
    assert heads.tolist() == [(7, 3, 1), (8, 7, 0)]
    assert (counts[0] != term_counts([CYCLING])).nnz == 0


def strategy(redis_client, crawl: str, **options) -> HMMStrategy:
    return HMMStrategy(
        store=CrawlStore(redis_client, crawl, retries=0),
        model_params={"n_clusters": 2},
        stats=MemoryStatsCollector(get_crawler()),
        background=False,
        **{"warmup": 24, "refit": 0, "link_score": "content", **options},
    )


def page(
    url: str,
    text: str,
    relevant: bool,
    parent: str | None,
    links: list[str],
    anchors: list[str] | None = None,
) -> tuple[Page, Verdict]:
    """A judged page (R 0.9 if relevant, else 0.1) and its verdict: its links (with these
    anchors, else none) estimated by the page's R, as under link score ``content``."""
    r = 0.9 if relevant else 0.1
    texts = anchors or [""] * len(links)
    item = Page(url, 200, 0.0, depth=1, parent=parent, title="", text=text)
    item.links = [PageLink(link, anchor) for link, anchor in zip(links, texts, strict=True)]
    scored = [PageLink(link.url, link.anchor, "", None, r) for link in item.links]
    return item, Verdict(r, relevant, None, r, scored)


def test_the_strategy_learns_from_the_crawl_and_processes_share_the_model(redis_client, crawl_name):
    one, two = strategy(redis_client, crawl_name), strategy(redis_client, crawl_name)
    texts, relevant, parents = hub_web()
    urls = [f"http://h{i % 5}.test/{i}" for i in range(len(texts))]
    for i, (text, rel, parent) in enumerate(zip(texts, relevant, parents, strict=True)):
        if i == 23:
            assert one.model is None and one.stats.get_value("focused/hmm/logged") == 23
        links = [url for url, p in zip(urls, parents, strict=True) if p == i]
        # Warm-up: soft focus, the page's R on each link.
        scored = one.links(*page(urls[i], text, rel, urls[parent] if parent >= 0 else None, links))
        assert all(link.score == (0.9 if rel else 0.1) for link in scored)
    # The 24th page made the warm-up due: it was fitted then (here at once, not in a thread).
    assert one.model is not None and one.stats.get_value("focused/hmm/fits") == 1
    assert redis_client.hget(keys.prefix(crawl_name) + keys.HMM, "version") == "1"
    # The fitter stored α for every logged page, under its URL's fingerprint.
    alphas = sum(
        redis_client.hlen(f"{keys.prefix(crawl_name)}{keys.HMM_ALPHA}{bucket}")
        for bucket in range(keys.HMM_ALPHA_BUCKETS)
    )
    assert alphas == 24
    # Another process loads the model at its next page, then scores with it.
    two.links(*page("http://w.test/", HUB, False, None, []))
    assert two.stats.get_value("focused/hmm/loads") == 1 and two.model is not None
    cooking = two.links(*page("http://y.test/c", COOKING, False, None, ["http://y.test/d"]))
    hub = two.links(*page("http://x.test/hub", HUB, False, None, ["http://x.test/b"]))
    assert hub[0].score > cooking[0].score
    assert two.stats.get_value("focused/hmm/path_starts") == 2
    # A page under a logged hub page finds that page's α: no new path starts.
    two.links(*page("http://z.test/child", CYCLING, True, urls[0], ["http://z.test/e"]))
    assert two.stats.get_value("focused/hmm/path_starts") == 2
    assert two.stats.get_value("focused/hmm/scored") == 3


def test_a_process_that_finds_a_newer_model_under_the_lock_loads_it_instead(
    redis_client, crawl_name
):
    one, two = strategy(redis_client, crawl_name), strategy(redis_client, crawl_name)
    texts, relevant, parents = hub_web()
    urls = [f"http://h{i % 5}.test/{i}" for i in range(len(texts))]
    for i, (text, rel, parent) in enumerate(zip(texts, relevant, parents, strict=True)):
        one.links(*page(urls[i], text, rel, urls[parent] if parent >= 0 else None, []))
    assert one.stats.get_value("focused/hmm/fits") == 1
    # The second process read version 0 (the fit was due for it too) before the first stored
    # version 1 and let the lock go: under the lock it sees the newer model and does not fit.
    two.fitted(two.fitter.run(0))
    assert two.stats.get_value("focused/hmm/fits") is None and two.model is None
    assert redis_client.hget(keys.prefix(crawl_name) + keys.HMM, "version") == "1"
    two.links(*page("http://w.test/", HUB, False, None, []))
    assert two.stats.get_value("focused/hmm/loads") == 1 and two.model is not None


def test_a_fit_without_relevant_pages_waits_for_more(redis_client, crawl_name):
    lone = strategy(redis_client, crawl_name, warmup=3)
    for n in range(4):
        lone.links(*page(f"http://c.test/{n}", f"{COOKING} {n}", False, None, []))
    assert lone.model is None and lone.stats.get_value("focused/hmm/fit_failed") == 1
    assert lone.not_before == 6  # three more pages before the next try


def test_example_paths_are_classified_and_fit_the_model_at_once(redis_client, crawl_name, tmp_path):
    from types import SimpleNamespace

    from scrapy.utils.test import get_crawler

    from focused.settings import defaults
    from focused.strategies.hmm import classified_examples

    for name, text in (("hub.html", HUB), ("bike.txt", "bicycle " + CYCLING), ("pot.txt", COOKING)):
        (tmp_path / name).write_text(text)
    paths = tmp_path / "paths.txt"
    paths.write_text("hub.html\nbike.txt\n\npot.txt\npot.txt\n")
    topic = load_topic_text(TOPIC, tmp_path / "t.toml")
    # The crawl's settings (the judge reads them), the examples' text whole, no models folder.
    settings = {name: getattr(defaults, name) for name in dir(defaults) if name.isupper()}
    settings |= {"FOCUSED_MAX_TEXT_CHARS": 0, "FOCUSED_MODELS_DIR": ""}
    crawler = get_crawler(settings_dict=settings)
    crawler.spider = SimpleNamespace(plan=CrawlPlan.from_settings(crawler.settings, topic))
    counts, relevant, parents = classified_examples(crawler, str(paths))
    assert relevant.tolist() == [False, True, False, False]  # the topic's keywords say so
    assert parents.tolist() == [-1, 0, -1, 2] and counts.shape[0] == 4
    learner = strategy(redis_client, crawl_name, examples=(counts, relevant, parents))
    learner.links(*page("http://a.test/", COOKING, False, None, []))  # due at the first page
    assert learner.model is not None and learner.model.states_.tolist()[-4:] == [1, 0, 3, 3]


def test_with_anchor_scores_the_centroid_part_reads_the_anchor_too(redis_client, crawl_name):
    texts, relevant, parents = hub_web()
    model = PathHMM(n_clusters=2).fit(term_counts(texts), relevant, parents)
    anchored = strategy(redis_client, crawl_name, link_score="anchor")
    hub = page(
        "http://x.test/",
        HUB,
        False,
        None,
        ["http://a.test/", "http://b.test/", "http://c.test/"],
        [CYCLING, COOKING, ""],
    )
    counts = term_counts([HUB])
    plain = strategy(redis_client, crawl_name).scored(*hub, model, 0.5, counts)[0].score
    a, b, c = (link.score for link in anchored.scored(*hub, model, 0.5, counts))
    assert a > b and c == plain  # no anchor words: the page's similarity alone


def test_the_model_is_refitted_every_refit_pages(redis_client, crawl_name):
    learner = strategy(redis_client, crawl_name, warmup=3, refit=3)
    texts, relevant, _ = hub_web()
    for n in range(7):
        learner.links(*page(f"http://r.test/{n}", texts[n], relevant[n], None, []))
        version = redis_client.hget(keys.prefix(crawl_name) + keys.HMM, "version")
        assert version == (None if n < 2 else "1" if n < 5 else "2")
    assert learner.stats.get_value("focused/hmm/fits") == 2 and learner.version == 2


TOPIC = """
name = "t"
seeds = ["http://a.test/"]
strategy = "hmm"
[relevance]
method = "keywords"
keywords = ["bicycle"]
"""


def test_paths_file_is_read_and_checked(tmp_path):
    (tmp_path / "a.html").write_text("<title>A</title><p>bicycle</p>")
    (tmp_path / "b.txt").write_text("pasta")
    paths = tmp_path / "paths.txt"
    paths.write_text("# session 1\na.html\nb.txt\n\n\nb.txt  # again\n")
    topic = load_topic_text(
        TOPIC + '[strategy_options]\npaths = "paths.txt"\n', tmp_path / "t.toml"
    )
    assert topic.strategy_options == {"paths": str(paths)}
    assert read_paths(paths) == [[tmp_path / "a.html", tmp_path / "b.txt"], [tmp_path / "b.txt"]]

    def problem(text: str, options: str = '[strategy_options]\npaths = "paths.txt"\n') -> str:
        paths.write_text(text)
        with pytest.raises(TopicError) as error:
            load_topic_text(TOPIC + options, tmp_path / "t.toml")
        return str(error.value)

    message = problem("a.html\nmissing.html\n")
    assert "strategy_options.paths" in message and "line 2: page not found" in message
    assert "line 1: not a saved page" in problem("a.pdf\n")
    assert "no pages" in problem("# nothing\n\n")
    assert "file not found" in problem("", '[strategy_options]\npaths = "none.txt"\n')
    assert "strategy_options.depth" in problem("", "[strategy_options]\ndepth = 3\n")
    assert "strategy_options" in problem("", 'strategy_options = "paths.txt"\n')


def test_a_two_process_crawl_fits_the_model_once_and_shares_it(crawl, web, tmp_path, redis_client):
    topic = tmp_path / "hmm.toml"
    text = (web / "topic.toml").read_text().replace('strategy = "soft"', 'strategy = "hmm"')
    topic.write_text(text.replace('taxonomy = "taxonomy"', f'taxonomy = "{web / "taxonomy"}"'))
    crawl.topic = topic
    settings = {
        "FOCUSED_HMM_WARMUP": 40,
        "FOCUSED_HMM_REFIT": 0,
        "FOCUSED_HMM_CLUSTERS": 3,
        "CONCURRENT_REQUESTS": 4,
    }
    one, two = crawl.start("one.jsonl", **settings), crawl.start("two.jsonl", **settings)
    assert one.wait(240) == 0 and two.wait(240) == 0, crawl.log("one.jsonl")[-3000:]
    stats = [final_stats(crawl.log(feed)) for feed in ("one.jsonl", "two.jsonl")]
    assert sum(s.get("focused/hmm/fits", 0) for s in stats) == 1  # one fitted, under the lock
    assert all(s.get("focused/hmm/scored", 0) > 0 for s in stats)  # both scored with it
    fitter = next(s for s in stats if s.get("focused/hmm/fits"))
    other = next(s for s in stats if not s.get("focused/hmm/fits"))
    assert other.get("focused/hmm/loads") == 1 and not fitter.get("focused/hmm/loads")
    assert sum(s.get("focused/hmm/logged", 0) for s in stats) >= 40
    assert redis_client.hget(keys.prefix(crawl.name) + keys.HMM, "version") == "1"
    assert "Traceback" not in crawl.log("one.jsonl") + crawl.log("two.jsonl")
