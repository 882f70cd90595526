"""Errors that reach the user as one line, never as a traceback."""

import difflib
import functools
import logging
from collections.abc import Callable, Collection, Iterable
from typing import Any, TypeVar

T = TypeVar("T")
# The finish reason of a crawl stopped because its Redis stayed unreachable (exit code 3).
REDIS_LOST = "focused_redis_lost"
# The finish reason of a crawl stopped because its Redis kept refusing writes (OOM, READONLY,
# MISCONF, NOREPLICAS; exit code 3).
REDIS_REFUSED = "focused_redis_refused"
# The finish reason of a crawl stopped because its state vanished from Redis (exit code 3).
REDIS_VANISHED = "focused_redis_vanished"
# The finish reason of a crawl stopped because an output could not be written (exit code 4).
DISK_ERROR = "focused_disk_error"
# The finish reason of a crawl that could fetch none of its seeds, nor any page (exit code 5).
NO_SEED = "focused_no_seed"


class FocusedError(Exception):
    """A problem the user can fix; its message is printed as is and the command exits 2."""


class CrawlVanished(FocusedError):
    """The crawl's state is gone from Redis (its epoch key, :mod:`focused.store.keys`): Redis
    restarted without its data, was flushed or failed over to an empty replica, or the crawl was
    reset. A process that went on would crawl a frontier that is no longer its crawl's."""


class TopicError(FocusedError):
    """A topic file (or a file it names) is missing, unreadable or wrong.

    The message names the file, the field and what is wrong, e.g.
    ``topics/birds.toml: relevance.good: category 'Science/Bird' is not in the taxonomy``.
    """

    def __init__(self, path: object, field: str, problem: str):
        self.path, self.field, self.problem = str(path), field, problem
        super().__init__(f"{self.path}: {field}: {problem}" if field else f"{self.path}: {problem}")


def one_of(words: Iterable[str]) -> str:
    """The words a setting or a topic field takes, as every message and page shows them:
    ``one of "relevant", "all", "none"`` (TOML's quotes, so ``""`` is visible)."""
    return "one of " + ", ".join(f'"{word}"' for word in words)


def not_one_of(words: Collection[str], value: object) -> str:
    """``expected one of "a", "b", got 'c'`` for a value that is not one of a setting's or a
    field's words, with the closest word when the value is a near miss (``"keyword"``)."""
    return f"expected {one_of(words)}, got {value!r}{did_you_mean(str(value), words)}"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean NAME?"`` for the known name closest to a misspelt one, else ``""``:
    the one hint that unknown settings and topic fields get."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
    return f"; did you mean {close[0]}?" if close else ""


def known_fields(
    path: object, table: dict[str, Any], known: Collection[str], where: str = "", problem: str = ""
) -> None:
    """A TopicError for the first field of ``table`` (at ``where``) that is not in ``known``,
    naming the closest known one: a misspelt field would otherwise be silently ignored."""
    unknown = sorted(set(table) - set(known))
    if unknown:
        name = f"{where}.{unknown[0]}" if where else unknown[0]
        hint = did_you_mean(unknown[0], known)
        raise TopicError(path, name, f"{problem or 'unknown field'}{hint}")


def exit_on_user_error(from_crawler: Callable[..., T]) -> Callable[..., T]:
    """Wrap a component's ``from_crawler``: a FocusedError at start-up (bad topic file, no
    Redis) is logged as one line and ends the process with exit code 2, not a traceback."""

    @functools.wraps(from_crawler)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return from_crawler(*args, **kwargs)
        except FocusedError as exc:
            logging.getLogger("focused").critical("focused: error: %(error)s", {"error": exc})
            raise SystemExit(2) from None

    return wrapper
