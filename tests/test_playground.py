"""The playground in a real browser: headless Chromium (Debian's) driven by selenium.

Skips when chromium, chromedriver or selenium is missing. The screenshot goes to
$STRATA_SCREENSHOT when set (the README's is made that way).
"""

from __future__ import annotations

import os
import shutil
import tempfile

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
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


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
        yield srv


def _results(driver, list_id):
    items = driver.find_elements(By.CSS_SELECTOR, f"#{list_id} li")
    return [(int(li.get_attribute("data-id")), li.text) for li in items]


def _search(driver):
    old = driver.find_element(By.ID, "summary").text
    driver.find_element(By.ID, "search").click()
    WebDriverWait(driver, 20).until(
        lambda d: (
            d.find_element(By.ID, "summary").text not in ("", old)
            or d.find_element(By.ID, "error").text
        )
    )
    assert driver.find_element(By.ID, "error").text == ""


def test_search_and_filtered_search_show_results_beside_exact(browser, server):
    browser.get(server.url + "/")
    WebDriverWait(browser, 20).until(
        ec.text_to_be_present_in_element((By.ID, "info"), "2000 points")
    )
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
