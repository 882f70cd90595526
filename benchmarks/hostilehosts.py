"""Slow hosts and a link farm on a private suffix, beside a plain synthetic web, in a crawl.

    .venv/bin/python benchmarks/hostilehosts.py --slow-hosts 40 [--slow-rate 1100] [-s ...]
    .venv/bin/python benchmarks/hostilehosts.py --farm-domain netlify.app [-s KEY=VALUE ...]

Generates the web of ``focused web generate --pages 600 --hosts 20 --slow-hosts N`` (hosts that
declare 100,000 bytes and send a byte, or ``--slow-rate`` bytes, a second), or ``--pages 3000
--hosts 150 --traps --farm-domain NAME`` (a link farm under NAME: a name, an IP network, or
names separated by commas), crawls it with one process on an embedded Redis
(FOCUSED_HOST_DELAY=0.25, CLOSESPIDER_TIMEOUT=150, and for the farm CLOSESPIDER_PAGECOUNT=1000;
``-s`` adds or overrides settings), and prints one JSON line from the server's access log: the
crawl's seconds, the fetches of the web's own pages (``plain``, the pages it has, and when the
last of them was fetched) and those of the hostile hosts (``hostile``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from focused.lab.crawlproc import crawl_command, crawl_env
from focused.lab.webs.bundle import Bundle, url_key
from focused.lab.webs.hostile import generate_hostile_web
from focused.lab.webs.server import ServedWeb, read_log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow-hosts", type=int, default=0)
    parser.add_argument("--slow-rate", type=int, default=1)
    parser.add_argument("--farm-domain", default="")
    parser.add_argument("-s", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="hostilehosts-"))
    settings: dict[str, object] = {"FOCUSED_HOST_DELAY": 0.25, "CLOSESPIDER_TIMEOUT": 150}
    if args.farm_domain:
        web = generate_hostile_web(
            folder / "web",
            n_pages=3000,
            n_hosts=150,
            hostile=False,
            traps=True,
            farm_domain=args.farm_domain.split(","),
        )
        settings["CLOSESPIDER_PAGECOUNT"] = 1000
    else:
        web = generate_hostile_web(
            folder / "web",
            n_pages=600,
            n_hosts=20,
            hostile=False,
            slow_hosts=args.slow_hosts,
            slow_rate=args.slow_rate,
        )
    settings |= dict(setting.split("=", 1) for setting in args.settings)
    settings["FOCUSED_CRAWL"] = f"hostilehosts-{int(time.time())}"
    plain = {url for url, page in Bundle.load(web).pages.items() if page.behaviour is None}
    plain_hosts = {urlsplit(url).hostname for url in plain}
    log = folder / "served.jsonl"
    with ServedWeb(web, log_path=log) as served:
        start = time.time()
        subprocess.run(
            crawl_command(web / "topic.toml", settings, folder / "feed.jsonl"),
            env=crawl_env(served.proxy, folder / "home"),
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=(folder / "crawl.log").open("w"),
            check=True,
        )
        seconds = time.time() - start
    served_log = read_log(log)
    fetched = [e for e in served_log if urlsplit(e["url"]).hostname in plain_hosts]
    found = [e for e in fetched if e["status"] == 200 and url_key(e["url"]) in plain]
    print(
        json.dumps(
            {
                "seconds": round(seconds, 1),
                "plain_fetches": len(fetched),
                "plain_pages_fetched": len({url_key(e["url"]) for e in found}),
                "plain_pages": len(plain),
                "last_plain_page_s": round(max(e["time"] for e in found) - start, 1),
                "hostile_fetches": len(served_log) - len(fetched),
                "log": str(folder / "crawl.log"),
            }
        )
    )


if __name__ == "__main__":
    main()
