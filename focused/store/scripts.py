"""The project's Redis Lua scripts, built from the ``.lua`` files in ``focused/store/lua/``.

Each file parses alone (``tests/test_scripts.py`` compiles every one in Redis). A script is
its own file, after the files of the functions it calls (:data:`SCRIPTS`): the frontier's
scripts follow ``frontier.lua``, its helpers, and the acknowledgement of a batch
(``complete.lua``) and the duplicates check (``duplicates.lua``) follow
``duplicate_check.lua``, the check itself. A helper file holds constants and functions only,
each function given what it needs, so a script reads whole: what it shares with others is the
functions it calls, never a variable.

Values: a file refers to key names and constants by their names in Python (``STATS`` and
``CURVE_BUCKET`` of :mod:`focused.store.keys`; ``HOST_UNIT``, ``FRONTIER_KEYS`` and the others
the frontier gives), and the built script starts with a ``local NAME = value`` line for each
of them it mentions (a tuple of strings becomes a Lua table of them). Why a header of Lua
locals rather than placeholders substituted into the text: the files stay plain Lua, readable
and checkable as they are, and nothing in them (Lua's ``%`` patterns and formats, its braces,
``$`` anchors) needs escaping or can be taken for a placeholder; a value is a Lua local, used
like any other.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files

from focused.store import keys

_FRONTIER = (
    "push",
    "pop",
    "release",
    "back_off",
    "raise",
    "requeue",
    "drop_worst",
    "queued_scores",
)
_ALONE = (
    "stats_flush",
    "heartbeat",
    "genetic_log",
    "infospiders_init",
    "infospiders_fetched",
    "infospiders_add",
    "revisit_claim",
    "revisit_next",
    "unlock",
    "renew",
    "fenced",
    "time",
    "nearcopies",
)

# Script name -> its files (without ``.lua``), joined in this order: its own file last.
SCRIPTS: dict[str, tuple[str, ...]] = {
    **{name: ("frontier", name) for name in _FRONTIER},
    "complete": ("frontier", "duplicate_check", "complete"),
    "duplicates": ("duplicate_check", "duplicates"),
    **{name: (name,) for name in _ALONE},
}

Value = str | int | tuple[str | int, ...]

# The values a script may use: every key name and bucket size of ``keys``.
VALUES: dict[str, Value] = {
    name: value
    for name, value in vars(keys).items()
    if name.isupper() and isinstance(value, str | int)
}

_NAME = re.compile(r"\b[A-Z][A-Z0-9_]*\b")
# What a string value may hold: key names never need escaping, so one that would is refused.
_LUA_STRING = re.compile(r"[\w:/.-]*")


@cache
def _read(part: str) -> str:
    return (files(__package__) / "lua" / f"{part}.lua").read_text(encoding="utf-8")


def _literal(value: Value) -> str:
    if isinstance(value, int):
        return str(value)
    if isinstance(value, tuple):
        return "{" + ", ".join(_literal(item) for item in value) + "}"
    if not _LUA_STRING.fullmatch(value):
        raise ValueError(f"not a plain Lua string: {value!r}")
    return f"'{value}'"


def text(name: str) -> str:
    """Script ``name`` as its files hold it: its files joined, without the header of values."""
    return "".join(_read(part) for part in SCRIPTS[name])


@cache
def source(name: str, **values: Value) -> str:
    """The Lua source of script ``name``: its files joined, after a ``local`` line for each value
    it uses (of :data:`VALUES` and ``values``). Read and built once per process."""
    body = text(name)
    given = VALUES | values
    used = sorted(set(_NAME.findall(body)) & given.keys())
    return "".join(f"local {n} = {_literal(given[n])}\n" for n in used) + body
