"""Semantic relevance (Batsakis, Petrakis and Milios 2009, section 3.2): the topic's terms
are expanded through WordNet, and a page is relevant to the degree its terms are the topic's
terms, their synonyms or their direct hypernyms and hyponyms.

Section 3.2 scores a page p (or a link's anchor text) by its Eq. 4, over the terms k of the
topic and l of the page, with term weights w and a term similarity sim in [0, 1]::

    R(p) = sum_k sum_l w_k w_l sim(k, l) / sum_k sum_l w_k w_l

and defines sim(k, l) as 1 if l is in the synonym set (synset) of k, 0.5 if l is a hypernym or
hyponym of k, else 0 (its variant "b"; ``related_weight=0`` gives variant "a", synonyms only,
which harvested more in the paper's Table 1: 15.8% against 10.5%). Since the page's weights
sum over all its terms, R is the similarity-weighted share of the page's terms that belong to
the topic: a Wikispeedia article on birds scores about 0.02 for ``terms = ["bird"]`` (one in
ten above 0.04), nine in ten other articles below 0.001, so ``threshold`` defaults to 0.01
(precision 0.86, recall 0.79 there). Every page term is compared with every topic term, so R
shrinks as terms are added: with three terms, bird articles score about 0.008.

Where the paper leaves a choice, this module takes the following:

- Eq. 4 itself is an image missing from the seed's text; the form above is that of the
  Semantic Similarity Retrieval Model the section cites ([6], [7]), which fits its wording
  ("w_k, w_l are their term weights"). Normalising by the topic's weights only, as a cosine
  over the expanded terms would (KeywordModel's way), ignores how much of a page is about
  the topic: on Wikispeedia its average precision for birds was 0.39, against 0.90 here.
- Term weights: w_l is the term's count in the page. The paper uses tf-idf with idf from a
  search engine's statistics, which we do not have; section 3 notes that most best-first
  crawlers use tf only (the paper's division by the page's largest count cancels in R). Every
  topic term has w_k = 1.
- Senses: a word stands for its first WordNet synset, its most frequent sense (the noun's
  if it is a noun). On Wikispeedia this beat all senses together (mean average precision
  0.64 against 0.60 over six topics; "railway", "train": 0.94 against 0.72), as "bird" then
  also brings in "skirt", "hiss" and "shuttle". A term written as a synset name, e.g.
  ``"java.n.03"`` (the programming language, not the island), picks that sense instead.
- Relations: direct hypernyms and hyponyms, one level, instance ones included ("Linux" is an
  instance of "UNIX", "Paris" of "national capital"). A lemma that is both a synonym and a
  related term counts as a synonym; every word is its own synonym.
- Matching: lemmas ("bird_of_prey") and pages go through the same analyzer (``text.analyze``,
  Porter stems, stopwords out), phrases match on the page's term stream as KeywordModel's do,
  and two lemmas with one stem keep the higher similarity. A phrase's occurrence counts on top
  of its words' (as in KeywordModel), so R is clipped at 1.
- Unknown words: each of ``terms`` must be in WordNet (a typo would otherwise silently match
  nothing); a ``description`` word WordNet does not know is kept and matches only itself.
  Two topic words of one synset ("car", "automobile") are one topic term.

WordNet 3.0 is read by :mod:`focused.relevance.wordnet` (the ``wordnet`` parameter names its
folder). Fitting reads the folder's index once per process (about 1.5 s); the fitted model
keeps only the expanded terms.
Scoring analyses each page once for its matches and once more to count its terms, then takes
one sparse matrix product for the whole batch.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from functools import partial

import numpy as np
from nltk.corpus.reader.wordnet import Synset, WordNetCorpusReader, WordNetError
from sklearn.feature_extraction.text import CountVectorizer

from focused.relevance.base import Estimator
from focused.relevance.keywords import _keyword_terms
from focused.relevance.taxonomy import _check_documents
from focused.relevance.text import analyze
from focused.relevance.wordnet import load_wordnet

__all__ = ["SemanticModel"]

_SYNSET_NAME = re.compile(r"^\S+\.[nvasr]\.\d+$")  # e.g. java.n.03


def _concept(wn: WordNetCorpusReader, word: str) -> Synset | None:
    """The synset a topic word stands for: the one it names, or its first (most frequent)."""
    key = "_".join(word.split())
    if _SYNSET_NAME.match(key):
        try:
            return wn.synset(key)
        except (WordNetError, ValueError):
            return None
    synsets = wn.synsets(key)
    return synsets[0] if synsets else None


class SemanticModel(Estimator):
    """Eq. 4 of Batsakis et al. 2009 over WordNet synonyms, hypernyms and hyponyms of the topic's
    terms.

    Parameters
    ----------
    terms : the topic's words or phrases ("bird of prey"), each in WordNet, or synset names
        ("java.n.03"); a single string is one term.
    description : a sentence about the topic; its content words become terms too (alone, it
        is the topic). Its words WordNet does not know match only themselves.
    wordnet : folder of the WordNet 3.0 dict files; None: $FOCUSED_WORDNET, else
        /usr/share/wordnet (Debian's wordnet-base).
    threshold : the R at which a page counts as relevant (``best_path_good``, hard focus's
        test). R is a share of the page's terms, so it is small: see the module docstring.
    synonym_weight : sim(k, l) when l is in k's synset (the paper: 1).
    related_weight : sim(k, l) when l is a direct hypernym or hyponym of k (the paper: 0.5;
        0 keeps synonyms only).

    Attributes
    ----------
    expansion_ : topic term (as given) -> {lemma, words joined by spaces: sim}, from WordNet.
    terms_ : the analysed lemmas of all topic terms, phrases as their terms joined by a space.
    similarity_ : for each of ``terms_``, the mean over topic terms k of sim(k, term).
    vectorizer_ : counts the terms in a document.
    """

    def __init__(
        self,
        *,
        terms: Sequence[str] = (),
        description: str = "",
        wordnet: str | os.PathLike[str] | None = None,
        threshold: float = 0.01,
        synonym_weight: float = 1.0,
        related_weight: float = 0.5,
    ):
        self.terms = terms
        self.description = description
        self.wordnet = wordnet
        self.threshold = threshold
        self.synonym_weight = synonym_weight
        self.related_weight = related_weight

    def fit(self, X: object = None, y: object = None) -> SemanticModel:
        """Expand the topic through WordNet; ``X`` and ``y`` are ignored (the topic needs no
        examples). Raises FocusedError without WordNet, ValueError for a bad term or weight."""
        for name in ("threshold", "synonym_weight", "related_weight"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ValueError(f"{name} must be a number in [0, 1], not {value!r}")
        terms = [self.terms] if isinstance(self.terms, str) else list(self.terms)
        if not all(isinstance(term, str) for term in terms):
            raise TypeError(f"terms must be strings, not {terms!r}")
        wn = load_wordnet(self.wordnet)

        # topic term k, one per synset -> (k as given, {lemma: sim(k, lemma)})
        topic: dict[str, tuple[str, dict[str, float]]] = {}
        for term in terms:
            synset = _concept(wn, term)
            if synset is None:
                raise ValueError(
                    f"{term.strip()!r} is not in WordNet (check the spelling, or give the "
                    "words of a phrase WordNet does not know as separate terms)"
                )
            topic.setdefault(synset.name(), (term.strip(), self._expand(term, synset)))
        for word in analyze(self.description):
            synset = _concept(wn, word)
            topic.setdefault(synset.name() if synset else word, (word, self._expand(word, synset)))
        if not topic:
            raise ValueError("no terms: give terms or a description")

        self.expansion_ = {}
        similarity: dict[str, float] = {}
        for given, lemmas in topic.values():
            own: dict[str, float] = {}  # sim(k, l) by analysed term; one stem keeps the max
            for lemma, sim in lemmas.items():
                term = " ".join(analyze(lemma, stem=True))
                if term:
                    own[term] = max(own.get(term, 0.0), sim)
            if not own:
                raise ValueError(f"{given!r} has no words to match (stopwords, single letters)")
            self.expansion_[given] = lemmas
            for term, sim in own.items():
                similarity[term] = similarity.get(term, 0.0) + sim / len(topic)

        self.terms_ = list(similarity)
        self.similarity_ = np.array(list(similarity.values()))
        phrase_lengths = {term.count(" ") + 1 for term in self.terms_} - {1}
        self.vectorizer_ = CountVectorizer(
            analyzer=partial(
                _keyword_terms,
                stem=True,
                terms=frozenset(self.terms_),
                lengths=tuple(sorted(phrase_lengths)),
            ),
            vocabulary=self.terms_,
            dtype=np.float64,
        )
        return self

    def _expand(self, word: str, synset: Synset | None) -> dict[str, float]:
        """{lemma: sim(word, lemma)}: the word itself and its synset's lemmas as synonyms,
        the lemmas of its direct hypernyms and hyponyms as related terms."""
        lemmas: dict[str, float] = {}
        if synset is not None:
            for related in (
                synset.hypernyms()
                + synset.instance_hypernyms()
                + synset.hyponyms()
                + synset.instance_hyponyms()
            ):
                lemmas.update(dict.fromkeys(related.lemma_names(), self.related_weight))
            lemmas.update(dict.fromkeys(synset.lemma_names(), self.synonym_weight))
        if synset is None or not _SYNSET_NAME.match("_".join(word.split())):
            lemmas["_".join(word.split())] = self.synonym_weight
        return {lemma.replace("_", " "): sim for lemma, sim in lemmas.items()}

    def relevance(self, X: Sequence[str]) -> np.ndarray:
        """Eq. 4 for each document, in [0, 1]: the similarity-weighted share of its terms that
        are topic terms or their relatives (0 for a text without terms)."""
        self._check_fitted("vectorizer_")
        docs = _check_documents(X)
        matched = self.vectorizer_.transform(docs) @ self.similarity_
        # stemming drops no word that stopwords do not, so this is the stemmed terms' count
        lengths = np.fromiter((len(analyze(doc)) for doc in docs), np.float64, len(docs))
        relevance = np.divide(matched, lengths, out=np.zeros_like(matched), where=lengths > 0)
        return np.minimum(relevance, 1.0)  # a phrase counts on top of its words

    def score_pages(self, X: Sequence[str]) -> tuple[np.ndarray, list[str | None]]:
        """R(d) and a category for each document; there are no categories, so None."""
        relevance = self.relevance(X)
        return relevance, [None] * len(relevance)

    def best_path_good(self, X: Sequence[str]) -> np.ndarray:
        """Whether each document is relevant (R >= threshold): hard focus's test."""
        return self.relevance(X) >= self.threshold
