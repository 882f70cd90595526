"""The contract every relevance model keeps, written as code (as Scrapy's ``BaseScheduler``),
and the estimator base class they share.

The classifier pipeline, the strategies, the evaluation and the benchmarks use a topic's model
only through these methods, so a new method is a new estimator that keeps them; which topic-file
method builds which model is :data:`focused.topic.methods.METHODS`.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np

__all__ = ["Estimator", "RelevanceModel", "UrlRelevanceModel"]


class Estimator:
    """scikit-learn's estimator conventions, without importing scikit-learn: parameters are the
    arguments of ``__init__``, kept as given (``get_params``, ``set_params``, so that
    ``sklearn.base.clone`` copies a model), learned state is in attributes ending in ``_``,
    and a model used before ``fit`` raises scikit-learn's NotFittedError.

    scikit-learn's own ``BaseEstimator`` imports scikit-learn, and with it SciPy's statistics
    and pandas, wherever a model's class is defined: most of a second of a crawl process's
    start, for models that score with numpy alone. scikit-learn is imported where a model is
    fitted with it, and by these methods when scikit-learn's tools call them.
    """

    @classmethod
    def _param_names(cls) -> list[str]:
        """The arguments of ``__init__``, sorted, as scikit-learn names parameters."""
        parameters = inspect.signature(cls.__init__).parameters.values()
        return sorted(p.name for p in parameters if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The model's parameters; with ``deep``, those of the estimators among them too, as
        ``name__parameter``."""
        params: dict[str, Any] = {}
        for name in self._param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                params.update((f"{name}__{key}", item) for key, item in value.get_params().items())
            params[name] = value
        return params

    def set_params(self, **params: Any) -> Self:
        """Set parameters (``name__parameter`` for one of an estimator among them)."""
        valid = self.get_params(deep=True)
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, delimiter, sub = key.partition("__")
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {self}. Valid parameters are:"
                    f" {self._param_names()!r}."
                )
            if delimiter:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
                valid[name] = value
        for name, sub_params in nested.items():
            valid[name].set_params(**sub_params)
        return self

    def __repr__(self) -> str:
        """The class and the parameters that differ from their defaults, as scikit-learn's."""
        defaults = inspect.signature(type(self).__init__).parameters
        changed = (
            f"{name}={value!r}"
            for name, value in self.get_params(deep=False).items()
            if repr(value) != repr(defaults[name].default)
        )
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's tags of an estimator of no particular kind (its tools ask)."""
        from sklearn.base import BaseEstimator

        return BaseEstimator.__sklearn_tags__(self)

    def _check_fitted(self, attribute: str) -> None:
        """Raise scikit-learn's NotFittedError unless ``fit`` has set ``attribute``: a test a
        call, a fraction of scikit-learn's ``check_is_fitted``, which looks at every
        attribute."""
        if not hasattr(self, attribute):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with"
                " appropriate arguments before using this estimator."
            )


@runtime_checkable
class RelevanceModel(Protocol):
    """A fitted model of one topic, with scikit-learn's estimator API (``fit`` returns the
    model; parameters in ``__init__``, learned state in attributes ending in ``_``)."""

    def fit(self, X: Any, y: Any) -> RelevanceModel:
        """Learn from the topic's examples ``X`` and their labels ``y`` (models that need
        neither take None for them, their default)."""
        ...

    def relevance(self, X: Sequence[str]) -> np.ndarray:
        """R of each text, in [0, 1]: how much it is about the topic."""
        ...

    def score_pages(self, X: Sequence[str]) -> tuple[np.ndarray, list[str | None]]:
        """R of each text and its best category (None for models without categories), in one
        pass: the classifier pipeline scores a page, its anchors and their glosses together.
        Models that also read URLs and the anchor a page was reached by keep
        :class:`UrlRelevanceModel`."""
        ...

    def best_path_good(self, X: Sequence[str]) -> np.ndarray:
        """Whether each text is on the topic in hard focus's sense (Chakrabarti et al. 1999):
        its best category path holds a good category, or, without categories, R >= the
        threshold."""
        ...


@runtime_checkable
class UrlRelevanceModel(RelevanceModel, Protocol):
    """A relevance model that also reads each text's URL and the anchor its page was reached by
    (``RelevanceMethod.reads_anchors``): the classifier pipeline gives them to ``score_pages``."""

    def score_pages(
        self,
        X: Sequence[str],
        urls: Sequence[str | None] | None = None,
        anchors: Sequence[str | None] | None = None,
    ) -> tuple[np.ndarray, list[str | None]]:
        """As :meth:`RelevanceModel.score_pages`, with the URL of each text (None: none) and
        the anchor each page was reached by (None: none or not a page)."""
        ...
