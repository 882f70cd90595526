"""Scrapy commands of the project (``COMMANDS_MODULE``): Scrapy makes each module of this
package the command of its name."""
