"""Topic files: what a crawl is about, read from TOML and checked field by field.

Paths inside a topic file are relative to the file. Every problem is one TopicError that names
the file, the field and what is wrong::

    name = "birds"
    seeds = ["http://www.example.test/Swan"]   # and/or seeds_file = "seeds.txt"
    seeds_from = "previous"                      # or a lists file (optional; focused.distill.lists)
    strategy = "soft"                            # or hard, breadth-first (README)
    allowed_networks = ["10.0.0.0/8"]            # non-public networks it may fetch (optional)
    [relevance]
    method = "taxonomy"
    taxonomy = "taxonomy"                        # folder tree of example documents
    good = ["Science/Biology/Birds"]

or, for best-first (tf-idf cosine to the centroid of example pages, seed 002)::

    [relevance]
    method = "centroid"
    examples = "examples"                        # folder of .txt/.html example pages
    threshold = 0.2                              # R at which hard focus expands a page

or ``method = "examples"`` (``examples``, optional ``negatives`` folders, ``threshold``),
``method = "keywords"`` (``keywords`` list or table of weights, ``description``, ``r0``) and
``method = "thesaurus"`` (``thesaurus`` file, ``threshold``, ``depth_weight``, ``url_weight``,
``anchor_weight``); see the README.
Seed 002's WordNet expansion is ``method = "semantic"`` (``terms``, ``description``, ``wordnet``).
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from focused.errors import TopicError
from focused.urls import BadURL, clean_url

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
# How links are scored and scheduled (focused.strategies); ``focus`` is the older spelling of
# ``strategy`` for seed 000's two modes.
STRATEGY_NAMES = ("soft", "hard", "breadth-first", "best-n-first", "genetic", "hmm", "infospiders")
TOP_FIELDS = {
    "name",
    "seeds",
    "seeds_file",
    "seeds_from",
    "strategy",
    "focus",
    "relevance",
    "strategy_options",
    "allowed_networks",
}
# Fields of [strategy_options], the options of one strategy: hmm's example browse paths.
STRATEGY_OPTIONS = {"paths"}
PREVIOUS = "previous"


@dataclass(frozen=True)
class Topic:
    """A checked topic file."""

    path: Path
    name: str
    seeds: list[str]
    strategy: str
    method: str
    relevance: dict[str, Any] = field(default_factory=dict)
    link_score: str = "anchor"
    # Seed 004's good hubs and sites of an earlier run, as more seeds: "" (none), "previous"
    # (the lists the last run of this crawl wrote) or the path of a lists file.
    seeds_from: str = ""
    # [strategy_options], checked: ``paths``, the resolved paths file of the hmm strategy.
    strategy_options: dict[str, Any] = field(default_factory=dict)
    # Networks the crawl may fetch from although they are not public (checked CIDR strings;
    # focused.middlewares.addresses refuses the others).
    allowed_networks: tuple[str, ...] = ()

    @property
    def base(self) -> Path:
        """The folder that relative paths of the topic file start from."""
        return self.path.parent


def is_seed_url(url: str) -> bool:
    """A URL that may enter a crawl as a seed: one :func:`focused.urls.clean_url` accepts."""
    try:
        clean_url(url)
    except BadURL:
        return False
    return True


def url_lines(text: str) -> list[tuple[int, str]]:
    """(line number, URL) of a file of URLs: one a line, ``#`` starts a comment."""
    lines = ((n, line.split("#", 1)[0].strip()) for n, line in enumerate(text.splitlines(), 1))
    return [(number, line) for number, line in lines if line]


# What is wrong with a seed URL, by BadURL.reason.
BAD_SEED = {
    "scheme": "not an http(s) URL",
    "host": "not a valid host name or address in URL",
    "port": "not a valid port (1-65535) in URL",
    "too_long": "URL longer than 2083 characters",
    "syntax": "not a well-formed URL",
}


