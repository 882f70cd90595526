"""Crawl strategies: what out-links of a page enter the frontier, and with what score.

A strategy only turns classified pages into scored links; the frontier stores and orders them
and knows nothing of topics (Frontera keeps the same seam, ../shared/design/ARCHITECTURE.md).
The topic file's ``strategy`` (or ``FOCUSED_STRATEGY``) picks one:

- ``soft``, ``hard``: seed 000's soft and hard focus (:mod:`.focus`), the default;
- ``breadth-first``: the unfocused baseline (:mod:`.focus`);
- ``best-n-first``: seed 003's BFS-N, N links popped at a time from a capped frontier
  (:mod:`.bestn`);
- ``genetic``: seed 001's genetic algorithm over the frontier with topic-sensitive PageRank
  (:mod:`.genetic`);
- ``hmm``: seed 002's hidden Markov model of the distance to a relevant page (:mod:`.hmm`);
- ``infospiders``: seed 003's population of adaptive agents (:mod:`.infospiders`).

Classes are imported on first use, so a crawl loads only its own strategy's code.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from focused.errors import FocusedError
from focused.topic.files import LINK_SCORES, STRATEGY_NAMES, Topic

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from focused.schedulers.frontier import RedisFrontier
    from focused.strategies.focus import SoftFocus

__all__ = ["STRATEGIES", "build_strategy", "link_score_for", "strategy_class", "strategy_name"]

# Strategy name -> "module:class" under focused.strategies.
STRATEGIES = {
    "soft": "focus:SoftFocus",
    "hard": "focus:HardFocus",
    "breadth-first": "focus:BreadthFirst",
    "best-n-first": "bestn:BestNFirst",
    "genetic": "genetic:GeneticStrategy",
    "hmm": "hmm:HMMStrategy",
    "infospiders": "infospiders:InfoSpiders",
}
assert tuple(STRATEGIES) == STRATEGY_NAMES


def strategy_class(name: str) -> type[SoftFocus]:
    module, _, cls = STRATEGIES[name].partition(":")
    return getattr(import_module(f"{__name__}.{module}"), cls)


def strategy_name(settings: BaseSettings, topic: Topic) -> str:
    """FOCUSED_STRATEGY when set, else the topic file's ``strategy``."""
    name = settings.get("FOCUSED_STRATEGY") or topic.strategy
    if name not in STRATEGIES:
        raise FocusedError(f"FOCUSED_STRATEGY: expected one of {sorted(STRATEGIES)}, got {name!r}")
    return name


def link_score_for(settings: BaseSettings, topic: Topic) -> str:
    """FOCUSED_LINK_SCORE when set, else the topic file's ``link_score``; ``content`` under
    a strategy that orders links without scores (breadth-first), so no anchor is scored for
    nothing."""
    value = settings.get("FOCUSED_LINK_SCORE") or topic.link_score
    if value not in LINK_SCORES:
        raise FocusedError(f"FOCUSED_LINK_SCORE: expected one of {LINK_SCORES}, got {value!r}")
    return value if strategy_class(strategy_name(settings, topic)).scores_links else "content"


def build_strategy(crawler: Crawler, frontier: RedisFrontier) -> SoftFocus:
    """The crawl's strategy, built from its topic and settings."""
    name = strategy_name(crawler.settings, crawler.spider.topic)
    return strategy_class(name).from_crawler(crawler, frontier)
