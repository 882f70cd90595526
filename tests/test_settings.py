"""FOCUSED_* settings: a bad value is one line naming it; an unknown name is a warning."""

from __future__ import annotations

import subprocess

import pytest
from scrapy.settings import Settings

from focused.errors import FocusedError
from focused.settings import defaults
from focused.settings.check import (
    OPTIONAL_TYPES,
    RANGES,
    SCRAPY_TYPES,
    accepted,
    check_settings,
    known_settings,
)


def settings(**values: object) -> Settings:
    s = Settings()
    s.setmodule(defaults, priority="addon")
    s.setdict(values, priority="cmdline")
    return s


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("FOCUSED_HOST_DELAY", "abc", "a number"),
        ("FOCUSED_POP_BATCH", "1.5", "a whole number"),
        ("FOCUSED_CRAWL_GRAPH", "maybe", "True or False"),
        ("FOCUSED_RELEVANT_THRESHOLD", "high", "a number"),
        # Scrapy's own settings that the crawl relies on
        ("CLOSESPIDER_ITEMCOUNT", "ten", "a whole number"),
        ("CLOSESPIDER_TIMEOUT", "1h", "a number"),
        ("CONCURRENT_REQUESTS", "many", "a whole number"),
        ("DOWNLOAD_DELAY", "soon", "a number"),
        ("ROBOTSTXT_OBEY", "maybe", "True or False"),
    ],
)
def test_a_value_of_the_wrong_type_names_the_setting(name, value, expected):
    with pytest.raises(FocusedError, match=f"setting {name}='{value}': expected {expected}"):
        check_settings(settings(**{name: value}))


@pytest.mark.parametrize(
    ("name", "value", "expected", "hint"),
    [
        ("FOCUSED_WARC", "relevent", 'one of "relevant", "all", "none"', "relevant"),
        ("FOCUSED_LINK_SCORE", "title", 'one of "", "content", "anchor", "both", "context"', ""),
    ],
)
def test_a_word_outside_the_choices_lists_them_as_the_reference_does(name, value, expected, hint):
    """The same words, quoted the same way, as the settings reference and topic errors, and
    the closest of them for a near miss."""
    with pytest.raises(FocusedError) as error:
        check_settings(settings(**{name: value}))
    near_miss = f"; did you mean {hint}?" if hint else ""
    assert str(error.value) == f"{name}: expected {expected}, got {value!r}{near_miss}"
    assert accepted(name) == expected


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("FOCUSED_HOST_DELAY", "-1", "a number, at least 0"),
        ("FOCUSED_POP_BATCH", "0", "a whole number, at least 1"),
        ("FOCUSED_HOST_MAX_SHARE", "1.5", "a number, from 0 to 1"),
        ("FOCUSED_RELEVANT_THRESHOLD", "-0.1", "a number, from 0 to 1"),
        ("FOCUSED_REVISIT_SHARE", "1", "a number, at least 0 and below 1"),
        ("FOCUSED_MAX_TRIES", "8", "a whole number, from 1 to 7"),
        ("FOCUSED_LEASE_S", "0", "a number, above 0"),
        ("FOCUSED_GENETIC_PM", "nan", "a number, from 0 to 1"),
        # Scrapy's own settings that the crawl relies on
        ("CONCURRENT_REQUESTS", "-1", "a whole number, at least 1"),
        ("CLOSESPIDER_ITEMCOUNT", "-5", "a whole number, at least 0"),
        ("DOWNLOAD_TIMEOUT", "0", "a number, above 0"),
    ],
)
def test_a_value_out_of_range_names_the_setting_and_its_range(name, value, expected):
    with pytest.raises(FocusedError) as error:
        check_settings(settings(**{name: value}))
    assert str(error.value) == f"setting {name}={value!r}: expected {expected}"


def test_the_ends_of_the_ranges_pass():
    ends = settings(
        FOCUSED_HOST_DELAY="0",
        FOCUSED_POP_BATCH="1",
        FOCUSED_HOST_MAX_SHARE="1",
        FOCUSED_RELEVANT_THRESHOLD="0",
        FOCUSED_MAX_TRIES="7",
        CONCURRENT_REQUESTS="1",
        CLOSESPIDER_ITEMCOUNT="0",
    )
    assert check_settings(ends) == []


def test_every_number_setting_has_a_range_that_holds_its_default():
    """A number setting added without a range would take any value silently again."""
    kinds = {name: type(default) for name, default in known_settings().items()}
    kinds |= OPTIONAL_TYPES | SCRAPY_TYPES
    assert set(RANGES) == {name for name, kind in kinds.items() if kind in (int, float)}
    assert check_settings(settings()) == []  # Scrapy's defaults and ours are in range
    assert accepted("FOCUSED_HOST_DELAY") == "a number, at least 0"  # as the reference shows


def test_good_values_pass_and_typos_name_the_closest_setting():
    good = settings(FOCUSED_HOST_DELAY="0.5", FOCUSED_CRAWL_GRAPH="false", FOCUSED_POP_BATCH="4")
    assert check_settings(good) == []
    warnings = check_settings(settings(FOCUSED_HOST_DELAI="2", FOCUSED_NOTHING_LIKE_IT="1"))
    assert warnings == [
        "unknown setting FOCUSED_HOST_DELAI is ignored; did you mean FOCUSED_HOST_DELAY?",
        "unknown setting FOCUSED_NOTHING_LIKE_IT is ignored",
    ]


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("FOCUSED_HOST_DELAY", "abc", "a number"),
        ("CLOSESPIDER_ITEMCOUNT", "ten", "a whole number"),
        ("CONCURRENT_REQUESTS", "-1", "a whole number, at least 1"),
    ],
)
def test_a_crawl_with_a_bad_value_stops_with_one_line(crawl, name, value, expected):
    result = subprocess.run(
        crawl.command("feed.jsonl", {name: value}),
        env=crawl.env(),
        cwd=crawl.workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "CRITICAL" in line]
    assert len(errors) == 1 and f"setting {name}={value!r}: expected {expected}" in errors[0]


def test_a_crawl_warns_of_a_misspelt_setting_and_runs(crawl):
    crawl.run(CLOSESPIDER_ITEMCOUNT=5, FOCUSED_HOST_DELAI=2)
    assert (
        "WARNING: unknown setting FOCUSED_HOST_DELAI is ignored; did you mean FOCUSED_HOST_DELAY?"
        in crawl.log()
    )
