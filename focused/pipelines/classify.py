"""ClassifierPipeline: R(d), the best category and the good-path flag of every good page."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from focused.errors import TopicError, exit_on_user_error
from focused.relevance.keywords import KeywordModel
from focused.relevance.store import load_or_fit_centroid, load_or_fit_examples, load_or_train
from focused.relevance.thesaurus import ThesaurusModel
from focused.strategies import link_score_for
from focused.topic import Topic

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


def _taxonomy_model(topic: Topic, models_dir: str) -> Any:
    folder = topic.relevance["taxonomy"]
    try:
        return load_or_train(folder, topic.relevance["good"], models_dir)
    except TopicError as exc:  # the model checks its inputs; name them as the topic file does
        field = "relevance.good" if exc.field == "good" else "relevance.taxonomy"
        raise TopicError(topic.path, field, f"{exc.problem} ({folder})") from None


def _centroid_model(topic: Topic, models_dir: str) -> Any:
    examples = topic.relevance["examples"]
    try:
        return load_or_fit_centroid(examples, models_dir, threshold=topic.relevance["threshold"])
    except TopicError as exc:
        raise TopicError(topic.path, "relevance.examples", f"{exc.problem} ({examples})") from None


def _examples_model(topic: Topic, models_dir: str) -> Any:
    options = topic.relevance
    return load_or_fit_examples(
        options["examples"], options["negatives"], models_dir, threshold=options["threshold"]
    )


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


def relevant_threshold(setting: Any, topic: Topic) -> float:
    """FOCUSED_RELEVANT_THRESHOLD when set, else the topic's own threshold, else 0.5."""
    if setting is not None and setting != "":
        return float(setting)
    return float(topic.relevance.get("threshold", topic.relevance.get("r0", 0.5)))


def topic_model(topic: Topic, models_dir: str) -> Any:
    """The topic's fitted relevance model (trained once per set of examples, then loaded)."""
    return MODELS[topic.method](topic, models_dir)


class ClassifierPipeline:
    """Scores each fetched HTML page with the topic's relevance model.

    Sets ``relevance``, ``relevant`` (R >= ``relevant_threshold``), ``category`` and
    ``path_good``; with link score ``anchor`` or ``both`` also ``link_scores``, the R of each
    out-link's anchor text, and ``anchor_relevance``, the R of the anchor text the page was
    reached by (for the online link model), scored in one batch. Only the first
    FOCUSED_MAX_TEXT_CHARS characters of the text are scored. Bad pages pass through untouched.
    """

    def __init__(
        self,
        model: Any,
        *,
        threshold: float,
        score_anchors: bool,
        needs_path: bool,
        max_chars: int = 0,
    ):
        self.model = model
        self.threshold = threshold
        self.score_anchors = score_anchors
        self.needs_path = needs_path
        self.max_chars = max_chars

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> ClassifierPipeline:
        s = crawler.settings
        topic = crawler.spider.topic
        return cls(
            topic_model(topic, s.get("FOCUSED_MODELS_DIR")),
            threshold=relevant_threshold(s.get("FOCUSED_RELEVANT_THRESHOLD"), topic),
            score_anchors=link_score_for(s.get("FOCUSED_LINK_SCORE"), topic.link_score)
            != "content",
            needs_path=topic.focus == "hard",
            max_chars=s.getint("FOCUSED_MAX_TEXT_CHARS"),
        )

    def process_item(self, item: Any) -> Any:
        if item["bad"]:
            return item
        text = item["text"][: self.max_chars] if self.max_chars else item["text"]
        doc = f"{item['title']}\n{text}"
        anchors = [anchor for _, anchor in item["links"]] if self.score_anchors else []
        own = [item["anchor"]] if self.score_anchors and item.get("anchor") else []
        # The page, the anchor it was reached by and its out-links' anchors in one batch: one
        # vectorizer pass, one matrix product.
        relevance, category = self.model.score_pages([doc, *own, *anchors])
        if own:
            item["anchor_relevance"] = float(relevance[1])
            relevance, category = relevance[[0, *range(2, len(relevance))]], category[:1]
        item["relevance"] = round(float(relevance[0]), 6)
        item["relevant"] = item["relevance"] >= self.threshold
        item["category"] = category[0]
        if self.needs_path:
            item["path_good"] = bool(self.model.best_path_good([doc])[0])
        if anchors:
            item["link_scores"] = relevance[1:].tolist()
        return item
