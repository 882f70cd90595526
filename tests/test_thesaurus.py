"""The thesaurus model of seed 004: its file format, facet scoring and pre-processing helpers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from focused.errors import TopicError
from focused.relevance.preprocess import hub_score, is_forum_or_blog, text_checksum
from focused.relevance.thesaurus import (
    Facet,
    Term,
    Thesaurus,
    ThesaurusModel,
    read_thesaurus,
    url_words,
)

EXAMPLE = Path(__file__).parent.parent / "topics" / "examples" / "ships.thesaurus.toml"

GOOD = """
[facets.ships]
terms = ["vessel", {term = "warship", narrower = [
    "frigate", "destroyer", {term = "submarine", narrower = ["attack submarine"]}]},
    "dry dock"]
[facets.materials]
weight = 2
terms = ["steel", "timber"]
[negative]
weight = 0.5
terms = ["cruise holiday", "shipping costs"]
"""

SHIPS = Thesaurus(
    facets=(
        Facet(
            "ships",
            (
                Term("vessel"),
                Term("dock"),
                Term("warship", (Term("frigate", (Term("stealth frigate"),)),)),
                Term("dry dock"),
            ),
        ),
        Facet("materials", (Term("steel"), Term("timber"))),
    ),
    negative=("cruise holiday",),
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.thesaurus.toml"
    path.write_text(text, encoding="utf-8")
    return path


def model(**params) -> ThesaurusModel:
    return ThesaurusModel(thesaurus=SHIPS, **params).fit()


def ships(texts: list[str], **kwargs) -> np.ndarray:
    """The ships facet's score of each text."""
    return model().facet_scores(texts, **kwargs)[:, 0]


# -- file format ---------------------------------------------------------------------------


def test_read_good_file(tmp_path):
    thesaurus = read_thesaurus(write(tmp_path, GOOD))
    assert [f.name for f in thesaurus.facets] == ["ships", "materials"]
    assert [f.weight for f in thesaurus.facets] == [1.0, 2.0]
    warship = thesaurus.facets[0].terms[1]
    assert warship.text == "warship"
    assert [t.text for t in warship.narrower] == ["frigate", "destroyer", "submarine"]
    assert warship.narrower[2].narrower == (Term("attack submarine"),)
    assert thesaurus.negative == ("cruise holiday", "shipping costs")
    assert thesaurus.negative_weight == 0.5


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("[facets.ships\n", ""),
        ("[other]\n", "other"),
        ("[negative]\nterms = []\n", "facets"),
        ("facets = 3\n", "facets"),
        ("[facets]\nships = 1\n", "facets.ships"),
        ("[facets.ships]\n", "facets.ships.terms"),
        ("[facets.ships]\nterms = []\n", "facets.ships.terms"),
        ("[facets.ships]\nterms = 'ship'\n", "facets.ships.terms"),
        ("[facets.ships]\nterms = ['ship', 3]\n", "facets.ships.terms[1]"),
        ("[facets.ships]\nterms = ['the']\n", "facets.ships.terms[0]"),
        ("[facets.ships]\nterms = ['ship', {narrower = ['boat']}]\n", "facets.ships.terms[1].term"),
        (
            "[facets.ships]\nterms = [{term = 'ship', broader = []}]\n",
            "facets.ships.terms[0].broader",
        ),
        (
            "[facets.ships]\nterms = ['vessel', {term = 'warship', narrower = 'frigate'}]\n",
            "facets.ships.terms[1].narrower",
        ),
        (
            "[facets.ships]\nterms = [{term = 'warship', narrower = ['frigate', {term = 1}]}]\n",
            "facets.ships.terms[0].narrower[1].term",
        ),
        ("[facets.ships]\nterms = ['ship']\nweight = 0\n", "facets.ships.weight"),
        ("[facets.ships]\nterms = ['ship']\nweight = true\n", "facets.ships.weight"),
        ("[facets.ships]\nterms = ['ship']\ncolour = 1\n", "facets.ships.colour"),
        ("negative = ['x']\n[facets.ships]\nterms = ['ship']\n", "negative"),
        ("[facets.ships]\nterms = ['ship']\n[negative]\nterms = 'x'\n", "negative.terms"),
        ("[facets.ships]\nterms = ['ship']\n[negative]\nterms = [['x']]\n", "negative.terms[0]"),
        ("[facets.ships]\nterms = ['ship']\n[negative]\nweight = -1\n", "negative.weight"),
    ],
)
def test_read_errors_name_the_field(tmp_path, text, field):
    path = write(tmp_path, text)
    with pytest.raises(TopicError) as caught:
        read_thesaurus(path)
    assert caught.value.path == str(path)
    assert caught.value.field == field
    assert "\n" not in str(caught.value)


