"""``focused schedule``: one scrapyd job per topic, each crawl on its own Redis key prefix.

scrapyd runs ``scrapy crawl focused`` with every extra ``schedule.json`` parameter as a spider
argument (``-a key=value``). Each job gets two: ``topic_toml``, the topic file's text (checked
here first), and ``topic``, the file's absolute path, whose folder anchors the relative paths
in it. So a node runs the topic as it was when scheduled, and needs only the folders the topic
names (taxonomy, seeds file) at the same absolute paths, e.g. on a shared filesystem. Redis is
the node's ``FOCUSED_REDIS_URL`` (its environment) unless ``-s FOCUSED_REDIS_URL=...`` is given.
"""

from __future__ import annotations

import argparse
import base64
import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

from focused.errors import FocusedError
from focused.options import add_settings_argument, parse_settings
from focused.topic import Topic, load_topic

DEFAULT_URL = "http://127.0.0.1:6800"


def _check_names(topics: list[Topic], settings: Mapping[str, str]) -> None:
    """Two jobs on one key prefix would merge two crawls into one frontier: refuse."""
    if len(topics) > 1 and settings.get("FOCUSED_CRAWL"):
        raise FocusedError("FOCUSED_CRAWL would put every topic on one key prefix; drop it")
    names: dict[str, Path] = {}
    for topic in topics:
        if topic.name in names:
            raise FocusedError(
                f"{names[topic.name]} and {topic.path} have the same name {topic.name!r}: "
                "each crawl needs its own"
            )
        names[topic.name] = topic.path


def _post(url: str, fields: list[tuple[str, str]]) -> dict:
    """POST a form to scrapyd; user:password in the URL becomes HTTP basic auth."""
    parts = urlsplit(url)
    headers = {}
    if parts.username:
        token = f"{parts.username}:{parts.password or ''}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(token).decode()
        parts = parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else ""))
    request = urllib.request.Request(
        urlunsplit(parts), data=urlencode(fields).encode(), headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise FocusedError(f"scrapyd at {parts.netloc}: {exc}") from exc
    if answer.get("status") != "ok":  # scrapyd reports errors with HTTP 200 and a message
        raise FocusedError(f"scrapyd at {parts.netloc}: {answer.get('message', answer)}")
    return answer


def schedule_topics(
    scrapyd_url: str,
    project: str,
    topic_paths: Iterable[str | Path],
    settings: Mapping[str, str],
) -> list[str]:
    """Schedule one ``focused`` job per topic file on scrapyd; returns the job ids.

    Every topic is checked before anything is posted, so a typo schedules nothing. Job ids
    start with the crawl name, so scrapyd's job list and log files say which topic is which.
    """
    topics = [load_topic(path) for path in topic_paths]
    _check_names(topics, settings)
    endpoint = urljoin(scrapyd_url.rstrip("/") + "/", "schedule.json")
    jobs = []
    for topic in topics:
        fields = [
            ("project", project),
            ("spider", "focused"),
            ("jobid", f"{topic.name}-{uuid.uuid4().hex[:12]}"),
            ("topic", str(topic.path)),
            ("topic_toml", topic.path.read_text()),
            *(("setting", f"{key}={value}") for key, value in settings.items()),
        ]
        jobs.append(_post(endpoint, fields)["jobid"])
    return jobs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topics", nargs="+", metavar="TOPIC", help="topic files (TOML)")
    parser.add_argument(
        "--scrapyd", default=DEFAULT_URL, metavar="URL", help=f"scrapyd URL (default {DEFAULT_URL})"
    )
    parser.add_argument(
        "--project", default="focused", help="scrapyd project deployed by scrapyd-deploy"
    )
    add_settings_argument(parser, "a Scrapy setting for every job (repeatable)")


def run(args: argparse.Namespace) -> int:
    for job in schedule_topics(args.scrapyd, args.project, args.topics, parse_settings(args.set)):
        name = job.rsplit("-", 1)[0]
        print(f"{name}: scheduled job {job} on {args.scrapyd} (focused status {name} --watch 5)")
    return 0
