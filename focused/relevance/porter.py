"""The Porter stemmer as nltk's ``PorterStemmer()`` stems (its default mode, NLTK_EXTENSIONS),
without importing nltk.

nltk's package imports most of nltk, SciPy's statistics and scikit-learn when any part of it
is imported: a third of a crawl process's start, for a stemmer. This is the same algorithm
(Porter 1980, "An algorithm for suffix stripping", with nltk's departures from it: its
irregular forms, "-ies"/"-ied" on four-letter words, "y" -> "i" only after a consonant, "alli"
before the other step 2 rules, "fulli" and "logi"), after nltk's ``porter.py`` (Apache License
2.0): the same stem for every word, which a test checks against nltk's on WordNet's lemmas.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["stem"]

_VOWELS = frozenset("aeiou")
_VOWEL = re.compile("[aeiou]")
_VOWEL_CONSONANT = re.compile("[aeiou][^aeiou]")  # without "y", a letter not a vowel is not one
# nltk's irregular forms: word -> stem, before any rule
_IRREGULAR = {
    "sky": "sky",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "tying": "tie",
    "news": "news",
    "innings": "inning",
    "inning": "inning",
    "outings": "outing",
    "outing": "outing",
    "cannings": "canning",
    "canning": "canning",
    "howe": "howe",
    "proceed": "proceed",
    "exceed": "exceed",
    "succeed": "succeed",
}


def _consonants(word: str) -> list[bool]:
    """Whether each letter is a consonant: not a, e, i, o, u, nor a "y" after a consonant."""
    flags: list[bool] = []
    for i, letter in enumerate(word):
        if letter in _VOWELS:
            flags.append(False)
        elif letter == "y":
            flags.append(i == 0 or not flags[i - 1])
        else:
            flags.append(True)
    return flags


def _measure(stem: str) -> int:
    """m of [C](VC){m}[V]: how many times a vowel is followed by a consonant."""
    if "y" not in stem:  # every letter is what it looks like: one search
        return len(_VOWEL_CONSONANT.findall(stem))
    flags = _consonants(stem)
    return sum(1 for i in range(1, len(flags)) if flags[i] and not flags[i - 1])


def _has_vowel(stem: str) -> bool:
    if "y" not in stem:
        return _VOWEL.search(stem) is not None
    return not all(_consonants(stem))


def _ends_double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonants(word)[-1]


def _ends_cvc(word: str) -> bool:
    """*o: the stem ends consonant, vowel, consonant, the last not w, x or y (nltk: or is a
    vowel and a consonant)."""
    if len(word) >= 3:
        c = _consonants(word)
        if c[-3] and not c[-2] and c[-1] and word[-1] not in "wxy":
            return True
    if len(word) == 2:
        c = _consonants(word)
        return not c[0] and c[1]
    return False


_Rule = tuple[str, str, Callable[[str], bool] | None]


def _positive(stem: str) -> bool:
    return _measure(stem) > 0


def _above_one(stem: str) -> bool:
    return _measure(stem) > 1


class _Table:
    """A step's rules (suffix, replacement, condition on the stem or None), looked up by the
    word's suffix: the first rule whose suffix the word ends with replaces it if its condition
    holds, and either way no other rule is tried. Where two suffixes end alike ("ational",
    "tional") the longer comes first in Porter's lists, so the longest suffix found is the
    first rule that applies."""

    def __init__(self, rules: list[_Rule]):
        self.rules = {suffix: (replacement, condition) for suffix, replacement, condition in rules}
        self.lengths = sorted({len(suffix) for suffix in self.rules}, reverse=True)

    def apply(self, word: str) -> str:
        for n in self.lengths:
            if n <= len(word) and (rule := self.rules.get(word[-n:])) is not None:
                replacement, condition = rule
                stem = word[:-n]
                return stem + replacement if condition is None or condition(stem) else word
        return word


_STEP1A = _Table([("sses", "ss", None), ("ies", "i", None), ("ss", "ss", None), ("s", "", None)])
_STEP2 = _Table(
    [
        (suffix, replacement, _positive)
        for suffix, replacement in (
            ("ational", "ate"),
            ("tional", "tion"),
            ("enci", "ence"),
            ("anci", "ance"),
            ("izer", "ize"),
            ("bli", "ble"),
            ("alli", "al"),
            ("entli", "ent"),
            ("eli", "e"),
            ("ousli", "ous"),
            ("ization", "ize"),
            ("ation", "ate"),
            ("ator", "ate"),
            ("alism", "al"),
            ("iveness", "ive"),
            ("fulness", "ful"),
            ("ousness", "ous"),
            ("aliti", "al"),
            ("iviti", "ive"),
            ("biliti", "ble"),
            ("fulli", "ful"),
        )
    ]
    # "logi" -> "log" with the "l" counted in the stem, so that "geo", "theo" work as "philo"
    + [("logi", "log", lambda stem: _positive(stem + "l"))]
)
_STEP3 = _Table(
    [
        (suffix, replacement, _positive)
        for suffix, replacement in (
            ("icate", "ic"),
            ("ative", ""),
            ("alize", "al"),
            ("iciti", "ic"),
            ("ical", "ic"),
            ("ful", ""),
            ("ness", ""),
        )
    ]
)
_STEP4 = _Table(
    [
        *(
            (suffix, "", _above_one)
            for suffix in ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement")
        ),
        ("ment", "", _above_one),
        ("ent", "", _above_one),
        ("ion", "", lambda stem: _measure(stem) > 1 and stem[-1] in "st"),
        *((suffix, "", _above_one) for suffix in ("ou", "ism", "ate", "iti", "ous", "ive", "ize")),
    ]
)


def _step1a(word: str) -> str:
    if word.endswith("ies") and len(word) == 4:
        return word[:-3] + "ie"
    return _STEP1A.apply(word)


def _step1b(word: str) -> str:
    if word.endswith("ied"):
        return word[:-3] + ("ie" if len(word) == 4 else "i")
    if word.endswith("eed"):
        stem = word[:-3]
        return stem + "ee" if _measure(stem) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(stem := word[: -len(suffix)]):
            break
    else:
        return word
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if _ends_double_consonant(stem):
        return stem if stem[-1] in "lsz" else stem[:-1]
    return stem + "e" if _measure(stem) == 1 and _ends_cvc(stem) else stem


def _step1c(word: str) -> str:
    if word.endswith("y") and len(stem := word[:-1]) > 1 and _consonants(stem)[-1]:
        return stem + "i"
    return word


def _step2(word: str) -> str:
    if word.endswith("alli") and _positive(word[:-4]):
        return _step2(word[:-4] + "al")
    return _STEP2.apply(word)


def _step5a(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or m == 1 and not _ends_cvc(stem):
            return stem
    return word


def _step5b(word: str) -> str:
    return word[:-1] if word.endswith("ll") and _measure(word[:-1]) > 1 else word


def stem(word: str) -> str:
    """The word's Porter stem, lowercase, as nltk's ``PorterStemmer().stem(word)`` gives it."""
    lowered = word.lower()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    if len(word) <= 2:
        return lowered
    lowered = _STEP3.apply(_step2(_step1c(_step1b(_step1a(lowered)))))
    return _step5b(_step5a(_STEP4.apply(lowered)))
