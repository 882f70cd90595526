"""The topic written from a person's marks, and the marks file it is written from.

The topic keeps the crawl's own topic file (the *original*) and adds the marked pages to it, so
that marking never loses what the user started with: the original's seeds, allowed networks,
strategy, languages and link score; a keyword topic stays one (its keywords, weights,
description and r0) with the marked pages as its ``examples`` and ``negatives``; an examples or
centroid topic becomes an examples topic whose folders hold its example pages (copied into
``positives/topic/`` and ``negatives/topic/``) beside the marked ones. A topic of another
method (taxonomy, thesaurus, semantic) cannot hold example pages: the marked pages then make an
examples topic of their own, and the topic file says what of the original it lacks, as it does
without an original.

An output folder holds::

    NAME.toml        name, seeds, [relevance]: the original's method and inputs (keywords) or
                     method = "examples", with examples = "positives" (+ negatives, with one)
    positives/       one .txt a page marked good: its title, a blank line, its main text
    negatives/       the same for the pages marked bad (only while one is)
    marks.json       {URL: "good" | "bad"}, what the folders are written from

Each example's file name is a digest of its URL, so a page keeps its file however often the
topic is rewritten, and a page marked again moves from one folder to the other. A rewrite
removes the files of pages no longer marked (only those: files of other names that someone
put in the folders stay and are read as examples too). A page whose main text the crawl did
not keep (``main_text`` null) is written with its title only.

Every file is written whole under a temporary name and renamed
(:func:`focused.relevance.cache.keep`), so a crawl or a reload that reads the folder at the same
moment sees the old file or the new one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from focused.errors import FocusedError, TopicError
from focused.relevance.cache import keep
from focused.store.keys import NAME_RE
from focused.topic.files import Topic, is_seed_url

__all__ = [
    "MARKS",
    "MARKS_FILE",
    "MIN_POSITIVES",
    "NEGATIVES",
    "POSITIVES",
    "example_file",
    "examples_in",
    "positives_needed",
    "read_marks",
    "write_examples_topic",
    "write_marks",
]

logger = logging.getLogger(__name__)

MARKS = ("good", "bad")
MARKS_FILE = "marks.json"
POSITIVES, NEGATIVES = "positives", "negatives"
# Good pages a crawl needs: without negatives its pages are judged by word vectors, fitted on
# the examples, and those need two (focused.relevance.vectors.ExampleVectors).
MIN_POSITIVES = 2
_OWN_FILE = re.compile(r"^[0-9a-f]{16}\.txt$")
# The subfolder of positives/ and negatives/ that holds the original topic's example pages.
ORIGINAL = "topic"
# Methods whose inputs the written topic keeps: keywords as such, example pages as examples.
KEEPS_KEYWORDS, KEEPS_EXAMPLES = ("keywords",), ("examples", "centroid")


def example_file(url: str) -> str:
    """The name of a marked page's example file: a digest of its URL."""
    return hashlib.blake2b(url.encode("utf-8"), digest_size=8).hexdigest() + ".txt"


def _example_text(item: Mapping[str, Any]) -> str:
    parts = (item.get("title"), item.get("main_text"))
    return "\n\n".join(str(part).strip() for part in parts if part and str(part).strip()) + "\n"


def _write_text(path: Path, text: str) -> None:
    """Write ``path`` whole (renamed into place), unless it already holds ``text``."""
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return
    except FileNotFoundError:
        pass
    keep(path, lambda out: out.write(data))


def _write_folder(folder: Path, texts: Mapping[str, str]) -> None:
    """Make ``folder``'s own example files exactly ``texts`` (name -> text)."""
    for name, text in texts.items():
        _write_text(folder / name, text)
    if folder.is_dir():
        for path in folder.iterdir():
            if _OWN_FILE.match(path.name) and path.name not in texts:
                path.unlink()


def _earlier_text(out: Path, url: str) -> str | None:
    """The text an earlier call wrote for ``url`` into ``out``, if one did."""
    for folder in (POSITIVES, NEGATIVES):
        try:
            return (out / folder / example_file(url)).read_text(encoding="utf-8")
        except FileNotFoundError:
            pass
    return None


def examples_in(folder: Path) -> int:
    """How many example pages ``folder`` holds, as a crawl reads them (its own files and any
    others put there)."""
    from focused.relevance.centroid import example_pages  # scikit-learn: only when needed

    try:
        return len(example_pages(folder))
    except TopicError:  # no folder, or none in it
        return 0


