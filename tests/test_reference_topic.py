"""The topic file reference (``docs/reference/topic-file.md``) documents every field the code
reads, and no other: a new field cannot go undocumented, a removed one cannot stay documented.

The page's field tables (header ``| field | type | required | default | meaning |``) name one
field a row, in backticks, with its full dotted name (``relevance.threshold``); a table under a
heading ``method = "NAME"`` holds that method's own fields.
"""

from __future__ import annotations

import re
from pathlib import Path

from focused.topic.files import STRATEGY_OPTIONS, TOP_FIELDS
from focused.topic.methods import METHODS

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "topic-file.md"
HEADER = ["field", "type", "required", "default", "meaning"]
METHOD_HEADING = re.compile(r'^#+ .*method = "(?P<method>[a-z-]+)"')


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def documented_fields(text: str) -> list[tuple[str | None, str]]:
    """``(method, field)`` for each row of the page's field tables; ``method`` is the one the
    table's heading names, None for tables under other headings."""
    rows: list[tuple[str | None, str]] = []
    method: str | None = None
    in_table = False
    for line in text.splitlines():
        if line.startswith("#"):
            heading = METHOD_HEADING.match(line)
            method = heading["method"] if heading else None
        if not line.startswith("|"):
            in_table = False
            continue
        cells = _cells(line)
        if cells == HEADER:
            in_table = True
        elif in_table and not set(cells[0]) <= set("-: "):
            names = re.findall(r"`([^`]+)`", cells[0])
            assert len(names) == 1, f"one field a row, in backticks: {line}"
            rows.append((method, names[0]))
    return rows


def expected_fields() -> set[str]:
    relevance = {"method", "link_score"} | {f for m in METHODS.values() for f in m.fields}
    return (
        set(TOP_FIELDS)
        | {f"relevance.{f}" for f in relevance}
        | {f"strategy_options.{f}" for f in STRATEGY_OPTIONS}
    )


def test_the_page_documents_every_field_of_a_topic_file_and_no_other():
    documented = {name for _, name in documented_fields(PAGE.read_text(encoding="utf-8"))}
    assert sorted(expected_fields() - documented) == [], "fields the page does not document"
    assert sorted(documented - expected_fields()) == [], "documented fields the code lacks"


def test_each_method_has_a_table_of_exactly_its_fields():
    by_method: dict[str, set[str]] = {}
    for method, name in documented_fields(PAGE.read_text(encoding="utf-8")):
        if method is not None:
            by_method.setdefault(method, set()).add(name.removeprefix("relevance."))
    assert by_method == {name: set(m.fields) for name, m in METHODS.items()}
