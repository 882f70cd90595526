"""The judge: what the crawl's topic makes of a page and of its links, made in one place.

``Judge.from_plan(plan, settings)`` builds it once from the crawl plan (the topic's model, the
anchor glosser, the word vectors, a learned topic once refitted) and ``judge(page)`` returns a
:class:`Verdict`: the page's R, whether it is relevant, its category, the good-path flag of hard
focus, its R by the topic as the user gave it, and for every out-link the R of its anchor and
the estimate of the page it leads to (the parent's R and the anchor's combined by the link
score, here and nowhere else), and the page's hub score. It imports no Scrapy and no Redis: the
classifier pipeline, the learner's re-scoring, topic edits, ``focused evaluate``, the label tool
and the benchmarks all call it.

How anchors are scored: an anchor text's R is kept (site navigation repeats the same anchors on
every page) and only anchors not seen before are scored, unless the model reads URLs, where an
out-link's R depends on its target too. With a ``glosser`` an anchor's R is the mean of its R
alone and with its WordNet gloss (:mod:`focused.relevance.gloss`), the latter scored once per
anchor text. With ``vectors`` (fitted word vectors, or a learned topic) an anchor's R is then
combined with its R from the vectors (alone, and with its gloss, averaged; once per anchor text
too) by adding their log-odds, the latter weighted ``vector_weight``: two experts that each know
what the other does not, as naive Bayes combines evidence. With ``page_vectors`` the page's own R
comes from them instead of the topic's model. The page, the anchor it was reached by and its
out-links' anchors (with contexts and glosses) are scored in one batch: one vectorizer pass, one
matrix product.

With ``shape`` (FOCUSED_PAGE_SHAPE; a topic of example pages judged by word vectors, see
:func:`page_shape`) the page's R, and its R by the topic as the user gave it, take the evidence
of its shape (:mod:`focused.relevance.shape`: a folder's own page or a file deep in it, a title
that calls it a home page) by adding its log-odds: a topic that is a kind of page (a course's
home page, not its syllabus) is told by the shape its examples have. Only the verdict takes it;
links are estimated from the page's words.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from focused.errors import FocusedError, one_of
from focused.items import PageLink
from focused.links.urls import origin
from focused.relevance.calibration import PositiveUnlabelledCalibration
from focused.relevance.gloss import AnchorGlosser
from focused.relevance.preprocess import hub_score
from focused.relevance.shape import PageShape, example_shape, shape_of
from focused.relevance.text import analyze
from focused.settings.check import choice, switch
from focused.strategies.registry import LINK_SCORES
from focused.topic.methods import own_example_files

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

    from focused.items import Page
    from focused.relevance.base import RelevanceModel, UrlRelevanceModel
    from focused.relevance.learned import LearnedTopic
    from focused.relevance.vectors import CategoryVectors, ExampleVectors
    from focused.topic.plan import CrawlPlan

__all__ = [
    "ANCHOR_CACHE",
    "Judge",
    "Verdict",
    "anchor_glosser",
    "found_share",
    "link_estimate",
    "log_odds_sum",
    "undecided",
]

logger = logging.getLogger(__name__)

# Anchor texts whose scores are kept; the caches start again when one is full.
ANCHOR_CACHE = 100_000
STOPWORD_SHARE_BOUND = 0.6  # of a page's words, at most (the hub score's shortcut)
# The calibration reads the R of the last CALIBRATION_PAGES pages judged and of at most
# CALIBRATION_SEEDS seeds; it is fitted again each time the pages judged have grown by a
# quarter (at least its min_pages).
CALIBRATION_PAGES = 4000
CALIBRATION_SEEDS = 100
# After a refit, a page is relevant only if the topic as the user gave it rates it at least as
# the seeds' SUPPORT_QUANTILE (known from at least SUPPORT_SEEDS seeds) does.
SUPPORT_QUANTILE = 0.25
SUPPORT_SEEDS = 3


def log_odds_sum(p: np.ndarray, q: np.ndarray, weight: float = 1.0) -> np.ndarray:
    """sigmoid(logit(p) + weight * logit(q)), each probability kept within [1e-4, 1 - 1e-4]."""
    p, q = np.clip(p, 1e-4, 1 - 1e-4), np.clip(q, 1e-4, 1 - 1e-4)
    return 1 / (1 + np.exp(-(np.log(p / (1 - p)) + weight * np.log(q / (1 - q)))))


def link_estimate(link_score: str, parent: float, anchor: float | None) -> float:
    """The estimate of a link's target from its parent's R and its anchor's (Batsakis et al.
    2009's best-first variants): the parent's under ``content`` or without an anchor R, their
    mean under ``both``, the anchor's under ``anchor`` and ``context``."""
    if link_score == "content" or anchor is None:
        return parent
    return (parent + anchor) / 2 if link_score == "both" else anchor


