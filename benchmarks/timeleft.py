"""How right the live figures are: one crawl of the demo's synthetic web (3,000 pages on 150
hosts) up to an item limit, its snapshot read every second as ``focused status`` reads it; the
time left it showed against when the crawl really ended, and how far the process's items trailed
the crawl's own ``fetched``.

    python benchmarks/timeleft.py [--items 400] [--host-delay 0.2]

Run with ``PYTHONPATH`` at another checkout to measure that one's code (the crawl's subprocess
inherits it).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from pathlib import Path

from common import DEFAULT_WORK, ensure_web

from focused.lab.crawlproc import crawl_command, crawl_env
from focused.lab.webs.server import ServedWeb
from focused.monitor.snapshot import crawl_snapshot
from focused.store.admin import reset_crawl
from focused.store.client import connect
from focused.store.reads import Reader

CRAWL = "timeleft"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=400, help="CLOSESPIDER_ITEMCOUNT")
    parser.add_argument("--host-delay", type=float, default=0.2, help="FOCUSED_HOST_DELAY")
    parser.add_argument("--work", default=str(DEFAULT_WORK))
    args = parser.parse_args()
    home = Path(args.work) / "timeleft"
    web = ensure_web(home.parent / "web-3000-150", 3000, 150)
    client = connect(home=home)
    reset_crawl(client, CRAWL)
    settings = {
        "FOCUSED_CRAWL": CRAWL,
        "CLOSESPIDER_ITEMCOUNT": args.items,
        "FOCUSED_HOST_DELAY": args.host_delay,
        "LOG_LEVEL": "WARNING",
    }
    shown: list[tuple[float, float, int, int]] = []  # when, time left, fetched, items
    with ServedWeb(web) as served:
        command = crawl_command(web / "topic.toml", settings, home / "feed.jsonl")
        env = crawl_env(served.proxy, home)
        with subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL) as process:
            while process.poll() is None:
                snapshot = crawl_snapshot(Reader(client), CRAWL)
                if snapshot and snapshot.get("time_left") is not None:
                    items = sum(p["items"] for p in snapshot["processes"] if p["alive"])
                    shown.append(
                        (time.monotonic(), snapshot["time_left"], snapshot["fetched"], items)
                    )
                time.sleep(1)
        ended = time.monotonic()
    if not shown:
        print("no time left was shown (a crawl too short to measure)")
        return
    errors = [abs(at + left - ended) for at, left, _, _ in shown]
    behind = [fetched - items for _, _, fetched, items in shown]
    print(
        f"{len(shown)} readings; |shown end - real end| median {statistics.median(errors):.1f} s,"
        f" max {max(errors):.1f} s; the first: {shown[0][1]:.0f} s left, {ended - shown[0][0]:.0f}"
        f" s in fact; the process's items behind the crawl's fetched: median"
        f" {statistics.median(behind):.0f}, max {max(behind)}"
    )


if __name__ == "__main__":
    main()
