"""A crawl's name is its Redis key prefix: two topics never merge into one frontier unasked."""

from __future__ import annotations

import re
import subprocess

from focused.lab.webs.generate import generate_web
from focused.topic.files import load_topic


def test_generated_webs_get_topics_of_their_own_names(tmp_path):
    one = generate_web(tmp_path / "cycling web", n_pages=200, n_hosts=5, seed=1)
    two = generate_web(tmp_path / "other", n_pages=200, n_hosts=5, seed=2)
    assert load_topic(one / "topic.toml").name == "cycling-web"
    assert load_topic(two / "topic.toml").name == "other"


def test_a_crawl_is_not_resumed_from_another_topic_file_unless_asked(crawl, tmp_path):
    crawl.run(CLOSESPIDER_ITEMCOUNT=5)
    first = crawl.topic.resolve()
    other = tmp_path / "other-topic.toml"
    other.write_text(
        first.read_text().replace('taxonomy = "taxonomy"', f'taxonomy = "{first.parent}/taxonomy"')
    )
    crawl.topic = other
    result = subprocess.run(
        crawl.command("refused.jsonl", {"CLOSESPIDER_ITEMCOUNT": 5}),
        env=crawl.env(),
        cwd=crawl.workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "CRITICAL" in line]
    assert len(errors) == 1
    assert f"crawl '{crawl.name}' in this Redis was started from {first}, not {other}" in errors[0]
    assert not (crawl.workdir / "refused.jsonl").exists()  # nothing was fetched
    stats = crawl.run("resumed.jsonl", CLOSESPIDER_ITEMCOUNT=10, FOCUSED_RESUME_ANYWAY=True)
    assert stats["item_scraped_count"] >= 5
    assert f"Resuming crawl {crawl.name}, started from {first}, with {other}" in crawl.log(
        "resumed.jsonl"
    )


def test_an_edited_topic_file_is_refused_or_its_new_keywords_applied(crawl, web, tmp_path):
    """Same file, same name: what it decides is kept with the crawl. New keywords are applied
    (the queue scored again, said in one line); any other change is refused in one line."""
    crawl.topic = tmp_path / "keywords.toml"
    text = (web / "topic.toml").read_text()
    head = text[: text.index("[relevance]")] + '[relevance]\nmethod = "keywords"\n'
    crawl.topic.write_text(head + 'keywords = ["bicycle", "peloton"]\n')
    crawl.run(CLOSESPIDER_ITEMCOUNT=10)

    crawl.topic.write_text(head + 'keywords = ["bicycle", "peloton"]\nr0 = 0.5\n')
    assert crawl.start("refused.jsonl").wait(120) == 2
    errors = [line for line in crawl.log("refused.jsonl").splitlines() if "CRITICAL" in line]
    assert len(errors) == 1 and "Traceback" not in crawl.log("refused.jsonl")
    assert (
        f"crawl '{crawl.name}' in this Redis was started from {crawl.topic} with a different"
        f" relevance.r0: `focused reset {crawl.name}` starts it afresh"
    ) in errors[0]

    crawl.topic.write_text(head + 'keywords = ["bicycle", "peloton", "saddle", "derailleur"]\n')
    crawl.run("applied.jsonl", CLOSESPIDER_ITEMCOUNT=5)
    (line,) = [line for line in crawl.log("applied.jsonl").splitlines() if "edited" in line]
    assert f"Topic of crawl {crawl.name} edited (relevance.keywords): applied" in line
    assert int(re.search(r"\((\d+) moved\)", line)[1]) > 0  # the new words are in anchors
    crawl.run("same.jsonl", CLOSESPIDER_ITEMCOUNT=5)  # recorded: nothing to apply again
    assert "edited" not in crawl.log("same.jsonl")

    crawl.topic.write_text(head + 'keywords = ["bicycle"]\nr0 = 0.5\nlink_score = "both"\n')
    crawl.run("anyway.jsonl", CLOSESPIDER_ITEMCOUNT=5, FOCUSED_RESUME_ANYWAY=True)
    assert "(relevance.keywords, relevance.link_score, relevance.r0 changed)" in crawl.log(
        "anyway.jsonl"
    )
