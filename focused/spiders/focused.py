"""The one generic spider: reads a topic file, parses pages, yields one PageItem per URL.

It decides nothing about what to crawl (the pipelines score, the frontier orders) but the
scope rules, which drop out-links on their URL and hops alone before anything scores them
(:mod:`focused.links.scope`), and it never touches Redis. Bad pages are counted in stats under
``focused/bad_page/<reason>`` and yielded with ``bad`` set, so the feed has every fetched URL
and the frontier acknowledges each one.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import scrapy
from scrapy.http import HtmlResponse, Response
from scrapy.utils.asyncio import sleep
from twisted.python.failure import Failure

from focused.distill.lists import list_seeds, lists_folder, lists_path
from focused.errors import FocusedError, did_you_mean, exit_on_user_error
from focused.items import META, Page, PageLink
from focused.links.extract import link_batches, parsed
from focused.links.scope import Scope
from focused.middlewares.failures import OTHER, failure_reason
from focused.relevance.text import page_text
from focused.render.pages import RENDER_META
from focused.store.crawler import crawl_name
from focused.topic.files import PREVIOUS, Topic, load_topic, load_topic_text
from focused.topic.plan import CrawlPlan

if TYPE_CHECKING:
    from focused.store.frontier.base import Leased

CONTEXT_WORDS = 12  # words of text kept on each side of an anchor


# Characters that text decoded with the right codec has few of: the replacement character
# (bytes the codec could not decode) and control characters other than white space.
CONTROLS = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20)])
GARBLED = "\ufffd" + CONTROLS.decode("ascii")
# Codecs tried, in order, on a page whose declared one gives implausible text.
FALLBACK_CODECS = ("utf-8", "cp1252")


# A start tag as an HTML parser's tokenizer reads it (the HTML standard's, which libxml2 2.14
# follows): its name, then attributes, each a name and maybe "=" and a value, between white
# space and slashes. A quote opens a value only after "=", and a value quoted so runs to its
# closing quote (a ">" in it does not end the tag); elsewhere a quote is a character of a name
# or an unquoted value, as in the 1990s' `<a href="x.html>` and `<a href=x.html">`. One pass
# over the page, whose time grows with its length. The name runs to white space, "/" or ">"
# (an "=" or a quote in it is part of it: `<p="x y">` is a "p="x" of an attribute y").
_SPACE = "\t\n\f\r "
ATTRIBUTE = re.compile(
    rf"""[^{_SPACE}/>][^{_SPACE}/>=]*"""
    rf"""(?:[{_SPACE}]*=[{_SPACE}]*(?:"[^"]*"?|'[^']*'?|[^{_SPACE}>]*))?"""
)
START_TAG = re.compile(
    rf"<[A-Za-z][^{_SPACE}/>]*(?P<attributes>(?:[{_SPACE}/]+|{ATTRIBUTE.pattern})*)"
)


def too_many_attributes(text: str, limit: int) -> int:
    """The attributes of the first tag of the page that has more than ``limit`` (0: none such).

    lxml (libxml2) compares each attribute of a tag with the ones before it: the time grows with
    the square of a tag's attributes, and the parse runs on the reactor's thread, so one such
    tag stops the process. The tags are read as the parser reads them (``START_TAG``), so that a
    stray quote does not make one tag of the rest of the page; an attribute takes two
    characters at least, so only tags that long are counted.
    """
    for tag in START_TAG.finditer(text):
        if tag.end() - tag.start() > 2 * limit:
            attributes = len(ATTRIBUTE.findall(text, tag.start("attributes"), tag.end()))
            if attributes > limit:
                return attributes
    return 0


def plausible(response: HtmlResponse, max_garbled: float) -> bool:
    """Whether the response's text reads as what its bytes say.

    Implausible are a text with more than ``max_garbled`` (a share of its characters) of
    replacement or control characters, and a declared codec that does not keep ASCII as
    ASCII (UTF-16 or UTF-32) on a body that has no NUL byte (which text in those codecs always
    has) and whose ``<`` bytes did not become ``<``: an ASCII page declared as UTF-16 reads
    as CJK characters, no markup, and no replacement character to tell.
    """
    text, body = response.text, response.body
    ascii_kept = "<".encode(response.encoding, errors="replace") == b"<"
    if ascii_kept:  # control characters are control bytes: counted in one pass over bytes
        garbled = text.count("\ufffd") + len(body) - len(body.translate(None, CONTROLS))
    else:
        garbled = sum(map(text.count, GARBLED))
    if garbled > max_garbled * len(text):
        return False
    if ascii_kept or b"\x00" in body:
        return True
    return 2 * text.count("<") >= body.count(b"<")