def _check_url(path: Path, fieldname: str, url: Any) -> str:
    """The seed as it is crawled (focused.urls.clean_url), or a TopicError that says why not."""
    if not isinstance(url, str):
        raise TopicError(path, fieldname, f"expected a URL string, got {url!r}")
    try:
        return clean_url(url)
    except BadURL as exc:
        shown = url if len(url) <= 200 else url[:200] + "..."
        raise TopicError(path, fieldname, f"{BAD_SEED[exc.reason]}: {shown!r}") from None


def _read_seeds(path: Path, data: dict[str, Any]) -> list[str]:
    seeds: list[str] = []
    if "seeds" in data:
        if not isinstance(data["seeds"], list):
            raise TopicError(path, "seeds", "expected a list of URLs")
        seeds += [_check_url(path, "seeds", url) for url in data["seeds"]]
    if "seeds_file" in data:
        seeds_path = _existing(path, "seeds_file", data["seeds_file"], folder=False)
        for number, line in url_lines(seeds_path.read_text(errors="replace")):
            seeds.append(_check_url(path, f"seeds_file (line {number})", line))
    if not seeds and "seeds_from" not in data:
        raise TopicError(path, "seeds", "no seed URLs (give `seeds`, `seeds_file` or `seeds_from`)")
    return list(dict.fromkeys(seeds))


def _read_strategy(path: Path, data: dict[str, Any]) -> str:
    if "strategy" in data and "focus" in data:
        raise TopicError(path, "focus", "give 'strategy' or its older spelling 'focus', not both")
    fieldname = "focus" if "focus" in data else "strategy"
    strategy = data.get(fieldname, "soft")
    if strategy not in STRATEGY_NAMES:
        raise TopicError(
            path, fieldname, f"expected one of {', '.join(STRATEGY_NAMES)}, got {strategy!r}"
        )
    return strategy


def _read_seeds_from(path: Path, data: dict[str, Any]) -> str:
    value = data.get("seeds_from", "")
    if value in ("", PREVIOUS):
        return value
    return str(_existing(path, "seeds_from", value, folder=False))


def _read_strategy_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    options = data.get("strategy_options", {})
    if not isinstance(options, dict):
        raise TopicError(path, "strategy_options", "expected a table [strategy_options]")
    unknown = set(options) - STRATEGY_OPTIONS
    if unknown:
        raise TopicError(path, f"strategy_options.{sorted(unknown)[0]}", "unknown option")
    if "paths" in options:
        from focused.relevance.hmm import read_paths  # scikit-learn: only when needed

        paths = _existing(path, "strategy_options.paths", options["paths"], folder=False)
        try:
            read_paths(paths)
        except ValueError as exc:
            raise TopicError(path, "strategy_options.paths", f"{exc} ({paths})") from None
        options = {**options, "paths": str(paths)}
    return options


def _existing(path: Path, fieldname: str, value: Any, *, folder: bool) -> Path:
    """A path named in the topic file, resolved against it, that must exist."""
    if not isinstance(value, str) or not value:
        raise TopicError(path, fieldname, f"expected a path, got {value!r}")
    target = (path.parent / value).resolve()
    kind = "folder" if folder else "file"
    if not target.exists():
        raise TopicError(path, fieldname, f"{kind} not found: {target}")
    if folder != target.is_dir():
        raise TopicError(path, fieldname, f"not a {kind}: {target}")
    return target