def name_matcher(names: Sequence[str]) -> Callable[[str], bool] | None:
    """Whether a text names one of ``names`` (every stemmed word of a name is among the
    text's: "Graduate students" names "student"); None when there are no names."""
    wanted = [frozenset(analyze(name, stem=True)) for name in names]
    wanted = [name for name in wanted if name]
    if not wanted:
        return None

    @lru_cache(maxsize=ANCHOR_CACHE)
    def names_one(text: str) -> bool:
        words = set(analyze(text, stem=True))
        return any(name <= words for name in wanted)

    return names_one


def category_names(good: str | Sequence[str]) -> list[str]:
    """The names a taxonomy's good categories (one, or several) go by: the last part of each
    path, its underscores and hyphens read as spaces ("Science/Biology/Birds" -> "Birds")."""
    good = [good] if isinstance(good, str) else good
    return [g.rsplit("/", 1)[-1].replace("_", " ").replace("-", " ") for g in good]


def page_shape(plan: CrawlPlan) -> PageShape | None:
    """The shape of the topic's pages, learnt from its example pages (None without any).
    The judge takes it where word vectors give the page's R (a topic of example pages without
    negatives, or of keywords with examples): an R that grades pages, which the shape's
    evidence moves. A taxonomy's naive Bayes R is 0 or 1 on most pages, where the evidence
    only flips the few near the cut: on WebKB it left the taxonomy's verdict F1 as it was
    (.20 and .19 at 250) and its verdicts, which credit the sites the crawl goes on with, found
    a quarter fewer project pages by 250 (of the oracle 1.11 and 1.23 without, .82 twice with)."""
    files = own_example_files(plan.topic)
    return PageShape().fit([example_shape(path) for path in files]) if files else None


def anchor_glosser(setting: Any, wordnet: str | None = None) -> AnchorGlosser | None:
    """The glosser FOCUSED_ANCHOR_GLOSS asks for: "auto" (one when WordNet is found, else None
    and a warning that says how to install it), true (WordNet required) or false (None).
    ``wordnet``: the topic's WordNet folder (``relevance.wordnet``), None for the default."""
    value = switch("FOCUSED_ANCHOR_GLOSS", setting)
    if value == "false":
        return None
    try:
        return AnchorGlosser(wordnet)
    except FocusedError as exc:
        if value != "auto":
            raise
        logger.warning("Anchors are scored without glosses: %s", exc)
        return None


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the judge made of a page: its R, ``probability`` (P(relevant), R calibrated on the
    crawl's pages: :mod:`focused.relevance.calibration`; R itself until the calibration has
    fitted, or without one) and ``relevant`` (the probability at least the calibration's
    cut, else R at least the threshold), its best category, ``first_relevance`` (R by the
    topic as the user gave it, what a learning topic learns from), ``path_good`` (hard focus
    only, else None), its out-links with their anchors' R and estimates, ``arrival`` (R of
    the anchor the page was reached by, if scored) and ``arrival_estimate`` (that link's
    estimate, for the online link model; None for a page without a classified parent), its
    hub score (None below FOCUSED_HUB_MIN_SCORE) and how many of its anchors were scored
    with their glosses."""

    relevance: float
    relevant: bool
    category: str | None
    first_relevance: float
    links: list[PageLink] = field(default_factory=list)
    path_good: bool | None = None
    arrival: float | None = None
    arrival_estimate: float | None = None
    hub_score: float | None = None
    glossed: int = 0
    probability: float = 0.0
    cut: float = 0.5  # the probability from which this verdict calls a page relevant

    @classmethod
    def unjudged(cls, links: Sequence[PageLink]) -> Verdict:
        """A page nobody judged (no classifier in the crawl): R 0, its links as they are."""
        return cls(0.0, False, None, 0.0, list(links))

    def refused(self) -> Verdict:
        """The verdict on a page the topic refuses whatever its text (a language it does not
        keep): R 0, not relevant, no good path, and 0 for every link's estimate."""
        return replace(
            self,
            relevance=0.0,
            first_relevance=0.0,
            probability=0.0,
            relevant=False,
            path_good=None if self.path_good is None else False,
            links=[
                PageLink(
                    link.url,
                    link.anchor,
                    link.context,
                    None if link.anchor_relevance is None else 0.0,
                    0.0,
                )
                for link in self.links
            ],
        )


