"""The link graph and texts of a bundle, read once: what the oracle walks, the seed picker
walks backwards, and the similarity measure reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx
from scrapy.http import HtmlResponse

from focused.lab.webs.bundle import Bundle, url_key
from focused.links.extract import extract_links
from focused.relevance.text import page_text

__all__ = ["WebGraph"]


@dataclass(frozen=True)
class WebGraph:
    """Out-links (to pages of the bundle, by :func:`url_key`) and the document text of every
    HTML page, extracted exactly as the spider does so the oracle sees the crawler's links."""

    links: dict[str, list[str]]
    texts: dict[str, str]
    copies: dict[str, str] = field(default_factory=dict)  # the bundle's (Bundle.copies)

    @classmethod
    def from_bundle(cls, bundle: Bundle) -> WebGraph:
        """Parse every 200 HTML page of ``bundle`` (a few seconds for 5,000 articles); a page
        served at several spellings is one node, under :meth:`Bundle.key`."""
        links: dict[str, list[str]] = {}
        texts: dict[str, str] = {}
        for key, page in bundle.pages.items():
            headers = {name.lower(): value for name, value in page.headers}
            if page.status != 200 or "html" not in headers.get("content-type", "text/html"):
                continue
            if key in bundle.copies:
                continue
            response = HtmlResponse(page.url, body=page.body, encoding="utf-8")
            texts[key] = page_text(response.selector.root).document
            out = (bundle.key(url) for url, *_ in extract_links(response))
            links[key] = list(dict.fromkeys(k for k in out if k in bundle.pages and k != key))
        return cls(links, texts, bundle.copies)

    def key(self, url: str) -> str:
        """The node of ``url`` in any spelling (:meth:`Bundle.key`)."""
        key = url_key(url)
        return self.copies.get(key, key)

    @cached_property
    def digraph(self) -> nx.DiGraph[str]:
        """The links as a networkx graph, built on first use (a fifth of a second for
        Wikispeedia): every HTML page is a node, and each page's successors keep the order of
        its links, so a search over it visits pages in the order the crawler sees them."""
        graph: nx.DiGraph[str] = nx.DiGraph()
        graph.add_nodes_from(self.links)
        graph.add_edges_from((key, link) for key, out in self.links.items() for link in out)
        return graph
