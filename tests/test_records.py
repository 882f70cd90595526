"""The frontier's record formats (focused.store.frontier.records): fingerprints, packed
orders, host-queue members and ``url:`` records, as Python reads and writes them."""

from __future__ import annotations

import pytest

from focused.links.urls import BadURL
from focused.store.frontier.records import (
    HASH_MASK,
    HOST_CAP,
    HOST_UNIT,
    MAX_TRIES_PACKABLE,
    SCORE_LEVELS,
    SCORE_UNIT,
    TRY_UNIT,
    clean_fingerprint,
    fingerprint,
    pack,
    split_member,
    split_url,
    unpack_score,
    url_record,
)


def test_fingerprint_is_one_per_canonical_url() -> None:
    """Every spelling of one URL (host case, default port, query order, fragment) is one URL."""
    one = fingerprint("http://example.com/a?x=1&y=2")
    assert fingerprint("HTTP://Example.COM:80/a?y=2&x=1#top") == one
    assert fingerprint("http://example.com/b?x=1&y=2") != one
    assert 0 <= one < 1 << 64


def test_fingerprint_of_a_clean_url_skips_cleaning() -> None:
    assert clean_fingerprint("http://example.com/a") == fingerprint("http://Example.com/a")


def test_fingerprint_refuses_a_url_without_a_clean_form() -> None:
    with pytest.raises(BadURL):
        fingerprint("mailto:someone@example.com")


def test_the_packing_fits_a_double() -> None:
    """Tries, score, host part and hash are exact in a double: the scripts' numbers."""
    top = (MAX_TRIES_PACKABLE + 1) * TRY_UNIT - 1
    assert top < 1 << 53
    assert SCORE_LEVELS * SCORE_UNIT < TRY_UNIT
    assert HOST_CAP * HOST_UNIT < SCORE_UNIT
    assert HASH_MASK < HOST_UNIT


@pytest.mark.parametrize("score", [0.0, 0.25, 0.5, 0.999, 1.0])
@pytest.mark.parametrize("tries", [0, 1, MAX_TRIES_PACKABLE])
def test_pack_then_unpack_gives_tries_and_score(score: float, tries: int) -> None:
    packed = pack(score, tries, fingerprint("http://example.com/"))
    got_tries, got_score = unpack_score(packed)
    assert got_tries == tries
    assert got_score == pytest.approx(score, abs=1 / SCORE_LEVELS)


def test_pack_orders_tries_then_score_then_hash() -> None:
    """Lower pops first: fewer tries first, then the better score, then the hash."""
    fp = 12345
    assert pack(0.1, 0, fp) < pack(0.9, 1, fp)  # a retry waits behind any first try
    assert pack(0.9, 0, fp) < pack(0.1, 0, fp)
    assert pack(0.5, 0, 1) < pack(0.5, 0, 2)
    assert pack(0.5, 0, fp) & HASH_MASK == fp & HASH_MASK


def test_pack_clamps_the_score() -> None:
    assert pack(7.0, 0, 0) == pack(1.0, 0, 0)
    assert pack(-1.0, 0, 0) == pack(0.0, 0, 0)


def test_split_member_gives_depth_parent_path_and_anchor() -> None:
    assert split_member("2 17 a/b?c=1\tthe anchor") == ("2", "17", "/a/b?c=1", "the anchor")
    assert split_member("0 0 ") == ("0", "0", "/", "")
    # A revisit (r) and redirects (+N) ride on the depth field; a path may hold spaces' kin.
    assert split_member("r3+2 5 x y") == ("r3+2", "5", "/x y", "")


def test_split_url_gives_the_origin_polite_to_and_the_rest() -> None:
    assert split_url("http://user@Example.COM:80/a?b=1") == ("http://example.com", "/a?b=1")
    assert split_url("https://example.com") == ("https://example.com", "/")


def test_url_record_of_a_page_classified_or_not() -> None:
    assert url_record("http://example.com/") == ("http://example.com/", None, "")
    assert url_record("http://example.com/\t0.75\tscience") == (
        "http://example.com/",
        0.75,
        "science",
    )
    assert url_record("http://example.com/\t0.5\t-") == ("http://example.com/", 0.5, "")
