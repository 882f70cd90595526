"""Queueing links: each page's links packed into one string per shard, pushed in one call a
shard (``push.lua``; the acknowledgement pushes a page's links in its own call)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from focused.links.urls import BadURL, clean_url
from focused.links.urls import origin as url_origin
from focused.store.frontier.base import (
    Link,
)
from focused.store.frontier.core import FrontierCore
from focused.store.frontier.records import (
    ANCHOR_CHARS,
    EDGE_RECORD,
    clean_fingerprint,
    pack,
)
from focused.store.shards import host_hash


class Pushing(FrontierCore):
    """The frontier's pushes (:class:`~focused.store.frontier.queue.RedisFrontier`)."""

    def _pack_links(
        self, links: Iterable[Link], edges: bytearray | None = None, page_origin: str = ""
    ) -> tuple[dict[int, str], list[int]]:
        """The links packed one a line (origin, packed score, seen bucket, seen member, depth,
        then the path without its leading ``/`` and a TAB and the anchor, if any), by the shard
        of the link's host, and the fingerprints of the links in them.

        One string a page rather than six arguments a link: the script splits it with one
        pattern, which costs Redis less than taking each field as an argument
        (``benchmarks/frontier.py``). Only clean URLs (:func:`focused.links.urls.clean_url`, at most
        ``max_url_length`` long) are queued; the others go to ``on_rejected``. Links this
        process has stored before (``known``) are left out. With ``edges``, the links to
        servers other than ``page_origin`` are appended to it as crawl-graph records (every
        one of them). When a budget needs them, the hosts' registered domains follow the links
        after an empty line, one ``origin domain`` a line, or ``origin domain suffix`` for a
        host under a private suffix of the Public Suffix List, after, with the farm budget,
        ``* page_origin domain`` when the page links to no page of its own host (a link farm's
        page does not: the script's ``note_hosts``).
        """
        by_shard: dict[int, list[str]] = {}
        hosts: dict[int, set[str]] = {}
        domains = self._domains
        sent: list[int] = []
        own_links = False
        for link in links:
            try:
                url = clean_url(link.url, self.max_url_length)
            except BadURL as exc:
                if self.on_rejected is not None:
                    self.on_rejected(exc)
                continue
            fp = clean_fingerprint(url)
            link_origin = url_origin(url)
            own_links = own_links or link_origin == page_origin
            if edges is not None and link_origin != page_origin:
                edges += EDGE_RECORD.pack(host_hash(link_origin), fp)
            if fp in self.known:
                continue
            sent.append(fp)
            rest = url[len(link_origin) + 1 :]  # its path after the "/" every clean URL has
            if link.anchor:
                rest += "\t" + " ".join(link.anchor.split())[:ANCHOR_CHARS]
            depth = f"{link.depth}+{link.redirects}" if link.redirects else link.depth
            # The seen set: a bucket, and a member that fits a signed 64-bit integer.
            bucket, member = fp % self.seen_buckets, (fp >> 1) // self.seen_buckets
            shard = self.store.shards.of_host(link_origin)
            by_shard.setdefault(shard, []).append(
                f"{link_origin} {pack(link.score, 0, fp)} {bucket} {member} {depth} {rest}"
            )
            if domains is not None:
                hosts.setdefault(shard, set()).add(link_origin)
        if domains is not None:
            spreads = page_origin and not own_links and self.budgets.farm_hosts
            page = [f"* {page_origin} {domains(page_origin)}"] if spreads else []
            for shard, origins in hosts.items():
                by_shard[shard] += [
                    "",
                    *page,
                    *(
                        f"{o} {domains(o)} {domains.platform(o) or ''}".rstrip()
                        for o in sorted(origins)
                    ),
                ]
        return {shard: "\n".join(lines) for shard, lines in by_shard.items()}, sent

    def _remember(self, fingerprints: list[int]) -> None:
        """Add the fingerprints of a call that stored its links to ``known``."""
        self.known.update(fingerprints)
        if len(self.known) > self.seen_cache:
            self.known.clear()

    def _push_shards(self, by_shard: dict[int, list[Any]]) -> int:
        """Push (parent, packed links) pairs to their shards, one call a shard; returns how
        many URLs were new."""
        return sum(int(self._call(self._push, pairs, j)) for j, pairs in by_shard.items() if pairs)

    def push_many(self, links: Iterable[Link]) -> int:
        """Queue the URLs not seen before in this crawl; returns how many were new."""
        packed, sent = self._pack_links(links)
        if not packed:
            return 0
        new = self._push_shards({shard: [0, lines] for shard, lines in packed.items()})
        self._remember(sent)
        return new
