"""Sphinx support for the reference pages that :mod:`focused.cli.refpages` writes from the code.

Each setting is a heading of ``reference/settings.md`` (its name in code); the ``{setting}``
role links to it, as Scrapy's ``:setting:`` role does to its settings: every such heading of
that page is noted as an object of type ``setting``. MyST's dump of its whole configuration
at every build is left out of the build's output.
"""

from __future__ import annotations

import logging
import re

from docutils import nodes
from sphinx.application import Sphinx

SETTINGS_PAGE = "reference/settings"
_SETTING = re.compile(r"FOCUSED_[A-Z0-9_]+")
# The Python logger MyST's Sphinx extension logs its configuration to, as information.
MYST_LOGGER = "sphinx.myst_parser.sphinx_ext.main"


def _not_information(record: logging.LogRecord) -> bool:
    return record.levelno > logging.INFO


def note_settings(app: Sphinx, doctree: nodes.document) -> None:
    """Makes each setting's heading of the settings page the target of ``{setting}`NAME```."""
    if app.env.docname != SETTINGS_PAGE:
        return
    std = app.env.domains["std"]
    for section in doctree.findall(nodes.section):
        name = section[0].astext()
        if _SETTING.fullmatch(name):
            std.note_object("setting", name, section["ids"][0], location=section)


def setup(app: Sphinx) -> dict[str, object]:
    app.add_object_type("setting", "setting", indextemplate="pair: %s; setting")
    logging.getLogger(MYST_LOGGER).addFilter(_not_information)
    app.connect("doctree-read", note_settings)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
