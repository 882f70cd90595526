"""WordNet 3.0 for the methods that read it (seed 002's semantic model, the anchor glosses):
nltk's ``WordNetCorpusReader`` over a plain dict folder, read once per process.

The folder is the ``wordnet`` argument, else the environment variable FOCUSED_WORDNET, else
``/usr/share/wordnet``, where Debian's ``wordnet-base`` installs it (``scripts/setup.sh``
installs it). Reading the index takes about 0.8 s of CPU.
"""

from __future__ import annotations

import gc
import io
import os
import warnings
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

import nltk.data
from nltk.corpus.reader.wordnet import WordNetCorpusReader

from focused.errors import FocusedError

__all__ = ["DEBIAN_WORDNET", "WORDNET_ENV", "find_wordnet", "load_wordnet"]

DEBIAN_WORDNET = "/usr/share/wordnet"  # `apt-get install wordnet-base` puts the dict files here
WORDNET_ENV = "FOCUSED_WORDNET"
# The files nltk's reader opens when it starts (data.* when a synset is first read).
_WORDNET_FILES = tuple(
    f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")
) + tuple(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv"))
# WordNet 3.0's lexicographer files, in file-number order (lexnames(5WN)); wordnet-base ships
# only the man page, and nltk's reader needs the list to start.
_LEXNAMES = [
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
]
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
# Files read as plain files: the indexes and exception lists (read through once, at start) and
# the data files (at start data.adj is read through; later a synset is read by seeking to its
# byte offset, the start of a line). WordNet 3.0's files are ASCII.
_PLAIN_FILES = frozenset(
    f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")
) | frozenset(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv"))


class _WordNet(WordNetCorpusReader):
    """nltk's reader over a plain WordNet dict folder, such as Debian's wordnet-base.

    That folder has no ``lexnames`` file, so the standard list stands in for a missing one, and
    no mapping to nltk's own downloaded WordNet is built (it serves multilingual data, which
    is not read here; nltk would look for a download that is not there). The index, exception
    and data files are read as plain files: nltk's own seekable stream reads a line about 20
    times slower, and reading the indexes through it took most of the reader's 2.5 s start.
    """

    def __init__(self, folder: Path):
        self._folder = folder
        with warnings.catch_warnings():  # "multilingual functions are not available"
            warnings.simplefilter("ignore", UserWarning)
            super().__init__(str(folder), None)

    def open(self, file: str) -> IO[Any]:
        if file == "lexnames" and not (self._folder / file).is_file():
            return io.StringIO(
                "".join(
                    f"{i:02d}\t{name}\t{_CATEGORY[name.partition('.')[0]]}\n"
                    for i, name in enumerate(_LEXNAMES)
                )
            )
        if file in _PLAIN_FILES:
            return (self._folder / file).open(encoding="utf-8")
        return super().open(file)

    def map_wn(self, version: str = "wordnet") -> None:
        return None


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
    missing = next((name for name in _WORDNET_FILES if not (folder / name).is_file()), None)
    if missing:
        raise FocusedError(
            f"WordNet not found: {folder} ({why}) has no {missing}; install it with "
            f"`apt-get install wordnet-base`, or set {WORDNET_ENV} or relevance.wordnet "
            "to a WordNet 3.0 dict folder"
        )
    return folder.resolve()


@lru_cache(maxsize=4)
def _load(folder: Path) -> WordNetCorpusReader:
    if str(folder) not in nltk.data.path:  # nltk reads only below its data paths
        nltk.data.path.append(str(folder))
    # The index is some 600,000 new lists and dicts, none of them garbage: the collector's
    # passes over them while it is built cost a third of the time.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _WordNet(folder)
    finally:
        if enabled:
            gc.enable()


def load_wordnet(wordnet: str | os.PathLike[str] | None = None) -> WordNetCorpusReader:
    """nltk's WordNet reader over :func:`find_wordnet`'s folder, read once per process."""
    return _load(find_wordnet(wordnet))
