"""``focused web ...`` and ``focused taxonomy from-labels``: the command side of the offline
webs (:mod:`focused.lab.webs`). Each command imports its library when it runs, so that
``focused web serve`` starts without NumPy or the generator."""

from __future__ import annotations

import argparse
import collections
from pathlib import Path
from typing import Any


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``serve`` arguments: BUNDLE, --port, --log."""
    parser.add_argument("bundle", help="bundle folder or its pages.jsonl.gz")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--log", metavar="FILE", help="append one JSON line per request here")


def run_serve(args: argparse.Namespace) -> int:
    """Serve as ``args`` say until interrupted; return the exit code."""
    from focused.lab.webs.server import serve_forever

    serve_forever(args.bundle, port=args.port, log_path=args.log)
    return 0


def add_generate_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``generate`` arguments: FOLDER, --pages, --hosts, --seed, --examples, --force,
    --hostile, --traps, --farm-domain, --slow-hosts, --js, --near-copies."""
    from focused.lab.webs.generate import HOSTILE_FILE
    from focused.lab.webs.hostile import FARM

    parser.add_argument("folder", help="where to write the web (created if missing)")
    parser.add_argument("--pages", type=int, default=2000, help="number of pages")
    parser.add_argument("--hosts", type=int, default=100, help="number of hosts")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument(
        "--examples", type=int, default=20, help="example documents per category in taxonomy/"
    )
    parser.add_argument("--force", action="store_true", help="replace a web already there")
    parser.add_argument(
        "--hostile",
        action="store_true",
        help=f"add every hostile case a crawler must survive (listed in {HOSTILE_FILE})",
    )
    parser.add_argument(
        "--traps",
        action="store_true",
        help="add a link farm on wildcard subdomains and traps on a relevant host, which a"
        f" crawl must not let take it over (listed in {HOSTILE_FILE}; with or without --hostile)",
    )
    parser.add_argument(
        "--farm-domain",
        default=FARM,
        metavar="NAME",
        help=f"put the --traps link farm's hosts under NAME (default {FARM}; a private suffix of"
        " the Public Suffix List such as netlify.app makes each host a domain of its own; an IP"
        " network such as 2a05:d018::/64 puts them on its addresses; NAME,NAME,... spreads them"
        " over several names)",
    )
    parser.add_argument(
        "--slow-hosts",
        type=int,
        default=0,
        metavar="N",
        help="add N hosts whose page declares 100,000 bytes and sends a byte a second",
    )
    parser.add_argument(
        "--slow-rate",
        type=int,
        default=1,
        metavar="BYTES",
        help="the --slow-hosts pages send BYTES a second (default 1; 1100 trickles just above"
        " the default FOCUSED_MIN_DOWNLOAD_RATE)",
    )
    parser.add_argument(
        "--js",
        action="store_true",
        help="build the pages of half the hosts (and the demo seeds') in JavaScript, from a JSON"
        " file per page, for crawls that render pages (FOCUSED_RENDER)",
    )
    parser.add_argument(
        "--near-copies",
        type=int,
        default=0,
        metavar="N",
        help="add three near-copies (a mirror, a printable version, a 5%% edit) of N pages on the"
        " demo topic, listed in near_copies.json",
    )
    parser.add_argument(
        "--shared-block",
        type=int,
        default=0,
        metavar="N",
        help="with --near-copies: put one long block of text (1,000 words) inside the article of"
        " N other pages on the demo topic, distinct pages that are no copies (shared_block.json)",
    )
    parser.add_argument(
        "--languages",
        metavar="CODES",
        help="write pages in these languages, by share: en,de,fr (equal shares) or"
        " en=0.6,de=0.2,fr=0.2 (each page's language in languages.json; not with --hostile,"
        " --traps, --slow-hosts, --js or --near-copies)",
    )


def run_generate(args: argparse.Namespace) -> int:
    """Generate the web ``args`` describe (with the hostile cases on ``--hostile``, the farm
    and traps on ``--traps``, slow hosts on ``--slow-hosts``, hosts built by scripts on
    ``--js``, near-copies on ``--near-copies``, pages in several languages on ``--languages``),
    print where it is and return the exit code."""
    others = args.hostile or args.traps or args.slow_hosts or args.js or args.near_copies
    if others and args.languages:
        from focused.errors import FocusedError

        raise FocusedError(
            "--languages: not with --hostile, --traps, --slow-hosts, --js or --near-copies"
        )
    if args.near_copies:
        return _run_generate_near_copies(args)
    if args.hostile or args.traps or args.slow_hosts:
        return _run_generate_hostile(args)
    if args.js:
        return _run_generate_scripted(args)
    from focused.lab.webs.generate import generate_web, read_languages

    languages = read_languages(args.languages) if args.languages else None
    folder = generate_web(
        args.folder,
        **_web_options(args),
        languages=languages,
    )
    in_languages = f" in {', '.join(languages)}" if languages else ""
    print(
        f"wrote {args.pages} pages{in_languages} on {args.hosts} hosts to {folder}"
        f" (demo topic: {folder / 'topic.toml'})"
    )
    return 0


