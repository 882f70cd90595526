"""Generate a hostile web: the synthetic topical web plus every page the open web throws at a
crawler, for tests that a crawl survives them.

``focused web generate --hostile FOLDER`` writes the synthetic web of
:mod:`focused.lab.webs.generate` (its taxonomy and ``topic.toml`` included) and adds, linked from
the demo topic's seed pages, one case of each kind:

- **bad links**: pages whose hrefs cannot be fetched (``http://[::1``, port 99999, a space in
  the host, no host, 10,000- and 100,000-character URLs, ``ftp:``, ``data:``, ``file:`` and
  ``javascript:``) and pages with odd or broken ``<base href>``; each also links to a good page
  found nowhere else, which a crawler that goes on past the bad link finds;
- **one host spelled eight ways** (upper case, ``:80``, ``user@``, ``user:secret@``, a trailing
  dot, Unicode and IDNA forms), one page per spelling, all one host to politeness;
- **redirects**: a chain ``/chain/N -> /chain/N+1`` without end, a loop onto itself and one of
  three, and redirects to private addresses;
- **traps**: a calendar whose months link to the next for ever, and a shop whose every link
  carries a new session id (``;jsessionid=`` or ``?sid=``);
- **bad pages**: binary bodies served as HTML, a gzip bomb (1 GiB of zeros in about 1 MB), a
  64 MiB page, an endless page, a slow-loris page (a byte every 2 s), a truncated page
  (Content-Length beyond the body), 429 and 503 answers with ``Retry-After: 60``; and a good
  page declared UTF-16 that is ASCII, and one whose megabyte of title starts with control
  characters;
- **robots.txt files** that are binary, huge (64 MiB) or full of garbage lines;
- **private addresses**: links to loopback, private and link-local hosts in many spellings
  (``127.1``, ``0x7f.0.0.1``, ``2130706433``, ``localhost``, ``169.254.169.254``...).

``--traps`` (``traps=True``) adds, with or without those, what takes a crawl over rather than
breaking it, every page of it on the demo topic:

- **a link farm** on wildcard subdomains (``sN.farm.test``), each page linking to five new
  hosts;
- **traps on one relevant host**, the demo topic's first seed's: an endless calendar, a new
  session id in every link, ``/bikes/bikes/bikes/...`` (a relative link resolving under
  itself), ever deeper paths, faceted queries that add a filter a link, and soft 404s (any path
  a page linking to more).

``farm_domain`` puts the farm under another name than ``farm.test``: under a suffix of the
Public Suffix List's private section (``netlify.app``, ``github.io``) each of its hosts is a
registered domain of its own, as on those platforms. An IP network (``2a05:d018::/64``) puts
it on IP-literal hosts, the network's addresses (``http://[2a05:d018::7]/``); several names
spread it over them, host N under the (N mod their number)th, so that each name has a share of
its hosts (``sN.netlify.app``, ``sN+1.github.io``, ...).

``slow_hosts`` (``--slow-hosts N``) adds, with or without those, N hosts
(``www.slowK.web.test``, each a registered domain of its own) whose one page, linked from the
seeds, declares a 100,000-byte body and sends it a byte a second, or ``slow_rate`` bytes a
second (``--slow-rate``: 1,100 trickles just above the default minimum rate of 1,000, and would
finish in 91 s). Past 10 bytes a second every other one sends its 100,000 bytes chunked, with no
Content-Length to tell how long it will take.

The same ``seed`` with and without them gives the same web otherwise, for comparing crawls.

Static cases are bundle records; the dynamic ones are records with a ``behaviour`` that the
project's server (:mod:`focused.lab.webs.server`) carries out. ``hostile.json`` lists the cases:
for each its entry URL, what a crawler should do (``expect``), the bad-page reason its entry
should get (``reason``), the bad-link reasons its hrefs should be counted under
(``link_reasons``), the pages that must still be found (``good``), URLs that must never be
fetched (``never``) and, for chains and traps, the ``prefix`` of all their URLs (the farm: the
``domain`` of all its hosts). Every host is made up (``*.web.test``, ``*.farm.test``); the web is
served on 127.0.0.1 like any other.
"""

from __future__ import annotations