def undecided(verdict: Verdict, margin: float) -> bool:
    """Whether a page is near enough the cut, or past it, that a later judge may call it
    relevant: its probability reaches ``margin`` times the cut its verdict was made by
    (FOCUSED_WARC_UNDECIDED). The WARC
    writer keeps such a page's response record, and ``focused export --rejudge`` calls relevant
    only a page whose response record is kept: so a page below the margin stays not relevant,
    and the WARC files hold every page the crawl's final judge calls relevant."""
    return verdict.probability >= margin * verdict.cut


@dataclass(slots=True)
class _Batch:
    """One page's texts to score together, and where the anchors' R will come from."""

    texts: list[str]
    scored: list[str]  # the anchors scored in this batch (every one when the model reads URLs)
    glossed: dict[int, float] = field(default_factory=dict)  # anchor's position -> R with gloss
    pending: dict[str, list[int]] = field(default_factory=dict)  # glossed, not scored before
    glosses: dict[str, str] = field(default_factory=dict)  # their glosses


class Judge:
    """Scores pages and their links with the topic (see the module docstring).

    Only the first ``max_chars`` characters of a page's text are scored (0: all); with
    ``main_text`` a page is judged by its title and main text (which the caller extracts
    first), else by its whole text. ``named`` says which titles name the topic (a thesaurus's
    preferred terms): such a page is relevant whatever its text. ``names_topic`` says which
    anchor texts name the topic (a taxonomy's good categories): such a link is estimated at
    least at the threshold, whatever the model makes of so few words. Pages of a kind (course
    or faculty home pages) rarely name their kind, so a model of their text scores the
    anchors that do ("Courses", "Graduate students") near 0, and those lead to index pages
    of the kind.
    """

    def __init__(
        self,
        model: RelevanceModel,
        *,
        threshold: float,
        link_score: str,
        needs_path: bool = False,
        max_chars: int = 0,
        reads_urls: bool = False,
        glosser: AnchorGlosser | None = None,
        vectors: CategoryVectors | LearnedTopic | None = None,
        vector_weight: float = 1.0,
        page_vectors: CategoryVectors | ExampleVectors | LearnedTopic | None = None,
        main_text: bool = False,
        named: Callable[[Sequence[str]], np.ndarray] | None = None,
        names_topic: Callable[[str], bool] | None = None,
        hub_min_score: float = 0.05,
        calibration: PositiveUnlabelledCalibration | None = None,
        shape: PageShape | None = None,
    ):
        if link_score not in LINK_SCORES:
            raise ValueError(f"link_score: expected {one_of(LINK_SCORES)}, got {link_score!r}")
        self.model = model
        self.threshold = threshold
        self.link_score = link_score
        self.needs_path = needs_path
        self.max_chars = max_chars
        self.reads_urls = reads_urls
        self.glosser = glosser
        self.vectors = vectors
        self.vector_weight = vector_weight
        self.page_vectors = page_vectors
        self.main_text = main_text
        self.named = named
        self.names_topic = names_topic
        self.hub_min_score = hub_min_score
        self.calibration = calibration
        self.shape = shape
        # the R of the pages judged (the latest CALIBRATION_PAGES) and of the seeds among them,
        # with the seeds' documents, scored again when the topic is refitted
        self.judged: deque[float] = deque(maxlen=CALIBRATION_PAGES)
        self.seeds: list[tuple[str, float]] = []
        self.seed_support: list[float] = []  # the seeds' R by the topic as the user gave it
        self.judged_count = 0
        self.next_calibration = calibration.min_pages if calibration is not None else 0
        # the page model a learning topic started with, once it has been refitted
        self.first_page_vectors: CategoryVectors | ExampleVectors | LearnedTopic | None = None
        # anchor -> the model's R of the anchor text alone (not kept when the model reads URLs)
        self.anchor_scores: dict[str, float] = {}
        # anchor -> R with its gloss; None: WordNet does not know the anchor
        self.glossed_relevance: dict[str, float | None] = {}
        # anchor -> R from word vectors (the mean of alone and with its gloss)
        self.vector_relevance: dict[str, float] = {}

    @classmethod
    def from_plan(cls, plan: CrawlPlan, settings: BaseSettings) -> Judge:
        """The judge of a crawl's plan and settings."""
        # vector_model warns if the package is missing
        vectors = (
            plan.vector_model(settings.get("FOCUSED_VECTORS"))
            if plan.vectors_judge_pages or plan.vectors_estimate_anchors
            else None
        )
        model = plan.model()
        return cls(
            model,
            threshold=plan.threshold,
            link_score=plan.link_score,
            needs_path=plan.hard,
            max_chars=settings.getint("FOCUSED_MAX_TEXT_CHARS"),
            reads_urls=plan.reads_anchors,
            glosser=(
                anchor_glosser(
                    settings.get("FOCUSED_ANCHOR_GLOSS"), plan.topic.relevance.get("wordnet")
                )
                if plan.scores_anchors
                else None
            ),
            vectors=vectors if plan.vectors_estimate_anchors else None,
            vector_weight=settings.getfloat("FOCUSED_VECTOR_WEIGHT"),
            page_vectors=vectors if plan.vectors_judge_pages else None,
            main_text=choice(settings, "FOCUSED_CLASSIFY_TEXT") == "main",
            named=getattr(model, "named", None),
            names_topic=name_matcher(category_names(getattr(model, "good", None) or ())),
            hub_min_score=settings.getfloat("FOCUSED_HUB_MIN_SCORE"),
            calibration=(
                PositiveUnlabelledCalibration()
                if settings.getbool("FOCUSED_CALIBRATE") and not plan.threshold_given
                else None
            ),
            shape=(
                page_shape(plan)
                if settings.getbool("FOCUSED_PAGE_SHAPE") and plan.vectors_judge_pages
                else None
            ),
        )

    @property
    def scores_anchors(self) -> bool:
        """Whether links are estimated from their anchors (any link score but ``content``)."""
        return self.link_score != "content"

    def refitted(self, model: LearnedTopic) -> None:
        """Judge with a light topic's refitted model from now on: it gives pages' R, and its
        R of each anchor is added to the topic's own by log-odds, as a taxonomy's word vectors
        are. Anchors' kept R from the vectors is forgotten (the topic's own model is unchanged,
        so its R of them is kept). Pages keep their R by the topic as the user gave it too
        (``first_relevance``): what the next refit learns from, so that a refit never learns
        from its own verdicts and drifts with them."""
        if self.first_page_vectors is None:
            self.first_page_vectors = self.page_vectors
        self.vectors = self.page_vectors = model
        self.vector_relevance.clear()
        if self.calibration is not None:
            # the pages' R so far is the old model's: the calibration (kept until then) is
            # fitted again once min_pages pages are judged by the new one
            documents = [document for document, _ in self.seeds]
            self.seeds = list(zip(documents, self.relevance(documents).tolist(), strict=True))
            self.judged.clear()
            self.next_calibration = self.judged_count + self.calibration.min_pages

    # -- the caches ------------------------------------------------------------------------

    def bound_caches(self) -> None:
        """Start the caches again when one is full (ANCHOR_CACHE anchor texts)."""
        caches = (self.anchor_scores, self.glossed_relevance, self.vector_relevance)
        if any(len(cache) >= ANCHOR_CACHE for cache in caches):
            self.clear_caches()

    def clear_caches(self) -> None:
        """Forget every anchor's kept scores: when one cache is full, or to time a cold start."""
        self.anchor_scores.clear()
        self.glossed_relevance.clear()
        self.vector_relevance.clear()

    # -- a page ----------------------------------------------------------------------------

    def relevance(self, documents: Sequence[str]) -> np.ndarray:
        """R of whole documents as pages are judged (by the word vectors where they judge
        pages, else by the topic's model): the topic's own texts, example paths."""
        if self.page_vectors is not None:
            return self.page_vectors.relevance(list(documents))
        return self.model.score_pages(list(documents))[0]

    def document(self, page: Page) -> str:
        """The text a page is judged by: its title, then its (main) text, cut at max_chars."""
        text = (page.main_text or page.text) if self.main_text else page.text
        return f"{page.title}\n{text[: self.max_chars] if self.max_chars else text}"

    def __call__(self, page: Page) -> Verdict:
        """The verdict on a page (its main text extracted first where the judge reads it)."""
        doc = self.document(page)
        links = page.links if self.scores_anchors else []
        own = [page.anchor] if self.scores_anchors and page.anchor else []
        anchors = [*own, *(link.anchor for link in links)]
        self.bound_caches()
        batch = self._batch(doc, anchors, links)
        relevance, category = self._score(batch, page, len(own), links)
        named = self.named is not None and bool(self.named([page.title or ""])[0])
        r, first = self._page_relevance(doc, named, float(relevance[0]))
        words = r  # what the page's links are estimated from: its words, not its shape
        if self.shape is not None:
            r, first = self._shaped(page, r, first, named)
        probability, relevant, cut = self._calibrated(doc, r, first, page.depth == 0, named)
        path_good = None
        if self.needs_path:
            path_good = (
                words >= self.threshold
                if self.page_vectors is not None
                else bool(self.model.best_path_good([doc])[0])
            )
        link_r = arrival = None
        if anchors:
            scores = self._anchor_relevance(batch, relevance, anchors)
            if own:
                arrival, scores = float(scores[0]), scores[1:]
            if links and self.link_score == "context":
                start = 1 + len(batch.scored)
                scores = np.sqrt(scores * np.asarray(relevance[start : start + len(links)]))
            link_r = scores.tolist() if links else None
        leased = page.leased
        parent = leased.parent_relevance if leased is not None else None
        return Verdict(
            r,
            relevant,
            category[0],
            first,
            self._estimated(page.links, words, link_r),
            path_good,
            arrival,
            None if parent is None else link_estimate(self.link_score, float(parent), arrival),
            self.hub_score(page),
            len(batch.glossed),
            probability,
            cut,
        )

    def _calibrated(
        self, doc: str, r: float, first: float, seed: bool, named: bool
    ) -> tuple[float, bool, float]:
        """The page's probability, whether it is relevant and the cut that says so; the page's
        R recorded for the calibration, which is fitted again when its time has come (a fit
        costs a few milliseconds). Once a learning topic is refitted, a page is relevant only
        where the topic as the user gave it supports it too (:meth:`supported`)."""
        if seed and len(self.seeds) < CALIBRATION_SEEDS:
            self.seeds.append((doc, r))
            self.seed_support.append(first)
        calibration = self.calibration
        if calibration is not None and not seed:
            self.judged.append(r)
            self.judged_count += 1
            if self.judged_count >= self.next_calibration:
                calibration.fit(self.judged, [score for _, score in self.seeds])
                grown = max(calibration.min_pages, self.judged_count // 4)
                self.next_calibration = self.judged_count + grown
        if (
            calibration is None
            or not getattr(calibration, "fitted_", False)
            or calibration.cut_ is None
        ):
            return r, r >= self.threshold and self.supported(first), self.threshold
        probability = round(float(calibration.probability([r])[0]), 6)
        relevant = probability >= calibration.cut_ and self.supported(first)
        return probability, named or relevant, calibration.cut_

    def supported(self, first: float) -> bool:
        """Whether the topic as the user gave it supports calling a page relevant: always
        before a refit; after one, its R of the page (``first_relevance``) reaches that of the
        seeds' lower quartile. A refit learns the topic's vocabulary from the crawl's pages,
        and once the topic's own pages run out its verdicts drift to the neighbours the crawl
        then fetches; a page the user's own topic rates below most seeds is not the topic's."""
        if self.first_page_vectors is None or len(self.seed_support) < SUPPORT_SEEDS:
            return True
        return first >= float(np.quantile(self.seed_support, SUPPORT_QUANTILE))

    def _page_relevance(self, doc: str, named: bool, r: float) -> tuple[float, float]:
        """The page's R and its R by the topic as the user gave it, rounded to 6 places (at
        least the threshold for a page whose title ``named`` the topic)."""
        first = r
        if self.page_vectors is not None:
            r = first = float(self.page_vectors.relevance([doc])[0])
        if self.first_page_vectors is not None:
            first = float(self.first_page_vectors.relevance([doc])[0])
        if named:
            r, first = max(r, self.threshold), max(first, self.threshold)
        return round(r, 6), round(first, 6)

    def _shaped(self, page: Page, r: float, first: float, named: bool) -> tuple[float, float]:
        """The page's R and first R with its shape's evidence added (the page joins the
        shape's background first), rounded to 6 places. Only the verdict takes it: the page's
        links are estimated from its words, as its shape says what it is, not what it links
        to (on WebKB's project topic the shaped R as the links' parent R found a third fewer
        project pages by 250)."""
        assert self.shape is not None
        shape = shape_of(page.url, page.title or "")
        evidence = float(self.shape.partial_fit([shape]).log_odds([shape])[0])
        if not evidence:
            return r, first
        shaped = log_odds_sum(np.array([r, first]), np.array(1 / (1 + np.exp(-evidence))))
        if named:
            shaped = np.maximum(shaped, self.threshold)
        return round(float(shaped[0]), 6), round(float(shaped[1]), 6)

    def _estimated(
        self, links: list[PageLink], parent: float, anchors: list[float] | None
    ) -> list[PageLink]:
        """The page's links, each given its anchor's R and its estimate (in place: a page is
        judged once, and its links are many)."""
        if anchors is None:
            for link in links:
                link.anchor_relevance, link.estimate = None, parent
            return links
        score = self.link_score
        for link, a in zip(links, anchors, strict=True):
            link.anchor_relevance, link.estimate = a, link_estimate(score, parent, a)
        return links

    def _batch(self, doc: str, anchors: list[str], links: Sequence[PageLink]) -> _Batch:
        """The page's texts to score in one batch: the page, the anchors whose R is not kept
        (every one when the model reads URLs), the links' contexts under ``context``, and the
        glossed anchors not scored before."""
        scored = (
            anchors
            if self.reads_urls
            else [anchor for anchor in dict.fromkeys(anchors) if anchor not in self.anchor_scores]
        )
        batch = _Batch([doc, *scored], scored)
        if self.link_score == "context":
            batch.texts += [link.context for link in links]
        if self.glosser is not None:
            self._add_glosses(batch, anchors)
        return batch

    def _add_glosses(self, batch: _Batch, anchors: list[str]) -> None:
        assert self.glosser is not None
        known = self.glossed_relevance
        for i, anchor in enumerate(anchors):
            if anchor in known:
                if (r := known[anchor]) is not None:
                    batch.glossed[i] = r
            elif anchor in batch.pending:
                batch.pending[anchor].append(i)
            elif gloss := self.glosser.gloss(anchor):
                batch.pending[anchor] = [i]
                batch.glosses[anchor] = gloss
                batch.texts.append(f"{anchor}\n{gloss}")
            else:
                known[anchor] = None

    def _score(
        self, batch: _Batch, page: Page, own: int, links: Sequence[PageLink]
    ) -> tuple[np.ndarray, Sequence[str | None]]:
        """R and category of every text of the batch; a model that reads URLs gets the page's
        URL and anchor and each out-link's target URL beside its anchor."""
        if not self.reads_urls:
            return self.model.score_pages(batch.texts)
        n = len(batch.texts)
        urls: list[str | None] = [page.url, *([None] * own), *(link.url for link in links)]
        urls += [None] * (n - len(urls))
        page_anchor = [page.anchor or None, *([None] * (n - 1))]
        model = cast("UrlRelevanceModel", self.model)  # reads_urls: the plan says it does
        return model.score_pages(batch.texts, urls=urls, anchors=page_anchor)

    def _anchor_relevance(
        self, batch: _Batch, relevance: np.ndarray, anchors: list[str]
    ) -> np.ndarray:
        """Each anchor's R from the batch's scores, its kept R, its gloss and word vectors."""
        if self.reads_urls:
            scores = np.asarray(relevance[1 : 1 + len(anchors)], dtype=float)
        else:
            kept, scored = self.anchor_scores, batch.scored
            kept.update(zip(scored, relevance[1 : 1 + len(scored)].tolist(), strict=True))
            scores = np.fromiter((kept[anchor] for anchor in anchors), float, len(anchors))
        glossed = batch.glossed
        if batch.pending:
            tail = relevance[-len(batch.pending) :]
            for (anchor, at), r in zip(batch.pending.items(), tail, strict=True):
                self.glossed_relevance[anchor] = float(r)
                glossed.update(dict.fromkeys(at, float(r)))
        if glossed:
            at = list(glossed)
            scores[at] = (scores[at] + np.fromiter(glossed.values(), float, len(at))) / 2
        if self.vectors is not None:
            scores = log_odds_sum(
                scores, self.vector_scores(anchors, batch.glosses), self.vector_weight
            )
        return self._named_anchors(anchors, scores)

    def _named_anchors(self, anchors: Sequence[str], scores: np.ndarray) -> np.ndarray:
        """The anchors' R, at least the threshold where an anchor names the topic."""
        if self.names_topic is None:
            return scores
        named = np.fromiter(map(self.names_topic, anchors), bool, len(anchors))
        return np.where(named, np.maximum(scores, self.threshold), scores)

    def hub_score(self, page: Page) -> float | None:
        """Badia et al. 2006's hub score of a page, if it reaches ``hub_min_score``: links to
        other sites per word of content (the text without the anchors' words, without
        stopwords).

        Counting content words costs about 1 ms on a long page, so pages that could only be
        hubs if more than STOPWORD_SHARE_BOUND of their words were stopwords are left out on
        a whitespace count first (English text has about half).
        """
        host = origin(page.url)  # the page's and its links' URLs are clean (focused.links.urls)
        external = sum(origin(link.url) != host for link in page.links)
        if not external:
            return None
        text = page.text or ""
        anchors = " ".join(link.anchor for link in page.links)
        rough = len(text.split()) - len(anchors.split())
        if (
            self.hub_min_score > 0
            and rough * (1 - STOPWORD_SHARE_BOUND) * self.hub_min_score > external
        ):
            return None
        words = len(analyze(text)) - len(analyze(anchors))
        score = hub_score(external, max(words, 0))
        return score if score >= self.hub_min_score else None

    # -- anchors alone -----------------------------------------------------------------------

    def anchor_relevance(self, anchors: list[str]) -> np.ndarray:
        """R of each anchor text as a page's links are judged (the model's R, with its gloss,
        then word vectors), for a model that does not read URLs: to score queued links again
        after a refit or a topic edit."""
        self.bound_caches()
        known, glossed = self.anchor_scores, self.glossed_relevance
        distinct = list(dict.fromkeys(anchors))
        new = [anchor for anchor in distinct if anchor not in known]
        glosses: dict[str, str] = {}
        if self.glosser is not None:
            for anchor in distinct:
                if anchor in glossed:
                    continue
                if gloss := self.glosser.gloss(anchor):
                    glosses[anchor] = gloss
                else:
                    glossed[anchor] = None
        texts = [*new, *(f"{anchor}\n{gloss}" for anchor, gloss in glosses.items())]
        if texts:
            r, _ = self.model.score_pages(texts)
            known.update(zip(new, r[: len(new)].tolist(), strict=True))
            glossed.update(zip(glosses, r[len(new) :].tolist(), strict=True))
        scores = np.fromiter((known[anchor] for anchor in anchors), float, len(anchors))
        if self.glosser is not None:
            with_gloss = np.array([glossed[anchor] for anchor in anchors], dtype=float)
            at = ~np.isnan(with_gloss)
            scores[at] = (scores[at] + with_gloss[at]) / 2
        if self.vectors is not None:
            scores = log_odds_sum(scores, self.vector_scores(anchors, glosses), self.vector_weight)
        return self._named_anchors(anchors, scores)

    def vector_scores(self, anchors: list[str], glosses: dict[str, str]) -> np.ndarray:
        """Each anchor's R from word vectors: the mean of its R alone and with its gloss (from
        ``glosses``, which holds those of the anchors not scored before), scored in one batch
        for the anchors not seen before (called only with word vectors on)."""
        assert self.vectors is not None
        known = self.vector_relevance
        new = [anchor for anchor in dict.fromkeys(anchors) if anchor not in known]
        if new:
            glossed = [anchor for anchor in new if anchor in glosses]
            texts = [*new, *(f"{anchor}\n{glosses[anchor]}" for anchor in glossed)]
            r = self.vectors.relevance(texts)
            known.update(zip(new, r[: len(new)].tolist(), strict=True))
            for anchor, with_gloss in zip(glossed, r[len(new) :].tolist(), strict=True):
                known[anchor] = (known[anchor] + with_gloss) / 2
        return np.fromiter((known[anchor] for anchor in anchors), float, len(anchors))

    def anchor_prior(self, links: Sequence[PageLink]) -> np.ndarray:
        """R of each link's anchor text from the model (and word vectors) without glosses,
        which cost ten times more: which links of a page with too many to keep (called a
        slice at a time by the pipeline, which gives the reactor back between two)."""
        anchors = [link.anchor for link in links]
        texts = anchors if self.reads_urls else list(dict.fromkeys(anchors))
        if self.reads_urls:
            model = cast("UrlRelevanceModel", self.model)  # reads_urls: the plan says it does
            urls: list[str | None] = [link.url for link in links]
            r, _ = model.score_pages(texts, urls=urls, anchors=[None] * len(texts))
        else:
            r, _ = self.model.score_pages(texts)
        if self.vectors is not None:
            r = log_odds_sum(r, self.vectors.relevance(texts), self.vector_weight)
        if self.reads_urls:
            return self._named_anchors(anchors, np.asarray(r, dtype=float))
        estimate = dict(zip(texts, r.tolist(), strict=True))
        scores = np.fromiter((estimate[anchor] for anchor in anchors), float, len(anchors))
        return self._named_anchors(anchors, scores)


def found_share(verdict: Verdict) -> float:
    """What a judged page counts for among the relevant pages found, from 0 to 1: the estimate
    of what is left to find adds it up, crawl-wide and per score bucket of its calibration
    (:mod:`focused.monitor.coverage`). It is the calibrated verdict, 1 or 0: summing the
    probabilities instead counted the many pages of low probability in a crawl's lowest
    buckets as a share of a relevant page each, and the estimate of what is left never fell;
    and after a learning topic's refit the verdict holds only where the topic as the user gave
    it supports it (:meth:`Judge.supported`), so that the estimate does not grow as the
    refit's verdicts drift to a neighbouring topic."""
    return 1.0 if verdict.relevant else 0.0
