"""Pages that need JavaScript: harvest, pages/s, CPU and the browser's memory, by FOCUSED_RENDER.

    .venv/bin/python benchmarks/render.py [--pages 1000] [--hosts 20] [--items 200]
        [--modes never auto always]

Generates the web of ``focused web generate --js`` (half the hosts, and the demo topic's seeds',
build their pages in JavaScript) and the same web plain, and crawls with one process on an
embedded Redis (FOCUSED_HOST_DELAY=0, CLOSESPIDER_ITEMCOUNT=--items):

- ``plain web, never``: the baseline, the same web without scripts, fetched plainly;
- ``js web, never``, ``js web, auto``, ``js web, always``: the web built by scripts.

For each it prints the pages (items) and relevant pages, seconds and pages/s, the CPU of the
crawl with its browser (the crawler process and the browser's, the playwright driver and
every Chromium process, sampled every 0.2 s with psutil; not the embedded Redis, a daemon),
the browser's share of it, CPU ms per page and the browser's per rendered page, its peak
memory (PSS of its processes added up: shared pages counted once), the RSS of the crawl process
and its browser's processes added up (peak, and at the last sample: whether a long crawl's
memory grows) and the ratios of pages/s and CPU per page to the baseline's. ``--modes`` runs
only the js web's crawls in those modes (and the baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import psutil

from focused.lab.crawlproc import crawl_command, crawl_env
from focused.lab.webs.generate import generate_web
from focused.lab.webs.scripted import generate_scripted_web
from focused.lab.webs.server import ServedWeb

SAMPLE_S = 0.2
BROWSER = re.compile(r"chrom|node|playwright", re.IGNORECASE)  # the driver and the browser


def crawl(web: Path, mode: str, items: int, work: Path) -> dict[str, float]:
    """One crawl of ``web`` with FOCUSED_RENDER=``mode``: its figures."""
    feed, log = work / f"{web.name}-{mode}.jsonl", work / f"{web.name}-{mode}.log"
    with ServedWeb(web) as served:
        env = crawl_env(served.proxy, work / "home")
        settings = {
            "FOCUSED_CRAWL": f"{web.name}-{mode}-{time.time_ns()}",
            "FOCUSED_HOST_DELAY": 0,
            "FOCUSED_RENDER": mode,
            "CLOSESPIDER_ITEMCOUNT": items,
            "LOG_LEVEL": "INFO",
        }
        command = crawl_command(web / "topic.toml", settings, feed)
        start = time.monotonic()
        with log.open("w") as stderr:
            process = subprocess.Popen(command, env=env, stderr=stderr)
        browser_cpu: dict[int, float] = {}
        crawler_cpu = 0.0
        peak_rss = peak_total = total = 0
        while True:
            ended, status = os.waitpid(process.pid, os.WNOHANG)
            if ended:
                process.returncode = os.waitstatus_to_exitcode(status)
                break
            try:
                crawler = psutil.Process(process.pid)
                times = crawler.cpu_times()
                crawler_cpu = times.user + times.system
                below = crawler.children(recursive=True)
                crawler_rss = crawler.memory_info().rss
            except psutil.NoSuchProcess:
                continue
            rss = browser_rss = 0
            for child in below:
                try:
                    if not BROWSER.search(child.name()):
                        continue  # the embedded Redis
                    times = child.cpu_times()
                    browser_cpu[child.pid] = times.user + times.system
                    memory = child.memory_full_info()
                    rss += memory.pss
                    browser_rss += memory.rss
                except psutil.NoSuchProcess:
                    continue
            peak_rss = max(peak_rss, rss)
            total = crawler_rss + browser_rss
            peak_total = max(peak_total, total)
            time.sleep(SAMPLE_S)
        seconds = time.monotonic() - start
    if process.returncode != 0:
        raise SystemExit(f"the crawl failed (exit {process.returncode}): see {log}")
    rows = [json.loads(line) for line in feed.read_text().splitlines()]
    text = log.read_text()
    rendered = sum(
        int(line.split(":")[1].strip(" ,"))
        for line in text.splitlines()
        if line.startswith(" 'focused/render/pages'")
    )
    cpu = crawler_cpu + sum(browser_cpu.values())
    return {
        "pages": len(rows),
        "relevant": sum(bool(row["relevant"]) for row in rows),
        "rendered": rendered,
        "seconds": round(seconds, 1),
        "pages_per_s": round(len(rows) / seconds, 2),
        "cpu_s": round(cpu, 2),
        "browser_cpu_s": round(sum(browser_cpu.values()), 2),
        "cpu_ms_per_page": round(1000 * cpu / max(len(rows), 1), 1),
        "browser_cpu_ms_per_rendered_page": round(1000 * sum(browser_cpu.values()) / rendered, 1)
        if rendered
        else 0.0,
        "browser_peak_mb": round(peak_rss / 2**20),
        "crawl_and_browser_rss_peak_mb": round(peak_total / 2**20),
        "crawl_and_browser_rss_last_mb": round(total / 2**20),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--modes", nargs="+", choices=("never", "auto", "always"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="render-bench-"))
    shape = {"n_pages": args.pages, "n_hosts": args.hosts}
    plain = generate_web(work / "plain", **shape)
    scripted = generate_scripted_web(work / "js", **shape)
    modes = args.modes or ("never", "auto", "always")
    runs = [(plain, "never"), *((scripted, mode) for mode in modes)]
    baseline: dict[str, float] = {}
    for web, mode in runs:
        figures = crawl(web, mode, args.items, work)
        baseline = baseline or figures
        figures["pages_per_s_ratio"] = round(figures["pages_per_s"] / baseline["pages_per_s"], 3)
        figures["cpu_ms_per_page_ratio"] = round(
            figures["cpu_ms_per_page"] / baseline["cpu_ms_per_page"], 2
        )
        label = "plain web" if web == plain else "js web"
        print(json.dumps({"run": f"{label}, {mode}", **figures}), flush=True)


if __name__ == "__main__":
    main()
