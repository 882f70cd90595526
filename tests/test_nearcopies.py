"""Near-copies: signatures and the threshold on hand-made texts, the crawl's index in Redis
shared by two processes, and a crawl of a web with planted near-copies."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from focused.cli.export import fetched_pages
from focused.lab.webs.bundle import PAGES_FILE, Bundle, url_key
from focused.lab.webs.generate import BACKGROUND, TAXONOMY
from focused.lab.webs.nearcopies import (
    BLOCK_WORDS,
    NEAR_COPIES_FILE,
    SHARED_BLOCK_FILE,
    generate_near_copy_web,
)
from focused.monitor.snapshot import crawl_status
from focused.relevance import nearcopies as nc
from focused.relevance.content import main_text
from focused.settings.defaults import FOCUSED_NEAR_COPY_THRESHOLD as THRESHOLD
from focused.store import nearcopies as index_states
from focused.store.crawl import CrawlStore
from focused.store.nearcopies import NearCopyIndex
from focused.store.reads import Reader
from tests.conftest import Crawl

# A small vocabulary, as topical pages have (cycling's words and common ones): a text is 300
# words drawn from it.
WORDS = f"{TAXONOMY['Sports'][1]['Cycling']} {BACKGROUND[:100]}".split()


def article(seed: int, words: int = 300) -> str:
    """A text on cycling: words drawn from one small vocabulary, as topical pages are."""
    rng = np.random.default_rng(seed)
    return " ".join(rng.choice(WORDS, words).tolist())


def edited(text: str, share: float, seed: int = 0) -> str:
    """The text with ``share`` of its words, here and there, replaced by new ones."""
    words = text.split()
    rng = np.random.default_rng(seed)
    for i in rng.choice(len(words), round(len(words) * share), replace=False).tolist():
        words[i] = f"changed{i}"
    return " ".join(words)


def is_copy(a: str, b: str, threshold: float = 0.7) -> bool:
    """Whether ``b`` is found as a near-copy of ``a``: a band in common, then enough values."""
    sa, sb = nc.signature(a), nc.signature(b)
    assert sa is not None and sb is not None
    cut = nc.candidate_banding(threshold)
    shared = set(nc.band_keys(sa, cut)) & set(nc.band_keys(sb, cut))
    agree = round(nc.estimated_jaccard(nc.packed(sa), nc.packed(sb)) * nc.NUM_PERM)
    return bool(shared) and agree >= nc.agreeing_needed(threshold)


@pytest.mark.unit
def test_a_copy_with_other_boilerplate_or_a_5_percent_edit_is_a_near_copy():
    text = article(1)
    framed = f"Home | News | Sports\n{text}\nCopyright 2026 Another Site. All rights reserved."
    for seed in range(20):
        assert is_copy(text, edited(text, 0.05, seed))
    assert is_copy(text, framed)
    assert nc.jaccard(text, edited(text, 0.05)) == pytest.approx(0.82, abs=0.03)


@pytest.mark.unit
def test_distinct_texts_on_one_topic_are_not_near_copies():
    texts = [article(seed) for seed in range(30)]
    assert max(nc.jaccard(a, b) for a in texts for b in texts if a is not b) < 0.2
    assert not any(is_copy(a, b) for a in texts for b in texts if a is not b)
    # Half the text rewritten is a different page.
    assert not is_copy(texts[0], edited(texts[0], 0.5))


@pytest.mark.unit
def test_short_texts_are_not_compared():
    assert nc.signature("a page of ten words is too short to compare here") is None
    assert nc.signature(article(0, 40)) is not None


@pytest.mark.unit
def test_the_bands_catch_pages_above_the_threshold_and_few_below():
    for threshold in (0.5, 0.7, 0.9):
        cut = nc.candidate_banding(threshold)
        assert cut.bands * cut.rows <= nc.NUM_PERM
        above = min(threshold + 0.1, 1.0)
        assert 1 - (1 - above**cut.rows) ** cut.bands > 0.98
        below = threshold - 0.4
        assert 1 - (1 - below**cut.rows) ** cut.bands < 0.01
    assert nc.agreeing_needed(0.7) == 90


@pytest.mark.unit
def test_the_planted_copies_are_near_copies_of_their_originals(tmp_path):
    folder = generate_near_copy_web(tmp_path / "a", originals=4, n_pages=150, n_hosts=10, seed=3)
    again = generate_near_copy_web(tmp_path / "b", originals=4, n_pages=150, n_hosts=10, seed=3)
    for name in (PAGES_FILE, NEAR_COPIES_FILE):
        assert (folder / name).read_bytes() == (again / name).read_bytes()
    bundle = Bundle.load(folder)
    copies = planted(folder)
    assert [copy["kind"] for copy in copies] == ["mirror", "print", "edit"] * 4
    for copy in copies:
        original, text = (
            main_text(bundle.pages[url_key(url)].body).text
            for url in (copy["url"], copy["copy_of"])
        )
        expected = 0.82 if copy["kind"] == "edit" else 1.0
        assert nc.jaccard(original, text) == pytest.approx(expected, abs=0.03), copy
        assert bundle.page(copy["only_link"]) is not None


def check(index: NearCopyIndex, url: str, text: str, threshold: float = 0.7, cap: int = 0):
    values = nc.signature(text)
    assert values is not None
    bands = nc.band_keys(values, nc.candidate_banding(threshold))
    return index.check(url, nc.packed(values), bands, nc.agreeing_needed(threshold), cap)


def test_two_processes_find_each_others_pages(redis_client, crawl_name):
    one = NearCopyIndex(CrawlStore(redis_client, crawl_name))
    other = NearCopyIndex(CrawlStore(redis_client, crawl_name))
    text = article(1)
    assert check(one, "http://a.test/1", text) == ("", index_states.ADDED, 1)
    assert check(other, "http://b.test/copy", edited(text, 0.05)) == (
        "http://a.test/1",
        index_states.COPY,
        1,
    )
    assert check(other, "http://b.test/2", article(2)) == ("", index_states.ADDED, 2)
    # A page fetched again is not a copy of itself, and is not indexed twice.
    assert check(one, "http://a.test/1", edited(text, 0.02)).state == index_states.KNOWN
    assert one.indexed() == other.indexed() == 2
    assert one.memory() > 0


def test_past_its_cap_the_index_checks_pages_but_adds_none(redis_client, crawl_name):
    index = NearCopyIndex(CrawlStore(redis_client, crawl_name))
    assert check(index, "http://a.test/1", article(1), cap=2).state == index_states.ADDED
    assert check(index, "http://a.test/2", article(2), cap=2).state == index_states.ADDED
    assert check(index, "http://a.test/3", article(3), cap=2) == ("", index_states.FULL, 2)
    copy = check(index, "http://a.test/4", edited(article(2), 0.05), cap=2)
    assert copy == ("http://a.test/2", index_states.COPY, 2)
    assert index.indexed() == 2


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic web with three near-copies of each of 10 pages on its topic, and 20 other
    pages on its topic that share a long block inside their article."""
    folder = tmp_path_factory.mktemp("near-copy-web") / "web"
    return generate_near_copy_web(
        folder, originals=10, shared_block=20, n_pages=500, n_hosts=25, seed=1
    )