def test_read_missing_file(tmp_path):
    with pytest.raises(TopicError, match="not found"):
        read_thesaurus(tmp_path / "none.toml")


def test_example_thesaurus_loads_and_scores():
    thesaurus = read_thesaurus(EXAMPLE)
    assert len(thesaurus.facets) >= 4 and thesaurus.negative
    fitted = ThesaurusModel(thesaurus=EXAMPLE).fit()
    on, off = fitted.relevance(
        [
            "Frigates suffer pitting corrosion of the hull; the shipyard applies abrasive "
            "blasting and an epoxy primer over the steel for the navy.",
            "Book a cruise holiday with free shipping on souvenirs.",
        ]
    )
    assert on >= fitted.threshold > off


# -- facet scoring -------------------------------------------------------------------------


def test_diversity_beats_repetition():
    once_each, repeated, many = ships(["vessel warship", "vessel vessel", "vessel " * 50])
    assert once_each > many > repeated > 0


def test_deeper_terms_weigh_more():
    root, child, grandchild = ships(["warship", "frigate", "stealth frigate"])
    assert grandchild > child > root > 0


def test_negative_terms_subtract():
    plain, negative = ships(["vessel frigate steel", "vessel frigate steel cruise holiday"])
    assert plain > negative
    assert model().relevance(["cruise holiday vessel"])[0] == 0


def test_ngrams_match_as_a_unit():
    dry_dock, dock, apart = ships(["dry dock", "dock", "dry weather at the dock"])
    assert dry_dock == dock > 0  # "dry dock" is consumed, not also counted as "dock"
    assert apart == dock
    assert ships(["timber dry"])[0] == 0


def test_stems_match():
    assert ships(["Frigates and VESSELS"])[0] == ships(["frigate vessel"])[0] > 0
    unstemmed = model(stem=False).facet_scores(["frigates"])
    assert unstemmed.sum() == 0


def test_url_words_and_anchor_windows_add():
    fitted = model()
    text = ["a vessel of steel"]
    base = fitted.relevance(text)[0]
    with_url = fitted.relevance(text, urls=["http://frigate.example/warship/frigate-steel"])[0]
    with_anchor = fitted.relevance(text, anchors=["the timber frigate"])[0]
    assert with_url > base and with_anchor > base
    # The site name does not count, only the path and query.
    assert fitted.relevance(text, urls=["http://frigate.example/"])[0] == base
    assert url_words("http://frigate.example/a/dry%20dock?q=timber#steel") == "/a/dry dock q=timber"
    # Missing URLs and anchors add nothing; without them only the text counts.
    assert fitted.relevance(text, urls=[None], anchors=[""])[0] == base
    zero = model(url_weight=0, anchor_weight=0)
    assert zero.relevance(text, urls=["http://x/frigate"], anchors=["frigate"])[0] == base


def test_several_facets_beat_one():
    fitted = model()
    one, two = fitted.relevance(["vessel frigate warship dock", "vessel frigate steel timber"])
    assert two > one


def test_scores_in_range_and_labels():
    fitted = model()
    docs = ["vessel frigate dock " * 100 + "steel", "steel timber", "nothing here", ""]
    relevance, labels = fitted.score_pages(docs)
    assert relevance.shape == (4,) and relevance.dtype == np.float64
    assert np.all((relevance >= 0) & (relevance <= 1))
    assert labels == ["ships", "materials", None, None]
    good = fitted.best_path_good(docs)
    assert good.dtype == bool and list(good) == list(relevance >= fitted.threshold)
    assert fitted.score_pages([])[1] == [] and fitted.relevance([]).shape == (0,)


