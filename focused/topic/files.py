"""Topic files: what a crawl is about, read from TOML and checked field by field.

Paths inside a topic file are relative to the file. Every problem is one TopicError that names
the file, the field and what is wrong::

    name = "birds"
    seeds = ["http://www.example.test/Swan"]   # and/or seeds_file = "seeds.txt"
    seeds_from = "previous"                      # or a lists file (optional; focused.distill.lists)
    strategy = "soft"                            # or hard, breadth-first (README)
    allowed_networks = ["10.0.0.0/8"]            # non-public networks it may fetch (optional)
    languages = ["en", "de"]                     # the languages kept (optional; default: any)
    [relevance]
    method = "taxonomy"
    taxonomy = "taxonomy"                        # folder tree of example documents
    good = ["Science/Biology/Birds"]

or, for best-first (tf-idf cosine to the centroid of example pages, Batsakis et al. 2009)::

    [relevance]
    method = "centroid"
    examples = "examples"                        # folder of .txt/.html example pages
    threshold = 0.2                              # R at which hard focus expands a page

or ``method = "examples"`` (``examples``, optional ``negatives`` folders, ``threshold``),
``method = "keywords"`` (``keywords`` list or table of weights, ``description``, ``r0``,
optional ``examples`` and ``negatives`` folders) and
``method = "thesaurus"`` (``thesaurus`` file, ``threshold``, ``depth_weight``, ``url_weight``,
``anchor_weight``); see the README.
Batsakis et al. 2009's WordNet expansion is ``method = "semantic"`` (``terms``, ``description``,
``wordnet``).
"""

from __future__ import annotations

import ipaddress
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from focused.errors import TopicError, known_fields, not_one_of
from focused.links.urls import BadURL, clean_url
from focused.store.keys import NAME_RE
from focused.strategies.registry import LINK_SCORES, STRATEGIES
from focused.topic.fields import existing_path
from focused.topic.methods import METHODS

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
    "languages",
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
    # Badia et al. 2006's good hubs and sites of an earlier run, as more seeds: "" (none),
    # "previous" (the lists the last run of this crawl wrote) or the path of a lists file.
    seeds_from: str = ""
    # [strategy_options], checked: ``paths``, the resolved paths file of the hmm strategy.
    strategy_options: dict[str, Any] = field(default_factory=dict)
    # Networks the crawl may fetch from although they are not public (checked CIDR strings;
    # focused.middlewares.addresses refuses the others).
    allowed_networks: tuple[str, ...] = ()
    # The languages a relevant page is in (py3langid's codes; empty: any), in the file's order.
    languages: tuple[str, ...] = ()

    @property
    def base(self) -> Path:
        """The folder that relative paths of the topic file start from."""
        return self.path.parent

    def decisions(self) -> dict[str, Any]:
        """What the file decides of a crawl, by field (``relevance.*`` by its own fields): its
        method and inputs (keywords, example folders, thresholds), link score and strategy. A
        crawl keeps them, so a run of the same file edited meanwhile is not silently resumed
        with the old frontier's scores. Seeds, scope and name are left out: they only add to
        a crawl or name it."""
        relevance = {f"relevance.{name}": value for name, value in self.relevance.items()}
        decided = {
            "relevance.method": self.method,
            "relevance.link_score": self.link_score,
            "strategy": self.strategy,
            "strategy_options": self.strategy_options,
            **({"languages": list(self.languages)} if self.languages else {}),
            **relevance,
        }
        return json.loads(json.dumps(decided, default=str))  # as Redis gives them back


def is_seed_url(url: str) -> bool:
    """A URL that may enter a crawl as a seed: one :func:`focused.links.urls.clean_url` accepts."""
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
    """The seed as it is crawled (focused.links.urls.clean_url), or a TopicError that says why
    not."""
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
        seeds_path = existing_path(path, "seeds_file", data["seeds_file"], folder=False)
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
    # ``focus``: the older spelling, for the two modes of Chakrabarti et al. 1999
    if strategy not in STRATEGIES:
        raise TopicError(path, fieldname, not_one_of(STRATEGIES, strategy))
    return strategy


def _read_seeds_from(path: Path, data: dict[str, Any]) -> str:
    value = data.get("seeds_from", "")
    if value in ("", PREVIOUS):
        return value
    return str(existing_path(path, "seeds_from", value, folder=False))


def _read_strategy_options(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    options = data.get("strategy_options", {})
    if not isinstance(options, dict):
        raise TopicError(path, "strategy_options", "expected a table [strategy_options]")
    known_fields(path, options, STRATEGY_OPTIONS, "strategy_options", "unknown option")
    if "paths" in options:
        from focused.relevance.hmm import read_paths  # scikit-learn: only when needed

        paths = existing_path(path, "strategy_options.paths", options["paths"], folder=False)
        try:
            read_paths(paths)
        except ValueError as exc:
            raise TopicError(path, "strategy_options.paths", f"{exc} ({paths})") from None
        options = {**options, "paths": str(paths)}
    return options


def _read_relevance(path: Path, data: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(data, dict):
        raise TopicError(path, "relevance", "missing table [relevance] (with method = ...)")
    method = data.get("method")
    if method not in METHODS:
        raise TopicError(path, "relevance.method", not_one_of(METHODS, method))
    fields = METHODS[method].fields | {"method", "link_score"}
    known_fields(path, data, fields, "relevance", f"not a field of {method!r}")
    return method, METHODS[method].options(path, data)


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


def _read_languages(path: Path, data: dict[str, Any]) -> tuple[str, ...]:
    languages = data.get("languages", [])
    if not isinstance(languages, list) or not all(isinstance(code, str) for code in languages):
        raise TopicError(path, "languages", f"expected a list of language codes, got {languages!r}")
    if not languages:
        return ()
    from focused.relevance.language import known_languages  # loads the identifier's model

    known = known_languages()
    for code in languages:
        if code.strip().lower() not in known:
            raise TopicError(
                path, "languages", f"not a language code py3langid knows (ISO 639): {code!r}"
            )
    return tuple(dict.fromkeys(code.strip().lower() for code in languages))


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
    known_fields(path, data, TOP_FIELDS)
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
        raise TopicError(path, "relevance.link_score", not_one_of(LINK_SCORES, link_score))
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
        _read_languages(path, data),
    )