import functools
import html
import itertools
import json
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from focused.lab.webs.generate import (
    BACKGROUND,
    ENGLISH,
    HOSTILE_FILE,
    HTML_TYPE,
    TAXONOMY,
    generate_web,
    word_lists,
)
from focused.lab.webs.server import farm_host, farm_network, farm_record_url

LINKS = "http://links.hostile.web.test"  # pages with bad hrefs and odd bases
FOUND = "http://found.hostile.web.test"  # good pages linked only from hostile ones
BODY = "http://body.hostile.web.test"  # bad bodies
REDIRECT = "http://redirect.hostile.web.test"
# One host, spelled many ways: www.bücher.web.test.
SPELLED_HOST = "www.xn--bcher-kva.web.test"
SPELLINGS = {
    "unicode": "http://www.bücher.web.test",
    "punycode": f"http://{SPELLED_HOST}",
    "upper": "http://WWW.XN--BCHER-KVA.WEB.TEST",
    "port": f"http://{SPELLED_HOST}:80",
    "userinfo": f"http://user@{SPELLED_HOST}",
    "password": f"http://user:secret@{SPELLED_HOST}",
    "dot": f"http://{SPELLED_HOST}.",
    "all": "http://Anna@WWW.Bücher.Web.Test.:80",
}
FARM = "farm.test"  # the link farm's hosts are sN.farm.test
SLOW_SIZE = 100_000  # bytes a slow host's page declares, sent a byte a second
FARM_LINKS = 5  # new hosts each farm page links to
TEXT_TYPE = {"Content-Type": "text/plain"}
RETRY_AFTER_S = 60
# Hrefs that cannot be fetched, with the reason a crawler counts each under
# (focused/links/bad/<reason>); None: another scheme, skipped without counting as mailto: is.
BAD_HREFS: dict[str, tuple[str, str | None]] = {
    "ipv6-unclosed": ("http://[::1", "syntax"),
    "port-out-of-range": ("http://x:99999/", "port"),
    "space-in-host": ("http://a b.example/x", "host"),
    "no-host": ("http://:80/", "host"),
    "url-10k": (f"{LINKS}/long/{'a' * 10_000}", "too_long"),
    "url-100k": (f"{LINKS}/long/{'b' * 100_000}", "too_long"),
    "scheme-ftp": ("ftp://files.hostile.web.test/pub/", None),
    "scheme-data": ('data:text/html,<a href="http://found.hostile.web.test/">x</a>', None),
    "scheme-file": ("file:///etc/passwd", None),
    "scheme-javascript": ("javascript:alert(document.cookie)", None),
}
# <base href> values, and whether a relative link under each is a page to find.
BASES: dict[str, tuple[str, bool]] = {
    "broken": ("http://[::1/", False),
    "bad-port": ("//found.hostile.web.test:99999/", False),
    "javascript": ("javascript:void(0)//", False),
    "ftp": ("ftp://files.hostile.web.test/", False),
    "other-host": (f"{FOUND}/based/", True),
}
PRIVATE_URLS = (
    "http://127.0.0.1/",
    "http://127.1/",
    "http://0x7f.0.0.1/",
    "http://0177.0.0.1/",
    "http://2130706433/",
    "http://017700000001/",
    "http://localhost/admin",
    "http://LOCALHOST./admin",
    "http://169.254.169.254/latest/meta-data/",
    "http://10.255.255.1/",
    "http://192.168.1.1/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://0.0.0.0/",
    "http://127.0.0.1:6379/",  # a Redis port: a cross-protocol attack
)
REDIRECTS_TO_PRIVATE = {
    "loopback": "http://127.0.0.1/admin",
    "metadata": "http://169.254.169.254/latest/meta-data/",
    "decimal": "http://2130706433/",
}
GARBAGE_ROBOTS = (
    "\ufeffUser-agent *\n"
    "Disallow /no-colon\n"
    "<html><body>Not a robots file</body></html>\n"
    ":::::\n"
    "User-agent: *\n"
    "Crawl-delay: 1e999\n"
    "Request-rate: 0/0\n"
    "Disallow: /forbidden/\n"
    "Allow: \x00\x01\x02\n"
    f"Sitemap: javascript:{'x' * 5000}\n"
    "Noindex: /\n"
)


