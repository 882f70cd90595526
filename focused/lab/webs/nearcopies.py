"""Generate a web with planted near-copies: the synthetic topical web of
:mod:`focused.lab.webs.generate`, and for some of its pages on the demo topic (its seed pages
first, which every crawl fetches, then the pages they link to) three near-copies each:

- **mirror**: the same page with a site header and footer of its own, on a mirror host
  (``http://mirror.copies.web.test/<path>``);
- **print**: its printable version on its own host (``<origin>/print/<path>``): the title and
  the article alone;
- **edit**: the article republished with 5 % of its words, here and there, replaced by others
  of the web's vocabulary (``http://syndicated.copies.web.test/<path>``).

A copy is linked from its original's footer only, so a crawl fetches the original first, and
each copy links to a page of its own (``http://only.copies.web.test/<kind>/<path>``), found
nowhere else: a crawl that takes a near-copy for what it is never queues it. The other pages of
the web, many on the same topic, are distinct: none may be taken for a copy.

With ``shared_block``, as many other pages on the demo topic (the next ones a crawl fetches
early) get one long block of text, the same in each (a quoted release, a syndicated
paragraph run), inside their article after its first paragraph: distinct pages, each with its
own text and links, that no near-copy check may take for copies of each other.

``near_copies.json`` holds the truth: for each copy its ``url``, the ``copy_of`` URL, its
``kind`` and its ``only_link``; ``shared_block.json`` the URLs of the pages sharing the block.
The same ``seed`` gives the same web otherwise.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from focused.lab.webs.bundle import TOPICS_FILE, Bundle, write_bundle
from focused.lab.webs.generate import BACKGROUND, DEMO_CATEGORY, HTML_TYPE, generate_web

NEAR_COPIES_FILE = "near_copies.json"
SHARED_BLOCK_FILE = "shared_block.json"
# Words of the block the shared_block pages share: about 3 times their own article.
BLOCK_WORDS = 1000
MIRROR = "http://mirror.copies.web.test"
SYNDICATED = "http://syndicated.copies.web.test"
ONLY = "http://only.copies.web.test"
KINDS = ("mirror", "print", "edit")
EDIT_SHARE = 0.05  # of an edited copy's words, replaced

_TITLE = re.compile(r"<h1>(.*?)</h1>", re.S)
_PARAGRAPHS = re.compile(r"<p>.*?</p>\n", re.S)
_WORD = re.compile(r"(?<![<\w/=\"])\b[A-Za-z]+\b(?![^<]*>)")


def generate_near_copy_web(
    folder: str | Path,
    *,
    originals: int = 10,
    shared_block: int = 0,
    block_words: int = BLOCK_WORDS,
    seed: int = 0,
    **web: Any,
) -> Path:
    """Write the synthetic web (``web``: :func:`~focused.lab.webs.generate.generate_web`'s
    options) with three near-copies of each of ``originals`` pages on the demo topic, and
    ``near_copies.json``; and a block of ``block_words`` words in the article of
    ``shared_block`` other pages on the demo topic, listed in ``shared_block.json``. Returns
    the folder."""
    folder = generate_web(folder, seed=seed, **web)
    bundle = Bundle.load(folder)
    topics = json.loads((folder / TOPICS_FILE).read_text(encoding="utf-8"))
    demo = next(t for t in topics["topics"] if t["category"] == DEMO_CATEGORY)
    records = [_record(page) for page in bundle.pages.values()]
    by_url = {record["url"]: record for record in records}
    early = _originals(by_url, bundle, demo["seeds"], originals + shared_block)
    chosen, sharing = early[:originals], early[originals:]
    rng = np.random.default_rng(seed)
    truth, added = [], []
    for original in chosen:
        record = by_url[original]
        record["body"] = record["body"].decode("utf-8")
        copies = _copies(record, rng)
        links = []
        for kind, (url, body) in zip(KINDS, copies, strict=True):
            only = f"{ONLY}/{kind}/{urlsplit(original).path.lstrip('/')}"
            body = body.replace("</body>", f'<footer><a href="{only}">More</a></footer>\n</body>')
            added += [_page(url, body), _page(only, _only_page(kind, original))]
            truth.append({"url": url, "copy_of": original, "kind": kind, "only_link": only})
            links.append(f'<a href="{url}">{kind}</a>')
        footer = f"<footer>{' | '.join(links)}</footer>\n</body>"
        record["body"] = record["body"].replace("</body>", footer)
    bodies = {url: by_url[url]["body"].decode("utf-8") for url in sharing}
    block = _block(block_words, " ".join(bodies.values()), rng) if sharing else ""
    for url, body in bodies.items():
        first = _PARAGRAPHS.search(body)
        at = first.end() if first else body.index("</body>")
        by_url[url]["body"] = body[:at] + block + body[at:]
    labels = dict(bundle.labels)
    labels.update({item["url"]: bundle.categories(item["copy_of"]) for item in truth})
    labels.update({item["only_link"]: [] for item in truth})
    write_bundle(folder, [*records, *added], labels=labels, topics=topics)
    (folder / NEAR_COPIES_FILE).write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
    (folder / SHARED_BLOCK_FILE).write_text(json.dumps(sharing, indent=1) + "\n", encoding="utf-8")
    return folder


def _record(page: Any) -> dict[str, Any]:
    return {
        "url": page.url,
        "status": page.status,
        "headers": dict(page.headers),
        "body": page.body,
    }


def _page(url: str, body: str) -> dict[str, Any]:
    return {"url": url, "status": 200, "headers": HTML_TYPE, "body": body}


def _originals(
    by_url: dict[str, dict[str, Any]], bundle: Bundle, seeds: list[str], n: int
) -> list[str]:
    """The demo topic's seed pages, the pages on its topic they link to, then the others on
    its topic, in order: ``n`` good HTML pages, the first ones those a crawl of the topic
    fetches early."""
    good = [
        url
        for url, record in by_url.items()
        if record["status"] == 200
        and b"<h1>" in record["body"]
        and DEMO_CATEGORY in bundle.categories(url)
    ]
    linked = [
        target
        for seed in seeds
        for target in re.findall(rb'href="([^"]+)"', by_url[seed]["body"])
        if target.decode() in good
    ]
    ordered = [*seeds, *(target.decode() for target in linked), *good]
    return list(dict.fromkeys(url for url in ordered if url in good))[:n]


def _copies(record: dict[str, Any], rng: np.random.Generator) -> list[tuple[str, str]]:
    """The mirror, printable and edited copies of a page: (URL, body) each."""
    url, body = record["url"], record["body"]
    parts = urlsplit(url)
    path = parts.path.lstrip("/")
    title = _TITLE.search(body)
    heading = title.group(1) if title else path
    article = "".join(_PARAGRAPHS.findall(body))
    mirror = body.replace(
        "<body>\n",
        '<body>\n<header><a href="/">Mirror Archive</a> | <a href="/about">About</a>'
        ' | <a href="/contact">Contact</a> - copied for your convenience</header>\n',
    ).replace(
        "</body>",
        "<footer>Mirror Archive keeps copies of pages from around the web. Contact the"
        " webmaster with questions. All trademarks belong to their owners.</footer>\n</body>",
    )
    printable = (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{heading} (printable version)</title>\n</head>\n<body>\n"
        f"<h1>{heading}</h1>\n{article}</body>\n</html>\n"
    )
    edited = (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{heading} - Syndicated</title>\n</head>\n<body>\n"
        f"<header>Syndicated News: stories from our partners</header>\n<h1>{heading}</h1>\n"
        f"{_edited(article, rng)}<footer>Republished with permission.</footer>\n</body>\n</html>\n"
    )
    return [
        (f"{MIRROR}/{path}", mirror),
        (f"{parts.scheme}://{parts.netloc}/print/{path}", printable),
        (f"{SYNDICATED}/{path}", edited),
    ]


def _edited(article: str, rng: np.random.Generator) -> str:
    """The article's text with EDIT_SHARE of its words (outside tags), spread at random,
    replaced by background words."""
    words = list(_WORD.finditer(article))
    chosen = set(rng.choice(len(words), round(len(words) * EDIT_SHARE), replace=False).tolist())
    vocabulary = BACKGROUND.split()
    out, at = [], 0
    for i, match in enumerate(words):
        if i in chosen:
            out += [article[at : match.start()], vocabulary[int(rng.integers(len(vocabulary)))]]
            at = match.end()
    return "".join([*out, article[at:]])


def _block(words: int, articles: str, rng: np.random.Generator) -> str:
    """A block of ``words`` words drawn from the words of ``articles`` (on the topic as they
    are), in paragraphs of 60 words (sentences of 12)."""
    vocabulary = [word.lower() for word in _WORD.findall("".join(_PARAGRAPHS.findall(articles)))]
    drawn = [vocabulary[i] for i in rng.integers(len(vocabulary), size=words)]
    sentences = [" ".join(drawn[i : i + 12]).capitalize() + "." for i in range(0, words, 12)]
    return "".join(
        f"<p>{' '.join(sentences[i : i + 5])}</p>\n" for i in range(0, len(sentences), 5)
    )


def _only_page(kind: str, original: str) -> str:
    """The page only a copy links to."""
    name = html.escape(f"Found through the {kind} copy of {original}")
    return (
        f"<!DOCTYPE html>\n<html><head><title>{name}</title></head><body><h1>{name}</h1>"
        f"<p>{name}.</p></body></html>\n"
    )
