"""What a crawl is about and what it does: topic files (:mod:`~focused.topic.files`, their
shared field checks in :mod:`~focused.topic.fields`), the relevance methods they can name
(:mod:`~focused.topic.methods`), and the crawl plan decided once from settings and topic
(:mod:`~focused.topic.plan`)."""
