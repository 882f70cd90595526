"""WordNet 3.0's nouns read from its dict files, for anchor glosses (:mod:`.gloss`): what
nltk's ``WordNetCorpusReader`` gives for ``synsets(lemma, pos="n")``, a synset's definition,
lemma names and (instance) hypernyms, without importing nltk.

nltk's package imports most of nltk, SciPy's statistics and scikit-learn, and its reader builds
an index of every lemma at start: more than a second of a crawl process's start, for glosses.
Here the noun index and the data file are memory-mapped, shared by every process of a machine
through the page cache: a lemma is found by a binary search of the sorted index, a synset read
at its byte offset, and nothing is read before the first anchor is glossed. The answers are
nltk's, in nltk's order (a test compares the glosses of thousands of nouns): its morphology
(exception list, then suffix rules), its definitions, and its hypernyms sorted, as the
project's nltk reader sorts them so that no answer depends on the hash seed.

The folder is the ``wordnet`` argument, else the environment variable FOCUSED_WORDNET, else
``/usr/share/wordnet``, where Debian's ``wordnet-base`` installs it (``scripts/setup.sh``
installs it).
"""

from __future__ import annotations

import mmap
import os
import re
import warnings
from bisect import bisect_left
from functools import lru_cache
from pathlib import Path

import numpy as np

from focused.errors import FocusedError

__all__ = [
    "DEBIAN_WORDNET",
    "WORDNET_ENV",
    "NounSynset",
    "WordNetNouns",
    "find_wordnet",
    "load_nouns",
]

