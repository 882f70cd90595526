"""The online link model of one crawl, shared by all its processes through Redis.

Each process appends the examples it sees (a fetched page: the link it came through and
whether it turned out relevant) to the crawl's training log, a Redis list, and replays the
log, in its order and in blocks of BLOCK entries, into its own
:class:`~focused.relevance.linkmodel.OnlineLinkModel`. SGD over the same blocks in the same order
is deterministic, so every process ends up with the same model whichever process saw an
example; a process that starts late or restarts after a crash replays the log
from the start and catches up. Appending and reading new entries is one round trip every
``sync_every`` pages.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from focused.errors import FocusedError
from focused.relevance.linkmodel import LinkContext, OnlineLinkModel
from focused.store.learning import LinkLog

if TYPE_CHECKING:
    from focused.store.crawl import CrawlStore

logger = logging.getLogger(__name__)

__all__ = ["BLOCK", "SharedLinkModel", "decode", "encode"]

BLOCK = 10  # log entries per partial_fit call, the same in every process


def _clean(text: str) -> str:
    return " ".join(text.split())


def encode(link: LinkContext, relevant: bool) -> str:
    """One training-log entry: label, estimate, parent R, category, URL, anchor (TAB-separated)."""
    return "\t".join(
        (
            "1" if relevant else "0",
            f"{link.estimate:.4f}",
            f"{link.parent_relevance:.4f}",
            _clean(link.parent_category),
            link.url,
            _clean(link.anchor),
        )
    )


def decode(entry: str) -> tuple[LinkContext, int]:
    label, estimate, parent, category, url, anchor = entry.split("\t", 5)
    return LinkContext(url, anchor, float(estimate), float(parent), category), int(label)


class SharedLinkModel:
    """An OnlineLinkModel kept in step with the crawl's training log in Redis.

    The log is the crawl's :class:`LinkLog`, whose calls go through the crawl's store, with
    its retries. When Redis stays lost, examples wait in ``pending`` and the model keeps its
    last state.
    """

    def __init__(
        self,
        store: CrawlStore,
        model: OnlineLinkModel,
        *,
        sync_every: int = 10,
    ):
        self.log = LinkLog(store)
        self.model = model
        self.sync_every = sync_every
        self.pending: list[str] = []
        self.consumed = 0  # log entries learned from

    def observe(self, link: LinkContext, relevant: bool) -> None:
        """Record what a fetched page turned out to be; syncs every ``sync_every`` pages."""
        self.pending.append(encode(link, relevant))
        if len(self.pending) >= self.sync_every:
            self.sync()

    def sync(self) -> int:
        """Append the pending examples to the log and learn the whole blocks of entries not
        learned yet (all processes' entries, in log order). Returns the number learned."""
        pending = self.pending
        try:
            entries = self.log.append_and_read(pending, self.consumed)
        except FocusedError:  # reported by the store; try again at the next sync
            return 0
        self.pending = self.pending[len(pending) :]
        learned = len(entries) - len(entries) % BLOCK  # the rest waits for its block to fill
        for start in range(0, learned, BLOCK):
            block = [decode(entry) for entry in entries[start : start + BLOCK]]
            self.model.partial_fit([one for one, _ in block], [label for _, label in block])
        self.consumed += learned
        return learned

    def predict(self, links: list[LinkContext]) -> list[float]:
        """The links' priorities (the estimate until the model has learned enough)."""
        return self.model.predict(links).tolist() if links else []
