"""Crawl strategies: what out-links of a page enter the frontier, and with what score.

A strategy only turns classified pages into scored links (:class:`.base.Strategy`); the
frontier stores and orders them and knows nothing of topics (the architecture's seam between
the frontier store and the crawl strategy, as in Frontera). The topic file's ``strategy`` (or
``FOCUSED_STRATEGY``) picks one by name (:mod:`.registry`):

- ``soft``, ``hard``: Chakrabarti et al. 1999's soft and hard focus (:mod:`.focus`), the default;
- ``breadth-first``: the unfocused baseline (:mod:`.focus`);
- ``best-n-first``: Srinivasan et al. 2005's BFS-N, N links popped at a time from a capped frontier
  (:mod:`.bestn`);
- ``genetic``: Zhang and Yuan 2012's genetic algorithm over the frontier with topic-sensitive
PageRank
  (:mod:`.genetic`);
- ``hmm``: Batsakis et al. 2009's hidden Markov model of the distance to a relevant page
(:mod:`.hmm`);
- ``infospiders``: Srinivasan et al. 2005's population of adaptive agents (:mod:`.infospiders`).
"""
