"""Links and the addresses they name: the one spelling of a URL and its host
(:mod:`~focused.links.urls`), a host's registered domain (:mod:`~focused.links.domains`), a
page's links as the spider follows them (:mod:`~focused.links.extract`), and which of them a
crawl may follow at all (:mod:`~focused.links.scope`)."""
