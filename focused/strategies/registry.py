"""The strategies a crawl can use, by name, and how out-links are estimated: the one table the
topic file, the settings check and the crawl plan read. It imports no strategy: a crawl loads
only its own strategy's code (:func:`strategy_class`)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from focused.strategies.base import Strategy

__all__ = ["LINK_SCORES", "STRATEGIES", "strategy_class"]

#: Strategy name -> ``"module:class"`` under ``focused.strategies``.
STRATEGIES = {
    "soft": "focus:SoftFocus",
    "hard": "focus:HardFocus",
    "breadth-first": "focus:BreadthFirst",
    "best-n-first": "bestn:BestNFirst",
    "genetic": "genetic:GeneticStrategy",
    "hmm": "hmm:HMMStrategy",
    "infospiders": "infospiders:InfoSpiders",
}

#: How a link's target is estimated (the best-first variants of Batsakis et al. 2009): from the
#: parent page's R (``content``), the anchor text's (``anchor``), their mean (``both``), or the
#: anchor with the words around it (``context``).
LINK_SCORES = ("content", "anchor", "both", "context")


def strategy_class(name: str) -> type[Strategy]:
    """The class of the strategy ``name`` (a key of STRATEGIES), imported now."""
    module, _, cls = STRATEGIES[name].partition(":")
    return getattr(import_module(f"focused.strategies.{module}"), cls)
