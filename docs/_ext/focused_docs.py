"""Sphinx directives that write reference pages from the code, so they cannot drift from it.

- ``.. setting:: NAME`` (and the ``:setting:`` role): one setting's entry, as in Scrapy's docs;
- ``.. focused-settings::``: every setting, from :mod:`focused.settingdocs`;
- ``.. focused-commands::``: the ``--help`` of ``focused`` and of each of its commands.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

from focused import cli, defaults
from focused.cli.main import build_parser
from focused.settingcheck import SCRAPY_TYPES, accepted
from focused.settingdocs import setting_sections

_RST_SPECIAL = re.compile(r"([\\`*_|\[\]<>])")
_NAME = re.compile(r"\bFOCUSED_[A-Z0-9_]*[A-Z0-9]\b")


def _prose(text: str, known: set[str]) -> str:
    """A comment of defaults.py as reST: plain text, with each setting it names linked."""
    parts = _NAME.split(text)
    names = _NAME.findall(text)
    out = [_RST_SPECIAL.sub(r"\\\1", parts[0])]
    for name, part in zip(names, parts[1:], strict=True):
        role = f":setting:`{name}`" if name in known else f"``{name}``"
        out.append(f"\\ {role}\\ ")  # "\ " lets markup touch the words around it
        out.append(_RST_SPECIAL.sub(r"\\\1", part))
    return "".join(out)


class _GeneratedDirective(SphinxDirective):
    """A directive whose reST is written by :meth:`lines`, titles and all."""

    def lines(self) -> list[str]:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, StringList(self.lines(), "generated"), container)
        return container.children


class SettingsDirective(_GeneratedDirective):
    """Every setting, section by section, with its default, what it accepts and its text; then
    what the Scrapy settings that the crawl checks accept."""

    def lines(self) -> list[str]:
        self.env.note_dependency(defaults.__file__)  # rebuilt when a default or its text changes
        sections = setting_sections()
        known = {s.name for section in sections for g in section.groups for s in g.settings}
        lines: list[str] = []
        for section in sections:
            lines += [section.title, "-" * len(section.title), ""]
            for group in section.groups:
                if group.text:
                    lines += [_prose(group.text, known), ""]
                for setting in group.settings:
                    lines += [f".. setting:: {setting.name}", ""]
                    lines += [f"   Default: ``{setting.default!r}``; {accepted(setting.name)}."]
                    if setting.own:
                        lines += ["", f"   {_prose(setting.own, known)}"]
                    lines += [""]
        title = "Scrapy's settings the crawl relies on"
        lines += [title, "-" * len(title), ""]
        lines += [
            "Checked at start as the ``FOCUSED_*`` settings are; their defaults are Scrapy's.",
            "",
        ]
        lines += [f"- ``{name}``: {accepted(name)}." for name in sorted(SCRAPY_TYPES)]
        return lines + [""]


class CommandsDirective(_GeneratedDirective):
    """``focused --help`` and the help of every command and subcommand, as printed."""

    def lines(self) -> list[str]:
        for module in Path(cli.__file__).parent.glob("*.py"):
            self.env.note_dependency(str(module))
        lines: list[str] = []
        for title, parser in _parsers(build_parser([]), "focused"):
            lines += [f"``{title}``", "-" * (len(title) + 4), "", ".. code-block:: text", ""]
            lines += [f"   {line}".rstrip() for line in parser.format_help().splitlines()]
            lines += [""]
        return lines


def _parsers(parser: argparse.ArgumentParser, prog: str):
    """``(prog, parser)`` for ``parser`` and, depth first, each of its subcommands."""
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{prog} {name}")


def setup(app: Sphinx) -> dict[str, object]:
    app.add_object_type("setting", "setting", indextemplate="pair: %s; setting")
    app.add_directive("focused-settings", SettingsDirective)
    app.add_directive("focused-commands", CommandsDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
