"""Near-copies of a text: word shingles, MinHash signatures and the LSH banding that finds
candidates for a Jaccard threshold, without Scrapy or Redis (the crawl's index is
:mod:`focused.store.nearcopies`, the pipeline :mod:`focused.pipelines.nearcopies`).

Two texts are near-copies when the Jaccard similarity of their sets of word shingles (runs of
SHINGLE_WORDS words, case and punctuation left out) reaches a threshold. A MinHash signature
(datasketch's, NUM_PERM hash values) estimates it: two signatures agree at a position with
that probability. Locality-sensitive hashing cuts the signature in ``bands`` bands of ``rows``
values: two texts share a band's bucket with probability ``1 - (1 - J**rows)**bands``, so
texts at the threshold and above nearly always meet in some bucket, texts far below nearly
never (:func:`banding` picks the pair for a threshold as datasketch's ``MinHashLSH`` does).
A bucket hit is only a candidate: it is verified by the signatures' estimated Jaccard, from
the low SIGNATURE_BITS bits of each value kept (:func:`packed`), against the threshold.

Why two words: a page copied with 5 % of its words changed here and there keeps
``0.95**2 / (2 - 0.95**2)`` = 0.82 of its 2-shingles in common (each changed word breaks two),
while two distinct pages on one topic share few: at most 0.38 between Wikipedia's articles
on two planets of one star, 0.03 on the synthetic web. Three-word shingles keep a 5 % edit at
0.75 and those planets at 0.28, the same margin for a lower threshold and more bands (more
memory a page); with single words, pages on one topic of the synthetic web share up to 0.26.

The bands are chosen for a threshold CANDIDATE_MARGIN below the one asked, so that a page just
above it is nearly always a candidate (0.99 at 0.82 for a threshold of 0.7, 0.92 with bands
for 0.7 itself): the verification holds the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from hashlib import blake2b
from typing import TYPE_CHECKING
from zlib import crc32

import numpy as np

if TYPE_CHECKING:
    from datasketch import MinHash

SHINGLE_WORDS = 2  # words a shingle
NUM_PERM = 128  # MinHash hash values a signature
MIN_SHINGLES = 20  # a text with fewer shingles (about 20 words) is not checked
SIGNATURE_BITS = 16  # bits kept of each hash value to verify a candidate
SEED = 1  # the MinHash permutations' seed: one for every process of every crawl
CANDIDATE_MARGIN = 0.1  # the bands are chosen for the threshold less this

_WORD = re.compile(r"\w+")


@cache
def _template() -> MinHash:
    """datasketch's permutations for NUM_PERM and SEED, made once (building them costs a
    millisecond); a shingle's CRC-32 is the value they permute (half the time of SHA-1,
    datasketch's default, and as good a start for random permutations). Imported on first use:
    datasketch's package loads its Redis storage backend (redis-py), which a relevance module
    does not."""
    from datasketch import MinHash

    return MinHash(num_perm=NUM_PERM, seed=SEED, hashfunc=crc32)


def shingles(text: str, size: int = SHINGLE_WORDS) -> set[bytes]:
    """The text's shingles: each run of ``size`` words (lower case, punctuation left out)."""
    words = _WORD.findall(text.lower())
    return {" ".join(words[i : i + size]).encode() for i in range(len(words) - size + 1)}


def signature(text: str) -> np.ndarray | None:
    """The MinHash signature of a text's shingles (NUM_PERM uint64 values below 2**32), or
    None for a text too short to compare (fewer than MIN_SHINGLES shingles)."""
    found = shingles(text)
    if len(found) < MIN_SHINGLES:
        return None
    minhash = _template().copy()
    minhash.update_batch(list(found))
    return minhash.hashvalues


def jaccard(a: str, b: str) -> float:
    """The exact Jaccard similarity of two texts' shingles (for tests and measures)."""
    sa, sb = shingles(a), shingles(b)
    return len(sa & sb) / len(sa | sb) if sa or sb else 1.0


def _false_positive(threshold: float, bands: int, rows: int) -> float:
    s = np.linspace(0.0, threshold, 201)
    return float(np.trapezoid(1 - (1 - s**rows) ** bands, s))


def _false_negative(threshold: float, bands: int, rows: int) -> float:
    s = np.linspace(threshold, 1.0, 201)
    return float(np.trapezoid(1 - (1 - (1 - s**rows) ** bands), s))


@dataclass(frozen=True)
class Banding:
    """How a signature is cut for a threshold: ``bands`` bands of ``rows`` hash values."""

    bands: int
    rows: int


@cache
def banding(threshold: float, num_perm: int = NUM_PERM) -> Banding:
    """The bands and rows that minimise the area of false positives (Jaccard below the
    threshold meeting in a bucket) plus false negatives (above it, never meeting), equally
    weighted, as datasketch's ``MinHashLSH`` chooses them."""
    best, best_error = Banding(1, num_perm), float("inf")
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            error = _false_positive(threshold, bands, rows) + _false_negative(
                threshold, bands, rows
            )
            if error < best_error:
                best, best_error = Banding(bands, rows), error
    return best


def candidate_banding(threshold: float) -> Banding:
    """The banding a near-copy index uses for a Jaccard ``threshold``: that of the threshold
    less CANDIDATE_MARGIN (the module says why)."""
    return banding(max(threshold - CANDIDATE_MARGIN, 0.05))


def band_keys(values: np.ndarray, cut: Banding) -> list[bytes]:
    """A signature's bucket in each band: the band's number and an 8-byte hash of its values."""
    return [
        bytes([band])
        + blake2b(values[band * cut.rows : (band + 1) * cut.rows].tobytes(), digest_size=8).digest()
        for band in range(cut.bands)
    ]


def packed(values: np.ndarray) -> bytes:
    """A signature as the index keeps it to verify candidates: the low SIGNATURE_BITS bits of
    each value, big-endian (two random values agree on them with probability 2**-16)."""
    return (values & np.uint64((1 << SIGNATURE_BITS) - 1)).astype(">u2").tobytes()


def agreeing_needed(threshold: float, num_perm: int = NUM_PERM) -> int:
    """How many of two signatures' values must agree for their estimated Jaccard to reach
    ``threshold``."""
    return int(np.ceil(threshold * num_perm - 1e-9))


def estimated_jaccard(a: bytes, b: bytes) -> float:
    """The Jaccard two packed signatures estimate: the share of positions where they agree."""
    x, y = np.frombuffer(a, ">u2"), np.frombuffer(b, ">u2")
    return float(np.mean(x == y))