def test_facet_weights():
    even = model().relevance(["steel"])[0]
    heavier = Thesaurus((SHIPS.facets[0], Facet("materials", SHIPS.facets[1].terms, 3.0)))
    assert ThesaurusModel(thesaurus=heavier).fit().relevance(["steel"])[0] > even


# -- estimator -----------------------------------------------------------------------------


def test_fit_returns_self_clone_and_not_fitted():
    unfitted = ThesaurusModel(thesaurus=SHIPS, threshold=0.4)
    for method in ("relevance", "score_pages", "best_path_good", "facet_scores"):
        with pytest.raises(NotFittedError):
            getattr(unfitted, method)(["vessel"])
    assert unfitted.fit() is unfitted
    assert list(unfitted.facets_) == ["ships", "materials"]
    copy = clone(unfitted)
    assert copy.get_params() == unfitted.get_params()
    assert not hasattr(copy, "weights_")
    refit = unfitted.set_params(thesaurus=Thesaurus((Facet("wood", (Term("timber"),)),))).fit()
    assert list(refit.facets_) == ["wood"]


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"thesaurus": None}, TypeError),
        ({"thesaurus": Thesaurus(())}, ValueError),
        ({"threshold": 1.5}, ValueError),
        ({"depth_weight": -1}, ValueError),
        ({"url_weight": -0.1}, ValueError),
        ({"saturation": 0}, ValueError),
    ],
)
def test_fit_validates(params, error):
    with pytest.raises(error):
        ThesaurusModel(**{"thesaurus": SHIPS, **params}).fit()


def test_scoring_checks_its_input():
    fitted = model()
    with pytest.raises(TypeError):
        fitted.relevance("vessel")
    with pytest.raises(ValueError, match="urls or anchors"):
        fitted.relevance(["vessel"], urls=["http://a/", "http://b/"])


# -- pre-processing ------------------------------------------------------------------------


def test_text_checksum():
    assert text_checksum("Hull  Coating\n") == text_checksum("hull coating")
    assert text_checksum("hull coating") != text_checksum("hull coatings")
    assert len(text_checksum("")) == 32


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/forum/index.php",
        "http://example.com/forums",
        "http://forum.example.com/",
        "https://blog.example.org/post",
        "http://example.com/blog/2006/corrosion",
        "http://example.com/phpBB/viewtopic.php?t=12",
        "http://example.com/community/thread/123/",
        "http://example.com/2006/05/hull-coatings/",
        "http://example.com/2006/05/21/hull-coatings",
        "http://navyrust.blogspot.com/",
        "http://NavyRust.WordPress.com/about",
    ],
)
def test_forums_and_blogs(url):
    assert is_forum_or_blog(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/",
        "http://example.com/catalog/coatings",
        "http://example.com/products/2006-catalogue.pdf",
        "http://www.navsea.navy.mil/Home/Warfare-Centers/",
    ],
)
def test_not_forums_or_blogs(url):
    assert not is_forum_or_blog(url)


def test_forum_patterns_are_configurable():
    assert is_forum_or_blog("http://example.com/news/x", patterns=[r"/news/"])
    assert not is_forum_or_blog("http://example.com/forum/", patterns=[])


def test_hub_score():
    assert hub_score(10, 100) == 0.1
    assert hub_score(5, 0) == 5.0
    assert hub_score(0, 0) == 0.0
    with pytest.raises(ValueError):
        hub_score(-1, 10)


def test_the_judge_gives_the_thesaurus_urls_and_the_anchor_a_page_was_reached_by():
    from focused.topic.judge import Judge, Verdict
    from tests.pages import page

    judge = Judge(model(), threshold=0.3, link_score="anchor", reads_urls=True)

    def scored(url: str, anchor: str) -> Verdict:
        links = [("http://b.test/frigate", "more", "more"), ("http://b.test/x", "more", "")]
        return judge(page("a vessel of steel", links, url=url, anchor=anchor))

    base = scored("http://a.test/p", "")
    assert scored("http://a.test/frigate", "").relevance > base.relevance
    assert scored("http://a.test/p", "the timber frigate").relevance > base.relevance
    # An out-link's estimate reads its target's URL words too, so an anchor's is not kept.
    assert base.links[0].estimate > base.links[1].estimate
    assert not judge.anchor_scores
