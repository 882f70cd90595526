"""Command-line pieces shared by the ``focused`` subcommands."""

from __future__ import annotations

from collections.abc import Iterable

from focused.errors import FocusedError


def parse_settings(pairs: Iterable[str]) -> dict[str, str]:
    """``-s KEY=VALUE`` options as a dict of Scrapy settings."""
    settings = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise FocusedError(f"-s {pair!r}: expected KEY=VALUE")
        settings[key] = value
    return settings
