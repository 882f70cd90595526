"""Pages as the spider yields them, for tests of the judge and the pipelines."""

from __future__ import annotations

from collections.abc import Iterable

from focused.items import Page, PageLink
from focused.store.frontier.base import Leased


def page(
    text: str,
    links: Iterable[tuple[str, str, str]] = (),
    *,
    url: str = "http://a.test/p",
    title: str = "",
    anchor: str = "",
    parent: float | None = None,
    html: str = "",
) -> Page:
    """A fetched page with these out-links ((url, anchor, context) triples), leased from the
    frontier as reached by ``anchor`` from a page of R ``parent``."""
    leased = Leased(url, "lease", 1, 0, "http://a.test/", 0, 0.5, anchor, parent)
    return Page(
        url,
        200,
        0.0,
        depth=1,
        leased=leased,
        title=title,
        text=text,
        html=html,
        links=[PageLink(*link) for link in links],
    )