def redecoded(response: HtmlResponse, max_garbled: float) -> HtmlResponse | None:
    """The response read as UTF-8 or else cp1252 (a page that declares utf-16 but is ASCII,
    or declares UTF-8 but is Latin-1), whichever decodes without error and reads plausibly;
    None when neither does (binary bytes, or a codec neither guess is)."""
    for codec in FALLBACK_CODECS:
        try:
            response.body.decode(codec)
        except UnicodeDecodeError:
            continue
        candidate = response.replace(encoding=codec)
        if plausible(candidate, max_garbled):
            return candidate
    return None


#: The spider's arguments (``-a NAME=VALUE``); any other is a mistake that would be ignored.
ARGUMENTS = ("topic", "topic_toml")


class FocusedSpider(scrapy.Spider):
    """``scrapy crawl focused -a topic=PATH``: crawl the topic described by a topic file."""

    name = "focused"

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> FocusedSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.plan  # noqa: B018 - decided now, so that a bad setting stops the crawl at start
        return spider

    def __init__(
        self, topic: str | None = None, *args: Any, topic_toml: str | None = None, **kwargs: Any
    ):
        """``topic_toml``, the topic file's text, is how ``focused schedule`` sends a topic to a
        scrapyd node; ``topic`` then only names the file and anchors its relative paths."""
        super().__init__(*args, **kwargs)
        unknown = sorted(name for name in kwargs if not name.startswith("_"))
        if unknown:  # scrapyd's own arguments (_job, _version) start with "_"
            hint = did_you_mean(unknown[0], ARGUMENTS)
            raise FocusedError(
                f"unknown spider argument -a {unknown[0]}=...{hint}"
                " (the spider takes -a topic=PATH)"
            )
        if not topic:
            raise FocusedError("no topic file: run `scrapy crawl focused -a topic=PATH`")
        self.topic: Topic = load_topic_text(topic_toml, topic) if topic_toml else load_topic(topic)

    @cached_property
    def plan(self) -> CrawlPlan:
        """What this crawl does, decided once from its settings and topic; every component
        reads it (:mod:`focused.topic.plan`)."""
        return CrawlPlan.from_settings(self.settings, self.topic)

    @cached_property
    def context_words(self) -> int:
        """Words kept around each anchor: only the ``context`` link score and strategies that
        read them (``reads_context``) do."""
        return CONTEXT_WORDS if self.plan.reads_context else 0

    def seeds(self) -> list[str]:
        """The topic's seeds, then the good hubs and sites of ``seeds_from`` (Badia et al. 2006)."""
        seeds_from = self.topic.seeds_from
        if seeds_from == PREVIOUS:
            folder = lists_folder(self.settings)
            if folder is None:
                self.logger.warning("seeds_from: no lists: FOCUSED_LISTS_DIR is empty (off)")
                return self.topic.seeds
            path = lists_path(folder, crawl_name(self.crawler))
            if not path.exists():
                self.logger.warning("seeds_from: no lists of a previous run at %s", path)
                return self.topic.seeds
        elif not seeds_from:
            return self.topic.seeds
        else:
            path = Path(seeds_from)
        try:
            listed = list_seeds(path)
        except FocusedError as exc:
            self.logger.error("seeds_from: %s", exc)
            return self.topic.seeds
        self.logger.info("seeds_from: %d hubs and sites from %s", len(listed), path)
        return list(dict.fromkeys(self.topic.seeds + listed))

    async def start(self) -> AsyncIterator[scrapy.Request]:
        seeds = self.seeds()
        if not seeds:
            self.logger.error("no seed URLs: the topic has none and seeds_from gave none")
        for url in seeds:
            yield scrapy.Request(url, meta={"depth": 0})

    def _item(self, meta: dict[str, Any], url: str, status: int | None) -> Page:
        leased: Leased | None = meta.get(META)
        return Page(
            url,
            status,
            round(time.time(), 3),
            depth=meta.get("depth", 0),
            host=urlsplit(url).hostname,
            leased=leased,
            parent=leased.parent_url or None if leased is not None else None,
            rendered=meta.get(RENDER_META),
        )

    def _bad(self, page: Page, reason: str) -> Page:
        self.crawler.stats.inc_value(f"focused/bad_page/{reason}")
        page.bad = reason
        return page

    @cached_property
    def url_length(self) -> int:
        """Scrapy's URLLENGTH_LIMIT (0: none): longer links are not followed."""
        return self.settings.getint("URLLENGTH_LIMIT")

    @cached_property
    def scope(self) -> Scope:
        """The scope rules (:mod:`focused.links.scope`): out-links beyond them leave no page."""
        return Scope.from_settings(self.settings)

    @cached_property
    def max_garbled(self) -> float:
        """FOCUSED_MAX_REPLACEMENT_SHARE: the share of a page's text that may be garbled."""
        return self.settings.getfloat("FOCUSED_MAX_REPLACEMENT_SHARE")

    @cached_property
    def max_attributes(self) -> int:
        """FOCUSED_MAX_TAG_ATTRIBUTES: a page with a tag of more is not parsed (0: no limit)."""
        return self.settings.getint("FOCUSED_MAX_TAG_ATTRIBUTES")

    async def parse(self, response: Response) -> AsyncIterator[Page]:
        """The page's item; its links are read in batches with the reactor given back between
        two (:func:`focused.links.extract.link_batches`), so a page of a hundred thousand links does
        not stop the process's fetches and heartbeat while they are read."""
        item = self._item(response.meta, response.url, response.status)
        if last_modified := response.headers.get("Last-Modified"):
            item.last_modified = last_modified.decode("latin-1")
        if not isinstance(response, HtmlResponse):
            yield self._bad(item, "not_html")
            return
        stats = self.crawler.stats
        if "\ufffd" in response.text:  # bytes that are not in the page's encoding
            stats.inc_value("focused/pages/decode_errors")
        if not plausible(response, self.max_garbled):
            declared = response.encoding
            fixed = redecoded(response, self.max_garbled)
            if fixed is None:
                yield self._bad(item, "encoding")
                return
            response = fixed
            stats.inc_value("focused/pages/charset_fixed")
            self.logger.debug(
                "Read %(url)s as %(codec)s: its declared %(declared)s gave garbled text",
                {"url": response.url, "codec": response.encoding, "declared": declared},
            )
        if self.max_attributes > 0 and (
            attributes := too_many_attributes(response.text, self.max_attributes)
        ):
            self.logger.warning(
                "Bad page %(url)s (attributes): a tag of %(n)d attributes, over "
                "FOCUSED_MAX_TAG_ATTRIBUTES (%(limit)d); not parsed",
                {"url": response.url, "n": attributes, "limit": self.max_attributes},
            )
            yield self._bad(item, "attributes")
            return
        text = page_text(parsed(response)[0])
        item.title, item.text = text.title, text.text
        if not text.text and not text.title:
            yield self._bad(item, "empty")
            return
        bad: Counter[str] = Counter()
        links: list[tuple[str, str, str]] = []
        for batch in link_batches(
            response, self.context_words, max_length=self.url_length, bad=bad
        ):
            links += batch
            await sleep(0)
        for reason, count in bad.items():
            stats.inc_value(f"focused/links/bad/{reason}", count)
        out: Counter[str] = Counter()
        item.links = [
            PageLink(url, anchor, context)
            for url, anchor, context in self.scope.in_scope(links, item.depth, out)
        ]
        for rule, count in out.items():
            stats.inc_value(f"focused/links/out_of_scope/{rule}", count)
        item.html = response.text
        yield item

    def errback(self, failure: Failure) -> Iterator[Page]:
        """A request that finally failed (after retries) still yields an item: it is acked."""
        request: scrapy.Request = failure.request  # type: ignore[attr-defined]  # set by Scrapy
        response = getattr(failure.value, "response", None)
        item = self._item(request.meta, request.url, response.status if response else None)
        reason = failure_reason(failure)
        if reason == OTHER:
            self.logger.warning(
                "Bad page %(url)s (other): %(error)s: %(message)s",
                {
                    "url": request.url,
                    "error": type(failure.value).__name__,
                    "message": failure.value,
                },
            )
        yield self._bad(item, reason)