@dataclass
class Case:
    """One hostile case: what the web serves and what a crawler should make of it."""

    name: str
    kind: str
    url: str  # the entry page, linked from the seeds
    expect: str
    reason: str | None = None
    link_reasons: list[str] = field(default_factory=list)
    good: list[str] = field(default_factory=list)
    never: list[str] = field(default_factory=list)
    prefix: str | None = None
    domain: str | None = None  # a farm: every host under it is the case's
    domains: list[str] = field(default_factory=list)  # a farm: its names or IP network, in turn
    anchor: str = ""  # of the links from the seeds (default: the name)
    links: list[str] = field(default_factory=list)  # linked from the seeds (default: url)
    records: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.links = self.links or [self.url]

    def manifest(self) -> dict[str, Any]:
        entry = asdict(self)
        del entry["records"]
        return entry


def generate_hostile_web(
    folder: str | Path,
    *,
    n_pages: int = 200,
    n_hosts: int = 20,
    seed: int = 0,
    n_examples: int = 20,
    overwrite: bool = False,
    hostile: bool = True,
    traps: bool = False,
    farm_domain: str | Sequence[str] = FARM,
    slow_hosts: int = 0,
    slow_rate: int = 1,
) -> Path:
    """Write the synthetic web of ``n_pages`` plus every hostile case (``hostile``), the
    link farm under ``farm_domain`` and the host traps (``traps``) and ``slow_hosts`` slow hosts
    (sending ``slow_rate`` bytes a second) into ``folder``, and ``hostile.json``, the list of
    cases; return the folder. Deterministic for a ``seed``."""
    rng = np.random.default_rng(seed)
    cases = hostile_cases(rng) if hostile else []
    if traps:
        cases.append(_farm(rng, farm_domain))
    cases += [_slow_host(n, slow_rate) for n in range(slow_hosts)]

    def on_seed_host(origin: str) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
        host_traps = _host_traps(origin)
        cases.extend(host_traps)
        return _records(host_traps), _seed_links(host_traps)

    folder = generate_web(
        folder,
        n_pages=n_pages,
        n_hosts=n_hosts,
        seed=seed,
        n_examples=n_examples,
        overwrite=overwrite,
        extra_pages=_records(cases),
        seed_links=_seed_links(cases),
        on_seed_host=on_seed_host if traps else None,
    )
    manifest = {"cases": [case.manifest() for case in cases]}
    (folder / HOSTILE_FILE).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    return folder


def _records(cases: Sequence[Case]) -> list[dict[str, Any]]:
    """The bundle records of the cases."""
    return [record for case in cases for record in case.records]


def _seed_links(cases: Sequence[Case]) -> list[tuple[str, str]]:
    """The links to the cases from the seeds, anchored by the case's anchor or name."""
    return [
        (url, case.anchor or case.name.replace("-", " ").capitalize())
        for case in cases
        for url in case.links
    ]


def hostile_cases(rng: np.random.Generator) -> list[Case]:
    """Every hostile case, in the order of the module's list."""
    return [
        *_bad_links(),
        *_bases(),
        _spellings(),
        *_redirects(),
        *_traps(),
        *_bad_pages(rng),
        *_robots(rng),
        _private_links(),
    ]


def _page(title: str, text: str, links: Sequence[tuple[str, str]] = (), head: str = "") -> str:
    """A small HTML page: the title, a paragraph (on cycling, the demo topic) and its links."""
    items = "".join(f'<li><a href="{html.escape(u)}">{anchor}</a></li>\n' for u, anchor in links)
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n{head}'
        f"<title>{title}</title>\n</head>\n<body>\n<h1>{title}</h1>\n<p>{text}</p>\n"
        f"<ul>\n{items}</ul>\n</body>\n</html>\n"
    )


def _record(url: str, body: str | bytes, status: int = 200, **more: Any) -> dict[str, Any]:
    headers = more.pop("headers", HTML_TYPE)
    return {"url": url, "status": status, "headers": headers, "body": body, **more}


