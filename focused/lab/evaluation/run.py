"""Real crawls for the evaluation: each crawler is a ``scrapy crawl focused`` subprocess
through its own served copy of the bundle, with a fresh FOCUSED_HOME (a fresh Redis)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

from focused.errors import FocusedError
from focused.lab.crawlproc import crawl_command, crawl_env
from focused.lab.evaluation.graph import WebGraph
from focused.lab.evaluation.tasks import Task
from focused.lab.webs.bundle import Bundle, url_key
from focused.lab.webs.labels import saved_page, taxonomy_from_labels
from focused.lab.webs.server import ServedWeb, read_log
from focused.links.domains import RegisteredDomains
from focused.relevance.centroid import read_examples
from focused.relevance.content import main_text
from focused.relevance.text import analyze, page_text
from focused.store.embedded import DB_FILE
from focused.store.reads import finished_crawls
from focused.topic.files import load_topic
from focused.topic.methods import topic_model, vector_model

__all__ = [
    "CRAWLERS",
    "DEFAULT_CRAWLERS",
    "DEFAULT_SETTINGS",
    "CrawlRun",
    "crawl",
    "fit_models",
    "main_text_view",
    "name_words",
    "one_line",
    "prepare",
    "slug",
    "thesaurus_from_examples",
]

# On top of the crawler's defaults for every crawl (``-s`` overrides them): a real parallel
# crawl that stays polite, spread over the hosts; the crawl's log goes to its folder.
DEFAULT_SETTINGS = {
    "CONCURRENT_REQUESTS": "4",
    "FOCUSED_HOST_DELAY": "0.5",
    "LOG_LEVEL": "WARNING",
}

# Crawler -> (its topic file, settings that make it that crawler; these win over ``-s``,
# which is meant for the project's own method). Breadth-first still classifies its pages
# (with the taxonomy), so its CPU per page includes that. The best-first crawlers are seed
# 002's, so without the online link model, anchor glosses or word vectors (their page R is the
# paper's tf-idf cosine); ``centroid`` is the same topic with the project's defaults. Crawlers
# with no settings of their own (ours, and the other relevance methods) crawl with the
# project's defaults: soft focus, the topic's link score, anchor glosses, word vectors.
# ``taxonomy-learning`` is ours with the
# online link model, ``taxonomy-reboost`` ours with Chakrabarti et al. 1999's re-boost of the top 10
# hubs' neighbours (off by default), ``taxonomy-no-gloss`` ours without anchor glosses,
# ``taxonomy-no-vectors`` ours without word vectors. The
# strategy crawlers (best-n-first, genetic, hmm, infospiders) are ours with another strategy;
# ``genetic-keywords`` is Zhang and Yuan 2012's set-up, the genetic strategy over the keyword vector
# space model. What each topic file holds: ``prepare``.
_NO_DISTILLER = {"FOCUSED_DISTILL_PAGES": "0", "FOCUSED_DISTILL_INTERVAL": "0"}
_SOFT = {
    "FOCUSED_STRATEGY": "soft",
    "FOCUSED_LINK_MODEL": "False",
    "FOCUSED_ANCHOR_GLOSS": "False",
    "FOCUSED_VECTORS": "False",
    **_NO_DISTILLER,
}
CRAWLERS: dict[str, tuple[str, dict[str, str]]] = {
    "taxonomy": ("taxonomy.toml", {}),
    "taxonomy-learning": ("taxonomy.toml", {"FOCUSED_LINK_MODEL": "True"}),
    "taxonomy-reboost": ("taxonomy.toml", {"FOCUSED_DISTILL_HUBS": "10"}),
    "taxonomy-no-gloss": ("taxonomy.toml", {"FOCUSED_ANCHOR_GLOSS": "false"}),
    "taxonomy-no-vectors": ("taxonomy.toml", {"FOCUSED_VECTORS": "false"}),
    "breadth-first": ("taxonomy.toml", {"FOCUSED_STRATEGY": "breadth-first"}),
    "best-first": ("best-first.toml", {**_SOFT, "FOCUSED_LINK_SCORE": "content"}),
    "best-first-anchor": ("best-first.toml", {**_SOFT, "FOCUSED_LINK_SCORE": "anchor"}),
    "best-first-both": ("best-first.toml", {**_SOFT, "FOCUSED_LINK_SCORE": "both"}),
    "centroid": ("best-first.toml", {}),
    "examples": ("examples.toml", {}),
    "positives": ("positives.toml", {}),
    "keywords": ("keywords.toml", {}),
    "keywords-name": ("keywords-name.toml", {}),
    "keywords-no-learning": ("keywords.toml", {"FOCUSED_LEARN": "false"}),
    "positives-no-learning": ("positives.toml", {"FOCUSED_LEARN": "false"}),
    "semantic": ("semantic.toml", {}),
    "thesaurus": ("thesaurus.toml", {}),
    # The papers' search strategies, on the taxonomy topic with the defaults otherwise.
    "best-n-first": ("taxonomy.toml", {"FOCUSED_STRATEGY": "best-n-first"}),
    "genetic": ("taxonomy.toml", {"FOCUSED_STRATEGY": "genetic"}),
    "genetic-keywords": ("keywords.toml", {"FOCUSED_STRATEGY": "genetic"}),
    "hmm": ("taxonomy.toml", {"FOCUSED_STRATEGY": "hmm"}),
    "infospiders": ("taxonomy.toml", {"FOCUSED_STRATEGY": "infospiders"}),
}
# What ``focused evaluate`` crawls unless --crawlers says otherwise (the oracle is added there).
DEFAULT_CRAWLERS = ("taxonomy", "breadth-first", "best-first")

# Terms of the thesaurus made from the training pages (``thesaurus_from_examples``).
THESAURUS_TERMS = 40


def slug(category: str) -> str:
    """A crawl name for a category: "Science/Biology/Birds" -> "science-biology-birds"."""
    return re.sub(r"[^a-z0-9]+", "-", category.lower()).strip("-")


@dataclass(frozen=True)
class CrawlRun:
    """What one crawl left: its exit code, the server's log entries, wall seconds, the crawl
    process's CPU seconds, its top hubs and its estimates of what is left to find."""

    crawler: str
    exit_code: int
    log: list[dict[str, Any]]
    seconds: float
    cpu_seconds: float
    log_span: float  # seconds from the first to the last response served
    hubs: list[str]  # the top hubs (``focused hubs``) of the crawl when it ended, best first
    estimates: list[dict[str, Any]]  # its coverage records (``crawl_estimates``), oldest first


