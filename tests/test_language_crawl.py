"""Languages end to end: a crawl of a web of English, German and French pages, served on
127.0.0.1, on a real Redis, with a topic that keeps English only."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from warcio.archiveiterator import ArchiveIterator

from focused.extensions.warc import LANGUAGE_HEADER
from focused.lab.webs.bundle import Bundle
from focused.lab.webs.generate import DEMO_CATEGORY, LANGUAGES_FILE, generate_web
from focused.lab.webs.server import ServedWeb
from focused.monitor.snapshot import crawl_snapshot, format_status
from focused.store.reads import Reader
from tests.conftest import Crawl

pytestmark = pytest.mark.crawl

SHARES = {"en": 2.0, "de": 1.0, "fr": 1.0}
PAGES = 200  # of a web of 600
OFF = {"de", "fr"}


@pytest.fixture(scope="module")
def multilingual(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("multilingual") / "web"
    generate_web(folder, n_pages=600, n_hosts=30, seed=1, languages=SHARES)
    topic = (folder / "topic.toml").read_text()
    english = topic.replace('strategy = "soft"\n', 'strategy = "soft"\nlanguages = ["en"]\n')
    assert english != topic
    (folder / "english.toml").write_text(english)
    return folder


@pytest.fixture(scope="module")
def truth(multilingual: Path) -> dict[str, str]:
    return json.loads((multilingual / LANGUAGES_FILE).read_text())


@pytest.fixture
def served_multilingual(multilingual: Path, tmp_path: Path) -> Iterator[ServedWeb]:
    with ServedWeb(multilingual, log_path=tmp_path / "served.jsonl") as served:
        yield served


def crawl_of(topic: str, multilingual: Path, served: ServedWeb, home: Path, name: str, tmp: Path):
    return Crawl(multilingual / topic, served.proxy, home, name, tmp)


def pages(feed: list[dict]) -> list[dict]:
    return [item for item in feed if not item["bad"]]


def test_off_language_pages_are_identified_counted_and_never_relevant(
    multilingual: Path,
    truth: dict[str, str],
    served_multilingual: ServedWeb,
    redis_home: Path,
    redis_client: redis.Redis,
    crawl_name: str,
    tmp_path: Path,
) -> None:
    crawl = crawl_of(
        "english.toml", multilingual, served_multilingual, redis_home, crawl_name, tmp_path
    )
    warc = tmp_path / "warc"
    stats = crawl.run(CLOSESPIDER_ITEMCOUNT=PAGES, FOCUSED_WARC="all", FOCUSED_WARC_DIR=str(warc))
    fetched = pages(crawl.feed())
    assert len(fetched) >= PAGES * 0.9
    # Every page has its language; nearly all are the language it was written in (the
    # synthetic web's made-up topical words make py3langid say Nigerian Pidgin on a few).
    assert all(item["language"] for item in fetched)
    agree = sum(item["language"] == truth[item["url"]] for item in fetched if item["url"] in truth)
    assert agree >= 0.9 * len(fetched)
    off = [item for item in fetched if item["language"] not in ("en", "und")]
    assert {item["language"] for item in off} >= OFF
    # None of them is relevant, whatever its words; English pages are.
    assert all(item["relevance"] == 0 and not item["relevant"] for item in off)
    assert any(item["relevant"] for item in fetched if item["language"] == "en")
    # The stats count pages by language, and those kept out.
    by_language = Counter(item["language"] for item in fetched)
    for code in OFF | {"en"}:
        assert stats[f"focused/language/{code}"] >= by_language[code] > 0
    assert stats["focused/language/off_topic"] >= len(off)
    assert stats.get("focused/pages/relevant", 0) == sum(item["relevant"] for item in fetched)
    # focused status shows them.
    snapshot = crawl_snapshot(Reader(redis_client), crawl.name)
    assert snapshot["languages"]["de"] >= by_language["de"] and snapshot["off_language"] >= len(off)
    assert f"({snapshot['off_language']})" in format_status(snapshot)
    # Every page's response record in the WARC files says its language,
    # and so does its metadata record (what focused export reads).
    headers, metadata = {}, {}
    for path in warc.glob("*.warc.gz"):
        with path.open("rb") as f:
            for record in ArchiveIterator(f):
                uri = record.rec_headers.get_header("WARC-Target-URI")
                if record.rec_type == "response":
                    headers[uri] = record.rec_headers.get_header(LANGUAGE_HEADER)
                elif record.rec_type == "metadata":
                    metadata[uri] = json.loads(record.content_stream().read())["language"]
    for item in fetched:
        assert headers[item["url"]] == metadata[item["url"]] == item["language"]


def on_topic_off_language(web: Path, truth: dict[str, str], feed: list[dict]) -> set[str]:
    """The pages of ``feed`` on the demo topic (Sports/Cycling) by their labels, written in
    another language than English, seeds left out."""
    bundle = Bundle.load(web)
    return {
        item["url"]
        for item in pages(feed)
        if item["parent"]
        and truth.get(item["url"], "en") in OFF
        and any(c.startswith(DEMO_CATEGORY) for c in bundle.categories(item["url"]))
    }


def test_off_language_pages_links_are_demoted(
    multilingual: Path,
    truth: dict[str, str],
    served_multilingual: ServedWeb,
    redis_home: Path,
    redis_client: redis.Redis,
    crawl_name: str,
    tmp_path: Path,
) -> None:
    kept = crawl_of(
        "english.toml", multilingual, served_multilingual, redis_home, crawl_name, tmp_path
    )
    kept.run(CLOSESPIDER_ITEMCOUNT=PAGES, CONCURRENT_REQUESTS=2)
    every = crawl_of(
        "topic.toml", multilingual, served_multilingual, redis_home, crawl_name + "-any", tmp_path
    )
    every.run(
        "any.jsonl",
        CLOSESPIDER_ITEMCOUNT=PAGES,
        CONCURRENT_REQUESTS=2,
        FOCUSED_LANGUAGE_ID="always",
    )
    # Their links wait at the bottom of the frontier with an irrelevant page's: the German
    # and French cycling pages, which such pages link to mostly, are fetched less.
    with_filter = on_topic_off_language(multilingual, truth, kept.feed())
    without = on_topic_off_language(multilingual, truth, every.feed("any.jsonl"))
    print(f"off-language cycling pages fetched: {len(with_filter)} with, {len(without)} without")
    assert len(without) >= 8
    assert len(with_filter) <= 0.6 * len(without)
    # Without the filter the German and French pages are as relevant as their words.
    assert any(
        item["relevant"] for item in pages(every.feed("any.jsonl")) if item["language"] in OFF
    )