def _good(path: str) -> tuple[str, dict[str, Any]]:
    """A good page found only through a hostile one: its URL and record. Its text has words
    of its own, drawn by its path, so that no two are near-copies of each other."""
    url = f"{FOUND}/{path}"
    title = f"Found after {path.rpartition('/')[2].replace('-', ' ')}"
    own = np.random.default_rng(zlib.crc32(path.encode())).choice(_english_words(), 20)
    text = (
        f"The peloton rode on after {path}: a sprint, a climb and a descent to the finish. "
        f"{' '.join(own).capitalize()}."
    )
    return url, _record(url, _page(title, text))


@functools.cache
def _english_words() -> list[str]:
    """The generator's English words, most frequent first."""
    return word_lists()[ENGLISH]


def _bad_links() -> list[Case]:
    cases = []
    for name, (href, reason) in BAD_HREFS.items():
        url = f"{LINKS}/href/{name}"
        good, good_record = _good(f"after/{name}")
        text = f"This cycling page links to {name.replace('-', ' ')} and to a good page."
        body = _page(f"Bad link: {name}", text, [(href, "A link that cannot be"), (good, "Go on")])
        long_url = [href] if reason == "too_long" else []
        cases.append(
            Case(
                name=f"href-{name}",
                kind="bad-link",
                url=url,
                expect="the page is fetched once and in the feed; its bad link is skipped and"
                " counted; its good link is followed",
                link_reasons=[reason] if reason else [],
                good=[good],
                never=long_url,
                records=[_record(url, body), good_record],
            )
        )
    return cases


def _bases() -> list[Case]:
    cases = []
    for name, (base, relative_is_good) in BASES.items():
        url = f"{LINKS}/base/{name}"
        good, good_record = _good(f"after/base-{name}")
        records = [good_record]
        found = [good]
        if relative_is_good:
            relative, relative_record = _good(f"based/{name}")
            records.append(relative_record)
            found.append(relative)
        text = f"A cycling page under the base {name.replace('-', ' ')}, with a relative link."
        head = f'<base href="{html.escape(base)}">\n'
        links = [(name, "Relative to the base"), (good, "Go on")]
        records.insert(0, _record(url, _page(f"Base: {name}", text, links, head)))
        cases.append(
            Case(
                name=f"base-{name}",
                kind="base",
                url=url,
                expect="the page is fetched once and in the feed; its absolute link is followed;"
                " relative links resolve against a valid base",
                good=found,
                records=records,
            )
        )
    return cases


def _spellings() -> Case:
    robots = "User-agent: *\nAllow: /\n"
    records = [_record(f"http://{SPELLED_HOST}/robots.txt", robots, headers=TEXT_TYPE)]
    good, links = [], []
    for name, origin in SPELLINGS.items():
        url = f"http://{SPELLED_HOST}/spelling/{name}"
        text = f"A cycling page of the book shop, reached by its {name} spelling."
        records.append(_record(url, _page(f"Spelled {name}", text)))
        good.append(url)
        links.append(f"{origin}/spelling/{name}")
    return Case(
        name="host-spellings",
        kind="host-spelling",
        url=links[0],
        expect="one host to politeness however it is spelled: its fetches (robots.txt too) at"
        " least the host delay apart, robots.txt fetched once; every page found",
        good=good,
        links=links,
        records=records,
    )


def _redirect(url: str, location: str) -> dict[str, Any]:
    body = f'<html><body><a href="{html.escape(location)}">Moved</a></body></html>\n'
    return _record(url, body, status=302, headers={**HTML_TYPE, "Location": location})


