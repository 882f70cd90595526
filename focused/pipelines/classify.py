"""ClassifierPipeline: R(d), the best category and the good-path flag of every good page."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from focused.errors import FocusedError, TopicError, exit_on_user_error
from focused.relevance.centroid import read_examples
from focused.relevance.content import main_text
from focused.relevance.gloss import AnchorGlosser
from focused.relevance.keywords import KeywordModel
from focused.relevance.store import (
    load_or_fit_category_vectors,
    load_or_fit_centroid,
    load_or_fit_examples,
    load_or_train,
)
from focused.relevance.thesaurus import ThesaurusModel
from focused.relevance.vectors import (
    CategoryVectors,
    ExampleVectors,
    VectorsMissing,
    vectors_installed,
)
from focused.strategies import link_score_for, strategy_name
from focused.topic.files import Topic

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


@contextmanager
def _taxonomy_errors(topic: Topic) -> Iterator[None]:
    """Problems of a taxonomy's examples, named as the topic file names them."""
    folder = topic.relevance["taxonomy"]
    try:
        yield
    except TopicError as exc:  # the model checks its inputs
        field = "relevance.good" if exc.field == "good" else "relevance.taxonomy"
        raise TopicError(topic.path, field, f"{exc.problem} ({folder})") from None
    except ValueError as exc:  # too little to learn from (HierarchicalClassifier.fit)
        raise TopicError(topic.path, "relevance.taxonomy", f"{exc} ({folder})") from None


def _taxonomy_model(topic: Topic, models_dir: str) -> Any:
    with _taxonomy_errors(topic):
        return load_or_train(topic.relevance["taxonomy"], topic.relevance["good"], models_dir)


@contextmanager
def _example_errors(topic: Topic, hint: str = "") -> Iterator[None]:
    """Problems of a topic's example pages, named as the topic file names them."""
    examples = topic.relevance["examples"]
    try:
        yield
    except TopicError as exc:  # a file that is not text, a missing folder
        raise TopicError(topic.path, "relevance.examples", f"{exc.problem} ({examples})") from None
    except ValueError as exc:  # too little to learn from
        raise TopicError(topic.path, "relevance.examples", f"{exc} ({examples}){hint}") from None


def _centroid_model(topic: Topic, models_dir: str) -> Any:
    with _example_errors(topic):
        return load_or_fit_centroid(
            topic.relevance["examples"], models_dir, threshold=topic.relevance["threshold"]
        )


def _examples_model(topic: Topic, models_dir: str) -> Any:
    options = topic.relevance
    try:
        return load_or_fit_examples(
            options["examples"], options["negatives"], models_dir, threshold=options["threshold"]
        )
    except TopicError as exc:  # a file of either folder that is not text
        negative = exc.path == str(options["negatives"])
        field = "relevance.negatives" if negative else "relevance.examples"
        raise TopicError(topic.path, field, f"{exc.problem} ({exc.path})") from None
    except ValueError as exc:  # the examples have no terms
        raise TopicError(
            topic.path, "relevance.examples", f"{exc} ({options['examples']})"
        ) from None


def _keywords_model(topic: Topic, models_dir: str) -> Any:
    return KeywordModel(**topic.relevance).fit()  # instant, and checked when the topic was read


def _thesaurus_model(topic: Topic, models_dir: str) -> Any:
    return ThesaurusModel(**topic.relevance).fit()


def _semantic_model(topic: Topic, models_dir: str) -> Any:
    from focused.relevance.semantic import SemanticModel

    return SemanticModel(**topic.relevance).fit()  # WordNet is read once per process


# topic method -> the function that fits (or loads) its model; topic.METHODS checks the fields.
MODELS = {
    "taxonomy": _taxonomy_model,
    "centroid": _centroid_model,
    "examples": _examples_model,
    "keywords": _keywords_model,
    "thesaurus": _thesaurus_model,
    "semantic": _semantic_model,
}


def log_odds_sum(p: np.ndarray, q: np.ndarray, weight: float = 1.0) -> np.ndarray:
    """sigmoid(logit(p) + weight * logit(q)), each probability kept within [1e-4, 1 - 1e-4]."""
    p, q = np.clip(p, 1e-4, 1 - 1e-4), np.clip(q, 1e-4, 1 - 1e-4)
    return 1 / (1 + np.exp(-(np.log(p / (1 - p)) + weight * np.log(q / (1 - q)))))


