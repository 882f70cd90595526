"""A synthetic web whose pages build their text and links in JavaScript (``focused web generate
--js``), for crawls that render pages (``FOCUSED_RENDER``).

It is the synthetic web of :mod:`focused.lab.webs.generate` with half of its hosts, and those
of the demo topic's seeds, built by scripts: each HTML page of such a host becomes a near-empty
shell (its title, an empty ``<div id="app">`` and a script), its body moves to a JSON file on
the same host (``/_data/<path>.json``), and the host serves the script, ``/scripted.js`` (the
static file ``static/scripted.js``), which fetches that data and builds the page from it. The
other hosts stay plain, so a crawl in ``auto`` mode flags the scripted hosts and not the plain
ones. The demo topic's seeds are on scripted hosts, so that a crawl that does not render finds
little beyond them. ``scripted.json`` lists the scripted hosts.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import zlib
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from focused.lab.webs.bundle import LABELS_FILE, PAGES_FILE, TOPICS_FILE, write_bundle
from focused.lab.webs.generate import DEMO_CATEGORY, HTML_TYPE, generate_web

SCRIPT_PATH = "/scripted.js"
DATA_PREFIX = "/_data"
HOSTS_FILE = "scripted.json"
SCRIPTED_SHARE = 2  # of every 4 hosts (by a hash of the name) are built by scripts
JS_TYPE = {"Content-Type": "text/javascript; charset=utf-8"}
JSON_TYPE = {"Content-Type": "application/json"}
_PAGE = re.compile(r"<title>(?P<title>.*?)</title>.*?<body>\n(?P<body>.*)</body>", re.S)


def scripted_host(host: str, seed_hosts: set[str]) -> bool:
    """Whether ``host`` is built by scripts: the seeds' hosts and half of the others."""
    return host in seed_hosts or zlib.crc32(host.encode()) % 4 < SCRIPTED_SHARE


def shell(title: str, source: str) -> str:
    """A page as a JavaScript-built site serves it: a title, an empty root, a script."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<title>{title}</title>\n<script src="{SCRIPT_PATH}" defer></script>\n</head>\n'
        f'<body>\n<div id="app" data-source="{source}"></div>\n</body>\n</html>\n'
    )


def _script() -> str:
    return (resources.files("focused.lab.webs") / "static" / "scripted.js").read_text("utf-8")


def _records(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                record = json.loads(line)
                if "body_b64" in record:  # bytes that are not UTF-8, given back as bytes
                    record["body"] = base64.b64decode(record.pop("body_b64"))
                yield record


def _scripted(
    records: Iterator[dict[str, Any]], seed_hosts: set[str], beacon: str | None
) -> Iterator[dict[str, Any]]:
    """The web's records with the pages of scripted hosts as shells and data, and the script
    on each scripted host."""
    origins: set[str] = set()
    for record in records:
        url = urlsplit(record["url"])
        body = record["body"]
        page = _PAGE.search(body) if record["status"] == 200 and isinstance(body, str) else None
        html = dict(record.get("headers", {})) == HTML_TYPE
        if page is None or not html or not scripted_host(url.hostname or "", seed_hosts):
            yield record
            continue
        origin = f"{url.scheme}://{url.netloc}"
        origins.add(origin)
        source = f"{DATA_PREFIX}{url.path}.json"
        data: dict[str, Any] = {"html": page["body"]}
        if beacon:
            data["beacon"] = beacon
        yield {**record, "body": shell(page["title"], source)}
        yield {
            "url": origin + source,
            "status": 200,
            "headers": JSON_TYPE,
            "body": json.dumps(data, ensure_ascii=False),
        }
    script = _script()
    for origin in sorted(origins):
        yield {"url": origin + SCRIPT_PATH, "status": 200, "headers": JS_TYPE, "body": script}


def generate_scripted_web(folder: str | Path, *, beacon: str | None = None, **options: Any) -> Path:
    """Write the synthetic web (``options`` as :func:`focused.lab.webs.generate.generate_web`
    takes them) into ``folder`` with its scripted hosts built by scripts; each scripted page
    also calls ``beacon``, if given, as a tracker would. Returns the folder."""
    folder = generate_web(folder, **options)
    topics = json.loads((folder / TOPICS_FILE).read_text(encoding="utf-8"))
    demo = next(t for t in topics["topics"] if t["category"] == DEMO_CATEGORY)
    seed_hosts = {urlsplit(url).hostname or "" for url in demo["seeds"]}
    labels = _labels(folder / LABELS_FILE)
    records = list(_scripted(_records(folder / PAGES_FILE), seed_hosts, beacon))
    write_bundle(folder, records, labels=labels, topics=topics)
    hosts = sorted({urlsplit(r["url"]).hostname for r in records if r["url"].endswith(SCRIPT_PATH)})
    (folder / HOSTS_FILE).write_text(json.dumps({"scripted": hosts}, indent=1) + "\n")
    return folder


def _labels(path: Path) -> Mapping[str, list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return {
        url: [p for p in paths.split("|") if p]
        for url, _, paths in (line.partition("\t") for line in lines)
    }
