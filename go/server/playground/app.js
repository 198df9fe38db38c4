// strata playground: plain JavaScript against the REST API, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
const TEXT_FIELDS = ["text", "summary", "title", "description", "content", "body", "name"];
let collections = [];

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

function current() {
  return collections.find((c) => c.name === $("collection").value);
}

async function loadCollections() {
  try {
    collections = (await api("GET", "/collections")).collections;
  } catch (e) {
    showError(e);
    return;
  }
  const select = $("collection");
  select.innerHTML = "";
  for (const c of collections) {
    const opt = document.createElement("option");
    opt.value = c.name;
    opt.textContent = c.name;
    select.appendChild(opt);
  }
  const preferred = collections.find((c) => c.name === "pypi") || collections.find((c) => c.name === "demo");
  if (preferred) select.value = preferred.name;
  showInfo();
}

function showInfo() {
  const c = current();
  if (c && c.state === "failed") {
    $("info").textContent = `failed, retried by the server: ${c.error}`;
    return;
  }
  $("info").textContent = c ? `${c.count} points · dim ${c.dim} · ${c.metric}` : "no collections";
}

function showError(e) {
  $("error").textContent = e ? String(e.message || e) : "";
}

function textOf(meta) {
  if (!meta) return "";
  for (const f of TEXT_FIELDS) {
    if (typeof meta[f] === "string" && meta[f]) return meta[f];
  }
  return "";
}

function render(list, hits, truth) {
  list.innerHTML = "";
  for (const h of hits) {
    const li = document.createElement("li");
    if (truth && !truth.has(h.id)) li.className = "miss";
    li.dataset.id = h.id;
    const id = document.createElement("span");
    id.className = "id";
    id.textContent = "#" + h.id;
    const dist = document.createElement("span");
    dist.className = "dist";
    dist.textContent = h.distance === null ? "" : h.distance.toFixed(4);
    li.append(id, dist);
    const text = textOf(h.metadata);
    if (text) {
      const t = document.createElement("span");
      t.className = "text";
      const name = h.metadata.name && h.metadata.name !== text ? h.metadata.name + ": " : "";
      t.textContent = name + text;
      li.appendChild(t);
    }
    const rest = Object.assign({}, h.metadata || {});
    for (const f of TEXT_FIELDS) if (rest[f] === text || f === "name") delete rest[f];
    const m = document.createElement("span");
    m.className = "meta";
    m.textContent = JSON.stringify(rest);
    li.appendChild(m);
    list.appendChild(li);
  }
}

async function queryVector() {
  const mode = document.querySelector("input[name=mode]:checked").value;
  if (mode === "vector") {
    let v;
    try {
      v = JSON.parse($("vector").value);
    } catch (e) {
      throw new Error("the vector is not a JSON list of numbers: " + e.message);
    }
    return v;
  }
  const c = current();
  const p = await api("GET", `/collections/${encodeURIComponent(c.name)}/points/${Number($("point").value)}?include=vector`);
  return p.vector;
}

async function search() {
  showError(null);
  const c = current();
  if (!c) return;
  try {
    const vector = await queryVector();
    const body = { vector, k: Number($("k").value), include: ["metadata", "distances"] };
    const filterText = $("filter").value.trim();
    if (filterText) {
      try {
        body.filter = JSON.parse(filterText);
      } catch (e) {
        throw new Error("the filter is not JSON: " + e.message);
      }
    }
    const path = `/collections/${encodeURIComponent(c.name)}/query`;
    let t0 = performance.now();
    const approx = await api("POST", path, Object.assign({}, body, { ef: Number($("ef").value) }));
    const approxMs = performance.now() - t0;
    t0 = performance.now();
    const exact = await api("POST", path, Object.assign({}, body, { exact: true }));
    const exactMs = performance.now() - t0;
    const truth = new Set(exact.results.map((h) => h.id));
    const found = approx.results.filter((h) => truth.has(h.id)).length;
    const recall = truth.size ? found / truth.size : 1;
    render($("hnsw"), approx.results, truth);
    render($("exact"), exact.results, null);
    $("hnswStats").textContent = `${approxMs.toFixed(1)} ms · ef ${approx.stats.ef} · ${approx.stats.plan} · ${approx.stats.distance_computations} distances`;
    $("exactStats").textContent = `${exactMs.toFixed(1)} ms · ${exact.stats.distance_computations} distances`;
    $("summary").textContent = `recall@${body.k}: ${recall.toFixed(2)} (${found}/${truth.size}) · HNSW ${approxMs.toFixed(1)} ms vs exact ${exactMs.toFixed(1)} ms · ${exact.stats.allowed} points pass the filter`;
    $("summary").dataset.recall = recall.toFixed(3);
  } catch (e) {
    showError(e);
  }
}

$("collection").addEventListener("change", () => { showInfo(); search(); });
$("search").addEventListener("click", search);
$("random").addEventListener("click", () => {
  const c = current();
  if (!c) return;
  document.querySelector("input[name=mode][value=point]").checked = true;
  $("point").value = Math.floor(Math.random() * c.count);
  search();
});
$("ef").addEventListener("input", () => { $("efValue").textContent = $("ef").value; });
$("ef").addEventListener("change", search);
$("token").addEventListener("change", loadCollections);
loadCollections();
