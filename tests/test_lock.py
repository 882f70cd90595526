"""A crawl's lock on a real Redis: one holder at a time, renewed while its holder runs, let go
within one lease when its holder is killed, and no write of a holder paused past its lease once
another process took the lock (the fence), for every locked job's writes."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable

import pytest

from focused.store import keys
from focused.store.coverage import CoverageStore
from focused.store.crawl import CrawlStore
from focused.store.graph import GraphStore
from focused.store.learning import LearningStore
from focused.store.lock import Lease, LockLost, held_lock
from focused.store.seeds import PushedSeeds, push_seeds
from focused.store.strategy import GeneticStore, HMMStore
from tests.conftest import wait_for


def test_one_holder_at_a_time_and_the_lock_is_let_go_after_the_block(redis_client, crawl_name):
    key = keys.prefix(crawl_name) + "test:lock"
    with held_lock(redis_client, key, 5) as held:
        with held_lock(redis_client, key, 5) as second:
            assert held and not second
        assert redis_client.exists(key)  # the second did not release the first's lock
    assert not redis_client.exists(key)


def test_a_holder_keeps_the_lock_for_longer_than_its_lease_while_it_runs(redis_client, crawl_name):
    key = keys.prefix(crawl_name) + "test:lock"
    with held_lock(redis_client, key, 0.3) as held:
        assert held
        for _ in range(10):  # 1 s: more than three leases
            time.sleep(0.1)
            with held_lock(redis_client, key, 0.3) as other:
                assert not other
    assert not redis_client.exists(key)


def test_a_killed_holder_lets_go_within_one_lease(redis_client, redis_home, crawl_name):
    key = keys.prefix(crawl_name) + "test:lock"
    holder = textwrap.dedent(f"""
        import time
        from focused.store.client import connect
        from focused.store.lock import held_lock
        with held_lock(connect(home={str(redis_home)!r}), {key!r}, 1.0) as held:
            print(held is not None, flush=True)
            time.sleep(600)
    """)
    process = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "True"
    time.sleep(1.5)  # longer than its lease: it renews
    assert redis_client.exists(key)
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    killed = time.monotonic()
    wait_for(lambda: not redis_client.exists(key), 5)
    assert time.monotonic() - killed <= 1.5
    with held_lock(redis_client, key, 1.0) as held:
        assert held


def test_a_holder_paused_past_its_lease_cannot_write_once_another_took_the_lock(
    redis_client, redis_home, crawl_name
):
    key, target = keys.prefix(crawl_name) + "test:lock", keys.prefix(crawl_name) + "test:target"
    holder = textwrap.dedent(f"""
        import sys
        from focused.store.client import connect
        from focused.store.lock import LockLost, fenced, held_lock
        client = connect(home={str(redis_home)!r})
        with held_lock(client, {key!r}, 1.0) as lease:
            print("held", flush=True)
            sys.stdin.readline()  # stopped here (SIGSTOP) past its lease
            try:
                fenced(client, lease, [("SET", {target!r}, "stale")])
                print("written", flush=True)
            except LockLost:
                print("refused", flush=True)
    """)
    process = subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stdout.readline().strip() == "held"
    process.send_signal(signal.SIGSTOP)  # no renewal either: its thread stops with it
    try:
        wait_for(lambda: not redis_client.exists(key), 5)  # its lease ran out
        with held_lock(redis_client, key, 5) as lease:
            assert lease is not None
            redis_client.set(target, "fresh")
            process.send_signal(signal.SIGCONT)
            process.stdin.write("go on\n")
            process.stdin.flush()
            assert process.stdout.readline().strip() == "refused"
            assert process.wait(30) == 0
            assert redis_client.get(target) == "fresh"
            assert redis_client.get(key) == lease.token  # its exit let go of nothing
    finally:
        process.kill()
        process.wait(30)


# Each locked job's fenced writes, given a store and a lease: (its lock, the write, the keys
# it writes).
Write = Callable[[CrawlStore, Lease], None]
FENCED: dict[str, tuple[str, Write, tuple[str, ...]]] = {
    "seed mover's trim": (
        keys.START_URLS_LOCK,
        lambda store, lease: store.fenced(lease, [("LTRIM", store.key(keys.START_URLS), 1, -1)]),
        (keys.START_URLS,),
    ),
    "distiller's record": (
        keys.DISTILL_LOCK,
        lambda store, lease: GraphStore(store).record_distillation({"fetched": 9}, {3: 1.0}, lease),
        (keys.DISTILL, keys.HUBS),
    ),
    "coverage estimate": (
        keys.COVERAGE_LOCK,
        lambda store, lease: CoverageStore(store).record({"pages": 9}, lease),
        (keys.COVERAGE, keys.COVERAGE_LOG),
    ),
    "refit's examples": (
        keys.LEARN_LOCK,
        lambda store, lease: LearningStore(store, 10).publish(9, ["a"], ["t"], [], 1, 0, lease),
        (keys.LEARNED, keys.LEARNED_EXAMPLES),
    ),
    "refit postponed": (
        keys.LEARN_LOCK,
        lambda store, lease: LearningStore(store, 10).postpone(9, lease, refused=True),
        (keys.LEARNED,),
    ),
    "HMM model": (
        keys.HMM_LOCK,
        lambda store, lease: HMMStore(store, 10).store_model({"meta": b"{}"}, 9, lease),
        (keys.HMM,),
    ),
    "HMM alphas": (
        keys.HMM_LOCK,
        lambda store, lease: HMMStore(store, 10).store_alphas([(1, b"a" * 8)], lease),
        (f"{keys.HMM_ALPHA}1",),
    ),
    "genetic generation": (
        keys.GENETIC_LOCK,
        lambda store, lease: GeneticStore(store).record_generation({"last": 9}, lease),
        (keys.GENETIC,),
    ),
}


@pytest.mark.parametrize("job", FENCED)
def test_every_locked_jobs_writes_are_refused_once_its_lease_is_lost(redis_client, crawl_name, job):
    lock, write, written = FENCED[job]
    store = CrawlStore(redis_client, crawl_name)
    push_seeds(store, ["http://a.test/", "http://b.test/"])
    before = {name: redis_client.dump(store.key(name)) for name in written}
    with store.held_lock(lock, 5) as lease:
        assert lease is not None
        redis_client.set(lease.key, "another process", px=5000)  # ran out, taken by another
        with pytest.raises(LockLost):
            write(store, lease)
        assert {name: redis_client.dump(store.key(name)) for name in written} == before
        redis_client.set(lease.key, lease.token)  # its own again: written
        write(store, lease)
    assert {name: redis_client.dump(store.key(name)) for name in written} != before


def test_the_seed_mover_trims_nothing_once_its_lease_is_lost(redis_client, crawl_name):
    store = CrawlStore(redis_client, crawl_name)
    push_seeds(store, ["http://a.test/", "http://b.test/"])

    def push(urls: list[str]) -> int:  # another process takes the lock meanwhile
        redis_client.set(store.key(keys.START_URLS_LOCK), "another process", px=5000)
        return len(urls)

    with pytest.raises(LockLost):
        PushedSeeds(store).move(10, 5, push)
    assert PushedSeeds(store).waiting() == 2
