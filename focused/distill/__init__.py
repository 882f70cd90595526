"""The distiller (Chakrabarti et al. 1999, §3.2, §4): server-weighted hubs and authorities over the
crawl graph, and the re-boost of the best hubs' neglected neighbours.

Data flow: :class:`focused.store.graph.GraphStore` reads the crawl graph the frontier keeps in
Redis, :mod:`.hits` scores it, :mod:`.job` re-boosts and writes the results back through the
store, under a lock, and
:class:`focused.extensions.distiller.Distiller` runs the job periodically inside a crawl.
"""
