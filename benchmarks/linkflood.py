"""A page of a hundred thousand links (focused.lab.webs.hostile.link_flood) in a crawl.

    .venv/bin/python benchmarks/linkflood.py [--processes 2] [--without-page]

Crawls the tests' 300-page synthetic web (20 hosts, seed 1) plus that page, linked from a seed,
with --processes crawl processes on one embedded Redis (FOCUSED_HOST_DELAY=0.05, other settings
default), and prints one JSON line: the crawl's duration, the fetches of the page, the URLs
fetched twice, the longest gap between two fetches in the server's access log (how long a
process stopped fetching), each process's peak RSS and its last (sampled every 0.2 s) and
``lease_reclaimed`` (leases taken from a process that missed its heartbeats).
--without-page crawls the same web without it, for comparison.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from focused.lab.crawlproc import crawl_command, crawl_env, memory_until_done
from focused.lab.webs.bundle import url_key
from focused.lab.webs.generate import generate_web
from focused.lab.webs.hostile import link_flood
from focused.lab.webs.server import ServedWeb, read_log
from focused.store import keys
from focused.store.client import connect


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--without-page", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="linkflood-"))
    flood = link_flood()
    records, seed_links = ([], []) if args.without_page else (flood.records, [(flood.url, "All")])
    web = generate_web(
        folder / "web", n_pages=300, n_hosts=20, seed=1, extra_pages=records, seed_links=seed_links
    )
    home = folder / "home"
    client = connect(home=home)  # held, so the embedded server stays up between the crawls
    settings = {"FOCUSED_CRAWL": "linkflood", "FOCUSED_HOST_DELAY": 0.05}
    with ServedWeb(web, log_path=folder / "served.jsonl") as served:
        started = time.monotonic()
        processes = [
            subprocess.Popen(
                crawl_command(web / "topic.toml", settings, folder / f"{n}.jsonl"),
                env=crawl_env(served.proxy, home),
                cwd=folder,
                stdout=subprocess.DEVNULL,
                stderr=(folder / f"{n}.log").open("w"),
            )
            for n in range(args.processes)
        ]
        peaks, lasts = memory_until_done(processes)
        duration = time.monotonic() - started
    log = read_log(folder / "served.jsonl")
    fetched = Counter(url_key(e["url"]) for e in log if e["status"] < 500)
    times = sorted(entry["time"] for entry in log)
    stats = client.hgetall(keys.prefix("linkflood") + keys.STATS)
    result = {
        "page": not args.without_page,
        "processes": args.processes,
        "exit_codes": [process.returncode for process in processes],
        "duration_s": round(duration, 1),
        "page_fetches": sum(entry["url"] == flood.url for entry in log),
        "urls_fetched_twice": sum(n > 1 for url, n in fetched.items() if "robots" not in url),
        "longest_gap_s": round(max(b - a for a, b in zip(times, times[1:], strict=False)), 2),
        "peak_rss_mb": [round(peak / 2**20) for peak in peaks],
        "last_rss_mb": [round(last / 2**20) for last in lasts],
        "lease_reclaimed": int(stats.get("lease_reclaimed", 0)),
        "folder": str(folder),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
