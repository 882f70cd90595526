"""Relevance models: fitted on example documents, they score pages (R, best category) and
link texts. Nothing here imports Scrapy, Redis or the rest of the crawler, so models can be
trained, tested and benchmarked on their own."""

from focused.relevance.centroid import CentroidModel
from focused.relevance.examples import ExamplesModel
from focused.relevance.keywords import KeywordModel
from focused.relevance.preprocess import hub_score, is_forum_or_blog, text_checksum
from focused.relevance.semantic import SemanticModel
from focused.relevance.store import load_or_train, model_path
from focused.relevance.taxonomy import (
    EXAMPLE_SUFFIXES,
    HierarchicalClassifier,
    TaxonomyExamples,
    example_files,
    read_taxonomy,
)
from focused.relevance.text import PageText, analyze, page_text
from focused.relevance.thesaurus import ThesaurusModel, read_thesaurus

__all__ = [
    "EXAMPLE_SUFFIXES",
    "CentroidModel",
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
    "TaxonomyExamples",
    "analyze",
    "example_files",
    "load_or_train",
    "model_path",
    "page_text",
    "read_taxonomy",
]
