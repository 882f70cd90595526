"""Scope rules: out-links a crawl never follows (too many hops, a repeated or too deep path) are
dropped by the spider before anything scores them, and counted by rule."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from scrapy.http import HtmlResponse, Request
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from focused.links.scope import Scope, repeated_run
from focused.settings import defaults
from focused.spiders.focused import FocusedSpider

DEFAULT = Scope(
    max_hops=defaults.FOCUSED_MAX_HOPS,
    max_path_repeats=defaults.FOCUSED_MAX_PATH_REPEATS,
    max_path_segments=defaults.FOCUSED_MAX_PATH_SEGMENTS,
)


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("/bikes/", None),
        ("/bikes/bikes/", None),
        ("/bikes/bikes/bikes/", "path_repetition"),
        ("/shop/bikes/bikes/bikes", "path_repetition"),
        ("/a/b/a/b/", None),
        ("/a/b/a/b/a/b/", "path_repetition"),
        ("/x/a/b/c/a/b/c/a/b/c/y", "path_repetition"),
        ("/2010/10/10/news", None),  # a date repeats a number twice, not three times
        ("/a//b", None),
        ("/a/b/c/a/b/c", None),
        ("/" + "/".join(f"s{n}" for n in range(20)), None),  # 20 slashes
        ("/" + "/".join(f"s{n}" for n in range(21)), "path_depth"),
        ("/" + "/".join(["bikes"] * 30), "path_depth"),  # the cheaper rule names it
    ],
)
def test_each_url_rule(path: str, rule: str | None) -> None:
    assert DEFAULT.rule_against(f"http://www.shop.test{path}?q=bikes/bikes/bikes") == rule


def test_repeated_runs_are_found_in_linear_time() -> None:
    assert not repeated_run([f"s{n}" for n in range(10_000)], 2)
    assert repeated_run(["x"] * 10_000, 2)
    assert not repeated_run(["a", "a", "a"], 3) and repeated_run(["a"] * 4, 3)


def test_links_past_the_hop_limit_or_out_of_scope_are_counted_by_rule() -> None:
    links = [
        ("http://a.test/ok", "ok", ""),
        ("http://a.test/b/b/b/", "loop", ""),
        ("http://a.test" + "/s" * 25, "deep", ""),
    ]
    out: Counter[str] = Counter()
    assert DEFAULT.in_scope(links, 19, out) == links[:1]
    assert out == {"path_repetition": 1, "path_depth": 1}
    assert DEFAULT.in_scope(links, 20, out) == []
    assert out == {"path_repetition": 1, "path_depth": 1, "hops": 3}
    assert Scope().in_scope(links, 1000, out) is links  # every rule off


@pytest.mark.parametrize(
    ("settings", "hops"),
    [
        ({}, 20),
        ({"DEPTH_LIMIT": 6}, 6),
        ({"DEPTH_LIMIT": 60}, 20),
        ({"FOCUSED_MAX_HOPS": 0}, 0),
        ({"FOCUSED_MAX_HOPS": 0, "DEPTH_LIMIT": 3}, 3),
    ],
)
def test_scrapys_depth_limit_is_a_hop_limit_too(settings: dict, hops: int) -> None:
    s = Settings()
    s.setmodule(defaults, priority="addon")
    s.update(settings)
    assert Scope.from_settings(s).max_hops == hops


async def _collect(items: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in items]


def test_the_spider_drops_them_before_they_are_scored(tmp_path: Path) -> None:
    topic = tmp_path / "topic.toml"
    topic.write_text(
        'name = "t"\nseeds = ["http://www.shop.test/"]\n'
        '[relevance]\nmethod = "keywords"\nkeywords = ["bikes"]\n'
    )
    settings = {name: getattr(defaults, name) for name in dir(defaults) if name.isupper()}
    crawler = get_crawler(FocusedSpider, settings_dict=settings)
    crawler.spider = spider = FocusedSpider.from_crawler(crawler, topic=str(topic))
    crawler.stats.open_spider()
    hrefs = ["/bikes/", "bikes/", "/bikes/bikes/bikes/", "/" + "/".join("abcdefghijklmnopqrstu")]
    body = "<title>Bikes</title><p>Bikes</p>" + "".join(f'<a href="{h}">x</a>' for h in hrefs)
    url = "http://www.shop.test/bikes/bikes/"

    def parse(depth: int) -> list[str]:
        request = Request(url, meta={"depth": depth})
        response = HtmlResponse(url, body=body.encode(), encoding="utf-8", request=request)
        [item] = asyncio.run(_collect(spider.parse(response)))
        return [link.url for link in item.links]

    assert parse(3) == ["http://www.shop.test/bikes/"]
    assert parse(20) == []
    assert crawler.stats.get_stats() == {
        "focused/links/out_of_scope/path_repetition": 2,
        "focused/links/out_of_scope/path_depth": 1,
        "focused/links/out_of_scope/hops": 4,
    }
