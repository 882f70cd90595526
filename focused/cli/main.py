"""The ``focused`` command: everything around a crawl (the crawl itself is ``scrapy crawl``).

It parses arguments and calls library code. Problems the user can fix are one line on stderr
and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

from focused.cli.options import (
    add_redis_arguments,
    add_server_arguments,
    add_settings_argument,
    parse_settings,
)
from focused.errors import FocusedError


def _client(args: argparse.Namespace):  # noqa: ANN202 - redis.Redis, imported lazily
    from focused.store.client import connect

    return connect(args.redis_url, args.home)


def _reader(args: argparse.Namespace):  # noqa: ANN202 - (redis.Redis, str), imported lazily
    """The client of a read-only command, which never makes an embedded Redis where none was,
    and the line that names the Redis it reads, printed here: on stderr with --json (stdout
    stays JSON), else as the first line."""
    from focused.store.client import connect_existing

    client, where = connect_existing(args.redis_url, args.home)
    line = f"reading {where}"
    print(line, file=sys.stderr if args.json else sys.stdout)
    return client, line


def add_train_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topic", help="topic file (TOML)")
    parser.add_argument(
        "--models",
        help="folder of saved models, as a crawl's FOCUSED_MODELS_DIR (default:"
        " $FOCUSED_HOME/models, else .focused/models)",
    )


def cmd_train(args: argparse.Namespace) -> int:
    from focused.store.embedded import home_dir
    from focused.topic.files import load_topic
    from focused.topic.methods import topic_model

    topic = load_topic(args.topic)
    models = args.models or str(home_dir() / "models")
    started = time.perf_counter()
    model = topic_model(topic, models)
    print(
        f"{topic.name}: {topic.method} model {type(model).__name__} ready in "
        f"{time.perf_counter() - started:.1f} s (saved under {models}/)"
    )
    return 0


def add_status_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="crawl name (the topic's name); none: list crawls")
    parser.add_argument("--json", action="store_true", help="one JSON object per refresh")
    parser.add_argument(
        "--watch",
        type=float,
        metavar="SECONDS",
        help="refresh every SECONDS until Ctrl-C (waits for a crawl that has not started yet)",
    )
    add_redis_arguments(parser)


def cmd_status(args: argparse.Namespace) -> int:
    from focused.monitor.snapshot import crawl_snapshot, format_status
    from focused.store.reads import Reader

    client, source = _reader(args)
    reader = Reader(client)
    if not args.name:
        names = reader.crawl_names()
        print("\n".join(names) if names else "no crawls in this Redis")
        return 0
    waiting = False
    while True:
        snapshot = crawl_snapshot(reader, args.name)
        if not snapshot and not args.watch:
            raise reader.no_such_crawl(args.name)
        if not snapshot:  # started before the crawl's first page: wait for it, said once
            if not waiting:
                print(
                    f"waiting for crawl {args.name!r} to start in this Redis (Ctrl-C stops)",
                    file=sys.stderr if args.json else sys.stdout,
                    flush=True,
                )
                waiting = True
        elif args.json:
            print(json.dumps(snapshot), flush=True)
        else:
            if args.watch:  # a terminal is cleared; a pipe gets one block per refresh
                top = "\033[2J\033[H" if sys.stdout.isatty() else "\n"
                print(f"{top}{time.strftime('%H:%M:%S')}, every {args.watch:g} s (Ctrl-C stops)")
                print(source)
            print(format_status(snapshot), flush=True)
        if not args.watch:
            return 0
        time.sleep(args.watch)


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="crawl name")
    parser.add_argument("--png", help="where to write the harvest curve (default NAME-harvest.png)")
    parser.add_argument("--json", action="store_true", help="the report as one JSON object")
    add_redis_arguments(parser)


def cmd_report(args: argparse.Namespace) -> int:
    from focused.monitor.snapshot import crawl_snapshot, format_report, plot_harvest
    from focused.store.reads import Reader

    client, _ = _reader(args)
    reader = Reader(client)
    report = crawl_snapshot(reader, args.name)
    if not report:
        raise reader.no_such_crawl(args.name)
    png = args.png or f"{args.name}-harvest.png"
    points = [(p["pages"], p["harvest_100"]) for p in report["curve"]]
    if points:
        plot_harvest(
            {args.name: points}, png, f"Harvest of {args.name} (share relevant, per 100 pages)"
        )
        report["plot"] = png
    print(json.dumps(report) if args.json else format_report(report))
    return 0


def add_seed_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="crawl name")
    parser.add_argument("urls", nargs="*", metavar="URL", help="http(s) URLs")
    parser.add_argument("--file", help="a file of URLs, one a line (# comments)")
    add_redis_arguments(parser)


def cmd_seed(args: argparse.Namespace) -> int:
    from focused.store.crawl import CrawlStore
    from focused.store.seeds import push_seeds
    from focused.topic.files import is_seed_url, url_lines

    urls = list(args.urls)
    if args.file:
        try:
            text = Path(args.file).read_text(encoding="utf-8")
        except OSError as exc:
            raise FocusedError(f"{args.file}: {exc.strerror}") from None
        urls += [url for _, url in url_lines(text)]  # the format of a topic's seeds_file
    bad = [url for url in urls if not is_seed_url(url)]
    if bad:
        raise FocusedError(f"not an http(s) URL: {bad[0]!r} (nothing was pushed)")
    if not urls:
        raise FocusedError("no URLs: give them as arguments or with --file")
    key, waiting = push_seeds(CrawlStore(_client(args), args.name), urls)
    print(
        f"pushed {len(urls)} URL{'s' * (len(urls) != 1)} to {key} ({waiting} waiting): a running "
        "crawl moves them into its frontier within seconds, else the next `scrapy crawl` of it at "
        "its start"
    )
    return 0


def add_dashboard_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser, 8090, "shows the crawls to")
    add_redis_arguments(parser)


def cmd_dashboard(args: argparse.Namespace) -> int:
    from focused.monitor import dashboard
    from focused.store.client import connect_existing
    from focused.store.reads import Reader

    client, where = connect_existing(args.redis_url, args.home)
    return dashboard.run(Reader(client), where, args.host, args.port, args.allow_host)


def add_exporter_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_arguments(parser, 9410, "shows the crawls to")
    add_redis_arguments(parser)


def cmd_exporter(args: argparse.Namespace) -> int:
    from focused.monitor import metrics
    from focused.store.client import connect_existing
    from focused.store.reads import Reader

    client, where = connect_existing(args.redis_url, args.home)
    return metrics.run(Reader(client), where, args.host, args.port, args.allow_host)


def add_reset_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="crawl name")
    parser.add_argument(
        "--keep-known",
        action="store_true",
        help="keep the fetched pages' text checksums and Last-Modified: the next run skips "
        "pages that come back unchanged",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="reset even while processes of the crawl are running (they then stop)",
    )
    add_redis_arguments(parser)


def cmd_reset(args: argparse.Namespace) -> int:
    from focused.errors import did_you_mean
    from focused.store.admin import has_keys, known_count, reset_crawl, running_processes
    from focused.store.crawl import crawl_names

    client = _client(args)
    if not has_keys(client, args.name):
        hint = did_you_mean(args.name, crawl_names(client))
        raise FocusedError(f"no crawl named {args.name!r} in this Redis{hint}")
    running = running_processes(client, args.name)
    if running and not args.force:
        raise FocusedError(
            f"crawl {args.name!r} has {len(running)} process(es) running ({', '.join(running)}): "
            "stop them first, or reset with --force (the running processes then stop)"
        )
    print(f"deleted {reset_crawl(client, args.name, args.keep_known)} keys of crawl {args.name!r}")
    if args.keep_known:
        known = known_count(client, args.name)
        print(f"kept {known} known pages: the next run skips those that come back unchanged")
    return 0


def add_hubs_arguments(parser: argparse.ArgumentParser) -> None:
    from focused.settings import defaults

    parser.add_argument("name", help="crawl name")
    parser.add_argument("--top", type=int, default=10, help="hubs and authorities to show")
    parser.add_argument(
        "--authority-share",
        type=float,
        default=defaults.FOCUSED_DISTILL_AUTHORITY_SHARE,
        help="share of the most relevant pages that are authorities (default %(default)s)",
    )
    parser.add_argument("--json", action="store_true", help="the result as one JSON object")
    add_redis_arguments(parser)


def cmd_hubs(args: argparse.Namespace) -> int:
    from focused.distill.job import crawl_frontier, distill
    from focused.distill.report import as_json, format_result

    client, _ = _reader(args)
    frontier = crawl_frontier(client, args.name)
    result = distill(frontier, authority_share=args.authority_share, boost=None, top=args.top)
    print(json.dumps(as_json(args.name, result)) if args.json else format_result(args.name, result))
    return 0


def add_distill_arguments(parser: argparse.ArgumentParser) -> None:
    """``hubs``'s arguments, and how the neighbours of the best hubs are raised."""
    from focused.settings import defaults

    add_hubs_arguments(parser)
    parser.add_argument(
        "--hubs",
        type=int,
        default=10,
        help="top hubs whose queued neighbours are raised (default %(default)s, as Chakrabarti "
        "et al. 1999; inside a crawl FOCUSED_DISTILL_HUBS, 0 by default)",
    )
    parser.add_argument(
        "--boost",
        type=float,
        default=defaults.FOCUSED_DISTILL_BOOST,
        help="score they are raised to (default %(default)s)",
    )


