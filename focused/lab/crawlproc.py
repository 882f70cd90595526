"""``scrapy crawl focused`` as a subprocess: one command line and one environment for every
tool that runs crawls (the demo, ``focused evaluate``, the tests)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path

import psutil


def crawl_command(
    topic: Path, settings: Mapping[str, object], feed: Path | None = None
) -> list[str]:
    """The command that crawls ``topic`` with ``-s KEY=VALUE`` settings, writing ``feed``.

    It is the project's ``scrapy crawl`` (:mod:`focused.commands.crawl`): it exits 0 when the
    crawl ended, 3 when it stopped because it lost Redis, 4 when an output could not be
    written (a full disk), 1 or 2 when it could not start.
    """
    command = [sys.executable, "-m", "scrapy", "crawl", "focused", "-a", f"topic={topic}"]
    if feed is not None:
        command += ["-o", f"{feed}:jsonlines"]
    for key, value in settings.items():
        command += ["-s", f"{key}={value}"]
    return command


def crawl_env(proxy: str, home: Path) -> dict[str, str]:
    """The environment of a crawl through ``proxy`` on the embedded Redis in ``home``.

    FOCUSED_REDIS_URL is dropped: these crawls count on a Redis of their own.
    """
    env = {
        **os.environ,
        "http_proxy": proxy,
        "FOCUSED_HOME": str(home),
        "SCRAPY_SETTINGS_MODULE": "focused.settings",
    }
    env.pop("FOCUSED_REDIS_URL", None)
    return env


def memory_until_done(
    processes: Sequence[subprocess.Popen], interval: float = 0.2
) -> tuple[list[int], list[int]]:
    """Wait for ``processes`` to end, sampling their memory (RSS, bytes) every ``interval``
    seconds: each one's peak and its last sample (an ended process's 0 is not one)."""
    peaks, lasts = [0] * len(processes), [0] * len(processes)
    while any(process.poll() is None for process in processes):
        for n, process in enumerate(processes):
            with suppress(psutil.NoSuchProcess):
                rss = psutil.Process(process.pid).memory_info().rss
                peaks[n], lasts[n] = max(peaks[n], rss), rss or lasts[n]
        time.sleep(interval)
    return peaks, lasts
