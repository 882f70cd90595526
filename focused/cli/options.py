"""Command-line pieces shared by the ``focused`` subcommands."""

from __future__ import annotations

import argparse
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


def add_settings_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """The repeatable ``-s KEY=VALUE`` option (``args.set``), as ``scrapy crawl`` has it."""
    parser.add_argument("-s", "--set", action="append", default=[], metavar="KEY=VALUE", help=help)