def _toml_list(values: Iterable[str]) -> str:
    # A JSON string is a TOML basic string (json.dumps escapes as TOML reads).
    return "[\n" + "".join(f"    {json.dumps(value)},\n" for value in values) + "]"


def _toml_keywords(keywords: Sequence[str] | Mapping[str, float] | str) -> str:
    """A keyword topic's ``keywords`` as TOML: a list, or an inline table of weights."""
    if isinstance(keywords, Mapping):
        pairs = ", ".join(f"{json.dumps(word)} = {float(w)!r}" for word, w in keywords.items())
        return "{ " + pairs + " }"
    return _toml_list([keywords] if isinstance(keywords, str) else keywords)


def positives_needed(out: str | Path, original: Topic | None = None) -> int:
    """How many more example pages the topic written into ``out`` needs before a crawl can fit
    it: none for a keyword original, which crawls without any."""
    if original is not None and original.method in KEEPS_KEYWORDS:
        return 0
    return max(0, MIN_POSITIVES - examples_in(Path(out) / POSITIVES))


def _copy_original(original: Topic, out: Path) -> bool:
    """Copy the example pages of ``original`` (its ``examples`` and ``negatives`` folders) into
    ``out``'s, in ``ORIGINAL`` below each, unless a copy is there or the folder is ``out``'s
    own (``--out`` of the topic being labelled); whether ``out`` holds such a copy."""
    copied = False
    for field, folder in (("examples", POSITIVES), ("negatives", NEGATIVES)):
        source = original.relevance.get(field)
        target = (out / folder / ORIGINAL).resolve()
        if source is None or target.is_relative_to(Path(source).resolve()):
            continue
        if not target.exists():
            shutil.copytree(source, target)
        copied = True
    return copied


def _relevance(original: Topic | None, good: int, bad: int) -> tuple[list[str], list[str]]:
    """The ``[relevance]`` table's lines, for ``good`` and ``bad`` example pages in the output
    folders, and the comments that say what of the original the topic lacks."""
    positives = [f"examples = {json.dumps(POSITIVES)}"]
    negatives = [f"negatives = {json.dumps(NEGATIVES)}"] if bad else []
    if original is None:
        notes = [
            "# Not known: the crawl's own topic (--topic), so neither its keywords nor its"
            " example pages are in this one, only the marked pages."
        ]
        return ['method = "examples"', *positives, *negatives], notes
    link = []
    if original.link_score != "anchor":
        link = [f"link_score = {json.dumps(original.link_score)}"]
    options = original.relevance
    if original.method in KEEPS_KEYWORDS:
        lines = ['method = "keywords"', f"keywords = {_toml_keywords(options['keywords'])}"]
        if options.get("description"):
            lines.append(f"description = {json.dumps(options['description'])}")
        lines.append(f"r0 = {options['r0']!r}")
        return [*lines, *(positives if good else []), *negatives, *link], []
    notes = []
    if original.method == "examples":
        link.insert(0, f"threshold = {options['threshold']!r}")
    elif original.method not in KEEPS_EXAMPLES:
        notes = [
            f"# Not kept from {original.path}: its {original.method} relevance (only keywords"
            " and example pages carry over); this topic is the marked pages."
        ]
    return ['method = "examples"', *positives, *negatives, *link], notes