def cmd_distill(args: argparse.Namespace) -> int:
    from focused.distill.job import crawl_frontier, distill_locked
    from focused.distill.report import as_json, format_result

    frontier = crawl_frontier(_client(args), args.name)
    result = distill_locked(
        frontier,
        authority_share=args.authority_share,
        top_hubs=args.hubs,
        boost=args.boost,
        top=args.top,
    )
    if result is None:
        raise FocusedError(f"another process is distilling crawl {args.name!r}; try again later")
    if args.json:
        print(json.dumps(as_json(args.name, result)))
    else:
        print(format_result(args.name, result))
        print(
            f"re-boosted {result.reboosted} of {result.neglected} queued neighbours of the "
            f"top {args.hubs} hubs to {args.boost}"
        )
    return 0


def add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pages",
        type=int,
        default=1000,
        help="pages per crawler at most (default 1000); a crawl whose topic looks covered "
        "stops before",
    )
    parser.add_argument("--home", help="working folder (default: $FOCUSED_HOME, else .focused)")
    add_settings_argument(parser, "a Scrapy setting for both crawls (repeatable)")


def cmd_demo(args: argparse.Namespace) -> int:
    from focused.lab.demo import run_demo

    return run_demo(args.pages, args.home, parse_settings(args.set))


def _lazy(target: str) -> Callable[..., Any]:
    """The function named ``module:function`` (a command's argument builder or body), imported
    only when it is called: building the parser loads no command's code."""

    def call(*args: Any) -> Any:
        module, _, function = target.partition(":")
        return getattr(import_module(module), function)(*args)

    return call


