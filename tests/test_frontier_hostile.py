"""The frontier against what the open web writes in links, and against processes that die:
only clean URLs reach Redis, one host per server whatever its spelling, no stored record can
make a script fail, a killed process's leases come back untouched, and Retry-After holds a
host for every process."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from focused.errors import CrawlVanished, FocusedError
from focused.extensions.heartbeat import forget_dead_here
from focused.links.urls import BadURL, clean_url, ip_of
from focused.store import keys
from focused.store.admin import reset_crawl
from focused.store.frontier.base import Link


def urls(pop) -> list[str]:
    return [leased.url for leased in pop.leased]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://[::1", "syntax"),
        ("http://x:99999/", "port"),
        ("http://x.test:0/", "port"),
        ("http://a b.example/x", "host"),
        ("http://1.2.3.999/", "host"),
        ("http:///path", "host"),
        ("ftp://x.test/", "scheme"),
        ("javascript:alert(1)", "scheme"),
        ("http://x.test/" + "a" * 10_000, "too_long"),
    ],
)
def test_bad_urls_are_refused_with_a_reason(url, reason):
    with pytest.raises(BadURL) as error:
        clean_url(url)
    assert error.value.reason == reason


def test_one_spelling_per_url():
    assert clean_url("HTTP://User:pw@WWW.Example.COM.:80/a b?x=1#f") == (
        "http://www.example.com/a%20b?x=1"
    )
    assert clean_url("https://example.com:443") == "https://example.com/"
    assert clean_url("http://example.com:8080/") == "http://example.com:8080/"
    assert clean_url("https://bücher.test/ä") == "https://xn--bcher-kva.test/%C3%A4"
    for spelling in ("127.1", "0x7f.0.0.1", "2130706433", "017700000001", "0177.0.0.1"):
        assert clean_url(f"http://{spelling}/x") == "http://127.0.0.1/x", spelling
    assert clean_url("http://[::FFFF:127.0.0.1]/") == "http://[::ffff:7f00:1]/"
    assert str(ip_of("0x7f.1")) == "127.0.0.1" and ip_of("www.example.com") is None


def test_the_fast_path_for_clean_urls_agrees_with_the_full_parse(monkeypatch):
    """URLs already clean skip the parse (``CLEAN``): random URLs from odd parts must come out
    the same, or be refused for the same reason, either way."""
    import random

    from focused.links import urls as module

    parts = ["a", "0x7f", "7f", "123", "x-y", "_", "A", "b1", "0", "xn--bcher-kva", ""]
    paths = ["/", "//", "/a%20b", "/%zz", "/~u;p=1", "/(x)!$&'*+,=:@", "/a b", "/é", "/#f", ""]
    tails = ["", "?q=1", "?a=b:c@d", "?x=%41&y", ":80", ":8080", ".", "#frag"]
    draw = random.Random(14)
    for _ in range(3000):
        host = ".".join(draw.choice(parts) for _ in range(draw.randint(1, 4)))
        url = f"{draw.choice(['http', 'https', 'HTTP'])}://{host}"
        url += draw.choice(tails[4:]) if draw.random() < 0.2 else ""
        url += draw.choice(paths) + draw.choice(tails[:4])

        def result(url: str = url) -> str:
            try:
                return clean_url(url)
            except BadURL as exc:
                return f"BadURL {exc.reason}"

        fast = result()
        with monkeypatch.context() as patch:
            patch.setattr(module, "CLEAN", module.re.compile("(?!)"))
            assert result() == fast, url


def test_bad_links_are_counted_and_never_reach_redis(frontier, redis_client, crawl_name):
    refused: list[str] = []
    f = frontier(on_rejected=lambda error: refused.append(error.reason), max_url_length=200)
    bad = ["http://a b.example/x", "http://[::1", "http://x:99999/", "http://x.test/" + "y" * 300]
    assert f.push_many([Link(url, 0.5) for url in [*bad, "http://good.test/"]]) == 1
    assert sorted(refused) == ["host", "port", "syntax", "too_long"]
    queues = list(
        redis_client.scan_iter(match=keys.pattern(keys.prefix(crawl_name), keys.HOST_QUEUE))
    )
    assert queues == [keys.prefix(crawl_name) + keys.HOST_QUEUE + "http://good.test"]
    leased = f.pop_ready(10).leased
    assert urls(f.pop_ready(10)) == [] and [x.url for x in leased] == ["http://good.test/"]
    # A page whose links are all bad is still acknowledged.
    assert f.complete(leased[0].lease, leased[0].url, "page", 0.5, False, [Link(bad[0], 1)])[0]


def test_every_spelling_of_a_host_is_one_polite_host(frontier, redis_client, crawl_name):
    f = frontier(host_delay=30.0, host_concurrency=1)
    spellings = [
        "http://www.example.test/{}",
        "http://WWW.Example.TEST/{}",
        "http://www.example.test:80/{}",
        "http://user@www.example.test/{}",
        "http://user:secret@www.example.test:80/{}",
        "http://www.example.test./{}",
        "HTTP://www.EXAMPLE.test.:80/{}",
    ]
    links = [Link(s.format(i), 0.5) for i, s in enumerate(spellings * 6)]
    assert f.push_many(links) == len(links)
    pattern = keys.pattern(keys.prefix(crawl_name), keys.HOST_QUEUE)
    assert len(list(redis_client.scan_iter(match=pattern))) == 1
    assert len(f.pop_ready(50).leased) == 1  # one host: one fetch, then its delay
    assert f.pop_ready(50).leased == []


def test_no_stored_record_makes_a_script_fail(frontier, redis_client, crawl_name):
    f = frontier(lease_s=0.1)
    prefix = keys.prefix(crawl_name)
    f.push_many([Link("http://a.test/1", 0.5)])
    # Records no current code writes (an older format, a hand edit): expired leases that do
    # not parse, and a queued member without a parent field.
    redis_client.zadd(prefix + keys.LEASES, {"garbage": 0, "http://x.test notanumber - m": 0})
    redis_client.zadd(prefix + keys.HOST_QUEUE + "http://a.test", {"oddmember": 1})
    popped = f.pop_ready(10)
    assert urls(popped) == ["http://a.test/1"]
    assert f.counts()["corrupt"] == 3  # two leases and the member, each dropped
    assert f.complete("not a lease at all", "http://a.test/1", "page") == (0, 0)


def beat(redis_client, crawl_name, owner: str, ttl_ms: int = 60_000) -> None:
    """A heartbeat record as focused.extensions.heartbeat writes it."""
    prefix = keys.prefix(crawl_name)
    redis_client.hset(prefix + keys.PROC + owner, "state", "running")
    redis_client.pexpire(prefix + keys.PROC + owner, ttl_ms)
    redis_client.zadd(prefix + keys.PROCS, {owner: time.time()})


def test_a_gone_process_leases_come_back_untouched_at_once(frontier, redis_client, crawl_name):
    dead, alive = frontier(lease_s=300.0), frontier(lease_s=300.0)
    dead.owner, alive.owner = "host:1:dead", "host:2:live"
    beat(redis_client, crawl_name, dead.owner, ttl_ms=300)
    beat(redis_client, crawl_name, alive.owner)
    dead.push_many([Link(f"http://h{i}.test/", 0.5) for i in range(4)])
    taken = dead.pop_ready(4).leased
    assert len(taken) == 4 and alive.pop_ready(10).leased == []  # leased, record alive
    time.sleep(1.2)  # the dead process's record expires; reaping runs at most once a second
    back = alive.pop_ready(10).leased
    assert sorted(x.url for x in back) == sorted(x.url for x in taken)
    assert all(x.tries == 0 for x in back)  # no try charged for fetches that never finished
    assert alive.counts()["lease_reclaimed"] == 4
    # The dead process's late acknowledgement does not count the page twice.
    dead.complete(taken[0].lease, taken[0].url, "page", 0.5, False)
    alive.complete(back[0].lease, back[0].url, "page", 0.5, False)
    assert alive.counts()["fetched"] == 2 and alive.counts().get("queued", 0) == 0


def test_a_finished_process_leases_come_back_at_once(frontier, redis_client, crawl_name):
    closed, alive = frontier(lease_s=300.0), frontier(lease_s=300.0)
    closed.owner, alive.owner = "host:1:closed", "host:2:live"
    beat(redis_client, crawl_name, closed.owner)
    beat(redis_client, crawl_name, alive.owner)
    closed.push_many([Link(f"http://h{i}.test/", 0.5) for i in range(3)])
    assert len(closed.pop_ready(3).leased) == 3
    # Its end recorded (the heartbeat at the spider's close), its record kept for readers.
    redis_client.hset(keys.prefix(crawl_name) + keys.PROC + closed.owner, "state", "finished")
    time.sleep(1.1)  # reaping runs at most once a second
    back = alive.pop_ready(10).leased
    assert len(back) == 3 and all(x.tries == 0 for x in back)


def test_a_dead_process_of_this_machine_is_forgotten_at_a_start(frontier, redis_client, crawl_name):
    # No process has pid_max: pids are below it.
    dead_pid = int(Path("/proc/sys/kernel/pid_max").read_text())
    dead, alive = frontier(lease_s=300.0), frontier(lease_s=300.0)
    dead.owner, alive.owner = f"here:{dead_pid}:aa", f"here:{os.getpid()}:bb"
    prefix = keys.prefix(crawl_name)
    for owner, pid in ((dead.owner, dead_pid), (alive.owner, os.getpid())):
        beat(redis_client, crawl_name, owner)
        redis_client.hset(prefix + keys.PROC + owner, mapping={"host": "here", "pid": pid})
    dead.push_many([Link(f"http://h{i}.test/", 0.5) for i in range(3)])
    assert len(dead.pop_ready(3).leased) == 3  # then Redis was lost at its close: exit code 3
    assert forget_dead_here(alive.store, "elsewhere") == []  # another machine's pids
    assert forget_dead_here(alive.store, "here") == [dead.owner]
    time.sleep(1.1)  # reaping runs at most once a second
    back = alive.pop_ready(10).leased
    assert len(back) == 3 and all(x.tries == 0 for x in back)
    assert redis_client.hget(prefix + keys.PROC + alive.owner, "state") == "running"


def test_a_page_taken_back_from_hung_processes_twice_fails(frontier, redis_client, crawl_name):
    first, second, third = (frontier(lease_s=300.0) for _ in range(3))
    first.owner, second.owner, third.owner = "host:1:a", "host:2:b", "host:3:c"
    for process in (first, second, third):
        beat(redis_client, crawl_name, process.owner)
    first.push_many([Link("http://a.test/hangs", 0.5)])

    def hangs(process) -> None:  # its heartbeat found its reactor silent for HUNG_BEATS beats
        redis_client.hset(keys.prefix(crawl_name) + keys.PROC + process.owner, "state", "hung")
        time.sleep(1.1)  # reaping runs at most once a second

    assert len(first.pop_ready(1).leased) == 1
    hangs(first)
    (again,) = second.pop_ready(1).leased
    assert again.url == "http://a.test/hangs" and again.tries == 1  # a try charged
    hangs(second)
    assert third.pop_ready(10).leased == []  # the second time, it fails
    counts = third.counts()
    assert counts["failed/hung"] == 1 and counts["lease_hung"] == 1
    assert (counts.get("queued", 0), counts["in_flight"]) == (0, 0)


def test_a_crawl_whose_state_vanished_changes_nothing_and_says_so(frontier, redis_client):
    lost: list[Exception] = []
    one = frontier(epoch=True, on_lost=lost.append)
    one.push_many([Link(f"http://h{i}.test/", 0.5) for i in range(3)])
    leased = one.pop_ready(1).leased[0]
    assert frontier(epoch=True).epochs == one.epochs  # another process of the crawl
    reset_crawl(redis_client, one.store.crawl)  # or FLUSHALL, or a Redis restarted empty
    with pytest.raises(FocusedError, match="^the crawl's state vanished from Redis"):
        one.complete(leased.lease, leased.url, "page", 0.5)
    with pytest.raises(FocusedError):
        one.pop_ready(10)
    assert [type(error) for error in lost] == [CrawlVanished]  # reported once
    assert not any(redis_client.scan_iter(keys.prefix(one.store.crawl) + "*"))
    # A process that starts now starts the crawl afresh, and the old one's calls still fail.
    fresh = frontier(epoch=True)
    assert fresh.epochs != one.epochs and fresh.push_many([Link("http://h0.test/", 0.5)]) == 1
    with pytest.raises(FocusedError):
        one.push_many([Link("http://new.test/", 0.5)])


def test_a_live_process_keeps_its_leases(frontier, redis_client, crawl_name):
    one, other = frontier(), frontier()
    one.owner = "host:1:a"
    beat(redis_client, crawl_name, one.owner)
    one.push_many([Link("http://a.test/", 0.5)])
    assert len(one.pop_ready(1).leased) == 1
    time.sleep(1.1)
    assert other.pop_ready(10).leased == []
    assert "lease_reclaimed" not in other.counts()


def test_retry_after_holds_the_host_for_every_process(frontier):
    one, other = frontier(host_delay=0.0), frontier(host_delay=0.0)
    one.push_many([Link(f"http://slow.test/{i}", 0.5) for i in range(3)])
    one.push_many([Link("http://other.test/", 0.4)])
    one.back_off("http://SLOW.test:80/anything", 2.0)
    popped = other.pop_ready(10)
    assert urls(popped) == ["http://other.test/"]
    assert popped.wake_in is not None and 1.0 < popped.wake_in <= 2.0
    one.back_off("http://slow.test/", 0.5)  # a shorter wait does not cut the longer one
    time.sleep(1.0)
    assert other.pop_ready(10).leased == []
    time.sleep(1.2)
    assert len(other.pop_ready(10).leased) == 3
    assert one.counts()["backed_off"] == 2


def test_redirects_followed_travel_with_the_url(frontier):
    f = frontier()
    f.push_many([Link("http://a.test/start", 0.5)])
    leased = f.pop_ready(1).leased[0]
    assert leased.redirects == 0
    f.complete(leased.lease, leased.url, "redirect", links=[Link("http://a.test/2", 0.5, 3, "", 4)])
    target = f.pop_ready(1).leased[0]
    assert (target.url, target.depth, target.redirects) == ("http://a.test/2", 3, 4)
