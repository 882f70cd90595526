"""TopicLearner: a light topic learns itself as the crawl goes (FOCUSED_LEARN).

Every classified page goes into the crawl-wide learning sample in Redis
(:mod:`focused.store.learning`; each process adds its pages once a second). After
FOCUSED_LEARN_PAGES pages fetched crawl-wide, then each time the crawl has doubled (at most
every FOCUSED_LEARN_SAMPLE pages), one process (a
:class:`~focused.store.periodic.PeriodicJob`, in a thread) files the sample's pages as a
taxonomy would (:class:`~focused.relevance.learned.LearnedTopic`), refuses a refit that has
drifted from what the user wrote (:meth:`~focused.relevance.learned.LearnedTopic.drift`),
publishes the examples as a new generation and scores the queued links again.
Every process fits its copy from the published examples when it sees the generation change and
hands it to the classifier pipeline (the ``topic_refitted`` signal).

Stats: ``focused/learn/refits``, ``focused/learn/refused``, ``focused/learn/rescored``,
``focused/learn/seconds`` (the last refit), ``focused/learn/generation`` (the model this process
scores with), ``focused/learn/failed``.
"""

from __future__ import annotations

import logging
import time
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task, threads

from focused.errors import FocusedError
from focused.relevance.language import kept_out
from focused.relevance.learned import LearnedTopic
from focused.signals import topic_refitted
from focused.store.crawler import frontier_for
from focused.store.learning import Generation, LearningStore, SampledPage
from focused.store.lock import LEASE_S
from focused.topic.judge import Judge
from focused.topic.methods import own_negatives, own_texts
from focused.topic.plan import crawl_plan

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    from scrapy.crawler import Crawler

    from focused.items import Page
    from focused.store.frontier.queue import RedisFrontier
    from focused.store.lock import Lease

logger = logging.getLogger(__name__)

CHECK_S = 1.0
TOP_WORDS = 10


@dataclass(frozen=True)
class Refit:
    """What one refit did (None from the job when another process held the lock)."""

    generation: int  # 0: refused
    seconds: float
    rescored: int
    why_not: str = ""  # why no generation was published
    early: bool = False  # too few pages yet, not drift
    model: tuple[Generation, LearnedTopic] | None = None  # what was published


