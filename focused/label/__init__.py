"""``focused label``: a person marks a crawl's pages good or bad, and the marks join the
crawl's topic (its keywords or example pages) as example pages on and off it, for the next
crawl.

- :mod:`~focused.label.feed`: the pages of a crawl's feed worth labelling, and their orders;
- :mod:`~focused.label.examples`: the topic written from the marks (usable alone,
  from Python: :func:`~focused.label.examples.write_examples_topic`), and the marks file;
- :mod:`~focused.label.server`: the page that takes the marks, one key press each.
"""
