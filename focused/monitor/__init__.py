"""Watching crawls from Redis: one snapshot of a crawl (:mod:`~focused.monitor.snapshot`,
what ``focused status`` prints), ``focused dashboard`` (a web page) and ``focused exporter``
(Prometheus metrics).

All read every crawl of one Redis through :func:`focused.monitor.snapshot.crawl_snapshots` and
write nothing: any number of them may run while any number of crawler processes crawl, and after
they stop.

- :mod:`~focused.monitor.dashboard`: the page, refreshing itself from ``/api/crawls``.
- :mod:`~focused.monitor.metrics`: a Prometheus collector that reads Redis at scrape time.
- :mod:`~focused.monitor.hosts` and :mod:`~focused.monitor.webapp`: the Host names a server
  answers, and the aiohttp serving the dashboard shares with ``focused label``'s page.
"""
