"""What the replies of a crawl's clients are, for the type checker.

redis-py types a reply ``bytes | str`` (and a sorted set's range members or (member, score)
pairs): which one it is depends on the client's ``decode_responses`` and the command's options,
known at run time only. A :class:`~focused.store.crawl.CrawlStore`'s ``_client`` decodes, its
``_binary`` does not: these functions say so, each for one shape of reply, and return the reply
as it is (no check, no copy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from redis.typing import ZSetRangeResponse


def text(reply: bytes | str | None) -> str | None:
    """A string reply of the decoding client (or None: no such key or field)."""
    return cast("str | None", reply)


def texts(reply: list[bytes | str] | ZSetRangeResponse) -> list[str]:
    """The members of a list or a sorted set (without scores), of the decoding client."""
    return cast("list[str]", reply)


def scored(reply: ZSetRangeResponse) -> list[tuple[str, float]]:
    """The (member, score) pairs of a sorted set (``withscores``, ZPOPMAX), of the decoding
    client."""
    return cast("list[tuple[str, float]]", reply)


def text_hash(reply: dict[bytes | str, bytes | str]) -> dict[str, str]:
    """A hash (HGETALL) of the decoding client."""
    return cast("dict[str, str]", reply)


def blob(reply: bytes | str | None) -> bytes | None:
    """A string reply of the binary client (or None: no such key or field)."""
    return cast("bytes | None", reply)


def blob_hash(reply: dict[bytes | str, bytes | str]) -> dict[bytes, bytes]:
    """A hash (HGETALL) of the binary client."""
    return cast("dict[bytes, bytes]", reply)
