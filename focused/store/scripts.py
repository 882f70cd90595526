"""The project's Redis Lua scripts, built from the ``.lua`` files in ``focused/store/lua/``.

A script is one or more files joined in order (:data:`SCRIPTS`). The frontier's scripts start
with ``common.lua``, its helpers, so none keeps a copy of them; the duplicates check
(``duplicate_check.lua``) is one function that two scripts share. A batch of acknowledgements
(``complete``) is ``complete.lua`` (per page: the duplicates check, the lease, the host, the
fetch order and the page's record), then one fragment per feature that adds its part of a
classified page (``complete_<feature>.lua``, in :data:`COMPLETE_FEATURES` order: the fragments
are independent of each other), then ``complete_end.lua`` (the page's links, then what the
batch adds up to: counters, records, the outbox, the hosts' places, the reply). A batch costs
one round trip, and a new feature is a new fragment named in :data:`COMPLETE_FEATURES`.

Values: a file refers to key names and constants by their names in Python (``STATS`` and
``CURVE_BUCKET`` of :mod:`focused.store.keys`; ``HOST_UNIT``, ``HOST_CAP`` and ``TRY_UNIT``,
which the frontier gives), and the built script starts with a ``local NAME = value`` line for
each of them it mentions. Why a header of Lua locals rather than placeholders substituted into
the text: the files stay plain Lua, readable and checkable as they are, and nothing in them
(Lua's ``%`` patterns and formats, its braces, ``$`` anchors) needs escaping or can be taken
for a placeholder; a value is a Lua local, used like any other.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files

from focused.store import keys

COMPLETE_FEATURES = ("curve", "recent", "census", "graph", "hubs", "sites", "found", "revisits")

_FRONTIER = ("push", "pop", "release", "back_off", "raise", "requeue", "drop_worst")
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
    "time",
)

# Script name -> its files (without ``.lua``), joined in this order.
SCRIPTS: dict[str, tuple[str, ...]] = {
    **{name: ("common", name) for name in _FRONTIER},
    "complete": (
        "common",
        "duplicate_check",
        "complete",
        *(f"complete_{feature}" for feature in COMPLETE_FEATURES),
        "complete_end",
    ),
    "duplicates": ("duplicate_check", "duplicates"),
    **{name: (name,) for name in _ALONE},
}

# The values a script may use: every key name and bucket size of ``keys``.
VALUES: dict[str, str | int] = {
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


def _literal(value: str | int) -> str:
    if isinstance(value, int):
        return str(value)
    if not _LUA_STRING.fullmatch(value):
        raise ValueError(f"not a plain Lua string: {value!r}")
    return f"'{value}'"


@cache
def source(name: str, **values: str | int) -> str:
    """The Lua source of script ``name``: its files joined, after a ``local`` line for each value
    it uses (of :data:`VALUES` and ``values``). Read and built once per process."""
    body = "".join(_read(part) for part in SCRIPTS[name])
    given = VALUES | values
    used = sorted(set(_NAME.findall(body)) & given.keys())
    return "".join(f"local {n} = {_literal(given[n])}\n" for n in used) + body
