"""``focused label``: the pages of a feed and their orders, the examples topic written from the
marks, the server over real HTTP, and the page in a real headless Chromium driven from the
keyboard, down to the written topic's fitted model."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urljoin

import lxml.html
import pytest

import focused
from focused.cli.main import main
from focused.errors import FocusedError, TopicError
from focused.label import server
from focused.label.examples import (
    MIN_POSITIVES,
    example_file,
    read_marks,
    write_examples_topic,
    write_marks,
)
from focused.label.feed import (
    DEFAULT_BOUNDARY,
    boundary,
    label_pages,
    order,
    read_feed,
    seeds_of,
    snippet,
)
from focused.topic.files import load_topic
from focused.topic.methods import own_negatives, own_texts, topic_model, vector_model
from tests.test_watch import CHROMIUM, serving

STATIC = Path(focused.__file__).parent / "label" / "static"
SEED = "http://birds.test/"
BIRDS = (
    "The grey heron wades through the marsh. Herons nest in colonies high in the trees, and "
    "their plumage is grey and white; the heron eats fish, frogs and small birds."
)
CARS = (
    "The sedan has a four-cylinder engine, a six-speed gearbox and new tyres; its horsepower "
    "and torque make the car quick on the motorway, and the dealer services the engine."
)


def item(url: str, relevance: float | None, relevant: bool, text: str | None, **more) -> dict:
    """A feed item with the fields the labelling reads (docs/reference/feed.md)."""
    return {
        "url": url,
        "relevance": relevance,
        "relevant": relevant,
        "category": None,
        "depth": 1,
        "parent": SEED,
        "title": url.rstrip("/").rpartition("/")[2].replace("_", " "),
        "bad": None,
        "main_text": text,
        **more,
    }


# A crawl of birds: the boundary is .55 (the least R of a relevant page). The labels the person
# gives: birds good, cars bad.
FEED = [
    item(SEED, 0.95, True, BIRDS, depth=0, parent=None, title="Birds"),
    item("http://birds.test/Swan", 0.90, True, BIRDS.replace("heron", "swan")),
    item("http://cars.test/Sedan", 0.85, True, CARS),
    item("http://birds.test/Crane", 0.70, True, BIRDS.replace("heron", "crane")),
    item("http://cars.test/Coupe", 0.55, True, CARS.replace("sedan", "coupe")),
    item("http://cars.test/Truck", 0.40, False, None),  # no main text kept: title only
    item("http://birds.test/Egret", 0.20, False, BIRDS.replace("heron", "egret")),
    item("http://cars.test/Van", 0.10, False, CARS.replace("sedan", "van")),
]
URLS = [page["url"] for page in FEED]


def write_feed(path: Path, items: list[dict], extra_lines: tuple[str, ...] = ()) -> Path:
    path.write_text(
        "".join(json.dumps(i) + "\n" for i in items) + "".join(extra_lines), encoding="utf-8"
    )
    return path


# The feed and its orders.


def test_read_feed_counts_and_skips_lines_that_are_not_json(tmp_path):
    feed = write_feed(tmp_path / "pages.jsonl", FEED[:2], ("{cut off\n", "\n", "[1, 2]\n"))
    items, not_json = read_feed(feed)
    assert [i["url"] for i in items] == URLS[:2] and not_json == 2
    with pytest.raises(FocusedError, match="feed not found"):
        read_feed(tmp_path / "none.jsonl")


def test_listed_pages_are_classified_not_bad_and_have_text():
    items = [
        *FEED[:2],
        item("http://x.test/bad", None, False, None, bad="http_404", title=None),
        item("http://x.test/duplicate", None, False, None, bad="duplicate"),
        item("http://x.test/empty", 0.3, False, ""),  # no main text found
        item("http://x.test/untitled", 0.3, False, None, title=None),  # nothing to show
        item("http://x.test/unclassified", None, False, "text"),
        {**FEED[0], "relevance": 0.1},  # the same URL again: its first item counts
        FEED[5],
    ]
    pages = label_pages(items)
    assert [p.url for p in pages] == [URLS[0], URLS[1], URLS[5]]
    assert pages[0].relevance == 0.95 and pages[0].main_text == BIRDS
    assert pages[2].main_text is None and pages[2].title == "Truck"


def test_the_boundary_is_the_least_relevant_pages_r():
    assert boundary(FEED) == 0.55
    assert boundary([item("http://x.test/", 0.9, False, "x")]) == DEFAULT_BOUNDARY == 0.5


def test_best_first_and_least_certain_first():
    pages = label_pages(FEED)
    best = order(pages, "best", 0.55)
    assert [pages[i].url for i in best] == URLS  # the feed is in R's order already
    uncertain = [pages[i].title for i in order(pages, "uncertain", 0.55)]
    # |R - .55|: Coupe 0, Crane and Truck .15 (ties keep the feed's order), Sedan .30, ...
    assert uncertain == ["Coupe", "Crane", "Truck", "Sedan", "Swan", "Egret", "Birds", "Van"]
    with pytest.raises(ValueError, match="order must be one of"):
        order(pages, "random", 0.55)


def test_seeds_are_the_depth_0_pages_and_snippets_are_cut_between_words():
    assert seeds_of([*FEED, {**FEED[0]}, item("ftp://x.test/", 0.1, False, "x", depth=0)]) == [SEED]
    text = "word " * 100
    cut = snippet(text)
    assert len(cut) <= 301 and cut.endswith("word…")
    assert snippet("  a\n\n b  ") == "a b"


# The examples topic.


def test_the_writer_makes_a_topic_that_loads_and_fits(tmp_path):
    out = tmp_path / "topics" / "birds-labelled"
    marks = {URLS[0]: "good", URLS[1]: "good", URLS[2]: "bad", URLS[5]: "bad", URLS[7]: None}
    path = write_examples_topic(FEED, marks, out, "birds-labelled", [SEED])
    assert path == out / "birds-labelled.toml"
    positives = sorted(p.name for p in (out / "positives").iterdir())
    negatives = sorted(p.name for p in (out / "negatives").iterdir())
    assert positives == sorted(example_file(u) for u in URLS[:2])
    assert negatives == sorted(example_file(u) for u in (URLS[2], URLS[5]))
    assert (out / "positives" / example_file(SEED)).read_text() == f"Birds\n\n{BIRDS}\n"
    assert (out / "negatives" / example_file(URLS[5])).read_text() == "Truck\n"  # title only
    topic = load_topic(path)
    assert (topic.name, topic.seeds, topic.method) == ("birds-labelled", [SEED], "examples")
    assert topic.relevance["examples"] == (out / "positives").resolve()
    assert topic.relevance["negatives"] == (out / "negatives").resolve()
    model = topic_model(topic, str(tmp_path / "models"))
    bird, car = model.relevance([BIRDS.replace("heron", "stork"), CARS.replace("sedan", "jeep")])
    assert bird > 0.5 > car


def test_the_writer_moves_and_removes_examples_as_marks_change(tmp_path):
    out = tmp_path / "out"
    write_examples_topic(FEED, {URLS[0]: "good", URLS[2]: "bad"}, out, "t", [SEED])
    (out / "positives" / "mine.txt").write_text("a page of my own about herons")
    path = write_examples_topic(FEED, {URLS[2]: "good"}, out, "t", [SEED])
    # The sedan moved to positives, the first page is no longer marked; the user's file stays.
    assert sorted(p.name for p in (out / "positives").iterdir()) == sorted(
        [example_file(URLS[2]), "mine.txt"]
    )
    assert list((out / "negatives").iterdir()) == []
    text = path.read_text()
    assert 'examples = "positives"' in text and "negatives =" not in text  # none marked bad
    assert load_topic(path).relevance["negatives"] is None
    (out / "negatives" / "mine.txt").write_text("a page of my own about gearboxes")
    path = write_examples_topic(FEED, {URLS[2]: "good"}, out, "t", [SEED])
    assert load_topic(path).relevance["negatives"] == (out / "negatives").resolve()


def test_fewer_good_pages_than_a_crawl_needs_still_write_the_topic(tmp_path):
    labelling = server.Labelling(FEED, label_pages(FEED), 0.55, tmp_path, "t", [SEED])
    labelling.mark(URLS[2], "bad")
    assert labelling.topic.exists() and labelling.summary()["needed"] == MIN_POSITIVES == 2
    with pytest.raises(TopicError, match="relevance.examples: no example files"):
        load_topic(labelling.topic)
    labelling.mark(URLS[0], "good")
    assert labelling.summary() == {
        "counts": {"good": 1, "bad": 1, "unmarked": 6},
        "needed": 1,
        "topic": str(tmp_path / "t.toml"),
    }
    assert load_topic(labelling.topic).relevance["negatives"] == (tmp_path / "negatives").resolve()


def test_pages_marked_in_another_feed_keep_their_examples(tmp_path):
    first = server.Labelling(FEED[:4], label_pages(FEED[:4]), 0.55, tmp_path, "t", [SEED])
    first.mark(URLS[0], "good")
    first.mark(URLS[2], "bad")
    second = server.Labelling(FEED[4:], label_pages(FEED[4:]), 0.55, tmp_path, "t", [SEED])
    assert second.summary()["needed"] == 1  # the first feed's good page counts
    second.mark(URLS[6], "good")
    second.mark(URLS[2], "good")  # marked again, with no text in this feed: it moves
    assert read_marks(tmp_path) == {URLS[0]: "good", URLS[2]: "good", URLS[6]: "good"}
    positives = {p.name: p.read_text() for p in (tmp_path / "positives").iterdir()}
    assert positives[example_file(URLS[2])] == f"Sedan\n\n{CARS}\n"
    assert sorted(positives) == sorted(example_file(u) for u in (URLS[0], URLS[2], URLS[6]))
    assert list((tmp_path / "negatives").iterdir()) == []
    assert second.summary() == {
        "counts": {"good": 1, "bad": 0, "unmarked": 3},  # of this feed's pages
        "needed": 0,
        "topic": str(tmp_path / "t.toml"),
    }


def test_a_mark_that_cannot_be_kept_is_undone(tmp_path):
    labelling = server.Labelling(FEED, label_pages(FEED), 0.55, tmp_path, "t", [SEED])
    labelling.mark(URLS[1], "bad")
    (tmp_path / "marks.json").unlink()
    (tmp_path / "marks.json").mkdir()  # where the marks file goes: it cannot be written
    with pytest.raises(OSError):
        labelling.mark(URLS[0], "good")
    assert labelling.marks == {URLS[1]: "bad"}
    assert labelling.summary()["counts"] == {"good": 0, "bad": 1, "unmarked": 7}


@pytest.mark.parametrize(
    "name, seeds, marks, problem",
    [
        ("bad name!", [SEED], {}, "not a crawl name"),
        ("t", [], {}, "no seeds"),
        ("t", ["ftp://x.test/"], {}, "not an http"),
        ("t", [SEED], {SEED: "maybe"}, "a mark is 'good', 'bad' or None"),
    ],
)
def test_the_writer_refuses_what_would_not_load(tmp_path, name, seeds, marks, problem):
    with pytest.raises(ValueError, match=problem):
        write_examples_topic(FEED, marks, tmp_path, name, seeds)


def test_the_writer_carries_allowed_networks(tmp_path):
    path = write_examples_topic(
        FEED, {SEED: "good"}, tmp_path, "t", [SEED], allowed_networks=["10.0.0.0/8"]
    )
    assert load_topic(path).allowed_networks == ("10.0.0.0/8",)


def test_marks_are_kept_and_read_back(tmp_path):
    marks = {URLS[1]: "good", URLS[0]: "bad"}
    write_marks(tmp_path, marks)
    assert read_marks(tmp_path) == marks and read_marks(tmp_path / "none") == {}
    labelling = server.Labelling(FEED, label_pages(FEED), 0.55, tmp_path, "t", [SEED])
    labelling.mark(URLS[1], None)
    labelling.mark(URLS[3], "good")
    assert read_marks(tmp_path) == {URLS[0]: "bad", URLS[3]: "good"}
    (tmp_path / "marks.json").write_text('{"http://x.test/": "perhaps"}')
    with pytest.raises(FocusedError, match="marks.json: expected"):
        read_marks(tmp_path)


# The topic keeps the crawl's own topic and adds the marked pages.


def keyword_topic(folder: Path, relevance: str, *top: str) -> Path:
    """The crawl's own topic file: a keyword topic of birds."""
    path = folder / "birds.toml"
    lines = ['name = "birds"', f'seeds = ["{SEED}", "http://birds.test/Owl"]', *top]
    path.write_text("\n".join([*lines, "[relevance]", relevance, ""]), encoding="utf-8")
    return path


