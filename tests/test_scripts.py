"""The Lua script loader (focused.store.scripts): every file used and parsing alone, every
value given, helper files of functions and constants only."""

from __future__ import annotations

import hashlib
import re
from importlib.resources import files

import pytest

from focused.store import scripts
from focused.store.frontier.core import SCRIPT_VALUES, script_keys, script_values

# A Lua comment or string literal (whichever starts first wins, as in Lua; no long brackets).
CODE_ONLY = re.compile(r"""--[^\n]*|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*\"""")
UPPER = re.compile(r"\b[A-Z][A-Z0-9_]*\b")
DECLARED = re.compile(r"\blocal\s+(?:function\s+)?(\w+(?:\s*,\s*\w+)*)")
# A file other scripts are built on (SCRIPTS: every file but a script's last).
HELPERS = sorted({part for parts in scripts.SCRIPTS.values() for part in parts[:-1]})


def built() -> dict[str, str]:
    return {name: scripts.source(name, **script_values(name)) for name in scripts.SCRIPTS}


def lua_files() -> dict[str, str]:
    folder = files(scripts.__package__) / "lua"
    return {f.name: f.read_text(encoding="utf-8") for f in folder.iterdir()}


def test_every_file_is_part_of_a_script() -> None:
    on_disk = set(lua_files())
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


def test_helper_files_hold_functions_and_constants_only() -> None:
    """What a script shares with the files before it is functions it calls (given what they
    need) and constants: a helper file declares no variable, and runs nothing at its top."""
    assert HELPERS == ["duplicate_check", "frontier"]
    for part in HELPERS:
        code = CODE_ONLY.sub(" ", lua_files()[f"{part}.lua"])
        top = [line for line in code.splitlines() if line and not line[0].isspace()]
        for line in top:
            declares = re.match(r"local (function \w+\(|[A-Z][A-Z_]* = )", line)
            assert declares or line in ("end", "}"), (part, line)


def test_header_holds_the_values() -> None:
    complete = scripts.source("complete", **script_values("complete"))
    assert f"local TRY_UNIT = {SCRIPT_VALUES['TRY_UNIT']}\n" in complete
    assert "local CURVE_BUCKET = 100\n" in complete
    given = script_keys("complete")
    assert f"local GIVEN_KEYS = {{'{given[0]}', '{given[1]}', " in complete  # a tuple: a table
    assert "local AGENT_ENERGY" not in complete  # only the values the script uses
    assert scripts.source("unlock").startswith("--")  # no values: no header


def test_a_script_is_its_own_file_after_its_helpers() -> None:
    complete = scripts.source("complete", **script_values("complete"))
    own = lua_files()["complete.lua"]
    assert complete.endswith(own)
    assert complete.index(lua_files()["frontier.lua"]) < complete.index(own)


def test_a_value_that_is_not_a_plain_string_is_refused() -> None:
    with pytest.raises(ValueError, match="not a plain Lua string"):
        scripts.source("push", **script_values("push"), HOST="h'")


def test_a_frontier_script_is_given_the_keys_its_code_names() -> None:
    """Each key given costs Redis time on every call: the push is not given the acknowledgement's
    keys, nor a key only a comment names."""
    assert {"stats", "ready", "wait"} <= set(script_keys("push"))
    assert not {"known", "checksums", "outbox", "curve"} & set(script_keys("push"))
    assert {"known", "checksums", "outbox", "curve"} <= set(script_keys("complete"))
    assert "frontier.key.ready" in scripts.text("back_off")  # in frontier.lua's comments
    assert "key.ready" not in CODE_ONLY.sub(" ", lua_files()["back_off.lua"])


def test_every_file_compiles_alone(redis_client) -> None:
    """Each file parses by itself: no file opens a block another closes."""
    for name, text in lua_files().items():
        assert redis_client.script_load(text) == hashlib.sha1(text.encode()).hexdigest(), name


def test_every_script_compiles_in_redis(redis_client) -> None:
    for name, source in built().items():
        sha = hashlib.sha1(source.encode()).hexdigest()
        assert redis_client.script_load(source) == sha, name