def planted(web: Path) -> list[dict[str, str]]:
    return json.loads((web / NEAR_COPIES_FILE).read_text())


@pytest.mark.unit
def test_pages_sharing_a_long_block_are_further_apart_than_the_planted_copies(web):
    """The threshold's margin on the main texts: every planted copy (mirror, printable
    version, 5 % edit) is above FOCUSED_NEAR_COPY_THRESHOLD, every pair of the pages sharing
    the block below it; at the threshold of before (0.7), some of those were copies."""
    bundle = Bundle.load(web)

    def text(url: str) -> str:
        return main_text(bundle.pages[url_key(url)].body).text

    sharing = [text(url) for url in json.loads((web / SHARED_BLOCK_FILE).read_text())]
    assert len(sharing) == 20
    assert all(BLOCK_WORDS < len(page.split()) < 2 * BLOCK_WORDS for page in sharing)
    apart = [nc.jaccard(a, b) for a, b in itertools.combinations(sharing, 2)]
    copies = [nc.jaccard(text(copy["copy_of"]), text(copy["url"])) for copy in planted(web)]
    assert max(apart) < THRESHOLD < min(copies)
    assert max(apart) > 0.7


def test_a_crawl_drops_the_planted_near_copies_and_no_other_page_and_loses_no_page(
    crawl: Crawl, web, redis_client
):
    # R against the threshold: a copy is checked when it is relevant itself, and a calibrated
    # cut, which moves as the crawl goes, may judge a copy and its original apart
    stats = crawl.run(FOCUSED_NEAR_COPIES="relevant", FOCUSED_CALIBRATE=False)
    feed = {item["url"]: item for item in crawl.feed()}
    unchecked = Crawl(crawl.topic, crawl.proxy, crawl.home, f"{crawl.name}-none", crawl.workdir)
    unchecked.run("unchecked.jsonl", FOCUSED_NEAR_COPIES="none", FOCUSED_CALIBRATE=False)
    without = {item["url"]: item for item in unchecked.feed("unchecked.jsonl")}
    assert not any(item["near_duplicate_of"] for item in without.values())
    copies = {copy["url"]: copy for copy in planted(web)}
    # Every copy of a relevant page that was fetched is checked (its original was fetched
    # before: it is linked from there only); every mirror and printable version is found and
    # most 5 % edits (0.82, near the threshold), each naming the original it copies.
    checked = [
        copy for url, copy in copies.items() if url in feed and feed[copy["copy_of"]]["relevant"]
    ]
    assert len(checked) >= 15, len(checked)
    found = {url for url, item in feed.items() if item["near_duplicate_of"]}
    for copy in checked:
        if copy["kind"] != "edit":
            assert copy["url"] in found, copy
    edits = [copy["url"] for copy in checked if copy["kind"] == "edit"]
    assert len(found & set(edits)) >= 2 * len(edits) / 3
    # No distinct page is taken for a copy: not the pages that share a block inside their
    # article either, which stay relevant.
    sharing = json.loads((web / SHARED_BLOCK_FILE).read_text())
    assert all(url in feed for url in sharing)
    assert found <= copies.keys()
    for url in found:
        item = feed[url]
        assert item["near_duplicate_of"] == copies[url]["copy_of"], url
        assert item["bad"] == "duplicate" and not item["relevant"] and item["order"]
    assert [url for url in sharing if not feed[url]["relevant"]] == []
    assert all("near_duplicate_of" in item for item in feed.values())
    assert stats["focused/nearcopies/found"] == len(found) == stats["focused/duplicate/near"]
    assert stats["focused/nearcopies/indexed"] >= stats["focused/nearcopies/checked"] - len(found)
    # A copy's links are queued all the same: the page each copy alone links to is fetched.
    # No page is lost: the crawl fetches what it fetches without the check, and finds every
    # relevant page of it but the copies found.
    for copy in copies.values():
        assert copy["only_link"] in feed, copy
    assert feed.keys() == without.keys()
    relevant = {url for url, item in feed.items() if item["relevant"]}
    assert relevant == {url for url, item in without.items() if item["relevant"]} - found
    # Not counted as relevant: the feed, the crawl's counters (focused status) and the export
    # agree.
    assert crawl_status(Reader(redis_client), crawl.name)["relevant"] == len(relevant)
    assert stats["focused/pages/relevant"] == len(relevant)
    exported = list(fetched_pages(Reader(redis_client), crawl.name))
    assert sum(bool(page.get("relevant")) for page in exported) == len(relevant)


@pytest.mark.cluster
def test_on_a_cluster_the_index_is_one_crawls_keys(cluster, crawl_name):
    one = NearCopyIndex(CrawlStore(cluster, crawl_name, create=True))
    other = NearCopyIndex(CrawlStore(cluster, crawl_name))
    text = article(1)
    assert check(one, "http://a.test/1", text).state == index_states.ADDED
    assert check(other, "http://b.test/copy", edited(text, 0.05)).copy_of == "http://a.test/1"
    assert one.memory() > 0
