"""Sphinx configuration of focused's documentation: Markdown pages (MyST), the Furo theme, and
reference pages written from the code by ``focused.cli.refpages`` (committed files);
``_ext/focused_docs.py`` makes each setting of the settings page a target of ``{setting}``.

Build: ``.venv/bin/python -m sphinx -W --keep-going docs docs/_build/html``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "focused"
author = "the focused developers"
copyright = "2026, the focused developers"
release = "0.1.0"

extensions = ["myst_parser", "sphinx.ext.autodoc", "focused_docs"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3  # [text](page.md#a-heading) links to headings
autodoc_member_order = "bysource"
autodoc_typehints = "description"

html_theme = "furo"
html_title = "focused"
html_static_path: list[str] = []
