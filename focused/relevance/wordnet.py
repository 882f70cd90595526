"""WordNet 3.0 for Batsakis et al. 2009's semantic model, which reads all of it (senses,
similarities): nltk's ``WordNetCorpusReader`` over a plain dict folder, read once per process
and shared by its threads. (Anchor glosses read only its nouns, without nltk:
:mod:`focused.relevance.nouns`.)

The folder is :func:`~focused.relevance.nouns.find_wordnet`'s: the ``wordnet`` argument, else
the environment variable FOCUSED_WORDNET, else ``/usr/share/wordnet``, where Debian's
``wordnet-base`` installs it (``scripts/setup.sh`` installs it). Building nltk's lemma index
from the index files takes about 0.8 s of CPU, so the first process of a machine keeps it in
the cache folder (:mod:`focused.relevance.cache`) and every later one reads it back from there
in about 0.1 s.
"""

from __future__ import annotations

import gc
import hashlib
import io
import json
import logging
import os
import threading
import warnings
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

import nltk
import nltk.data
from nltk.corpus.reader.wordnet import Synset, WordNetCorpusReader

from focused.relevance.cache import default_cache_dir, keep
from focused.relevance.nouns import DEBIAN_WORDNET, WORDNET_ENV, find_wordnet

__all__ = ["DEBIAN_WORDNET", "WORDNET_ENV", "find_wordnet", "load_wordnet"]

logger = logging.getLogger("focused.relevance")

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


# The first line of a kept lemma index; a file that does not start with it is built again.
_INDEX_FORMAT = "focused wordnet lemma index 1"
# The files the kept index is built from (data.adj for its satellite adjectives).
_INDEX_SOURCES = tuple(f"index.{pos}" for pos in ("noun", "verb", "adj", "adv")) + ("data.adj",)


