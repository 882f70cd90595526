"""``focused dashboard``: one web page for every crawl in one Redis, refreshing itself.

``GET /`` is a self-contained page (inline CSS, script and SVG: it loads nothing else, so it
works offline) whose script polls ``GET /api/crawls`` every REFRESH_S seconds. That answers
``{"redis": WHERE, "crawls": [...]}``, each crawl's :func:`focused.monitor.snapshot.crawl_snapshot`
with its harvest curve thinned to at most CURVE_POINTS points. Redis is read in a worker thread, so
a slow read never stalls the server. Every figure on the page carries ``data-crawl``,
``data-figure`` and ``data-value`` (the raw value), for tests and scrapers.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any

import redis
from aiohttp import web

from focused.errors import FocusedError
from focused.monitor.snapshot import crawl_snapshots

REFRESH_S = 2.0
CURVE_POINTS = 300
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def thin(points: list[dict[str, Any]], most: int = CURVE_POINTS) -> list[dict[str, Any]]:
    """At most about ``most`` of a curve's points, evenly spaced, the last one kept."""
    step = -(-len(points) // most)
    if step <= 1:
        return points
    kept = points[::step]
    return kept if kept[-1] is points[-1] else [*kept, points[-1]]


def make_app(client: redis.Redis, where: str) -> web.Application:
    """The dashboard's routes: the page and its JSON."""

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    async def crawls(request: web.Request) -> web.Response:
        try:
            snapshots = await asyncio.to_thread(crawl_snapshots, client)
        except redis.RedisError as exc:
            return web.json_response({"error": f"cannot read {where}: {exc}"}, status=503)
        for snapshot in snapshots:
            snapshot["curve"] = thin(snapshot["curve"])
        return web.json_response({"redis": where, "crawls": snapshots})

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/api/crawls", crawls)
    return app


def run(client: redis.Redis, where: str, host: str, port: int) -> int:
    """Serve the dashboard on ``host:port`` until SIGINT or SIGTERM.

    Prints the ready line ``dashboard of the crawls in WHERE on http://HOST:PORT/``.
    """
    if host not in LOOPBACK:
        print(
            f"focused: the dashboard on {host} shows the crawls to anyone who can reach it",
            file=sys.stderr,
        )
    asyncio.run(_serve(make_app(client, where), where, host, port))
    return 0


async def _serve(app: web.Application, where: str, host: str, port: int) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        await runner.cleanup()
        raise FocusedError(f"cannot listen on {host}:{port} ({exc})") from exc
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    shown = f"[{host}]" if ":" in host else host
    print(f"dashboard of the crawls in {where} on http://{shown}:{runner.addresses[0][1]}/")
    sys.stdout.flush()
    try:
        await stopping.wait()
    finally:
        await runner.cleanup()


PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>focused · crawls</title>
<style>
:root {
  --bg: #f3f4f6; --card: #fff; --ink: #111827; --muted: #6b7280; --line: #e5e7eb;
  --blue: #2563eb; --orange: #ea580c; --green: #15803d; --red: #b91c1c; --amber: #b45309;
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
}
header {
  background: #111827; color: #f9fafb; padding: 12px 24px;
  display: flex; align-items: baseline; gap: 18px;
}
header h1 { font-size: 18px; margin: 0; font-weight: 650; }
header .where {
  color: #cbd5e1; font-size: 13px; flex: 1;
  overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
}
header .updated { color: #cbd5e1; font-size: 13px; white-space: nowrap; }
header .updated.stale { color: #fbbf24; }
main { padding: 20px 24px; display: flex; flex-direction: column; gap: 20px; }
.crawl {
  background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 18px 20px; box-shadow: 0 1px 2px rgba(16, 24, 40, .05);
}
.title { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; margin-bottom: 14px; }
.title h2 { margin: 0 6px 0 0; font-size: 20px; }
.badge {
  font-size: 12px; font-weight: 600; padding: 2px 10px; border-radius: 999px;
  background: #eef2f6; color: var(--muted);
}
.badge.running { background: #dcfce7; color: var(--green); }
.badge.finished { background: #e0e7ff; color: #3730a3; }
.badge.stopped { background: #fef3c7; color: var(--amber); }
.badge.alarm { background: #fee2e2; color: var(--red); }
.figures {
  display: grid; grid-template-columns: repeat(9, minmax(0, 1fr));
  gap: 10px; margin-bottom: 18px;
}
.figure { border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; }
.figure.wide { grid-column: span 3; background: #f8fafc; }
.figure .label { color: var(--muted); font-size: 12px; white-space: nowrap; }
.figure .value { font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
.figure .parts { display: flex; gap: 22px; }
.figure .part .label { font-size: 11px; }
.grid {
  display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr);
  gap: 28px; margin-bottom: 18px;
}
.block { margin-bottom: 18px; }
h3 {
  font-size: 12px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted);
  margin: 0 0 8px; font-weight: 600;
}
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td {
  text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line);
  font-size: 13px; white-space: nowrap;
}
th { color: var(--muted); font-weight: 500; }
.num { text-align: right; }
td.url { max-width: 0; width: 100%; overflow: hidden; text-overflow: ellipsis; }
td.url a { color: var(--ink); text-decoration: none; }
td.url a:hover { text-decoration: underline; }
td.name { max-width: 0; width: 60%; overflow: hidden; text-overflow: ellipsis; }
td.barcell { width: 40%; }
.bar { height: 8px; background: var(--blue); border-radius: 4px; opacity: .7; }
svg text { font-size: 11px; fill: var(--muted); }
.legend { display: flex; gap: 16px; font-size: 12px; color: var(--muted); margin-top: 2px; }
.legend .key { display: inline-block; width: 16px; height: 3px; margin-right: 6px;
  vertical-align: middle; border-radius: 2px; }
.alarms {
  background: #fef2f2; border: 1px solid #fecaca; color: #7f1d1d;
  border-radius: 8px; padding: 8px 12px; margin-bottom: 18px;
}
.alarms div + div { margin-top: 4px; }
.note { color: var(--muted); font-size: 13px; margin: 0 0 8px; }
.hubs { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 28px; }
details summary { cursor: pointer; color: var(--muted); font-size: 13px; }
details table { margin-top: 8px; max-width: 720px; }
.empty { color: var(--muted); text-align: center; padding: 60px; }
</style>
</head>
<body>
<header>
  <h1>focused</h1>
  <span class="where" id="redis">crawls in …</span>
  <span class="updated" id="updated">loading…</span>
</header>
<main id="crawls"></main>
<script>
"use strict";
const REFRESH_MS = __REFRESH_MS__;
const SVG = "http://www.w3.org/2000/svg";
const COLORS = {harvest_100: "#2563eb", harvest_1000: "#ea580c"};
const opened = new Set();  // crawls whose Scrapy stats are unfolded

function build(element, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined) continue;
    if (name === "class") element.setAttribute("class", value);
    else element.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}
const h = (tag, attrs, ...children) => build(document.createElement(tag), attrs, children);
const s = (tag, attrs, ...children) => build(document.createElementNS(SVG, tag), attrs, children);

const none = v => v === null || v === undefined;
const int = v => none(v) ? "–" : Number(v).toLocaleString("en-US");
const ratio = v => none(v) ? "–" : Number(v).toFixed(3);
const rate = v => none(v) ? "–" : Number(v).toFixed(1);
function duration(seconds) {
  if (none(seconds)) return "–";
  const t = Math.round(seconds);
  if (t < 60) return t + " s";
  if (t < 3600) return Math.floor(t / 60) + " min " + String(t % 60).padStart(2, "0") + " s";
  return Math.floor(t / 3600) + " h " + String(Math.floor(t % 3600 / 60)).padStart(2, "0") +
    " min";
}
const raw = v => none(v) ? "" : String(v);

function figure(crawl, name, label, value, text) {
  return h("div", {class: "figure"},
    h("div", {class: "label"}, label),
    h("div", {class: "value", "data-crawl": crawl, "data-figure": name, "data-value": raw(value)},
      text));
}

function harvest(crawl, c) {
  const parts = [["harvest", "all pages"], ["harvest_100", "last 100"],
    ["harvest_1000", "last 1,000"]];
  return h("div", {class: "figure wide"},
    h("div", {class: "label"}, "harvest · share of classified pages that are relevant"),
    h("div", {class: "parts"}, parts.map(([name, label]) => h("div", {class: "part"},
      h("div", {class: "value", "data-crawl": crawl, "data-figure": name,
        "data-value": raw(c[name])}, ratio(c[name])),
      h("div", {class: "label"}, label)))));
}

function link(url) {
  const safe = /^https?:\\/\\//i.test(url);
  return h("a", {href: safe ? url : null, title: url, rel: "noreferrer"}, url);
}

function niceStep(span) {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(span, 1))));
  for (const m of [1, 2, 5, 10]) if (m * p >= span) return m * p;
  return 10 * p;
}

function curve(crawl, points) {
  const W = 660, H = 240, L = 40, R = 14, T = 10, B = 34;
  const y = v => T + (1 - v) * (H - T - B);
  const svg = s("svg", {viewBox: `0 0 ${W} ${H}`, width: "100%", role: "img",
    "aria-label": "harvest curve", "data-crawl": crawl, "data-figure": "curve",
    "data-value": points.length});
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    svg.append(s("line", {x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#e5e7eb"}),
      s("text", {x: L - 6, y: y(v) + 4, "text-anchor": "end"}, v.toFixed(2)));
  }
  if (!points.length) {
    svg.append(s("text", {x: (W + L) / 2, y: H / 2, "text-anchor": "middle"},
      "no classified pages yet"));
    return svg;
  }
  const last = points[points.length - 1].pages;
  const x = v => L + v / last * (W - L - R);
  const step = niceStep(last / 6);
  for (let v = 0; v <= last; v += step) {
    svg.append(s("line", {x1: x(v), x2: x(v), y1: H - B, y2: H - B + 4, stroke: "#9ca3af"}),
      s("text", {x: x(v), y: H - B + 16, "text-anchor": "middle"}, int(v)));
  }
  svg.append(s("text", {x: W - R, y: H - 2, "text-anchor": "end"}, "pages classified"));
  for (const key of ["harvest_1000", "harvest_100"]) {
    const at = points.map(p => `${x(p.pages).toFixed(1)},${y(p[key]).toFixed(1)}`);
    svg.append(s("polyline", {points: at.join(" "), fill: "none", stroke: COLORS[key],
      "stroke-width": 2, "stroke-linejoin": "round", "data-series": key}));
    const end = points[points.length - 1];
    svg.append(s("circle", {cx: x(end.pages), cy: y(end[key]), r: 3, fill: COLORS[key]}));
  }
  return svg;
}

function census(c) {
  const rows = Object.entries(c.census).sort((a, b) => b[1] - a[1]);
  const top = rows.slice(0, 12);
  const most = top.length ? top[0][1] : 1;
  const table = h("table", {},
    h("tr", {}, h("th", {}, "category"), h("th", {class: "num"}, "pages"),
      h("th", {class: "num"}, "share"), h("th", {})),
    top.map(([name, n]) => h("tr", {"data-crawl": c.crawl, "data-category": name},
      h("td", {class: "name", title: name}, name),
      h("td", {class: "num", "data-figure": "census", "data-value": n}, int(n)),
      h("td", {class: "num"}, c.classified ? (100 * n / c.classified).toFixed(1) + " %" : "–"),
      h("td", {class: "barcell"},
        h("div", {class: "bar", style: `width: ${(100 * n / most).toFixed(1)}%`})))));
  return h("div", {},
    h("h3", {}, "Census by best category"),
    rows.length ? table : h("p", {class: "note"}, "no classified pages yet"),
    rows.length > top.length ?
      h("p", {class: "note"}, `and ${rows.length - top.length} more categories`) : null);
}

function processes(c) {
  const head = h("tr", {}, ["process", "state", "pages", "items", "relevant", "pages/s",
    "limit", "time left", "last beat"].map((t, i) => h("th", {class: i > 1 ? "num" : null}, t)));
  const rows = c.processes.map(p => {
    const limits = [];
    if (p.page_limit) limits.push(int(p.page_limit) + " pages");
    if (p.item_limit) limits.push(int(p.item_limit) + " items");
    const state = p.alive ? "running" : `finished (${p.reason})`;
    const cell = (name, value, text) => h("td", {class: "num", "data-figure": name,
      "data-value": raw(value)}, text);
    return h("tr", {"data-crawl": c.crawl, "data-process": p.id},
      h("td", {}, p.id),
      h("td", {"data-figure": "state", "data-value": p.state},
        h("span", {class: "badge " + (p.alive ? "running" : "finished")}, state)),
      cell("pages", p.pages, int(p.pages)),
      cell("items", p.items, int(p.items)),
      cell("relevant", p.relevant, int(p.relevant)),
      cell("pages_per_s", p.pages_per_s, p.alive ? rate(p.pages_per_s) : "–"),
      h("td", {class: "num"}, limits.join(", ") || "none"),
      cell("time_left", p.time_left, duration(p.time_left)),
      h("td", {class: "num"}, duration(p.beat_age) + " ago"));
  });
  return h("div", {class: "block"},
    h("h3", {}, `Processes (${c.alive} alive)`),
    rows.length ? h("table", {}, head, rows) :
      h("p", {class: "note"}, "no process has recorded a heartbeat"));
}

function ranked(title, crawl, kind, entries) {
  return h("div", {},
    h("h3", {}, title),
    entries.length ? h("table", {}, entries.map((e, i) =>
      h("tr", {"data-crawl": crawl, "data-figure": kind, "data-value": e.url},
        h("td", {class: "num"}, i + 1), h("td", {class: "url"}, link(e.url)),
        h("td", {class: "num"}, e.score.toFixed(4))))) : h("p", {class: "note"}, "none"));
}

function distiller(c) {
  const d = c.distill;
  if (!d) {
    return h("div", {class: "block"},
      h("h3", {}, "Distiller"), h("p", {class: "note"}, "has not run yet"));
  }
  const summary = `last run ${duration(c.time - d.time)} ago, at ${int(d.fetched)} pages ` +
    `fetched: ${int(d.pages)} pages, ${int(d.edges)} edges, ${int(d.authorities)} ` +
    `authorities, ${int(d.reboosted)} re-boosted, in ${d.seconds} s (run ${int(d.runs)})`;
  return h("div", {class: "block"},
    h("h3", {}, "Distiller"),
    h("p", {class: "note", "data-crawl": c.crawl, "data-figure": "distilled_at",
      "data-value": d.fetched}, summary),
    h("div", {class: "hubs"},
      ranked("Top hubs", c.crawl, "hub", d.top_hubs),
      ranked("Top authorities", c.crawl, "authority", d.top_authorities)));
}

function scrapyStats(c) {
  const details = h("details", {"data-crawl": c.crawl},
    h("summary", {}, `Crawl-wide Scrapy stats (${Object.keys(c.scrapy).length})`),
    h("table", {}, Object.entries(c.scrapy).map(([name, value]) =>
      h("tr", {}, h("td", {}, name),
        h("td", {class: "num", "data-figure": "scrapy", "data-stat": name,
          "data-value": raw(value)}, typeof value === "number" ? int(value) : value)))));
  details.open = opened.has(c.crawl);
  details.addEventListener("toggle", () => {
    if (details.open) opened.add(c.crawl); else opened.delete(c.crawl);
  });
  return details;
}

function card(c) {
  let state = c.state;
  if (c.state === "running") state += ` · ${c.alive} process${c.alive === 1 ? "" : "es"}`;
  else if (c.finish_reason) state += ` (${c.finish_reason})`;
  const n = c.crawl;
  const figures = h("div", {class: "figures"},
    figure(n, "queued", "queued", c.queued, int(c.queued)),
    figure(n, "in_flight", "in flight", c.in_flight, int(c.in_flight)),
    figure(n, "fetched", "fetched", c.fetched, int(c.fetched)),
    figure(n, "relevant", "relevant", c.relevant, int(c.relevant)),
    harvest(n, c),
    figure(n, "pages_per_s", "pages/s", c.pages_per_s, rate(c.pages_per_s)),
    figure(n, "time_left", "time left", c.time_left, duration(c.time_left)));
  const legend = h("div", {class: "legend"},
    ["harvest_100", "harvest_1000"].map(key => h("span", {},
      h("span", {class: "key", style: `background: ${COLORS[key]}`}),
      "harvest, " + (key === "harvest_100" ? "last 100 pages" : "last 1,000 pages"))));
  return h("section", {class: "crawl", "data-crawl": n},
    h("div", {class: "title"},
      h("h2", {}, n),
      h("span", {class: "badge " + c.state, "data-crawl": n, "data-figure": "state",
        "data-value": c.state}, state),
      h("span", {class: "badge"},
        ["soft", "hard"].includes(c.focus) ? c.focus + " focus" : c.focus),
      c.alarms.map(a => h("span", {class: "badge alarm", "data-crawl": n, "data-figure": "alarm",
        "data-value": a.name}, a.name))),
    figures,
    c.alarms.length ? h("div", {class: "alarms"},
      c.alarms.map(a => h("div", {}, h("strong", {}, a.name + ": "), a.message))) : null,
    h("div", {class: "grid"},
      h("div", {}, h("h3", {}, "Harvest curve"), curve(n, c.curve), legend),
      census(c)),
    processes(c),
    distiller(c),
    scrapyStats(c));
}

function render(data) {
  document.getElementById("redis").textContent = "crawls in " + data.redis;
  const crawls = data.crawls.slice().sort((a, b) =>
    (a.state !== "running") - (b.state !== "running") || a.crawl.localeCompare(b.crawl));
  const main = document.getElementById("crawls");
  main.replaceChildren(...(crawls.length ? crawls.map(card) :
    [h("p", {class: "empty"}, "No crawls in this Redis yet.")]));
  document.body.dataset.crawls = crawls.length;
}

async function refresh() {
  const updated = document.getElementById("updated");
  try {
    const response = await fetch("api/crawls", {cache: "no-store"});
    const data = await response.json();
    if (!response.ok) throw new Error(data.error || response.statusText);
    render(data);
    updated.textContent = `updated ${new Date().toLocaleTimeString("en-GB")} · ` +
      `every ${REFRESH_MS / 1000} s`;
    updated.classList.remove("stale");
  } catch (error) {
    updated.textContent = "cannot refresh: " + error.message;
    updated.classList.add("stale");
  } finally {
    setTimeout(refresh, REFRESH_MS);
  }
}
refresh();
</script>
</body>
</html>
""".replace("__REFRESH_MS__", str(round(REFRESH_S * 1000)))
