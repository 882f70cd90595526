"""Main-text extraction: speed and quality of trafilatura, resiliparse, html-text and jusText
against the crawler's whole-page text (``focused.relevance.text.page_text``, the baseline).

    .venv/bin/python -m pip install -e ".[bench]"   # resiliparse, html-text, justext
    .venv/bin/python benchmarks/extract.py [--pages 300] [--runs 3] [--seed 0]

Three sets of --pages pages, each page's real main content known from its structure:

- **Wikispeedia**: real Wikipedia articles (``<h1>``, paragraphs, headings, lists), ending in a
  "See also" list of links. Main content: the body without the ``<h1>`` and that list.
- **synthetic web** (:mod:`focused.lab.webs.generate`, --pages pages on 20 hosts): an ``<h1>`` and
  paragraphs with links inline; a few pages end in a "See also" list. Main content: the
  paragraphs.
- **Wikispeedia in a site template**: the same articles inside what most real sites wrap
  their articles in: a header with the site's name, a navigation bar of 15 category links and
  a search form, a sidebar of 10 other articles' titles, and a footer of legal links. Main
  content as for Wikispeedia. Neither web above has such boilerplate, and removing it is what
  an extractor is for.

Quality: precision, recall and F1 of the extracted text's words (lowercased letters and
digits, counted as a bag of words) against the main content's, averaged over pages; a page
with no output scores 0 (its count is the "empty" column). Speed: CPU milliseconds per page on
one core, the HTML given as text (as ``response.text``), the median of --runs interleaved
passes, and its ratio to ``page_text``'s in the same run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import html_text
import justext
import trafilatura
from classifier import WIKISPEEDIA
from lxml import etree, html
from resiliparse.extract.html2text import extract_plain_text

from focused.lab.webs.bundle import Bundle
from focused.lab.webs.generate import generate_web
from focused.relevance.content import main_text
from focused.relevance.text import page_text

_WORD = re.compile(r"[^\W_]+")
_ENGLISH = justext.get_stoplist("English")


def _justext(page: str) -> str:
    paragraphs = justext.justext(page, _ENGLISH)
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


# name -> function from a page's HTML to its text; the baseline first.
EXTRACTORS: dict[str, Callable[[str], str | None]] = {
    "page_text (whole page)": lambda page: page_text(page).text,
    "html-text": html_text.extract_text,
    "resiliparse (main_content)": lambda page: extract_plain_text(page, main_content=True),
    "jusText (English)": _justext,
    "trafilatura": lambda page: trafilatura.extract(page, include_comments=False),
    "trafilatura fast": lambda page: trafilatura.extract(page, fast=True, include_comments=False),
    # As shipped: one extraction, rendered as text and as Markdown (FOCUSED_FEED_MARKDOWN).
    "text + Markdown (content.py)": lambda page: main_text(page, markdown=True).text,
}

NAVIGATION = (
    "Art",
    "Business Studies",
    "Citizenship",
    "Countries",
    "Design and Technology",
    "Everyday life",
    "Geography",
    "History",
    "IT",
    "Language and literature",
    "Mathematics",
    "Music",
    "People",
    "Religion",
    "Science",
)
FOOTER = ("About us", "Contact", "Privacy policy", "Terms of use", "Accessibility")


@dataclass
class Page:
    html: str
    main: Counter[str]  # words of the real main content


def words(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text.lower()))


def main_content(page: str) -> Counter[str]:
    """Words of the page's body without its ``<h1>`` and its "See also" heading and list."""
    body = html.fromstring(page).find("body")
    for h1 in body.findall("h1"):
        body.remove(h1)
    for heading in body.findall("h2"):
        if heading.text_content().strip() == "See also":
            following = heading.getnext()
            if following is not None and following.tag == "ul":
                body.remove(following)
            body.remove(heading)
    etree.strip_elements(body, "script", "style", with_tail=False)
    return words(body.text_content())


def wikispeedia(folder: Path, n: int, seed: int) -> list[Page]:
    with gzip.open(folder / "pages.jsonl.gz", "rt", encoding="utf-8") as lines:
        bodies = [json.loads(line)["body"] for line in lines]
    return [Page(b, main_content(b)) for b in random.Random(seed).sample(bodies, n)]


def synthetic(n: int, seed: int) -> list[Page]:
    """The ordinary pages of a synthetic web (not its error, image or redirect pages)."""
    with tempfile.TemporaryDirectory() as folder:
        bundle = Bundle.load(generate_web(folder, n_pages=max(n, 100), n_hosts=20, seed=seed))
    pages = []
    for key, page in bundle.pages.items():
        if page.status == 200 and bundle.labels.get(key):
            body = page.body.decode("utf-8", "replace")
            pages.append(Page(body, main_content(body)))
    return pages[:n]


