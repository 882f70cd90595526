"""Checks of the settings a crawl starts with, before any component reads them.

A ``FOCUSED_*`` value that cannot be read as its default's type (``-s FOCUSED_HOST_DELAY=abc``),
is out of its range (:data:`RANGES`: ``-s FOCUSED_HOST_DELAY=-1``) or is not one of a setting's
choices (:data:`CHOICES`), or a value of one of Scrapy's settings that the crawl relies on
(:data:`SCRAPY_TYPES`) that cannot be read as its type (``-s CLOSESPIDER_ITEMCOUNT=ten``) or is
out of its range (``-s CONCURRENT_REQUESTS=-1``), is one line naming the setting and what it
expects; a
``FOCUSED_*`` name that is not a setting (a typo that would otherwise be silently ignored) is a
warning naming the closest setting. Components read a choice back with :func:`choice`.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from focused.errors import FocusedError, did_you_mean, not_one_of, one_of
from focused.settings import defaults
from focused.store.frontier.records import MAX_TRIES_PACKABLE
from focused.strategies.registry import LINK_SCORES, STRATEGIES

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

PREFIX = "FOCUSED_"

# Settings whose default is None but that take one type when they are set.
OPTIONAL_TYPES: dict[str, type] = {"FOCUSED_RELEVANT_THRESHOLD": float}

#: Scrapy's own settings that the crawl (or Scrapy under it) reads as numbers or switches, and
#: their types: a bad value would otherwise end in a traceback from the component that reads it.
SCRAPY_TYPES: dict[str, type] = {
    "CLOSESPIDER_ERRORCOUNT": int,
    "CLOSESPIDER_ITEMCOUNT": int,
    "CLOSESPIDER_PAGECOUNT": int,
    "CLOSESPIDER_PAGECOUNT_NO_ITEM": int,
    "CLOSESPIDER_TIMEOUT": float,
    "CLOSESPIDER_TIMEOUT_NO_ITEM": float,
    "CONCURRENT_REQUESTS": int,
    "CONCURRENT_REQUESTS_PER_DOMAIN": int,
    "DEPTH_LIMIT": int,
    "DNS_TIMEOUT": float,
    "DNSCACHE_ENABLED": bool,
    "DNSCACHE_SIZE": int,
    "DOWNLOAD_DELAY": float,
    "DOWNLOAD_MAXSIZE": int,
    "DOWNLOAD_TIMEOUT": float,
    "DOWNLOAD_WARNSIZE": int,
    "LOGSTATS_INTERVAL": float,
    "REDIRECT_MAX_TIMES": int,
    "RETRY_TIMES": int,
    "ROBOTSTXT_OBEY": bool,
    "URLLENGTH_LIMIT": int,
}


@dataclass(frozen=True)
class Range:
    """The numbers a setting accepts, from ``low`` up to ``high`` (None: no end); an open end
    leaves out its bound (a timeout of 0 would never wait)."""

    low: float
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def __contains__(self, value: float) -> bool:
        above_low = value > self.low if self.low_open else value >= self.low
        if self.high is None:
            return above_low
        return above_low and (value < self.high if self.high_open else value <= self.high)

    def __str__(self) -> str:
        if self.high is not None and not (self.low_open or self.high_open):
            return f"from {self.low:g} to {self.high:g}"
        words = f"{'above' if self.low_open else 'at least'} {self.low:g}"
        if self.high is not None:
            words += f" and {'below' if self.high_open else 'at most'} {self.high:g}"
        return words


AT_LEAST_0 = Range(0)  # a count, size or delay; 0 is usually "off" or "no limit"
AT_LEAST_1 = Range(1)  # a count that must be one or more (a batch, a concurrency)
ABOVE_0 = Range(0, low_open=True)  # a time that must pass (a lease, a timeout)
SHARE = Range(0, 1)  # a share, a probability or an R

#: The range of every number setting, FOCUSED_* and :data:`SCRAPY_TYPES` alike (a test checks
#: that each has one): a value out of it would otherwise be taken silently (a negative delay,
#: a negative concurrency that Scrapy reads as no limit at all).
RANGES: dict[str, Range] = {
    # Scrapy's: 0 turns a CLOSESPIDER_* limit, a depth, size or length limit off
    "CLOSESPIDER_ERRORCOUNT": AT_LEAST_0,
    "CLOSESPIDER_ITEMCOUNT": AT_LEAST_0,
    "CLOSESPIDER_PAGECOUNT": AT_LEAST_0,
    "CLOSESPIDER_PAGECOUNT_NO_ITEM": AT_LEAST_0,
    "CLOSESPIDER_TIMEOUT": AT_LEAST_0,
    "CLOSESPIDER_TIMEOUT_NO_ITEM": AT_LEAST_0,
    "CONCURRENT_REQUESTS": AT_LEAST_1,
    "CONCURRENT_REQUESTS_PER_DOMAIN": AT_LEAST_1,
    "DEPTH_LIMIT": AT_LEAST_0,
    "DNS_TIMEOUT": ABOVE_0,
    "DNSCACHE_SIZE": AT_LEAST_0,
    "DOWNLOAD_DELAY": AT_LEAST_0,
    "DOWNLOAD_MAXSIZE": AT_LEAST_0,
    "DOWNLOAD_TIMEOUT": ABOVE_0,
    "DOWNLOAD_WARNSIZE": AT_LEAST_0,
    "LOGSTATS_INTERVAL": AT_LEAST_0,
    "REDIRECT_MAX_TIMES": AT_LEAST_0,
    "RETRY_TIMES": AT_LEAST_0,
    "URLLENGTH_LIMIT": AT_LEAST_0,
    # Redis, naming, seeding
    "FOCUSED_REDIS_RETRIES": AT_LEAST_0,
    "FOCUSED_SEEDS_CHECK_S": AT_LEAST_0,
    # politeness
    "FOCUSED_HOST_DELAY": AT_LEAST_0,
    "FOCUSED_HOST_CONCURRENCY": AT_LEAST_1,
    "FOCUSED_RETRY_AFTER_MAX": AT_LEAST_0,
    "FOCUSED_MIN_DOWNLOAD_RATE": AT_LEAST_0,
    "FOCUSED_MIN_RATE_AFTER_S": AT_LEAST_0,
    "FOCUSED_SLOW_HOST_BACKOFF_S": AT_LEAST_0,
    "FOCUSED_SLOW_DOWNLOAD_S": AT_LEAST_0,
    "FOCUSED_SLOW_HOST_SLOTS": SHARE,
    # pages that need JavaScript
    "FOCUSED_RENDER_PAGES": AT_LEAST_1,
    "FOCUSED_RENDER_MIN_TEXT": AT_LEAST_0,
    "FOCUSED_RENDER_HOST_PAGES": AT_LEAST_0,
    "FOCUSED_RENDER_CONTEXT_PAGES": AT_LEAST_1,
    "FOCUSED_RENDER_DEADLINE": AT_LEAST_1,
    # the frontier
    "FOCUSED_LEASE_S": ABOVE_0,
    "FOCUSED_MAX_TRIES": Range(1, MAX_TRIES_PACKABLE),
    "FOCUSED_POP_BATCH": AT_LEAST_1,
    "FOCUSED_ACK_BATCH": AT_LEAST_1,
    "FOCUSED_ACK_WAIT": AT_LEAST_0,
    "FOCUSED_SEEN_BUCKETS": AT_LEAST_1,
    "FOCUSED_SEEN_CACHE": AT_LEAST_0,
    "FOCUSED_DEAD_HOST_PRIOR": AT_LEAST_0,
    "FOCUSED_DEAD_HOST_HOLD": SHARE,
    "FOCUSED_DEAD_HOST_AFTER": AT_LEAST_1,
    # budgets
    "FOCUSED_HOST_MAX_PAGES": AT_LEAST_0,
    "FOCUSED_HOST_MAX_SHARE": SHARE,
    "FOCUSED_DOMAIN_MAX_PAGES": AT_LEAST_0,
    "FOCUSED_DOMAIN_MAX_SHARE": SHARE,
    "FOCUSED_DOMAIN_MAX_HOSTS": AT_LEAST_0,
    "FOCUSED_SUFFIX_MAX_HOSTS": AT_LEAST_0,
    "FOCUSED_FARM_MAX_HOSTS": AT_LEAST_0,
    "FOCUSED_HOST_MAX_QUEUED": AT_LEAST_0,
    # relevance and links
    "FOCUSED_RELEVANT_THRESHOLD": SHARE,
    "FOCUSED_MAX_TEXT_CHARS": AT_LEAST_0,
    "FOCUSED_MAX_TAG_ATTRIBUTES": AT_LEAST_0,
    "FOCUSED_VECTOR_WEIGHT": AT_LEAST_0,
    "FOCUSED_LEARN_PAGES": AT_LEAST_0,
    "FOCUSED_LEARN_SAMPLE": AT_LEAST_1,
    "FOCUSED_LEARN_CHARS": AT_LEAST_1,
    "FOCUSED_LINK_MODEL_WARMUP": AT_LEAST_0,
    "FOCUSED_LINK_MODEL_SYNC": AT_LEAST_1,
    "FOCUSED_SIBLING_CREDIT": SHARE,
    # strategies
    "FOCUSED_BEST_N": AT_LEAST_1,
    "FOCUSED_MAX_BUFFER": AT_LEAST_1,
    "FOCUSED_GENETIC_K": AT_LEAST_0,
    "FOCUSED_GENETIC_MIN_FITNESS": SHARE,
    "FOCUSED_GENETIC_GENERATION": AT_LEAST_1,
    "FOCUSED_GENETIC_PC": SHARE,
    "FOCUSED_GENETIC_PM": SHARE,
    "FOCUSED_GENETIC_SEED": AT_LEAST_0,
    "FOCUSED_INFOSPIDERS_AGENTS": AT_LEAST_1,
    "FOCUSED_INFOSPIDERS_MAX_AGENTS": AT_LEAST_1,
    "FOCUSED_INFOSPIDERS_ENERGY": ABOVE_0,
    "FOCUSED_INFOSPIDERS_COST": ABOVE_0,
    "FOCUSED_INFOSPIDERS_REPRODUCE": ABOVE_0,
    "FOCUSED_INFOSPIDERS_LEARNING_RATE": SHARE,
    "FOCUSED_INFOSPIDERS_DISCOUNT": SHARE,
    "FOCUSED_INFOSPIDERS_MUTATION": AT_LEAST_0,
    "FOCUSED_INFOSPIDERS_WINDOW": AT_LEAST_0,
    "FOCUSED_INFOSPIDERS_BLEND": SHARE,
    "FOCUSED_INFOSPIDERS_SYNC": AT_LEAST_1,
    "FOCUSED_INFOSPIDERS_SEED": AT_LEAST_0,
    "FOCUSED_HMM_WARMUP": AT_LEAST_0,
    "FOCUSED_HMM_REFIT": AT_LEAST_0,
    "FOCUSED_HMM_MAX_PAGES": AT_LEAST_1,
    "FOCUSED_HMM_CLUSTERS": AT_LEAST_1,
    "FOCUSED_HMM_LOCK_S": ABOVE_0,
    # the distiller, maintenance, lists
    "FOCUSED_DISTILL_PAGES": AT_LEAST_0,
    "FOCUSED_DISTILL_INTERVAL": AT_LEAST_0,
    "FOCUSED_DISTILL_HUBS": AT_LEAST_0,
    "FOCUSED_DISTILL_BOOST": SHARE,
    "FOCUSED_DISTILL_AUTHORITY_SHARE": SHARE,
    "FOCUSED_DISTILL_LOCK_S": ABOVE_0,
    "FOCUSED_REVISIT_SHARE": Range(0, 1, high_open=True),
    "FOCUSED_REVISIT_EVERY": AT_LEAST_1,
    "FOCUSED_HUB_MIN_SCORE": AT_LEAST_0,
    "FOCUSED_LIST_MIN_RELEVANT": AT_LEAST_0,
    # what is skipped and kept
    "FOCUSED_MAX_LINKS_PER_PAGE": AT_LEAST_0,
    "FOCUSED_MAX_REPLACEMENT_SHARE": SHARE,
    "FOCUSED_MAX_HOPS": AT_LEAST_0,
    "FOCUSED_MAX_PATH_REPEATS": AT_LEAST_0,
    "FOCUSED_MAX_PATH_SEGMENTS": AT_LEAST_0,
    "FOCUSED_WARC_MAX_SIZE": AT_LEAST_1,
    "FOCUSED_WARC_UNDECIDED": SHARE,
    "FOCUSED_NEAR_COPY_THRESHOLD": Range(0, 1, low_open=True),
    "FOCUSED_NEAR_COPY_MAX_PAGES": AT_LEAST_0,
    # monitoring
    "FOCUSED_ALARM_MIN_PAGES": AT_LEAST_0,
    "FOCUSED_STAGNATION_HARVEST": SHARE,
    "FOCUSED_DIFFUSION_RATIO": AT_LEAST_0,
    "FOCUSED_COVERAGE_PAGES": AT_LEAST_0,
    "FOCUSED_COVERAGE_HOSTS": AT_LEAST_0,
    "FOCUSED_CLOSE_COVERED": SHARE,
    "FOCUSED_CLOSE_COVERED_PAGES": AT_LEAST_0,
    "FOCUSED_HEARTBEAT_S": AT_LEAST_0,
    "FOCUSED_STATS_FLUSH_S": AT_LEAST_0,
}

_EXPECTED: dict[type | None, str] = {
    bool: "True or False",
    int: "a whole number",
    float: "a number",
    list: "a list",
}

# On, off, or on when what it needs is installed (one warning when it is not).
SWITCH = ("auto", "true", "false")
_SWITCH_WORDS = {"false": "false", "0": "false", "off": "false", "no": "false", "": "false"}
_SWITCH_WORDS |= {"true": "true", "1": "true", "on": "true", "yes": "true", "auto": "auto"}

#: Settings that take one of a few words, and those words.
CHOICES: dict[str, tuple[str, ...]] = {
    "FOCUSED_STRATEGY": ("", *STRATEGIES),  # "": the topic file's
    "FOCUSED_LINK_SCORE": ("", *LINK_SCORES),  # "": the topic file's
    "FOCUSED_ANCHOR_GLOSS": SWITCH,
    "FOCUSED_VECTORS": SWITCH,
    "FOCUSED_LEARN": SWITCH,
    "FOCUSED_CLASSIFY_TEXT": ("page", "main"),  # what is classified
    "FOCUSED_MAIN_TEXT": ("relevant", "all", "none"),  # the pages given a main text
    "FOCUSED_WARC": ("relevant", "all", "none"),  # the pages kept in WARC files
    "FOCUSED_REVISIT_ORDER": ("relevance", "hub"),
    "FOCUSED_RENDER": ("never", "auto", "always"),  # which pages the browser fetches
    "FOCUSED_NEAR_COPIES": ("relevant", "all", "none"),  # the pages checked for near-copies
    "FOCUSED_LANGUAGE_ID": ("auto", "always", "never"),  # the pages whose language is identified
}


def switch(name: str, value: Any) -> str:
    """An auto / true / false setting as "auto", "true" or "false" (also 1/0, on/off,
    yes/no); a FocusedError naming the setting otherwise."""
    word = _SWITCH_WORDS.get(str(value).strip().lower())
    if word is None:
        raise FocusedError(f"{name}: expected auto, true or false, got {value!r}")
    return word


def choice(settings: BaseSettings, name: str) -> str:
    """The value of the choice setting ``name`` (a key of CHOICES), checked and normalised."""
    value = settings.get(name, getattr(defaults, name))
    if CHOICES[name] is SWITCH:
        return switch(name, value)
    word = "" if value is None else str(value).strip().lower()
    if word not in CHOICES[name]:
        raise FocusedError(f"{name}: {not_one_of(CHOICES[name], value)}")
    return word


def accepted(name: str) -> str:
    """What the setting ``name`` (``FOCUSED_*`` or one of :data:`SCRAPY_TYPES`) accepts, in
    words (for its documentation)."""
    if name in SCRAPY_TYPES:
        return _expected(name, SCRAPY_TYPES[name])
    if name in CHOICES:
        if CHOICES[name] is SWITCH:
            return "auto, true or false"
        return one_of(CHOICES[name])
    words = _expected(name, _kind(name))
    return f"None or {words}" if getattr(defaults, name) is None else words


def _expected(name: str, kind: type | None) -> str:
    """A value of the type ``kind`` in words, with the setting's range: "a number, at least 0"."""
    words = _EXPECTED.get(kind, "a string")
    return f"{words}, {RANGES[name]}" if name in RANGES else words


