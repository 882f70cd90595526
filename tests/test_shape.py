"""A page's shape as evidence of its kind (focused.relevance.shape), and the judge that adds it."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from focused.relevance.keywords import KeywordModel
from focused.relevance.shape import PageShape, example_shape, home_url, shape_of
from focused.topic.judge import Judge
from tests.pages import page

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("url", "home"),
    [
        ("http://a.test", True),
        ("http://a.test/", True),
        ("http://a.test/~ahuja/", True),
        ("http://a.test/~ahuja/ahuja.html", True),  # a file named as its folder
        ("http://a.test/Courses/CS212/CS212.html", True),
        ("http://a.test/cs/Index.html", True),
        ("http://a.test/cs/welcome.htm", True),
        ("http://a.test/Courses/CS212/syllabus.html", False),
        ("http://a.test/~ahuja/papers.html", False),
        ("http://a.test/Banana", False),  # an article, not a folder
    ],
)
def test_a_home_url_is_a_folder_or_its_own_page(url: str, home: bool) -> None:
    assert home_url(url) is home


def test_a_title_that_calls_the_page_a_home_page() -> None:
    assert shape_of(None, "Jo's Home Page") == (None, True)
    assert shape_of(None, "Welcome to CS 101") == (None, True)
    assert shape_of("http://a.test/x/y.html", "CS 101 homepage") == (False, True)
    assert shape_of("http://a.test/", "CS 101 Homework 3") == (True, False)


def test_an_example_file_tells_its_url_and_title(tmp_path: Path) -> None:
    saved = tmp_path / "a.html"
    url = "http://a.test/~jo/"
    saved.write_text(
        f"<!-- saved from url=({len(url):04d}){url} -->\n<html><title>Jo's home page</title>"
        "<body>Jo</body></html>"
    )
    based = tmp_path / "b.html"
    based.write_text('<html><head><base href="http://a.test/jo/cv.html"><title>CV</title></head>')
    bare = tmp_path / "c.html"
    bare.write_text("<html><title>Welcome</title></html>")
    text = tmp_path / "d.txt"
    text.write_text("Syllabus\nweek one: sets")
    assert example_shape(saved) == (True, True)
    assert example_shape(based) == (False, False)
    assert example_shape(bare) == (None, True)
    assert example_shape(text) == (None, False)


def shape() -> PageShape:
    """Three home pages and one file of four examples, none titled a home page; eight
    background pages, files without such a title."""
    examples = [(True, False)] * 3 + [(False, False)]
    return PageShape(strength=2.0, max_ratio=4.0).fit(examples).partial_fit([(False, False)] * 8)


def test_the_evidence_is_the_log_ratio_of_the_examples_share_to_the_background() -> None:
    # background share of each feature: (0 + 1) / (8 + 2) = .1; the examples' share of home
    # URLs (3 + 2 * .1) / (4 + 2) = .5333, of home titles (0 + .2) / 6 = .0333
    home_share, title_share = 3.2 / 6, 0.2 / 6
    home, file = math.log(4.0), math.log((1 - home_share) / 0.9)  # 5.33 is past max_ratio: 4
    title, titled = math.log((1 - title_share) / 0.9), math.log(title_share / 0.1)
    got = shape().log_odds([(True, False), (False, False), (None, True), (None, False)])
    assert got.tolist() == pytest.approx([home + title, file + title, titled, title])
    assert titled == pytest.approx(math.log(1 / 3))


def test_examples_shaped_as_the_background_are_next_to_no_evidence() -> None:
    model = PageShape().fit([(False, False)] * 20).partial_fit([(False, False)] * 500)
    assert abs(model.log_odds([(False, False)])[0]) < 0.01
    text_only = PageShape().fit([(None, False)] * 4).partial_fit([(True, False)] * 10)
    # no example tells its URL: the title alone, whose share is (0 + 2 / 12) / 6 = 1 / 36
    expected = math.log((35 / 36) / (11 / 12))
    assert text_only.log_odds([(True, False)])[0] == pytest.approx(expected)


def test_page_shape_is_an_estimator() -> None:
    with pytest.raises(NotFittedError):
        PageShape().log_odds([(True, True)])
    model = shape()
    copy = clone(model)
    assert copy.get_params() == {"max_ratio": 4.0, "strength": 2.0}
    assert copy.fit([(True, True)]) is copy and not copy.background_.any()
    with pytest.raises(ValueError, match="strength"):
        PageShape(strength=0).fit([(True, True)])


def test_the_judge_adds_the_shape_to_a_page_r() -> None:
    model = KeywordModel(keywords=["course", "lecture"], r0=0.5).fit()
    options = {"threshold": 0.5, "link_score": "content"}
    plain = Judge(model, **options)
    shaped = Judge(model, **options, shape=shape())
    home = page("course", [("http://a.test/cs1/a.html", "notes", "")], url="http://a.test/cs1/")
    deep = page("course", url="http://a.test/cs1/notes.html")
    r = plain(home).relevance
    assert plain(deep).relevance == r == pytest.approx(math.sqrt(0.5), abs=1e-6)
    up, down = shaped(home), shaped(deep)
    assert up.relevance > r > down.relevance and up.first_relevance == up.relevance
    # links are estimated from the page's words alone
    assert [link.estimate for link in up.links] == [r]
    odds = r / (1 - r)
    # the pages judged join the background: when the file is judged, 1 of 10 pages has a home
    # URL, a share of (1 + 1) / (10 + 2) = 1/6 (the examples' (3 + 2/6) / 6 = 5/9), and none
    # of 10 a home title: 1/12 (the examples' (0 + 2/12) / 6 = 1/36)
    factor = (1 - 5 / 9) / (1 - 1 / 6) * (1 - 1 / 36) / (1 - 1 / 12)
    assert down.relevance / (1 - down.relevance) == pytest.approx(odds * factor, rel=1e-4)
