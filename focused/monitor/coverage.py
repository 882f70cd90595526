"""What is left to find: the expected number of relevant pages among a crawl's queued URLs.

A queued URL's link score is the crawl's guess of how likely its page is relevant. The crawl's
own fetched pages calibrate it: per score bucket, how many URLs leased from it were fetched
and how many of them became new relevant pages. Each bucket's share is a Beta posterior
(empirical Bayes: its prior is the crawl's overall share, worth ``prior_pages`` pages, so a
bucket with few fetched pages leans on the crawl's rate), and the relevant pages among a
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


@dataclass(frozen=True)
class Coverage:
    """Relevant pages found, those expected among the URLs queued or in flight (``left``, with
    a 90 % interval ``low``-``high``), and among the best :data:`NEXT` of them (``next``);
    ``queued``: those URLs (all hosts', scaled up from a sample when ``sampled``)."""

    found: int
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


def bucket_shares(
    fetched: Mapping[int, tuple[int, int]], buckets: int, prior_pages: float = 2.0
) -> list[tuple[float, float]]:
    """Per score bucket, the Beta posterior (a, b) of the share of its URLs that become new
    relevant pages: the crawl's overall share, worth ``prior_pages`` pages, updated by the
    bucket's own pages."""
    pages = sum(n for n, _ in fetched.values())
    relevant = sum(r for _, r in fetched.values())
    rate = (relevant + 0.5) / (pages + 1.0)  # Jeffreys: a crawl with no pages yet is a coin
    a, b = rate * prior_pages, (1.0 - rate) * prior_pages
    return [
        (a + r, b + n - r) for n, r in (fetched.get(bucket, (0, 0)) for bucket in range(buckets))
    ]


def estimate(
    fetched: Mapping[int, tuple[int, int]],
    hosts: Sequence[Sequence[int]],
    found: int,
    *,
    population: int | None = None,
    prior_pages: float = 2.0,
    z: float = Z_90,
) -> Coverage:
    """The relevant pages expected among the queued URLs.

    ``fetched``: per score bucket, (URLs fetched from it, of which new relevant pages);
    ``hosts``: per host read, its queued URLs per score bucket (index = bucket); ``population``:
    the hosts with queued URLs, when ``hosts`` is a uniform sample of them; ``found``:
    relevant pages found so far.
    """
    n_hosts = len(hosts)
    population = n_hosts if population is None else max(population, n_hosts)
    scale = population / n_hosts if n_hosts else 0.0
    width = max((len(counts) for counts in hosts), default=0)
    queued = [scale * sum(counts[b] for counts in hosts if b < len(counts)) for b in range(width)]
    mean = variance = 0.0
    p = [0.0] * width
    for bucket, ((a, b), count) in enumerate(
        zip(bucket_shares(fetched, width, prior_pages), queued, strict=True)
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