class TopicLearner:
    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.stats = crawler.stats
        s = crawler.settings
        self.every = s.getint("FOCUSED_LEARN_PAGES")
        self.sample = s.getint("FOCUSED_LEARN_SAMPLE")
        self.chars = s.getint("FOCUSED_LEARN_CHARS")
        self.pending: list[SampledPage] = []
        self.generation = 0  # of the model this process scores with
        self.task: task.LoopingCall | None = None
        self.fitting = False
        # this process's last refit, taken up without fitting it again
        self.refitted: tuple[Generation, LearnedTopic] | None = None
        self.languages: tuple[str, ...] = ()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TopicLearner:
        if crawler.settings.getint("FOCUSED_LEARN_PAGES") <= 0:
            raise NotConfigured
        learner = cls(crawler)
        crawler.signals.connect(learner.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(learner.spider_closed, signal=signals.spider_closed)
        return learner

    def spider_opened(self) -> None:
        plan = crawl_plan(self.crawler)
        if not plan.learns:
            return
        self.threshold = plan.threshold
        self.languages = plan.languages  # a page in another language is not learned from
        self.user = own_texts(plan.topic)
        self.user_negatives = own_negatives(plan.topic)
        self.user_before: Sequence[float] | np.ndarray = (
            self.scorer().relevance(self.user) if self.user else []
        )
        frontier = frontier_for(self.crawler)
        self.store = LearningStore(frontier.store, self.sample)
        # The job's thread gets its own frontier, store and scorer: the crawl's call into the
        # reactor, which only its own thread may do.
        self.worker_frontier = frontier.for_thread()
        self.worker_store = LearningStore(self.worker_frontier.store, self.sample)
        self.rescores = plan.link_score == "anchor" and not plan.link_model
        self.job = self.store.refit_job(
            self.refit,
            lock_s=LEASE_S,
            done=self.done,
            stats=self.stats,
            failures="focused/learn/failed",
            log=logger,
        )
        self.crawler.signals.connect(self.item_scraped, signal=signals.item_scraped)
        self.task = task.LoopingCall(self.check)
        self.task.start(CHECK_S, now=False)

    def spider_closed(self) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()
            with suppress(FocusedError):  # Redis is lost: the crawl reports it
                self.store.add(self.pending)

    def item_scraped(self, item: Page) -> None:
        if item.verdict is None or item.relevance is None or item.bad:
            return
        if kept_out(item.language, self.languages):
            return  # its R of 0 says its language, not its topic
        text = f"{item.title or ''}\n{item.text or ''}"[: self.chars]
        self.pending.append(SampledPage(item.verdict.first_relevance, item.depth, text))

    def check(self) -> None:
        """Once a second: add this process's new pages to the sample, take up a new
        generation, and start a refit when its turn has come."""
        try:
            pages, self.pending = self.pending, []
            self.store.add(pages)
            state = self.store.state()
        except FocusedError:  # Redis is lost: the crawl reports it and stops
            return
        if state.generation > self.generation and not self.fitting:
            if self.refitted is not None and self.refitted[0].number == state.generation:
                self.take_up(self.refitted)  # this process's own refit: no need to fit it again
            else:
                self.fitting = True
                d = threads.deferToThread(self.fit_published)
                d.addCallbacks(self.take_up, self.fit_failed)
        if state.fetched - state.pages >= self.wait(state.pages):
            self.job.start()

    def wait(self, last: int) -> int:
        """Pages to fetch crawl-wide after a refit at ``last`` pages before the next: at first
        FOCUSED_LEARN_PAGES, then as many as the crawl had (the sample doubles between two
        refits), at most FOCUSED_LEARN_SAMPLE (the sample is then new)."""
        return min(max(self.every, last), max(self.sample, self.every))

    # -- the refit, in the job's thread, one process at a time --------------------------------

    def refit(self, *, lease: Lease) -> Refit:
        """File the sample's pages, refuse a drifting refit, publish and re-score (what it
        writes, fenced by the lock's ``lease``; the re-scoring of the queue is not: a refit
        paused past its lease scores queued links by a model one refit older, and the next
        refit scores them again)."""
        started = time.perf_counter()
        state = self.worker_store.state()
        sample = self.worker_store.pages()
        learned = LearnedTopic(threshold=self.threshold)
        try:
            texts, labels = learned.examples(
                [p.text for p in sample],
                [p.relevance for p in sample],
                self.user,
                self.user_negatives,
            )
        except ValueError as exc:  # too early: too few pages on one side
            self.worker_store.postpone(state.fetched, lease)
            return Refit(0, time.perf_counter() - started, 0, str(exc), early=True)
        learned.fit_examples(texts, labels)
        seeds = [p for p in sample if p.depth == 0]
        why = learned.drift(
            self.user, self.user_before, [p.text for p in seeds], [p.relevance for p in seeds]
        )
        if why:
            self.worker_store.postpone(state.fetched, lease, refused=True)
            return Refit(0, time.perf_counter() - started, 0, why)
        top = learned.top_words(TOP_WORDS)
        positive, negative = learned.n_positive_, learned.n_negative_
        number = self.worker_store.publish(
            state.fetched, texts, labels, top, positive, negative, lease
        )
        rescored = self.rescore(learned) if self.rescores else 0
        generation = Generation(number, state.fetched, texts, labels, top, positive, negative)
        return Refit(number, time.perf_counter() - started, rescored, model=(generation, learned))

    def rescore(self, learned: LearnedTopic) -> int:
        """Score every queued link again with the refitted model (its anchor, as the
        judge scores a page's links), up or down."""
        scorer = self.scorer()
        scorer.refitted(learned)
        frontier: RedisFrontier = self.worker_frontier
        return frontier.rescore_anchors(scorer.anchor_relevance)

    def scorer(self) -> Judge:
        """A judge of the job's own, to score anchors off the reactor's thread (made on
        first use)."""
        if not hasattr(self, "_scorer"):
            self._scorer = Judge.from_plan(crawl_plan(self.crawler), self.crawler.settings)
        return self._scorer

    def done(self, refit: Refit | None) -> None:
        if refit is None:  # another process refitted
            return
        self.stats.set_value("focused/learn/seconds", round(refit.seconds, 3))
        if refit.early:
            logger.info("Topic not refitted yet: %(why)s", {"why": refit.why_not})
            return
        if not refit.generation:
            self.stats.inc_value("focused/learn/refused")
            logger.warning("Refit of the topic refused as drift: %(why)s", {"why": refit.why_not})
            return
        self.stats.inc_value("focused/learn/refits")
        self.stats.inc_value("focused/learn/rescored", refit.rescored)
        self.refitted = refit.model

    # -- every process: fit the published generation ------------------------------------------

    def fit_published(self) -> tuple[Generation, LearnedTopic] | None:
        generation = self.worker_store.generation()
        if generation is None:
            return None
        learned = LearnedTopic(threshold=self.threshold)
        return generation, learned.fit_examples(generation.texts, generation.labels)

    def take_up(self, fitted: tuple[Generation, LearnedTopic] | None) -> None:
        self.fitting = False
        if fitted is None:
            return
        generation, learned = fitted
        self.generation = generation.number
        self.stats.set_value("focused/learn/generation", generation.number)
        self.crawler.signals.send_catch_log(signal=topic_refitted, model=learned)
        logger.info(
            "Topic refitted at %(pages)d pages (generation %(generation)d): %(positive)d"
            " examples of the topic, %(negative)d off it; it now weighs most: %(top)s",
            {
                "pages": generation.pages,
                "generation": generation.number,
                "positive": generation.positive,
                "negative": generation.negative,
                "top": ", ".join(generation.top_words),
            },
        )

    def fit_failed(self, failure: Any) -> None:
        self.fitting = False
        self.stats.inc_value("focused/learn/failed")
        if failure.check(FocusedError):
            return
        logger.error("Fitting the refitted topic failed: %(error)s", {"error": failure.value})