def write_examples_topic(
    feed_items: Iterable[Mapping[str, Any]],
    marks: Mapping[str, str | None],
    out: str | Path,
    name: str,
    seeds: Sequence[str],
    *,
    allowed_networks: Sequence[str] = (),
    original: Topic | None = None,
) -> Path:
    """Write the topic of ``marks`` into the folder ``out``; return its topic file,
    ``out/NAME.toml``.

    - ``feed_items``: feed items (dicts with ``url``, ``title``, ``main_text``; ``bad`` ones
      are passed over), the text of each marked page: its first item that has a title or a
      main text. A marked page with no such item keeps the text an earlier call wrote for it
      into ``out`` (a page marked in another feed); else it is not written (a warning says
      how many);
    - ``marks``: URL -> ``"good"`` or ``"bad"`` (None: not marked);
    - ``name``: the new topic's crawl name (``name`` in the file, and the file's name). It
      should not be the crawl's own: a crawl under the same name from another topic file is
      refused;
    - ``seeds``: its seed URLs; ``allowed_networks``: its ``allowed_networks``, if any;
    - ``original``: the crawl's own topic, whose inputs the written one keeps (module doc);
      None: the topic is the marked pages alone, and says so.

    The topic file is always written, with ``examples`` and ``negatives`` while those folders
    hold an example; with a keyword original it loads and crawls from the start, else it loads
    (:func:`focused.topic.files.load_topic`) once ``positives`` holds one, and a crawl fits it
    from MIN_POSITIVES. A ValueError for a bad name, seed or mark; an OSError when the folder
    cannot be written.
    """
    if not NAME_RE.match(name):
        raise ValueError(f"not a crawl name (letters, digits, '_.-'): {name!r}")
    bad_seeds = [url for url in seeds if not is_seed_url(url)]
    if bad_seeds or not seeds:
        raise ValueError(f"not an http(s) seed URL: {bad_seeds[0]!r}" if bad_seeds else "no seeds")
    wrong = {mark for mark in marks.values() if mark is not None and mark not in MARKS}
    if wrong:
        raise ValueError(f"a mark is 'good', 'bad' or None, not {sorted(wrong)[0]!r}")
    texts: dict[str, str] = {}
    for item in feed_items:
        url = item.get("url")
        usable = not item.get("bad") and (item.get("title") or item.get("main_text"))
        if isinstance(url, str) and marks.get(url) and url not in texts and usable:
            texts[url] = _example_text(item)
    out = Path(out)
    marked = {url: mark for url, mark in marks.items() if mark}
    for url in marked.keys() - texts.keys():
        if (earlier := _earlier_text(out, url)) is not None:
            texts[url] = earlier
    missing = len(marked.keys() - texts.keys())
    if missing:
        logger.warning("%d marked pages have no text in the feed and are not written", missing)
    folders = {POSITIVES: "good", NEGATIVES: "bad"}
    written = {
        folder: {example_file(url): texts[url] for url in texts if marked[url] == mark}
        for folder, mark in folders.items()
    }
    (out / POSITIVES).mkdir(parents=True, exist_ok=True)  # named by the topic file, even empty
    copied = original is not None and _copy_original(original, out)
    for folder, files in written.items():
        _write_folder(out / folder, files)
    good, bad = len(written[POSITIVES]), len(written[NEGATIVES])
    relevance, notes = _relevance(
        original, examples_in(out / POSITIVES), examples_in(out / NEGATIVES)
    )
    if copied and original is not None:
        notes.append(f"# With the example pages of {original.path} in {ORIGINAL}/ of each folder.")
    lines = [
        f"# Written from marked pages (focused label): {good} good in {POSITIVES}/, {bad} bad "
        f"in {NEGATIVES}/.",
        *notes,
        "# Marking again rewrites this file and those folders.",
        f"name = {json.dumps(name)}",
        f"seeds = {_toml_list(seeds)}",
    ]
    if allowed_networks:
        lines.append(f"allowed_networks = {_toml_list(allowed_networks)}")
    if original is not None:
        if original.strategy != "soft":
            lines.append(f"strategy = {json.dumps(original.strategy)}")
        if original.languages:
            lines.append(f"languages = {_toml_list(original.languages)}")
    lines += ["", "[relevance]", *relevance]
    topic = out / f"{name}.toml"
    _write_text(topic, "\n".join(lines) + "\n")
    return topic


def read_marks(out: str | Path) -> dict[str, str]:
    """The marks kept in ``out`` (URL -> "good" or "bad"); none when there is no marks file.
    A FocusedError when it is not a marks file."""
    path = Path(out) / MARKS_FILE
    try:
        marks = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FocusedError(f"{path}: cannot read the marks ({exc})") from None
    if not isinstance(marks, dict) or not all(
        isinstance(url, str) and mark in MARKS for url, mark in marks.items()
    ):
        raise FocusedError(f'{path}: expected {{"URL": "good" or "bad", ...}}')
    return marks


def write_marks(out: str | Path, marks: Mapping[str, str]) -> Path:
    """Keep ``marks`` (URL -> "good" or "bad") in ``out``'s marks file, written whole."""
    path = Path(out) / MARKS_FILE
    text = json.dumps(dict(sorted(marks.items())), indent=1, ensure_ascii=False) + "\n"
    _write_text(path, text)
    return path