def crawl_hubs(run_dir: Path) -> list[str]:
    """URLs of a finished crawl's top 10 hubs, as ``focused hubs`` names them: from the lists
    file the crawl wrote when it closed (in its FOCUSED_HOME, ``crawl_env``'s)."""
    for path in (run_dir / ".focused" / "lists").glob("*.json"):
        return [hub["url"] for hub in json.loads(path.read_text()).get("top_hubs", [])]
    return []


def crawl_estimates(run_dir: Path) -> list[dict[str, Any]]:
    """Every estimate of what is left to find that a finished crawl recorded, oldest first:
    its coverage log, in the Redis of its FOCUSED_HOME (``crawl_env``'s), which is stopped
    again after. None if it made none (FOCUSED_COVERAGE_PAGES=0) or never started Redis."""
    home = run_dir / ".focused"
    if not (home / DB_FILE).exists():
        return []
    with finished_crawls(home) as reader:
        names = reader.crawl_names()  # the one crawl of the home, if it got that far
        return reader.coverage_log(names[0]) if len(names) == 1 else []


def name_words(category: str) -> list[str]:
    """The words of a category's last path component, stopwords and digits dropped, as a
    person would name the topic: "Science/Physics/Space_Astronomy" -> ["space", "astronomy"],
    "Citizenship/Politics_and_government" -> ["politics", "government"]."""
    return list(dict.fromkeys(analyze(category.rstrip("/").rpartition("/")[2])))


