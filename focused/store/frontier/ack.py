"""The end of a lease: acknowledging a batch of pages (their duplicates check, records and
links, ``complete.lua``), giving leases back (``release.lua``), holding a host back
(``back_off.lua``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from focused.errors import FocusedError
from focused.links.urls import origin as url_origin
from focused.store import keys
from focused.store.frontier.base import (
    NEAR_COPY,
    Ack,
    Acked,
    Link,
    PartlyAcknowledged,
)
from focused.store.frontier.core import PAGE_FIELDS, json_arg
from focused.store.frontier.outbox import Outbox, parented
from focused.store.frontier.records import (
    PAGE_RECORD,
    fingerprint,
    split_url,
)


def _check(ack: Ack) -> tuple[str, str, str, str]:
    """What a page's duplicates check reads (``duplicate_check.lua``), as strings."""
    return ack.checksum, str(fingerprint(ack.url)), ack.last_modified, "1" if ack.revisit else ""


def _mode(ack: Ack) -> str:
    """How the ``duplicates`` script takes a page's text: a revisit's is only read."""
    return "read" if ack.revisit else ""


class Acknowledging(Outbox):
    """The frontier's acknowledgements (:class:`~focused.store.frontier.queue.RedisFrontier`)."""

    _ack_turn = 0  # the batches acknowledged: each starts from the next shard
    _known_shards: tuple[int, ...] | None = None  # the shards with a ``known``, once read

    def complete(
        self,
        lease: str,
        url: str,
        kind: str,
        relevance: float = 0.0,
        relevant: bool = False,
        links: Sequence[Link] = (),
        category: str = "",
        hub_score: float | None = None,
        found: float = 0.0,
    ) -> tuple[int, int]:
        """Acknowledge one leased URL and queue its page's out-links (:meth:`complete_many`
        of one page, without the duplicates check); returns (fetch order, 0 for failed; new
        URLs queued)."""
        done = self.complete_many(
            [Ack(lease, url, kind, relevance, relevant, links, category, hub_score, found=found)]
        )[0]
        return done.order, done.new

    def complete_many(self, acks: Sequence[Ack]) -> list[Acked]:
        """Acknowledge leased URLs and queue their pages' out-links: one call per shard.

        ``kind`` is ``page`` (fetched and classified), ``bad`` (fetched, not usable),
        ``redirect`` (a redirect, whose target is among the links) or ``failed`` (no
        response). A page with a ``checksum`` is first checked for duplicates
        (:mod:`focused.pipelines.frontier`): a duplicate is acknowledged as such (``duplicate``,
        or ``unchanged`` for a revisit found as it was) and none of its links are queued, but
        a ``near_copy``'s (its links may differ from those of the page it copies). A
        page's relevance goes into the crawl's harvest curve, its ``found`` share (0 to 1) into
        the relevant pages found and the link scores' calibration (what the estimate of what is
        left to find counts), its ``category`` (any label) into the census, and its links to
        other servers into the crawl graph. A relevant page counts for its site and its parent
        page, and a ``hub_score`` is kept (Badia et al. 2006's lists of good sites and hubs,
        :mod:`focused.distill.lists`).

        On one server the whole batch is one call. On several shards each shard gets one call
        with its hosts' pages, starting from the next shard each batch. The duplicates check
        has two parts there (:meth:`_text_states`): first each shard records the texts whose
        checksums fall to it, then each page's own call makes its verdict, before it queues
        any link. A page's links to other shards' hosts are kept in its shard's ``outbox`` in
        the same call; they ride with the call of a shard that comes later in the batch, and
        the rest are pushed at the end, one call per shard. The outbox entry is deleted with
        this process's next call there: a process killed in between loses none of them
        (:meth:`redeliver`). A call that fails raises :class:`PartlyAcknowledged`, with the
        results of the pages acknowledged before it.
        """
        shards = self.store.shards
        homes: dict[int, list[int]] = {}
        for i, ack in enumerate(acks):
            homes.setdefault(shards.of_host(ack.lease.split(" ", 1)[0]), []).append(i)
        checked = [i for i, ack in enumerate(acks) if ack.checksum and ack.kind == "page"]
        # A near-copy is a duplicate, unless the check finds it is an exact one.
        verdicts = [NEAR_COPY if ack.near_copy and ack.kind == "page" else "" for ack in acks]
        states = self._text_states(acks, checked) if len(shards) > 1 and checked else {}
        results: dict[int, Acked] = {}
        # Links for other shards' hosts, with their parents' fetch orders: they ride with the
        # acknowledgement of a shard called later, and the rest are pushed at the end.
        riding: dict[int, list[Any]] = {}
        extra_new = 0
        called = sorted(homes)  # from the next shard each batch: the pushes at the end spread
        turn = self._ack_turn % len(called) if called else 0
        self._ack_turn += 1
        for home in called[turn:] + called[:turn]:
            indices = homes[home]
            places = {i: n + 1 for n, i in enumerate(indices)}
            checks = [
                [*_check(acks[i]), places[i], *states.get(i, ("", ""))]
                for i in checked
                if i in places
            ]
            args, away, sent = self._page_args(acks, indices, home, verdicts)
            outbox = json_arg(away) if away else ""
            delivered = self._delivered.pop(home, [])
            extra = [
                "1" if self.revisits else "",
                outbox,
                " ".join(delivered),
                json_arg(checks) if checks else "",
                json_arg(riding.pop(home)) if home in riding else "",
            ]
            try:
                reply = self._call(self._complete, [*extra, *args], home)
            except FocusedError as exc:  # the shards called before acknowledged theirs
                raise PartlyAcknowledged(exc, results) from exc
            replies = [reply[3 * n : 3 * n + 3] for n in range(len(indices))]
            extra_new += int(reply[3 * len(indices)])
            # The pages whose links are queued: not a duplicate's, but a near-copy's.
            orders = [int(order) if why in ("", NEAR_COPY) else 0 for order, _, why in replies]
            for shard, pairs in parented(away, orders).items():
                riding.setdefault(shard, []).extend(pairs)
            if away and any(orders):
                self._delivered.setdefault(home, []).append(str(next(o for o in orders if o)))
            for n, (i, (order, new, why)) in enumerate(zip(indices, replies, strict=True)):
                if orders[n]:
                    self._remember(sent[n])
                results[i] = Acked(int(order), int(new), why or "")
                self.held.pop(acks[i].lease, None)
        try:  # for shards called before their links were known; revisits' new texts
            extra_new += self._push_shards(riding)
            self._record_texts(acks, [i for i in checked if states.get(i, ("",))[0] == "none"])
        except FocusedError as exc:  # every page is acknowledged, its links in an outbox
            raise PartlyAcknowledged(exc, results) from exc
        done = [results[i] for i in range(len(acks))]
        if extra_new and done:  # the other shards' new URLs count with the batch's first page
            done[0] = Acked(done[0].order, done[0].new + extra_new, done[0].duplicate)
        return done

    def _text_states(self, acks: Sequence[Ack], checked: list[int]) -> dict[int, tuple[str, str]]:
        """The first part of a cluster's duplicates checks: page -> (its text's state, what
        ``known`` holds of its URL, ``""`` for nothing).

        Each shard holds the ``checksums`` of the texts whose checksums fall to it
        (:meth:`~focused.store.shards.Shards.of_text`), so two pages with one text meet there
        whatever their hosts; and the ``known`` of the URLs whose fingerprints do (written by
        a reset). One ``duplicates`` call a shard, in the batch's order, records each text and
        reads what is known. A page's verdict is made in its own shard's call after it, which
        also records its Last-Modified (``modified``, of its host's shard). Killed in between,
        a process leaves a text recorded as its URL's: fetched again, the page is found
        ``same``, not a duplicate, and its links are queued then. A revisit's text is only
        read here (``same`` is its verdict) and recorded after its acknowledgement
        (:meth:`_record_texts`). Which shards have a ``known`` is read once by a crawl process
        (a reset, the one writer of ``known``, ends it) and once a batch by any other.
        """
        shards = self.store.shards
        texts: dict[int, list[int]] = {}
        urls: dict[int, list[int]] = {}
        fps = {i: fingerprint(acks[i].url) for i in checked}
        known_at = self._known_shards
        if known_at is None:
            known_at = self._shards_with(keys.KNOWN)
            if self.epochs[0] != "-":  # a crawl process: a reset under it ends it (VANISHED)
                self._known_shards = known_at
        for i in checked:
            texts.setdefault(shards.of_text(acks[i].checksum), []).append(i)
            if (shard := shards.of_fingerprint(fps[i])) in known_at:
                urls.setdefault(shard, []).append(i)
        states = dict.fromkeys(checked, "")
        known = dict.fromkeys(checked, "")
        for shard in sorted(texts.keys() | urls.keys()):
            part, asked = texts.get(shard, []), urls.get(shard, [])
            given = [(acks[i].checksum, fps[i], _mode(acks[i])) for i in part]
            reply = self._texts_on(shard, given, [fps[i] for i in asked])
            states.update(zip(part, reply[: len(part)], strict=True))
            known.update(zip(asked, reply[len(part) :], strict=True))
        return {i: (states[i], known[i]) for i in checked}

    def _texts_on(
        self, shard: int, texts: list[tuple[str, int, str]], asked: list[int]
    ) -> list[str]:
        """One ``duplicates`` call on ``shard``: the states of ``texts`` (checksum, URL
        fingerprint, mode), recorded in turn, then what ``known`` holds of the fingerprints
        ``asked``."""
        store = self.store
        names = [store.key(keys.CHECKSUMS, shard=shard), store.key(keys.KNOWN, shard=shard)]
        args = [len(texts), *(v for text in texts for v in text), *asked]
        return store.retrying(lambda: self._duplicates(keys=names, args=args))

    def _shards_with(self, name: str) -> tuple[int, ...]:
        """The shards that have key ``name``, in one round trip."""
        store = self.store

        def read() -> list[Any]:  # a new pipeline per try: a failed execute empties it
            pipe = store._client.pipeline(transaction=False)
            for shard in range(len(store.shards)):
                pipe.exists(store.key(name, shard=shard))
            return pipe.execute()

        return tuple(j for j, there in enumerate(store.retrying(read)) if there)

    def _record_texts(self, acks: Sequence[Ack], revisits: list[int]) -> None:
        """Record the texts of revisits that no page had before (:meth:`_text_states`)."""
        by_shard: dict[int, list[tuple[str, int, str]]] = {}
        for i in revisits:
            text = (acks[i].checksum, fingerprint(acks[i].url), "")
            by_shard.setdefault(self.store.shards.of_text(acks[i].checksum), []).append(text)
        for shard, texts in by_shard.items():
            self._texts_on(shard, texts, [])

    def _page_args(
        self,
        acks: Sequence[Ack],
        indices: list[int],
        home: int,
        verdicts: list[str],
    ) -> tuple[list[Any], dict[int, list[tuple[int, str]]], list[list[int]]]:
        """The ``complete`` script's values for the pages of one shard; their links to other
        shards' hosts (shard -> (page among them, packed links)); the fingerprints of each
        page's links sent."""
        args: list[Any] = []
        away: dict[int, list[tuple[int, str]]] = {}
        sent: list[list[int]] = []
        for n, i in enumerate(indices):
            ack = acks[i]
            edges = None
            if ack.kind == "page" and self.graph:
                edges = bytearray(PAGE_RECORD.pack(fingerprint(ack.url)))
            packed, fps = self._pack_links(ack.links, edges, url_origin(ack.url))
            sent.append(fps)
            for shard, lines in packed.items():
                if shard != home:
                    away.setdefault(shard, []).append((n, lines))
            page = {
                "lease": ack.lease,
                "url": ack.url,
                "kind": ack.kind,
                "relevance": repr(float(ack.relevance)),
                "relevant": int(ack.relevant),
                "dead": int(ack.dead),
                "found": repr(float(ack.found)),
                "category": ack.category or "-",
                "graph": bytes(edges or b""),
                "hub_score": "" if ack.hub_score is None else repr(float(ack.hub_score)),
                "duplicate": verdicts[i],
                "links": packed.get(home, ""),
            }
            args += (page[name] for name in PAGE_FIELDS)
        return args, away, sent

    def release(self, leases: Iterable[str], *, retry: bool = False) -> int:
        """Return leased URLs to the frontier; returns how many were queued again.

        Unchanged on a clean shutdown; with ``retry`` (a failed attempt to fetch them) one try
        later, behind the URLs not tried yet, and counted as failed after ``max_tries``.
        """
        leases = list(leases)
        back = 0
        for shard, part in self._by_shard(leases).items():
            back += int(self._call(self._release, [int(retry), self.max_tries, *part], shard))
        for lease in leases:
            self.held.pop(lease, None)
        return back

    def back_off(self, url: str, seconds: float) -> None:
        """Leave the host of ``url`` alone for ``seconds`` from now, in every process of the
        crawl (a server's Retry-After); a later time already set is kept."""
        origin = split_url(url)[0]
        self._call(self._back_off, [origin, max(0.0, seconds)], self.store.shards.of_host(origin))