KEYWORDS = 'method = "keywords"\nkeywords = { heron = 2.0, "grey heron" = 1 }\nr0 = 0.2\n'


def test_a_keyword_topic_keeps_its_keywords_and_seeds_and_adds_the_marked_pages(tmp_path):
    original = load_topic(
        keyword_topic(
            tmp_path,
            KEYWORDS + 'description = "Herons and their nests"\nlink_score = "both"',
            'allowed_networks = ["10.0.0.0/8"]',
            'strategy = "hard"',
        )
    )
    out = tmp_path / "out"
    marks = {URLS[1]: "good", URLS[3]: "good", URLS[2]: "bad", URLS[7]: "bad"}
    path = write_examples_topic(
        FEED,
        marks,
        out,
        "birds-labelled",
        original.seeds,
        original=original,
        allowed_networks=original.allowed_networks,
    )
    topic = load_topic(path)
    assert (topic.name, topic.method) == ("birds-labelled", "keywords")
    assert topic.seeds == original.seeds == [SEED, "http://birds.test/Owl"]
    assert (topic.allowed_networks, topic.strategy, topic.link_score) == (
        ("10.0.0.0/8",),
        "hard",
        "both",
    )
    for field in ("keywords", "description", "r0"):
        assert topic.relevance[field] == original.relevance[field]
    assert topic.relevance["examples"] == (out / "positives").resolve()
    assert topic.relevance["negatives"] == (out / "negatives").resolve()
    assert sorted(p.name for p in (out / "positives").iterdir()) == sorted(
        example_file(u) for u in (URLS[1], URLS[3])
    )
    # The keywords are the user's own text, then the marked pages; the bad ones are negatives.
    own = own_texts(topic)
    assert own[0] == "heron grey heron Herons and their nests" and len(own) == 3
    assert sorted(own[1:]) == sorted(
        (out / "positives" / example_file(u)).read_text() for u in (URLS[1], URLS[3])
    )
    assert sorted(own_negatives(topic)) == sorted(
        (out / "negatives" / example_file(u)).read_text() for u in (URLS[2], URLS[7])
    )
    model = topic_model(topic, str(tmp_path / "models"))
    with_keyword, without = model.relevance(["a heron in the reeds", "a swan in the reeds"])
    assert with_keyword > 0.2 > without == 0
    assert own_texts(original) == [own[0]] and own_negatives(original) == []


