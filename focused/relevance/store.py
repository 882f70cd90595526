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

import joblib
import sklearn

from focused.errors import TopicError
from focused.relevance.taxonomy import HierarchicalClassifier, example_files, read_taxonomy

__all__ = ["load_or_train", "model_path"]

logger = logging.getLogger("focused.relevance")

# Bump when a change to the classifier makes older saved models wrong.
_FORMAT = 1


def model_path(
    examples_folder: str | os.PathLike,
    good: Iterable[str],
    models_dir: str | os.PathLike,
    **hyperparams: object,
) -> Path:
    """Where the model for these examples and parameters is saved.

    The name carries a digest of every example file's path, size and modification time, of
    ``good`` and the hyper-parameters, and of the scikit-learn version (pickles do not
    survive its upgrades), so any change selects a new file and an unchanged setup reuses
    the old one without reading the examples.
    """
    folder = Path(examples_folder)
    digest = hashlib.sha256()
    for path, category in example_files(folder):
        stat = path.stat()
        digest.update(f"{category}/{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    settings = {"good": sorted(good), "params": hyperparams, "format": _FORMAT}
    digest.update(json.dumps(settings, sort_keys=True, default=repr).encode())
    digest.update(sklearn.__version__.encode())
    name = f"taxonomy-{folder.resolve().name or 'root'}-{digest.hexdigest()[:16]}.joblib"
    return Path(models_dir) / name


def load_or_train(
    examples_folder: str | os.PathLike,
    good: Iterable[str],
    models_dir: str | os.PathLike,
    **hyperparams: object,
) -> HierarchicalClassifier:
    """The classifier for a taxonomy folder and good categories, trained only if no model for
    exactly these examples and hyper-parameters is saved in ``models_dir``.

    The file is written to a temporary name and renamed, so a crawler process starting at
    the same moment reads either nothing (and trains too) or a whole model.
    """
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
    logger.info(
        "trained %s on %d examples in %d categories in %.1f s",
        path.name,
        len(examples.texts),
        len(examples.categories),
        time.perf_counter() - started,
    )
    return model