class _LemmaIndex(Mapping[str, dict[str, list[int]]]):
    """nltk's lemma index (lemma -> part of speech -> synset offsets) read from a kept file:
    a lemma's entry is kept as its JSON text and decoded when first looked up, so reading the
    index builds one dict of strings instead of 150,000 dicts of lists."""

    def __init__(self, entries: dict[str, str]):
        self._entries = entries
        self._decoded: dict[str, dict[str, list[int]]] = {}

    def __getitem__(self, lemma: str) -> dict[str, list[int]]:
        entry = self._decoded.get(lemma)
        if entry is None:
            entry = self._decoded[lemma] = json.loads(self._entries[lemma])
        return entry

    def __contains__(self, lemma: object) -> bool:
        return lemma in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def _index_path(folder: Path, cache_dir: str) -> Path:
    """Where the lemma index of ``folder`` is kept: the digest covers the folder, its index
    files' sizes and modification times, and nltk's version."""
    digest = hashlib.sha256(f"{folder}\0{nltk.__version__}\0{_INDEX_FORMAT}\n".encode())
    for name in _INDEX_SOURCES:
        stat = (folder / name).stat()
        digest.update(f"{name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return Path(cache_dir) / f"wordnet-index-{digest.hexdigest()[:12]}.txt"


def _read_index(path: Path) -> tuple[dict[str, str], set[int]] | None:
    """A kept lemma index: each lemma's entry as JSON text, and the satellite adjectives'
    offsets; None when there is none, or the file is not one."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
        if lines[0] != _INDEX_FORMAT:
            return None
        n = int(lines[1])
        if len(lines) != 2 * n + 3:
            return None
        satellites = {int(offset) for offset in lines[-1].split()}
    except (OSError, UnicodeDecodeError, IndexError, ValueError):
        return None
    return dict(zip(lines[2 : n + 2], lines[n + 2 : 2 * n + 2], strict=True)), satellites


def _index_text(index: Mapping[str, dict[str, list[int]]], satellites: set[int]) -> str:
    """The kept file of a lemma index: the format line, the number of lemmas, each lemma on a
    line, then each lemma's entry as JSON on a line, then the satellites' offsets."""
    entries = (json.dumps(entry, separators=(",", ":")) for entry in index.values())
    return "\n".join(
        [_INDEX_FORMAT, str(len(index)), *index, *entries, " ".join(map(str, sorted(satellites)))]
    )


class _WordNet(WordNetCorpusReader):
    """nltk's reader over a plain WordNet dict folder, such as Debian's wordnet-base.

    That folder has no ``lexnames`` file, so the standard list stands in for a missing one, and
    no mapping to nltk's own downloaded WordNet is built (it serves multilingual data, which
    is not read here; nltk would look for a download that is not there). The index, exception
    and data files are read as plain files: nltk's own seekable stream reads a line about 20
    times slower, and reading the indexes through it took most of the reader's 2.5 s start.

    With ``index`` (a file in the cache folder) the lemma index and the satellite adjectives
    are read from that file if it holds them, else built from the index files and written
    there.

    A synset is read by seeking its data file, one handle the reader keeps, to the synset's
    offset and reading a line, so two threads reading at once (a refit's and the crawl's)
    read each other's lines, and nltk gives None; the reads take turns (``_reading``, a lock
    its holder may take again: reading a satellite adjective reads its head adjective).
    """

    def __init__(self, folder: Path, index: Path | None = None):
        self._folder = folder
        self._reading = threading.RLock()
        self._kept = None if index is None else _read_index(index)
        with warnings.catch_warnings():  # "multilingual functions are not available"
            warnings.simplefilter("ignore", UserWarning)
            super().__init__(str(folder), None)
        if index is not None and self._kept is None:
            text = _index_text(self._lemma_pos_offset_map, self.satellite_offsets).encode()
            try:
                keep(index, lambda out: out.write(text))
            except OSError as exc:  # a read-only cache folder: build the index every time
                logger.warning("WordNet's lemma index is not kept in %s: %s", index.parent, exc)

    def _scan_satellites(self) -> None:
        if self._kept is None:
            super()._scan_satellites()
        else:
            self.satellite_offsets = self._kept[1]

    def _load_lemma_pos_offset_map(self) -> None:
        if self._kept is None:
            super()._load_lemma_pos_offset_map()
        else:
            self._lemma_pos_offset_map = _LemmaIndex(self._kept[0])

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

    def synset_from_pos_and_offset(self, pos: str, offset: int) -> Synset | None:
        with self._reading:
            return super().synset_from_pos_and_offset(pos, offset)

    def _synset_from_pos_and_line(self, pos: str, data_file_line: str) -> Synset:
        """A synset read from its line, its pointers to other synsets in the data files' order.
        nltk keeps them in sets of (part of speech, offset), and its ``hypernyms()``,
        ``hyponyms()`` and the like list them in the sets' order, which changes with
        PYTHONHASHSEED: a gloss's words and a semantic topic's terms would come in another
        order in every process, and sums over them would differ in their last bits."""
        synset = super()._synset_from_pos_and_line(pos, data_file_line)
        for symbol, pointers in synset._pointers.items():
            synset._pointers[symbol] = sorted(pointers)
        return synset

    def map_wn(self, version: str = "wordnet") -> None:
        return None


@lru_cache(maxsize=4)
def _load(folder: Path) -> WordNetCorpusReader:
    if str(folder) not in nltk.data.path:  # nltk reads only below its data paths
        nltk.data.path.append(str(folder))
    # The index is some 600,000 new lists and dicts (300,000 strings when kept), none of them
    # garbage: the collector's passes over them while it is built cost a third of the time.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _WordNet(folder, _index_path(folder, default_cache_dir()))
    finally:
        if enabled:
            gc.enable()


def load_wordnet(wordnet: str | os.PathLike[str] | None = None) -> WordNetCorpusReader:
    """nltk's WordNet reader over :func:`find_wordnet`'s folder, read once per process (its
    lemma index kept in the cache folder)."""
    return _load(find_wordnet(wordnet))
