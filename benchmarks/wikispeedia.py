"""The standing benchmark: ``focused evaluate`` on the nine development topics of Wikispeedia.

    .venv/bin/python benchmarks/wikispeedia.py                 # 300 pages, all four crawlers
    .venv/bin/python benchmarks/wikispeedia.py --pages 1000 --jobs 2 -s FOCUSED_LINK_SCORE=both

Any ``focused evaluate`` option can be added; the bundle defaults to
``../shared/webs/wikispeedia`` beside the checkout and the output to ``wikispeedia-bench``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from focused.cli.main import main

WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "webs" / "wikispeedia"

if __name__ == "__main__":
    sys.exit(main(["evaluate", str(WIKISPEEDIA), "--out", "wikispeedia-bench", *sys.argv[1:]]))
