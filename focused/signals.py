"""The crawl's own Scrapy signals, beside Scrapy's (``crawler.signals.connect(handler,
signal=...)``)."""

#: A light topic was refitted (:mod:`focused.extensions.learner`): ``model``, the fitted
#: :class:`~focused.relevance.learned.LearnedTopic`, now gives pages' R and joins links'. Sent in
#: every process of the crawl, in the reactor's thread.
topic_refitted = object()
