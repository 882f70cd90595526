"""Text from pages made safe to write and to show: control characters out.

A page's title or text may hold C0 and C1 control characters (``\\x1b[31m`` turns a terminal
red, ``\\x1b]0;...\\x07`` retitles it, ``\\x00`` ends a C string), which would reach the feed,
the exported data set and ``focused status``. This module imports nothing, so that the
command line stays quick to start.
"""

from __future__ import annotations

__all__ = ["printable"]

# C0 (U+0000-U+001F), DEL and C1 (U+0080-U+009F), each made a space (translate tables).
_CONTROLS = {code: " " for code in (*range(0x20), *range(0x7F, 0xA0))}
_CONTROLS_BUT_LINES = {code: " " for code in _CONTROLS if chr(code) not in "\t\n"}


def printable(text: str, lines: bool = False) -> str:
    """``text`` with each control character a space; with ``lines``, tabs and line feeds
    are kept (text laid out in lines)."""
    return text.translate(_CONTROLS_BUT_LINES if lines else _CONTROLS)
