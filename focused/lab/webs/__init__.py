"""Offline webs: recorded or synthetic webs served over HTTP for crawling with no internet.

- :mod:`focused.lab.webs.bundle` reads and writes the bundle format (pages, labels, topics).
- :mod:`focused.lab.webs.server` serves a bundle on 127.0.0.1 as an HTTP proxy and by Host header.
- :mod:`focused.lab.webs.generate` makes a synthetic topical web as a bundle.

They talk to the crawler only over HTTP, so nothing here imports Scrapy or Redis; the modules
are not re-exported here so that reading a bundle does not import aiohttp or numpy.
"""
