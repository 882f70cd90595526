"""The Lua script loader (focused.store.scripts): every file used, every value given."""

from __future__ import annotations

import hashlib
import re
from importlib.resources import files

import pytest

from focused.store import scripts
from focused.store.frontier.records import PACKING

# A Lua comment or string literal (whichever starts first wins, as in Lua; no long brackets).
CODE_ONLY = re.compile(r"""--[^\n]*|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*\"""")
UPPER = re.compile(r"\b[A-Z][A-Z0-9_]*\b")
DECLARED = re.compile(r"\blocal\s+(?:function\s+)?(\w+(?:\s*,\s*\w+)*)")


def built() -> dict[str, str]:
    return {name: scripts.source(name, **PACKING) for name in scripts.SCRIPTS}


def test_every_file_is_part_of_a_script() -> None:
    on_disk = {f.name for f in (files(scripts.__package__) / "lua").iterdir()}
    assert all(name.endswith(".lua") for name in on_disk)
    used = {f"{part}.lua" for parts in scripts.SCRIPTS.values() for part in parts}
    assert used == on_disk


def test_every_value_a_script_uses_is_declared_once() -> None:
    """An upper-case name left undeclared would be a nil global (an error in Redis) at run
    time: each one a script uses is a local of its header or of its own code."""
    for name, source in built().items():
        code = CODE_ONLY.sub(" ", source)
        declared = [n.strip() for names in DECLARED.findall(code) for n in names.split(",")]
        constants = [n for n in declared if UPPER.fullmatch(n)]
        assert len(constants) == len(set(constants)), name  # none shadows a header value
        missing = set(UPPER.findall(code)) - set(declared) - {"KEYS", "ARGV"}
        assert not missing, (name, missing)


def test_header_holds_the_values() -> None:
    complete = scripts.source("complete", **PACKING)
    assert f"local TRY_UNIT = {PACKING['TRY_UNIT']}\n" in complete
    assert "local CURVE_BUCKET = 100\n" in complete
    assert "local STATS = 'stats'\n" in complete
    assert "local AGENT_ENERGY" not in complete  # only the values the script uses
    assert scripts.source("unlock").startswith("--")  # no values: no header


def test_complete_joins_the_features_in_order() -> None:
    complete = scripts.source("complete", **PACKING)
    parts = ["complete", *(f"complete_{f}" for f in scripts.COMPLETE_FEATURES), "complete_end"]
    starts = [complete.index(scripts._read(part)) for part in parts]
    assert starts == sorted(starts)
    assert complete.rstrip().endswith("return out")


def test_a_value_that_is_not_a_plain_string_is_refused() -> None:
    with pytest.raises(ValueError, match="not a plain Lua string"):
        scripts.source("push", **PACKING, STATS="st'ats")


def test_every_script_compiles_in_redis(redis_client) -> None:
    for name, source in built().items():
        sha = hashlib.sha1(source.encode()).hexdigest()
        assert redis_client.script_load(source) == sha, name
