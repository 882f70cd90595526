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


def add_redis_arguments(parser: argparse.ArgumentParser) -> None:
    """``--redis-url`` and ``--home``: the Redis a command reads or writes."""
    parser.add_argument(
        "--redis-url",
        help="Redis URL (default: $FOCUSED_REDIS_URL, else the embedded Redis in FOCUSED_HOME)",
    )
    parser.add_argument(
        "--home", help="folder of the embedded Redis (default: $FOCUSED_HOME, else .focused)"
    )


def add_server_arguments(parser: argparse.ArgumentParser, port: int, exposed: str) -> None:
    """``--host``, ``--port`` and ``--allow-host`` of a command that serves a web page or
    metrics; ``exposed`` says what another address than 127.0.0.1 lets anyone see."""
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help=f"address to serve on (default %(default)s; another one {exposed} anyone who can "
        "reach it)",
    )
    parser.add_argument("--port", type=int, default=port, help="port (default %(default)s)")
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host name to answer besides localhost, the --host address and any IP "
        "address (the machine's names too with --host 0.0.0.0); repeatable. Other names "
        "are refused, against DNS rebinding",
    )
