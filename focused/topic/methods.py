"""The relevance methods a topic file can name, in one registry: for each, the fields of
``[relevance]`` it reads, how they are checked, how its model is fitted (or loaded from the models
folder), whether that model also reads URLs and anchors, and what word vectors add to it.

Adding a method is one entry in :data:`METHODS` and one estimator in :mod:`focused.relevance`
that keeps :class:`~focused.relevance.base.RelevanceModel`. Models are imported when first
fitted, so reading a topic file loads no more than its own method's checks need.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from focused.errors import FocusedError, TopicError
from focused.settings.check import switch
from focused.topic.fields import example_folder, existing_path, number

if TYPE_CHECKING:
    from focused.relevance.base import RelevanceModel, UrlRelevanceModel
    from focused.relevance.vectors import CategoryVectors, ExampleVectors
    from focused.topic.files import Topic

__all__ = [
    "METHODS",
    "PAGE_VECTORS_THRESHOLD",
    "RelevanceMethod",
    "own_example_files",
    "own_negatives",
    "own_texts",
    "topic_model",
    "vector_model",
    "vectors_role",
]

logger = logging.getLogger(__name__)

# The example folders of a topic: pages on it and, optionally, pages off it. A keyword topic
# may have them too (what ``focused label`` writes): its word vectors and its learning read them.
EXAMPLE_FIELDS = ("examples", "negatives")


# Checks of each method's fields: the options its model is built with.


def _taxonomy_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    good = data.get("good")
    if not isinstance(good, list) or not good or not all(isinstance(g, str) for g in good):
        raise TopicError(path, "relevance.good", "expected a non-empty list of category paths")
    return {
        "taxonomy": example_folder(path, "relevance.taxonomy", data.get("taxonomy"), taxonomy=True),
        "good": [g.strip("/") for g in good],
    }


def _centroid_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "examples": example_folder(path, "relevance.examples", data.get("examples")),
        "threshold": number(path, "relevance.threshold", data.get("threshold", 0.2), 0, 1),
    }


def _examples_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    negatives = data.get("negatives")
    return {
        "examples": example_folder(path, "relevance.examples", data.get("examples")),
        "negatives": None
        if negatives is None
        else example_folder(path, "relevance.negatives", negatives),
        "threshold": number(path, "relevance.threshold", data.get("threshold", 0.5), 0, 1),
    }


def _keywords_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    from focused.relevance.keywords import KeywordModel  # scikit-learn: only when needed

    keywords = data.get("keywords", [])
    if isinstance(keywords, dict):
        for word, weight in keywords.items():
            number(path, f"relevance.keywords.{word}", weight, 0, float("inf"))
    elif not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        raise TopicError(
            path, "relevance.keywords", "expected a list of words or a table of weights"
        )
    description = data.get("description", "")
    if not isinstance(description, str):
        raise TopicError(path, "relevance.description", f"expected a sentence, got {description!r}")
    options = {
        "keywords": keywords,
        "description": description,
        "r0": number(path, "relevance.r0", data.get("r0", 0.3), 0, 1),
    }
    try:  # fitting is instant and checks what is left (e.g. keywords that are all stopwords)
        KeywordModel(**options).fit()
    except ValueError as exc:
        raise TopicError(path, "relevance.keywords", str(exc)) from None
    for name in EXAMPLE_FIELDS:  # pages marked on and off the topic (focused label)
        if name in data:  # only then: a crawl of the same keywords resumes as the same crawl
            options[name] = example_folder(path, f"relevance.{name}", data[name])
    return options


def _keyword_model_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options of a keyword topic that its KeywordModel reads (not its example folders,
    which only the word vectors and the learning read)."""
    return {name: value for name, value in options.items() if name not in EXAMPLE_FIELDS}