def _command_words(argv: list[str] | None) -> list[str]:
    """The leading words of a command line (``web serve``...): the command that will run."""
    words = []
    for word in sys.argv[1:] if argv is None else argv:
        if word.startswith("-"):
            break
        words.append(word)
    return words


def version_line() -> str:
    """This package's version and those of the Scrapy and scrapy-redis it runs on, as installed
    (a range of them is supported, so a report of a problem needs all three)."""
    from importlib.metadata import version

    return (
        f"focused {version('focused')} (Scrapy {version('scrapy')},"
        f" scrapy-redis {version('scrapy-redis')})"
    )


@dataclass(frozen=True)
class Command:
    """A command of ``focused``: its words (``redis serve``), its help, the function that runs
    it and the one that adds its arguments to its parser. A group of commands (``redis``) has
    neither: its subcommands follow it."""

    words: str
    help: str
    run: Callable[[argparse.Namespace], int] | None = None
    arguments: Callable[[argparse.ArgumentParser], None] | None = None


COMMANDS = (
    Command(
        "train",
        "train (or load) the relevance model of a topic file",
        cmd_train,
        add_train_arguments,
    ),
    Command(
        "status",
        "queue depth and harvest of a crawl, from Redis",
        cmd_status,
        add_status_arguments,
    ),
    Command(
        "report",
        "census, num_tries, harvest curve and alarms of a crawl",
        cmd_report,
        add_report_arguments,
    ),
    Command(
        "dashboard",
        "a self-refreshing web page of every crawl in a Redis (reads Redis only)",
        cmd_dashboard,
        add_dashboard_arguments,
    ),
    Command(
        "exporter",
        "Prometheus metrics of every crawl in a Redis (reads Redis only)",
        cmd_exporter,
        add_exporter_arguments,
    ),
    Command(
        "hubs",
        "the best hubs and authorities of a crawl (reads only)",
        cmd_hubs,
        add_hubs_arguments,
    ),
    Command(
        "distill",
        "score hubs and re-boost their neglected neighbours, now",
        cmd_distill,
        add_distill_arguments,
    ),
    Command(
        "seed",
        "push seed URLs into a crawl, running or not (its start_urls list)",
        cmd_seed,
        add_seed_arguments,
    ),
    Command(
        "reset",
        "delete every key of a crawl (start it afresh)",
        cmd_reset,
        add_reset_arguments,
    ),
    Command(
        "export",
        "the pages a crawl has fetched, as JSON lines from Redis or a Parquet data set (any "
        "time; reads only)",
        _lazy("focused.cli.export:run"),
        _lazy("focused.cli.export:add_arguments"),
    ),
    Command(
        "schedule",
        "schedule one crawl per topic file on scrapyd",
        _lazy("focused.cli.scrapyd:run"),
        _lazy("focused.cli.scrapyd:add_arguments"),
    ),
    Command("redis", "a Redis server for crawls that share one"),
    Command(
        "redis serve",
        "run a Redis server in the foreground, with its data in FOCUSED_HOME; Ctrl-C saves "
        "and stops it",
        _lazy("focused.cli.servers:run_serve"),
        _lazy("focused.cli.servers:add_serve_arguments"),
    ),
    Command(
        "redis cluster",
        "run a Redis Cluster (3 masters) on this machine in the foreground, with its data in "
        "FOCUSED_HOME; Ctrl-C saves and stops it",
        _lazy("focused.cli.servers:run_cluster"),
        _lazy("focused.cli.servers:add_cluster_arguments"),
    ),
    Command("web", "offline webs: serve, generate or capture a bundle"),
    Command(
        "web serve",
        "serve a bundle on 127.0.0.1 (proxy and Host header)",
        _lazy("focused.cli.web:run_serve"),
        _lazy("focused.cli.web:add_serve_arguments"),
    ),
    Command(
        "web generate",
        "generate a synthetic topical web bundle (--hostile: with every hostile case;"
        " --traps: a link farm and traps)",
        _lazy("focused.cli.web:run_generate"),
        _lazy("focused.cli.web:add_generate_arguments"),
    ),
    Command(
        "web from-warc",
        "make a bundle of the HTTP responses in WARC files",
        _lazy("focused.cli.web:run_from_warc"),
        _lazy("focused.cli.web:add_from_warc_arguments"),
    ),
    Command(
        "web from-pages",
        "make a bundle of a folder of saved pages (e.g. wget -r)",
        _lazy("focused.cli.web:run_from_pages"),
        _lazy("focused.cli.web:add_from_pages_arguments"),
    ),
    Command("taxonomy", "taxonomy folders of example documents"),
    Command(
        "taxonomy from-labels",
        "build a taxonomy folder from a labelled bundle (labels.tsv)",
        _lazy("focused.cli.web:run_from_labels"),
        _lazy("focused.cli.web:add_from_labels_arguments"),
    ),
    Command(
        "label",
        "mark a crawl's pages good or bad on a web page, one key each; the marks become a "
        "topic of example pages",
        _lazy("focused.cli.label:run"),
        _lazy("focused.cli.label:add_arguments"),
    ),
    Command(
        "demo",
        "crawl a synthetic web: soft focus against breadth-first",
        cmd_demo,
        add_demo_arguments,
    ),
    Command(
        "evaluate",
        "compare crawlers on a labelled offline web (Srinivasan et al. 2005's framework)",
        _lazy("focused.cli.evaluate:run"),
        _lazy("focused.cli.evaluate:add_arguments"),
    ),
)
"""Every command, in the order ``focused --help`` lists them; a group before its subcommands."""


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of ``focused``; only the command named in ``argv`` gets its arguments (and
    imports the modules that define them), so ``focused --help`` and ``focused status`` start
    without loading scikit-learn, Scrapy or the evaluation code."""
    chosen = _command_words(argv)
    parser = argparse.ArgumentParser(
        prog="focused", description="A focused web crawler: tools around `scrapy crawl focused`."
    )
    parser.add_argument("--version", action="version", version=version_line())
    groups: dict[tuple[str, ...], argparse._SubParsersAction] = {
        (): parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    }
    for command in COMMANDS:
        words = command.words.split()
        sub = groups[tuple(words[:-1])].add_parser(
            words[-1], help=command.help, description=command.help
        )
        if command.run is None:
            groups[tuple(words)] = sub.add_subparsers(
                dest=f"{words[-1]}_command", required=True, metavar="COMMAND"
            )
        else:
            sub.set_defaults(run=command.run)
        if command.arguments is not None and words == chosen[: len(words)]:
            command.arguments(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    args = build_parser(argv).parse_args(argv)
    try:
        return args.run(args)
    except FocusedError as exc:
        print(f"focused: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`focused status NAME | head -3`): stop quietly. Python flushes
        # stdout again at exit, so point it at /dev/null first (the `signal` docs' recipe).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