def _number(path: Path, fieldname: str, value: Any, low: float, high: float) -> float:
    """A number of the topic file in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TopicError(path, fieldname, f"expected a number, got {value!r}")
    if not low <= value <= high:
        raise TopicError(path, fieldname, f"expected {low} to {high}, got {value!r}")
    return float(value)


def _example_folder(path: Path, fieldname: str, value: Any, *, taxonomy: bool = False) -> Path:
    """A folder of example pages (or a taxonomy's tree of them) that has some: an empty one
    is named with the topic file's field now, not when the model is first trained."""
    from focused.relevance.centroid import example_pages  # scikit-learn: only when needed
    from focused.relevance.taxonomy import example_files

    folder = _existing(path, fieldname, value, folder=True)
    try:
        example_files(folder) if taxonomy else example_pages(folder)
    except TopicError as exc:
        raise TopicError(path, fieldname, f"{exc.problem} ({folder})") from None
    return folder


def _taxonomy_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    good = data.get("good")
    if not isinstance(good, list) or not good or not all(isinstance(g, str) for g in good):
        raise TopicError(path, "relevance.good", "expected a non-empty list of category paths")
    return {
        "taxonomy": _example_folder(
            path, "relevance.taxonomy", data.get("taxonomy"), taxonomy=True
        ),
        "good": [g.strip("/") for g in good],
    }


def _centroid_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "examples": _example_folder(path, "relevance.examples", data.get("examples")),
        "threshold": _number(path, "relevance.threshold", data.get("threshold", 0.2), 0, 1),
    }


def _examples_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    negatives = data.get("negatives")
    return {
        "examples": _example_folder(path, "relevance.examples", data.get("examples")),
        "negatives": None
        if negatives is None
        else _example_folder(path, "relevance.negatives", negatives),
        "threshold": _number(path, "relevance.threshold", data.get("threshold", 0.5), 0, 1),
    }


def _keywords_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    from focused.relevance.keywords import KeywordModel  # scikit-learn: only when needed

    keywords = data.get("keywords", [])
    if isinstance(keywords, dict):
        for word, weight in keywords.items():
            _number(path, f"relevance.keywords.{word}", weight, 0, float("inf"))
    elif not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        raise TopicError(
            path, "relevance.keywords", "expected a list of words or a table of weights"
        )
    description = data.get("description", "")
    if not isinstance(description, str):
        raise TopicError(path, "relevance.description", f"expected a sentence, got {description!r}")
    options = {
        "keywords": keywords,
        "description": description,
        "r0": _number(path, "relevance.r0", data.get("r0", 0.3), 0, 1),
    }
    try:  # fitting is instant and checks what is left (e.g. keywords that are all stopwords)
        KeywordModel(**options).fit()
    except ValueError as exc:
        raise TopicError(path, "relevance.keywords", str(exc)) from None
    return options


def _thesaurus_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    from focused.relevance.thesaurus import read_thesaurus

    thesaurus = _existing(path, "relevance.thesaurus", data.get("thesaurus"), folder=False)
    read_thesaurus(thesaurus)  # its errors name the thesaurus file and the field in it
    options: dict[str, Any] = {"thesaurus": thesaurus}
    for name, default, high in (
        ("threshold", 0.3, 1),
        ("depth_weight", 0.5, float("inf")),
        ("url_weight", 0.5, float("inf")),
        ("anchor_weight", 0.5, float("inf")),
    ):
        options[name] = _number(path, f"relevance.{name}", data.get(name, default), 0, high)
    return options


def _semantic_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    from focused.errors import FocusedError
    from focused.relevance.semantic import SemanticModel  # nltk's WordNet: only when needed

    terms = data.get("terms", [])
    if not isinstance(terms, list) or not all(isinstance(t, str) and t.strip() for t in terms):
        raise TopicError(
            path, "relevance.terms", f"expected a list of words or phrases, got {terms!r}"
        )
    description = data.get("description", "")
    if not isinstance(description, str):
        raise TopicError(path, "relevance.description", f"expected a sentence, got {description!r}")
    wordnet = data.get("wordnet")
    options = {
        "terms": terms,
        "description": description,
        "wordnet": None
        if wordnet is None
        else _existing(path, "relevance.wordnet", wordnet, folder=True),
        "threshold": _number(path, "relevance.threshold", data.get("threshold", 0.01), 0, 1),
    }
    try:  # reads WordNet (once per process) and checks that it knows every term
        SemanticModel(**options).fit()
    except ValueError as exc:
        raise TopicError(path, "relevance.terms", str(exc)) from None
    except FocusedError as exc:  # no WordNet where it looked
        raise TopicError(path, "relevance.wordnet", str(exc)) from None
    return options