def relevant_threshold(settings: Any, topic: Topic) -> float:
    """FOCUSED_RELEVANT_THRESHOLD when set; else PAGE_VECTORS_THRESHOLD where the word vectors
    give the page's R; else the topic's own threshold, else 0.5."""
    setting = settings.get("FOCUSED_RELEVANT_THRESHOLD")
    if setting is not None and setting != "":
        return float(setting)
    if vector_role(settings, topic) == "pages":
        return PAGE_VECTORS_THRESHOLD
    return float(topic.relevance.get("threshold", topic.relevance.get("r0", 0.5)))


# Methods whose models also read a page's URL and the anchor text it was reached by
# (``score_pages(X, urls=, anchors=)``): seed 004's thesaurus.
READS_URLS_AND_ANCHORS = {"thesaurus"}


def topic_model_reads_anchors(topic: Topic) -> bool:
    """Whether the topic's model scores a page with the anchor text it was reached by."""
    return topic.method in READS_URLS_AND_ANCHORS


def topic_model(topic: Topic, models_dir: str) -> Any:
    """The topic's fitted relevance model (trained once per set of examples, then loaded)."""
    return MODELS[topic.method](topic, models_dir)


# Anchor texts whose glossed R is kept (an anchor is looked up in WordNet and its gloss scored
# once per anchor text, not once per link); the cache starts again when full.
GLOSSED_CACHE = 100_000


def anchor_glosser(setting: Any, wordnet: str | None = None) -> AnchorGlosser | None:
    """The glosser FOCUSED_ANCHOR_GLOSS asks for: "auto" (one when WordNet is found, else None
    and a warning that says how to install it), true (WordNet required) or false (None).
    ``wordnet``: the topic's WordNet folder (``relevance.wordnet``), None for the default."""
    value = _switch("FOCUSED_ANCHOR_GLOSS", setting)
    if value == "false":
        return None
    try:
        return AnchorGlosser(wordnet)
    except FocusedError as exc:
        if value != "auto":
            raise
        logger.warning("Anchors are scored without glosses: %s", exc)
        return None


def _switch(name: str, setting: Any) -> str:
    """An auto / true / false setting as "auto", "true" or "false"; a FocusedError otherwise."""
    value = str(setting).strip().lower()
    if value in ("false", "0", "off", "no", ""):
        return "false"
    if value in ("true", "1", "on", "yes"):
        return "true"
    if value != "auto":
        raise FocusedError(f"{name}: expected auto, true or false, got {setting!r}")
    return value


# What word vectors do for each relevance method (FOCUSED_VECTORS). With a taxonomy they are a
# second estimate of every anchor's R, placed among the taxonomy's categories. With keywords
# they give the page's own R: the keywords' share in a softmax over their vector and a
# background of general topics, so that a page naming a keyword once in passing is not "about"
# it (on the Wikispeedia benchmark the keyword cosine called 3 to 8 times more pages relevant
# than were; the vectors' R came within .14 and .09). With example pages and no negatives
# (methods ``centroid`` and ``examples``) they give the page's R too: where its cosine falls
# among the examples' own (ExampleVectors; the tf-idf cosine called 95 % of a crawl's pages
# relevant, the vectors came within .12). Anchors keep their model's R there: the vectors'
# anchor R found fewer relevant pages (README, "Word vectors").
VECTOR_ROLES = {
    "taxonomy": "anchors",
    "keywords": "pages",
    "centroid": "pages",
    "examples": "pages",
}
KEYWORD_BACKGROUND = 64  # background categories (CategoryVectors.background)
KEYWORD_TEMPERATURE = 0.05
PAGE_VECTORS_THRESHOLD = 0.5  # the page R from vectors at which a page is relevant


def _vectors_role(topic: Topic) -> str | None:
    """VECTOR_ROLES' entry for the topic; none for examples with negatives, whose logistic
    regression has a boundary of its own."""
    if topic.method == "examples" and topic.relevance.get("negatives"):
        return None
    return VECTOR_ROLES.get(topic.method)


def vector_role(settings: Any, topic: Topic) -> str | None:
    """What the word vectors do in this crawl ("anchors", "pages"), or None: off, no role for
    the topic's method, or (for "pages") the package not installed."""
    role = _vectors_role(topic)
    setting = settings.get("FOCUSED_VECTORS", "auto")
    if role is None or _switch("FOCUSED_VECTORS", setting) == "false":
        return None
    if role == "pages" and not vectors_installed():
        return None
    return role


def _keyword_text(topic: Topic) -> str:
    keywords = topic.relevance.get("keywords") or ()
    words = [keywords] if isinstance(keywords, str) else list(keywords)
    return " ".join([*words, topic.relevance.get("description", "")])


def _example_vectors(topic: Topic) -> ExampleVectors:
    with _example_errors(topic, "; add examples or set FOCUSED_VECTORS=false"):
        return ExampleVectors().fit(read_examples(topic.relevance["examples"]))


