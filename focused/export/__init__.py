"""A crawl's fetched pages as a data set: ``focused export NAME --format parquet``."""
