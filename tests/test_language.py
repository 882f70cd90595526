"""Languages: the identifier on short and long texts, the topic file's ``languages`` field, the
crawl plan's choice and what the language pipeline does to a page."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from focused.errors import FocusedError, TopicError
from focused.extensions.learner import TopicLearner
from focused.items import Page, PageLink
from focused.lab.webs.bundle import Bundle
from focused.lab.webs.generate import LANGUAGES_FILE, generate_web, read_languages
from focused.pipelines.language import LanguagePipeline
from focused.relevance.language import (
    MIN_CHARS,
    UNDETERMINED,
    LanguageIdentifier,
    kept_out,
    known_languages,
)
from focused.relevance.text import page_text
from focused.topic.files import load_topic
from focused.topic.judge import Verdict
from focused.topic.plan import CrawlPlan

# Hand-made sentences: the same two things said in each language.
SENTENCES = {
    "en": [
        "The river flows slowly through the old town, past the market square where farmers"
        " sell vegetables every Saturday morning.",
        "Our team won the match on Sunday after a long and difficult season, and the fans"
        " stayed in the stadium to celebrate.",
    ],
    "de": [
        "Der Fluss fließt langsam durch die alte Stadt, vorbei am Marktplatz, wo die Bauern"
        " jeden Samstagmorgen Gemüse verkaufen.",
        "Unsere Mannschaft hat das Spiel am Sonntag nach einer langen und schwierigen Saison"
        " gewonnen, und die Fans blieben im Stadion.",
    ],
    "fr": [
        "La rivière coule lentement à travers la vieille ville, devant la place du marché où"
        " les paysans vendent des légumes chaque samedi matin.",
        "Notre équipe a gagné le match dimanche après une saison longue et difficile, et les"
        " supporters sont restés au stade pour fêter.",
    ],
    "es": [
        "El río corre despacio por el casco antiguo, junto a la plaza del mercado donde los"
        " campesinos venden verduras todos los sábados.",
        "Nuestro equipo ganó el partido el domingo después de una temporada larga y difícil,"
        " y los aficionados se quedaron en el estadio.",
    ],
    "it": [
        "Il fiume scorre lentamente attraverso la città vecchia, davanti alla piazza del"
        " mercato dove i contadini vendono verdura ogni sabato.",
        "La nostra squadra ha vinto la partita domenica dopo una stagione lunga e difficile, e"
        " i tifosi sono rimasti allo stadio.",
    ],
    "nl": [
        "De rivier stroomt langzaam door de oude stad, langs het marktplein waar de boeren"
        " elke zaterdagochtend groenten verkopen.",
        "Ons team heeft zondag de wedstrijd gewonnen na een lang en moeilijk seizoen, en de"
        " supporters bleven in het stadion.",
    ],
}


@pytest.mark.parametrize(
    ("code", "text"), [(code, text) for code, texts in SENTENCES.items() for text in texts]
)
def test_a_sentence_is_identified(code: str, text: str) -> None:
    language, confidence = LanguageIdentifier().identify(text)
    assert language == code
    assert 0.5 < confidence <= 1


@pytest.mark.parametrize("code", list(SENTENCES))
def test_a_long_text_is_identified_from_its_first_characters(code: str) -> None:
    text = " ".join(SENTENCES[code] * 200)
    identifier = LanguageIdentifier(max_chars=500)
    assert identifier.identify(text)[0] == code
    # what comes after max_chars is not read
    assert identifier.identify(text[:500] + " 日本語の文章です。" * 500)[0] == code


@pytest.mark.parametrize("text", ["", "   ", "Home", "Tour de France", "12345 678 -- ||", "OK!"])
def test_a_short_text_is_undetermined(text: str) -> None:
    assert LanguageIdentifier().identify(text) == (UNDETERMINED, 0.0)


def test_the_shortest_identified_text_has_min_chars_letters() -> None:
    text = "Der Fluss fließt langsam durch die alte Stadt und am Marktplatz vorbei"
    assert LanguageIdentifier(min_chars=len(text) + 1).identify(text)[0] == UNDETERMINED
    assert LanguageIdentifier().identify(text)[0] == "de"
    assert sum(c.isalpha() for c in text) >= MIN_CHARS


def test_kept_out() -> None:
    assert kept_out("de", ("en",))
    assert not kept_out("en", ("en", "de"))
    assert not kept_out("de", ())  # any language
    assert not kept_out(UNDETERMINED, ("en",))
    assert not kept_out(None, ("en",))  # not identified


TOPIC = """
name = "birds"
seeds = ["http://www.a.test/Swan"]
{languages}
[relevance]
method = "keywords"
keywords = ["swan"]
"""


def topic_with(tmp_path: Path, languages: str) -> Path:
    path = tmp_path / "topic.toml"
    path.write_text(TOPIC.format(languages=languages))
    return path


def test_a_topic_keeps_its_languages(tmp_path: Path) -> None:
    topic = load_topic(topic_with(tmp_path, 'languages = ["en", "DE", "en"]'))
    assert topic.languages == ("en", "de")
    assert topic.decisions()["languages"] == ["en", "de"]
    assert load_topic(topic_with(tmp_path, "")).languages == ()
    assert "languages" not in load_topic(topic_with(tmp_path, "")).decisions()
    assert {"en", "de", "fr", "zh"} <= known_languages()


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ('"en"', "expected a list of language codes, got 'en'"),
        ("[1, 2]", "expected a list of language codes"),
        ('["en", "english"]', "not a language code py3langid knows .*'english'"),
        ('["xx"]', "not a language code py3langid knows .*'xx'"),
    ],
)
def test_a_bad_languages_field_is_named(tmp_path: Path, value: str, problem: str) -> None:
    with pytest.raises(TopicError, match=f"topic.toml: languages: {problem}"):
        load_topic(topic_with(tmp_path, f"languages = {value}"))


@pytest.mark.parametrize(
    ("setting", "languages", "identifies"),
    [
        ("auto", "", False),
        ("auto", 'languages = ["en"]', True),
        ("always", "", True),
        ("never", "", False),
    ],
)
def test_the_plan_identifies_languages_when_asked(
    tmp_path: Path, setting: str, languages: str, identifies: bool
) -> None:
    topic = load_topic(topic_with(tmp_path, languages))
    settings = Settings({"FOCUSED_LANGUAGE_ID": setting, "FOCUSED_VECTORS": "false"})
    plan = CrawlPlan.from_settings(settings, topic)
    assert plan.identifies_language is identifies
    assert plan.languages == topic.languages


def test_never_with_languages_is_an_error(tmp_path: Path) -> None:
    topic = load_topic(topic_with(tmp_path, 'languages = ["en"]'))
    with pytest.raises(FocusedError, match="FOCUSED_LANGUAGE_ID: never, but the topic"):
        CrawlPlan.from_settings(Settings({"FOCUSED_LANGUAGE_ID": "never"}), topic)


class Stats:
    def __init__(self) -> None:
        self.values: dict[str, int] = {}

    def inc_value(self, key: str, count: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + count


def page(text: str, main_text: str | None = None, bad: str | None = None) -> Page:
    """A page the judge found relevant (R 0.9, 0.8 by the topic as the user gave it), on a good
    path, its two links estimated 0.7 and 0.6."""
    item = Page("http://a.test/", 200, 0.0, depth=1, bad=bad, text=text, main_text=main_text)
    links = [
        PageLink("http://a.test/1", "one", "", 0.7, 0.7),
        PageLink("http://a.test/2", "two", "", 0.6, 0.6),
    ]
    if not bad:
        item.judged(Verdict(0.9, True, "Birds", 0.8, links, path_good=True))
    return item


def estimates(item: Page) -> list[float]:
    return [link.estimate for link in item.links]


def test_a_page_in_another_language_is_never_relevant() -> None:
    stats = Stats()
    pipeline = LanguagePipeline(LanguageIdentifier(), ["en"], stats)  # type: ignore[arg-type]
    german = pipeline.process_item(page(" ".join(SENTENCES["de"])))
    assert german.language == "de" and german.verdict is not None
    assert german.relevance == german.verdict.relevance == german.verdict.first_relevance == 0
    assert german.relevant is False and german.verdict.path_good is False
    assert estimates(german) == [0.0, 0.0] and german.verdict.links == german.links
    assert [link.anchor_relevance for link in german.links] == [0.0, 0.0]
    english = pipeline.process_item(page("Menu " * 50, main_text=" ".join(SENTENCES["en"])))
    assert english.language == "en"  # from the main text, not the whole page's
    assert english.relevance == 0.9 and english.relevant and estimates(english)[0] > 0
    short = pipeline.process_item(page("Hallo Welt"))
    assert short.language == UNDETERMINED and short.relevant
    assert stats.values == {
        "focused/language/de": 1,
        "focused/language/en": 1,
        "focused/language/und": 1,
        "focused/language/off_topic": 1,
    }
    bad = page(" ".join(SENTENCES["de"]), bad="not_html")
    assert pipeline.process_item(bad).language is None


def test_any_language_keeps_every_page() -> None:
    pipeline = LanguagePipeline(LanguageIdentifier(), [])
    german = pipeline.process_item(page(" ".join(SENTENCES["de"])))
    assert german.language == "de" and german.relevant and german.relevance == 0.9
    assert estimates(german) == [0.7, 0.6]


def test_a_generated_web_has_pages_in_each_language(tmp_path: Path) -> None:
    shares = {"en": 2.0, "de": 1.0, "fr": 1.0}
    web = generate_web(tmp_path / "web", n_pages=200, n_hosts=10, seed=2, languages=shares)
    truth = json.loads((web / LANGUAGES_FILE).read_text())
    counts = Counter(truth.values())
    assert set(counts) == set(shares) and counts["en"] > counts["de"] > 20
    bundle, identifier = Bundle.load(web), LanguageIdentifier()
    agree = 0
    for url, code in truth.items():
        body = bundle.page(url).body.decode("utf-8", "replace")
        assert f'<html lang="{code}">' in body
        agree += identifier.identify(page_text(body).text)[0] == code
    assert agree >= 0.9 * len(truth)
    plain = generate_web(tmp_path / "plain", n_pages=200, n_hosts=10, seed=2)
    assert not (plain / LANGUAGES_FILE).exists()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("en,xx", "no words for 'xx'"),
        ("en=a", "not a share: 'en=a'"),
        ("en=0", "a share must be above 0"),
        (",", "expected codes such as en,de,fr"),
    ],
)
def test_bad_languages_of_a_generated_web_are_named(text: str, problem: str) -> None:
    with pytest.raises(FocusedError, match=f"--languages: {problem}"):
        read_languages(text)


def test_languages_of_a_generated_web_are_read_by_share() -> None:
    assert read_languages("en,de") == {"en": 1.0, "de": 1.0}
    assert read_languages("EN=0.6, fr=0.4") == {"en": 0.6, "fr": 0.4}


def test_a_topic_that_learns_does_not_learn_from_pages_it_keeps_out() -> None:
    learner = TopicLearner(
        get_crawler(settings_dict={"FOCUSED_LEARN_PAGES": 50, "FOCUSED_LEARN_CHARS": 200})
    )
    learner.languages = ("en",)
    german, english, short = (
        page(" ".join(SENTENCES["de"])),
        page(" ".join(SENTENCES["en"])),
        page("Hallo"),
    )
    german.language, english.language, short.language = "de", "en", UNDETERMINED
    for item in (german, english, short):
        learner.item_scraped(item)
    assert [p.text.split()[:2] for p in learner.pending] == [["The", "river"], ["Hallo"]]
