"""Seed 004's duplicate skipping: the pipeline on a real Redis, then a real crawl of a tiny web
in which two URLs serve the same text."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.test import get_crawler

from focused.items import PageItem
from focused.lab.webs.bundle import url_key, write_bundle
from focused.lab.webs.server import read_log
from focused.monitor.snapshot import crawl_status
from focused.pipelines.duplicates import DuplicatesPipeline, last_modified_value
from focused.schedulers.frontier import fingerprint
from focused.store import keys
from focused.store.crawl import CrawlStore
from tests.conftest import Crawl, wait_for

MONDAY = "Mon, 06 Jan 2025 10:00:00 GMT"
TUESDAY = "Tue, 07 Jan 2025 10:00:00 GMT"


def page(url: str, text: str, last_modified: str | None = None, title: str = "") -> PageItem:
    return PageItem(
        url=url, title=title, text=text, links=[], bad=None, last_modified=last_modified
    )


@pytest.fixture
def stats():
    return get_crawler().stats


@pytest.fixture
def pipeline(redis_client, crawl_name, stats) -> DuplicatesPipeline:
    return DuplicatesPipeline(CrawlStore(redis_client, crawl_name, retries=0), stats=stats)


def test_a_copy_of_another_pages_text_is_a_duplicate(pipeline, stats):
    first = pipeline.process_item(page("http://a.test/swans", "Mute swans nest by the lake."))
    # Case, layout and Unicode forms do not make another text.
    copy = pipeline.process_item(page("http://b.test/copy", "mute  SWANS nest\nby the lake."))
    other = pipeline.process_item(page("http://b.test/other", "Mute swans nest by the river."))
    assert first["bad"] is None and other["bad"] is None
    assert copy["bad"] == "duplicate"
    assert stats.get_value("focused/pages/duplicate") == 1
    assert stats.get_value("focused/duplicate/text") == 1


def test_the_title_is_part_of_the_text(pipeline):
    pipeline.process_item(page("http://a.test/1", "Same body.", title="Swans"))
    assert (
        pipeline.process_item(page("http://a.test/2", "Same body.", title="Geese"))["bad"] is None
    )
    assert pipeline.process_item(page("http://a.test/3", "Same body.", title="Geese"))["bad"]


def test_same_url_and_same_last_modified_is_a_duplicate(pipeline, stats):
    url = "http://a.test/news"
    assert pipeline.process_item(page(url, "Monday's news.", MONDAY))["bad"] is None
    # Fetched again (a lease ran out, a repeated run): unchanged, whatever the text says now.
    again = pipeline.process_item(page(url, "Monday's news, with an ad.", MONDAY))
    assert again["bad"] == "duplicate"
    assert stats.get_value("focused/duplicate/last_modified") == 1
    # The same date spelled another way (RFC 850) is the same Last-Modified.
    spelled = pipeline.process_item(page(url, "Other text.", "Monday, 06-Jan-25 10:00:00 GMT"))
    assert spelled["bad"] == "duplicate"


def test_same_url_with_a_newer_last_modified_is_not(pipeline):
    url = "http://a.test/news"
    assert pipeline.process_item(page(url, "Monday's news.", MONDAY))["bad"] is None
    assert pipeline.process_item(page(url, "Tuesday's news.", TUESDAY))["bad"] is None
    # Even with the text it had: a URL is not a copy of itself.
    assert (
        pipeline.process_item(page(url, "Monday's news.", "Wed, 08 Jan 2025 10:00:00 GMT"))["bad"]
        is None
    )
    # And the latest date is what the next fetch is compared with.
    assert pipeline.process_item(page(url, "Any.", TUESDAY))["bad"] is None
    assert pipeline.process_item(page(url, "Any.", TUESDAY))["bad"] == "duplicate"


def test_a_url_fetched_again_without_last_modified_is_classified_again(pipeline):
    # A killed crawler's lease runs out and the URL is fetched again: not a copy of itself.
    url = "http://a.test/page"
    assert pipeline.process_item(page(url, "Some text."))["bad"] is None
    assert pipeline.process_item(page(url, "Some text."))["bad"] is None
    assert pipeline.process_item(page("http://a.test/copy", "Some text."))["bad"] == "duplicate"


def test_a_run_after_reset_keep_known_skips_what_came_back_unchanged(
    pipeline, redis_client, crawl_name, stats
):
    from focused.monitor.snapshot import reset_crawl

    pipeline.process_item(page("http://a.test/same", "Swans nest by the lake."))
    pipeline.process_item(page("http://a.test/dated", "Monday's news.", MONDAY))
    pipeline.process_item(page("http://a.test/edited", "Geese fly south."))
    redis_client.hset(keys.prefix(crawl_name) + keys.STATS, "fetched", 3)
    assert reset_crawl(redis_client, crawl_name, keep_known=True) >= 3
    assert not redis_client.exists(keys.prefix(crawl_name) + keys.STATS)
    # The next run: unchanged text, or an unchanged Last-Modified whatever the text, is known;
    # an edited page and a new one are classified.
    assert pipeline.process_item(page("http://a.test/same", "Swans nest by the lake."))["bad"]
    assert pipeline.process_item(page("http://a.test/dated", "Ads changed.", MONDAY))["bad"]
    assert pipeline.process_item(page("http://a.test/edited", "Geese fly north."))["bad"] is None
    assert pipeline.process_item(page("http://a.test/new", "Ducks dive."))["bad"] is None
    assert stats.get_value("focused/duplicate/known") == 2
    # Knowledge accumulates over runs: the edited page is known in its new form after the next
    # reset, and the pages of the first run stay known.
    reset_crawl(redis_client, crawl_name, keep_known=True)
    assert pipeline.process_item(page("http://a.test/edited", "Geese fly north."))["bad"]
    assert pipeline.process_item(page("http://a.test/same", "Swans nest by the lake."))["bad"]
    # A plain reset forgets everything.
    reset_crawl(redis_client, crawl_name)
    again = pipeline.process_item(page("http://a.test/same", "Swans nest by the lake."))
    assert again["bad"] is None


def test_different_crawls_do_not_share(redis_client, crawl_name, stats):
    one = DuplicatesPipeline(CrawlStore(redis_client, crawl_name), stats=stats)
    two = DuplicatesPipeline(CrawlStore(redis_client, crawl_name + "-two"), stats=stats)
    assert one.process_item(page("http://a.test/x", "Text.", MONDAY))["bad"] is None
    assert two.process_item(page("http://b.test/y", "Text."))["bad"] is None
    assert two.process_item(page("http://a.test/x", "Other.", MONDAY))["bad"] is None
    # Each crawl's records live under its own prefix only.
    fp = str(fingerprint("http://a.test/x"))
    for name, texts in ((crawl_name, 1), (crawl_name + "-two", 2)):
        prefix = keys.prefix(name)
        assert redis_client.hget(prefix + keys.MODIFIED, fp) == last_modified_value(MONDAY)
        assert redis_client.hlen(prefix + keys.CHECKSUMS) == texts


def test_bad_pages_pass_through_unrecorded(pipeline, redis_client, crawl_name):
    item = page("http://a.test/missing", "Not Found")
    item["bad"] = "http_404"
    assert pipeline.process_item(item)["bad"] == "http_404"
    assert not redis_client.exists(keys.prefix(crawl_name) + keys.CHECKSUMS)
    assert pipeline.process_item(page("http://a.test/other", "Not Found"))["bad"] is None


def test_lost_redis_drops_the_page_unacknowledged(crawl_name, stats):
    dead = redis.Redis(port=1, socket_connect_timeout=1, decode_responses=True)
    with pytest.raises(DropItem, match="not checked for duplicates"):
        lost = DuplicatesPipeline(CrawlStore(dead, crawl_name, retries=0), stats=stats)
        lost.process_item(page("http://a.test/", "x"))
    assert stats.get_value("focused/pages/duplicate") is None


def test_off_is_not_configured():
    crawler = get_crawler(settings_dict={"FOCUSED_SKIP_DUPLICATES": False})
    with pytest.raises(NotConfigured):
        DuplicatesPipeline.from_crawler(crawler)


SITE = "http://www.dup.web.test"


def html(title: str, body: str, links: dict[str, str]) -> str:
    anchors = "".join(f'<p><a href="{href}">{text}</a></p>' for href, text in links.items())
    return f"<html><head><title>{title}</title></head><body><p>{body}</p>{anchors}</body></html>"


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed links to /original and /dated; /original links to /copy, which serves the same
    text; /late is linked from the copy only."""
    headers = {"Content-Type": "text/html; charset=utf-8"}
    swans = "Mute swans nest by the lake and feed on water plants."
    pages = [
        (
            "/",
            html("Swans", "Swans of the lake.", {"/original": "swans", "/dated": "cygnets"}),
        ),
        ("/original", html("Swans", swans, {"/copy": "more swans", "/early": "next"})),
        ("/copy", html("Swans", swans, {"/original": "more swans", "/late": "next"})),
        ("/early", html("Early", "Swans arrive early in spring.", {})),
        ("/late", html("Late", "Swans leave late in autumn.", {})),
        ("/dated", html("Cygnets", "Cygnets hatch in May.", {})),
    ]
    folder = tmp_path_factory.mktemp("dup-web") / "web"
    write_bundle(
        folder,
        [
            {
                "url": SITE + path,
                "status": 200,
                "headers": {**headers, "Last-Modified": MONDAY} if path == "/dated" else headers,
                "body": body,
            }
            for path, body in pages
        ],
    )
    (folder / "topic.toml").write_text(
        f'name = "dup"\nseeds = ["{SITE}/"]\nstrategy = "soft"\n'
        '[relevance]\nmethod = "keywords"\nkeywords = ["swan", "cygnet"]\n'
    )
    return folder