def vector_model(
    topic: Topic, models_dir: str, setting: Any
) -> CategoryVectors | ExampleVectors | None:
    """The word-vector model FOCUSED_VECTORS asks for: "auto" (one when the word vectors are
    installed, else None and a warning), true (required) or false (None); None too for a
    method the vectors have no role in (VECTOR_ROLES). A taxonomy's is fitted on its examples
    and saved; a keyword topic's on its keywords (and description), against a background;
    example pages without negatives give an ExampleVectors."""
    value = _switch("FOCUSED_VECTORS", setting)
    if value == "false" or _vectors_role(topic) is None:
        return None
    try:
        if topic.method == "taxonomy":
            with _taxonomy_errors(topic):
                return load_or_fit_category_vectors(
                    topic.relevance["taxonomy"], topic.relevance["good"], models_dir
                )
        if topic.method in ("centroid", "examples"):
            return _example_vectors(topic)
        model = CategoryVectors(
            good=["topic"], temperature=KEYWORD_TEMPERATURE, background=KEYWORD_BACKGROUND
        )
        return model.fit([_keyword_text(topic)], ["topic"])
    except VectorsMissing as exc:
        if value != "auto":
            raise FocusedError(f"FOCUSED_VECTORS: {exc}") from None
        logger.warning("Pages and links are scored without word vectors: %s", exc)
        return None


def page_scorer(settings: Any, topic: Topic) -> Callable[[Sequence[str]], np.ndarray]:
    """R of whole pages as the classifier pipeline scores them: from the word vectors where
    they give the page's R (``vector_role`` "pages"), else from the topic's model."""
    if vector_role(settings, topic) == "pages":
        vectors = vector_model(topic, settings.get("FOCUSED_MODELS_DIR"), "true")
        return vectors.relevance
    model = topic_model(topic, settings.get("FOCUSED_MODELS_DIR"))
    return lambda texts: model.score_pages(texts)[0]


# FOCUSED_CLASSIFY_TEXT: what is classified; FOCUSED_MAIN_TEXT: the pages given a main text.
CLASSIFY_TEXTS = ("page", "main")
MAIN_TEXT_PAGES = ("relevant", "all", "none")


def setting_choice(settings: Any, name: str, choices: tuple[str, ...]) -> str:
    """A setting that names one of ``choices``; a FocusedError naming them otherwise."""
    value = str(settings.get(name)).strip().lower()
    if value not in choices:
        raise FocusedError(f"{name}: expected one of {', '.join(choices)}, got {value!r}")
    return value