def test_the_keyword_topics_word_vectors_and_learning_read_the_marked_pages(tmp_path):
    from focused.relevance.learned import LearnedTopic

    original = load_topic(keyword_topic(tmp_path, KEYWORDS))
    marks = {URLS[1]: "good", URLS[3]: "good", URLS[2]: "bad", URLS[4]: "bad"}
    written = write_examples_topic(FEED, marks, tmp_path / "o", "t", [SEED], original=original)
    topic = load_topic(written)
    vectors = vector_model(topic, str(tmp_path / "models"), "true")
    assert list(vectors.categories_[:2]) == ["other", "topic"]
    bird, car = vectors.relevance([BIRDS.replace("heron", "egret"), CARS.replace("sedan", "van")])
    assert bird > 0.5 > car
    # A refit keeps the user's texts as examples of the topic, their negatives as neighbours.
    pages = [BIRDS.replace("heron", "stork"), CARS.replace("sedan", "jeep")] * 2
    user, negatives = own_texts(topic), own_negatives(topic)
    texts, labels = LearnedTopic().examples(pages, [0.9, 0.1] * 2, user, negatives)
    assert texts[: len(user)] == user and set(labels[: len(user)]) == {"topic"}
    kept = [label for text, label in zip(texts, labels, strict=True) if text in negatives]
    assert len(kept) == 2 and all(label.startswith("other/") for label in kept)


