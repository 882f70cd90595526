"""Checks of the ``FOCUSED_*`` settings a crawl starts with, before any component reads them.

A value that cannot be read as its default's type (``-s FOCUSED_HOST_DELAY=abc``) is one line
naming the setting and what it expects; a ``FOCUSED_*`` name that is not a setting (a typo that
would otherwise be silently ignored) is a warning naming the closest setting.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from focused import defaults
from focused.errors import FocusedError

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

PREFIX = "FOCUSED_"

# Settings whose default is None but that take one type when they are set.
OPTIONAL_TYPES: dict[str, type] = {"FOCUSED_RELEVANT_THRESHOLD": float}

_EXPECTED = {bool: "True or False", int: "a whole number", float: "a number", list: "a list"}


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
    """Raise a FocusedError for the first ``FOCUSED_*`` value of the wrong type; return
    warnings for names that are not settings."""
    known = known_settings()
    for name, default in sorted(known.items()):
        kind = OPTIONAL_TYPES.get(name) if default is None else type(default)
        if kind not in _EXPECTED or settings.get(name) is None:
            continue
        try:
            _reader(settings, kind)(name)
        except (ValueError, TypeError):
            raise FocusedError(
                f"setting {name}={settings.get(name)!r}: expected {_EXPECTED[kind]}"
            ) from None
    warnings = []
    for name in sorted(key for key in settings if key.startswith(PREFIX)):
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
            hint = f"; did you mean {close[0]}?" if close else ""
            warnings.append(f"unknown setting {name} is ignored{hint}")
    return warnings
