"""Checks of the settings a crawl starts with, before any component reads them.

A ``FOCUSED_*`` value that cannot be read as its default's type (``-s FOCUSED_HOST_DELAY=abc``)
or is not one of a setting's choices (:data:`CHOICES`), or a value of one of Scrapy's settings
that the crawl relies on (:data:`SCRAPY_TYPES`) that cannot be read as its type
(``-s CLOSESPIDER_ITEMCOUNT=ten``), is one line naming the setting and what it expects; a
``FOCUSED_*`` name that is not a setting (a typo that would otherwise be silently ignored) is a
warning naming the closest setting. Components read a choice back with :func:`choice`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from focused import defaults
from focused.errors import FocusedError, did_you_mean, one_of
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

_EXPECTED = {bool: "True or False", int: "a whole number", float: "a number", list: "a list"}

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
        raise FocusedError(f"{name}: expected {accepted(name)}, got {value!r}")
    return word


def accepted(name: str) -> str:
    """What the setting ``name`` accepts, in words (for its documentation)."""
    if name in CHOICES:
        if CHOICES[name] is SWITCH:
            return "auto, true or false"
        return one_of(CHOICES[name])
    words = _EXPECTED.get(_kind(name), "a string")
    return f"None or {words}" if getattr(defaults, name) is None else words


def _kind(name: str) -> type | None:
    """The type a setting's value is read as: its default's, or for a None default the one in
    OPTIONAL_TYPES (None: any)."""
    default = getattr(defaults, name)
    return OPTIONAL_TYPES.get(name) if default is None else type(default)


def known_settings() -> dict[str, Any]:
    """Every ``FOCUSED_*`` setting and its default."""
    return {name: getattr(defaults, name) for name in dir(defaults) if name.startswith(PREFIX)}


def _reader(settings: BaseSettings, kind: type) -> Callable[[str], Any]:
    return {
        bool: settings.getbool,
        int: settings.getint,
        float: settings.getfloat,
        list: settings.getlist,
    }[kind]


def check_settings(settings: BaseSettings) -> list[str]:
    """Raise a FocusedError for the first ``FOCUSED_*`` or :data:`SCRAPY_TYPES` value of the
    wrong type; return warnings for ``FOCUSED_*`` names that are not settings."""
    known = known_settings()
    kinds = {name: _kind(name) for name in known} | SCRAPY_TYPES
    for name in sorted(kinds):
        kind = kinds[name]
        if kind not in _EXPECTED or settings.get(name) is None:
            continue
        try:
            _reader(settings, kind)(name)
        except (ValueError, TypeError):
            raise FocusedError(
                f"setting {name}={settings.get(name)!r}: expected {_EXPECTED[kind]}"
            ) from None
    for name in CHOICES:
        choice(settings, name)
    warnings = []
    for name in sorted(key for key in settings if key.startswith(PREFIX)):
        if name not in known:
            warnings.append(f"unknown setting {name} is ignored{did_you_mean(name, known)}")
    return warnings