def _redirects() -> list[Case]:
    chain = f"{REDIRECT}/chain/"
    chain_body = '<html><body>Chain link {{n}}: <a href="{{next}}">next</a></body></html>\n'
    loop = [f"{REDIRECT}/loop/{n}" for n in (1, 2, 3)]
    cases = [
        Case(
            name="redirect-chain",
            kind="redirect-chain",
            url=f"{chain}0",
            expect="followed for at most REDIRECT_MAX_TIMES redirects, then given up as a bad page",
            prefix=chain,
            records=[
                _record(chain, chain_body, status=302, behaviour={"name": "chain"}),
            ],
        ),
        Case(
            name="redirect-loop-self",
            kind="redirect-loop",
            url=f"{REDIRECT}/loop/self",
            expect="fetched once",
            records=[_redirect(f"{REDIRECT}/loop/self", f"{REDIRECT}/loop/self")],
        ),
        Case(
            name="redirect-loop-three",
            kind="redirect-loop",
            url=loop[0],
            expect="each of the three fetched once",
            records=[_redirect(a, b) for a, b in zip(loop, [*loop[1:], loop[0]], strict=True)],
        ),
    ]
    for name, target in REDIRECTS_TO_PRIVATE.items():
        url = f"{REDIRECT}/to/{name}"
        cases.append(
            Case(
                name=f"redirect-to-{name}",
                kind="private",
                url=url,
                expect="the redirect's target, a private address, is never fetched",
                never=[target],
                records=[_redirect(url, target)],
            )
        )
    return cases


def _traps() -> list[Case]:
    calendar, shop = (
        "http://calendar.hostile.web.test/calendar",
        "http://shop.hostile.web.test/shop",
    )
    month = _page(
        "Cycling race calendar: month {{n}}",
        "Races of month {{n}}: the criterium, the time trial and the mountain stage.",
        [("{{next}}", "Next month")],
    )
    page = _page(
        "Cycling shop",
        "Saddles, helmets, chains and wheels for every cyclist.",
        [("{{next}}", "Saddles"), ("{{next}}", "Helmets")],
    )
    return [
        Case(
            name="calendar",
            kind="trap",
            url=f"{calendar}?month=0",
            expect="each month links to the next for ever: stopped by the hop limit",
            prefix=calendar,
            records=[_record(calendar, month, behaviour={"name": "calendar"})],
        ),
        Case(
            name="session-ids",
            kind="trap",
            url=shop,
            expect="every link carries a new session id: stopped by the hop limit or as a"
            " duplicate page",
            prefix=shop,
            records=[_record(shop, page, behaviour={"name": "session-ids"})],
        ),
    ]


def _bad_pages(rng: np.random.Generator) -> list[Case]:
    noise, other_noise = (rng.integers(0, 256, 4096, dtype=np.uint8).tobytes() for _ in "ab")
    ascii_page = _page("Declared UTF-16", "A cycling page in plain ASCII, declared UTF-16.")
    filler = "<p>The peloton rides on and on through the long stage.</p>\n"
    slow_body = _page("Slow loris", "A cycling page sent one byte every two seconds.")
    truncated = _page("Truncated", "A cycling page whose Content-Length promises more.")
    # One tag of 100,000 attributes (1.1 MB): lxml took about 17 s to parse it, on the reactor.
    attributes = " ".join(f'a{i}="1"' for i in range(100_000))
    flooded = _page("Attributes", "A cycling page with one tag of too many attributes.")
    flooded = flooded.replace("<p>", f"<p {attributes}>", 1)
    pages = [
        ("binary", _record(f"{BODY}/binary", noise), "encoding"),
        ("attribute-flood", _record(f"{BODY}/attributes", flooded), "attributes"),
        (
            "binary-no-charset",
            _record(
                f"{BODY}/binary-no-charset", other_noise, headers={"Content-Type": "text/html"}
            ),
            "encoding",
        ),
        (
            "gzip-bomb",
            _record(f"{BODY}/bomb", "", behaviour={"name": "gzip-bomb", "size": 1 << 30}),
            "too_big",
        ),
        (
            "huge",
            _record(f"{BODY}/huge", filler, behaviour={"name": "huge", "size": 64 << 20}),
            "too_big",
        ),
        ("endless", _record(f"{BODY}/endless", filler, behaviour={"name": "endless"}), "too_big"),
        (
            "slow-loris",
            _record(
                "http://slow.hostile.web.test/loris",
                slow_body,
                behaviour={"name": "slow", "interval": 2.0},
            ),
            "timeout",
        ),
        (
            "truncated",
            _record(
                f"{BODY}/truncated", truncated, behaviour={"name": "truncated", "missing": 5000}
            ),
            "truncated",
        ),
    ]
    cases = [
        Case(
            name=name,
            kind="bad-page",
            url=record["url"],
            expect=f"counted as a bad page ({reason}); memory stays bounded",
            reason=reason,
            records=[record],
        )
        for name, record, reason in pages
    ]
    url = f"{BODY}/utf-16"
    utf16 = {"Content-Type": "text/html; charset=utf-16"}
    cases.append(
        Case(
            name="wrong-charset",
            kind="charset",
            url=url,
            expect="read as what its bytes are (ASCII), not as the UTF-16 it declares: its text"
            " and title are the page's, and it is classified like any page",
            good=[url],
            records=[_record(url, ascii_page, headers=utf16)],
        )
    )
    # A title of control characters (a terminal obeys \x1b[31m) and of a megabyte.
    url = f"{BODY}/control-title"
    title = "\x01\x1b[31mRed\x9b title\x00\x1b[0m" + " on cycling" * 100_000
    controls = _page("Control characters", "A cycling page whose title a terminal obeys.")
    controls = controls.replace("<title>Control characters</title>", f"<title>{title}</title>")
    cases.append(
        Case(
            name="control-title",
            kind="title",
            url=url,
            expect="its title in the feed and the data set has no control character and is"
            " cut to a thousand characters; it is classified like any page",
            good=[url],
            records=[_record(url, controls)],
        )
    )
    for status, host in ((429, "busy"), (503, "down")):
        url = f"http://{host}.hostile.web.test/{host}"
        body = _page(f"{status}", f"Come back in {RETRY_AFTER_S} seconds.")
        headers = {**HTML_TYPE, "Retry-After": str(RETRY_AFTER_S)}
        cases.append(
            Case(
                name=f"retry-after-{status}",
                kind="retry-after",
                url=url,
                expect=f"the host is not asked again for {RETRY_AFTER_S} s (or the cap on"
                f" Retry-After); finally a bad page (http_{status})",
                reason=f"http_{status}",
                records=[_record(url, body, status=status, headers=headers)],
            )
        )
    return cases