def _web_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options every generated web takes: its size, seed, examples and overwriting."""
    return {
        "n_pages": args.pages,
        "n_hosts": args.hosts,
        "seed": args.seed,
        "n_examples": args.examples,
        "overwrite": args.force,
    }


def _run_generate_scripted(args: argparse.Namespace) -> int:
    """``focused web generate --js``: write the web built by scripts, print where it is."""
    import json

    from focused.lab.webs.scripted import HOSTS_FILE, generate_scripted_web

    folder = generate_scripted_web(
        args.folder,
        **_web_options(args),
    )
    n_scripted = len(json.loads((folder / HOSTS_FILE).read_text())["scripted"])
    print(
        f"wrote {args.pages} pages on {args.hosts} hosts, {n_scripted} of them built by scripts,"
        f" to {folder} (hosts: {folder / HOSTS_FILE}; demo topic: {folder / 'topic.toml'})"
    )
    return 0


def _run_generate_hostile(args: argparse.Namespace) -> int:
    """``focused web generate --hostile``/``--traps``: write the hostile web, print where it
    is."""
    import json

    from focused.lab.webs.generate import HOSTILE_FILE
    from focused.lab.webs.hostile import generate_hostile_web

    folder = generate_hostile_web(
        args.folder,
        **_web_options(args),
        hostile=args.hostile,
        traps=args.traps,
        farm_domain=[name for name in args.farm_domain.split(",") if name],
        slow_hosts=args.slow_hosts,
        slow_rate=args.slow_rate,
    )
    n_cases = len(json.loads((folder / HOSTILE_FILE).read_text())["cases"])
    print(
        f"wrote {args.pages} pages on {args.hosts} hosts and {n_cases} hostile cases to {folder}"
        f" (cases: {folder / HOSTILE_FILE}; demo topic: {folder / 'topic.toml'})"
    )
    return 0


def _run_generate_near_copies(args: argparse.Namespace) -> int:
    """``focused web generate --near-copies N``: write the web with planted near-copies, print
    where it is."""
    from focused.lab.webs.nearcopies import NEAR_COPIES_FILE, generate_near_copy_web

    folder = generate_near_copy_web(
        args.folder,
        originals=args.near_copies,
        shared_block=args.shared_block,
        **_web_options(args),
    )
    sharing = f", a block shared by {args.shared_block} more" if args.shared_block else ""
    print(
        f"wrote {args.pages} pages on {args.hosts} hosts and near-copies of {args.near_copies}"
        f"{sharing} to {folder} (copies: {folder / NEAR_COPIES_FILE}; demo topic:"
        f" {folder / 'topic.toml'})"
    )
    return 0


def _summary(out: Path, stats: collections.Counter[str], source: str) -> str:
    skipped = ", ".join(
        f"{n} {why.removeprefix('skipped/')}"
        for why, n in sorted(stats.items())
        if why.startswith("skipped/")
    )
    extra = f"; skipped {skipped}" if skipped else ""
    if stats["replaced"]:
        extra += f"; {stats['replaced']} replaced by a later capture"
    return f"wrote {stats['pages']} pages to {out} (from {source}{extra})"


def add_from_warc_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``web from-warc`` arguments: FILES..., -o."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="WARC files (gzip'd or not)")
    parser.add_argument("-o", "--output", required=True, metavar="BUNDLE", help="bundle folder")


def run_from_warc(args: argparse.Namespace) -> int:
    """Convert the WARC files ``args`` name, print a summary and return the exit code."""
    from focused.lab.webs.capture import bundle_from_warc

    stats: collections.Counter[str] = collections.Counter()
    out = bundle_from_warc(args.files, args.output, stats=stats)
    print(_summary(out, stats, f"{stats['records']} records"))
    return 0


def add_from_pages_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``web from-pages`` arguments: FOLDER, -o, --base-url."""
    parser.add_argument("folder", help="saved pages: a wget -r tree (host/path) or any folder")
    parser.add_argument("-o", "--output", required=True, metavar="BUNDLE", help="bundle folder")
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="URL of the folder's root (needed unless its first level is host names)",
    )


def run_from_pages(args: argparse.Namespace) -> int:
    """Convert the saved pages ``args`` name, print a summary and return the exit code."""
    from focused.lab.webs.capture import bundle_from_folder

    stats: collections.Counter[str] = collections.Counter()
    out = bundle_from_folder(args.folder, args.output, base_url=args.base_url, stats=stats)
    print(_summary(out, stats, f"{stats['files']} files"))
    return 0


def add_from_labels_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``taxonomy from-labels`` arguments: BUNDLE, -o, --per-category, --topic, --seed."""
    parser.add_argument("bundle", help="labelled bundle folder (with labels.tsv)")
    parser.add_argument("-o", "--output", required=True, metavar="FOLDER", help="new folder")
    parser.add_argument(
        "--per-category", type=int, default=20, metavar="N", help="examples per category node"
    )
    parser.add_argument(
        "--topic",
        metavar="CATEGORY",
        help="a topic of the bundle's topics.json: its subtree gets only the topic's training"
        " pages, and its seeds are never examples",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the example sampling")


def run_from_labels(args: argparse.Namespace) -> int:
    """Build the taxonomy as ``args`` say; return the exit code (FocusedError on a problem)."""
    from focused.errors import FocusedError
    from focused.lab.webs.bundle import TOPICS_FILE, Bundle
    from focused.lab.webs.labels import taxonomy_from_labels

    bundle = Bundle.load(args.bundle)
    category: str | None = None
    training: list[str] = []
    seeds: list[str] = []
    if args.topic:
        topics = (bundle.topics or {}).get("topics", [])
        wanted = args.topic.strip("/")
        found = next((t for t in topics if wanted in (t.get("category"), t.get("name"))), None)
        if found is None:
            raise FocusedError(f"{bundle.path}: no topic {args.topic!r} in {TOPICS_FILE}")
        category, training, seeds = found["category"], found["training"], found["seeds"]
    folder = taxonomy_from_labels(
        bundle,
        args.output,
        per_category=args.per_category,
        topic_category=category,
        topic_examples=training,
        exclude=seeds,
        seed=args.seed,
    )
    n = sum(1 for _ in folder.rglob("*.txt"))
    print(f"wrote {n} examples to {folder}")
    return 0
