"""A link farm and the traps of one relevant host (``focused web generate --traps``) must not
take a crawl over: 1,000-page crawls of the same web with and without them, counted from the
server's access log and scored against the web's labels."""

from __future__ import annotations

import json
import re
import time
import tomllib
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis
import requests

from focused.lab.webs.bundle import Bundle, url_key
from focused.lab.webs.generate import DEMO_CATEGORY, HOSTILE_FILE, generate_web
from focused.lab.webs.hostile import generate_hostile_web
from focused.lab.webs.server import ServedWeb, read_log
from tests.conftest import Crawl, focused

pytestmark = pytest.mark.crawl

# The demo's web: about 270 relevant pages among 3,000 on 150 hosts.
WEB = {"n_pages": 3000, "n_hosts": 150, "seed": 0}
PAGES = 1000
HOST_DELAY = 0.25
MAX_SHARE = 0.05  # of all fetches, robots.txt included, on the farm and the traps together
MIN_FOUND = 0.95  # of the relevant pages the crawl finds without them


@dataclass
class Crawled:
    served: list[dict]  # the server's access log
    feed: list[dict]
    stats: dict[str, float]

    def relevant(self, bundle: Bundle) -> set[str]:
        """The relevant pages (by the web's labels) fetched, each once."""
        return {
            url_key(item["url"])
            for item in self.feed
            if item["bad"] is None
            and any(
                c == DEMO_CATEGORY or c.startswith(f"{DEMO_CATEGORY}/")
                for c in bundle.categories(item["url"])
            )
        }


@pytest.fixture(scope="module")
def webs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("traps")
    return {
        "traps": generate_hostile_web(root / "traps", hostile=False, traps=True, **WEB),
        "plain": generate_web(root / "plain", **WEB),
    }


@pytest.fixture(scope="module")
def cases(webs: dict[str, Path]) -> dict[str, dict]:
    manifest = json.loads((webs["traps"] / HOSTILE_FILE).read_text())
    return {case["name"]: case for case in manifest["cases"]}


def crawl(web: Path, redis_home: Path, workdir: Path, **settings: object) -> Crawled:
    log = workdir / "served.jsonl"
    with ServedWeb(web, log_path=log) as served:
        run = Crawl(
            web / "topic.toml", served.proxy, redis_home, f"traps-{uuid.uuid4().hex[:8]}", workdir
        )
        stats = run.run(
            timeout=600,
            FOCUSED_HOST_DELAY=HOST_DELAY,
            CLOSESPIDER_PAGECOUNT=PAGES,
            CLOSESPIDER_TIMEOUT=480,
            **settings,
        )
    return Crawled(read_log(log), run.feed(), stats)


@pytest.fixture(scope="module")
def with_traps(
    webs: dict[str, Path],
    redis_home: Path,
    redis_client: redis.Redis,
    tmp_path_factory: pytest.TempPathFactory,
) -> Crawled:
    return crawl(webs["traps"], redis_home, tmp_path_factory.mktemp("with"))


@pytest.fixture(scope="module")
def without_traps(
    webs: dict[str, Path],
    redis_home: Path,
    redis_client: redis.Redis,
    tmp_path_factory: pytest.TempPathFactory,
) -> Crawled:
    return crawl(webs["plain"], redis_home, tmp_path_factory.mktemp("without"))


def case_of(url: str, cases: dict[str, dict]) -> str | None:
    """The case whose URLs ``url`` is one of (the farm: any URL on its hosts), or None."""
    try:
        key = url_key(url)
    except ValueError:
        return None
    host = urlsplit(key).hostname or ""
    for name, case in cases.items():
        if case["prefix"] and key.startswith(url_key(case["prefix"])):
            return name
        if case["domain"] and host.endswith(f".{case['domain']}"):
            return name
    return None


def test_the_same_web_with_a_farm_and_traps_on_a_relevant_host(
    webs: dict[str, Path], cases: dict[str, dict]
) -> None:
    traps, plain = Bundle.load(webs["traps"]), Bundle.load(webs["plain"])
    seeds = tomllib.loads((webs["plain"] / "topic.toml").read_text())["seeds"]
    assert len(seeds) == 8
    assert traps.labels == {
        **plain.labels,
        **{url_key(u): [] for u in traps.labels.keys() - plain.labels.keys()},
    }
    changed = [key for key, page in plain.pages.items() if traps.pages[key].body != page.body]
    assert changed and set(changed) <= {url_key(seed) for seed in seeds}  # linking the cases
    assert Counter(case["kind"] for case in cases.values()) == {"farm": 1, "host-trap": 6}
    host = urlsplit(seeds[0]).hostname
    assert {urlsplit(c["url"]).hostname for c in cases.values() if c["kind"] == "host-trap"} == {
        host
    }


