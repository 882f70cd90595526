"""``focused label NAME --feed FEED``: the command side of the labelling page
(:mod:`focused.label`): its options, and the feed, seeds and output folder it is started with."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from focused.cli.options import add_server_arguments
from focused.errors import FocusedError
from focused.label import server
from focused.label.feed import boundary, label_pages, read_feed, seeds_of
from focused.store.keys import NAME_RE
from focused.topic.files import load_topic

SUFFIX = "-labelled"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "name", help=f"the crawl's name; the topic written is NAME{SUFFIX}, in NAME{SUFFIX}.toml"
    )
    parser.add_argument(
        "--feed",
        required=True,
        metavar="FEED",
        help="the crawl's feed (scrapy crawl ... -o FEED.jsonl); with -s FOCUSED_MAIN_TEXT=all "
        "every page has its text",
    )
    parser.add_argument(
        "--topic",
        metavar="TOPIC",
        help="the crawl's topic file: the new topic keeps it (its keywords or example pages, "
        "seeds, allowed_networks) and adds the marked pages (without it: the marked pages "
        "alone, the feed's pages of depth 0 as seeds)",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help=f"folder of the topic, its examples and the marks (default topics/NAME{SUFFIX}); "
        "marks kept there are read back",
    )
    add_server_arguments(parser, 8091, "shows the crawl's pages and takes marks from")


def run(args: argparse.Namespace) -> int:
    name = args.name + SUFFIX
    if not NAME_RE.match(name):
        raise FocusedError(f"not a crawl name (letters, digits, '_.-'): {args.name!r}")
    feed = Path(args.feed)
    items, not_json = read_feed(feed)
    if not_json:
        print(f"focused: {feed}: skipped {not_json} lines that are not JSON", file=sys.stderr)
    pages = label_pages(items)
    if not pages:
        raise FocusedError(
            f"{feed}: nothing to label: no page of its {len(items)} items is classified, not "
            "bad and has a text or a title"
        )
    seeds: list[str] = []
    networks: tuple[str, ...] = ()
    topic = None
    if args.topic:
        topic = load_topic(args.topic)
        seeds, networks = topic.seeds, topic.allowed_networks
    seeds = seeds or seeds_of(items)
    if not seeds:
        raise FocusedError(f"{feed}: no page of depth 0 to take as seeds: give --topic")
    out = Path(args.out) if args.out else Path("topics") / name
    try:
        labelling = server.Labelling(
            items, pages, boundary(items), out, name, seeds, networks, original=topic
        )
    except OSError as exc:
        raise FocusedError(f"{out}: cannot write the topic there ({exc})") from None
    return server.run(labelling, feed, args.host, args.port, args.allow_host)