def _thesaurus_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    from focused.relevance.thesaurus import read_thesaurus

    thesaurus = existing_path(path, "relevance.thesaurus", data.get("thesaurus"), folder=False)
    read_thesaurus(thesaurus)  # its errors name the thesaurus file and the field in it
    options: dict[str, Any] = {"thesaurus": thesaurus}
    for name, default, high in (
        ("threshold", 0.3, 1),
        ("depth_weight", 0.5, float("inf")),
        ("url_weight", 0.5, float("inf")),
        ("anchor_weight", 0.5, float("inf")),
    ):
        options[name] = number(path, f"relevance.{name}", data.get(name, default), 0, high)
    return options


def _semantic_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    from focused.relevance.semantic import SemanticModel  # nltk's WordNet: only when needed

    terms = data.get("terms", [])
    if not isinstance(terms, list) or not all(isinstance(t, str) and t.strip() for t in terms):
        raise TopicError(
            path, "relevance.terms", f"expected a list of words or phrases, got {terms!r}"
        )
    description = data.get("description", "")
    if not isinstance(description, str):
        raise TopicError(path, "relevance.description", f"expected a sentence, got {description!r}")
    wordnet = data.get("wordnet")
    options: dict[str, Any] = {
        "terms": terms,
        "description": description,
        "wordnet": None
        if wordnet is None
        else existing_path(path, "relevance.wordnet", wordnet, folder=True),
        "threshold": number(path, "relevance.threshold", data.get("threshold", 0.01), 0, 1),
    }
    try:  # reads WordNet (once per process) and checks that it knows every term
        SemanticModel(**options).fit()
    except ValueError as exc:
        raise TopicError(path, "relevance.terms", str(exc)) from None
    except FocusedError as exc:  # no WordNet where it looked
        raise TopicError(path, "relevance.wordnet", str(exc)) from None
    return options


# Fitting each method's model.


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


def _taxonomy_model(topic: Topic, models_dir: str) -> RelevanceModel:
    from focused.relevance.store import load_or_train

    with _taxonomy_errors(topic):
        return load_or_train(topic.relevance["taxonomy"], topic.relevance["good"], models_dir)


def _centroid_model(topic: Topic, models_dir: str) -> RelevanceModel:
    from focused.relevance.store import load_or_fit_centroid

    with _example_errors(topic):
        return load_or_fit_centroid(
            topic.relevance["examples"], models_dir, threshold=topic.relevance["threshold"]
        )


@contextmanager
def _folder_errors(topic: Topic) -> Iterator[None]:
    """A file of a topic's ``examples`` or ``negatives`` folder that is not text, named by
    the field of its folder."""
    try:
        yield
    except TopicError as exc:
        negative = exc.path == str(topic.relevance.get("negatives"))
        field = "relevance.negatives" if negative else "relevance.examples"
        raise TopicError(topic.path, field, f"{exc.problem} ({exc.path})") from None


def _examples_model(topic: Topic, models_dir: str) -> RelevanceModel:
    from focused.relevance.store import load_or_fit_examples

    options = topic.relevance
    try:
        with _folder_errors(topic):
            return load_or_fit_examples(
                options["examples"],
                options["negatives"],
                models_dir,
                threshold=options["threshold"],
            )
    except ValueError as exc:  # the examples have no terms
        raise TopicError(
            topic.path, "relevance.examples", f"{exc} ({options['examples']})"
        ) from None


def _keywords_model(topic: Topic, models_dir: str) -> RelevanceModel:
    from focused.relevance.keywords import KeywordModel

    # instant, and checked when the topic was read
    return KeywordModel(**_keyword_model_options(topic.relevance)).fit()


def _thesaurus_model(topic: Topic, models_dir: str) -> UrlRelevanceModel:
    from focused.relevance.thesaurus import ThesaurusModel

    return ThesaurusModel(**topic.relevance).fit()


def _semantic_model(topic: Topic, models_dir: str) -> RelevanceModel:
    from focused.relevance.semantic import SemanticModel

    return SemanticModel(**topic.relevance).fit()  # WordNet is read once per process


