"""The scheduler and the Redis frontier it serves requests from."""

from focused.schedulers.scheduler import FrontierScheduler

__all__ = ["FrontierScheduler"]
