"""Trained models on disk: trained once per set of examples and hyper-parameters, then
loaded by every crawler process."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import joblib
import sklearn

from focused.errors import TopicError
from focused.relevance.centroid import CentroidModel, example_pages, read_examples
from focused.relevance.examples import ExamplesModel
from focused.relevance.examples import read_examples as read_labelled_examples
from focused.relevance.taxonomy import HierarchicalClassifier, example_files, read_taxonomy

__all__ = ["load_or_fit_centroid", "load_or_train", "model_path"]

logger = logging.getLogger("focused.relevance")

# Bump when a change to the classifier makes older saved models wrong.
_FORMAT = 1


def _cache_path(
    kind: str,
    folder: Path,
    files: Iterable[tuple[Path, str]],
    settings: dict[str, Any],
    models_dir: str | os.PathLike,
) -> Path:
    """``models_dir/KIND-FOLDER-DIGEST.joblib``: the digest covers each example file's label,
    name, size and modification time, the settings and the scikit-learn version (pickles do
    not survive its upgrades), so any change selects a new file and an unchanged setup reuses
    the old one without reading the examples."""
    digest = hashlib.sha256()
    for path, label in files:
        stat = path.stat()
        digest.update(f"{label}/{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    digest.update(
        json.dumps({**settings, "format": _FORMAT}, sort_keys=True, default=repr).encode()
    )
    digest.update(sklearn.__version__.encode())
    name = f"{kind}-{folder.resolve().name or 'root'}-{digest.hexdigest()[:16]}.joblib"
    return Path(models_dir) / name


def _save(model: Any, path: Path) -> None:
    """Write to a temporary name and rename, so a crawler process starting at the same moment
    reads either nothing (and trains too) or a whole model."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), 0o644)  # mkstemp's 0600 would lock out other users' crawlers
            joblib.dump(model, out)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def model_path(
    examples_folder: str | os.PathLike,
    good: Iterable[str],
    models_dir: str | os.PathLike,
    **hyperparams: object,
) -> Path:
    """Where the taxonomy model for these examples, good categories and parameters is saved."""
    folder = Path(examples_folder)
    settings = {"good": sorted(good), "params": hyperparams}
    return _cache_path("taxonomy", folder, example_files(folder), settings, models_dir)


def load_or_train(
    examples_folder: str | os.PathLike,
    good: Iterable[str],
    models_dir: str | os.PathLike,
    **hyperparams: object,
) -> HierarchicalClassifier:
    """The classifier for a taxonomy folder and good categories, trained only if no model for
    exactly these examples and hyper-parameters is saved in ``models_dir``."""
    good = [good] if isinstance(good, str) else list(good)
    path = model_path(examples_folder, good, models_dir, **hyperparams)
    if path.exists():
        return joblib.load(path)

    started = time.perf_counter()
    examples = read_taxonomy(examples_folder)
    missing = [g for g in good if g not in examples.categories]
    if missing:
        raise TopicError(examples_folder, "good", f"category {missing[0]!r} is not in the taxonomy")
    model = HierarchicalClassifier(good=good, **hyperparams).fit(examples.texts, examples.labels)
    _save(model, path)
    logger.info(
        "trained %s on %d examples in %d categories in %.1f s",
        path.name,
        len(examples.texts),
        len(examples.categories),
        time.perf_counter() - started,
    )
    return model


def load_or_fit_centroid(
    examples_folder: str | os.PathLike, models_dir: str | os.PathLike, **hyperparams: object
) -> CentroidModel:
    """The centroid model of a folder of example pages, fitted only if none for exactly these
    examples and hyper-parameters is saved in ``models_dir``."""
    folder = Path(examples_folder)
    files = [(path, "") for path in example_pages(folder)]
    path = _cache_path("centroid", folder, files, {"params": hyperparams}, models_dir)
    if path.exists():
        return joblib.load(path)
    model = CentroidModel(**hyperparams).fit(read_examples(folder))
    _save(model, path)
    logger.info("fitted %s on %d examples", path.name, len(files))
    return model


def load_or_fit_examples(
    positive_folder: str | os.PathLike,
    negative_folder: str | os.PathLike | None,
    models_dir: str | os.PathLike,
    **hyperparams: object,
) -> ExamplesModel:
    """The examples model of a positive (and an optional negative) folder of pages, fitted only
    if none for exactly these examples and hyper-parameters is saved in ``models_dir``."""
    folder = Path(positive_folder)
    files = [(path, "1") for path in example_pages(folder)]
    if negative_folder is not None:
        files += [(path, "0") for path in example_pages(negative_folder)]
    path = _cache_path("examples", folder, files, {"params": hyperparams}, models_dir)
    if path.exists():
        return joblib.load(path)
    texts, labels = read_labelled_examples(positive_folder, negative_folder)
    model = ExamplesModel(**hyperparams).fit(texts, labels)
    _save(model, path)
    logger.info("fitted %s on %d examples", path.name, len(files))
    return model