def _kind(name: str) -> type | None:
    """The type a setting's value is read as: its default's, or for a None default the one in
    OPTIONAL_TYPES (None: any)."""
    default = getattr(defaults, name)
    return OPTIONAL_TYPES.get(name) if default is None else type(default)


def known_settings() -> dict[str, Any]:
    """Every ``FOCUSED_*`` setting and its default."""
    return {name: getattr(defaults, name) for name in dir(defaults) if name.startswith(PREFIX)}


def _reader(settings: BaseSettings, kind: type) -> Callable[[str], Any]:
    readers: dict[type, Callable[[str], Any]] = {
        bool: settings.getbool,
        int: settings.getint,
        float: settings.getfloat,
        list: settings.getlist,
    }
    return readers[kind]


def check_settings(settings: BaseSettings) -> list[str]:
    """Raise a FocusedError for the first ``FOCUSED_*`` or :data:`SCRAPY_TYPES` value of the
    wrong type or out of its range; return warnings for ``FOCUSED_*`` names that are not
    settings."""
    known = known_settings()
    kinds = {name: _kind(name) for name in known} | SCRAPY_TYPES
    for name in sorted(kinds):
        kind = kinds[name]
        if kind is None or kind not in _EXPECTED or settings.get(name) is None:
            continue
        try:
            value = _reader(settings, kind)(name)
        except (ValueError, TypeError):
            value = None
        if value is None or (name in RANGES and value not in RANGES[name]):
            raise FocusedError(
                f"setting {name}={settings.get(name)!r}: expected {_expected(name, kind)}"
            )
    for name in CHOICES:
        choice(settings, name)
    check_render(settings)
    warnings = []
    for name in sorted(key for key in settings if key.startswith(PREFIX)):
        if name not in known:
            warnings.append(f"unknown setting {name} is ignored{did_you_mean(name, known)}")
    return warnings


def check_render(settings: BaseSettings) -> None:
    """FOCUSED_RENDER auto or always needs scrapy-playwright and a Chromium to run: without
    either, one line saying what to install, before any page is fetched."""
    mode = choice(settings, "FOCUSED_RENDER")
    if mode == "never":
        return
    if importlib.util.find_spec("scrapy_playwright") is None:
        raise FocusedError(
            f"FOCUSED_RENDER={mode} needs scrapy-playwright: pip install 'focused[render]'"
        )
    browser = str(settings.get("FOCUSED_RENDER_BROWSER") or "")
    if not (os.path.isfile(browser) and os.access(browser, os.X_OK)):
        raise FocusedError(
            f"FOCUSED_RENDER={mode} needs Chromium, and FOCUSED_RENDER_BROWSER={browser!r} is"
            " no program: install Debian's chromium package (apt-get install chromium) or set"
            " FOCUSED_RENDER_BROWSER to the browser's path"
        )
