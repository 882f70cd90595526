"""The crawl's frontier: its contract and records (:mod:`~focused.store.frontier.base`), the
formats of its records in Redis (:mod:`~focused.store.frontier.records`), and the Redis
frontier itself (:mod:`~focused.store.frontier.queue`), one module per role: its state and
calls (``core``), pushes (``push``), pops (``pop``), acknowledgements (``ack``), the cluster
outbox (``outbox``) and re-ordering (``reorder``)."""
