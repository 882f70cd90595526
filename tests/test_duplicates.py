"""Seed 004's duplicates: the check in a batch's acknowledgement on a real Redis (one server,
then a Redis Cluster), then a real crawl of a tiny web in which two URLs serve the same text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from scrapy.utils.test import get_crawler

from focused.errors import FocusedError
from focused.items import Page
from focused.lab.webs.bundle import url_key, write_bundle
from focused.lab.webs.server import read_log
from focused.monitor.snapshot import crawl_status
from focused.pipelines.duplicates import duplicate_fields, last_modified_value, mark_duplicate
from focused.store import keys
from focused.store.admin import reset_crawl
from focused.store.crawl import CrawlStore
from focused.store.frontier.base import Ack
from focused.store.frontier.queue import RedisFrontier
from focused.store.frontier.records import fingerprint
from focused.store.reads import Reader
from tests.conftest import Crawl, wait_for

MONDAY = "Mon, 06 Jan 2025 10:00:00 GMT"
TUESDAY = "Tue, 07 Jan 2025 10:00:00 GMT"


def page(url: str, text: str, last_modified: str | None = None, title: str = "") -> Page:
    """A fetched page, judged relevant (a duplicate loses its verdict)."""
    return Page(
        url,
        200,
        0.0,
        title=title,
        text=text,
        last_modified=last_modified,
        relevance=0.5,
        relevant=True,
        category="Birds",
    )


@pytest.fixture(params=["server", pytest.param("cluster", marks=pytest.mark.cluster)])
def frontier_client(request: pytest.FixtureRequest) -> redis.Redis:
    """Each check runs on one server (inside the acknowledgement), then on a Redis Cluster (a
    call to the text's shard before the acknowledgement makes the verdict)."""
    return request.getfixturevalue("redis_client" if request.param == "server" else "cluster")


@pytest.fixture
def stats():
    return get_crawler().stats


Check = Callable[..., Page]


def checker(frontier: RedisFrontier, stats) -> Check:
    """Fetch pages through a frontier and acknowledge them, a batch at a time, with their
    duplicates check, as the frontier pipeline does: returns the items, marked."""

    def check(*items: Page) -> Page | list[Page]:
        frontier.requeue([item.url for item in items])
        leases = {leased.url: leased.lease for leased in frontier.pop_ready(100).leased}
        acks = []
        for item in items:
            checksum, modified = duplicate_fields(item)
            acks.append(
                Ack(
                    leases[item.url],
                    item.url,
                    "page",
                    relevance=0.5,
                    checksum=checksum,
                    last_modified=modified,
                    revisit=item.revisit,
                )
            )
        for item, done in zip(items, frontier.complete_many(acks), strict=True):
            mark_duplicate(item, done.duplicate, stats)
        return items[0] if len(items) == 1 else list(items)

    return check


@pytest.fixture
def check(frontier, stats) -> Check:
    return checker(frontier(), stats)


def test_a_copy_of_another_pages_text_is_a_duplicate(check, stats):
    first = check(page("http://a.test/swans", "Mute swans nest by the lake."))
    # Case, layout and Unicode forms do not make another text.
    copy = check(page("http://b.test/copy", "mute  SWANS nest\nby the lake."))
    other = check(page("http://b.test/other", "Mute swans nest by the river."))
    assert first.bad is None and other.bad is None
    assert copy.bad == "duplicate" and copy.relevance is None
    assert (copy.relevant, copy.category, copy.duplicate) == (False, None, "text")
    assert (other.relevance, other.relevant, other.duplicate) == (0.5, True, None)
    assert stats.get_value("focused/pages/duplicate") == 1
    assert stats.get_value("focused/duplicate/text") == 1


def test_copies_in_one_batch_are_told_apart_in_order(check, frontier_client, crawl_name):
    one, two, three = check(
        page("http://a.test/1", "Herons wade."),
        page("http://b.test/2", "Herons wade."),
        page("http://c.test/3", "Herons fly."),
    )
    assert one.bad is None and two.bad == "duplicate" and three.bad is None
    stats = RedisFrontier.for_crawl(frontier_client, crawl_name).counts()
    assert stats["duplicate"] == 1 and stats["classified"] == 2 and stats["fetched"] == 3


def test_the_title_is_part_of_the_text(check):
    check(page("http://a.test/1", "Same body.", title="Swans"))
    assert check(page("http://a.test/2", "Same body.", title="Geese")).bad is None
    assert check(page("http://a.test/3", "Same body.", title="Geese")).bad


def test_same_url_and_same_last_modified_is_a_duplicate(check, stats):
    url = "http://a.test/news"
    assert check(page(url, "Monday's news.", MONDAY)).bad is None
    # Fetched again (a lease ran out, a repeated run): unchanged, whatever the text says now.
    again = check(page(url, "Monday's news, with an ad.", MONDAY))
    assert again.bad == "duplicate"
    assert stats.get_value("focused/duplicate/last_modified") == 1
    # The same date spelled another way (RFC 850) is the same Last-Modified.
    spelled = check(page(url, "Other text.", "Monday, 06-Jan-25 10:00:00 GMT"))
    assert spelled.bad == "duplicate"


def test_same_url_with_a_newer_last_modified_is_not(check):
    url = "http://a.test/news"
    assert check(page(url, "Monday's news.", MONDAY)).bad is None
    assert check(page(url, "Tuesday's news.", TUESDAY)).bad is None
    # Even with the text it had: a URL is not a copy of itself.
    assert check(page(url, "Monday's news.", "Wed, 08 Jan 2025 10:00:00 GMT")).bad is None
    # And the latest date is what the next fetch is compared with.
    assert check(page(url, "Any.", TUESDAY)).bad is None
    assert check(page(url, "Any.", TUESDAY)).bad == "duplicate"


def test_a_url_fetched_again_without_last_modified_is_classified_again(check):
    # A killed crawler's lease runs out and the URL is fetched again: not a copy of itself.
    url = "http://a.test/page"
    assert check(page(url, "Some text.")).bad is None
    assert check(page(url, "Some text.")).bad is None
    assert check(page("http://a.test/copy", "Some text.")).bad == "duplicate"


def test_a_run_after_reset_keep_known_skips_what_came_back_unchanged(
    check, frontier_client, crawl_name, stats
):
    check(page("http://a.test/same", "Swans nest by the lake."))
    check(page("http://a.test/dated", "Monday's news.", MONDAY))
    check(page("http://a.test/edited", "Geese fly south."))
    assert reset_crawl(frontier_client, crawl_name, keep_known=True) >= 3
    assert not frontier_client.exists(keys.prefix(crawl_name) + keys.STATS)
    # The next run: unchanged text, or an unchanged Last-Modified whatever the text, is known;
    # an edited page and a new one are classified.
    assert check(page("http://a.test/same", "Swans nest by the lake.")).bad
    assert check(page("http://a.test/dated", "Ads changed.", MONDAY)).bad
    assert check(page("http://a.test/edited", "Geese fly north.")).bad is None
    assert check(page("http://a.test/new", "Ducks dive.")).bad is None
    assert stats.get_value("focused/duplicate/known") == 2
    # Knowledge accumulates over runs: the edited page is known in its new form after the next
    # reset, and the pages of the first run stay known.
    reset_crawl(frontier_client, crawl_name, keep_known=True)
    assert check(page("http://a.test/edited", "Geese fly north.")).bad
    assert check(page("http://a.test/same", "Swans nest by the lake.")).bad
    # A plain reset forgets everything.
    reset_crawl(frontier_client, crawl_name)
    assert check(page("http://a.test/same", "Swans nest by the lake.")).bad is None


def test_different_crawls_do_not_share(frontier_client, crawl_name, stats):
    one = checker(RedisFrontier.for_crawl(frontier_client, crawl_name, host_delay=0), stats)
    two = checker(
        RedisFrontier.for_crawl(frontier_client, crawl_name + "-two", host_delay=0), stats
    )
    assert one(page("http://a.test/x", "Text.", MONDAY)).bad is None
    assert two(page("http://b.test/y", "Text.")).bad is None
    assert two(page("http://a.test/x", "Other.", MONDAY)).bad is None
    # Each crawl's records live under its own prefix only.
    fp = str(fingerprint("http://a.test/x"))
    for name, texts in ((crawl_name, 1), (crawl_name + "-two", 2)):
        shards = CrawlStore(frontier_client, name).shards  # a cluster spreads them
        modified = shards.host_prefix("http://a.test") + keys.MODIFIED
        assert frontier_client.hget(modified, fp) == last_modified_value(MONDAY)
        checksums = (prefix + keys.CHECKSUMS for prefix in shards.prefixes)
        assert sum(frontier_client.hlen(key) for key in checksums) == texts


def test_pages_without_a_check_are_not_recorded(frontier, frontier_client, crawl_name):
    f = frontier()
    f.requeue(["http://a.test/missing", "http://a.test/plain"])
    leases = {leased.url: leased.lease for leased in f.pop_ready(10).leased}
    done = f.complete_many(
        [
            Ack(leases["http://a.test/missing"], "http://a.test/missing", "bad"),
            Ack(leases["http://a.test/plain"], "http://a.test/plain", "page"),
        ]
    )
    assert [d.duplicate for d in done] == ["", ""] and all(d.order for d in done)
    assert not frontier_client.exists(keys.prefix(crawl_name) + keys.CHECKSUMS)


def test_lost_redis_raises_and_acknowledges_nothing(crawl_name):
    dead = redis.Redis(port=1, socket_connect_timeout=1, decode_responses=True)
    with pytest.raises(FocusedError):
        RedisFrontier.for_crawl(dead, crawl_name, retries=0).complete_many(
            [Ack("http://a.test 0 - 0 0 ", "http://a.test/", "page", checksum="0" * 32)]
        )


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
    assert (
        crawl_status(Reader(redis_client), crawl.name)["duplicate"] == 1
    )  # focused status shows it
    # The spider passed Last-Modified on: the dated page's date is recorded.
    modified = redis_client.hgetall(keys.prefix(crawl.name) + keys.MODIFIED)
    assert modified == {str(fingerprint(SITE + "/dated")): last_modified_value(MONDAY)}


def test_a_crawl_without_skipping_classifies_the_copy(crawl: Crawl, served):
    stats = crawl.run(FOCUSED_SKIP_DUPLICATES=False)
    feed = {item["url"]: item for item in crawl.feed()}
    assert feed[SITE + "/copy"]["bad"] is None and feed[SITE + "/copy"]["relevance"] > 0
    assert "focused/pages/duplicate" not in stats
    wait_for(lambda: url_key(SITE + "/late") in fetched(served))