def in_template(page: Page, titles: list[str], rng: random.Random) -> Page:
    """The page inside a site template: header, navigation, sidebar and footer."""
    head, _, rest = page.html.partition("<body>")
    article, _, tail = rest.partition("</body>")
    nav = "".join(f'<li><a href="/{c.replace(" ", "_")}">{c}</a></li>' for c in NAVIGATION)
    side = "".join(
        f'<li><a href="/{t.replace(" ", "_")}">{t}</a></li>' for t in rng.sample(titles, 10)
    )
    foot = " | ".join(f'<a href="/{f.replace(" ", "_")}">{f}</a>' for f in FOOTER)
    body = (
        '<body><header><div class="logo"><a href="/">Wikipedia for Schools</a></div>'
        f'<nav class="menu"><ul>{nav}</ul></nav><form action="/search"><input name="q">'
        '<button>Search</button></form></header><div class="wrapper">'
        f'<div id="content" class="content">{article}</div>'
        f'<aside class="sidebar"><h3>Popular articles</h3><ul>{side}</ul></aside></div>'
        f"<footer><p>{foot}</p><p>Text is available under the Creative Commons"
        " Attribution-ShareAlike License; additional terms may apply. Copyright 2007 SOS"
        " Children's Villages.</p></footer></body>"
    )
    return Page(head + body + tail, page.main)


def titles_of(pages: list[Page]) -> list[str]:
    return [page_text(p.html).title for p in pages]


def score(extracted: str | None, main: Counter[str]) -> tuple[float, float, float]:
    """Bag-of-words precision, recall and F1 of one page; 0 for no output."""
    got = words(extracted or "")
    overlap = sum((got & main).values())
    if not overlap:
        return 0.0, 0.0, 0.0
    precision, recall = overlap / sum(got.values()), overlap / sum(main.values())
    return precision, recall, 2 * precision * recall / (precision + recall)


def measure(name: str, pages: list[Page], runs: int) -> None:
    """Print each extractor's median CPU ms per page over ``runs`` interleaved passes (so a
    busy machine slows all alike), its ratio to the baseline's, and its quality."""
    kb = sum(len(p.html) for p in pages) / len(pages) / 1000
    main = sum(sum(p.main.values()) for p in pages) / len(pages)
    print(f"\n{name}: {len(pages)} pages, mean HTML {kb:.1f} KB, main content {main:.0f} words")
    print(
        f"  {'extractor':28} {'ms/page':>8} {'x base':>7} {'precision':>10} {'recall':>7}"
        f" {'F1':>6} {'empty':>6}"
    )
    times: dict[str, list[float]] = {label: [] for label in EXTRACTORS}
    outputs: dict[str, list[str | None]] = {}
    for extract in EXTRACTORS.values():
        extract(pages[0].html)  # warm up (trafilatura's first call loads its settings)
    for _ in range(runs):
        for label, extract in EXTRACTORS.items():
            started = time.process_time()
            outputs[label] = [extract(p.html) for p in pages]
            times[label].append(1000 * (time.process_time() - started) / len(pages))
    baseline = statistics.median(next(iter(times.values())))
    for label, texts in outputs.items():
        ms = statistics.median(times[label])
        scores = [score(o, p.main) for o, p in zip(texts, pages, strict=True)]
        mean = [sum(s[i] for s in scores) / len(scores) for i in range(3)]
        empty = sum(not (o or "").strip() for o in texts)
        print(
            f"  {label:28} {ms:8.2f} {ms / baseline:7.2f} {mean[0]:10.3f} {mean[1]:7.3f}"
            f" {mean[2]:6.3f} {empty:6d}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wikispeedia", type=Path, default=WIKISPEEDIA)
    parser.add_argument("--pages", type=int, default=300, help="pages of each set")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3, help="timed passes; the median is shown")
    args = parser.parse_args()

    articles = wikispeedia(args.wikispeedia, args.pages, args.seed)
    measure("Wikispeedia", articles, args.runs)
    measure("synthetic web", synthetic(args.pages, args.seed), args.runs)
    rng, titles = random.Random(args.seed), titles_of(articles)
    templated = [in_template(p, titles, rng) for p in articles]
    measure("Wikispeedia in a site template", templated, args.runs)


if __name__ == "__main__":
    main()