def thesaurus_from_examples(
    positives: Sequence[str],
    negatives: Sequence[str],
    facet: str,
    *,
    n_terms: int = THESAURUS_TERMS,
    min_df: int = 3,
) -> str:
    """A thesaurus file (TOML) with one facet, named ``facet``, of the ``n_terms`` words that
    most set the ``positives`` (a topic's training pages) apart from the ``negatives`` (example
    pages of the other categories); no broader/narrower structure and no negative terms.

    This stands in for the thesaurus a person would write for the topic (Badia et al. 2006): the
    evaluation has no person, only the training pages. A word is scored by the z-score of the
    log-odds ratio of the share of positive and of negative pages that contain it (add-one
    smoothed; Monroe, Colaresi and Quinn 2008), which favours words that are both frequent on
    the topic and rare off it over words seen on two or three pages only; words on fewer than
    ``min_df`` positive pages are left out. Words are counted by their Porter stems (as the
    thesaurus model matches them) and written as the stem's most frequent plain word.
    """
    stems = CountVectorizer(analyzer=partial(analyze, stem=True), binary=True)
    counts = stems.fit_transform([*positives, *negatives]).tocsc()
    n_pos, n_neg = len(positives), len(negatives)
    pos = np.asarray(counts[:n_pos].sum(axis=0)).ravel() + 1.0
    neg = np.asarray(counts[n_pos:].sum(axis=0)).ravel() + 1.0
    rest_pos, rest_neg = n_pos + 2.0 - pos, n_neg + 2.0 - neg
    delta = np.log(pos / rest_pos) - np.log(neg / rest_neg)
    z = delta / np.sqrt(1 / pos + 1 / rest_pos + 1 / neg + 1 / rest_neg)
    z[(pos - 1 < min_df) | (delta <= 0)] = -np.inf
    vocabulary = stems.get_feature_names_out()
    best = [str(vocabulary[i]) for i in np.argsort(-z, kind="stable")[:n_terms] if z[i] > -np.inf]
    if not best:
        raise FocusedError(f"{facet}: no word sets the training pages apart from the others")
    surface: dict[str, Counter[str]] = {stem: Counter() for stem in best}
    for text in positives:
        for word in analyze(text):
            stemmed = analyze(word, stem=True)
            if len(stemmed) == 1 and stemmed[0] in surface:
                surface[stemmed[0]][word] += 1
    words = [surface[stem].most_common(1)[0][0] if surface[stem] else stem for stem in best]
    terms = "".join(f"    {json.dumps(word)},\n" for word in dict.fromkeys(words))
    return (
        f"# Made by focused evaluate from the topic's training pages: the {len(best)} words that"
        " most set them apart\n# from the other categories' example pages. It stands in for a"
        " thesaurus a person would write.\n\n"
        f"[facets.{json.dumps(facet)}]\nterms = [\n{terms}]\n"
    )


def one_line(exc: BaseException) -> str:
    """An exception as one line: its message's first line of text (NLTK's LookupError starts
    with a row of asterisks), prefixed by its type unless it is a FocusedError."""
    lines = [line.strip() for line in str(exc).splitlines()]
    text = next((line for line in lines if line.strip("*")), "") or repr(exc)
    return text if isinstance(exc, FocusedError) else f"{type(exc).__name__}: {text}"


def _link_tree(source: Path, target: Path, skip: Path) -> None:
    """Hard-link (else copy) every file under ``source`` into ``target``, keeping paths,
    except those under ``skip``."""
    for path in sorted(source.rglob("*")):
        if not path.is_file() or path.is_relative_to(skip):
            continue
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, destination)
        except OSError:
            shutil.copyfile(path, destination)


def main_text_view(bundle: Bundle, graph: WebGraph) -> tuple[Bundle, WebGraph]:
    """The bundle and graph as crawls with ``FOCUSED_CLASSIFY_TEXT = "main"`` classify them:
    every HTML page reduced to its title and main text (left whole where there is none, as
    the classifier does), so that the examples ``prepare`` writes from them are read the way
    the crawled pages are. About a minute for Wikispeedia's 4,604 pages."""
    pages, texts = dict(bundle.pages), dict(graph.texts)
    for key in graph.texts:
        page = bundle.pages[key]
        main = main_text(page.body.decode("utf-8", "replace")).text
        if not main:
            continue
        title = page_text(page.body).title
        body = f"<html><head><title>{escape(title)}</title></head><body><p>{escape(main)}</p>"
        pages[key] = replace(page, body=f"{body}</body></html>".encode())
        texts[key] = f"{title}\n{main}"
    return replace(bundle, pages=pages), WebGraph(graph.links, texts, graph.copies)


def seed_site_pages(bundle: Bundle, task: Task) -> list[str]:
    """The labelled pages on the sites (registered domains) of ``task``'s seeds, where its
    crawls start and their pages are counted, if the bundle has labelled pages elsewhere too
    (WebKB: the crawls start at Cornell and Texas, the examples come from the other
    universities); none if every page is on the seeds' sites (Wikispeedia, a generated web)."""
    domains = RegisteredDomains()
    sites = {domains(urlsplit(url).hostname or "") for url in task.seeds}
    on_sites = [key for key in bundle.labels if domains(urlsplit(key).hostname or "") in sites]
    return on_sites if len(on_sites) < len(bundle.labels) else []


