"use strict";
// Set by the server (REFRESH_S in focused/monitor/dashboard.py).
const CONFIG = JSON.parse(document.getElementById("config").textContent);
const REFRESH_MS = CONFIG.refresh_ms;
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
// Hub and authority scores add up to 1 over the whole graph: a big one's are tiny, not 0.
const score = v => v === 0 || Math.abs(v) >= 0.001 ? v.toFixed(4) : v.toExponential(2);
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

// The last estimate of what is left to find: relevant pages found of those in reach, its 90 %
// interval, and what the best queued URLs are expected to hold.
function coverage(crawl, c) {
  const e = c.coverage;
  const total = e ? e.found + e.left : null;
  const text = e ? `${int(Math.round(e.found))} / ${int(Math.round(total))}` : "-";
  const detail = e ? `90 %: ${int(Math.round(e.found + e.low))}–${int(Math.round(e.found + e.high))}` +
    ` · best 100 queued: ${e.next.toFixed(1)} relevant · at ${int(e.pages)} pages` : "no estimate yet";
  return h("div", {class: "figure wide"},
    h("div", {class: "label"}, "relevant found / estimated in reach"),
    h("div", {class: "value", "data-crawl": crawl, "data-figure": "in_reach",
      "data-value": raw(total)}, text),
    h("div", {class: "label", "data-crawl": crawl, "data-figure": "coverage"}, detail));
}

function link(url) {
  const safe = /^https?:\/\//i.test(url);
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

// The census's category of pages that have none (a topic without categories: all its pages).
const NO_CATEGORY = "-";

function census(c) {
  const rows = Object.entries(c.census).sort((a, b) => b[1] - a[1]);
  const uncategorised = rows.length === 1 && rows[0][0] === NO_CATEGORY;
  const top = rows.slice(0, 12);
  const most = top.length ? top[0][1] : 1;
  const table = h("table", {},
    h("tr", {}, h("th", {}, "category"), h("th", {class: "num"}, "pages"),
      h("th", {class: "num"}, "share"), h("th", {})),
    top.map(([name, n]) => h("tr", {"data-crawl": c.crawl, "data-category": name},
      h("td", {class: "name", title: name}, name === NO_CATEGORY ? "(no category)" : name),
      h("td", {class: "num", "data-figure": "census", "data-value": n}, int(n)),
      h("td", {class: "num"}, c.classified ? (100 * n / c.classified).toFixed(1) + " %" : "–"),
      h("td", {class: "barcell"},
        h("div", {class: "bar", style: `width: ${(100 * n / most).toFixed(1)}%`})))));
  return h("div", {},
    h("h3", {}, "Census by best category"),
    uncategorised ? h("p", {class: "note", "data-figure": "census_none"},
      "the topic has no categories") :
      rows.length ? table : h("p", {class: "note"}, "no classified pages yet"),
    rows.length > top.length ?
      h("p", {class: "note"}, `and ${rows.length - top.length} more categories`) : null);
}

function processes(c) {
  const head = h("tr", {}, ["process", "state", "responses", "items", "relevant", "pages/s",
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
        h("td", {class: "num"}, score(e.score))))) : h("p", {class: "note"}, "none"));
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

function learning(c) {
  // A light topic learning itself (keywords, example pages): its last refit and top words.
  const l = c.learned;
  if (!l) return null;
  const when = l.time ? `${duration(c.time - l.time)} ago, at ${int(l.pages)} pages fetched`
    : "not refitted yet";
  return h("div", {class: "block"},
    h("h3", {}, "Topic learning"),
    h("p", {class: "note", "data-crawl": c.crawl, "data-figure": "learned_generation",
      "data-value": raw(l.generation || 0)},
      `generation ${int(l.generation || 0)}, last refit ${when}; ${int(l.refused || 0)} ` +
      `refused as drift; ${int(c.rescored)} queued URLs scored again`),
    h("p", {"data-crawl": c.crawl, "data-figure": "learned_top", "data-value": l.top.join(", ")},
      "It now weighs most: " + (l.top.join(", ") || "-")));
}

function defences(c) {
  // What the budgets, the host-queue cap and the scope rules took (Bound a crawl, in the docs).
  const scope = Object.entries(c.out_of_scope);
  const rows = [
    ["hosts_held", "hosts held now (over a budget, fetched when nothing else is queued)",
      c.hosts_held],
    ...Object.entries(c.held).map(([budget, n]) =>
      ["held_" + budget, `hosts put on hold by the ${budget} budget`, n]),
    ["dropped_host_queue", "queued URLs dropped, host queue full", c.dropped_host_queue],
    ...scope.map(([rule, n]) => ["out_of_scope_" + rule, `links out of scope: ${rule}`, n]),
    ["links_capped", "links left out past a page's cap", c.links_capped],
  ];
  return h("div", {class: "block"},
    h("h3", {}, "Defences"),
    h("table", {}, rows.map(([name, label, value]) =>
      h("tr", {}, h("td", {}, label),
        h("td", {class: "num", "data-crawl": c.crawl, "data-figure": name,
          "data-value": raw(value)}, int(value))))));
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
    figure(n, "time_left", "time left", c.time_left, duration(c.time_left)),
    coverage(n, c));
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
      c.alarms.map(a => h("span", {class: "badge " + (a.level === "notice" ? "notice" : "alarm"),
        "data-crawl": n, "data-figure": "alarm", "data-value": a.name}, a.name))),
    figures,
    c.alarms.length ? h("div", {class: "alarms" +
        (c.alarms.every(a => a.level === "notice") ? " calm" : "")},
      c.alarms.map(a => h("div", {class: a.level}, h("strong", {}, a.name + ": "), a.message)))
      : null,
    h("div", {class: "grid"},
      h("div", {}, h("h3", {}, "Harvest curve"), curve(n, c.curve), legend),
      census(c)),
    processes(c),
    distiller(c),
    learning(c),
    defences(c),
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
