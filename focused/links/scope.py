"""Scope rules: which of a page's out-links a crawl may follow at all, judged on the link's URL
and the page's hops from the seeds alone, so that the spider drops them before anything scores,
queues or stores them.

They bound the traps that grow a URL for ever (Heritrix's defaults, whose numbers they take):

- ``hops``: the page is already ``max_hops`` links from a seed (an endless calendar, a session
  id in every link); its links would be one more.
- ``path_repetition``: a path segment, or a run of two or three, comes more than
  ``max_path_repeats`` times in a row (``/bikes/bikes/bikes/``, ``/a/b/a/b/a/b/``: a relative
  link that resolves under itself), as Heritrix's PathologicalPath rule.
- ``path_depth``: the path has more than ``max_path_segments`` slashes (``/a/b/c`` has 3), as
  its TooManyPathSegments rule.

A limit of 0 turns its rule off. Traps that branch instead (faceted queries, soft 404s, a farm
of hosts) stay within these rules; the frontier's budgets bound them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

HOPS, PATH_REPETITION, PATH_DEPTH = "hops", "path_repetition", "path_depth"
RULES = (HOPS, PATH_REPETITION, PATH_DEPTH)
# Runs of this many segments at most are looked for repeated: longer cycles are rare, and the
# path depth rule ends them anyway.
MAX_RUN = 3

Link = TypeVar("Link", bound=Sequence[str])


def repeated_run(segments: Sequence[str], max_repeats: int) -> bool:
    """Whether a run of 1 to :data:`MAX_RUN` segments comes more than ``max_repeats`` times in
    a row in ``segments``."""
    n = len(segments)
    for length in range(1, MAX_RUN + 1):
        span = length * (max_repeats + 1)  # the run, repeated once too often
        for start in range(n - span + 1):
            run = segments[start : start + length]
            if all(
                segments[at : at + length] == run
                for at in range(start + length, start + span, length)
            ):
                return True
    return False


@dataclass(frozen=True)
class Scope:
    """The scope rules' limits (0: that rule is off)."""

    max_hops: int = 0
    max_path_repeats: int = 0
    max_path_segments: int = 0

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Scope:
        """``FOCUSED_MAX_HOPS`` and Scrapy's ``DEPTH_LIMIT`` (the smaller one that is set),
        ``FOCUSED_MAX_PATH_REPEATS`` and ``FOCUSED_MAX_PATH_SEGMENTS``."""
        hops = [settings.getint("FOCUSED_MAX_HOPS"), settings.getint("DEPTH_LIMIT")]
        return cls(
            max_hops=min((h for h in hops if h > 0), default=0),
            max_path_repeats=settings.getint("FOCUSED_MAX_PATH_REPEATS"),
            max_path_segments=settings.getint("FOCUSED_MAX_PATH_SEGMENTS"),
        )

    def rule_against(self, url: str) -> str | None:
        """The rule that puts ``url`` out of scope, or None."""
        path = urlsplit(url).path
        if self.max_path_segments and path.count("/") > self.max_path_segments:
            return PATH_DEPTH
        if self.max_path_repeats and repeated_run(path.split("/"), self.max_path_repeats):
            return PATH_REPETITION
        return None

    def in_scope(self, links: list[Link], depth: int, out: Counter[str]) -> list[Link]:
        """The ``links`` (URL first) of a page ``depth`` hops from a seed that are in scope;
        those that are not are counted in ``out`` under their rule."""
        if self.max_hops and depth + 1 > self.max_hops:
            if links:
                out[HOPS] += len(links)
            return []
        if not (self.max_path_segments or self.max_path_repeats):
            return links
        kept = []
        for link in links:
            if rule := self.rule_against(link[0]):
                out[rule] += 1
            else:
                kept.append(link)
        return kept