DEBIAN_WORDNET = "/usr/share/wordnet"  # `apt-get install wordnet-base` puts the dict files here
WORDNET_ENV = "FOCUSED_WORDNET"
# The files nltk's reader opens when it starts (data.* when a synset is first read).
WORDNET_FILES = tuple(
    f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")
) + tuple(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv"))
# nltk's morphology of nouns: suffix -> replacement, each tried on the word as given
_SUFFIXES = (
    ("s", ""),
    ("ses", "s"),
    ("ves", "f"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("ies", "y"),
)
_QUOTED = re.compile(r"[\"].*?[\"]")  # examples in a gloss, which are not its definition
_MARKER = re.compile(r"(.*?)(\([^()]*\))?$")  # a lemma and its syntactic marker, if any


def find_wordnet(wordnet: str | os.PathLike[str] | None = None) -> Path:
    """The WordNet dict folder: ``wordnet`` if given, else $FOCUSED_WORDNET, else Debian's.

    Raises FocusedError, one line saying where it looked and how to install WordNet.
    """
    if wordnet:
        folder, why = Path(wordnet), "the wordnet option"
    elif os.environ.get(WORDNET_ENV):
        folder, why = Path(os.environ[WORDNET_ENV]), f"${WORDNET_ENV}"
    else:
        folder, why = Path(DEBIAN_WORDNET), "Debian's wordnet-base"
    missing = next((name for name in WORDNET_FILES if not (folder / name).is_file()), None)
    if missing:
        raise FocusedError(
            f"WordNet not found: {folder} ({why}) has no {missing}; install it with "
            f"`apt-get install wordnet-base`, or set {WORDNET_ENV} or relevance.wordnet "
            "to a WordNet 3.0 dict folder"
        )
    return folder.resolve()


class NounSynset:
    """One noun synset, as nltk's ``Synset`` gives what glosses read of it."""

    __slots__ = ("_definition", "_hypernyms", "_instance_hypernyms", "_lemma_names", "_nouns")

    def __init__(self, nouns: WordNetNouns, line: str):
        self._nouns = nouns
        columns, gloss = line.strip().split("|")
        self._definition = _QUOTED.sub("", gloss).strip().strip("; ")
        fields = columns.split()
        n_lemmas = int(fields[3], 16)
        self._lemma_names = [
            _MARKER.match(name).group(1)  # type: ignore[union-attr]  # the pattern always matches
            for name in fields[4 : 4 + 2 * n_lemmas : 2]
        ]
        at = 4 + 2 * n_lemmas
        # Each pointer once, sorted, as the project's nltk reader keeps them
        # (focused.relevance.wordnet): their order is the glosses' order, the same in every
        # process whatever its hash seed.
        pointers: dict[str, set[tuple[str, int]]] = {"@": set(), "@i": set()}
        for i in range(at + 1, at + 1 + 4 * int(fields[at]), 4):
            symbol, offset, pos, lemmas = fields[i : i + 4]
            if symbol in pointers and lemmas == "0000":  # between synsets, not lemmas
                pointers[symbol].add((pos, int(offset)))
        self._hypernyms, self._instance_hypernyms = sorted(pointers["@"]), sorted(pointers["@i"])

    def definition(self) -> str:
        return self._definition

    def lemma_names(self) -> list[str]:
        return self._lemma_names

    def hypernyms(self) -> list[NounSynset | None]:
        return [self._nouns.synset(offset) for _, offset in self._hypernyms]

    def instance_hypernyms(self) -> list[NounSynset | None]:
        return [self._nouns.synset(offset) for _, offset in self._instance_hypernyms]


class WordNetNouns:
    """The nouns of the WordNet dict folder ``folder``. Threads may share one: its files are
    read without a file position, and a synset read twice at once is the same."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._index = _mapped(folder / "index.noun")
        self._data = _mapped(folder / "data.noun")
        index = np.frombuffer(self._index, dtype=np.uint8)
        starts = np.concatenate(([0], np.flatnonzero(index == ord("\n")) + 1))
        # the index's lines but its licence (indented) and the empty one at the end: sorted
        starts = starts[starts < len(index)]
        self._lines = starts[index[starts] != ord(" ")]
        self.exceptions: dict[str, list[str]] = {}
        with (folder / "noun.exc").open(encoding="utf-8") as exceptions:
            for line in exceptions:
                terms = line.split()
                self.exceptions[terms[0]] = terms[1:]
        self._synsets: dict[int, NounSynset] = {}

    def _lemma(self, line: int) -> bytes:
        start = int(self._lines[line])
        return self._index[start : self._index.find(b" ", start)]

    def offsets(self, lemma: str) -> list[int]:
        """The offsets of the lemma's synsets in WordNet's order (the most frequent sense
        first); none for a lemma that is no noun."""
        key = lemma.encode("utf-8")
        at = bisect_left(range(len(self._lines)), key, key=self._lemma)
        if at == len(self._lines) or self._lemma(at) != key:
            return []
        start = int(self._lines[at])
        fields = self._index[start : self._index.find(b"\n", start)].split()
        n_synsets, n_pointers = int(fields[2]), int(fields[3])
        return [int(offset) for offset in fields[6 + n_pointers : 6 + n_pointers + n_synsets]]

    def synsets(self, lemma: str) -> list[NounSynset | None]:
        """The noun synsets of ``lemma``, as nltk's ``synsets(lemma, pos="n")`` gives them:
        those of each of its base forms in turn (the lemma itself, then its exceptions' or its
        suffix rules' forms), None for a synset that cannot be read (with nltk's warning)."""
        form = lemma.lower()
        bases = self.exceptions.get(form)
        if bases is None:
            bases = [form[: -len(old)] + new for old, new in _SUFFIXES if form.endswith(old)]
        found: list[NounSynset | None] = []
        offsets = {base: self.offsets(base) for base in [form, *bases]}  # each base once
        for offsets_of_base in offsets.values():
            found += (self.synset(offset) for offset in offsets_of_base)
        return found

    def synset(self, offset: int) -> NounSynset | None:
        """The synset at ``offset`` of data.noun, read once; None, with nltk's warning, where
        no synset's line starts there (a damaged file)."""
        synset = self._synsets.get(offset)
        if synset is None:
            end = self._data.find(b"\n", offset)
            line = self._data[offset : len(self._data) if end < 0 else end].decode("utf-8")
            if not (line[:8].isalnum() and line[:8] == f"{offset:08d}"):
                warnings.warn(
                    f"No WordNet synset found for pos=n at offset={offset}.", stacklevel=2
                )
                return None
            synset = self._synsets[offset] = NounSynset(self, line)
        return synset


def _mapped(path: Path) -> mmap.mmap:
    with path.open("rb") as file:
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)


@lru_cache(maxsize=4)
def _load(folder: Path) -> WordNetNouns:
    return WordNetNouns(folder)


def load_nouns(wordnet: str | os.PathLike[str] | None = None) -> WordNetNouns:
    """The nouns of :func:`find_wordnet`'s folder, read once per process."""
    return _load(find_wordnet(wordnet))