def fetched(served) -> set[str]:
    return {url_key(entry["url"]) for entry in read_log(served.log_path)}


def test_a_crawl_skips_the_copy_and_its_links(crawl: Crawl, served, redis_client):
    stats = crawl.run()
    feed = {item["url"]: item for item in crawl.feed()}
    copy, original = feed[SITE + "/copy"], feed[SITE + "/original"]
    # The copy was fetched and acknowledged, but not classified.
    assert copy["bad"] == "duplicate" and copy["relevance"] is None and copy["order"]
    assert original["bad"] is None and original["relevance"] > 0
    assert stats["focused/pages/duplicate"] == 1 and stats["focused/duplicate/text"] == 1
    # Its links were not queued: /late, linked from the copy only, was never fetched.
    wait_for(lambda: url_key(SITE + "/early") in fetched(served))  # the log is written each 1 s
    assert url_key(SITE + "/late") not in fetched(served) and SITE + "/late" not in feed
    counts = redis_client.hgetall(keys.prefix(crawl.name) + keys.STATS)
    assert counts["duplicate"] == "1" and counts["classified"] == "4"
    assert crawl_status(redis_client, crawl.name)["duplicate"] == 1  # focused status shows it
    # The spider passed Last-Modified on: the dated page's date is recorded.
    modified = redis_client.hgetall(keys.prefix(crawl.name) + keys.MODIFIED)
    assert modified == {str(fingerprint(SITE + "/dated")): last_modified_value(MONDAY)}


def test_a_crawl_without_skipping_classifies_the_copy(crawl: Crawl, served):
    stats = crawl.run(FOCUSED_SKIP_DUPLICATES=False)
    feed = {item["url"]: item for item in crawl.feed()}
    assert feed[SITE + "/copy"]["bad"] is None and feed[SITE + "/copy"]["relevance"] > 0
    assert "focused/pages/duplicate" not in stats
    wait_for(lambda: url_key(SITE + "/late") in fetched(served))