def _robots(rng: np.random.Generator) -> list[Case]:
    robots: dict[str, dict[str, Any]] = {
        "binary": {"body": rng.integers(0, 256, 2048, dtype=np.uint8).tobytes()},
        "huge": {
            "body": "User-agent: *\nDisallow: /nothing-here/\n",
            "behaviour": {"name": "huge", "size": 64 << 20},
        },
        "garbage": {"body": GARBAGE_ROBOTS},
    }
    cases = []
    for name, record in robots.items():
        origin = f"http://robots-{name}.hostile.web.test"
        page = f"{origin}/page"
        text = f"A cycling page on a host whose robots.txt is {name}."
        records = [
            {"url": f"{origin}/robots.txt", "status": 200, "headers": TEXT_TYPE, **record},
            _record(page, _page(f"Robots {name}", text)),
        ]
        never = []
        if name == "garbage":  # its one good rule holds
            forbidden = f"{origin}/forbidden/page"
            records.append(_record(forbidden, _page("Forbidden", "Disallowed for all.")))
            never.append(forbidden)
        cases.append(
            Case(
                name=f"robots-{name}",
                kind="robots",
                url=page,
                expect="the crawl goes on (a robots.txt that cannot be read allows all); the"
                " host's page is found; rules that can be read hold",
                good=[page],
                never=never,
                links=[page, *never],
                records=records,
            )
        )
    return cases


def _private_links() -> Case:
    url = f"{LINKS}/private-links"
    good, good_record = _good("after/private-links")
    links = [(target, "Internal") for target in PRIVATE_URLS] + [(good, "Go on")]
    text = "A cycling page that links to the crawler's own machine and network."
    return Case(
        name="private-links",
        kind="private",
        url=url,
        expect="no private, loopback or link-local address is fetched, in any spelling; the"
        " page's good link is followed",
        good=[good],
        never=list(PRIVATE_URLS),
        records=[_record(url, _page("Private links", text, links)), good_record],
    )