def test_without_marks_a_keyword_topic_crawls_as_it_was(tmp_path):
    original = load_topic(keyword_topic(tmp_path, KEYWORDS))
    labelling = server.Labelling(
        FEED, label_pages(FEED), 0.55, tmp_path / "o", "t", original.seeds, original=original
    )
    assert labelling.summary()["needed"] == 0  # the keywords crawl without a marked page
    topic = load_topic(labelling.topic)
    assert "examples" not in topic.relevance and "negatives" not in topic.relevance
    assert topic.decisions() == original.decisions()  # as a crawl of the keywords decides


def test_an_examples_topic_keeps_its_pages_beside_the_marked_ones(tmp_path):
    for folder, text in (("mine", BIRDS), ("not-mine", CARS)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.txt").write_text(text)
    path = tmp_path / "birds.toml"
    path.write_text(
        f'name = "birds"\nseeds = ["{SEED}"]\n[relevance]\nmethod = "examples"\n'
        'examples = "mine"\nnegatives = "not-mine"\nthreshold = 0.6\n'
    )
    original = load_topic(path)
    out = tmp_path / "out"
    written = write_examples_topic(FEED, {URLS[1]: "good"}, out, "t", [SEED], original=original)
    topic = load_topic(written)
    assert (topic.method, topic.relevance["threshold"]) == ("examples", 0.6)
    assert sorted(own_texts(topic)) == sorted(
        [BIRDS, (out / "positives" / example_file(URLS[1])).read_text()]
    )
    assert own_negatives(topic) == [CARS]
    assert f"With the example pages of {path}" in written.read_text()
    # Marked again in place (--out of this topic, given as --topic): nothing is copied twice.
    again = write_examples_topic(FEED, {}, out, "t", [SEED], original=topic)
    assert sorted(own_texts(load_topic(again))) == [BIRDS]


def test_what_the_topic_cannot_keep_is_said_in_it(tmp_path):
    written = write_examples_topic(FEED, {URLS[1]: "good"}, tmp_path, "t", [SEED])
    assert "Not known: the crawl's own topic (--topic)" in written.read_text()
    thesaurus = tmp_path / "t.thesaurus.toml"
    thesaurus.write_text('[facets.birds]\nterms = ["heron"]\n')
    path = tmp_path / "birds.toml"
    path.write_text(
        f'name = "birds"\nseeds = ["{SEED}"]\n[relevance]\nmethod = "thesaurus"\n'
        f'thesaurus = "{thesaurus.name}"\n'
    )
    out = tmp_path / "out"
    written = write_examples_topic(
        FEED, {URLS[1]: "good"}, out, "t", [SEED], original=load_topic(path)
    )
    assert f"Not kept from {path}: its thesaurus relevance" in written.read_text()
    assert load_topic(written).method == "examples"


# The command's refusals: one line, exit code 2.


@pytest.mark.parametrize(
    "lines, message",
    [
        (None, "feed not found"),
        (["not json\n", "{}\n"], "nothing to label: no page of its 1 items is classified"),
        ([json.dumps(FEED[1]) + "\n"], "no page of depth 0 to take as seeds: give --topic"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, capsys, lines, message):
    feed = tmp_path / "pages.jsonl"
    if lines is not None:
        feed.write_text("".join(lines))
    assert main(["label", "birds", "--feed", str(feed), "--out", str(tmp_path / "o")]) == 2
    stderr = capsys.readouterr().err.splitlines()
    assert stderr[-1].startswith(f"focused: error: {feed}: {message}")
    if lines and lines[0] == "not json\n":
        assert stderr == [f"focused: {feed}: skipped 1 lines that are not JSON", stderr[-1]]
    else:
        assert len(stderr) == 1


# The server, over real HTTP.


def label_command(feed: Path, out: Path, *more: str) -> tuple[str, ...]:
    return ("label", "birds", "--feed", str(feed), "--out", str(out), *more)


@pytest.mark.crawl  # runs the command, a server, in a subprocess
def test_the_server_answers_its_hosts_and_keeps_marks_over_a_restart(tmp_path, http):
    feed = write_feed(tmp_path / "pages.jsonl", FEED)
    out = tmp_path / "labelled"
    with serving(*label_command(feed, out)) as url:
        page = lxml.html.fromstring(http.get(url, timeout=30).text)
        loaded = page.xpath("//script/@src | //link[@rel='stylesheet']/@href")
        assert sorted(loaded) == ["label.css", "label.js"]
        for name in loaded:
            served = http.get(urljoin(url, name), timeout=30)
            assert served.headers["content-type"].split(";")[0] == server.STATIC[name][1]
            assert served.text == (STATIC / name).read_text(encoding="utf-8")
        refused = http.get(url, headers={"Host": "rebound.example"}, timeout=30)
        assert refused.status_code == 403 and "--allow-host" in refused.text
        listing = http.get(urljoin(url, "api/pages"), timeout=30).json()
        assert [p["url"] for p in listing["pages"]] == URLS and listing["threshold"] == 0.55
        assert listing["orders"]["best"] == list(range(8)) and listing["marks"] == {}
        assert [p["text"] for p in listing["pages"]].count(False) == 1
        api = urljoin(url, "api/marks")
        assert http.post(api, data=json.dumps({"url": SEED, "mark": "good"})).status_code == 415
        assert http.post(api, json={"url": "http://x.test/", "mark": "good"}).status_code == 404
        assert http.post(api, json={"url": SEED, "mark": "fine"}).status_code == 400
        for url_, mark in ((SEED, "good"), (URLS[1], "good"), (URLS[2], "bad"), (URLS[1], None)):
            answer = http.post(api, json={"url": url_, "mark": mark}, timeout=30)
            assert answer.status_code == 200, answer.text
        assert answer.json() == {
            "counts": {"good": 1, "bad": 1, "unmarked": 6},
            "needed": 1,
            "topic": str(out / "birds-labelled.toml"),
        }
    with serving(*label_command(feed, out)) as url:
        listing = http.get(urljoin(url, "api/pages"), timeout=30).json()
    assert listing["marks"] == {SEED: "good", URLS[2]: "bad"}
    assert listing["counts"] == {"good": 1, "bad": 1, "unmarked": 6}
    assert read_marks(out) == listing["marks"]


# The page, in a real headless Chromium.

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture
def browser():  # noqa: ANN201 - playwright's Browser, imported only when it is installed
    """Debian's Chromium, driven by playwright (its own browser downloads are never used)."""
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium in /usr/bin (scripts/setup.sh)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="needs playwright (pip install -e '.[test]')"
    )
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def shown_marks(page) -> dict[str, str]:  # noqa: ANN001 - a playwright Page
    """The marks the page shows, by URL."""
    return page.evaluate(
        "Object.fromEntries([...document.querySelectorAll('.page[data-mark]')]"
        ".filter(row => row.dataset.mark).map(row => [row.dataset.url, row.dataset.mark]))"
    )


def wait_for_counts(page, good: int, bad: int) -> None:  # noqa: ANN001 - a playwright Page
    """Until the page shows the server's counts (each mark's answer)."""
    page.wait_for_function(
        "([good, bad]) => document.querySelector('[data-count=good]').textContent == good"
        " && document.querySelector('[data-count=bad]').textContent == bad",
        arg=[good, bad],
    )


def current(page) -> str:  # noqa: ANN001 - a playwright Page
    """The page that has the keyboard's focus, which must be visible."""
    return page.evaluate(
        "(() => { const row = document.activeElement;"
        " if (!row.classList.contains('current')) return 'focus is not on the current page';"
        " if (getComputedStyle(row).outlineStyle === 'none') return 'focus is not visible';"
        " return row.dataset.url; })()"
    )


@pytest.mark.crawl  # a server in a subprocess, and a browser
def test_the_page_is_labelled_from_the_keyboard_alone(tmp_path, browser):
    feed = write_feed(tmp_path / "pages.jsonl", FEED)
    out = tmp_path / "labelled"
    title = {p["url"]: p["title"] for p in FEED}
    with serving(*label_command(feed, out)) as url:
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("body[data-loaded]")
        assert page.evaluate("document.body.dataset.order") == "best"
        assert current(page) == SEED  # the first unmarked page, best first
        assert page.is_visible("#no-text")  # the truck has no main text in the feed
        for key in ("g", "y", "b", "j", "n"):  # Birds, Swan good; Sedan bad; skip Crane; Coupe bad
            page.keyboard.press(key)
        assert current(page) == URLS[5]  # the truck: the next after the last mark
        page.keyboard.press("o")  # least certain first: Coupe, Crane, Truck, Sedan, ...
        assert page.evaluate("document.body.dataset.order") == "uncertain"
        assert current(page) == URLS[5]  # the same page, in its new place
        page.keyboard.press("k")
        assert current(page) == URLS[3]
        page.keyboard.press("g")  # Crane good; the truck next
        page.keyboard.press("ArrowUp")
        page.keyboard.press("ArrowUp")
        assert current(page) == URLS[4]
        page.keyboard.press("u")  # the coupe's mark cleared
        wait_for_counts(page, 3, 1)
        assert page.text_content("#needed").startswith("The topic is ready to crawl")
        page.keyboard.press("?")
        assert page.is_visible("#help") and "least certain first" in page.text_content("#help")
        page.keyboard.press("Escape")
        assert not page.is_visible("#help")
        expected = {URLS[0]: "good", URLS[1]: "good", URLS[3]: "good", URLS[2]: "bad"}
        assert shown_marks(page) == expected
        page.reload()
        page.wait_for_selector("body[data-loaded]")
        assert shown_marks(page) == expected  # from the server: saved, not remembered
        assert page.evaluate("document.body.dataset.order") == "uncertain"  # kept in the URL
        assert current(page) == URLS[4]  # the first unmarked page, least certain first
        assert page.text_content(".page.current .title") == title[URLS[4]]
        page.close()
    assert read_marks(out) == expected
    topic = load_topic(out / "birds-labelled.toml")
    assert topic.seeds == [SEED] and topic.relevance["negatives"] is not None
    model = topic_model(topic, str(tmp_path / "models"))
    bird, car = model.relevance([BIRDS.replace("heron", "stork"), CARS.replace("sedan", "jeep")])
    assert bird > 0.5 > car


@pytest.mark.crawl  # a server in a subprocess, and a browser
def test_the_buttons_mark_a_page_too(tmp_path, browser):
    feed = write_feed(tmp_path / "pages.jsonl", FEED)
    with serving(*label_command(feed, tmp_path / "labelled")) as url:
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("body[data-loaded]")
        page.click(f".page[data-url='{URLS[7]}'] button[data-set='bad']")
        wait_for_counts(page, 0, 1)
        assert page.get_attribute(".page.current", "data-url") == URLS[7]  # the one clicked
        assert (
            page.get_attribute(
                f".page[data-url='{URLS[7]}'] button[data-set='bad']", "aria-pressed"
            )
            == "true"
        )
    assert read_marks(tmp_path / "labelled") == {URLS[7]: "bad"}
