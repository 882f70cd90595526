"""Generate a synthetic topical web as a bundle, for the demo and for tests on a fresh machine.

The web has what a focused crawler relies on, with noise, and nothing else:

- **Topical text.** A fixed taxonomy (3 top categories, 11 leaves); each leaf and each top
  category has its own vocabulary (real words first, then pronounceable made-up words), and
  there is a shared background vocabulary; word frequencies are Zipf-distributed. A page's
  words are drawn from its leaf (a share that varies per page, so some pages are only weakly
  on topic), its top category and the background.
- **Topical locality.** Most out-links go to pages of the same leaf or the same top category,
  the rest anywhere; popular pages (heavy-tailed) attract more links. The anchor text is the
  target's title, so it carries the target's leaf words.
- **No host signal.** Pages are spread over ``http://www.<word>.web.test/`` hosts by a hash of
  their path.
- **Bad pages** that a crawler must survive: a link to a missing page (404), a 500 page, a PNG
  image, a page declared UTF-8 with invalid bytes, a truncated page, a 301 redirect, a redirect
  loop and a page disallowed by its host's robots.txt.

- **Languages**, when asked (``languages``): a share of the pages in other languages than
  English. Such a page has the same topical words (its leaf's and top category's: the loan
  words and names a page on the topic has in any language) and, instead of the English
  background words, the words of its language's list (``words/<code>.txt``, most frequent
  first) at the same frequency ranks (English pages too, from ``words/en.txt``);
  ``languages.json`` gives each page's language. Sites link within their language, mostly:
  of the links that would go to a page in another language, ``P_SAME_LANGUAGE`` go to a page
  of the same leaf in the source's language.
  Without ``languages`` the web is as it always was, byte for byte.

Next to the bundle files (see :mod:`focused.lab.webs.bundle`) it writes ``taxonomy/`` (a folder
per category, example ``.txt`` documents drawn like pages but not part of the web) and
``topic.toml``, a ready topic file for the demo topic. :mod:`focused.lab.webs.hostile` adds pages
to it (``extra_pages``) and links to them from the demo topic's seeds (``seed_links``).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, pairwise
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from focused.errors import FocusedError
from focused.lab.webs.bundle import LABELS_FILE, PAGES_FILE, TOPICS_FILE, write_bundle

# top category -> (its own words, {leaf -> the leaf's words}); every word occurs once overall.
TAXONOMY: dict[str, tuple[str, dict[str, str]]] = {
    "Sports": (
        "sport team match player coach season league championship race win score training"
        " athlete competition record medal final fans stadium title",
        {
            "Cycling": "bicycle cyclist peloton pedal derailleur sprint stage tour saddle wheel"
            " gear climb descent breakaway velodrome chain handlebar jersey helmet mountain"
            " road gravel cadence crank",
            "Football": "goal striker midfielder defender goalkeeper penalty offside referee"
            " pitch kick header corner tackle dribble winger cup foul crossbar freekick assist"
            " formation derby transfer club",
            "Tennis": "racket serve volley backhand forehand court set deuce ace baseline net"
            " rally slice lob tiebreak grass clay umpire doubles singles smash grip seed"
            " wimbledon",
            "Swimming": "pool freestyle butterfly breaststroke backstroke lane lap dive relay"
            " medley goggles turn swimmer water splash buoy open distance stroke chlorine"
            " float fins wetsuit tumble",
        },
    ),
    "Science": (
        "science theory experiment research laboratory data measurement scientist hypothesis"
        " evidence model study observation analysis discovery method journal physics energy"
        " sample",
        {
            "Astronomy": "star planet galaxy telescope orbit comet nebula moon asteroid"
            " supernova eclipse cosmos constellation meteor astronomer redshift quasar pulsar"
            " solar lunar universe satellite spectrum gravity",
            "Chemistry": "molecule atom reaction acid compound element bond catalyst solution"
            " oxidation electron ion polymer isotope reagent titration crystal salt carbon"
            " hydrogen oxygen solvent periodic alkali",
            "Biology": "cell gene species protein evolution organism enzyme dna tissue bacteria"
            " virus membrane habitat ecology predator mutation chromosome plant animal fungus"
            " photosynthesis genome neuron embryo",
            "Geology": "rock mineral volcano earthquake fossil sediment tectonic magma granite"
            " basalt erosion glacier quartz limestone strata crust mantle lava canyon plate"
            " geologist ore shale sandstone",
        },
    ),
    "Arts": (
        "art artist work style culture audience gallery performance creative history critic"
        " movement exhibition festival modern classical masterpiece aesthetic studio tradition",
        {
            "Music": "melody harmony rhythm chord guitar piano orchestra symphony concert song"
            " album composer violin tempo band opera jazz singer lyrics note drum scale choir"
            " sonata",
            "Painting": "canvas brush oil pigment watercolor portrait landscape fresco palette"
            " easel sketch impressionism color texture varnish mural perspective abstract"
            " painter acrylic tempera gouache baroque still",
            "Cinema": "film director actor camera screenplay scene editing premiere cinema movie"
            " actress shot sequel trailer producer documentary animation screen script"
            " hollywood oscar cinematography reel montage",
        },
    ),
}
BACKGROUND = (
    "the of and to in is was for on that with as by at from it an be this which are or has had"
    " were its also first after other new one two three many most some more time year years"
    " people part during between world known used called such later over into only well when"
    " where while these there their both under since early several great large small long"
    " high number became made including however about around through each what would could"
    " can may will often city country area north south name place second then until against"
    " although end based form group life day century among because found began way public"
    " local national state own same different important main"
)
DEMO_CATEGORY = "Sports/Cycling"
TOPIC_CATEGORIES = (DEMO_CATEGORY, "Science/Astronomy", "Arts/Music", "Science")
PROTOCOL = (
    "Seeds and training pages are not counted. harvest@k = share of the first k other fetched"
    " pages whose categories include the topic's category or one below it."
)
# A 1x1 transparent PNG: the web's non-HTML page.
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg=="
)
HTML_TYPE = {"Content-Type": "text/html; charset=utf-8"}
HOSTILE_FILE = "hostile.json"  # what focused.lab.webs.hostile adds, case by case
LANGUAGES_FILE = "languages.json"  # each page's language, for a web of several
ENGLISH = "en"  # the language of the web's own words
P_SAME_LANGUAGE = 0.8  # share of the links to another language's page kept in the source's
WORDS = Path(__file__).with_name("words")  # <code>.txt: a language's words, most frequent first
_CONSONANTS = np.array(list("bdfgklmnprstvz"))
_VOWELS = np.array(list("aeiou"))
_ZIPF_SHIFT = 2.7  # Zipf-Mandelbrot: p(rank) ~ 1 / (rank + shift)
_TITLE_RANKS = 40  # titles use a leaf's most frequent words, mostly its real ones
_CHUNK = 4096  # pages sampled at a time, to bound memory on large webs
# Given a host's origin: bundle records for it, and (url, anchor) links to them from the seeds.
SeedHostPages = Callable[[str], tuple[Sequence[Mapping[str, Any]], Sequence[tuple[str, str]]]]


@dataclass(frozen=True)
class _Vocabulary:
    """All words in one array; leaf and top vocabularies are equal-sized slices of it."""

    words: np.ndarray
    leaf_base: np.ndarray  # leaf -> index of its first word
    top_base: np.ndarray  # top category -> index of its first word
    background_base: int
    topical_cdf: np.ndarray  # Zipf over a leaf or top vocabulary
    background_cdf: np.ndarray


@dataclass(frozen=True)
class _Taxonomy:
    leaves: list[str]  # "Top/Leaf"
    leaf_top: np.ndarray  # leaf -> top category index
    tops: list[str]


def generate_web(
    folder: str | Path,
    *,
    n_pages: int = 2000,
    n_hosts: int = 100,
    seed: int = 0,
    n_examples: int = 20,
    mean_out_links: float = 12.0,
    p_same_leaf: float = 0.6,
    p_same_top: float = 0.2,
    overwrite: bool = False,
    extra_pages: Sequence[Mapping[str, Any]] = (),
    seed_links: Sequence[tuple[str, str]] = (),
    on_seed_host: SeedHostPages | None = None,
    languages: Mapping[str, float] | None = None,
) -> Path:
    """Write a synthetic web bundle, its taxonomy and a demo topic file into ``folder``.

    Deterministic for a given ``seed`` (and numpy version). A link goes to the source's leaf
    with probability ``p_same_leaf``, else to its top category with ``p_same_top``, else to
    any page. ``extra_pages`` (bundle records, unlabelled) are added as they are, and each
    ``(url, anchor)`` of ``seed_links`` is linked from one of the demo topic's seed pages, in
    turn. ``on_seed_host``, given the origin of the demo topic's first seed
    (``http://www.x.web.test``), returns more of both, for pages on that relevant host.
    ``languages`` (code -> share of the pages, see :func:`read_languages`) writes pages in
    those languages, drawn (and their links kept mostly within a language) with random
    generators of their own, so the rest of the web is the same as without. Returns the
    folder.
    """
    folder = Path(folder)
    _check_arguments(folder, n_pages, n_hosts, p_same_leaf + p_same_top, overwrite)
    rng = np.random.default_rng(seed)
    taxonomy = _taxonomy()
    vocab = _vocabulary(rng, taxonomy, topical_size=300, background_size=1500)
    hosts = _pseudo_words(rng, n_hosts, set(vocab.words.tolist()))
    leaf_weights = rng.uniform(0.6, 1.4, len(taxonomy.leaves))
    leaf_of = rng.choice(len(taxonomy.leaves), n_pages, p=leaf_weights / leaf_weights.sum())
    titles = _titles(rng, vocab, leaf_of)
    urls = [
        f"http://www.{hosts[zlib.crc32(t.encode()) % n_hosts]}.web.test/{t.replace(' ', '_')}"
        for t in titles
    ]
    offsets, targets = _links(rng, taxonomy, leaf_of, mean_out_links, p_same_leaf, p_same_top)
    bad = _BadPages(rng, hosts, urls, titles, offsets)
    labels: dict[str, list[str]] = {
        u: [taxonomy.leaves[c]] for u, c in zip(urls, leaf_of.tolist(), strict=True)
    }
    labels.update({u: [] for u in bad.extra_urls})
    topics = _topics(rng, taxonomy, leaf_of, urls, offsets, exclude=bad.damaged, n_pages=n_pages)
    demo = next(t for t in topics["topics"] if t["category"] == DEMO_CATEGORY)
    if on_seed_host is not None:
        first = urlsplit(demo["seeds"][0])
        more_pages, more_links = on_seed_host(f"{first.scheme}://{first.netloc}")
        extra_pages, seed_links = [*extra_pages, *more_pages], [*seed_links, *more_links]
    labels.update({page["url"]: [] for page in extra_pages})
    for n, link in enumerate(seed_links):
        seed_page = urls.index(demo["seeds"][n % len(demo["seeds"])])
        bad.see_also.setdefault(seed_page, []).append(link)
    language_of = None
    if languages:
        language_of = _languages_of(seed, n_pages, languages)
        targets = _same_language_links(seed, leaf_of, language_of, offsets, targets)
    pages = _pages(rng, vocab, taxonomy, leaf_of, titles, urls, offsets, targets, bad, language_of)
    _clear(folder)
    write_bundle(folder, chain(pages, extra_pages), labels=labels, topics=topics)
    if language_of is not None:
        written = dict(zip(urls, language_of, strict=True))
        (folder / LANGUAGES_FILE).write_text(json.dumps(written, indent=0) + "\n", "utf-8")
    _write_taxonomy(folder / "taxonomy", rng, vocab, taxonomy, n_examples)
    _write_topic_file(folder / "topic.toml", demo["seeds"])
    return folder


def _check_arguments(
    folder: Path, n_pages: int, n_hosts: int, p_local: float, overwrite: bool
) -> None:
    if n_pages < 100:
        raise FocusedError(f"a synthetic web needs at least 100 pages, not {n_pages}")
    if not 1 <= n_hosts <= n_pages:
        raise FocusedError(f"the number of hosts must be between 1 and {n_pages}, not {n_hosts}")
    if not 0 <= p_local <= 1:
        raise FocusedError("p_same_leaf + p_same_top must lie between 0 and 1")
    if folder.exists() and any(folder.iterdir()) and not overwrite:
        raise FocusedError(
            f"{folder}: folder is not empty (--force or overwrite=True replaces the web in it)"
        )


def _clear(folder: Path) -> None:
    """Remove a previous web's files, so no old example survives in taxonomy/."""
    for name in (PAGES_FILE, LABELS_FILE, TOPICS_FILE, HOSTILE_FILE, LANGUAGES_FILE, "topic.toml"):
        (folder / name).unlink(missing_ok=True)
    shutil.rmtree(folder / "taxonomy", ignore_errors=True)


def word_lists() -> dict[str, list[str]]:
    """Each language's words (``words/<code>.txt``, most frequent first; ``#`` starts a
    comment), by code."""
    lists = {}
    for path in sorted(WORDS.glob("*.txt")):
        lines = (line.split("#", 1)[0] for line in path.read_text("utf-8").splitlines())
        lists[path.stem] = [word for line in lines for word in line.split()]
    return lists


def read_languages(text: str) -> dict[str, float]:
    """``en,de,fr`` (equal shares) or ``en=0.6,de=0.2,fr=0.2`` as code -> share of the pages
    (shares need not add up to 1: they are weights); a FocusedError says what is wrong."""
    known = set(word_lists())
    shares: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        code, _, share = part.partition("=")
        code = code.strip().lower()
        if code not in known:
            raise FocusedError(f"--languages: no words for {code!r} (one of {sorted(known)})")
        try:
            shares[code] = float(share) if share else 1.0
        except ValueError:
            raise FocusedError(f"--languages: not a share: {part!r}") from None
        if not shares[code] > 0:
            raise FocusedError(f"--languages: a share must be above 0: {part!r}")
    if not shares:
        raise FocusedError("--languages: expected codes such as en,de,fr")
    return shares


def _languages_of(seed: int, n_pages: int, languages: Mapping[str, float]) -> list[str]:
    """Each page's language, drawn by its share with a generator of its own (the web's own
    draws stay as they are)."""
    codes = list(languages)
    weights = np.array([languages[code] for code in codes], dtype=float)
    rng = np.random.default_rng([seed, 639])
    return [codes[i] for i in rng.choice(len(codes), n_pages, p=weights / weights.sum())]


def _same_language_links(
    seed: int,
    leaf_of: np.ndarray,
    language_of: Sequence[str],
    offsets: np.ndarray,
    targets: np.ndarray,
) -> np.ndarray:
    """The links, of which P_SAME_LANGUAGE that went to a page in another language go to a
    page of the same leaf in the source's language instead (where there is one): sites link
    within their language, mostly."""
    rng = np.random.default_rng([seed, 640])
    language = np.array(language_of)
    source = np.repeat(np.arange(len(leaf_of)), np.diff(offsets))
    targets = targets.copy()
    moved = (language[targets] != language[source]) & (rng.random(targets.size) < P_SAME_LANGUAGE)
    for at in np.flatnonzero(moved).tolist():
        group = np.flatnonzero(
            (leaf_of == leaf_of[source[at]]) & (language == language[source[at]])
        )
        if group.size:
            targets[at] = group[rng.integers(group.size)]
    return targets


class _Translation:
    """A page's background words in its language: the background word of rank r becomes the
    language's word of rank r (its list repeated past its end). English pages too: the web's
    own background has made-up words past its real ones, which py3langid takes for some other
    language (Nigerian Pidgin, mostly) once real words of other languages are around."""

    def __init__(self, vocab: _Vocabulary) -> None:
        background = vocab.words[vocab.background_base :].tolist()
        self.rank = {word: r for r, word in enumerate(background)}
        self.lists = word_lists()

    def __call__(self, words: list[str], language: str) -> list[str]:
        own, rank = self.lists[language], self.rank
        return [own[rank[w] % len(own)] if w in rank else w for w in words]


def _taxonomy() -> _Taxonomy:
    leaves, leaf_top = [], []
    for t, (top, (_, children)) in enumerate(TAXONOMY.items()):
        leaves += [f"{top}/{leaf}" for leaf in children]
        leaf_top += [t] * len(children)
    return _Taxonomy(leaves=leaves, leaf_top=np.array(leaf_top), tops=list(TAXONOMY))


def _pseudo_words(rng: np.random.Generator, n: int, taken: set[str]) -> list[str]:
    """Return ``n`` new pronounceable words (consonant-vowel syllables) not in ``taken``."""
    words: list[str] = []
    while len(words) < n:
        syllables = rng.integers(2, 4)
        word = "".join(
            c + v
            for c, v in zip(
                rng.choice(_CONSONANTS, syllables), rng.choice(_VOWELS, syllables), strict=True
            )
        )
        if word not in taken:
            taken.add(word)
            words.append(word)
    return words


def _zipf_cdf(size: int) -> np.ndarray:
    weights = 1.0 / (np.arange(size) + 1 + _ZIPF_SHIFT)
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def _vocabulary(
    rng: np.random.Generator, taxonomy: _Taxonomy, topical_size: int, background_size: int
) -> _Vocabulary:
    """Lay out leaf, top and background vocabularies: real words at the frequent ranks."""
    real = [words.split() for _, leaves in TAXONOMY.values() for words in leaves.values()]
    real += [own.split() for own, _ in TAXONOMY.values()]
    taken = {w for words in real for w in words} | set(BACKGROUND.split())
    words: list[str] = []
    for own in real:
        words += own + _pseudo_words(rng, topical_size - len(own), taken)
    background = BACKGROUND.split()
    words += background + _pseudo_words(rng, background_size - len(background), taken)
    n_leaves = len(taxonomy.leaves)
    return _Vocabulary(
        words=np.array(words),
        leaf_base=np.arange(n_leaves) * topical_size,
        top_base=(n_leaves + np.arange(len(taxonomy.tops))) * topical_size,
        background_base=(n_leaves + len(taxonomy.tops)) * topical_size,
        topical_cdf=_zipf_cdf(topical_size),
        background_cdf=_zipf_cdf(background_size),
    )


def _sample_words(
    rng: np.random.Generator, vocab: _Vocabulary, leaf_top: np.ndarray, leaves: np.ndarray
) -> list[list[str]]:
    """Draw the words of one document per entry of ``leaves`` (leaf, top, background mix)."""
    n_words = rng.integers(120, 400, len(leaves))
    leaf_share = rng.uniform(0.25, 0.6, len(leaves))
    doc = np.repeat(np.arange(len(leaves)), n_words)
    u = rng.random(doc.size)
    rank = np.searchsorted(vocab.topical_cdf, rng.random(doc.size))
    rank_bg = np.searchsorted(vocab.background_cdf, rng.random(doc.size))
    leaf = leaves[doc]
    index = np.where(
        u < leaf_share[doc],
        vocab.leaf_base[leaf] + rank,
        np.where(
            u < leaf_share[doc] + 0.15,
            vocab.top_base[leaf_top[leaf]] + rank,
            vocab.background_base + rank_bg,
        ),
    )
    words = vocab.words[index].tolist()
    return [words[a:b] for a, b in pairwise([0, *np.cumsum(n_words).tolist()])]


def _titles(rng: np.random.Generator, vocab: _Vocabulary, leaf_of: np.ndarray) -> list[str]:
    """Give every page a unique title of 2-3 of its leaf's frequent words."""
    cdf = vocab.topical_cdf[:_TITLE_RANKS] / vocab.topical_cdf[_TITLE_RANKS - 1]
    ranks = np.searchsorted(cdf, rng.random((len(leaf_of), 3)))
    lengths = rng.integers(2, 4, len(leaf_of))
    seen: set[str] = set()
    titles = []
    for leaf, row, length in zip(leaf_of, ranks, lengths, strict=True):
        words = dict.fromkeys(vocab.words[vocab.leaf_base[leaf] + row[:length]].tolist())
        title = " ".join(w.capitalize() for w in words)
        unique, n = title, 1
        while unique in seen:
            n += 1
            unique = f"{title} {n}"
        seen.add(unique)
        titles.append(unique)
    return titles


def _links(
    rng: np.random.Generator,
    taxonomy: _Taxonomy,
    leaf_of: np.ndarray,
    mean_out_links: float,
    p_same_leaf: float,
    p_same_top: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Return link offsets per page and targets: page i links to targets[offsets[i]:offsets[i+1]].

    Out-degrees are geometric (2% of pages link nowhere); within the chosen group a target is
    drawn in proportion to a heavy-tailed popularity.
    """
    n = len(leaf_of)
    degree = np.minimum(rng.geometric(1 / mean_out_links, n), 4 * int(mean_out_links))
    degree[rng.random(n) < 0.02] = 0
    offsets = np.concatenate([[0], np.cumsum(degree)])
    source = np.repeat(np.arange(n), degree)
    popularity = rng.pareto(1.5, n) + 1
    u = rng.random(source.size)
    targets = np.empty(source.size, dtype=np.int64)
    top_of = taxonomy.leaf_top[leaf_of]
    groups = [
        (u < p_same_leaf, leaf_of),
        ((u >= p_same_leaf) & (u < p_same_leaf + p_same_top), top_of),
    ]
    for chosen, group_of in groups:
        for g in np.unique(group_of):
            links = chosen & (group_of[source] == g)
            targets[links] = _pick(rng, np.flatnonzero(group_of == g), popularity, links.sum())
    anywhere = u >= p_same_leaf + p_same_top
    targets[anywhere] = _pick(rng, np.arange(n), popularity, anywhere.sum())
    return offsets, targets


def _pick(
    rng: np.random.Generator, members: np.ndarray, popularity: np.ndarray, k: int
) -> np.ndarray:
    cdf = np.cumsum(popularity[members])
    index = np.searchsorted(cdf, rng.random(k) * cdf[-1], side="right")
    return members[np.minimum(index, len(members) - 1)]


class _BadPages:
    """The pages a crawler must survive, and which ordinary pages link to them."""

    def __init__(
        self,
        rng: np.random.Generator,
        hosts: list[str],
        urls: list[str],
        titles: list[str],
        offsets: np.ndarray,
    ) -> None:
        base, robots_base = f"http://www.{hosts[0]}.web.test", f"http://www.{hosts[-1]}.web.test"
        linking = np.flatnonzero(np.diff(offsets) > 0)
        self.invalid_utf8, self.truncated, moved = rng.choice(linking, 3, replace=False).tolist()
        self.damaged = {self.invalid_utf8, self.truncated}
        moved_url = f"{base}/Moved_{titles[moved].replace(' ', '_')}"
        robots = {
            "url": f"{robots_base}/robots.txt",
            "status": 200,
            "headers": {"Content-Type": "text/plain"},
            "body": "User-agent: *\nDisallow: /private/\n",
        }
        self.records: list[dict[str, Any]] = [
            _html_record(f"{base}/Server_error", "Internal Server Error", status=500),
            {
                "url": f"{base}/Logo.png",
                "status": 200,
                "headers": {"Content-Type": "image/png"},
                "body": PNG_1X1,
            },
            _redirect(moved_url, urls[moved]),
            _redirect(f"{base}/Loop_a", f"{base}/Loop_b"),
            _redirect(f"{base}/Loop_b", f"{base}/Loop_a"),
            _html_record(f"{robots_base}/private/Staff_only", "Staff only"),
        ]
        self.extra_urls = [r["url"] for r in self.records]  # pages with no category
        self.records.append(robots)
        anchors = {
            f"{base}/Missing_page": "Missing page",
            f"{base}/Server_error": "Server error",
            f"{base}/Logo.png": "Logo",
            moved_url: titles[moved],
            f"{base}/Loop_a": "Loop",
            f"{robots_base}/private/Staff_only": "Staff only",
            urls[self.invalid_utf8]: titles[self.invalid_utf8],
            urls[self.truncated]: titles[self.truncated],
        }
        self.see_also: dict[int, list[tuple[str, str]]] = {}
        for url, anchor in anchors.items():
            for page in rng.choice(linking, 3, replace=False).tolist():
                self.see_also.setdefault(page, []).append((url, anchor))

    def damage(self, page: int, body: str) -> str | bytes:
        """Return the page's body as served: with invalid UTF-8 bytes, or cut short."""
        if page == self.invalid_utf8:
            head, _, tail = body.partition("</p>")
            return head.encode() + b" \xff\xfe\xc3( broken bytes</p>" + tail.encode()
        if page == self.truncated:
            return body[: len(body) * 3 // 5]
        return body


def _html_record(url: str, title: str, status: int = 200) -> dict[str, Any]:
    body = f"<!DOCTYPE html>\n<html><head><title>{title}</title></head><body><h1>{title}</h1>"
    return {
        "url": url,
        "status": status,
        "headers": HTML_TYPE,
        "body": f"{body}<p>{title}.</p></body></html>\n",
    }


def _redirect(url: str, location: str) -> dict[str, Any]:
    return {
        "url": url,
        "status": 301,
        "headers": {**HTML_TYPE, "Location": location},
        "body": f'<html><body><a href="{location}">Moved</a></body></html>\n',
    }


def _pages(
    rng: np.random.Generator,
    vocab: _Vocabulary,
    taxonomy: _Taxonomy,
    leaf_of: np.ndarray,
    titles: list[str],
    urls: list[str],
    offsets: np.ndarray,
    targets: np.ndarray,
    bad: _BadPages,
    language_of: Sequence[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield the page records, sampling words a chunk of pages at a time (in each page's
    language, with ``language_of``)."""
    translate = _Translation(vocab) if language_of is not None else None
    for start in range(0, len(leaf_of), _CHUNK):
        chunk = leaf_of[start : start + _CHUNK]
        for page, words in enumerate(_sample_words(rng, vocab, taxonomy.leaf_top, chunk), start):
            lang = ENGLISH if language_of is None else language_of[page]
            if translate is not None:
                words = translate(words, lang)
            links = dict.fromkeys(
                t for t in targets[offsets[page] : offsets[page + 1]].tolist() if t != page
            )
            for target, position in zip(links, rng.random(len(links)).tolist(), strict=True):
                anchor = f'<a href="{urls[target]}">{titles[target]}</a>'
                words.insert(int(position * len(words)), anchor)
            body = _html(titles[page], _paragraphs(rng, words), bad.see_also.get(page, []), lang)
            yield {
                "url": urls[page],
                "status": 200,
                "headers": HTML_TYPE,
                "body": bad.damage(page, body),
            }
    yield from bad.records


def _paragraphs(rng: np.random.Generator, words: list[str]) -> list[str]:
    """Cut words into sentences of 6-14 words and paragraphs of 2-5 sentences."""
    cuts = np.cumsum(rng.integers(6, 15, len(words) // 6 + 1)).tolist()
    sentences = []
    for a, b in pairwise([0, *cuts]):
        if a >= len(words):
            break
        sentence = " ".join(words[a:b])
        sentences.append(sentence[0].upper() + sentence[1:] + ".")
    breaks = np.cumsum(rng.integers(2, 6, len(sentences))).tolist()
    return [" ".join(sentences[a:b]) for a, b in pairwise([0, *breaks]) if a < len(sentences)]


def _html(
    title: str, paragraphs: list[str], see_also: list[tuple[str, str]], lang: str = ENGLISH
) -> str:
    parts = [
        f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n</head>\n<body>\n<h1>{title}</h1>\n"
    ]
    parts += [f"<p>{p}</p>\n" for p in paragraphs]
    if see_also:
        parts.append("<h2>See also</h2>\n<ul>\n")
        parts += [f'<li><a href="{url}">{anchor}</a></li>\n' for url, anchor in see_also]
        parts.append("</ul>\n")
    parts.append("</body>\n</html>\n")
    return "".join(parts)


def _topics(
    rng: np.random.Generator,
    taxonomy: _Taxonomy,
    leaf_of: np.ndarray,
    urls: list[str],
    offsets: np.ndarray,
    exclude: set[int],
    n_pages: int,
) -> dict[str, Any]:
    """Describe the development topics as Wikispeedia's topics.json does: seeds have out-links."""
    has_links = np.diff(offsets) > 0
    topics = []
    for category in TOPIC_CATEGORIES:
        members = np.flatnonzero(
            [leaf == category or leaf.startswith(category + "/") for leaf in taxonomy.leaves]
        )
        pages = np.flatnonzero(np.isin(leaf_of, members))
        usable = rng.permutation([p for p in pages.tolist() if p not in exclude])
        seeds = [p for p in usable.tolist() if has_links[p]][:8]
        training = [p for p in usable.tolist() if p not in seeds][:30]
        topics.append(
            {
                "name": category,
                "category": category,
                "articles": int(pages.size),
                "budget": max(100, min(1000, n_pages // 4)),
                "seeds": [urls[p] for p in seeds],
                "training": [urls[p] for p in training],
            }
        )
    return {"protocol": PROTOCOL, "topics": topics}


def _write_taxonomy(
    folder: Path, rng: np.random.Generator, vocab: _Vocabulary, taxonomy: _Taxonomy, n: int
) -> None:
    """Write ``n`` example documents per leaf, drawn like pages but not part of the web."""
    leaves = np.repeat(np.arange(len(taxonomy.leaves)), n)
    documents = _sample_words(rng, vocab, taxonomy.leaf_top, leaves)
    for i, (leaf, words) in enumerate(zip(leaves.tolist(), documents, strict=True)):
        path = folder / taxonomy.leaves[leaf] / f"example_{i % n + 1:03d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n\n".join(_paragraphs(rng, words)) + "\n", encoding="utf-8")


def crawl_name_for(folder: Path) -> str:
    """A crawl name (the topic's ``name``) from the web's folder name, so two generated webs
    are two crawls, never one frontier."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", folder.resolve().name).strip("-._")[:100]
    return name or "web"


def _write_topic_file(path: Path, seeds: list[str]) -> None:
    seed_lines = "".join(f"    {json.dumps(url)},\n" for url in seeds)
    path.write_text(
        f"name = {json.dumps(crawl_name_for(path.parent))}\n"
        f'seeds = [\n{seed_lines}]\nstrategy = "soft"\n\n'
        f'[relevance]\nmethod = "taxonomy"\ntaxonomy = "taxonomy"\n'
        f"good = [{json.dumps(DEMO_CATEGORY)}]\n",
        encoding="utf-8",
    )
