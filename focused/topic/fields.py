"""Checks of single topic-file fields shared by the topic file and its relevance methods: each
returns the value as the crawl uses it, or raises a TopicError naming the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from focused.errors import TopicError

__all__ = ["example_folder", "existing_path", "number"]


def existing_path(path: Path, fieldname: str, value: Any, *, folder: bool) -> Path:
    """A path named in the topic file, resolved against it, that must exist."""
    if not isinstance(value, str) or not value:
        raise TopicError(path, fieldname, f"expected a path, got {value!r}")
    target = (path.parent / value).resolve()
    kind = "folder" if folder else "file"
    if not target.exists():
        raise TopicError(path, fieldname, f"{kind} not found: {target}")
    if folder != target.is_dir():
        raise TopicError(path, fieldname, f"not a {kind}: {target}")
    return target


def number(path: Path, fieldname: str, value: Any, low: float, high: float) -> float:
    """A number of the topic file in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TopicError(path, fieldname, f"expected a number, got {value!r}")
    if not low <= value <= high:
        raise TopicError(path, fieldname, f"expected {low} to {high}, got {value!r}")
    return float(value)


def example_folder(path: Path, fieldname: str, value: Any, *, taxonomy: bool = False) -> Path:
    """A folder of example pages (or a taxonomy's tree of them) that has some: an empty one
    is named with the topic file's field now, not when the model is first trained."""
    from focused.relevance.centroid import example_pages  # scikit-learn: only when needed
    from focused.relevance.taxonomy import example_files

    folder = existing_path(path, fieldname, value, folder=True)
    try:
        example_files(folder) if taxonomy else example_pages(folder)
    except TopicError as exc:
        raise TopicError(path, fieldname, f"{exc.problem} ({folder})") from None
    return folder