def test_generate_traps_from_the_command_line(tmp_path: Path) -> None:
    done = focused("web", "generate", "--traps", str(tmp_path / "web"), "--pages", "100")
    assert done.returncode == 0, done.stderr
    assert "7 hostile cases" in done.stdout
    both = focused("web", "generate", "--traps", "--hostile", str(tmp_path / "both"))
    assert both.returncode == 0 and "47 hostile cases" in both.stdout, both.stderr


def test_generate_a_farm_on_a_platform_and_slow_hosts_from_the_command_line(
    tmp_path: Path, http: requests.Session
) -> None:
    web = tmp_path / "web"
    done = focused(
        "web", "generate", "--traps", "--farm-domain", "netlify.app", "--slow-hosts", "2",
        str(web), "--pages", "100",
    )  # fmt: skip
    assert done.returncode == 0 and "9 hostile cases" in done.stdout, done.stderr
    cases = json.loads((web / HOSTILE_FILE).read_text())["cases"]
    farm = next(case for case in cases if case["kind"] == "farm")
    assert farm["domain"] == "netlify.app" and farm["url"] == "http://s0.netlify.app/"
    slow = [case["url"] for case in cases if case["kind"] == "slow-host"]
    assert slow == ["http://www.slow0.web.test/", "http://www.slow1.web.test/"]
    with ServedWeb(web) as served:
        page = http.get("http://s7.netlify.app/", proxies={"http": served.proxy})
        assert re.findall(r'href="([^"]+)"', page.text) == [
            f"http://s{n}.netlify.app/" for n in range(36, 41)
        ]
        start = time.monotonic()
        with http.get(slow[0], proxies={"http": served.proxy}, stream=True) as answer:
            assert answer.headers["Content-Length"] == "100000"
            assert answer.raw.read(2) == b"<!" and time.monotonic() - start >= 0.9


def test_the_farm_and_the_traps_never_end(
    webs: dict[str, Path], cases: dict[str, dict], http: requests.Session
) -> None:
    with ServedWeb(webs["traps"]) as served:

        def links(url: str) -> list[str]:
            answer = http.get(url, proxies={"http": served.proxy}, allow_redirects=False)
            assert answer.status_code == 200, url
            return re.findall(r'href="([^"]+)"', answer.text)

        farm = [f"http://s{n}.farm.test/" for n in range(36, 41)]
        assert links("http://s7.farm.test/some/page") == farm
        robots = http.get("http://s7.farm.test/robots.txt", proxies={"http": served.proxy})
        assert robots.status_code == 404
        origin = cases["trap-repeat"]["prefix"].removesuffix("/bikes/")
        assert links(f"{origin}/bikes/bikes/bikes/bikes/") == ["bikes/"]
        deep = f"{origin}/deep/level-1/level-2/"
        assert links(deep) == ["/deep/level-1/level-2/level-3/"]
        facets = links(f"{origin}/catalogue?color=red&size=s")
        assert len(facets) == 4 and all(
            link.startswith(f"{origin}/catalogue?color=red&amp;size=s&amp;") for link in facets
        )
        lost = links(f"{origin}/lost/nowhere")
        assert len(set(lost)) == 2 and all(link.startswith(f"{origin}/lost/") for link in lost)
        assert links(lost[0]) != lost


