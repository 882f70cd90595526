"""Topic files: good ones load, bad ones name the file, the field and the problem."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from focused.errors import FocusedError, TopicError
from focused.spiders.focused import FocusedSpider
from focused.topic.files import load_topic

GOOD = """
name = "birds"
seeds = ["http://www.a.test/Swan"]
seeds_file = "seeds.txt"
strategy = "hard"
[relevance]
method = "taxonomy"
taxonomy = "tax"
good = ["Science/Birds"]
"""


@pytest.fixture
def topic_dir(tmp_path: Path) -> Path:
    (tmp_path / "tax" / "Science" / "Birds").mkdir(parents=True)
    (tmp_path / "tax" / "Science" / "Birds" / "swan.txt").write_text("swan goose duck")
    (tmp_path / "tax" / "Science" / "Fish").mkdir()
    (tmp_path / "tax" / "Science" / "Fish" / "trout.txt").write_text("trout salmon pike")
    (tmp_path / "seeds.txt").write_text(
        "# seeds\nhttp://www.b.test/Goose\n\nhttp://www.a.test/Swan\n"
    )
    return tmp_path


def write(folder: Path, text: str) -> Path:
    path = folder / "topic.toml"
    path.write_text(text)
    return path


def test_good_topic_loads_with_paths_relative_to_the_file(topic_dir):
    topic = load_topic(write(topic_dir, GOOD))
    assert topic.name == "birds" and topic.strategy == "hard" and topic.method == "taxonomy"
    assert topic.seeds == ["http://www.a.test/Swan", "http://www.b.test/Goose"]
    assert topic.relevance["taxonomy"] == (topic_dir / "tax").resolve()
    assert topic.relevance["good"] == ["Science/Birds"]


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        (('name = "birds"', 'name = "no spaces allowed"'), "name", "crawl name"),
        (('strategy = "hard"', 'strategy = "medium"'), "strategy", 'one of "soft", "hard",'),
        (('method = "taxonomy"', 'method = "magic"'), "relevance.method", 'one of "taxonomy",'),
        (
            ("[relevance]", '[relevance]\nlink_score = "title"'),
            "relevance.link_score",
            'expected one of "content", "anchor", "both", "context", got \'title\'',
        ),
        (('taxonomy = "tax"', 'taxonomy = "missing"'), "relevance.taxonomy", "folder not found"),
        (('good = ["Science/Birds"]', "good = []"), "relevance.good", "non-empty list"),
        (('seeds = ["http://www.a.test/Swan"]', 'seeds = ["ftp://x"]'), "seeds", "not an http"),
        (('seeds_file = "seeds.txt"', 'seeds_file = "nope.txt"'), "seeds_file", "not found"),
        (('strategy = "hard"', 'strategy = "hard"\ncolour = "red"'), "colour", "unknown field"),
        (("[relevance]", "[relevance]\ngood_ones = 1"), "relevance.good_ones", "not a field"),
        (('name = "birds"', 'name = "birds'), "", "not valid TOML"),
    ],
)
def test_bad_topic_names_field_and_problem(topic_dir, change, field, problem):
    path = write(topic_dir, GOOD.replace(*change))
    with pytest.raises(TopicError) as error:
        load_topic(path)
    message = str(error.value)
    assert message.startswith(str(path))
    assert f": {field}: " in message if field else True
    assert problem in message


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("seeds =", "seed ="), "seed: unknown field; did you mean seeds?"),
        (("strategy =", "stratgy ="), "stratgy: unknown field; did you mean strategy?"),
        (("good =", "goods ="), "relevance.goods: not a field of 'taxonomy'; did you mean good?"),
        (
            ("[relevance]", '[strategy_options]\npath = "p.txt"\n[relevance]'),
            "strategy_options.path: unknown option; did you mean paths?",
        ),
        (("strategy =", "colour ="), "colour: unknown field"),  # nothing like it: no guess
        # a misspelt value of a field that takes one of a few words
        (
            ('method = "taxonomy"', 'method = "keyword"'),
            'relevance.method: expected one of "taxonomy", "centroid", "examples", "keywords",'
            ' "thesaurus", "semantic", got \'keyword\'; did you mean keywords?',
        ),
        (
            ('strategy = "hard"', 'strategy = "hrad"'),
            'strategy: expected one of "soft", "hard", "breadth-first", "best-n-first",'
            ' "genetic", "hmm", "infospiders", got \'hrad\'; did you mean hard?',
        ),
    ],
)
def test_a_misspelt_field_is_named_with_the_closest_known_one(topic_dir, change, message):
    path = write(topic_dir, GOOD.replace(*change))
    with pytest.raises(TopicError) as error:
        load_topic(path)
    assert str(error.value) == f"{path}: {message}"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"topc": "x.toml"}, "unknown spider argument -a topc=...; did you mean topic?"),
        ({"topic": "x.toml", "seeds": "s.txt"}, "unknown spider argument -a seeds=..."),
    ],
)
def test_an_unknown_spider_argument_is_named(arguments, message):
    """``-a topc=x.toml`` was "no topic file", the misspelt argument silently ignored."""
    with pytest.raises(FocusedError) as error:
        FocusedSpider(**arguments)
    assert str(error.value) == f"{message} (the spider takes -a topic=PATH)"


def test_scrapyd_arguments_are_not_unknown():
    """scrapyd adds its own arguments (``_job``), named with a leading underscore."""
    with pytest.raises(FocusedError, match="^no topic file"):
        FocusedSpider(_job="birds-1")


def test_missing_topic_file(tmp_path):
    with pytest.raises(TopicError, match="topic file not found"):
        load_topic(tmp_path / "none.toml")


def test_no_seeds_at_all(topic_dir):
    text = GOOD.replace('seeds = ["http://www.a.test/Swan"]\n', "").replace(
        'seeds_file = "seeds.txt"\n', ""
    )
    with pytest.raises(TopicError, match=": seeds: no seed URLs"):
        load_topic(write(topic_dir, text))


def scrapy_crawl(path: Path, redis_home: Path) -> subprocess.CompletedProcess:
    """``scrapy crawl focused -a topic=PATH``, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "focused", "-a", f"topic={path}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=path.parent,
        env={
            "SCRAPY_SETTINGS_MODULE": "focused.settings",
            "FOCUSED_HOME": str(redis_home),
            "PATH": "/usr/bin:/bin",
        },
    )


