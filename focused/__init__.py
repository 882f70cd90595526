"""focused: a focused (topical) web crawler on Scrapy and Redis."""

__version__ = "0.1.0"
