"""``focused exporter``: Prometheus metrics of every crawl in one Redis, read at scrape time.

:class:`CrawlCollector` turns :func:`focused.monitor.snapshot.crawl_snapshots` into metric families
on each scrape, so the figures are Redis's at that moment and the exporter keeps no state. Every
metric has the label ``crawl``; those of one crawler process also ``process`` (its heartbeat
id, ``host:pid:token``). :data:`CRAWL_METRICS` and the families built in
:meth:`CrawlCollector.collect` are the documented list (README, "Prometheus metrics").
It answers only the Host names it was started for (:mod:`focused.monitor.hosts`).
"""

from __future__ import annotations

import signal
import socket
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import ThreadingWSGIServer
from prometheus_client.registry import Collector

from focused.errors import FocusedError
from focused.monitor.coverage import NEXT, Coverage
from focused.monitor.hosts import REFUSED, allowed_hosts, is_allowed
from focused.monitor.snapshot import WINDOWS, crawl_snapshots
from focused.store.client import RedisError

if TYPE_CHECKING:
    from collections.abc import Callable
    from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

    from focused.store.reads import Reader

ALARMS = ("stagnation", "diffusion")
# (metric name, counter or gauge, help, snapshot field): one sample per crawl. Counters are
# exposed with the ``_total`` suffix.
CRAWL_METRICS = (
    ("focused_urls_seen", "counter", "URLs that entered the frontier", "seen"),
    ("focused_pages_fetched", "counter", "Pages fetched (redirects and bad pages too)", "fetched"),
    ("focused_pages_classified", "counter", "Fetched pages classified (scored)", "classified"),
    ("focused_pages_relevant", "counter", "Classified pages that are relevant", "relevant"),
    ("focused_pages_bad", "counter", "Fetched pages not usable (404, not HTML, ...)", "bad"),
    ("focused_pages_duplicate", "counter", "Fetched pages that repeat another's text", "duplicate"),
    ("focused_urls_failed", "counter", "URLs given up after their tries", "failed"),
    ("focused_urls_reboosted", "counter", "Queued URLs the distiller raised", "reboosted"),
    (
        "focused_urls_dropped_host_queue",
        "counter",
        "Queued URLs dropped for good past a host's queue cap",
        "dropped_host_queue",
    ),
    ("focused_links_capped", "counter", "Out-links left out past a page's cap", "links_capped"),
    (
        "focused_hosts_rendered",
        "counter",
        "Hosts whose pages the browser fetches from then on (FOCUSED_RENDER auto)",
        "render_hosts",
    ),
    ("focused_frontier_queued", "gauge", "URLs queued in the frontier", "queued"),
    ("focused_frontier_in_flight", "gauge", "URLs leased, not acknowledged", "in_flight"),
    ("focused_processes_alive", "gauge", "Crawler processes heard from in three beats", "alive"),
    ("focused_pages_per_second", "gauge", "Pages/s of the processes alive", "pages_per_s"),
    (
        "focused_time_left_seconds",
        "gauge",
        "Seconds until every process alive reaches its page or item limit",
        "time_left",
    ),
)


