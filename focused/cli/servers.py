"""``focused redis serve`` and ``focused redis cluster``: the command side of the servers
:mod:`focused.store.server` and :mod:`focused.store.cluster` run."""

from __future__ import annotations

import argparse

from focused.store.cluster import FIRST_PORT, MASTERS, serve_cluster
from focused.store.embedded import home_dir
from focused.store.server import serve


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--home", help="folder of the server's data and log (default: $FOCUSED_HOME, else .focused)"
    )
    parser.add_argument("--port", type=int, default=6379, help="TCP port (default %(default)s)")
    parser.add_argument(
        "--bind",
        default="127.0.0.1",
        help="address to listen on (default %(default)s); 0.0.0.0 lets other machines in, "
        "with no password: only on a trusted network",
    )


def run_serve(args: argparse.Namespace) -> int:
    return serve(home_dir(args.home).resolve(), args.port, args.bind)


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--home",
        help="folder of the nodes' folders (node-PORT: data, log, nodes.conf; default: "
        "$FOCUSED_HOME, else .focused)",
    )
    parser.add_argument(
        "--masters",
        type=int,
        help=f"masters of a new cluster (default {MASTERS}, at least {MASTERS}; a cluster "
        "already in --home keeps its own)",
    )
    parser.add_argument(
        "--port",
        type=int,
        help=f"port of the first master, the others on the next ones (default {FIRST_PORT}; a "
        "cluster already in --home keeps its own); each also uses port + 10000",
    )
    parser.add_argument(
        "--bind",
        default="127.0.0.1",
        help="address to listen on (default %(default)s): the nodes give it to clients, so "
        "it must be one they reach; no password: another than 127.0.0.1 only on a trusted "
        "network",
    )


def run_cluster(args: argparse.Namespace) -> int:
    return serve_cluster(home_dir(args.home), args.masters, args.port, args.bind)
