"""The API reference's recipes run as shown: the strategy recipe is a working strategy."""

from __future__ import annotations

import re
from pathlib import Path

from focused.relevance.keywords import KeywordModel
from focused.strategies.base import Strategy
from focused.topic.judge import Judge
from tests.pages import page

API = Path(__file__).resolve().parents[1] / "docs" / "reference" / "api.md"


def recipe(heading: str) -> str:
    """The first Python block under ``heading`` in the API reference."""
    section = API.read_text().split(f"## {heading}\n", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S)[1]


def test_the_strategy_recipe_is_a_strategy_that_ranks_shallow_links_first():
    code = recipe("Adding a strategy").split("# focused/strategies/registry.py")[0]
    namespace: dict = {}
    exec(compile(code, "mine.py", "exec"), namespace)
    strategy: Strategy = namespace["MyStrategy"].from_crawler(None, None)
    judge = Judge(KeywordModel(keywords=["swan"]).fit(), threshold=0.5, link_score="anchor")
    links = [("http://b.test/", "swan", ""), ("http://c.test/", "bonds", "")]
    shallow, deep = page("a swan", links), page("a swan", links)
    deep.depth = 4
    near = strategy.links(shallow, judge(shallow))
    far = strategy.links(deep, judge(deep))
    assert [link.url for link in near] == ["http://b.test/", "http://c.test/"]
    assert near[0].score > near[1].score and near[0].anchor == "swan"
    assert near[0].depth == 2 and far[0].depth == 5
    assert far[0].score < near[0].score
    strategy.close()
