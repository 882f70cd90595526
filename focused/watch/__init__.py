"""Watching crawls from Redis: ``focused dashboard`` (a web page) and ``focused exporter``
(Prometheus metrics).

Both read every crawl of one Redis through :func:`focused.monitor.crawl_snapshots`, the same
picture ``focused status`` prints, and write nothing: any number of them may run while any
number of crawler processes crawl, and after they stop.

- :mod:`~focused.watch.dashboard`: the page, refreshing itself from ``/api/crawls``.
- :mod:`~focused.watch.metrics`: a Prometheus collector that reads Redis at scrape time.
"""
