"""The estimate of what is left to find, on small hand-made frontiers."""

from __future__ import annotations

import random
import re

import pytest

from focused.monitor.coverage import (
    NEXT,
    calibration_curve,
    estimate,
    recent_counts,
    uniform_middles,
)
from focused.monitor.snapshot import alarms
from focused.topic.judge import Verdict, found_share

pytestmark = pytest.mark.unit


def host(**counts: int) -> list[int]:
    """A host's queued URLs per score bucket: ``host(b9=50)`` has 50 in bucket 9."""
    row = [0] * 20
    for name, count in counts.items():
        row[int(name[1:])] = count
    return row


def test_a_well_calibrated_bucket_predicts_its_share_of_the_queue():
    coverage = estimate({9: (1000, 900), 1: (1000, 100)}, [host(b9=50, b1=200)], found=1000)
    assert coverage.left == pytest.approx(50 * 0.9 + 200 * 0.1, rel=0.01)
    assert coverage.low < coverage.left < coverage.high
    assert coverage.queued == 250
    # the best 100 queued: the 50 of bucket 9, then 50 of bucket 1
    assert coverage.next == pytest.approx(50 * 0.9 + 50 * 0.1, rel=0.01)
    assert coverage.next_harvest == pytest.approx(coverage.next / NEXT)


def test_an_empty_frontier_leaves_nothing_to_find():
    coverage = estimate({5: (300, 120)}, [], found=120)
    assert (coverage.left, coverage.low, coverage.high, coverage.next) == (0.0, 0.0, 0.0, 0.0)
    assert coverage.share_found == 1.0 and coverage.next_harvest is None


def test_before_any_page_the_scores_are_taken_at_their_word():
    assert calibration_curve({}, uniform_middles(20)) == pytest.approx(
        [(b + 0.5) / 20 for b in range(20)]
    )


def test_buckets_never_fetched_from_follow_the_curve_of_those_that_were():
    # A best-first crawl fetched from its good buckets; most of its queue is in the worst.
    curve = calibration_curve({18: (200, 150), 10: (200, 40)}, uniform_middles(20))
    assert curve == sorted(curve)  # the better the score, the likelier relevant
    assert curve[18] == pytest.approx(0.75, abs=0.03) and curve[10] == pytest.approx(0.2, abs=0.03)
    assert curve[0] < 0.01
    # so 2,000 URLs of the worst bucket count for a few pages, not for the crawl's rate
    coverage = estimate({18: (200, 150), 10: (200, 40)}, [host(b0=2000)], found=190)
    assert coverage.left < 20 < 2000 * 190 / 400


def test_a_bucket_whose_pages_disagree_with_the_curve_is_believed():
    coverage = estimate({18: (200, 150), 10: (200, 40), 5: (500, 100)}, [host(b5=100)], found=0)
    assert coverage.left == pytest.approx(100 * 0.2, rel=0.05)


def test_few_pages_in_a_bucket_widen_the_interval():
    few = estimate({3: (4, 2)}, [host(b3=100)], found=2)
    many = estimate({3: (4000, 2000)}, [host(b3=100)], found=2000)
    assert few.high - few.low > 3 * (many.high - many.low)


def test_the_interval_holds_the_truth_about_nine_times_in_ten():
    # Queued URLs whose pages are relevant with the bucket's true share: the 90 % interval
    # (from 200 fetched pages a bucket) covers the number of relevant ones in most draws.
    shares = {0: 0.05, 1: 0.3, 2: 0.7}
    rng = random.Random(1)
    covered = 0
    for _ in range(300):
        fetched = {}
        for bucket, share in shares.items():
            relevant = sum(rng.random() < share for _ in range(200))
            fetched[bucket] = (200, relevant)
        queued = {0: 400, 1: 100, 2: 30}
        truth = sum(rng.random() < shares[b] for b, n in queued.items() for _ in range(n))
        coverage = estimate(fetched, [host(b0=400, b1=100, b2=30)], found=0)
        covered += coverage.low <= truth <= coverage.high
    assert 0.84 <= covered / 300 <= 0.96


def test_a_sample_of_hosts_is_scaled_up_and_widens_the_interval():
    fetched = {9: (500, 250), 1: (500, 25)}
    hosts = [host(b9=10), host(b1=40), host(b9=2, b1=2), host(b1=8)]
    whole = estimate(fetched, hosts, found=10)
    sampled = estimate(fetched, hosts, found=10, population=40)
    assert sampled.sampled and not whole.sampled
    assert sampled.left == pytest.approx(10 * whole.left)
    assert sampled.queued == 10 * whole.queued
    assert sampled.high - sampled.low > 10 * (whole.high - whole.low)


def test_the_share_found_is_what_was_found_of_what_is_in_reach():
    coverage = estimate({1: (100, 50)}, [host(b1=100)], found=150)
    assert coverage.in_reach == pytest.approx(150 + coverage.left)
    assert coverage.share_found == pytest.approx(150 / (150 + coverage.left))


LIMITS = {"min_pages": 200, "diffusion_ratio": 0.5, "stagnation_harvest": 0.1}


def test_a_falling_harvest_with_little_left_in_the_best_queued_urls_is_a_covered_topic():
    little = estimate({5: (1000, 20)}, [host(b5=400)], found=216)
    (notice,) = alarms("soft", 0.01, 0.42, 513, False, **LIMITS, coverage=little)
    assert (notice.name, notice.level) == ("covered", "notice")
    assert "216 relevant found of about 224 in reach" in notice.message
    assert "add seeds" in notice.message


def test_a_falling_harvest_with_much_left_in_the_best_queued_urls_is_drift():
    much = estimate({18: (200, 120), 5: (1000, 20)}, [host(b18=150, b5=400)], found=216)
    (alarm,) = alarms("soft", 0.01, 0.42, 513, False, **LIMITS, coverage=much)
    assert (alarm.name, alarm.level) == ("diffusion", "warning")
    held = re.search(r"still expected to hold ([\d.]+) relevant pages", alarm.message)
    assert held and float(held[1]) == pytest.approx(much.next, abs=0.05)
    assert 50 < much.next < 70  # the 100 best: about 60 % of bucket 18's
    # without an estimate yet, the alarm is the paper's, as it always was
    (plain,) = alarms("soft", 0.01, 0.42, 513, False, **LIMITS)
    assert plain.name == "diffusion" and "expected" not in plain.message


def test_the_stop_judges_on_the_pessimistic_end_of_the_interval():
    done = estimate({5: (2000, 20)}, [host(b5=100)], found=216)
    assert done.covered(0.9) and not done.covered(0.999)
    nothing = estimate({5: (300, 0)}, [host(b5=10)], found=0)
    assert not nothing.covered(0.5)  # nothing found is not a covered topic


def test_recent_pages_weigh_more_than_older_ones():
    then = {0: (100, 30)}
    now = {0: (200, 31), 5: (10, 5)}
    assert recent_counts(now, then, 0.1) == {
        0: pytest.approx((110.0, 4.0)),
        5: pytest.approx((10.0, 5.0)),
    }
    # a topic running out: the same bucket's URLs, fetched now, are seldom relevant
    early = estimate(now, [host(b0=500)], found=36)
    late = estimate(recent_counts(now, then, 0.1), [host(b0=500)], found=36)
    assert late.left < 0.25 * early.left


def test_a_page_counts_as_found_by_its_calibrated_verdict():
    assert found_share(Verdict(0.3, True, None, first_relevance=0.3, probability=0.6)) == 1.0
    assert found_share(Verdict(0.3, False, None, first_relevance=0.3, probability=0.2)) == 0.0
