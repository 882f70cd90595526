"""Near-copies: what the check finds, what it costs a page, and what it costs a crawl.

    .venv/bin/python benchmarks/nearcopies.py [--pages 2000] [--originals 30] [--runs 2]
                                              [--shared-block 20] [--block-words 1000]
                                              [--crawl-pages 300] [--no-crawls] [--planted-only]

1. **The planted web** (``focused web generate --near-copies --shared-block``): --pages
   synthetic pages, three near-copies (a mirror, a printable version, a 5 % edit) of
   --originals pages on the demo topic, and --shared-block other pages on it that share a block
   of --block-words words inside their article (distinct pages, no copies). Every good page's
   main text is checked against a near-copies index on a fresh Redis, in the bundle's order
   (originals first), as ``FOCUSED_NEAR_COPIES=all`` would: recall of the planted copies by
   kind, false positives (a distinct page, or the wrong original), for several thresholds.
   Then the exact Jaccard of each copy with its original and of each pair of the pages sharing
   the block (their distributions), and by the check as it decides between two pages (bands,
   then agreeing values) the copies found and the pairs sharing the block taken for copies,
   by threshold. --planted-only stops there.
2. **Wikispeedia** (4,600 real articles, no copies planted): the pages flagged at the default
   threshold, with their pairs' exact Jaccard, the closest two distinct articles among 600,
   and the same costs on longer texts.
3. **Costs a page**: CPU ms of the signature (shingles, MinHash, bands), of the index call on
   the client and on the Redis server (INFO cpu), of the MinHash with datasketch's default hash
   (SHA-1) against the CRC-32 shipped, and the bytes Redis uses per indexed page
   (MEMORY USAGE of the index's keys, every field counted).
   And the bytes a page as the index grows, up to --memory-pages pages of random signatures
   (Redis keeps a small hash as a listpack, so a bucket's field costs less once the buckets
   fill up).
4. **A crawl**: ``focused evaluate`` of Countries on Wikispeedia (--crawl-pages pages, the
   ``taxonomy`` crawler), with the check at its default (the relevant pages) and off
   (``FOCUSED_NEAR_COPIES=none``), --runs pairs interleaved: CPU ms per fetched page of the
   crawl process (start-up included) and the ratio on/off, the median of the pairs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from zlib import crc32

import numpy as np
import redis
from classifier import WIKISPEEDIA
from common import DEFAULT_WORK, clean_dir, redis_cpu_seconds, redis_server
from datasketch import MinHash
from datasketch.hashfunc import sha1_hash32

from focused.lab.webs.bundle import Bundle
from focused.lab.webs.nearcopies import (
    BLOCK_WORDS,
    NEAR_COPIES_FILE,
    SHARED_BLOCK_FILE,
    generate_near_copy_web,
)
from focused.relevance import nearcopies as nc
from focused.relevance.content import main_text
from focused.settings.defaults import FOCUSED_NEAR_COPY_THRESHOLD as DEFAULT_THRESHOLD
from focused.store.crawl import CrawlStore
from focused.store.nearcopies import COPY, NearCopyIndex

THRESHOLDS = (0.6, 0.7, 0.76, 0.8, 0.85, 0.9)


def main_texts(bundle: Bundle) -> dict[str, str]:
    """The main text of every good HTML page of a bundle, in its order."""
    texts = {}
    for page in bundle.pages.values():
        kind = dict(page.headers).get("Content-Type", "")
        if page.status == 200 and kind.startswith("text/html") and page.behaviour is None:
            texts[page.url] = main_text(page.body).text
    return texts


def check_all(client: redis.Redis, texts: dict[str, str], threshold: float) -> dict[str, object]:
    """Check every text against a fresh index, in order: what it found and what it cost."""
    name = f"bench-nearcopies-{int(threshold * 100)}"
    for key in client.scan_iter(f"focused:{{{name}}}:*"):
        client.delete(key)
    index = NearCopyIndex(CrawlStore(client, name))
    cut, needed = nc.candidate_banding(threshold), nc.agreeing_needed(threshold)
    found: dict[str, str] = {}
    signing = calling = 0.0
    checked = 0
    redis_before = redis_cpu_seconds(client)
    for url, text in texts.items():
        start = time.process_time()
        values = nc.signature(text)
        if values is None:
            signing += time.process_time() - start
            continue
        signature, bands = nc.packed(values), nc.band_keys(values, cut)
        signed = time.process_time()
        result = index.check(url, signature, bands, needed)
        calling += time.process_time() - signed
        signing += signed - start
        checked += 1
        if result.state == COPY:
            found[url] = result.copy_of
    redis_cpu = redis_cpu_seconds(client) - redis_before
    indexed = index.indexed()
    return {
        "found": found,
        "checked": checked,
        "pages": len(texts),
        "sign_ms": 1000 * signing / len(texts),
        "call_ms": 1000 * calling / max(checked, 1),
        "redis_ms": 1000 * redis_cpu / max(checked, 1),
        "indexed": indexed,
        "bytes_per_page": index.memory() / max(indexed, 1),
        "bands": cut.bands,
    }


def planted_web(
    work: Path, client: redis.Redis, pages: int, originals: int, sharing: int, block: int
) -> None:
    folder = generate_near_copy_web(
        clean_dir(work / "planted"),
        originals=originals,
        shared_block=sharing,
        block_words=block,
        n_pages=pages,
        n_hosts=100,
        seed=0,
    )
    truth = {copy["url"]: copy for copy in json.loads((folder / NEAR_COPIES_FILE).read_text())}
    texts = main_texts(Bundle.load(folder))
    words = statistics.mean(len(text.split()) for text in texts.values())
    print(f"\n== planted web: {len(texts)} pages ({words:.0f} words of main text on average),"
          f" {len(truth)} near-copies of {originals} pages ==")  # fmt: skip
    print("threshold | bands | recall mirror / print / edit | false positives | checked")
    for threshold in THRESHOLDS:
        result = check_all(client, texts, threshold)
        found = result["found"]
        assert isinstance(found, dict)
        recall = []
        for kind in ("mirror", "print", "edit"):
            copies = [url for url, copy in truth.items() if copy["kind"] == kind]
            hits = sum(found.get(url) == truth[url]["copy_of"] for url in copies)
            recall.append(f"{hits}/{len(copies)}")
        wrong = sum(
            truth.get(url, {}).get("copy_of") != original for url, original in found.items()
        )
        print(f"{threshold:9.2f} | {result['bands']:5} | {' / '.join(recall):28} | {wrong:15} |"
              f" {result['checked']}")  # fmt: skip
        if threshold == DEFAULT_THRESHOLD:
            costs = result
    print_costs("planted web", costs)
    shared = json.loads((folder / SHARED_BLOCK_FILE).read_text())
    if len(shared) > 1:
        block_pairs(texts, list(truth.values()), shared, block)


def decided(a: str, b: str, threshold: float) -> bool:
    """Whether the check takes ``b`` for a copy of ``a`` (or the other way round): a band in
    common, then enough agreeing values."""
    sa, sb = nc.signature(a), nc.signature(b)
    if sa is None or sb is None:
        return False
    cut = nc.candidate_banding(threshold)
    shared = set(nc.band_keys(sa, cut)) & set(nc.band_keys(sb, cut))
    agree = round(nc.estimated_jaccard(nc.packed(sa), nc.packed(sb)) * nc.NUM_PERM)
    return bool(shared) and agree >= nc.agreeing_needed(threshold)


def block_pairs(
    texts: dict[str, str], copies: list[dict[str, str]], shared: list[str], block: int
) -> None:
    """The planted copies against the pages sharing a block: their Jaccard distributions and,
    by threshold, the copies found and the pairs of sharing pages taken for copies."""
    pairs = {
        kind: [(texts[c["copy_of"]], texts[c["url"]]) for c in copies if c["kind"] == kind]
        for kind in ("mirror", "print", "edit")
    }
    pairs["sharing a block"] = list(itertools.combinations([texts[url] for url in shared], 2))
    own = [len(texts[url].split()) - block for url in shared]
    print(f"\n== {len(shared)} pages sharing a block of {block} words (their own:"
          f" {min(own)}-{max(own)} words, median {statistics.median(own):.0f}) ==")  # fmt: skip
    print("pairs | Jaccard min / p10 / median / p90 / max")
    for kind, found in pairs.items():
        values = np.percentile([nc.jaccard(a, b) for a, b in found], [0, 10, 50, 90, 100])
        print(f"{kind} ({len(found)}) | {' / '.join(f'{v:.2f}' for v in values)}")
    print("threshold | mirror / print / edit found | pairs sharing a block taken for copies")
    for threshold in THRESHOLDS:
        hits = [sum(decided(a, b, threshold) for a, b in found) for found in pairs.values()]
        counts = [f"{hit}/{len(found)}" for hit, found in zip(hits, pairs.values(), strict=True)]
        print(f"{threshold:9.2f} | {' / '.join(counts[:3]):27} | {counts[3]}")


def wikispeedia(client: redis.Redis) -> None:
    texts = main_texts(Bundle.load(WIKISPEEDIA))
    words = statistics.mean(len(text.split()) for text in texts.values())
    result = check_all(client, texts, DEFAULT_THRESHOLD)
    found = result["found"]
    assert isinstance(found, dict)
    print(f"\n== Wikispeedia: {len(texts)} articles ({words:.0f} words of main text on average),"
          f" threshold {DEFAULT_THRESHOLD} ==")  # fmt: skip
    similar = {url: nc.jaccard(texts[url], texts[original]) for url, original in found.items()}
    least = min(similar.values(), default=float("nan"))
    print(f"flagged as near-copies: {len(found)}, their exact Jaccard at least {least:.2f}")
    for url, original in list(found.items())[:20]:
        print(f"  {url} ~ {original}: Jaccard {similar[url]:.2f}")
    print_costs("Wikispeedia", result)
    hashing(list(texts.values()))
    closest_distinct(texts, found, 600)


def closest_distinct(texts: dict[str, str], found: dict[str, str], sample: int) -> None:
    """The most similar two articles among the first ``sample``, copies flagged left out: how
    close distinct pages come to the threshold."""
    shingled = {
        url: nc.shingles(text) for url, text in list(texts.items())[:sample] if url not in found
    }
    best, pair = 0.0, ("", "")
    urls = list(shingled)
    for i, a in enumerate(urls):
        for b in urls[i + 1 :]:
            union = len(shingled[a] | shingled[b])
            similar = len(shingled[a] & shingled[b]) / union if union else 0.0
            if similar > best:
                best, pair = similar, (a, b)
    print(f"closest distinct articles among the first {sample}: {pair[0]} ~ {pair[1]}: {best:.2f}")


def hashing(texts: list[str]) -> None:
    """CPU ms a text of the MinHash signature with datasketch's default hash (SHA-1) and with
    the CRC-32 shipped, the shingles made once."""
    shingled = [list(nc.shingles(text)) for text in texts]
    print("MinHash of the shingles, CPU ms a text:", end="")
    for name, hashfunc in (("SHA-1 (datasketch's default)", sha1_hash32), ("CRC-32", crc32)):
        template = MinHash(num_perm=nc.NUM_PERM, seed=nc.SEED, hashfunc=hashfunc)
        start = time.process_time()
        for shingles in shingled:
            template.copy().update_batch(shingles)
        print(f" {name} {1000 * (time.process_time() - start) / len(texts):.2f}", end=";")
    print()


def print_costs(label: str, result: dict[str, object]) -> None:
    print(
        f"{label}: signature {result['sign_ms']:.2f} CPU ms a page; index call"
        f" {result['call_ms']:.2f} CPU ms on the client, {result['redis_ms']:.3f} on Redis;"
        f" {result['bytes_per_page']:.0f} bytes a page in Redis ({result['indexed']} indexed,"
        f" {result['bands']} bands)"
    )


def memory_curve(client: redis.Redis, most: int) -> None:
    """Bytes a page of the index at sizes up to ``most`` pages of random signatures."""
    index = NearCopyIndex(CrawlStore(client, "bench-nearcopies-memory"))
    cut, needed = nc.candidate_banding(DEFAULT_THRESHOLD), nc.agreeing_needed(DEFAULT_THRESHOLD)
    rng = np.random.default_rng(0)
    print(f"\n== the index's bytes a page, random signatures, threshold {DEFAULT_THRESHOLD} ==")
    sizes = [n for n in (2_000, 20_000, 200_000, 1_000_000, 2_000_000) if n < most] + [most]
    done = 0
    for size in sizes:
        for n in range(done, size):
            values = rng.integers(0, 2**32, nc.NUM_PERM, dtype=np.uint64)
            url = f"http://www.host{n % 1000}.example/articles/{n}/a-page-title"
            index.check(url, nc.packed(values), nc.band_keys(values, cut), needed)
        done = size
        print(f"{size:>9,} pages: {index.memory() / index.indexed():.0f} bytes a page")


def crawl_cpu(work: Path, pages: int, runs: int) -> None:
    """CPU ms per page of a Wikispeedia crawl with the check at its default and off."""
    figures: dict[str, list[float]] = {"default": [], "off": []}
    for run in range(runs):
        for variant, extra in (("default", []), ("off", ["-s", "FOCUSED_NEAR_COPIES=none"])):
            out = clean_dir(work / f"crawl-{variant}-{run}")
            command = [
                sys.executable, "-m", "focused.cli.main", "evaluate", str(WIKISPEEDIA),
                "--topics", "Countries", "--crawlers", "taxonomy", "--pages", str(pages),
                "--out", str(out), *extra,
            ]  # fmt: skip
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            report = json.loads((out / "results.json").read_text())
            figures[variant].append(1000 * cpu_per_page(report))
    on, off = statistics.median(figures["default"]), statistics.median(figures["off"])
    ratios = [a / b for a, b in zip(figures["default"], figures["off"], strict=True)]
    print(f"\n== crawl: Countries on Wikispeedia, {pages} pages, {runs} pairs ==")
    print(f"CPU ms a page: check on (default) {on:.1f} {figures['default']}, off {off:.1f}"
          f" {figures['off']}; on/off {statistics.median(ratios):.3f}"
          f" (pairs {', '.join(f'{r:.3f}' for r in ratios)})")  # fmt: skip


def cpu_per_page(report: object) -> float:
    """The crawl's ``cpu_per_page`` in a ``focused evaluate`` report (its one crawl)."""
    if isinstance(report, dict):
        if "cpu_per_page" in report:
            return float(report["cpu_per_page"])
        values = report.values()
    elif isinstance(report, list):
        values = report
    else:
        raise KeyError("cpu_per_page")
    for value in values:
        try:
            return cpu_per_page(value)
        except KeyError:
            continue
    raise KeyError("cpu_per_page")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=2000, help="pages of the planted web")
    parser.add_argument("--originals", type=int, default=30, help="pages copied three times")
    parser.add_argument("--runs", type=int, default=2, help="pairs of crawls")
    parser.add_argument(
        "--shared-block", type=int, default=20, help="pages sharing a block in their article"
    )
    parser.add_argument("--block-words", type=int, default=BLOCK_WORDS, help="the block's words")
    parser.add_argument("--planted-only", action="store_true", help="the planted web alone")
    parser.add_argument("--crawl-pages", type=int, default=300)
    parser.add_argument("--no-crawls", action="store_true", help="leave the crawls out")
    parser.add_argument(
        "--memory-pages", type=int, default=200_000, help="the largest index measured"
    )
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK / "nearcopies")
    args = parser.parse_args()
    with redis_server(args.work / "redis") as url:
        client = redis.Redis.from_url(url, decode_responses=True)
        planted_web(
            args.work, client, args.pages, args.originals, args.shared_block, args.block_words
        )
        if args.planted_only:
            return
        wikispeedia(client)
        memory_curve(client, args.memory_pages)
    if not args.no_crawls:
        crawl_cpu(args.work, args.crawl_pages, args.runs)


if __name__ == "__main__":
    main()
