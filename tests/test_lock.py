"""A crawl's lock on a real Redis: one holder at a time, renewed while its holder runs, let go
within one lease when its holder is killed."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

from focused.store import keys
from focused.store.lock import held_lock
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
            print(held, flush=True)
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
