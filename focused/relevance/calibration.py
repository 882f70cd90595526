"""What a page's R means: the probability that it is relevant, and the cut chosen for F1.

A relevance model's R ranks pages fairly but its scale is its own: a keyword topic's best pages
reach R .5, a taxonomy's R is 0 or 1 on most pages, and a fixed threshold on it calls relevant
a tenth of the topic's pages in one crawl and half of the others' in the next. The crawl has no
labels, but it has pages the user says are the topic's: its seeds. Elkan and Noto (2008) show
that with labelled positives drawn from the positives and unlabelled pages, a classifier of
labelled against unlabelled is the probability of being relevant up to a constant, and weigh
each unlabelled page by how likely it is an unlabelled positive. Here the classifiers are
logistic curves on the logit of R, fitted to the seeds (labelled) and the crawl's judged pages
(unlabelled): their slope says how fast the probability rises with R. Its level is set so that
the pages' mean probability is their mean R: the model's R is wrong page by page but right on
average (on the development topics the mean R of a crawl's pages was within .03 of the true
share for keywords, example pages and a taxonomy alike), while Elkan and Noto's constant, from
a handful of seeds, put it at twice the true share. The pages called relevant are those whose
probability reaches the cut that maximises the F1 the probabilities themselves expect over the
pages judged so far (the top k by probability, k the argmax of 2·sum(top k) / (k + sum of all);
Lipton et al. 2014).

The assumption fails when the seeds are not the topic's pages (a portal, a department's home
page for a topic of course pages): then the seeds score below the pages they lead to, and the
calibration refuses to fit (:attr:`PositiveUnlabelledCalibration.fitted_` stays False); the
caller keeps the topic's threshold. Pure numpy; scikit-learn is imported only to fit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from focused.relevance.base import Estimator

__all__ = ["PositiveUnlabelledCalibration", "expected_f1_cut", "logit"]

EPSILON = 1e-4  # R is kept within [EPSILON, 1 - EPSILON] before its logit


def logit(r: Sequence[float] | np.ndarray) -> np.ndarray:
    """log(r / (1 - r)), r kept within [EPSILON, 1 - EPSILON]."""
    p = np.clip(np.asarray(r, dtype=float), EPSILON, 1 - EPSILON)
    return np.log(p / (1 - p))


def expected_f1_cut(p: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """The probability from which pages are called relevant, and the F1 it is expected to
    give: over the pages' probabilities ``p``, the top k with k maximising
    2·sum(top k) / (k + sum(p)), the F1 expected if the probabilities are right."""
    ranked = np.sort(np.asarray(p, dtype=float))[::-1]
    if not len(ranked) or ranked[0] <= 0:
        return 1.0, 0.0
    expected = 2 * np.cumsum(ranked) / (np.arange(1, len(ranked) + 1) + ranked.sum())
    best = int(np.argmax(expected))
    return float(ranked[best]), float(expected[best])


class PositiveUnlabelledCalibration(Estimator):
    """P(relevant | R) from the crawl's judged pages and its seeds (see the module docstring).

    Parameters
    ----------
    min_pages : pages judged before a fit.
    min_seeds : seeds judged before a fit.
    C : the inverse strength of the logistic regression's L2 penalty.

    Attributes
    ----------
    fitted_ : whether the fit took (enough pages and seeds, and the seeds score above the
        pages on average); when False, ``probability`` returns R and ``cut_`` is None.
    coef_, intercept_ : the probability's logistic curve on logit R (a slope not above 0,
        seeds no likelier than the pages, leaves ``fitted_`` False).
    prior_ : the pages' mean R, which is their mean probability: the share of them the
        calibration believes relevant.
    cut_ : the probability from which a page is relevant (:func:`expected_f1_cut`).
    expected_f1_ : the F1 the probabilities expect at that cut.
    """

    def __init__(self, *, min_pages: int = 50, min_seeds: int = 3, C: float = 1.0):
        self.min_pages = min_pages
        self.min_seeds = min_seeds
        self.C = C

    def fit(self, pages: Sequence[float], seeds: Sequence[float]) -> PositiveUnlabelledCalibration:
        """Fit on the R of the judged pages ``pages`` (unlabelled) and of the seeds ``seeds``
        (the labelled positives)."""
        x, s = logit(pages), logit(seeds)
        self.fitted_ = bool(
            len(x) >= self.min_pages and len(s) >= self.min_seeds and s.mean() > x.mean()
        )
        self.cut_: float | None = None
        if not self.fitted_:
            return self
        self.coef_ = _slope(x, s, self.C)
        self.fitted_ = self.coef_ > 0
        if not self.fitted_:
            return self
        self.prior_ = float(np.mean(pages))
        self.intercept_ = _level(self.coef_ * x, self.prior_)
        self.cut_, self.expected_f1_ = expected_f1_cut(self.probability(pages))
        return self

    def probability(self, r: Sequence[float] | np.ndarray) -> np.ndarray:
        """P(relevant) of pages of R ``r``; R itself when the fit did not take."""
        self._check_fitted("fitted_")
        if not self.fitted_:
            return np.asarray(r, dtype=float)
        return _sigmoid(self.intercept_ + self.coef_ * logit(r))


def _slope(x: np.ndarray, s: np.ndarray, C: float) -> float:
    """How fast the probability rises with logit R: Elkan and Noto's weighted logistic
    regression. g, the seeds (labelled) against the pages (unlabelled), gives each page the
    weight w = (1 - c) / c · g / (1 - g) of being a positive not labelled (c the seeds' mean
    g); the slope is that of the seeds and the pages, each page a positive of weight w and a
    negative of weight 1 - w."""
    from sklearn.linear_model import LogisticRegression  # a fit, not a crawl's start

    X = np.concatenate([x, s]).reshape(-1, 1)
    labelled = np.concatenate([np.zeros(len(x)), np.ones(len(s))])
    g = LogisticRegression(C=C).fit(X, labelled)
    c = float(g.predict_proba(s.reshape(-1, 1))[:, 1].mean())
    gx = np.clip(g.predict_proba(x.reshape(-1, 1))[:, 1], 0.0, 1 - 1e-9)
    w = np.clip((1 - c) / c * gx / (1 - gx), 0.0, 1.0)
    weighted = LogisticRegression(C=C).fit(
        np.concatenate([s, x, x]).reshape(-1, 1),
        np.concatenate([np.ones(len(s)), np.ones(len(x)), np.zeros(len(x))]),
        sample_weight=np.concatenate([np.ones(len(s)), w, 1 - w]) + 1e-9,
    )
    return float(weighted.coef_[0, 0])


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-z))


def _level(z: np.ndarray, mean: float, steps: int = 60) -> float:
    """The a with mean(sigmoid(a + z)) = ``mean`` (bisection: the mean rises with a)."""
    low, high = -60.0, 60.0
    for _ in range(steps):
        middle = (low + high) / 2
        low, high = (middle, high) if _sigmoid(middle + z).mean() < mean else (low, middle)
    return (low + high) / 2