# method -> (its fields besides `method`, the function that checks them into options)
METHODS: dict[str, tuple[set[str], Callable[[Path, dict[str, Any]], dict[str, Any]]]] = {
    "taxonomy": ({"taxonomy", "good"}, _taxonomy_options),
    "centroid": ({"examples", "threshold"}, _centroid_options),
    "examples": ({"examples", "negatives", "threshold"}, _examples_options),
    "keywords": ({"keywords", "description", "r0"}, _keywords_options),
    "thesaurus": (
        {"thesaurus", "threshold", "depth_weight", "url_weight", "anchor_weight"},
        _thesaurus_options,
    ),
    "semantic": ({"terms", "description", "wordnet", "threshold"}, _semantic_options),
}


# Fields of [relevance] that every method has: how out-links are estimated (seed 002's
# best-first variants; see focused.strategies).
LINK_SCORES = ("content", "anchor", "both", "context")


def _read_relevance(path: Path, data: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(data, dict):
        raise TopicError(path, "relevance", "missing table [relevance] (with method = ...)")
    method = data.get("method")
    if method not in METHODS:
        raise TopicError(
            path, "relevance.method", f"unknown method {method!r}; known: {', '.join(METHODS)}"
        )
    fields, check = METHODS[method]
    unknown = set(data) - fields - {"method", "link_score"}
    if unknown:
        raise TopicError(path, f"relevance.{sorted(unknown)[0]}", f"not a field of {method!r}")
    return method, check(path, data)


def _read_allowed_networks(path: Path, data: dict[str, Any]) -> tuple[str, ...]:
    networks = data.get("allowed_networks", [])
    if not isinstance(networks, list) or not all(isinstance(n, str) for n in networks):
        raise TopicError(path, "allowed_networks", f"expected a list of strings, got {networks!r}")
    for network in networks:
        try:
            ipaddress.ip_network(network.strip(), strict=False)
        except ValueError:
            raise TopicError(
                path, "allowed_networks", f"not a network such as 10.0.0.0/8: {network!r}"
            ) from None
    return tuple(networks)


def load_topic(path: str | Path) -> Topic:
    """Read and check a topic file; raises TopicError naming the field that is wrong."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise TopicError(path, "", "topic file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TopicError(path, "", f"cannot read: {exc}") from None
    return load_topic_text(text, path)


def load_topic_text(text: str, path: str | Path) -> Topic:
    """Check the text of the topic file at ``path`` without reading that file.

    A scrapyd node gets its topic this way (spider argument ``topic_toml``): the job runs the
    topic as it was when scheduled, and only the files the topic names must exist on the node.
    Relative paths resolve against ``path``'s folder and errors name ``path``.
    """
    path = Path(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TopicError(path, "", f"not valid TOML: {exc}") from None
    unknown = set(data) - TOP_FIELDS
    if unknown:
        raise TopicError(path, sorted(unknown)[0], "unknown field")
    name = data.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise TopicError(
            path, "name", f"expected a crawl name of letters, digits, '_.-', got {name!r}"
        )
    strategy = _read_strategy(path, data)
    seeds = _read_seeds(path, data)
    method, options = _read_relevance(path, data.get("relevance"))
    link_score = data["relevance"].get("link_score", "anchor")
    if link_score not in LINK_SCORES:
        raise TopicError(
            path, "relevance.link_score", f"expected one of {LINK_SCORES}, got {link_score!r}"
        )
    seeds_from = _read_seeds_from(path, data)
    return Topic(
        path.resolve(),
        name,
        seeds,
        strategy,
        method,
        options,
        link_score,
        seeds_from,
        _read_strategy_options(path, data),
        _read_allowed_networks(path, data),
    )
