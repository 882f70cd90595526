"""The calibration of verdicts: probabilities from the crawl's pages and seeds, the F1 cut."""

from __future__ import annotations

import numpy as np
import pytest

from focused.relevance.calibration import PositiveUnlabelledCalibration, expected_f1_cut
from focused.relevance.keywords import KeywordModel
from focused.topic.judge import Judge
from tests.pages import page

pytestmark = pytest.mark.unit


def f1(claimed: np.ndarray, truth: np.ndarray) -> float:
    hits = (claimed & truth).sum()
    return 2 * hits / (claimed.sum() + truth.sum())


def ece(p: np.ndarray, truth: np.ndarray) -> float:
    """Expected calibration error over ten bins of p."""
    bins = np.minimum((p * 10).astype(int), 9)
    return sum(
        (bins == b).sum() / len(p) * abs(p[bins == b].mean() - truth[bins == b].mean())
        for b in range(10)
        if (bins == b).any()
    )


def crawl_scores(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """R of a crawl's pages as a light topic gives them: the relevant pages (a third) spread
    below .6, the others near 0; and eight seeds, relevant pages."""
    rng = np.random.default_rng(seed)
    truth = rng.random(600) < 1 / 3
    r = np.where(truth, rng.beta(3, 5, 600), rng.beta(1, 12, 600))
    return r, truth, rng.beta(3, 5, 8)


def test_the_expected_f1_cut_keeps_the_pages_the_probabilities_say_are_relevant():
    assert expected_f1_cut([0.9, 0.9, 0.1, 0.1]) == pytest.approx((0.9, 2 * 1.8 / 4))
    assert expected_f1_cut([]) == (1.0, 0.0)


def test_calibrated_verdicts_agree_with_the_truth_where_a_fixed_threshold_does_not():
    r, truth, seeds = crawl_scores()
    calibration = PositiveUnlabelledCalibration().fit(r, seeds)
    p = calibration.probability(r)
    assert calibration.fitted_
    assert p.mean() == pytest.approx(r.mean(), abs=1e-6)
    assert ece(p, truth) <= min(0.15, ece(r, truth))
    assert f1(p >= calibration.cut_, truth) >= f1(r >= 0.5, truth) + 0.3
    best = max(f1(r >= t, truth) for t in r)  # the best cut, knowing the truth
    assert f1(p >= calibration.cut_, truth) >= 0.85 * best


def test_seeds_that_score_below_the_pages_leave_r_and_the_threshold_alone():
    r, _, _ = crawl_scores()
    calibration = PositiveUnlabelledCalibration().fit(r, [0.01, 0.02, 0.01])
    assert not calibration.fitted_ and calibration.cut_ is None
    assert np.array_equal(calibration.probability(r[:5]), r[:5])
    too_few = PositiveUnlabelledCalibration().fit(r[:20], [0.9, 0.9, 0.9])
    assert not too_few.fitted_


def test_the_judge_calls_relevant_by_the_cut_once_its_pages_and_seeds_are_judged():
    model = KeywordModel(keywords=["swan"], r0=0.5).fit()
    judge = Judge(
        model, threshold=0.5, link_score="content", calibration=PositiveUnlabelledCalibration()
    )
    texts = ["swan lake swan", "swan and goose on the lake", "a river with a swan"]
    for text in texts:  # the seeds
        seed = page(text)
        seed.depth = 0
        judge(seed)
    verdicts = []
    for i in range(60):
        verdicts.append(judge(page(texts[i % 3] if i % 4 == 0 else f"stocks and shares {i}")))
    assert judge.calibration is not None and judge.calibration.fitted_
    cut = judge.calibration.cut_
    assert all(v.relevant == (v.probability >= cut) for v in verdicts[50:])
    assert [v.relevant for v in verdicts[50:]] == [i % 4 == 0 for i in range(50, 60)]
    assert any(v.probability != v.relevance for v in verdicts[50:])
