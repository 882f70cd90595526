"""Language identification (py3langid, :mod:`focused.relevance.language`): CPU per page and
accuracy, on short and long texts.

    .venv/bin/python benchmarks/language.py [--pages 400] [--runs 3]
    .venv/bin/python benchmarks/language.py --crawl 1000 [--web-pages 3000] [--runs 2]

Texts:

- **Wikispeedia**: the first --pages articles' visible text (``page_text``), all English;
- **multilingual web**: a synthetic web (``focused web generate --languages en,de,fr,es,it,
  nl,pt``, --pages pages), each page's language known (``languages.json``): its visible text;
- **short texts**: hand-made sentences, the same two things said in each of those seven
  languages, cut after 10, 20, 40 and 80 letters (at a word's end).

Speed: CPU milliseconds per text on one core (the median of --runs passes), reading at most
MAX_CHARS characters, and against the baseline of the crawler's own cost of a page's visible
text (``page_text`` on the same Wikispeedia pages, measured in the same run). Accuracy: the
share of texts whose language is the one they are written in, ``und`` (too short) counted
apart.

``--crawl N``: crawls of N pages of a synthetic web of --web-pages pages on 100 hosts, half in
English, a quarter each in German and French (``--languages en=2,de=1,fr=1``), served on
127.0.0.1, on a fresh Redis, with its demo topic (Sports/Cycling), in three variants run
interleaved --runs times (the median run by crawler CPU is shown):

- ``default``: the topic as generated, FOCUSED_LANGUAGE_ID at its default (``auto``: no
  language identified, as every crawl whose topic has no ``languages``);
- ``always``: the same with FOCUSED_LANGUAGE_ID=always (every page's language identified);
- ``english``: the topic with ``languages = ["en"]``.

Each gives the crawler's CPU ms a page (first response to close, ``cpuclock.CpuClock``) and
its ratio to ``default``'s in the same run, the pages fetched by their language (as written),
the relevant pages, and the fetched pages on the topic by their labels: English ones, and
German or French ones (what a crawl that keeps English only should spend little on).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import redis

from focused.lab.webs.bundle import Bundle
from focused.lab.webs.generate import DEMO_CATEGORY, generate_web
from focused.relevance.language import MAX_CHARS, UNDETERMINED, LanguageIdentifier
from focused.relevance.text import page_text

WIKISPEEDIA = Path(__file__).resolve().parents[1] / "../shared/webs/wikispeedia/pages.jsonl.gz"
LANGUAGES = {"en": 1.0, "de": 1.0, "fr": 1.0, "es": 1.0, "it": 1.0, "nl": 1.0, "pt": 1.0}
SHORT = {
    "en": "The river flows slowly through the old town, past the market square where farmers"
    " sell vegetables every Saturday morning. Our team won the match on Sunday.",
    "de": "Der Fluss fließt langsam durch die alte Stadt, vorbei am Marktplatz, wo die Bauern"
    " jeden Samstagmorgen Gemüse verkaufen. Unsere Mannschaft hat am Sonntag gewonnen.",
    "fr": "La rivière coule lentement à travers la vieille ville, devant la place du marché où"
    " les paysans vendent des légumes. Notre équipe a gagné le match dimanche.",
    "es": "El río corre despacio por el casco antiguo, junto a la plaza del mercado donde los"
    " campesinos venden verduras. Nuestro equipo ganó el partido el domingo.",
    "it": "Il fiume scorre lentamente attraverso la città vecchia, davanti alla piazza del"
    " mercato dove i contadini vendono verdura. La nostra squadra ha vinto domenica.",
    "nl": "De rivier stroomt langzaam door de oude stad, langs het marktplein waar de boeren"
    " groenten verkopen. Ons team heeft zondag de wedstrijd gewonnen.",
    "pt": "O rio corre devagar pela cidade velha, passando pela praça do mercado onde os"
    " agricultores vendem legumes. A nossa equipa ganhou o jogo no domingo.",
}
CUTS = (10, 20, 40, 80)


def cut(text: str, letters: int) -> str:
    """The first words of ``text`` holding at least ``letters`` letters."""
    out = ""
    for word in text.split():
        out = f"{out} {word}".strip()
        if sum(c.isalpha() for c in out) >= letters:
            break
    return out


def cpu_ms(work: Callable[[], object], n: int, runs: int) -> float:
    """CPU milliseconds per item of ``work`` over ``n`` items, the median of ``runs``."""
    times = []
    for _ in range(runs):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return statistics.median(times) * 1000 / n


def accuracy(identifier: LanguageIdentifier, texts: Sequence[tuple[str, str]]) -> str:
    got = [identifier.identify(text)[0] for _, text in texts]
    right = sum(g == truth for g, (truth, _) in zip(got, texts, strict=True))
    undetermined = got.count(UNDETERMINED)
    wrong = Counter(g for g, (truth, _) in zip(got, texts, strict=True) if g not in (truth, "und"))
    said = ", ".join(f"{code} {n}" for code, n in wrong.most_common(3))
    return f"{right}/{len(texts)} right, {undetermined} und" + (f" (wrong: {said})" if said else "")


CRAWL_VARIANTS = ("default", "always", "english")
CRAWL_SHARES = {"en": 2.0, "de": 1.0, "fr": 1.0}


def crawl_web(work: Path, pages: int) -> Path:
    """The multilingual web of the crawls (generated once into ``work``) with an English-only
    copy of its topic file, ``english.toml``."""
    folder = work / f"web-{pages}"
    if not (folder / "english.toml").exists():
        print(f"generating a web of {pages:,} pages in en, de, fr in {folder} ...", flush=True)
        generate_web(
            folder, n_pages=pages, n_hosts=100, seed=0, languages=CRAWL_SHARES, overwrite=True
        )
        topic = (folder / "topic.toml").read_text()
        english = topic.replace('strategy = "soft"\n', 'strategy = "soft"\nlanguages = ["en"]\n')
        (folder / "english.toml").write_text(english)
    return folder


def run_crawl(
    variant: str, args: argparse.Namespace, web: Path, proxy: str, redis_url: str, work: Path
) -> dict[str, Any]:
    """One crawl of one variant: its CPU ms a page and what its feed holds."""
    from common import cpu_settings, crawl_env, focused_command, read_cpu, start, wait_all

    from focused.store.admin import reset_crawl

    client = redis.Redis.from_url(redis_url, decode_responses=True)
    reset_crawl(client, "bench-language")
    settings: dict[str, Any] = {
        "FOCUSED_CRAWL": "bench-language",
        "FOCUSED_HOST_DELAY": 0,
        "FOCUSED_HOST_CONCURRENCY": 1000,
        "FOCUSED_MODELS_DIR": str(work / "models"),
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "WARNING",
        "CLOSESPIDER_ITEMCOUNT": args.crawl,
        **({"FOCUSED_LANGUAGE_ID": "always"} if variant == "always" else {}),
    }
    clock, feed, log = (work / f"{variant}{suffix}" for suffix in (".cpu.json", ".jsonl", ".log"))
    for path in (clock, feed):
        path.unlink(missing_ok=True)
    topic = web / ("english.toml" if variant == "english" else "topic.toml")
    command = focused_command(topic, {**settings, **cpu_settings(clock)}) + [
        "-o",
        f"{feed}:jsonlines",
    ]
    wait_all([start(command, crawl_env(proxy, redis_url, work), log)], [log])
    cpu, responses = read_cpu([clock])
    items = [json.loads(line) for line in feed.read_text().splitlines()]
    return {"cpu_ms": 1000 * cpu / max(responses, 1), "items": [i for i in items if not i["bad"]]}


def crawls(args: argparse.Namespace) -> None:
    """The ``--crawl`` benchmark (module doc)."""
    from common import DEFAULT_WORK, redis_server

    from focused.lab.webs.server import ServedWeb
    from focused.topic.files import load_topic
    from focused.topic.methods import topic_model

    work = (DEFAULT_WORK / "language").resolve()
    work.mkdir(parents=True, exist_ok=True)
    web = crawl_web(work, args.web_pages)
    truth = json.loads((web / "languages.json").read_text())
    bundle = Bundle.load(web)
    on_topic = {u for u in truth if any(c.startswith(DEMO_CATEGORY) for c in bundle.categories(u))}
    topic_model(load_topic(web / "topic.toml"), str(work / "models"))  # trained before timing
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in CRAWL_VARIANTS}
    with redis_server(work / "redis") as redis_url, ServedWeb(web) as served:
        for i in range(args.runs):
            for variant in CRAWL_VARIANTS:
                run = run_crawl(variant, args, web, served.proxy, redis_url, work)
                runs[variant].append(run)
                print(f"run {i + 1} {variant:8} {run['cpu_ms']:.2f} CPU ms a page", flush=True)
    base = statistics.median(r["cpu_ms"] for r in runs["default"])
    languages = dict(Counter(truth.values()))
    print(f"\n{args.crawl} pages a crawl of {len(truth):,} ({languages}), median of {args.runs}")
    print(
        "| variant | crawler CPU ms/page | vs default | fetched en / de / fr | relevant"
        " | on the topic: en / de+fr |"
    )
    print("|---|---|---|---|---|---|")
    for variant, variant_runs in runs.items():
        run = sorted(variant_runs, key=lambda r: r["cpu_ms"])[(len(variant_runs) - 1) // 2]
        items = run["items"]
        written = Counter(truth.get(i["url"], "?") for i in items)
        topical = Counter(
            truth[i["url"]] == "en" for i in items if i["url"] in on_topic and i["parent"]
        )
        relevant = sum(bool(i["relevant"]) for i in items)
        print(
            f"| {variant} | {run['cpu_ms']:.2f} | {run['cpu_ms'] / base:.2f}x |"
            f" {written['en']} / {written['de']} / {written['fr']} | {relevant} |"
            f" {topical[True]} / {topical[False]} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--crawl", type=int, default=0, help="crawls of this many pages")
    parser.add_argument("--web-pages", type=int, default=3000, help="the crawls' web")
    args = parser.parse_args()
    if args.crawl:
        crawls(args)
        return
    identifier = LanguageIdentifier()
    identifier.identify("warm the model up: load it once, as a crawl does")
    with gzip.open(WIKISPEEDIA, "rt") as f:
        html = [json.loads(line)["body"] for line in itertools.islice(f, args.pages)]
    wiki = [page_text(page).text for page in html]
    with tempfile.TemporaryDirectory() as tmp:
        web = generate_web(Path(tmp) / "web", n_pages=args.pages, seed=0, languages=LANGUAGES)
        truth = json.loads((web / "languages.json").read_text())
        bundle = Bundle.load(web)
        multi = [(code, page_text(bundle.page(url).body).text) for url, code in truth.items()]
    n = len(wiki)
    base = cpu_ms(lambda: [page_text(page) for page in html], n, args.runs)
    print(f"{n} Wikispeedia pages, {args.runs} runs, median CPU ms a page (one core)")
    print(f"  page_text (baseline): {base:.3f} ms")
    for chars in (500, 1000, MAX_CHARS, 6000):
        reader = LanguageIdentifier(max_chars=chars)
        ms = cpu_ms(lambda r=reader: [r.identify(t) for t in wiki], n, args.runs)
        found = Counter(reader.identify(t)[0] for t in wiki)
        print(
            f"  identify, first {chars} chars: {ms:.3f} ms ({ms / base:.2f}x page_text);"
            f" {found['en']}/{n} en"
        )
    texts = [text for _, text in multi]
    ms = cpu_ms(lambda: [identifier.identify(t) for t in texts], len(texts), args.runs)
    print(
        f"multilingual web ({len(multi)} pages in {len(LANGUAGES)} languages): {ms:.3f} ms a page"
    )
    print(f"  {accuracy(identifier, multi)}")
    for code in LANGUAGES:
        print(f"    {code}: {accuracy(identifier, [t for t in multi if t[0] == code])}")
    for letters in CUTS:
        short = [(code, cut(text, letters)) for code, text in SHORT.items()]
        raw = LanguageIdentifier(min_chars=0)
        us = cpu_ms(lambda s=short, r=raw: [r.identify(t) for _, t in s], len(short), 50) * 1000
        guessed, said = accuracy(raw, short), accuracy(identifier, short)
        print(f"short texts of {letters} letters: {us:.0f} us a text; guessed: {guessed};")
        print(f"  as the crawl says (und under 40 letters): {said}")


if __name__ == "__main__":
    main()