class ClassifierPipeline:
    """Scores each fetched HTML page with the topic's relevance model.

    Sets ``relevance``, ``relevant`` (R >= ``relevant_threshold``), ``category`` and
    ``path_good``; with any link score but ``content`` also ``link_scores``, the R of each
    out-link's anchor text (with ``context``, the geometric mean of that and R of the anchor in
    its context), and ``anchor_relevance``, the R of the anchor text the page was reached by
    (for the online link model), all scored in one batch. With a ``glosser`` an anchor's R is
    the mean of its R alone and with its gloss (:mod:`focused.relevance.gloss`), the latter
    scored once per anchor text; glossed anchors are counted in ``focused/links/glossed``.
    With ``vectors`` (a fitted CategoryVectors) an anchor's R is then combined with its R from
    word vectors (alone, and with its gloss, averaged; once per anchor text too) by adding
    their log-odds, the latter weighted ``vector_weight``: two experts that each know what the
    other does not, as naive Bayes combines evidence. With ``page_vectors`` the page's own R
    (and so ``relevant`` and ``path_good``) comes from them instead of the topic's model.
    Only the first FOCUSED_MAX_TEXT_CHARS characters of the text are scored. Bad pages pass
    through untouched.

    It also sets ``main_text`` (and ``markdown`` with ``markdown``; counted in
    ``focused/main_text/extracted`` and ``.../empty``) for the pages ``main_text_pages`` names:
    here, because only here is a page's relevance known, and extracting every page adds half
    again to a crawl's CPU, the relevant ones a twelfth. With ``classify_text = "main"`` every
    page is extracted first and its title and main text are scored (the whole page's text
    where trafilatura finds no main text).
    """

    def __init__(
        self,
        model: Any,
        *,
        threshold: float,
        link_score: str,
        needs_path: bool,
        max_chars: int = 0,
        reads_urls: bool = False,
        glosser: AnchorGlosser | None = None,
        vectors: CategoryVectors | None = None,
        vector_weight: float = 1.0,
        page_vectors: CategoryVectors | ExampleVectors | None = None,
        classify_text: str = "page",
        main_text_pages: str = "none",
        markdown: bool = False,
        stats: Any = None,
    ):
        self.model = model
        self.threshold = threshold
        self.link_score = link_score
        self.needs_path = needs_path
        self.max_chars = max_chars
        self.reads_urls = reads_urls
        self.glosser = glosser
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
        self.stats = stats

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> ClassifierPipeline:
        s = crawler.settings
        topic = crawler.spider.topic
        link_score = link_score_for(s, topic)
        scores_anchors = link_score != "content"
        role = _vectors_role(topic)  # vector_model warns if the package is missing
        vectors = (
            vector_model(topic, s.get("FOCUSED_MODELS_DIR"), s.get("FOCUSED_VECTORS"))
            if role == "pages" or role == "anchors" and scores_anchors
            else None
        )
        return cls(
            topic_model(topic, s.get("FOCUSED_MODELS_DIR")),
            threshold=relevant_threshold(s, topic),
            link_score=link_score,
            needs_path=strategy_name(s, topic) == "hard",
            max_chars=s.getint("FOCUSED_MAX_TEXT_CHARS"),
            reads_urls=topic_model_reads_anchors(topic),
            glosser=(
                anchor_glosser(s.get("FOCUSED_ANCHOR_GLOSS"), topic.relevance.get("wordnet"))
                if scores_anchors
                else None
            ),
            vectors=vectors if role == "anchors" else None,
            vector_weight=s.getfloat("FOCUSED_VECTOR_WEIGHT"),
            page_vectors=vectors if role == "pages" else None,
            classify_text=setting_choice(s, "FOCUSED_CLASSIFY_TEXT", CLASSIFY_TEXTS),
            main_text_pages=setting_choice(s, "FOCUSED_MAIN_TEXT", MAIN_TEXT_PAGES),
            markdown=s.getbool("FOCUSED_FEED_MARKDOWN"),
            stats=crawler.stats,
        )

    def extract(self, item: Any) -> None:
        """Set the page's ``main_text`` (and ``markdown``) from its HTML."""
        extracted = main_text(item["html"], markdown=self.markdown)
        item["main_text"] = extracted.text
        if self.markdown:
            item["markdown"] = extracted.markdown
        if self.stats is not None:
            self.stats.inc_value("focused/main_text/extracted")
            if not extracted.text:
                self.stats.inc_value("focused/main_text/empty")

    def vector_scores(self, anchors: list[str], glosses: dict[str, str]) -> np.ndarray:
        """Each anchor's R from word vectors: the mean of its R alone and with its gloss (from
        ``glosses``, which holds those of the anchors not scored before), scored in one batch
        for the anchors not seen before."""
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

    def process_item(self, item: Any) -> Any:
        if item["bad"]:
            return item
        text = item["text"]
        if self.classify_text == "main":
            self.extract(item)
            text = item["main_text"] or text
        text = text[: self.max_chars] if self.max_chars else text
        doc = f"{item['title']}\n{text}"
        scores_links = self.link_score != "content"
        links = item["links"] if scores_links else []
        own = [item["anchor"]] if scores_links and item.get("anchor") else []
        anchors = [*own, *(anchor for _, anchor, _ in links)]
        texts = [doc, *anchors]
        if self.link_score == "context":
            texts += [context for _, _, context in links]
        glossed: dict[int, float] = {}  # position in ``anchors`` -> R with the anchor's gloss
        pending: dict[str, list[int]] = {}  # glossed anchors not scored before, in ``texts``
        glosses: dict[str, str] = {}  # their glosses
        if len(self.glossed_relevance) >= GLOSSED_CACHE:
            self.glossed_relevance.clear()
            self.vector_relevance.clear()
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
            relevance, category = self.model.score_pages(texts, urls=urls, anchors=page_anchor)
        else:
            relevance, category = self.model.score_pages(texts)
        if self.page_vectors is not None:
            relevance[0] = self.page_vectors.relevance([doc])[0]
        item["relevance"] = round(float(relevance[0]), 6)
        item["relevant"] = item["relevance"] >= self.threshold
        item["category"] = category[0]
        if item.get("main_text") is None and (
            self.main_text_pages == "all" or self.main_text_pages == "relevant" and item["relevant"]
        ):
            self.extract(item)
        if self.needs_path:
            item["path_good"] = (
                item["relevant"]
                if self.page_vectors is not None
                else bool(self.model.best_path_good([doc])[0])
            )
        if not anchors:
            return item
        scores = np.asarray(relevance[1 : 1 + len(anchors)], dtype=float)
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
                start = 1 + len(anchors)
                scores = np.sqrt(scores * np.asarray(relevance[start : start + len(links)]))
            item["link_scores"] = scores.tolist()
        return item
