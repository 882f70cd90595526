"""Trained models on disk: trained once per set of examples and hyper-parameters, then
loaded by every crawler process.

A model file is data, never code: numpy arrays and JSON in one ``.npz`` file, read with
``allow_pickle=False`` and rebuilt from a short list of classes (:data:`CLASSES`). A models
folder may be shared (``FOCUSED_MODELS_DIR``): with pickles, whoever could write there would
run code in every crawler that loads a model; here a file that is not such a model is refused
with one warning and the model is trained again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import time
import zipfile
from collections.abc import Iterable
from importlib import import_module
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from focused.errors import FocusedError, TopicError
from focused.relevance.cache import keep
from focused.relevance.centroid import CentroidModel, example_pages, read_examples
from focused.relevance.taxonomy import HierarchicalClassifier, example_files, read_taxonomy
from focused.relevance.text import analyze
from focused.relevance.vectors import CategoryVectors

if TYPE_CHECKING:
    from focused.relevance.examples import ExamplesModel

__all__ = [
    "load_or_fit_category_vectors",
    "load_or_fit_centroid",
    "load_or_fit_examples",
    "load_or_train",
    "model_path",
]

logger = logging.getLogger("focused.relevance")

# Bump when a change to the classifier makes older saved models wrong.
# 2: .npz files of arrays and JSON (1 was joblib pickles, no longer read).
# 3: the taxonomy's vocabulary as a dict of its own (2 kept it in a CountVectorizer).
_FORMAT = 3

Model = TypeVar("Model")


def _name(thing: Any) -> str:
    return f"{thing.__module__}.{thing.__qualname__}"


# The only classes and functions a model file may name: loading builds nothing else. A class's
# module is imported when a file names it, so that loading a model that holds no scikit-learn
# object (a taxonomy's, word vectors') imports no scikit-learn.
CLASSES = frozenset(
    {
        "focused.relevance.taxonomy.HierarchicalClassifier",
        "focused.relevance.vectors.CategoryVectors",
        "focused.relevance.centroid.CentroidModel",
        "focused.relevance.examples.ExamplesModel",
        "sklearn.feature_extraction.text.CountVectorizer",
        "sklearn.feature_extraction.text.TfidfVectorizer",
        "sklearn.feature_extraction.text.TfidfTransformer",
        "sklearn.linear_model._logistic.LogisticRegression",
        "sklearn.pipeline.Pipeline",
    }
)
FUNCTIONS = {_name(analyze): analyze}
_STATE = "state.json"  # the member of the .npz file that holds the JSON


class NotAModel(ValueError):
    """A file that is not a model this version saves."""


def _encode(value: Any, arrays: dict[str, np.ndarray]) -> Any:
    """``value`` as JSON, its numeric arrays moved to ``arrays``. Anything but plain data and
    the objects of CLASSES is a TypeError: such a model cannot be saved as data."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        if value.dtype != object:
            arrays[key := f"array{len(arrays)}"] = value
            return {"array": key}
        items = [_encode(item, arrays) for item in value.ravel().tolist()]
        return {"objects": items, "shape": list(value.shape)}
    if isinstance(value, list):
        return [_encode(item, arrays) for item in value]
    if isinstance(value, tuple):
        return {"tuple": [_encode(item, arrays) for item in value]}
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {"dict": {key: _encode(item, arrays) for key, item in value.items()}}
    if isinstance(value, type) and issubclass(value, np.generic):
        return {"dtype": np.dtype(value).str}
    if isinstance(value, functools.partial) and _name(value.func) in FUNCTIONS:
        return {
            "partial": _name(value.func),
            "args": _encode(value.args, arrays),
            "keywords": _encode(value.keywords, arrays),
        }
    if _name(type(value)) in CLASSES:
        return {"object": _name(type(value)), "state": _encode(vars(value), arrays)}
    raise TypeError(f"a {type(value).__name__} cannot be saved in a model file")


