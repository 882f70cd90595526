"""What a crawl is about: topic files (:mod:`~focused.topic.files`)."""