class CrawlCollector(Collector):
    """Every crawl's figures in one Redis, read when Prometheus scrapes (module doc)."""

    def __init__(self, reader: Reader):
        self.reader = reader

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("focused_redis_up", "1 when this scrape could read Redis")
        try:
            snapshots = crawl_snapshots(self.reader)
        except RedisError:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        for name, kind, text, field in CRAWL_METRICS:
            family = (CounterMetricFamily if kind == "counter" else GaugeMetricFamily)(
                name, text, labels=["crawl"]
            )
            for s in snapshots:
                if s[field] is not None:
                    family.add_metric([s["crawl"]], s[field])
            yield family
        yield from self._crawl_families(snapshots)
        yield from self._process_families(snapshots)

    def _crawl_families(self, snapshots: list[dict[str, Any]]) -> Iterator[Metric]:
        running = GaugeMetricFamily(
            "focused_crawl_running", "1 while a process of the crawl is alive", labels=["crawl"]
        )
        harvest = GaugeMetricFamily(
            "focused_harvest_ratio",
            "Share of classified pages that are relevant, over the last 100 or 1000 or all",
            labels=["crawl", "window"],
        )
        relevance = GaugeMetricFamily(
            "focused_mean_relevance",
            "Mean relevance R of classified pages, over the last 100 or 1000 or all",
            labels=["crawl", "window"],
        )
        hosts = GaugeMetricFamily(
            "focused_frontier_hosts",
            "Hosts with URLs ready to fetch, waiting out their delay or held over a budget, "
            "and hosts crawled",
            labels=["crawl", "state"],
        )
        held = CounterMetricFamily(
            "focused_hosts_held",
            "Hosts put on hold by each budget (host, domain, hosts)",
            labels=["crawl", "budget"],
        )
        scope = CounterMetricFamily(
            "focused_links_out_of_scope",
            "Out-links left out by each scope rule",
            labels=["crawl", "rule"],
        )
        rendered = CounterMetricFamily(
            "focused_pages_rendered",
            "Pages fetched in the browser, by reason (always, little_text, host)",
            labels=["crawl", "reason"],
        )
        census = CounterMetricFamily(
            "focused_category_pages",
            "Classified pages by best category",
            labels=["crawl", "category"],
        )
        alarm = GaugeMetricFamily(
            "focused_alarm", "1 while the alarm is raised", labels=["crawl", "alarm"]
        )
        covered = GaugeMetricFamily(
            "focused_topic_covered",
            "1 while the harvest fell and the best queued URLs hold little that looks relevant",
            labels=["crawl"],
        )
        left = GaugeMetricFamily(
            "focused_relevant_left",
            "Relevant pages expected among the URLs queued or in flight, at the last estimate "
            "(bound: estimate, low and high of its 90 % interval)",
            labels=["crawl", "bound"],
        )
        in_reach = GaugeMetricFamily(
            "focused_relevant_in_reach",
            "Relevant pages found and expected left, at the last estimate (bound as above)",
            labels=["crawl", "bound"],
        )
        best = GaugeMetricFamily(
            "focused_best_queued_relevant",
            f"Relevant pages expected among the best {NEXT} queued URLs, at the last estimate",
            labels=["crawl"],
        )
        distilled = GaugeMetricFamily(
            "focused_distiller_last_run_timestamp_seconds",
            "When the distiller last ran (unix time)",
            labels=["crawl"],
        )
        distill_runs = CounterMetricFamily(
            "focused_distiller_runs", "Distiller runs", labels=["crawl"]
        )
        distill_seconds = GaugeMetricFamily(
            "focused_distiller_last_run_duration_seconds",
            "How long the distiller's last run took",
            labels=["crawl"],
        )
        scrapy = GaugeMetricFamily(
            "focused_scrapy_stat",
            "Crawl-wide Scrapy stats: counters added up over processes, others the last set",
            labels=["crawl", "stat"],
        )
        for s in snapshots:
            crawl = s["crawl"]
            running.add_metric([crawl], int(s["state"] == "running"))
            for window, suffix in [(str(w), f"_{w}") for w in WINDOWS] + [("all", "")]:
                if s[f"harvest{suffix}"] is not None:
                    harvest.add_metric([crawl, window], s[f"harvest{suffix}"])
                if s[f"mean_relevance{suffix}"] is not None:
                    relevance.add_metric([crawl, window], s[f"mean_relevance{suffix}"])
            for state in ("ready", "waiting", "held", "crawled"):
                hosts.add_metric([crawl, state], s[f"hosts_{state}"])
            for budget, count in s["held"].items():
                held.add_metric([crawl, budget], count)
            for rule, count in s["out_of_scope"].items():
                scope.add_metric([crawl, rule], count)
            for reason, count in s["rendered_by"].items():
                rendered.add_metric([crawl, reason], count)
            for category, pages in s["census"].items():
                census.add_metric([crawl, category], pages)
            raised = {a["name"] for a in s["alarms"]}
            for name in ALARMS:
                alarm.add_metric([crawl, name], int(name in raised))
            covered.add_metric([crawl], int("covered" in raised))
            if s["coverage"]:
                c = Coverage.from_record(s["coverage"])
                for bound, value in (("estimate", c.left), ("low", c.low), ("high", c.high)):
                    left.add_metric([crawl, bound], value)
                    in_reach.add_metric([crawl, bound], c.found + value)
                best.add_metric([crawl], c.next)
            if s["distill"]:  # a record without a figure (written by hand, or cut) shows none
                distilled.add_metric([crawl], s["distill"]["time"])
                distill_runs.add_metric([crawl], s["distill"].get("runs", 0))
                if "seconds" in s["distill"]:
                    distill_seconds.add_metric([crawl], s["distill"]["seconds"])
            for stat, value in s["scrapy"].items():
                if isinstance(value, int | float):
                    scrapy.add_metric([crawl, stat], value)
        yield from (running, harvest, relevance, hosts, held, scope, rendered, census, alarm)
        yield from (covered, left, in_reach, best)
        yield from (distilled, distill_runs, distill_seconds, scrapy)

    def _process_families(self, snapshots: list[dict[str, Any]]) -> Iterator[Metric]:
        labels = ["crawl", "process"]
        up = GaugeMetricFamily("focused_process_up", "1 while the process crawls", labels=labels)
        beat = GaugeMetricFamily(
            "focused_process_last_heartbeat_timestamp_seconds",
            "When the process last recorded itself (unix time, Redis's clock)",
            labels=labels,
        )
        started = GaugeMetricFamily(
            "focused_process_start_timestamp_seconds",
            "When the process started (unix time, Redis's clock)",
            labels=labels,
        )
        counters = {
            field: CounterMetricFamily(f"focused_process_{field}", text, labels=labels)
            for field, text in (
                ("pages", "Responses the process received (what CLOSESPIDER_PAGECOUNT counts)"),
                ("items", "Items the process scraped (what CLOSESPIDER_ITEMCOUNT counts)"),
                ("relevant", "Relevant pages the process found"),
            )
        }
        rate = GaugeMetricFamily(
            "focused_process_pages_per_second", "The process's pages/s", labels=labels
        )
        left = GaugeMetricFamily(
            "focused_process_time_left_seconds",
            "Seconds until the process reaches its page or item limit",
            labels=labels,
        )
        for s in snapshots:
            for p in s["processes"]:
                ids = [s["crawl"], p["id"]]
                up.add_metric(ids, int(p["alive"]))
                beat.add_metric(ids, p["beat"])
                started.add_metric(ids, p["started"])
                for field, family in counters.items():
                    family.add_metric(ids, p[field])
                rate.add_metric(ids, p["pages_per_s"] if p["alive"] else 0)
                if p["time_left"] is not None:
                    left.add_metric(ids, p["time_left"])
        yield from (up, beat, started, *counters.values(), rate, left)


