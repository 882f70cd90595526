"""Anchor glosses: what an anchor text names, said in words a topic model knows.

A link's anchor is often a name ("Tawny Owl", "Krypton", "Tanzania") that none of the topic's
training pages contains, so the topic model can only guess at it; WordNet knows many such
names, and its definition of one and the names of its broader concepts ("owl: nocturnal bird
of prey with hawk-like beak ...; bird of prey, raptor, bird, vertebrate") are words the model
does know. The classifier pipeline scores each anchor alone and with its gloss and takes the
mean as the anchor's R (``FOCUSED_ANCHOR_GLOSS``); an anchor WordNet does not know keeps its
own R.

An anchor is looked up as a noun (WordNet's morphology turns "owls" into "owl"): the whole
anchor, then its head before " of " ("Music of Thailand" -> "music"), then the head's last two
words and last word ("Great Crested Grebe" -> "crested grebe", "grebe"); the first that WordNet
knows is glossed. Text in brackets is left out, and anchors of more than ``max_words`` words
are sentences the model reads well enough, so they are not looked up. A gloss holds, for each
of the first ``senses`` senses (WordNet orders them by frequency), the definition and the
names of its hypernyms (instance hypernyms too: "Tanzania" is an instance of "African
country") up to ``depth`` levels up. On the Wikispeedia development topics these choices were
not critical: in a simulation of the crawl, 1 to 9 senses and depth 1 to 5 all found .79 to
.83 of the oracle's relevant pages by 100 fetches. Glosses are not cached here: the classifier
pipeline keeps each anchor text's glossed R instead.
"""

from __future__ import annotations

import os
import re

from focused.relevance.nouns import NounSynset, load_nouns

__all__ = ["AnchorGlosser"]

# Lookups whose gloss an AnchorGlosser keeps; the table starts again when full.
MAX_GLOSSES = 1 << 17

_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_WORD = re.compile(r"[^\W\d_][\w'-]*")


class AnchorGlosser:
    """Glosses anchor texts from WordNet 3.0's nouns (``wordnet``: its dict folder, None for
    the default one, see :mod:`focused.relevance.nouns`). Raises FocusedError when WordNet is
    not found."""

    def __init__(
        self,
        wordnet: str | os.PathLike[str] | None = None,
        *,
        senses: int = 3,
        depth: int = 3,
        max_words: int = 6,
    ):
        self.wordnet = load_nouns(wordnet)
        self.senses = senses
        self.depth = depth
        self.max_words = max_words
        # lookup ("tawny_owl") -> its gloss, None where WordNet has no noun for it: anchors
        # share their heads ("Music of Thailand", "Music of Laos"), and a gloss walks up to
        # ``senses`` times ``depth`` levels of hypernyms
        self.glosses: dict[str, str | None] = {}

    def lookups(self, anchor: str) -> list[str]:
        """What the anchor is looked up as, in turn (the module docstring)."""
        words = _WORD.findall(_BRACKETS.sub(" ", anchor).lower())
        if not words or len(words) > self.max_words:
            return []
        head = words[: words.index("of", 1)] if "of" in words[1:] else words
        return [
            "_".join(lookup)
            for lookup in dict.fromkeys(map(tuple, (words, head, head[-2:], head[-1:])))
        ]

    def synsets(self, anchor: str) -> list[NounSynset | None]:
        """The noun senses of the first of the anchor's lookups that WordNet knows."""
        for lookup in self.lookups(anchor):
            found = self.wordnet.synsets(lookup)
            if found:
                return found
        return []

    def gloss(self, anchor: str) -> str:
        """Definitions and hypernym names of the anchor's senses; "" when WordNet has none."""
        for lookup in self.lookups(anchor):
            if lookup in self.glosses:
                gloss = self.glosses[lookup]
            else:
                if len(self.glosses) >= MAX_GLOSSES:
                    self.glosses.clear()
                found = self.wordnet.synsets(lookup)
                gloss = self.glosses[lookup] = self._gloss(found) if found else None
            if gloss is not None:
                return gloss
        return ""

    def _gloss(self, synsets: list[NounSynset | None]) -> str:
        """Definitions and hypernym names of the first ``senses`` of ``synsets``. A synset
        that could not be read (None, after the warning "No WordNet synset found") is left
        out."""
        parts: list[str] = []
        for synset in synsets[: self.senses]:
            if synset is None:
                continue
            parts.append(synset.definition())
            level = [synset]
            for _ in range(self.depth):
                related = (h for s in level for h in s.hypernyms() + s.instance_hypernyms())
                level = [h for h in related if h is not None]
                parts.extend(name.replace("_", " ") for s in level for name in s.lemma_names())
        return " ".join(parts)
