"""Crawl-time extensions, one module each (as Scrapy keeps ``scrapy/extensions/``).

The add-on (:mod:`focused.addon`) enables them; each raises ``NotConfigured`` when its
settings turn it off.

- :mod:`~focused.extensions.harvest`: harvest and Chakrabarti et al. 1999's alarms in stats and log.
- :mod:`~focused.extensions.distiller`: the distiller, run periodically inside the crawl.
- :mod:`~focused.extensions.coverage`: the estimate of what is left to find, and the stop when
  the topic is covered.
- :mod:`~focused.extensions.lists`: Badia et al. 2006's lists of good hubs and sites, at the end.
- :mod:`~focused.extensions.maintenance`: Chakrabarti et al. 1999's maintenance mode (revisits).
- :mod:`~focused.extensions.seeds`: seeds pushed into a running crawl through a Redis list.
- :mod:`~focused.extensions.warc`: fetched pages with their requests in WARC files.
- :mod:`~focused.extensions.heartbeat`: each process records itself in Redis, for readers.
- :mod:`~focused.extensions.stats`: the ``STATS_CLASS`` that adds every process's Scrapy
  stats up in Redis.
- :mod:`~focused.extensions.outages`: the Redis outages a process sees, in its stats.
- :mod:`~focused.extensions.memory`: memory given back to the system after a big page.
"""
