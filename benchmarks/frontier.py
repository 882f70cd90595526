"""Frontier figures: push and pop rates, and Redis bytes per queued URL.

    python benchmarks/frontier.py [--urls 100000] [--hosts 400]

Runs on the embedded Redis (or FOCUSED_REDIS_URL) in a scratch crawl that it deletes after.
URLs are about 60 characters, like the Wikispeedia ones, spread over --hosts hosts.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from focused.connection import connect
from focused.monitor import reset_crawl
from focused.schedulers.frontier import Link, RedisFrontier

BATCH = 100  # links per push (about a page's out-links) and URLs per pop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=100_000)
    parser.add_argument("--hosts", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        client = connect(home=home)
        crawl = "bench-frontier"
        reset_crawl(client, crawl)
        frontier = RedisFrontier(
            client, crawl, host_delay=0.0, host_concurrency=10**6, lease_s=3600
        )
        links = [
            Link(
                f"http://www.host{i % args.hosts:05d}.wiki.test/Article_number_{i:09d}_x",
                i % 97 / 97,
            )
            for i in range(args.urls)
        ]
        before = client.info("memory")["used_memory"]
        started = time.perf_counter()
        for i in range(0, len(links), BATCH):
            frontier.push_many(links[i : i + BATCH])
        push_s = time.perf_counter() - started
        queued_bytes = client.info("memory")["used_memory"] - before
        started = time.perf_counter()
        popped = 0
        while popped < args.urls:
            got = len(frontier.pop_ready(BATCH).leased)
            if not got:
                break
            popped += got
        pop_s = time.perf_counter() - started
        avg_len = sum(len(link.url) for link in links) / len(links)
        print(f"{args.urls:,} URLs (mean {avg_len:.0f} chars) on {args.hosts} hosts")
        print(f"push: {args.urls / push_s:,.0f} URLs/s (batches of {BATCH})")
        print(f"pop (lease): {popped / pop_s:,.0f} URLs/s (batches of {BATCH})")
        print(f"push+pop: {2 * args.urls / (push_s + pop_s):,.0f} ops/s")
        print(
            f"Redis bytes per queued URL (queue + seen set + host state): "
            f"{queued_bytes / args.urls:.0f} B"
        )
        reset_crawl(client, crawl)


if __name__ == "__main__":
    main()
