"""The crawl plan: what a crawl does, decided once from its settings and topic file.

The strategy, how links are estimated, the relevance method, what word vectors do and the R at
which a page is relevant each depend on a setting, the topic file, and sometimes on each other
(breadth-first scores no anchors; keyword pages are judged by vectors at 0.5). The spider builds
the plan when the crawl starts (``spider.plan``) and every component reads it, so no component
works a choice out again and none can work it out differently.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from focused.errors import FocusedError
from focused.settings.check import choice
from focused.store.embedded import home_dir
from focused.strategies.registry import strategy_class
from focused.topic.methods import (
    METHODS,
    PAGE_VECTORS_THRESHOLD,
    topic_model,
    vector_model,
    vectors_role,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from focused.relevance.base import RelevanceModel
    from focused.topic.files import Topic
    from focused.topic.judge import Judge

__all__ = ["JUDGE_SETTINGS", "PAGE_ROLES", "CrawlPlan", "crawl_plan"]

# The word vectors' roles in which they judge pages (the page's own R).
PAGE_ROLES = ("pages", "both")
# The settings a crawl's plan and judge are made from (:meth:`CrawlPlan.from_settings`,
# :meth:`~focused.topic.judge.Judge.from_plan`) besides the models' folder: a crawl records
# their values (:meth:`CrawlPlan.judge_settings`) so that its judge can be made again after it
# (``focused export --rejudge``).
JUDGE_SETTINGS = (
    "FOCUSED_STRATEGY",
    "FOCUSED_LINK_SCORE",
    "FOCUSED_VECTORS",
    "FOCUSED_RELEVANT_THRESHOLD",
    "FOCUSED_LEARN",
    "FOCUSED_LEARN_PAGES",
    "FOCUSED_LINK_MODEL",
    "FOCUSED_LANGUAGE_ID",
    "FOCUSED_MAX_TEXT_CHARS",
    "FOCUSED_ANCHOR_GLOSS",
    "FOCUSED_VECTOR_WEIGHT",
    "FOCUSED_CLASSIFY_TEXT",
    "FOCUSED_HUB_MIN_SCORE",
    "FOCUSED_CALIBRATE",
)


def models_folder(settings: BaseSettings) -> str:
    """Where fitted models are kept: FOCUSED_MODELS_DIR, else ``models/`` in FOCUSED_HOME, so
    that a crawl writes nothing into the working folder."""
    folder = settings.get("FOCUSED_MODELS_DIR")
    return str(home_dir(settings.get("FOCUSED_HOME")) / "models") if folder is None else folder


@dataclass(frozen=True)
class CrawlPlan:
    """What a crawl does.

    - ``topic``: the checked topic file; ``models_dir``: where fitted models are kept;
    - ``strategy``: FOCUSED_STRATEGY, else the topic file's ``strategy``;
    - ``link_score``: FOCUSED_LINK_SCORE, else the topic file's; ``content`` under a strategy
      that orders links without scores (breadth-first), so no anchor is scored for nothing;
    - ``vectors``: what word vectors do ("anchors", "pages", "both") or None: FOCUSED_VECTORS
      off, the method has no use for them, or (where they judge pages) they are not installed;
    - ``threshold``: the R at which a page is relevant: FOCUSED_RELEVANT_THRESHOLD when set;
      else PAGE_VECTORS_THRESHOLD where vectors give the page's R; else the topic's own;
      ``threshold_given``: whether the setting or the topic file gave it (then the verdicts
      are not calibrated: the user's cut is kept);
    - ``learns``: whether the topic learns itself as the crawl goes (FOCUSED_LEARN): only a
      topic whose pages the word vectors judge (a light topic), under a strategy that scores
      links; FOCUSED_LEARN = true where it cannot is a FocusedError;
    - ``link_model``: whether the online link model blends each link's estimate with what it
      learns (FOCUSED_LINK_MODEL), only under a strategy that scores links;
    - ``identifies_language``: whether each page's language is identified (FOCUSED_LANGUAGE_ID:
      ``always``, or ``auto`` with a topic that keeps some ``languages``); ``never`` with such
      a topic is a FocusedError.
    """

    topic: Topic
    models_dir: str
    strategy: str
    link_score: str
    vectors: str | None
    threshold: float
    threshold_given: bool = False  # by the setting or the topic file, not a default
    learns: bool = False
    link_model: bool = False
    identifies_language: bool = False

    @classmethod
    def from_settings(cls, settings: BaseSettings, topic: Topic) -> CrawlPlan:
        """The plan of a crawl of ``topic`` under ``settings`` (the spider's ``plan``)."""
        strategy = choice(settings, "FOCUSED_STRATEGY") or topic.strategy
        link_score = choice(settings, "FOCUSED_LINK_SCORE") or topic.link_score
        if not strategy_class(strategy).scores_links:
            link_score = "content"
        vectors = vectors_role(topic)
        if (
            choice(settings, "FOCUSED_VECTORS") == "false"
            or vectors in PAGE_ROLES
            and not (_vectors_installed())
        ):
            vectors = None
        threshold = settings.get("FOCUSED_RELEVANT_THRESHOLD")
        given = threshold is not None and threshold != ""
        if given:
            threshold = float(threshold)
        elif vectors in PAGE_ROLES:
            threshold = PAGE_VECTORS_THRESHOLD
        else:
            threshold = float(topic.relevance.get("threshold", topic.relevance.get("r0", 0.5)))
            given = "threshold" in topic.relevance or "r0" in topic.relevance
        learn = choice(settings, "FOCUSED_LEARN")
        learns = (
            learn != "false"
            and vectors in PAGE_ROLES
            and strategy_class(strategy).scores_links
            and settings.getint("FOCUSED_LEARN_PAGES") > 0
        )
        if learn == "true" and not learns:
            raise FocusedError(
                "FOCUSED_LEARN: only a topic of keywords or of example pages without negatives"
                " learns, with word vectors on, under a strategy that scores links, and"
                " FOCUSED_LEARN_PAGES above 0"
            )
        language_id = choice(settings, "FOCUSED_LANGUAGE_ID")
        if language_id == "never" and topic.languages:
            raise FocusedError(
                "FOCUSED_LANGUAGE_ID: never, but the topic file keeps some languages"
                " (its languages field): auto or always, please"
            )
        return cls(
            topic,
            models_folder(settings),
            strategy,
            link_score,
            vectors,
            threshold,
            given,
            learns,
            strategy_class(strategy).scores_links and settings.getbool("FOCUSED_LINK_MODEL"),
            language_id == "always" or bool(topic.languages),
        )

    @property
    def scores_links(self) -> bool:
        """Whether the strategy orders links by the topic model's scores: not the unfocused
        baseline (breadth-first), which no distiller re-boost or link model focuses."""
        return strategy_class(self.strategy).scores_links

    @property
    def vectors_judge_pages(self) -> bool:
        """Whether word vectors give a page's own R."""
        return self.vectors in PAGE_ROLES

    @property
    def vectors_estimate_anchors(self) -> bool:
        """Whether word vectors give each anchor a second estimate, added by log-odds."""
        return self.vectors in ("anchors", "both") and self.scores_anchors

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages a relevant page is in (the topic file's ``languages``; empty: any)."""
        return self.topic.languages

    @property
    def method(self) -> str:
        """The topic's relevance method (a key of ``METHODS``)."""
        return self.topic.method

    @property
    def hard(self) -> bool:
        """Hard focus (Chakrabarti et al. 1999): pages need the good-path flag for their links
        to enter."""
        return self.strategy == "hard"

    @property
    def scores_anchors(self) -> bool:
        """Whether the classifier scores each out-link's anchor text."""
        return self.link_score != "content"

    @property
    def reads_anchors(self) -> bool:
        """Whether the topic's model scores a page with its URL and the anchor it was reached
        by, so the frontier must carry anchors."""
        return METHODS[self.topic.method].reads_anchors

    @property
    def reads_context(self) -> bool:
        """Whether the spider keeps the words around each anchor."""
        return strategy_class(self.strategy).reads_context or self.link_score == "context"

    @property
    def batch_setting(self) -> str:
        """The strategy's batch-size setting, "" when it pops as it needs."""
        return strategy_class(self.strategy).batch_setting

    def judge_settings(self, settings: BaseSettings) -> dict[str, Any]:
        """The values of :data:`JUDGE_SETTINGS` in ``settings``, and the plan's models folder
        (absolute) as FOCUSED_MODELS_DIR: what a crawl records to make its judge again."""
        values = {name: settings.get(name) for name in JUDGE_SETTINGS}
        return {**values, "FOCUSED_MODELS_DIR": str(Path(self.models_dir).resolve())}

    def judge(self, settings: BaseSettings) -> Judge:
        """The judge of pages and links this plan describes (:meth:`Judge.from_plan`)."""
        from focused.topic.judge import Judge  # it reads the plan: imported when judging

        return Judge.from_plan(self, settings)

    def model(self) -> RelevanceModel:
        """The topic's fitted relevance model."""
        return topic_model(self.topic, self.models_dir)

    def vector_model(self, setting: Any = "auto") -> Any:
        """The word-vector model of the plan's ``vectors`` role (None without one)."""
        if self.vectors is None:
            return None
        return vector_model(self.topic, self.models_dir, setting)


def _vectors_installed() -> bool:
    from focused.relevance.vectors import vectors_installed

    return vectors_installed()


def crawl_plan(crawler: Crawler) -> CrawlPlan:
    """The plan of the crawler's spider (its ``plan``, made once when the crawl starts), as
    every component reads it: found by what it is, so no component imports the spider."""
    plan = getattr(crawler.spider, "plan", None)
    if not isinstance(plan, CrawlPlan):
        raise TypeError(f"the crawl's spider {crawler.spider!r} has no crawl plan")
    return plan
