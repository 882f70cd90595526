"""Pages that need JavaScript, fetched in a headless Chromium through scrapy-playwright.

:mod:`focused.render.setup` sets the crawl up for the browser (``FOCUSED_RENDER`` auto or
always), :mod:`focused.render.pages` decides which pages go to it, :mod:`focused.render.handler`
is scrapy-playwright's download handler with one bounded browser per process, and
:mod:`focused.render.guard` refuses the browser's own requests that a plain fetch would refuse.
Nothing here is imported while ``FOCUSED_RENDER`` is never.
"""