def _decode(value: Any, arrays: Any) -> Any:
    """The inverse of ``_encode``; NotAModel for anything it would not have written."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [_decode(item, arrays) for item in value]
    if not isinstance(value, dict) or not value:
        raise NotAModel(f"unexpected {type(value).__name__}")
    if "array" in value:
        return arrays[value["array"]]
    if "objects" in value:
        items = [_decode(item, arrays) for item in value["objects"]]
        objects = np.empty(len(items), dtype=object)
        objects[:] = items
        return objects.reshape(value["shape"])
    if "tuple" in value:
        return tuple(_decode(value["tuple"], arrays))
    if "dict" in value and isinstance(value["dict"], dict):
        return {key: _decode(item, arrays) for key, item in value["dict"].items()}
    if "dtype" in value:
        return np.dtype(value["dtype"]).type
    if value.get("partial") in FUNCTIONS:
        args, keywords = _decode(value["args"], arrays), _decode(value["keywords"], arrays)
        return functools.partial(FUNCTIONS[value["partial"]], *args, **keywords)
    if value.get("object") in CLASSES:
        module, _, name = value["object"].rpartition(".")
        cls = getattr(import_module(module), name)
        obj = cls.__new__(cls)
        obj.__dict__.update(_decode(value["state"], arrays))
        return obj
    raise NotAModel(f"unexpected entry {json.dumps(value)[:80]}")


def _cache_path(
    kind: str,
    folder: Path,
    files: Iterable[tuple[Path, str]],
    settings: dict[str, Any],
    models_dir: str | os.PathLike,
) -> Path:
    """``models_dir/KIND-FOLDER-DIGEST.npz``: the digest covers each example file's label,
    name, size and modification time, the settings and the scikit-learn version (its fitted
    attributes change between releases), so any change selects a new file and an unchanged
    setup reuses the old one without reading the examples."""
    digest = hashlib.sha256()
    for path, label in files:
        stat = path.stat()
        digest.update(f"{label}/{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    digest.update(
        json.dumps({**settings, "format": _FORMAT}, sort_keys=True, default=repr).encode()
    )
    digest.update(version("scikit-learn").encode())
    name = f"{kind}-{folder.resolve().name or 'root'}-{digest.hexdigest()[:16]}.npz"
    return Path(models_dir) / name


def _save(model: Any, path: Path) -> None:
    """Write to a temporary name and rename (:func:`~focused.relevance.cache.keep`), so a
    crawler process starting at the same moment reads either nothing (and trains too) or a
    whole model. A FocusedError when the models folder cannot be written (read-only, full)."""
    arrays: dict[str, np.ndarray] = {}
    state = json.dumps(_encode(model, arrays)).encode()
    try:
        arrays[_STATE] = np.frombuffer(state, np.uint8)
        # mypy matches the arrays also against savez's allow_pickle: bool keyword
        keep(path, lambda out: np.savez(out, **arrays))  # type: ignore[arg-type]
    except OSError as exc:
        raise FocusedError(
            f"cannot save the model {path} ({exc.strerror or exc}): FOCUSED_MODELS_DIR must "
            "name a folder this user can write, with room for the model"
        ) from None


def _load(path: Path, kind: type[Model]) -> Model | None:
    """The model saved at ``path``, or None, with one warning, when the file is not a
    ``kind`` saved as data (a pickle, a damaged file, an unknown class): it is then trained
    again and the file replaced. No part of the file can run code."""
    try:
        with np.load(path, allow_pickle=False) as data:
            state = json.loads(bytes(data[_STATE]).decode())
            model = _decode(state, data)
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as exc:
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    else:
        if isinstance(model, kind):
            return model
        problem = f"a {type(model).__name__}, not a {kind.__name__}"
    logger.warning(
        "%(path)s is not a model this version saved (%(problem)s): not loaded, training it again",
        {"path": path, "problem": problem},
    )
    return None


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
    **hyperparams: Any,
) -> HierarchicalClassifier:
    """The classifier for a taxonomy folder and good categories, trained only if no model for
    exactly these examples and hyper-parameters is saved in ``models_dir``."""
    good = [good] if isinstance(good, str) else list(good)
    path = model_path(examples_folder, good, models_dir, **hyperparams)
    if path.exists() and (saved := _load(path, HierarchicalClassifier)) is not None:
        return saved

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
    examples_folder: str | os.PathLike, models_dir: str | os.PathLike, **hyperparams: Any
) -> CentroidModel:
    """The centroid model of a folder of example pages, fitted only if none for exactly these
    examples and hyper-parameters is saved in ``models_dir``."""
    folder = Path(examples_folder)
    files = [(path, "") for path in example_pages(folder)]
    path = _cache_path("centroid", folder, files, {"params": hyperparams}, models_dir)
    if path.exists() and (saved := _load(path, CentroidModel)) is not None:
        return saved
    model = CentroidModel(**hyperparams).fit(read_examples(folder))
    _save(model, path)
    logger.info("fitted %s on %d examples", path.name, len(files))
    return model


def load_or_fit_examples(
    positive_folder: str | os.PathLike,
    negative_folder: str | os.PathLike | None,
    models_dir: str | os.PathLike,
    **hyperparams: Any,
) -> ExamplesModel:
    """The examples model of a positive (and an optional negative) folder of pages, fitted only
    if none for exactly these examples and hyper-parameters is saved in ``models_dir``."""
    from focused.relevance.examples import ExamplesModel
    from focused.relevance.examples import read_examples as read_labelled_examples

    folder = Path(positive_folder)
    files = [(path, "1") for path in example_pages(folder)]
    if negative_folder is not None:
        files += [(path, "0") for path in example_pages(negative_folder)]
    path = _cache_path("examples", folder, files, {"params": hyperparams}, models_dir)
    if path.exists() and (saved := _load(path, ExamplesModel)) is not None:
        return saved
    texts, labels = read_labelled_examples(positive_folder, negative_folder)
    model = ExamplesModel(**hyperparams).fit(texts, labels)
    _save(model, path)
    logger.info("fitted %s on %d examples", path.name, len(files))
    return model


def load_or_fit_category_vectors(
    taxonomy_folder: str | os.PathLike,
    good: Iterable[str],
    models_dir: str | os.PathLike,
    **hyperparams: Any,
) -> CategoryVectors:
    """The word-vector model of a taxonomy folder's categories, fitted only if none for exactly
    these examples, good categories and hyper-parameters is saved in ``models_dir``.
    VectorsMissing without the word vectors."""
    folder = Path(taxonomy_folder)
    good = [good] if isinstance(good, str) else list(good)
    settings = {"good": sorted(good), "params": hyperparams}
    path = _cache_path("vectors", folder, example_files(folder), settings, models_dir)
    if path.exists() and (saved := _load(path, CategoryVectors)) is not None:
        return saved
    examples = read_taxonomy(folder)
    model = CategoryVectors(good=good, **hyperparams).fit(examples.texts, examples.labels)
    _save(model, path)
    logger.info("fitted %s on %d examples", path.name, len(examples.texts))
    return model