def prepare(
    bundle: Bundle,
    graph: WebGraph,
    task: Task,
    folder: Path,
    crawlers: Sequence[str] = tuple(CRAWLERS),
) -> dict[str, str]:
    """Write the topic files of ``crawlers`` (names of CRAWLERS) and what they name into a
    fresh ``folder``, and fit their models there, so no crawl spends its CPU time on training.
    Return the crawlers that cannot run, each with the reason as one line: a method that
    cannot load (e.g. ``semantic`` without WordNet) does not stop the others.

    The crawlers learn from the topic's seeds and its training pages only, and from example
    pages of the other categories; never from the labels of any other page of the topic.

    - ``taxonomy/``: the label tree from ``taxonomy_from_labels``: the topic's subtree holds
      only its training pages, every other node up to 20 of its own pages; seeds, and pages
      of the seeds' sites where the bundle has others (:func:`seed_site_pages`), are never
      examples. ``examples/``: the training pages (HTML files that name their URL).
      ``negatives/``: the other categories' example pages of ``taxonomy/`` (hard links), i.e.
      all of it but the topic's subtree.
    - ``taxonomy.toml`` (taxonomy, breadth-first): method, taxonomy and good only; the
      project's defaults decide the rest. ``best-first.toml`` (best-first*): ``centroid`` of
      ``examples/``. ``examples.toml``: ``examples`` with ``negatives/``; ``positives.toml``:
      ``examples`` without negatives (a user with example pages only). ``keywords.toml``:
      the task's keywords, five a user would write from the category's name
      (``USER_KEYWORDS``; the name's words where there are none); ``keywords-name.toml``:
      the words of the category's name itself (:func:`name_words`); ``semantic.toml``: the
      name's words as ``terms``. ``thesaurus.toml``: the
      thesaurus ``topic.thesaurus.toml`` made by :func:`thesaurus_from_examples`.
    """
    unknown = [name for name in crawlers if name not in CRAWLERS]
    if unknown:
        raise FocusedError(f"unknown crawler {unknown[0]!r}; known: {', '.join(CRAWLERS)}")
    if folder.exists():
        shutil.rmtree(folder)  # a fresh folder is a fresh crawl (and a fresh Redis)
    folder.mkdir(parents=True)
    taxonomy_from_labels(
        bundle,
        folder / "taxonomy",
        topic_category=task.category,
        topic_examples=task.training,
        exclude=[*task.seeds, *seed_site_pages(bundle, task)],
    )
    examples = folder / "examples"
    examples.mkdir()
    for i, url in enumerate(task.training):
        page = bundle.page(url)
        if page is not None and graph.texts.get(graph.key(url)):
            (examples / f"{i:03d}.html").write_text(saved_page(page), encoding="utf-8")
    files = {CRAWLERS[name][0] for name in crawlers}
    if files & {"examples.toml", "thesaurus.toml"}:
        topic_dir = (folder / "taxonomy").joinpath(*task.category.split("/"))
        _link_tree(folder / "taxonomy", folder / "negatives", topic_dir)

    seeds = "".join(f"    {json.dumps(url)},\n" for url in task.seeds)
    head = f'name = "{slug(task.category)}"\nseeds = [\n{seeds}]\n\n[relevance]\n'  # soft focus
    words = json.dumps(name_words(task.category))
    keywords = json.dumps(list(task.keywords) or name_words(task.category))
    bodies = {
        "taxonomy.toml": f'method = "taxonomy"\ntaxonomy = "taxonomy"\n'
        f"good = [{json.dumps(task.category)}]\n",
        "best-first.toml": 'method = "centroid"\nexamples = "examples"\n',
        "examples.toml": 'method = "examples"\nexamples = "examples"\nnegatives = "negatives"\n',
        "positives.toml": 'method = "examples"\nexamples = "examples"\n',
        "keywords.toml": f'method = "keywords"\nkeywords = {keywords}\n',
        "keywords-name.toml": f'method = "keywords"\nkeywords = {words}\n',
        "semantic.toml": f'method = "semantic"\nterms = {words}\n',
        "thesaurus.toml": 'method = "thesaurus"\nthesaurus = "topic.thesaurus.toml"\n',
    }
    problems: dict[str, str] = {}
    for name in sorted(files):
        if name == "thesaurus.toml":
            facet = slug(task.category.rpartition("/")[2])
            try:
                text = thesaurus_from_examples(
                    read_examples(examples), read_examples(folder / "negatives"), facet
                )
            except Exception as exc:  # reported per crawler; the other crawlers still run
                problems[name] = one_line(exc)
                continue
            (folder / "topic.thesaurus.toml").write_text(text, encoding="utf-8")
        (folder / name).write_text(head + bodies[name], encoding="utf-8")
        if problem := fit_models(folder / name, folder):
            problems[name] = problem
    return {name: problems[CRAWLERS[name][0]] for name in crawlers if CRAWLERS[name][0] in problems}