# What word vectors add (FOCUSED_VECTORS). With a taxonomy they are a second estimate of every
# anchor's R, placed among the taxonomy's categories. With keywords they give the page's own R:
# the keywords' share in a softmax over their vector and a background of general topics, so that
# a page naming a keyword once in passing is not "about" it (on the Wikispeedia benchmark the
# keyword cosine called 3 to 8 times more pages relevant than were; the vectors' R came within
# .14 and .09). With example pages and no negatives (methods ``centroid`` and ``examples``) they
# give the page's R too: where its cosine falls among the examples' own (ExampleVectors; the
# tf-idf cosine called 95 % of a crawl's pages relevant, the vectors came within .12). Anchors
# keep their model's R there: the vectors' anchor R found fewer relevant pages (README, "Word
# vectors").
KEYWORD_BACKGROUND = 64  # background categories (CategoryVectors.background)
KEYWORD_TEMPERATURE = 0.05
PAGE_VECTORS_THRESHOLD = 0.5  # the page R from vectors at which a page is relevant


def _taxonomy_vectors(topic: Topic, models_dir: str) -> CategoryVectors:
    from focused.relevance.store import load_or_fit_category_vectors

    with _taxonomy_errors(topic):
        return load_or_fit_category_vectors(
            topic.relevance["taxonomy"], topic.relevance["good"], models_dir
        )


def _keyword_vectors(topic: Topic, models_dir: str) -> CategoryVectors:
    from focused.relevance.vectors import CategoryVectors

    model = CategoryVectors(
        good=["topic"], temperature=KEYWORD_TEMPERATURE, background=KEYWORD_BACKGROUND
    )
    with _folder_errors(topic):
        positive, negative = own_texts(topic), own_negatives(topic)
    return model.fit([*positive, *negative], ["topic"] * len(positive) + ["other"] * len(negative))


def _example_vectors(topic: Topic, models_dir: str) -> ExampleVectors:
    from focused.relevance.centroid import read_examples
    from focused.relevance.vectors import ExampleVectors

    with _example_errors(topic, "; add examples or set FOCUSED_VECTORS=false"):
        return ExampleVectors().fit(read_examples(topic.relevance["examples"]))


@dataclass(frozen=True)
class RelevanceMethod:
    """One way a topic file describes a topic (``[relevance] method = ...``).

    - ``fields``: the fields of ``[relevance]`` it reads besides ``method`` and ``link_score``;
    - ``options``: checks them (path of the topic file, the table) into the options its model
      is built with, or raises a TopicError naming the field;
    - ``model``: fits its model (or loads it from the models folder) from a checked topic;
    - ``reads_anchors``: the model's ``score_pages`` also takes each text's URL and the anchor
      a page was reached by (the thesaurus of Badia et al. 2006);
    - ``vectors``: what word vectors do for it, from its options: "anchors" (a second estimate
      of each anchor's R), "pages" (the page's own R), "both" or None; ``vector_model`` fits
      them.
    """

    fields: frozenset[str]
    options: Callable[[Path, dict[str, Any]], dict[str, Any]]
    model: Callable[[Topic, str], RelevanceModel]
    reads_anchors: bool = False
    vectors: Callable[[dict[str, Any]], str | None] = lambda options: None
    vector_model: Callable[[Topic, str], Any] | None = None


