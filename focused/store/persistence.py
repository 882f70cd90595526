"""How every Redis server the project starts keeps its data, the embedded one
(:mod:`focused.store.embedded`) and ``focused redis serve`` (:mod:`focused.store.server`):
snapshots, and an append-only log of every write synced to disk every second, so a server that
crashes or is killed loses at most about a second."""

from __future__ import annotations

from pathlib import Path

import redis

# Snapshots at Redis's own save points (an hour after 1 change, 5 minutes after 100, a minute
# after 10,000) and an append-only log of every write, synced to disk every second.
PERSISTENCE: dict[str, str | list[str]] = {
    "save": ["3600 1", "300 100", "60 10000"],
    "appendonly": "yes",
    "appendfsync": "everysec",
}


def persistence(folder: Path, log: str, snapshot: str) -> dict[str, str | list[str]]:
    """:data:`PERSISTENCE` for a server in ``folder`` whose append-only log and snapshot are
    the files ``log`` and ``snapshot``.

    A Redis started with the log on reads the log alone, so a folder with a snapshot and no
    log (written before the log was on, or the log lost) would start empty: such a server
    starts from its snapshot with the log off, and :func:`keep_log` turns it on.
    """
    path = folder / log
    from_log = (path.is_file() and path.stat().st_size > 0) or not (folder / snapshot).exists()
    return {**PERSISTENCE, "appendfilename": log, "appendonly": "yes" if from_log else "no"}


def keep_log(client: redis.Redis) -> None:
    """Turn a running server's append-only log on if it is off: Redis then writes it afresh
    from the data it holds, in the background, and appends every write after."""
    if client.config_get("appendonly").get("appendonly") != "yes":
        client.config_set("appendonly", "yes")
