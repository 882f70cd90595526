"""The documentation of every ``FOCUSED_*`` setting, read from the comments of
:mod:`focused.settings.defaults`, so that a setting is described in one place: beside its default.

The comments follow three rules. A line ``# == Title ==`` starts a section. A block of comment
lines describes the run of settings right below it (a group). A comment at the end of a
setting's own line describes that setting alone. The settings reference of the documentation
is made from this (``docs/_ext``), and a test checks that every setting is described.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

from focused.settings import defaults

_SECTION = re.compile(r"^# == (?P<title>.+) ==$")
_SETTING = re.compile(r"^(?P<name>FOCUSED_[A-Z0-9_]+)\b[^=]*=[^#]*(?:#\s*(?P<own>.*))?$")


@dataclass
class Setting:
    """One setting: its name, its default and the text on its own line (may be empty)."""

    name: str
    default: object
    own: str = ""


@dataclass
class Group:
    """Settings described together by the comment block above them."""

    text: str
    settings: list[Setting] = field(default_factory=list)


@dataclass
class Section:
    """A titled part of the settings (Redis, politeness, ...)."""

    title: str
    groups: list[Group] = field(default_factory=list)


def setting_sections() -> list[Section]:
    """The sections of :mod:`focused.settings.defaults`, in the order of the file."""
    sections: list[Section] = []
    comment: list[str] = []
    group: Group | None = None
    for raw in inspect.getsource(defaults).splitlines():
        line = raw.strip()
        if title := _SECTION.match(line):
            sections.append(Section(title["title"]))
            comment, group = [], None
        elif line.startswith("#"):
            comment.append(line.lstrip("#").strip())
        elif setting := _SETTING.match(line):
            if group is None or comment:
                if not sections:
                    raise ValueError(f"{setting['name']} comes before the first '# == Title =='")
                group = Group(" ".join(comment))
                sections[-1].groups.append(group)
                comment = []
            name = setting["name"]
            group.settings.append(Setting(name, getattr(defaults, name), setting["own"] or ""))
        elif not line:
            comment, group = [], None
    return sections


def undescribed() -> list[str]:
    """Settings with no text of their own whose group's text does not name them either."""
    return [
        setting.name
        for section in setting_sections()
        for group in section.groups
        for setting in group.settings
        if not setting.own
        and not (len(group.settings) == 1 and group.text)
        and setting.name not in group.text
    ]
