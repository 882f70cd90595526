"""A page's language, identified from its text by py3langid (its model ships in the package).

py3langid is a naive Bayes over byte n-grams (langid.py, Lui & Baldwin 2012): 140 languages,
ISO 639 codes (two letters where ISO 639-1 has one). Its model takes half a second to load, so
it is loaded once per process, when the first text is identified. A text shorter than
``min_chars`` letters is ``und`` (undetermined, as BCP 47 says it): a few words name no
language reliably (``benchmarks/language.py`` measures where guesses become right), and a
page with no text of its own is no page of another language. Only the first ``max_chars``
characters are read: more costs time in proportion and changes no verdict on a page of one
language.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Collection

__all__ = [
    "MAX_CHARS",
    "MIN_CHARS",
    "UNDETERMINED",
    "LanguageIdentifier",
    "kept_out",
    "known_languages",
]

UNDETERMINED = "und"
# Letters below which a text's language is not guessed; characters read at most.
MIN_CHARS = 40
MAX_CHARS = 2000


@functools.cache
def _model() -> Any:
    """py3langid's model, with probabilities that sum to 1 (loaded once per process)."""
    from py3langid.langid import MODEL_FILE  # type: ignore[import-untyped]
    from py3langid.langid import LanguageIdentifier as Model

    return Model.from_model_file(MODEL_FILE, norm_probs=True)


def known_languages() -> frozenset[str]:
    """The language codes the identifier can answer (loads its model)."""
    return frozenset(_model().labels)


def kept_out(code: str | None, languages: Collection[str]) -> bool:
    """Whether a page in language ``code`` is out of a topic that keeps ``languages`` (empty:
    any). A page whose language is undetermined, or was not identified, is not."""
    return bool(languages) and code not in (None, UNDETERMINED) and code not in languages


def letters(text: str) -> int:
    """How many letters ``text`` holds (not digits, spaces or punctuation)."""
    return sum(c.isalpha() for c in text)


class LanguageIdentifier:
    """``identify(text) -> (code, confidence)``: the most probable language of ``text`` and its
    probability, or ``("und", 0.0)`` for a text of fewer than ``min_chars`` letters. Reads
    the first ``max_chars`` characters."""

    def __init__(self, *, min_chars: int = MIN_CHARS, max_chars: int = MAX_CHARS):
        self.min_chars = min_chars
        self.max_chars = max_chars

    def identify(self, text: str) -> tuple[str, float]:
        text = text[: self.max_chars]
        if letters(text) < self.min_chars:
            return UNDETERMINED, 0.0
        code, confidence = _model().classify(text)
        return str(code), round(float(confidence), 4)
