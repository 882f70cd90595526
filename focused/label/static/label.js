"use strict";
// The labelling page (focused/label/server.py): one key press marks the current page, each mark
// is POSTed at once, and the server's answer (counts, good pages still needed) is what is shown.
const ORDER_NAMES = {best: "best first", uncertain: "least certain first"};
const MARK_KEYS = {g: "good", y: "good", b: "bad", n: "bad", u: null};

const list = document.getElementById("pages");
const help = document.getElementById("help");
const rows = [];   // one <li> per page, in the server's page order
let data = null;   // GET /api/pages
let order = location.hash === "#uncertain" ? "uncertain" : "best";
let current = 0;   // position of the current page in the order
let sending = Promise.resolve();  // marks are sent one after the other

function fill(row, page) {
  const link = row.querySelector(".title");
  link.textContent = page.title || page.url;
  if (/^https?:\/\//i.test(page.url)) link.href = page.url;
  row.querySelector(".r").textContent = page.relevance.toFixed(2);
  row.querySelector(".url").textContent = page.url;
  row.querySelector(".snippet").textContent = page.text ? page.snippet :
    "No main text in the feed: if marked, the page is written with its title only.";
  row.querySelector(".snippet").classList.toggle("missing", !page.text);
  row.querySelector(".category").textContent = page.category || "";
}

function showMark(row, mark, saving) {
  row.dataset.mark = mark || "";
  row.classList.toggle("saving", Boolean(saving));
  row.querySelector(".mark").textContent = mark ? (saving ? mark + " …" : mark) : "";
  for (const button of row.querySelectorAll("button[data-set]")) {
    button.setAttribute("aria-pressed", String(button.dataset.set === (mark || "")));
  }
}

function showSummary(summary) {
  for (const [name, value] of Object.entries(summary.counts)) {
    document.querySelector(`[data-count="${name}"]`).textContent = value;
  }
  const needed = document.getElementById("needed");
  needed.dataset.needed = summary.needed;
  needed.textContent = summary.needed > 0 ?
    `Mark ${summary.needed} more good page${summary.needed === 1 ? "" : "s"}: a crawl needs ` +
    `at least two. The topic is written to ${summary.topic}.` :
    `The topic is ready to crawl: scrapy crawl focused -a topic=${summary.topic}`;
}

function showError(text) {
  const error = document.getElementById("error");
  error.textContent = text;
  error.hidden = !text;
}

function positions() {
  return data.orders[order];
}

function focusRow(position, scroll) {
  const indices = positions();
  current = Math.max(0, Math.min(indices.length - 1, position));
  const row = rows[indices[current]];
  for (const other of list.querySelectorAll(".page.current")) other.classList.remove("current");
  row.classList.add("current");
  row.focus({preventScroll: true});
  if (scroll !== false) row.scrollIntoView({block: "nearest"});
}

function setOrder(name) {
  const index = positions()[current];
  order = name;
  history.replaceState(null, "", "#" + name);
  document.body.dataset.order = name;
  const button = document.getElementById("order");
  button.textContent = ORDER_NAMES[name] + " (o)";
  button.title = `order: ${ORDER_NAMES[name]}; the crawl's boundary is R = ` +
    data.threshold.toFixed(2);
  list.replaceChildren(...positions().map(i => rows[i]));
  focusRow(positions().indexOf(index));
}

function mark(index, value) {
  const row = rows[index];
  const url = data.pages[index].url;
  const before = data.marks[url] || null;
  showMark(row, value, true);
  sending = sending.then(async () => {
    try {
      const response = await fetch("api/marks", {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({url, mark: value}),
      });
      const answer = await response.json();
      if (!response.ok) throw new Error(answer.error || response.statusText);
      if (value) data.marks[url] = value; else delete data.marks[url];
      showMark(row, value, false);
      showSummary(answer);
      showError("");
    } catch (error) {
      showMark(row, before, false);
      showError(`The mark of ${url} was not saved: ${error.message}`);
    }
  });
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || !data) return;
  if (help.open) {  // the dialog's own keys (Esc, Tab, its button), and ? that hides it
    if (event.key === "?") {
      help.close();
      event.preventDefault();
    }
    return;
  }
  if (event.target.closest("button, a") && (event.key === "Enter" || event.key === " ")) return;
  const index = positions()[current];
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;  // Caps Lock too
  if (key in MARK_KEYS) {
    mark(index, MARK_KEYS[key]);
    if (MARK_KEYS[key]) focusRow(current + 1);
  } else if (key === "j" || key === "ArrowDown") focusRow(current + 1);
  else if (key === "k" || key === "ArrowUp") focusRow(current - 1);
  else if (key === "Home") focusRow(0);
  else if (key === "End") focusRow(positions().length - 1);
  else if (key === "o") setOrder(order === "best" ? "uncertain" : "best");
  else if (key === "?") help.showModal();
  else if (key === "Enter") window.open(data.pages[index].url, "_blank", "noopener,noreferrer");
  else return;
  event.preventDefault();
}

function onClick(event) {
  const button = event.target.closest("button[data-set]");
  if (!button) return;
  const index = rows.indexOf(button.closest(".page"));
  mark(index, button.dataset.set || null);
}

function onFocus(event) {  // a row reached by Tab or a click becomes the current page
  const row = event.target.closest(".page");
  if (row && row !== rows[positions()[current]]) {
    focusRow(positions().indexOf(rows.indexOf(row)), false);
    event.target.focus({preventScroll: true});
  }
}

async function start() {
  try {
    const response = await fetch("api/pages");
    if (!response.ok) throw new Error(response.statusText);
    data = await response.json();
  } catch (error) {
    showError(`Cannot read the pages: ${error.message}. Is focused label still running?`);
    return;
  }
  document.getElementById("topic").textContent =
    `${data.pages.length} pages · topic ${data.name} · boundary R = ${data.threshold.toFixed(2)}`;
  const template = document.getElementById("row");
  for (const [index, page] of data.pages.entries()) {
    const row = template.content.firstElementChild.cloneNode(true);
    row.dataset.url = page.url;
    row.dataset.index = index;
    fill(row, page);
    showMark(row, data.marks[page.url], false);
    rows.push(row);
  }
  const missing = data.pages.filter(page => !page.text).length;
  document.querySelector('[data-figure="no_text"]').textContent = missing;
  document.getElementById("no-text").hidden = missing === 0;
  showSummary(data);
  current = Math.max(0, positions().findIndex(i => !data.marks[data.pages[i].url]));
  setOrder(order);
  document.body.dataset.loaded = "true";
}

document.addEventListener("keydown", onKey);
list.addEventListener("click", onClick);
list.addEventListener("focusin", onFocus);
document.getElementById("order").addEventListener("click",
  () => data && setOrder(order === "best" ? "uncertain" : "best"));
document.getElementById("show-help").addEventListener("click", () => help.showModal());
start();