def guarded(app: WSGIApplication, allowed: frozenset[str]) -> Callable[..., Iterable[bytes]]:
    """``app``, answering only requests whose Host is ``allowed`` (:mod:`focused.monitor.hosts`)."""

    def guard(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if is_allowed(environ.get("HTTP_HOST"), allowed):
            return app(environ, start_response)
        start_response("403 Forbidden", [("Content-Type", "text/plain; charset=utf-8")])
        return [REFUSED.encode()]

    return guard


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Logs no request."""


def run(reader: Reader, where: str, host: str, port: int, allow: Iterable[str] = ()) -> int:
    """Serve the metrics on ``host:port`` until SIGINT or SIGTERM, to requests for ``host``
    and the names in ``allow`` (:mod:`focused.monitor.hosts`).

    Prints the ready line ``metrics of the crawls in WHERE on http://HOST:PORT/metrics``.
    """
    registry = CollectorRegistry()
    registry.register(CrawlCollector(reader))
    app = guarded(make_wsgi_app(registry), allowed_hosts(host, allow))
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        family, _, _, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]

        class Server(ThreadingWSGIServer):
            address_family = family

        server = make_server(str(address[0]), port, app, Server, handler_class=QuietHandler)
    except OSError as exc:
        raise FocusedError(f"cannot listen on {host}:{port} ({exc})") from exc
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    print(
        f"metrics of the crawls in {where} on http://{host}:{server.server_port}/metrics",
        flush=True,
    )
    stop.wait()
    server.shutdown()
    server.server_close()
    thread.join()
    return 0
