"""ClassifierPipeline: R(d), the best category and the good-path flag of every good page."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from scrapy.utils.asyncio import run_in_thread, sleep

from focused.errors import FocusedError, exit_on_user_error
from focused.links.extract import LINKS_PER_PAUSE
from focused.relevance.content import main_text
from focused.relevance.gloss import AnchorGlosser
from focused.settings.check import choice, switch
from focused.signals import topic_refitted
from focused.topic.plan import crawl_plan

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.relevance.base import RelevanceModel, UrlRelevanceModel
    from focused.relevance.learned import LearnedTopic
    from focused.relevance.vectors import CategoryVectors, ExampleVectors

logger = logging.getLogger(__name__)


def log_odds_sum(p: np.ndarray, q: np.ndarray, weight: float = 1.0) -> np.ndarray:
    """sigmoid(logit(p) + weight * logit(q)), each probability kept within [1e-4, 1 - 1e-4]."""
    p, q = np.clip(p, 1e-4, 1 - 1e-4), np.clip(q, 1e-4, 1 - 1e-4)
    return 1 / (1 + np.exp(-(np.log(p / (1 - p)) + weight * np.log(q / (1 - q)))))


# Anchor texts whose scores are kept (site navigation repeats the same anchors on every page, so
# an anchor is scored, looked up in WordNet and its gloss scored once per anchor text, not once
# per link); the caches start again when one is full.
ANCHOR_CACHE = 100_000


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


class ClassifierPipeline:
    """Scores each fetched HTML page with the topic's relevance model.

    Sets ``relevance``, ``relevant`` (R >= ``relevant_threshold``), ``category`` and
    ``path_good``; with any link score but ``content`` also ``link_scores``, the R of each
    out-link's anchor text (with ``context``, the geometric mean of that and R of the anchor in
    its context), and ``anchor_relevance``, the R of the anchor text the page was reached by
    (for the online link model), all scored in one batch. An anchor text's R is kept and
    only anchors not seen before are scored, unless the model reads URLs (``reads_urls``),
    where an out-link's R depends on its target too. With a ``glosser`` an anchor's R is
    the mean of its R alone and with its gloss (:mod:`focused.relevance.gloss`), the latter
    scored once per anchor text; glossed anchors are counted in ``focused/links/glossed``.
    With ``vectors`` (a fitted CategoryVectors) an anchor's R is then combined with its R from
    word vectors (alone, and with its gloss, averaged; once per anchor text too) by adding
    their log-odds, the latter weighted ``vector_weight``: two experts that each know what the
    other does not, as naive Bayes combines evidence. With ``page_vectors`` the page's own R
    (and so ``relevant`` and ``path_good``) comes from them instead of the topic's model.
    Only the first FOCUSED_MAX_TEXT_CHARS characters of the text are scored, and only the
    ``max_links`` (FOCUSED_MAX_LINKS_PER_PAGE) best of a page's links are taken
    (:meth:`take_links`). Bad pages pass through untouched.

    It also sets ``main_text`` (and ``markdown`` with ``markdown``; counted in
    ``focused/main_text/extracted`` and ``.../empty``) for the pages ``main_text_pages`` names:
    here, because only here is a page's relevance known, and extracting every page adds half
    again to a crawl's CPU, the relevant ones a twelfth. With ``classify_text = "main"`` every
    page is extracted first and its title and main text are scored (the whole page's text
    where trafilatura finds no main text).
    """

    def __init__(
        self,
        model: RelevanceModel,
        *,
        threshold: float,
        link_score: str,
        needs_path: bool,
        max_chars: int = 0,
        reads_urls: bool = False,
        glosser: AnchorGlosser | None = None,
        vectors: CategoryVectors | LearnedTopic | None = None,
        vector_weight: float = 1.0,
        page_vectors: CategoryVectors | ExampleVectors | LearnedTopic | None = None,
        classify_text: str = "page",
        main_text_pages: str = "none",
        markdown: bool = False,
        max_links: int = 0,
        named: Callable[[Sequence[str]], np.ndarray] | None = None,
        stats: Any = None,
    ):
        self.model = model
        self.threshold = threshold
        self.link_score = link_score
        self.needs_path = needs_path
        self.max_chars = max_chars
        self.reads_urls = reads_urls
        self.glosser = glosser
        # anchor -> the model's R of the anchor text alone (not kept when the model reads URLs)
        self.anchor_scores: dict[str, float] = {}
        # anchor -> R with its gloss; None: WordNet does not know the anchor
        self.glossed_relevance: dict[str, float | None] = {}
        self.vectors = vectors
        self.vector_weight = vector_weight
        self.page_vectors = page_vectors
        # anchor -> R from word vectors (the mean of alone and with its gloss)
        self.vector_relevance: dict[str, float] = {}
        self.classify_text = classify_text
        self.main_text_pages = main_text_pages
        self.markdown = markdown
        self.max_links = max_links
        self.named = named
        # the page model a learning topic started with, once it has been refitted
        self.first_page_vectors: CategoryVectors | ExampleVectors | None = None
        self.stats = stats

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> ClassifierPipeline:
        s = crawler.settings
        plan = crawl_plan(crawler)
        # vector_model warns if the package is missing
        vectors = (
            plan.vector_model(s.get("FOCUSED_VECTORS"))
            if plan.vectors_judge_pages or plan.vectors_estimate_anchors
            else None
        )
        model = plan.model()
        pipeline = cls(
            model,
            threshold=plan.threshold,
            link_score=plan.link_score,
            needs_path=plan.hard,
            max_chars=s.getint("FOCUSED_MAX_TEXT_CHARS"),
            reads_urls=plan.reads_anchors,
            glosser=(
                anchor_glosser(s.get("FOCUSED_ANCHOR_GLOSS"), plan.topic.relevance.get("wordnet"))
                if plan.scores_anchors
                else None
            ),
            vectors=vectors if plan.vectors_estimate_anchors else None,
            vector_weight=s.getfloat("FOCUSED_VECTOR_WEIGHT"),
            page_vectors=vectors if plan.vectors_judge_pages else None,
            classify_text=choice(s, "FOCUSED_CLASSIFY_TEXT"),
            main_text_pages=choice(s, "FOCUSED_MAIN_TEXT"),
            markdown=s.getbool("FOCUSED_FEED_MARKDOWN"),
            max_links=s.getint("FOCUSED_MAX_LINKS_PER_PAGE"),
            named=getattr(model, "named", None),
            stats=crawler.stats,
        )
        if plan.learns:
            crawler.signals.connect(pipeline.refitted, signal=topic_refitted)
        return pipeline

    def refitted(self, model: LearnedTopic) -> None:
        """Score with a light topic's refitted model from now on: it gives pages' R, and its
        R of each anchor is added to the topic's own by log-odds, as a taxonomy's word vectors
        are. Anchors' kept R from the vectors is forgotten (the topic's own model is unchanged,
        so its R of them is kept). Pages keep their R by the topic as the user gave it too
        (``first_relevance``): what the next refit learns from, so that a refit never learns
        from its own verdicts and drifts with them."""
        if self.first_page_vectors is None:
            self.first_page_vectors = self.page_vectors
        self.vectors = self.page_vectors = model
        self.vector_relevance.clear()

    async def extract(self, item: Any) -> None:
        """Set the page's ``main_text`` (and ``markdown``) from its HTML, extracted in a thread:
        trafilatura takes seconds on a page of a hundred thousand links."""
        extracted = await run_in_thread(main_text, item["html"], markdown=self.markdown)
        item["main_text"] = extracted.text
        if self.markdown:
            item["markdown"] = extracted.markdown
        if self.stats is not None:
            self.stats.inc_value("focused/main_text/extracted")
            if not extracted.text:
                self.stats.inc_value("focused/main_text/empty")

    def caches(self) -> tuple[dict[str, Any], ...]:
        """The scores kept per anchor text, bounded and cleared together."""
        return self.anchor_scores, self.glossed_relevance, self.vector_relevance

    def bound_caches(self) -> None:
        """Start the caches again when one is full (ANCHOR_CACHE anchor texts)."""
        if any(len(cache) >= ANCHOR_CACHE for cache in self.caches()):
            self.clear_caches()

    def clear_caches(self) -> None:
        """Forget every anchor's kept scores: when one cache is full, or to time a cold start."""
        for cache in self.caches():
            cache.clear()

    def anchor_relevance(self, anchors: list[str]) -> np.ndarray:
        """R of each anchor text as :meth:`classify` scores a page's links (the model's R,
        with its gloss, then word vectors), for a model that does not read URLs: to score
        queued links again after a refit."""
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
        return scores

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

    async def process_item(self, item: Any) -> Any:
        """Take at most ``max_links`` of the page's links (:meth:`take_links`), classify it
        (:meth:`classify`) and extract its main text where asked: the work on a page of a
        hundred thousand links is done in slices or in a thread, not in one hold of the
        reactor."""
        if item["bad"]:
            return item
        await self.take_links(item)
        if self.classify_text == "main":
            await self.extract(item)
        self.classify(item)
        if item.get("main_text") is None and (
            self.main_text_pages == "all" or self.main_text_pages == "relevant" and item["relevant"]
        ):
            await self.extract(item)
        return item

    async def take_links(self, item: Any) -> None:
        """Keep at most ``max_links`` of the page's links (0: all), so that what a page costs
        to score, gloss and queue is bounded: past that many, a URL's links after its first
        are dropped, then the ``max_links`` whose anchor texts score best with the model
        alone (with word vectors too, but without glosses, which cost ten times more) are
        kept, in page order; under the ``content`` link score, which scores no anchor, the
        first ones. The others are counted in ``focused/links/capped``."""
        links = item["links"]
        if not self.max_links or len(links) <= self.max_links:
            return
        first: dict[str, tuple[str, str, str]] = {}
        for link in links:
            first.setdefault(link[0], link)
        links = list(first.values())
        if len(links) > self.max_links:
            if self.link_score == "content":
                best: Iterable[int] = range(self.max_links)
            else:
                scores = await self.anchor_estimates(links)
                best = np.sort(np.argsort(-scores, kind="stable")[: self.max_links])
            if self.stats is not None:
                self.stats.inc_value("focused/links/capped", len(links) - self.max_links)
            links = [links[i] for i in best]
        item["links"] = links

    async def anchor_estimates(self, links: list[tuple[str, str, str]]) -> np.ndarray:
        """R of each link's anchor text from the model (and word vectors) without glosses,
        LINKS_PER_PAUSE anchors at a time, giving the reactor back between two."""
        anchors = [anchor for _, anchor, _ in links]
        texts = anchors if self.reads_urls else list(dict.fromkeys(anchors))
        r = np.empty(len(texts))
        for start in range(0, len(texts), LINKS_PER_PAUSE):
            chunk = texts[start : start + LINKS_PER_PAUSE]
            if self.reads_urls:
                urls = [url for url, _, _ in links[start : start + LINKS_PER_PAUSE]]
                model = cast("UrlRelevanceModel", self.model)  # reads_urls: the plan says it does
                got, _ = model.score_pages(chunk, urls=urls, anchors=[None] * len(chunk))
            else:
                got, _ = self.model.score_pages(chunk)
            if self.vectors is not None:
                got = log_odds_sum(got, self.vectors.relevance(chunk), self.vector_weight)
            r[start : start + len(chunk)] = got
            await sleep(0)
        if self.reads_urls:
            return r
        estimate = dict(zip(texts, r.tolist(), strict=True))
        return np.fromiter((estimate[anchor] for anchor in anchors), float, len(anchors))

    def classify(self, item: Any) -> Any:
        """Score a good page and its links (the class docstring); its main text must be
        extracted before with ``classify_text = "main"``."""
        text = item["text"]
        if self.classify_text == "main":
            text = item["main_text"] or text
        text = text[: self.max_chars] if self.max_chars else text
        doc = f"{item['title']}\n{text}"
        scores_links = self.link_score != "content"
        links = item["links"] if scores_links else []
        own = [item["anchor"]] if scores_links and item.get("anchor") else []
        anchors = [*own, *(anchor for _, anchor, _ in links)]
        self.bound_caches()
        # The anchors scored in this batch: every link's when the model reads their URLs, else
        # those whose R is not kept.
        scored = (
            anchors
            if self.reads_urls
            else [anchor for anchor in dict.fromkeys(anchors) if anchor not in self.anchor_scores]
        )
        texts = [doc, *scored]
        if self.link_score == "context":
            texts += [context for _, _, context in links]
        glossed: dict[int, float] = {}  # position in ``anchors`` -> R with the anchor's gloss
        pending: dict[str, list[int]] = {}  # glossed anchors not scored before, in ``texts``
        glosses: dict[str, str] = {}  # their glosses
        if self.glosser is not None:
            known = self.glossed_relevance
            for i, anchor in enumerate(anchors):
                if anchor in known:
                    if (r := known[anchor]) is not None:
                        glossed[i] = r
                elif anchor in pending:
                    pending[anchor].append(i)
                elif gloss := self.glosser.gloss(anchor):
                    pending[anchor] = [i]
                    glosses[anchor] = gloss
                    texts.append(f"{anchor}\n{gloss}")
                else:
                    known[anchor] = None
        # The page, the anchor it was reached by, its out-links' anchors (contexts, glosses) in
        # one batch: one vectorizer pass, one matrix product.
        if self.reads_urls:  # the page's URL and anchor; each out-link's target URL
            urls = [item["url"], *([None] * len(own)), *(url for url, _, _ in links)]
            urls += [None] * (len(texts) - len(urls))
            page_anchor = [item.get("anchor") or None, *([None] * (len(texts) - 1))]
            model = cast("UrlRelevanceModel", self.model)  # reads_urls: the plan says it does
            relevance, category = model.score_pages(texts, urls=urls, anchors=page_anchor)
        else:
            relevance, category = self.model.score_pages(texts)
        first = relevance[0]
        if self.page_vectors is not None:
            relevance[0] = first = self.page_vectors.relevance([doc])[0]
        if self.first_page_vectors is not None:
            first = self.first_page_vectors.relevance([doc])[0]
        if self.named is not None and self.named([item["title"] or ""])[0]:
            relevance[0] = max(relevance[0], self.threshold)
            first = max(first, self.threshold)
        item["first_relevance"] = round(float(first), 6)
        item["relevance"] = round(float(relevance[0]), 6)
        item["relevant"] = item["relevance"] >= self.threshold
        item["category"] = category[0]
        if self.needs_path:
            item["path_good"] = (
                item["relevant"]
                if self.page_vectors is not None
                else bool(self.model.best_path_good([doc])[0])
            )
        if not anchors:
            return item
        if self.reads_urls:
            scores = np.asarray(relevance[1 : 1 + len(anchors)], dtype=float)
        else:
            kept = self.anchor_scores
            kept.update(zip(scored, relevance[1 : 1 + len(scored)].tolist(), strict=True))
            scores = np.fromiter((kept[anchor] for anchor in anchors), float, len(anchors))
        if pending:
            for (anchor, at), r in zip(pending.items(), relevance[-len(pending) :], strict=True):
                self.glossed_relevance[anchor] = float(r)
                glossed.update(dict.fromkeys(at, float(r)))
        if glossed:
            at = list(glossed)
            scores[at] = (scores[at] + np.fromiter(glossed.values(), float, len(at))) / 2
            if self.stats is not None:
                self.stats.inc_value("focused/links/glossed", len(at))
        if self.vectors is not None:
            scores = log_odds_sum(scores, self.vector_scores(anchors, glosses), self.vector_weight)
        if own:
            item["anchor_relevance"], scores = float(scores[0]), scores[1:]
        if links:
            if self.link_score == "context":
                start = 1 + len(scored)
                scores = np.sqrt(scores * np.asarray(relevance[start : start + len(links)]))
            item["link_scores"] = scores.tolist()
        return item


def anchor_scorer(crawler: Crawler) -> ClassifierPipeline:
    """A classifier pipeline of one's own, to score queued anchors as the crawl's pipeline
    scores a page's links (:meth:`ClassifierPipeline.anchor_relevance`), away from it: it
    takes up no refit by itself."""
    scorer = ClassifierPipeline.from_crawler(crawler)
    if crawl_plan(crawler).learns:
        crawler.signals.disconnect(scorer.refitted, signal=topic_refitted)
    return scorer
