"""Downloader middlewares: what the crawler checks and remembers around each download."""
