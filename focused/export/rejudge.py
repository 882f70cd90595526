"""A crawl's pages judged again by its final judge: ``focused export NAME --rejudge``.

A light topic refits itself as the crawl goes (:mod:`focused.extensions.learner`), so the first
pages were judged knowing least. The final judge is the crawl's own judge made again
(:func:`final_judge`: the topic file the crawl recorded in ``meta``, checked to decide what it
decided then, the settings its judge was made from, the threshold it recorded), refitted from
the last generation the learner published, as every process of the crawl refitted its own.

:class:`Rejudging` judges each page the WARC files describe, from its response record where
one is kept (the page's text extracted as the spider extracts it), else from what its
metadata record holds where it holds the page's main text (FOCUSED_MAIN_TEXT: the relevant
pages by default, every page with ``all``): its title and main text. Only a
page whose response record is kept may be called relevant: under FOCUSED_WARC ``relevant``
those are the pages relevant or undecided at crawl time (:func:`focused.topic.judge.undecided`),
so the WARC files hold every page the final verdict calls relevant; a page below the margin
stays not relevant whatever its metadata record's text scores (counted as held back). Pages
the WARC files do not describe or give no text of, and pages the crawl did not classify (bad,
duplicates), keep their crawl-time verdict.

Each row gets the final ``relevance``, ``relevant`` and ``category``, the crawl's beside them
(``crawl_relevance``, ``crawl_relevant``, ``crawl_category``) and ``judged_from``
(``response``, ``metadata``, or None: not judged again).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy.http import HtmlResponse
from scrapy.settings import Settings

from focused.errors import FocusedError
from focused.items import Page
from focused.links.extract import parsed
from focused.relevance.content import main_text
from focused.relevance.language import kept_out
from focused.relevance.learned import LearnedTopic
from focused.relevance.text import page_text
from focused.settings import defaults
from focused.settings.check import check_settings
from focused.spiders.focused import plausible, redecoded
from focused.topic.files import load_topic
from focused.topic.judge import Judge
from focused.topic.plan import CrawlPlan

if TYPE_CHECKING:
    from focused.export.warcpages import KeptResponse
    from focused.store.reads import Reader
    from focused.topic.judge import Verdict

RESPONSE, METADATA = "response", "metadata"


@dataclass(frozen=True)
class FinalJudge:
    """A crawl's final judge, its plan, and the learner's generation it was refitted from
    (0: not refitted)."""

    judge: Judge
    plan: CrawlPlan
    generation: int
    settings: Settings
    recorded: bool  # whether the crawl recorded the settings its judge was made from


def final_judge(
    reader: Reader, crawl: str, overrides: Mapping[str, str], home: str | None = None
) -> FinalJudge:
    """The crawl's final judge (module doc); ``overrides``: settings given again (``-s``),
    over those the crawl recorded. A FocusedError (one line) when the crawl's topic cannot be
    recovered: no topic file recorded, the file gone or unreadable, or edited since so that it
    decides otherwise."""
    meta = reader.meta(crawl)
    topic_file = meta.get("topic")
    if not topic_file:
        raise FocusedError(f"--rejudge: crawl {crawl!r} recorded no topic file to judge it by")
    try:
        topic = load_topic(topic_file)
    except FocusedError as exc:
        raise FocusedError(f"--rejudge: the topic of crawl {crawl!r} is lost: {exc}") from None
    if "decisions" in meta:
        then, now = json.loads(meta["decisions"]), topic.decisions()
        changed = sorted(
            name for name in then.keys() | now.keys() if then.get(name) != now.get(name)
        )
        if changed:
            raise FocusedError(
                f"--rejudge: the topic file {topic_file} of crawl {crawl!r} was edited since"
                f" the crawl ({', '.join(changed)} changed): its judge cannot be made again"
            )
    settings = Settings()
    settings.setmodule(defaults, priority="default")
    if home is not None:
        settings.set("FOCUSED_HOME", home, priority="project")
    recorded = "judge_settings" in meta
    settings.setdict(json.loads(meta.get("judge_settings", "{}")), priority="project")
    if meta.get("threshold") and not recorded:  # a crawl that recorded only its threshold
        settings.set("FOCUSED_RELEVANT_THRESHOLD", meta["threshold"], priority="project")
    settings.setdict(dict(overrides), priority="cmdline")
    check_settings(settings)
    plan = CrawlPlan.from_settings(settings, topic)
    judge = Judge.from_plan(plan, settings)
    generation = reader.generation(crawl) if plan.learns else None
    if generation is not None:
        learned = LearnedTopic(threshold=plan.threshold)
        judge.refitted(learned.fit_examples(generation.texts, generation.labels))
    return FinalJudge(judge, plan, generation.number if generation else 0, settings, recorded)


def response_page(
    url: str, response: KeptResponse, max_garbled: float, depth: int = 1
) -> Page | None:
    """The page as the spider made it of its response (title, whole text, HTML); None for one
    the spider found bad (text it could not decode, no text)."""
    html = HtmlResponse(url, status=response.status, headers=response.headers, body=response.body)
    if not plausible(html, max_garbled):
        fixed = redecoded(html, max_garbled)
        if fixed is None:
            return None
        html = fixed
    text = page_text(parsed(html)[0])
    if not text.text and not text.title:
        return None
    return Page(url, response.status, 0.0, depth, title=text.title, text=text.text, html=html.text)


def metadata_page(row: Mapping[str, Any]) -> Page | None:
    """The page as its metadata record has it: its title and main text; None without a main
    text (a title alone is not what the judge reads, and scores far from the page's text)."""
    main = row.get("main_text")
    if not main:
        return None
    return Page(
        row["url"],
        row.get("status"),
        0.0,
        _depth(row),
        title=row.get("title"),
        text=main,
        main_text=main,
    )


def _depth(row: Mapping[str, Any]) -> int:
    """A row's depth (1 where the WARC files do not say): the seeds, depth 0, are the pages the
    calibration knows to be the topic's."""
    depth = row.get("depth")
    return depth if isinstance(depth, int) else 1


@dataclass
class Counts:
    """What re-judging did: pages judged from each source, pages left as the crawl judged them,
    the relevant ones before and after, and the verdicts that changed."""

    from_response: int = 0
    from_metadata: int = 0
    not_rejudged: int = 0
    relevant_before: int = 0
    relevant_after: int = 0
    became_relevant: int = 0
    stopped_relevant: int = 0
    held_back: int = 0  # relevant by the final judge, but no response record kept


class Rejudging:
    """Judges rows of a crawl's pages again (module doc): :meth:`rows`, then ``counts``."""

    def __init__(
        self,
        judge: Judge,
        *,
        languages: tuple[str, ...] = (),
        max_garbled: float = defaults.FOCUSED_MAX_REPLACEMENT_SHARE,
    ):
        self.judge = judge
        self.languages = languages  # a page in another is refused, as the crawl refused it
        self.max_garbled = max_garbled  # FOCUSED_MAX_REPLACEMENT_SHARE, as the spider reads it
        self.counts = Counts()

    def rows(self, rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The rows with their final verdicts. Two passes: every page is judged, then the
        judge's calibration is fitted on all of them (the seeds, depth 0, as the pages known
        to be the topic's) and its cut decides; so the rows are held in memory until then."""
        judged = [self.judged(row) for row in rows]
        calibration = self.judge.calibration
        if calibration is not None:
            pages = [(v.relevance, row) for row, v, _ in judged if v is not None]
            calibration.fit(
                [r for r, row in pages if row.get("depth") != 0],
                [r for r, row in pages if row.get("depth") == 0],
            )
        for row, verdict, source in judged:
            yield self.decided(row, verdict, source)

    def judged(self, row: dict[str, Any]) -> tuple[dict[str, Any], Verdict | None, str | None]:
        """The row, with the crawl's verdict set beside, and the final judge's verdict on its
        page and where the page's text came from (None, None: not judged again)."""
        described = "response" in row  # by the WARC files
        response: KeptResponse | None = row.pop("response", None)
        before = row.get("relevance"), row.get("relevant"), row.get("category")
        row["crawl_relevance"], row["crawl_relevant"], row["crawl_category"] = before
        row["judged_from"] = None
        if before[0] is None:  # not classified by the crawl: not judged again
            return row, None, None
        page, source = None, None
        depth = _depth(row)
        if response is not None:
            page, source = response_page(row["url"], response, self.max_garbled, depth), RESPONSE
        elif described:
            page, source = metadata_page(row), METADATA
        if page is None:
            return row, None, None
        if self.judge.main_text and source == RESPONSE:
            page.main_text = main_text(page.html).text
        return row, self.verdict(page, row.get("language")), source

    def decided(
        self, row: dict[str, Any], verdict: Verdict | None, source: str | None
    ) -> dict[str, Any]:
        """The row with its final verdict: the calibration's cut on the final probability where
        it fitted, else the final judge's own; relevant only with a response record kept."""
        counts = self.counts
        before = row["crawl_relevant"]
        counts.relevant_before += bool(before)
        if verdict is None:
            counts.not_rejudged += row["crawl_relevance"] is not None
            counts.relevant_after += bool(before)
            return row
        calibration = self.judge.calibration
        probability, relevant = verdict.relevance, verdict.relevant
        if calibration is not None and calibration.fitted_ and calibration.cut_ is not None:
            probability = round(float(calibration.probability([verdict.relevance])[0]), 6)
            relevant = probability >= calibration.cut_ and self.judge.supported(
                verdict.first_relevance
            )
        kept = relevant and source == RESPONSE
        counts.held_back += relevant and not kept
        if source == RESPONSE:
            counts.from_response += 1
        else:
            counts.from_metadata += 1
        counts.relevant_after += kept
        counts.became_relevant += kept and not before
        counts.stopped_relevant += bool(before) and not kept
        row.update(
            relevance=verdict.relevance,
            probability=probability,
            relevant=kept,
            category=verdict.category,
            judged_from=source,
        )
        return row

    def verdict(self, page: Page, language: str | None) -> Verdict:
        """The final judge's verdict, refused for a page in a language the topic keeps out."""
        verdict = self.judge(page)
        return verdict.refused() if kept_out(language, self.languages) else verdict

    def summary(self, crawl: str, generation: int) -> list[str]:
        """The lines that say what re-judging did."""
        c = self.counts
        by = f"its topic refitted at generation {generation}" if generation else "its own judge"
        lines = [
            f"re-judged the pages of crawl {crawl!r} with {by}: {c.from_response} from their"
            f" response records, {c.from_metadata} from their metadata records"
            f" ({c.not_rejudged} classified pages kept their crawl-time verdict: the WARC files"
            " keep neither their response nor their main text)",
            f"verdicts changed: {c.became_relevant} became relevant, {c.stopped_relevant} stopped"
            f" being relevant ({c.relevant_before} relevant at crawl time, {c.relevant_after}"
            " now)",
        ]
        if c.held_back:
            lines.append(
                f"{c.held_back} pages reached the threshold from their metadata records but"
                " have no response record kept: left not relevant"
            )
        return lines