def test_scope_rules_end_the_traps_that_grow_a_url(
    webs: dict[str, Path],
    cases: dict[str, dict],
    redis_home: Path,
    redis_client: redis.Redis,
    tmp_path: Path,
) -> None:
    """A crawl seeded in the traps that grow a URL ends by itself: the calendar at the hop
    limit, the deep paths at the path depth limit, /bikes/bikes/ at the path repetition limit,
    the session ids as duplicates."""
    traps = ("trap-calendar", "trap-deep", "trap-repeat", "trap-session-ids")
    topic = tomllib.loads((webs["traps"] / "topic.toml").read_text())
    seeds = ", ".join(json.dumps(cases[name]["url"]) for name in traps)
    (tmp_path / "topic.toml").write_text(
        f'name = "traps"\nseeds = [{seeds}]\n[relevance]\nmethod = "taxonomy"\n'
        f"taxonomy = {json.dumps(str(webs['traps'] / 'taxonomy'))}\n"
        f"good = {json.dumps(topic['relevance']['good'])}\n"
    )
    log = tmp_path / "served.jsonl"
    with ServedWeb(webs["traps"], log_path=log) as served:
        run = Crawl(
            tmp_path / "topic.toml", served.proxy, redis_home, f"t-{uuid.uuid4().hex}", tmp_path
        )
        stats = run.run(FOCUSED_HOST_DELAY=0.05, CLOSESPIDER_PAGECOUNT=500)
    fetched = Counter(case_of(entry["url"], cases) for entry in read_log(log))
    assert "Spider closed (finished)" in run.log(), dict(fetched)
    assert fetched["trap-calendar"] == 21, dict(fetched)  # months 0 to 20, at hops 0 to 20
    assert fetched["trap-deep"] == 19, dict(fetched)  # /deep/ to 18 levels below (20 slashes)
    assert fetched["trap-repeat"] == 2, dict(fetched)  # /bikes/ and /bikes/bikes/
    assert fetched["trap-session-ids"] <= 3, dict(fetched)
    assert stats["focused/links/out_of_scope/hops"] == 1
    assert stats["focused/links/out_of_scope/path_depth"] == 1
    assert stats["focused/links/out_of_scope/path_repetition"] == 1


def test_farm_and_traps_take_at_most_five_percent_and_cost_no_relevant_page(
    with_traps: Crawled,
    without_traps: Crawled,
    webs: dict[str, Path],
    cases: dict[str, dict],
) -> None:
    fetched = Counter(case_of(entry["url"], cases) for entry in with_traps.served)
    total = sum(fetched.values())
    taken = total - fetched[None]
    labels = Bundle.load(webs["plain"])
    found, found_before = (c.relevant(labels) for c in (with_traps, without_traps))
    figures = (
        f"{taken} of {total} fetches on the farm and traps ({dict(fetched)});"
        f" relevant found {len(found)} with them, {len(found_before)} without"
    )
    print(figures)
    assert taken <= MAX_SHARE * total, figures
    assert len(found) >= MIN_FOUND * len(found_before), figures


# Platforms of the Public Suffix List's private section: a farm spread over them stays under
# each one's FOCUSED_SUFFIX_MAX_HOSTS.
PLATFORMS = [
    "netlify.app", "github.io", "pages.dev", "vercel.app", "herokuapp.com", "blogspot.com",
    "web.app", "firebaseapp.com", "glitch.me", "onrender.com", "fly.dev", "azurewebsites.net",
    "appspot.com", "gitlab.io", "workers.dev", "repl.co", "readthedocs.io", "wixsite.com",
    "myshopify.com", "ngrok.io",
]  # fmt: skip
FARMS = {"ipv6": "2a05:d018::/64", "platforms": PLATFORMS}


@pytest.mark.parametrize("farm", FARMS)
def test_a_farm_on_ip_literals_or_many_platforms_takes_at_most_five_percent(
    farm: str,
    without_traps: Crawled,
    webs: dict[str, Path],
    redis_home: Path,
    redis_client: redis.Redis,
    tmp_path: Path,
) -> None:
    """A farm whose hosts are IPv6 literals of one /64 (no name, so no registered domain), or
    are spread over 20 platforms (each under its own 30-host budget), is bounded by the budget
    of its /64 or by its shape: pages linking to no page of their own host, only to new hosts."""
    web = generate_hostile_web(
        tmp_path / "web", hostile=False, traps=True, farm_domain=FARMS[farm], **WEB
    )
    crawled = crawl(web, redis_home, tmp_path)
    plain = Bundle.load(webs["plain"])
    plain_hosts = {urlsplit(key).hostname for key in plain.pages}
    on_farm = Counter(urlsplit(e["url"]).hostname not in plain_hosts for e in crawled.served)
    total = on_farm[True] + on_farm[False]
    found, found_before = (c.relevant(plain) for c in (crawled, without_traps))
    figures = (
        f"{on_farm[True]} of {total} fetches on the farm;"
        f" relevant found {len(found)} with it, {len(found_before)} without"
    )
    print(figures)
    assert on_farm[True] <= MAX_SHARE * total, figures
    assert len(found) >= MIN_FOUND * len(found_before), figures