FLOOD = "http://flood.hostile.web.test"  # the page of a hundred thousand links
# Words of the flood page's anchors: every anchor is one of each list, so each is distinct and
# WordNet knows its words (a page of real links, not of noise).
_FLOOD_WORDS = (
    "red blue green old new small large quiet dark bright cold warm wooden stone iron golden"
    " silver ancient modern rural urban northern southern eastern western royal public private"
    " famous hidden broken frozen painted distant sacred wild narrow broad lost free early late"
    " deep high low empty grand",
    "castle river garden bridge harbour market temple village forest mountain island valley"
    " church tower palace library museum station theatre school factory prison hospital farm"
    " mill lighthouse cathedral canal railway airport road tunnel park square street lake"
    " desert volcano glacier meadow orchard vineyard quarry mine fortress abbey dam",
    "history map guide tour photograph painting poem song story legend festival census report"
    " survey diary letter chronicle atlas record archive catalogue drawing sketch model design"
    " plan portrait view panorama album film recipe calendar index review memoir ballad carving"
    " mosaic fresco tapestry sculpture statue coin stamp lecture",
)


def link_flood(n_links: int = 100_000) -> Case:
    """A page of ``n_links`` distinct links to its own host (4.6 MB for 100,000, under
    DOWNLOAD_MAXSIZE), each anchor three real words. Its targets are dated paths, which the
    default FOCUSED_DROP_URL_PATTERNS drops once the page is classified, so a crawl spends its
    time on the page and not on fetching 404s. Not in :func:`hostile_cases`, as it takes
    seconds to classify: a test adds it with ``extra_pages`` and ``seed_links`` of
    :func:`focused.lab.webs.generate.generate_web`."""
    first, second, third = (words.split() for words in _FLOOD_WORDS)
    if n_links > len(first) * len(second) * len(third):
        raise ValueError(f"n_links: at most {len(first) * len(second) * len(third)}")
    anchors = itertools.islice(
        (f"{a} {b} {c}" for a in first for b in second for c in third), n_links
    )
    items = "".join(f'<a href="/2006/05/{i}">{anchor}</a>\n' for i, anchor in enumerate(anchors))
    url = f"{FLOOD}/links"
    body = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        "<title>Every cycling link</title>\n</head>\n<body>\n<h1>Every cycling link</h1>\n"
        "<p>A cycling page whose index links to everything the site ever had.</p>\n"
        f"{items}</body>\n</html>\n"
    )
    return Case(
        name="link-flood",
        kind="link-flood",
        url=url,
        expect="fetched once, with several processes too; at most FOCUSED_MAX_LINKS_PER_PAGE"
        " of its links are taken (the rest counted in focused/links/capped); the process goes"
        " on fetching and beating while it is scored; memory stays bounded",
        prefix=f"{FLOOD}/2006/05/",
        records=[_record(url, body)],
    )


def _on_topic_text(rng: np.random.Generator, n_words: int) -> str:
    """Words that read as the demo topic: half its category's, some of sport's, the rest the
    synthetic web's background words."""
    sports, leaves = TAXONOMY["Sports"]
    pools = [leaves["Cycling"].split(), sports.split(), BACKGROUND.split()]
    chosen = rng.choice(len(pools), n_words, p=[0.5, 0.15, 0.35])
    words = [pools[pool][rng.integers(len(pools[pool]))] for pool in chosen.tolist()]
    return " ".join(words).capitalize() + "."