def crawl_error(result: subprocess.CompletedProcess) -> str:
    """The one CRITICAL line of a crawl that stopped at start-up for a user error."""
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "CRITICAL" in line]
    assert len(errors) == 1, result.stderr[-2000:]
    return errors[0]


@pytest.mark.crawl
def test_scrapy_crawl_with_a_bad_topic_prints_one_line(topic_dir, redis_home):
    path = write(topic_dir, GOOD.replace('strategy = "hard"', 'strategy = "sideways"'))
    error = crawl_error(scrapy_crawl(path, redis_home))
    assert f'{path}: strategy: expected one of "soft", "hard"' in error


@pytest.mark.crawl
def test_focused_train_reports_an_unknown_category_as_a_topic_error(topic_dir, tmp_path):
    path = write(topic_dir, GOOD.replace('good = ["Science/Birds"]', 'good = ["Science/Bird"]'))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "focused.cli.main",
            "train",
            str(path),
            "--models",
            str(tmp_path / "m"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.startswith(f"focused: error: {path}: relevance.good: ")
    assert "Science/Bird" in result.stderr and "Traceback" not in result.stderr


METHOD_TABLES = {
    "keywords": 'method = "keywords"\nkeywords = ["swan", "goose"]\ndescription = "water birds"\n',
    "keywords-weights": 'method = "keywords"\nkeywords = {swan = 2.0, "mute swan" = 1}\n',
    "examples": 'method = "examples"\nexamples = "tax/Science/Birds"\nthreshold = 0.4\n',
    "thesaurus": 'method = "thesaurus"\nthesaurus = "birds.thesaurus.toml"\n',
}


def with_relevance(table: str) -> str:
    return GOOD[: GOOD.index("[relevance]")] + "[relevance]\n" + table


@pytest.mark.parametrize("kind", sorted(METHOD_TABLES))
def test_every_method_loads_and_fits(topic_dir, tmp_path, kind):
    from focused.topic.methods import topic_model

    (topic_dir / "birds.thesaurus.toml").write_text(
        '[facets.birds]\nterms = ["swan", {term = "duck", narrower = ["teal"]}]\n'
    )
    topic = load_topic(write(topic_dir, with_relevance(METHOD_TABLES[kind])))
    model = topic_model(topic, str(tmp_path / "models"))
    swan, other = model.relevance(["a swan and a goose on the lake", "stock market report"])
    assert swan > other


@pytest.mark.parametrize(
    ("table", "field", "problem"),
    [
        ('method = "keywords"\nkeywords = "swan"\n', "relevance.keywords", "expected a list"),
        ('method = "keywords"\nkeywords = ["the", "and"]\n', "relevance.keywords", ""),
        ('method = "keywords"\nkeywords = ["swan"]\nr0 = 2\n', "relevance.r0", "0 to 1"),
        ('method = "examples"\nexamples = "none"\n', "relevance.examples", "not found"),
        ('method = "thesaurus"\nthesaurus = "none.toml"\n', "relevance.thesaurus", "not found"),
    ],
)
def test_bad_method_fields_are_named(topic_dir, table, field, problem):
    with pytest.raises(TopicError, match=f": {field}: .*{problem}"):
        load_topic(write(topic_dir, with_relevance(table)))


def test_thesaurus_syntax_errors_name_the_thesaurus_file(topic_dir):
    (topic_dir / "bad.thesaurus.toml").write_text('[facets.birds]\nterms = [{narrower = ["x"]}]\n')
    with pytest.raises(TopicError, match=r"bad\.thesaurus\.toml: facets\.birds\.terms\[0\]"):
        load_topic(
            write(
                topic_dir,
                with_relevance('method = "thesaurus"\nthesaurus = "bad.thesaurus.toml"\n'),
            )
        )


# -- topic files that once gave a traceback, or were accepted --------------------------------


def focused_train(path: Path, models: Path) -> str:
    """The one line of ``focused train`` on a bad topic (exit code 2, no traceback)."""
    result = subprocess.run(
        [sys.executable, "-m", "focused.cli.main", "train", str(path), "--models", str(models)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith(f"focused: error: {path}: ")
    return lines[0]


@pytest.mark.parametrize(
    ("seed", "problem"),
    [
        ("http://[::1/", "seeds: not a well-formed URL: 'http://[::1/'"),
        ("http://www.a.test:99999/", "seeds: not a valid port (1-65535) in URL"),
        (
            "http://a b.test/x",
            "seeds: not a valid host name or address in URL: 'http://a b.test/x'",
        ),
    ],
)
@pytest.mark.crawl
def test_a_bad_seed_is_one_line_naming_the_field(topic_dir, tmp_path, seed, problem):
    path = write(topic_dir, GOOD.replace("http://www.a.test/Swan", seed))
    assert problem in focused_train(path, tmp_path / "models")


@pytest.mark.crawl
def test_a_bad_seed_stops_scrapy_crawl_with_one_line(topic_dir, redis_home):
    path = write(topic_dir, GOOD.replace("http://www.a.test/Swan", "http://www.a.test:99999/"))
    assert f"{path}: seeds: not a valid port" in crawl_error(scrapy_crawl(path, redis_home))


def test_seeds_are_kept_as_they_are_crawled(topic_dir):
    path = write(topic_dir, GOOD.replace("http://www.a.test/Swan", "HTTP://WWW.A.test.:80/Swan#x"))
    assert load_topic(path).seeds[0] == "http://www.a.test/Swan"


@pytest.mark.crawl
def test_a_taxonomy_of_one_category_is_refused(topic_dir, tmp_path):
    for extra in (topic_dir / "tax" / "Science" / "Fish").iterdir():
        extra.unlink()
    (topic_dir / "tax" / "Science" / "Birds" / "goose.txt").write_text("goose swan")
    line = focused_train(write(topic_dir, GOOD), tmp_path / "models")
    assert "relevance.taxonomy: examples in one category only ('Science/Birds')" in line


@pytest.mark.crawl
def test_a_taxonomy_too_small_to_learn_from_is_one_line(topic_dir, tmp_path):
    # One example a category, no word in two of them: scikit-learn's min_df traceback once.
    line = focused_train(write(topic_dir, GOOD), tmp_path / "models")
    assert "relevance.taxonomy: no word is in 2 or more of the 2 examples" in line


@pytest.mark.crawl
def test_an_empty_examples_folder_names_the_topic_file_and_field(topic_dir, tmp_path):
    (topic_dir / "empty").mkdir()
    for table in (
        'method = "examples"\nexamples = "empty"\n',
        'method = "centroid"\nexamples = "empty"\n',
        'method = "examples"\nexamples = "tax/Science/Birds"\nnegatives = "empty"\n',
    ):
        path = write(topic_dir, with_relevance(table))
        line = focused_train(path, tmp_path / "models")
        field = "negatives" if "negatives" in table else "examples"
        assert f"{path}: relevance.{field}: no example files" in line


BINARY = bytes(range(256)) * 4


@pytest.mark.parametrize(
    ("table", "where", "field"),
    [
        (None, "tax/Science/Fish/photo.txt", "relevance.taxonomy"),
        ('method = "examples"\nexamples = "pages"\n', "pages/photo.html", "relevance.examples"),
        ('method = "centroid"\nexamples = "pages"\n', "pages/photo.txt", "relevance.examples"),
        (
            'method = "examples"\nexamples = "tax/Science/Birds"\nnegatives = "pages"\n',
            "pages/photo.txt",
            "relevance.negatives",
        ),
    ],
)
@pytest.mark.crawl
def test_examples_that_are_not_text_are_refused_by_name(topic_dir, redis_home, table, where, field):
    (topic_dir / "pages").mkdir()
    (topic_dir / "pages" / "swan.txt").write_text("a swan on the lake")
    (topic_dir / where).write_bytes(BINARY)
    path = write(topic_dir, GOOD if table is None else with_relevance(table))
    error = crawl_error(scrapy_crawl(path, redis_home))
    name = where.split("/", 1)[1] if table else "Science/Fish/photo.txt"
    assert f"{path}: {field}: {name} is not a text or HTML file" in error
