"""``focused schedule``: one scrapyd job per topic, each crawl on its own Redis key prefix.

scrapyd runs ``scrapy crawl focused`` with every extra ``schedule.json`` parameter as a spider
argument (``-a key=value``). Each job gets two: ``topic_toml``, the topic file's text (checked
here first), and ``topic``, the file's absolute path, whose folder anchors the relative paths
in it. So a node runs the topic as it was when scheduled, and needs only the folders the topic
names (taxonomy, seeds file) at the same absolute paths, e.g. on a shared filesystem. Redis is
the node's ``FOCUSED_REDIS_URL`` (its environment) unless ``--redis-url`` (or
``-s FOCUSED_REDIS_URL=...``) names one for the jobs, which the printed hint then reads too.
"""

from __future__ import annotations

import argparse
import base64
import json
import shlex
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

from focused.cli.options import add_settings_argument, parse_settings
from focused.errors import FocusedError
from focused.topic.files import Topic, load_topic

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


def _form(url: str, fields: list[tuple[str, str]]) -> urllib.request.Request:
    """A form POST to scrapyd; user:password in the URL becomes HTTP basic auth."""
    parts = urlsplit(url)
    headers = {}
    if parts.username:
        token = f"{parts.username}:{parts.password or ''}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(token).decode()
        parts = parts._replace(netloc=parts.netloc.rpartition("@")[2])  # host:port as written
    return urllib.request.Request(
        urlunsplit(parts), data=urlencode(fields).encode(), headers=headers
    )


def _post(url: str, fields: list[tuple[str, str]]) -> dict:
    """POST a form (:func:`_form`) to scrapyd; its answer."""
    request = _form(url, fields)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            answer = json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise FocusedError(f"scrapyd at {request.host}: {exc}") from exc
    if answer.get("status") != "ok":  # scrapyd reports errors with HTTP 200 and a message
        raise FocusedError(f"scrapyd at {request.host}: {answer.get('message', answer)}")
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
    parser.add_argument(
        "--redis-url",
        metavar="URL",
        help="the Redis the jobs use, sent to them as FOCUSED_REDIS_URL (default: the node's own "
        "FOCUSED_REDIS_URL)",
    )
    add_settings_argument(parser, "a Scrapy setting for every job (repeatable)")


def jobs_redis(redis_url: str | None, settings: dict[str, str]) -> str | None:
    """The Redis URL the jobs are sent, from ``--redis-url`` or ``-s FOCUSED_REDIS_URL``; None
    when neither names one (the jobs use the node's); ``settings`` gets it."""
    url = redis_url or settings.get("FOCUSED_REDIS_URL") or None
    if redis_url and settings.get("FOCUSED_REDIS_URL", redis_url) != redis_url:
        raise FocusedError("--redis-url and -s FOCUSED_REDIS_URL name two Redis servers: give one")
    if url is None:
        return None
    if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
        raise FocusedError(f"--redis-url {url}: not a Redis URL (redis://host:6379/0)")
    settings["FOCUSED_REDIS_URL"] = url
    return url


def watch_hint(name: str, redis_url: str | None) -> str:
    """The command that watches a scheduled crawl: on the jobs' Redis when it is known, else
    with a place for it."""
    if redis_url is None:
        return f"focused status {name} --redis-url URL --watch 5, URL being the node's Redis"
    return f"focused status {name} --redis-url {shlex.quote(redis_url)} --watch 5"


def run(args: argparse.Namespace) -> int:
    settings = parse_settings(args.set)
    redis_url = jobs_redis(args.redis_url, settings)
    for job in schedule_topics(args.scrapyd, args.project, args.topics, settings):
        name = job.rsplit("-", 1)[0]
        print(f"{name}: scheduled job {job} on {args.scrapyd} ({watch_hint(name, redis_url)})")
    return 0
