"""The cache folder: what a crawl process would otherwise build at every start from files that
do not change (the word vectors' sorted vocabulary, WordNet's lemma index) is built by the
first process of a machine and kept here; every later one reads it back in a fraction of the
time. Each file's name carries a digest of what it was built from, so a changed source selects
a new file.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["default_cache_dir", "keep"]


def default_cache_dir() -> str:
    """The cache folder: ``$FOCUSED_CACHE``, else ``$XDG_CACHE_HOME/focused``
    (``~/.cache/focused``)."""
    if path := os.environ.get("FOCUSED_CACHE"):
        return path
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "focused")


def keep(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write ``path`` with ``write`` under a temporary name and rename it, so that a process
    starting at the same moment reads either nothing or the whole file; readable by every user
    (mkstemp's 0600 would lock out other users' crawlers). OSError when it cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), 0o644)
            write(out)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