def _slow_host(n: int, rate: int = 1) -> Case:
    """A host whose page sends ``rate`` bytes a second; past 10, in ten pieces a second, and
    chunked for odd ``n``."""
    url = f"http://www.slow{n}.web.test/"
    body = _page(f"Slow host {n}", f"A cycling page sent {rate} bytes a second.")
    pieces = 10 if rate >= 10 else 1
    behaviour = {"name": "slow", "interval": 1 / pieces, "chunk": rate // pieces, "size": SLOW_SIZE}
    if rate >= 10 and n % 2:
        behaviour["chunked"] = 1
    return Case(
        name=f"slow-host-{n}",
        kind="slow-host",
        url=url,
        expect=f"declares {SLOW_SIZE} bytes and sends {rate} a second: stopped as too slow, its"
        " host backed off; the other hosts are crawled meanwhile",
        reason="too_slow",
        anchor="Peloton Breakaway",
        records=[_record(url, body, behaviour=behaviour)],
    )


def _farm(rng: np.random.Generator, domain: str | Sequence[str] = FARM) -> Case:
    anchors = ("Peloton Sprint", "Bicycle Stage", "Cyclist Climb", "Velodrome Saddle", "Tour Gear")
    body = _page(
        "Cycling news {{n}}",
        f"Page {{{{n}}}}. {_on_topic_text(rng, 150)}",
        [("{{next}}", anchor) for anchor in anchors[:FARM_LINKS]],
    )
    domains = [domain] if isinstance(domain, str) else list(domain)
    behaviour: dict[str, Any] = {"name": "farm", "links": FARM_LINKS}
    if len(domains) > 1:
        behaviour["of"] = len(domains)
    spread = len(domains) > 1
    records = [
        _record(farm_record_url(name), body, behaviour=behaviour | ({"at": at} if spread else {}))
        for at, name in enumerate(domains)
    ]
    return Case(
        name="link-farm",
        kind="farm",
        url=f"http://{farm_host(domains[0], 0)}/",
        expect=f"every page links to {FARM_LINKS} new hosts under {', '.join(domains)}: bounded"
        " by the budget of hosts per registered domain (an IP network's /64 or /24), per"
        " private suffix, or per lineage of farm-like pages",
        domain=domains[0] if not spread and farm_network(domains[0]) is None else None,
        domains=domains,
        anchor="Peloton Breakaway",
        records=records,
    )


def _host_traps(origin: str) -> list[Case]:
    """The traps on one host, at ``origin``: every URL of each starts with its ``prefix``."""
    shop = "Bicycles, saddles, helmets, chains and wheels for every cyclist and every stage."
    traps = {
        "calendar": (
            "/calendar?month=0",
            "/calendar",
            "Tour Stage",
            _page(
                "Cycling race calendar: month {{n}}",
                "Races of month {{n}}: the criterium, the time trial and the mountain stage.",
                [("{{next}}", "Peloton Stage Tour")],
            ),
            "each month links to the next: stopped by the hop limit",
        ),
        "session-ids": (
            "/cart",
            "/cart",
            "Saddle Helmet Jersey",
            _page(
                "Cycling shop cart",
                shop,
                [("{{next}}", "Saddle Helmet"), ("{{next}}", "Wheel Chain Gear")],
            ),
            "every link carries a new session id: the pages are duplicates, whose links are not"
            " followed",
        ),
        "repeat": (
            "/bikes/",
            "/bikes/",
            "Bicycle Road",
            _page("Bikes: {{n}}", shop, [("bikes/", "Bicycle Saddle Road")]),
            "a relative link resolving under itself (/bikes/bikes/...): stopped by the path"
            " repetition rule",
        ),
        "deep": (
            "/deep/",
            "/deep/",
            "Mountain Climb",
            _page("Cycling routes, level {{n}}", shop, [("{{next}}", "Climb Descent Mountain")]),
            "each page links one level deeper: stopped by the path depth rule",
        ),
        "facets": (
            "/catalogue",
            "/catalogue",
            "Bicycle Gear Crank",
            _page(
                "Bicycles: {{n}}",
                shop,
                [
                    ("{{next}}", "Bicycle Wheel"),
                    ("{{next}}", "Saddle Gear"),
                    ("{{next}}", "Jersey Helmet"),
                    ("{{next}}", "Cyclist Pedal"),
                ],
            ),
            "every page links to four more with one filter more: bounded by the host's budget",
        ),
        "soft-404": (
            "/lost/start",
            "/lost/",
            "Cyclist Cadence",
            _page(
                "Cycling page not found: {{n}}",
                "This cycling page is not here; try these pages on bicycles instead.",
                [("{{next}}", "Bicycle Tour"), ("{{next}}", "Cyclist Stage Sprint")],
            ),
            "any path answers 200 with links to two more: bounded by the host's budget",
        ),
    }
    return [
        Case(
            name=f"trap-{name}",
            kind="host-trap",
            url=f"{origin}{entry}",
            expect=expect,
            prefix=f"{origin}{prefix}",
            anchor=anchor,
            records=[_record(f"{origin}{prefix}", body, behaviour={"name": name})],
        )
        for name, (entry, prefix, anchor, body, expect) in traps.items()
    ]