#: Every relevance method, by the name a topic file gives in ``[relevance] method``.
METHODS: dict[str, RelevanceMethod] = {
    "taxonomy": RelevanceMethod(
        frozenset({"taxonomy", "good"}),
        _taxonomy_options,
        _taxonomy_model,
        vectors=lambda options: "anchors",
        vector_model=_taxonomy_vectors,
    ),
    "centroid": RelevanceMethod(
        frozenset({"examples", "threshold"}),
        _centroid_options,
        _centroid_model,
        vectors=lambda options: "pages",
        vector_model=_example_vectors,
    ),
    "examples": RelevanceMethod(
        frozenset({*EXAMPLE_FIELDS, "threshold"}),
        _examples_options,
        _examples_model,
        # negatives give the logistic regression a boundary of its own
        vectors=lambda options: None if options.get("negatives") else "pages",
        vector_model=_example_vectors,
    ),
    "keywords": RelevanceMethod(
        frozenset({"keywords", "description", "r0", *EXAMPLE_FIELDS}),
        _keywords_options,
        _keywords_model,
        vectors=lambda options: "both",
        vector_model=_keyword_vectors,
    ),
    "thesaurus": RelevanceMethod(
        frozenset({"thesaurus", "threshold", "depth_weight", "url_weight", "anchor_weight"}),
        _thesaurus_options,
        _thesaurus_model,
        reads_anchors=True,
    ),
    "semantic": RelevanceMethod(
        frozenset({"terms", "description", "wordnet", "threshold"}),
        _semantic_options,
        _semantic_model,
    ),
}


def topic_model(topic: Topic, models_dir: str) -> RelevanceModel:
    """The topic's fitted relevance model (trained once per set of examples, then loaded)."""
    return METHODS[topic.method].model(topic, models_dir)


def own_texts(topic: Topic) -> list[str]:
    """What the user wrote of the topic, as texts: its keywords (and description) as one
    text, and its example pages; a learning topic keeps them among its examples."""
    options = topic.relevance
    texts = []
    if topic.method == "keywords":
        keywords = options.get("keywords") or ()
        words = [keywords] if isinstance(keywords, str) else list(keywords)
        texts.append(" ".join([*words, options.get("description", "")]).strip())
    if options.get("examples") is not None:
        from focused.relevance.centroid import read_examples  # scikit-learn: only when needed

        texts += read_examples(options["examples"])
    return texts


def own_example_files(topic: Topic) -> list[Path]:
    """The files of the topic's own example pages: its ``examples``, and a taxonomy's
    examples filed in its good categories (what :class:`~focused.relevance.shape.PageShape`
    learns the shape of the topic's pages from)."""
    from focused.relevance.centroid import example_pages
    from focused.relevance.taxonomy import example_files, in_good

    options = topic.relevance
    files = [] if options.get("examples") is None else example_pages(options["examples"])
    if options.get("taxonomy") is not None:
        good = set(options["good"])
        files += [
            path for path, category in example_files(options["taxonomy"]) if in_good(category, good)
        ]
    return files


def own_negatives(topic: Topic) -> list[str]:
    """The pages the user gave as off the topic (its ``negatives``); a learning topic keeps
    them among its counter-examples."""
    folder = topic.relevance.get("negatives")
    if folder is None:
        return []
    from focused.relevance.centroid import read_examples  # scikit-learn: only when needed

    return read_examples(folder)


def vectors_role(topic: Topic) -> str | None:
    """What word vectors do for the topic's method ("anchors", "pages", "both") or None."""
    return METHODS[topic.method].vectors(topic.relevance)


def vector_model(topic: Topic, models_dir: str, setting: Any) -> Any:
    """The word-vector model FOCUSED_VECTORS asks for: "auto" (one when the word vectors are
    installed, else None and a warning), true (required) or false (None); None too for a
    method the vectors have no role in. A taxonomy's is fitted on its examples and saved; a
    keyword topic's on its keywords (and description), against a background; example pages
    without negatives give an ExampleVectors."""
    from focused.relevance.vectors import VectorsMissing

    value = switch("FOCUSED_VECTORS", setting)
    method = METHODS[topic.method]
    if value == "false" or method.vector_model is None or vectors_role(topic) is None:
        return None
    try:
        return method.vector_model(topic, models_dir)
    except VectorsMissing as exc:
        if value != "auto":
            raise FocusedError(f"FOCUSED_VECTORS: {exc}") from None
        logger.warning("Pages and links are scored without word vectors: %s", exc)
        return None
