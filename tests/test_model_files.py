"""Saved models are data, never code: a models folder anyone can write to (a shared
FOCUSED_MODELS_DIR) cannot make a crawler run anything, only make it train again."""

from __future__ import annotations

import json
import logging
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from focused.relevance.centroid import CentroidModel
from focused.relevance.examples import ExamplesModel
from focused.relevance.store import (
    load_or_fit_centroid,
    load_or_fit_examples,
    load_or_train,
)
from focused.relevance.taxonomy import HierarchicalClassifier

PAGES = ["a goal in the football match", "the telescope saw a comet", "nothing at all", ""]


class RunsCode:
    """Unpickling this calls ``open(marker, "w")``: the file appears if the pickle is loaded."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (open, (str(self.marker), "w"))


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    texts = {
        "tax/Sports/a.txt": "football goal match referee",
        "tax/Sports/b.txt": "tennis match serve goal",
        "tax/Science/c.txt": "telescope comet star orbit",
        "tax/Science/d.html": "<title>Comets</title><p>a comet and a star</p>",
        "pos/a.txt": "football goal match",
        "pos/b.html": "<p>a goal in a match</p>",
        "neg/c.txt": "telescope comet star",
    }
    for name, text in texts.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


LOADERS: dict[str, tuple[Callable[[Path, Path], object], type]] = {
    "taxonomy": (
        lambda d, m: load_or_train(d / "tax", ["Sports"], m, min_df=1),
        HierarchicalClassifier,
    ),
    "centroid": (lambda d, m: load_or_fit_centroid(d / "pos", m, threshold=0.2), CentroidModel),
    "examples": (lambda d, m: load_or_fit_examples(d / "pos", d / "neg", m), ExamplesModel),
    "examples-without-negatives": (
        lambda d, m: load_or_fit_examples(d / "pos", None, m),
        ExamplesModel,
    ),
}


def saved_file(models: Path) -> Path:
    (path,) = [path for path in models.iterdir() if not path.name.endswith(".tmp")]
    return path


def test_the_payload_would_run_if_unpickled(tmp_path: Path):
    """What makes the tests below able to fail: loading this pickle writes the marker."""
    marker = tmp_path / "ran"
    pickle.loads(pickle.dumps(RunsCode(marker))).close()
    assert marker.exists()


@pytest.mark.parametrize("kind", LOADERS)
def test_models_are_saved_as_data_and_load_to_the_same_scores(folders, tmp_path, kind, caplog):
    load, cls = LOADERS[kind]
    models = tmp_path / "models"
    caplog.set_level(logging.INFO, logger="focused.relevance")
    trained = load(folders, models)
    path = saved_file(models)
    assert path.suffix == ".npz"
    with np.load(path, allow_pickle=False) as data:  # no pickle, no object array inside
        assert all(data[name].dtype != object for name in data.files)
    messages = len(caplog.records)
    loaded = load(folders, models)
    assert len(caplog.records) == messages  # loaded, not trained again
    assert type(loaded) is cls and loaded is not trained
    np.testing.assert_array_equal(loaded.score_pages(PAGES)[0], trained.score_pages(PAGES)[0])
    assert loaded.score_pages(PAGES)[1] == trained.score_pages(PAGES)[1]
    assert loaded.get_params() == trained.get_params()


@pytest.mark.parametrize("kind", LOADERS)
def test_a_pickle_in_place_of_a_model_does_not_run(folders, tmp_path, kind, caplog):
    load, cls = LOADERS[kind]
    models, marker = tmp_path / "models", tmp_path / "ran"
    load(folders, models)
    path = saved_file(models)
    path.write_bytes(pickle.dumps(RunsCode(marker)))  # whoever can write to the folder

    caplog.set_level(logging.INFO, logger="focused.relevance")
    model = load(folders, models)
    assert not marker.exists()
    assert isinstance(model, cls) and len(model.score_pages(PAGES)[0]) == len(PAGES)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith(f"{path} is not a model this version saved (")
    assert warning.endswith("): not loaded, training it again") and "\n" not in warning
    # Trained again and saved over it: the next load is the model, with no warning.
    with np.load(path, allow_pickle=False):
        pass
    caplog.clear()
    load(folders, models)
    assert not caplog.records


def npz(path: Path, state: object, **arrays: np.ndarray) -> None:
    text = json.dumps(state).encode()
    with path.open("wb") as out:
        np.savez(out, **arrays, **{"state.json": np.frombuffer(text, dtype=np.uint8)})


@pytest.mark.parametrize(
    "state, pickled, problem",
    [
        # An object array is a pickle inside the .npz: never unpickled.
        ({"array": "x"}, True, "allow_pickle=False"),
        # Only the model classes and the analyzer may be named.
        ({"object": "os.system", "state": {"dict": {}}}, False, '"object": "os.system"'),
        (
            {"partial": "builtins.eval", "args": {"tuple": ["1"]}, "keywords": {"dict": {}}},
            False,
            '"partial": "builtins.eval"',
        ),
        (
            {"object": "focused.relevance.centroid.CentroidModel", "state": {"dict": {}}},
            False,
            "a CentroidModel, not a HierarchicalClassifier",
        ),
        ("not a model", False, "a str, not a HierarchicalClassifier"),
    ],
)
def test_a_model_file_that_is_not_one_of_ours_is_refused(
    folders, tmp_path, state, pickled, problem, caplog
):
    load, cls = LOADERS["taxonomy"]
    models, marker = tmp_path / "models", tmp_path / "ran"
    load(folders, models)
    path = saved_file(models)
    arrays = {"x": np.array([RunsCode(marker)], dtype=object)} if pickled else {}
    npz(path, state, **arrays)

    caplog.set_level(logging.WARNING, logger="focused.relevance")
    assert isinstance(load(folders, models), cls)
    assert not marker.exists()
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "not loaded, training it again" in warning and problem in warning


def test_every_class_a_model_file_may_name_is_found_by_that_name():
    """The allowed names are the classes' own (module and name), as a saved model names them:
    a class scikit-learn moves to another module would be refused from the list, not loaded."""
    from importlib import import_module

    from focused.relevance.store import CLASSES, _name

    for name in CLASSES:
        module, _, attribute = name.rpartition(".")
        assert _name(getattr(import_module(module), attribute)) == name
