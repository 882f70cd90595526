"""Relevance models: fitted on example documents, they score pages (R, best category) and
link texts. Nothing here imports Scrapy, Redis or the rest of the crawler, so models can be
trained, tested and benchmarked on their own."""

from importlib import import_module
from typing import Any

# Imported on first use (PEP 562), so that light modules such as ``preprocess`` load without
# scikit-learn: the ``focused`` command line starts in a fraction of a second.
_HOMES = {
    "CategoryVectors": "vectors",
    "CentroidModel": "centroid",
    "ExampleVectors": "vectors",
    "RelevanceModel": "base",
    "UrlRelevanceModel": "base",
    "ExamplesModel": "examples",
    "KeywordModel": "keywords",
    "hub_score": "preprocess",
    "is_forum_or_blog": "preprocess",
    "text_checksum": "preprocess",
    "SemanticModel": "semantic",
    "load_or_train": "store",
    "model_path": "store",
    "EXAMPLE_SUFFIXES": "taxonomy",
    "HierarchicalClassifier": "taxonomy",
    "TaxonomyExamples": "taxonomy",
    "example_files": "taxonomy",
    "read_taxonomy": "taxonomy",
    "PageText": "text",
    "analyze": "text",
    "page_text": "text",
    "ThesaurusModel": "thesaurus",
    "read_thesaurus": "thesaurus",
    "WordVectors": "vectors",
    "word_vectors": "vectors",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)


__all__ = [
    "EXAMPLE_SUFFIXES",
    "CategoryVectors",
    "CentroidModel",
    "ExampleVectors",
    "ExamplesModel",
    "HierarchicalClassifier",
    "KeywordModel",
    "SemanticModel",
    "ThesaurusModel",
    "hub_score",
    "is_forum_or_blog",
    "read_thesaurus",
    "text_checksum",
    "PageText",
    "RelevanceModel",
    "TaxonomyExamples",
    "UrlRelevanceModel",
    "analyze",
    "example_files",
    "load_or_train",
    "model_path",
    "page_text",
    "read_taxonomy",
    "WordVectors",
    "word_vectors",
]