def fit_models(topic_file: Path, folder: Path) -> str | None:
    """Fit the models of ``topic_file`` into ``folder/models``, where ``crawl`` has its crawls
    look, so that no crawl spends its CPU time on training; None when they are ready, else why
    not in one line (a method that cannot load, e.g. ``semantic`` without WordNet)."""
    try:
        topic = load_topic(topic_file)
        topic_model(topic, str(folder / "models"))
        vector_model(topic, str(folder / "models"), "auto")
    except Exception as exc:  # reported per crawler; the other crawlers still run
        return one_line(exc)
    return None


def crawl(
    bundle_path: Path,
    folder: Path,
    crawler: str,
    settings: dict[str, str],
    items: int,
    on_progress: Callable[[int], None] | None = None,
    *,
    topic: Path | None = None,
    key: Callable[[str], str] = url_key,
) -> CrawlRun:
    """Run one crawler in ``folder/crawls/CRAWLER/`` until ``items`` pages are served (2xx
    responses, each page once under ``key``: a bundle's :meth:`~Bundle.key`, so that another
    spelling of a page is no new page) or its frontier is empty, through a served bundle
    logging to ``served.jsonl`` there; then it is stopped as Ctrl-C stops it. A 404 is a fetch
    but no page: on a web where most links are dead, a budget of items would end the crawl
    after a few pages.

    The crawler is a name of CRAWLERS: its topic file in ``folder``, its settings over
    ``settings``. Given ``topic``, a topic file ``prepare`` does not write (such as the examples
    topic ``focused label`` writes from a crawl's pages) is crawled with ``settings`` alone,
    and ``crawler`` only names the run; fit its model into ``folder/models`` beforehand.

    CPU time is the crawl process's user + system time, from ``os.wait4`` on that one child
    (so parallel crawls do not mix): Scrapy start-up, fetching, parsing, classifying, the
    Redis client, and the embedded Redis server if the crawl stopped it. Not the web server
    (another process), not model training (done in ``prepare``). ``on_progress`` gets the
    number of pages served so far, about twice a second.
    """
    own: dict[str, str] = {}
    if topic is None:
        topic_file, own = CRAWLERS[crawler]
        topic = folder / topic_file
    run_dir = folder / "crawls" / crawler
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    log = run_dir / "served.jsonl"
    options = {**settings, **own}
    options["FOCUSED_MODELS_DIR"] = str(folder / "models")
    command = crawl_command(topic, options, run_dir / "feed.jsonl")
    started = time.perf_counter()
    with (
        ServedWeb(bundle_path, log_path=log) as web,
        (run_dir / "crawl.log").open("w", encoding="utf-8") as stderr,
    ):
        process = subprocess.Popen(
            command,
            env=crawl_env(web.proxy, run_dir / ".focused"),
            cwd=run_dir,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        served, stopping = _ServedPages(log, key), False
        try:
            while True:
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    break
                pages = served.count()
                if on_progress is not None:
                    on_progress(pages)
                if pages >= items and not stopping:
                    process.send_signal(signal.SIGINT)  # a graceful stop, as Ctrl-C
                    stopping = True
                time.sleep(0.5)
        except BaseException:
            process.kill()
            process.wait()
            raise
        process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    entries = read_log(log) if log.exists() else []
    span = entries[-1]["time"] - entries[0]["time"] if len(entries) > 1 else 0.0
    return CrawlRun(
        crawler,
        process.returncode,
        entries,
        round(seconds, 2),
        round(usage.ru_utime + usage.ru_stime, 2),
        round(span, 2),
        crawl_hubs(run_dir),
        crawl_estimates(run_dir),
    )


class _ServedPages:
    """The pages a served log holds so far (2xx responses, each page once under ``key``,
    robots.txt files aside), read on from where the last count stopped."""

    def __init__(self, log: Path, key: Callable[[str], str]):
        self.log, self.key = log, key
        self.offset = 0
        self.pages: set[str] = set()

    def count(self) -> int:
        if not self.log.exists():
            return 0
        with self.log.open("rb") as f:
            f.seek(self.offset)
            for line in f:
                if not line.endswith(b"\n"):
                    break  # the server is writing it: read it whole next time
                self.offset += len(line)
                entry = json.loads(line)
                if 200 <= entry["status"] < 300 and not entry["url"].endswith("/robots.txt"):
                    self.pages.add(self.key(entry["url"]))
        return len(self.pages)
