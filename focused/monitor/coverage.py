"""What is left to find: the expected number of relevant pages among a crawl's queued URLs.

A queued URL's link score is the crawl's guess of how likely its page is relevant. The crawl's
own fetched pages calibrate it: per score bucket, how many URLs leased from it were fetched
and how many of them became new relevant pages. A best-first crawl fetches from its best
buckets and seldom from its worst, where most of its queue is, so the calibration is a curve
over all buckets (Platt scaling: ``logit p = a + b·logit(score)``, fitted to the buckets'
counts with a prior that the scores are probabilities, a = 0 and b = 1, which a bucket's data
overrides) and each bucket's share is a Beta posterior around the curve, worth ``prior_pages``
pages, so a bucket with few fetched pages leans on the curve; the relevant pages among a
bucket's queued URLs are Beta-binomial. Their sum over the buckets is the estimate; its 90 %
interval is the normal approximation of the sum (buckets independent), never below zero.
When only a sample of the hosts was read, the counts are scaled up to all hosts and the
sample's own spread widens the interval.

Pure arithmetic on counts: the store counts (:mod:`focused.store.frontier.scores`), the
crawl's coverage monitor, ``focused status``, the dashboard and the exporter read this.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

#: The two-sided 90 % interval's z.
Z_90 = 1.6448536269514722
#: How many of the best queued URLs :attr:`Coverage.next` is about.
NEXT = 100
#: The calibration curve's priors: the standard deviations of its intercept (around 0) and its
#: slope (around 1) on the logit scale.
PRIOR_SD = (2.0, 0.5)
#: What the curve weighs in a bucket's share, in fetched pages.
PRIOR_PAGES = 5.0
#: What a page fetched before the recent ones weighs in the calibration (recent_counts), and
#: which are recent (recent_window).
OLDER_WEIGHT = 0.03
RECENT_PAGES = 100
RECENT_SHARE = 0.25


@dataclass(frozen=True)
class Coverage:
    """Relevant pages found, those expected among the URLs queued or in flight (``left``, with
    a 90 % interval ``low``-``high``), and among the best :data:`NEXT` of them (``next``);
    ``queued``: those URLs (all hosts', scaled up from a sample when ``sampled``)."""

    found: float
    left: float
    low: float
    high: float
    next: float
    queued: int
    sampled: bool = False

    @property
    def in_reach(self) -> float:
        """Relevant pages found and expected left."""
        return self.found + self.left

    @property
    def share_found(self) -> float:
        """The share of the relevant pages in reach that the crawl has found (1.0 when it
        expects none left)."""
        return self.found / self.in_reach if self.in_reach > 0 else 1.0

    @property
    def next_harvest(self) -> float | None:
        """The harvest expected of the best queued URLs (None for an empty frontier)."""
        return self.next / min(NEXT, self.queued) if self.queued else None

    def covered(self, share: float) -> bool:
        """Whether at least ``share`` of the relevant pages in reach are found, on the upper
        end of the interval of what is left (and some were found): the crawl's stop
        (FOCUSED_CLOSE_COVERED)."""
        return self.found > 0 and self.found >= share * (self.found + self.high)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Coverage:
        """The estimate a record (:meth:`record`, with other fields beside) holds."""
        return cls(*(record[name] for name in cls.__dataclass_fields__))

    def record(self) -> dict[str, Any]:
        """The estimate as JSON-able values, rounded."""
        return {
            name: round(value, 2) if isinstance(value, float) else value
            for name, value in asdict(self).items()
        }


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _softplus(x: float) -> float:
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def uniform_middles(buckets: int) -> list[float]:
    """The middle scores of ``buckets`` buckets of equal width."""
    return [(bucket + 0.5) / buckets for bucket in range(buckets)]


def recent_window(pages: int) -> int:
    """How many of a crawl's last pages count as recent in its calibration (recent_counts):
    RECENT_PAGES, or RECENT_SHARE of its pages when that is more."""
    return max(RECENT_PAGES, int(RECENT_SHARE * pages))


def recent_counts(
    now: Mapping[int, tuple[float, float]],
    then: Mapping[int, tuple[float, float]],
    weight: float = OLDER_WEIGHT,
) -> dict[int, tuple[float, float]]:
    """Calibration counts that weigh the pages fetched since ``then`` (the counts some pages
    ago) fully and those before at ``weight``: as a crawl covers its topic, a bucket's URLs
    fetched now are less often relevant than those fetched from it early on."""
    return {
        bucket: (n - n0 + weight * n0, r - r0 + weight * r0)
        for bucket, (n, r) in now.items()
        for n0, r0 in [then.get(bucket, (0, 0))]
    }


def calibration_curve(
    fetched: Mapping[int, tuple[float, float]],
    middles: Sequence[float],
    *,
    prior_sd: tuple[float, float] = PRIOR_SD,
    steps: int = 25,
) -> list[float]:
    """Per score bucket, the share of its URLs expected to become new relevant pages, from
    every bucket's counts: ``logit p = a + b·logit(s)`` at the bucket's middle score s
    (``middles``), the maximum a posteriori fit (Newton's method) under normal priors
    a ~ N(0, sd_a) and b ~ N(1, sd_b): the scores taken at their word until pages say
    otherwise."""
    buckets = len(middles)
    xs = [_logit(middle) for middle in middles]
    data = [(xs[bucket], n, r) for bucket, (n, r) in fetched.items() if n > 0 and bucket < buckets]
    (sd_a, sd_b), a, b = prior_sd, 0.0, 1.0

    def log_posterior(a: float, b: float) -> float:
        value = -0.5 * (a / sd_a) ** 2 - 0.5 * ((b - 1.0) / sd_b) ** 2
        for x, n, r in data:  # log p = -log(1 + e^-z), log(1 - p) = -log(1 + e^z)
            z = a + b * x
            value -= r * _softplus(-z) + (n - r) * _softplus(z)
        return value

    for _ in range(steps):
        # gradient and Hessian of the log posterior
        ga, gb = -a / sd_a**2, -(b - 1.0) / sd_b**2
        haa, hab, hbb = 1 / sd_a**2, 0.0, 1 / sd_b**2
        for x, n, r in data:
            p = _sigmoid(a + b * x)
            ga += r - n * p
            gb += (r - n * p) * x
            w = n * p * (1.0 - p)
            haa, hab, hbb = haa + w, hab + w * x, hbb + w * x * x
        det = haa * hbb - hab * hab
        da, db = (hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det
        here = log_posterior(a, b)
        while log_posterior(a + da, b + db) < here and abs(da) + abs(db) > 1e-12:
            da, db = da / 2, db / 2  # a Newton step too long for the logistic's tails
        a, b = a + da, b + db
        if abs(da) + abs(db) < 1e-9:
            break
    return [_sigmoid(a + b * x) for x in xs]


def bucket_shares(
    fetched: Mapping[int, tuple[float, float]],
    middles: Sequence[float],
    prior_pages: float = PRIOR_PAGES,
) -> list[tuple[float, float]]:
    """Per score bucket, the Beta posterior (a, b) of the share of its URLs that become new
    relevant pages: the calibration curve's share, worth ``prior_pages`` pages, updated by
    the bucket's own pages."""
    curve = calibration_curve(fetched, middles)
    return [
        (prior_pages * p + r, prior_pages * (1.0 - p) + n - r)
        for p, (n, r) in zip(
            curve, (fetched.get(bucket, (0, 0)) for bucket in range(len(middles))), strict=True
        )
    ]


def estimate(
    fetched: Mapping[int, tuple[float, float]],
    hosts: Sequence[Sequence[int]],
    found: float,
    *,
    middles: Sequence[float] | None = None,
    population: int | None = None,
    prior_pages: float = PRIOR_PAGES,
    z: float = Z_90,
) -> Coverage:
    """The relevant pages expected among the queued URLs.

    ``fetched``: per score bucket, (URLs fetched from it, of which new relevant pages: the sum
    of their found shares);
    ``hosts``: per host read, its queued URLs per score bucket (index = bucket); ``middles``:
    the score each bucket stands for (buckets of equal width if None); ``population``:
    the hosts with queued URLs, when ``hosts`` is a uniform sample of them; ``found``:
    relevant pages found so far (the sum of the pages' found shares).
    """
    n_hosts = len(hosts)
    population = n_hosts if population is None else max(population, n_hosts)
    scale = population / n_hosts if n_hosts else 0.0
    width = len(middles) if middles else max((len(counts) for counts in hosts), default=0)
    queued = [scale * sum(counts[b] for counts in hosts if b < len(counts)) for b in range(width)]
    mean = variance = 0.0
    p = [0.0] * width
    for bucket, ((a, b), count) in enumerate(
        zip(
            bucket_shares(fetched, middles or uniform_middles(width), prior_pages),
            queued,
            strict=True,
        )
    ):
        p[bucket] = a / (a + b)
        if count > 0:
            mean += count * p[bucket]
            variance += count * p[bucket] * (1.0 - p[bucket]) * (a + b + count) / (a + b + 1.0)
    if 1 < n_hosts < population:  # the sample's own spread (finite population correction)
        per_host = [sum(c * p[b] for b, c in enumerate(counts)) for counts in hosts]
        average = sum(per_host) / n_hosts
        spread = sum((m - average) ** 2 for m in per_host) / (n_hosts - 1)
        variance += population**2 * (1 - n_hosts / population) * spread / n_hosts
    best, wanted = 0.0, float(NEXT)
    for bucket in reversed(range(width)):
        take = min(wanted, queued[bucket])
        best += take * p[bucket]
        wanted -= take
    margin = z * math.sqrt(variance)
    return Coverage(
        found,
        mean,
        max(0.0, mean - margin),
        mean + margin,
        best,
        round(sum(queued)),
        n_hosts < population,
    )
