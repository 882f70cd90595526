"""The ``focused`` command: its entry point (:mod:`~focused.cli.main`) and the bodies of the
sub-commands that are not Scrapy's (export, scrapyd deployment, shared options)."""
