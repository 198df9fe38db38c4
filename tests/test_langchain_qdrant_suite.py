"""langchain-qdrant's own integration tests, from its PyPI sdist, against strata-server.

The sdist ships tests/integration_tests/, parametrized over "locations": ":memory:"
(qdrant-client's local mode, Qdrant's reference in Python) and $QDRANT_URL. This test
downloads the pinned sdist (cached under pytest's cache), starts a scratch strata-server
with its own temporary data dir (their teardown deletes every collection on the server),
runs the suite once with QDRANT_URL pointing at it, and pairs each test run against strata
with its ":memory:" twin: every test that passes on local mode must pass on strata, and
the tests written for a server only (no in-memory twin) must pass.

Left out: tests/integration_tests/fastembed (FastEmbedSparse downloads a model from a model
hub at run time), test_compile.py (a placeholder). The sdist's own pytest settings are not
used (they need syrupy); the suite runs with asyncio_mode=auto as in its pyproject.

The suite has 930 tests (325 on the server); on this loaded 2-core machine all of them take
about 20 minutes, so the normal run takes the first parametrization of each test function on
each location (one local-mode twin, one strata run); STRATA_LANGCHAIN_QDRANT_FULL=1 (make
soak) runs them all.

Many tests of the deprecated `Qdrant` class fail on local mode too (qdrant-client 1.20 refuses
the `init_from` argument that class still passes): they compare nothing and are not required.
Until the door answers DELETE of a missing collection as Qdrant does (200, false: the REST
calls' branch), force_recreate and recreate_collection fail on strata with "no such
collection"; the test probes the door and tolerates exactly those failures while it answers 404.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import textwrap
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from server_process import BINARY, free_port, running_server

VERSION = "1.1.0"

pytestmark = pytest.mark.skipif(
    not BINARY.is_file(), reason="strata-server binary not in the package"
)

# The plugin runs before the suite's modules are imported (their parametrize
# decorators call qdrant_locations()): without it, a Qdrant or strata-server
# that happens to listen on localhost:6333 would be tested, and emptied by
# the suite's teardown.
PLUGIN = textwrap.dedent(
    '''
    """Loaded with -p: keeps langchain-qdrant's suite off localhost:6333."""
    import os

    import tests.integration_tests.fixtures as fixtures

    fixtures.qdrant_running_locally = lambda: False


    def pytest_collection_modifyitems(config, items):
        """Without STRATA_LANGCHAIN_QDRANT_FULL=1: the first parametrization of
        each test function on each location (local mode, the server)."""
        if os.environ.get("STRATA_LANGCHAIN_QDRANT_FULL") == "1":
            return
        url = os.environ["QDRANT_URL"]
        keep, drop, seen = [], [], set()
        for item in items:
            params = getattr(getattr(item, "callspec", None), "params", {})
            where = "server" if url in params.values() else "memory"
            key = (item.module.__name__, item.originalname, where)
            (drop if key in seen else keep).append(item)
            seen.add(key)
        items[:] = keep
        config.hook.pytest_deselected(items=drop)
    '''
)

INI = textwrap.dedent(
    """
    [pytest]
    asyncio_mode = auto
    asyncio_default_fixture_loop_scope = function
    markers =
        requires: mark tests as requiring a specific library
        compile: placeholder test
    """
)


# Failures that do not come from the door: qdrant-client 1.20 itself refuses the `init_from`
# argument that the deprecated `Qdrant` class passes, before any request is sent (on local
# mode too, where those tests have a twin; the server-only tests of that class have none).
CLIENT_REFUSALS = ("Unknown arguments: ['init_from']",)

# Differences found and left to the branch that owns the code (docs/qdrant.md, report of
# issue 26): test function -> why it fails on strata today.
KNOWN = {
    "test_from_texts_passed_optimizers_config_and_on_disk_payload": (
        "get_collection answers a collection created with vectors {'': ...} in the single form "
        "(Qdrant keeps the map form the collection was created with), and the on_disk and "
        "optimizer settings are reported only once PATCH/settings land"
    ),
}


@pytest.fixture(scope="module")
def sdist(request) -> Path:
    """The unpacked sdist, downloaded once into pytest's cache."""
    cache = Path(request.config.cache.mkdir(f"langchain-qdrant-{VERSION}"))
    root = cache / f"langchain_qdrant-{VERSION}"
    if not (root / "tests" / "integration_tests" / "conftest.py").is_file():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
             "--no-binary", ":all:", "--no-deps", "-d", str(cache),
             f"langchain-qdrant=={VERSION}"],
            check=True, timeout=300,
        )  # fmt: skip
        with tarfile.open(cache / f"langchain_qdrant-{VERSION}.tar.gz") as tar:
            tar.extractall(cache, filter="data")
    (root / "strata_location_guard.py").write_text(PLUGIN)
    (root / "strata-pytest.ini").write_text(INI)
    return root


def _outcomes(junit: Path) -> dict[str, tuple[str, str]]:
    """test id -> (passed | failed | skipped, message) from pytest's JUnit XML."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "failed", (child.get("message") or "")[:300]
            elif child.tag == "skipped":
                outcome, message = "skipped", child.get("message") or ""
        out[test_id] = outcome, message
    return out


def test_langchain_qdrant_integration_suite_passes_on_strata_as_on_local_mode(sdist, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    junit = tmp_path / "junit.xml"
    args = [
        sys.executable, "-m", "pytest", "-q", "-p", "strata_location_guard",
        "-c", str(sdist / "strata-pytest.ini"), "--rootdir", str(sdist),
        "-p", "no:cacheprovider", f"--junitxml={junit}",
        "--ignore=tests/integration_tests/fastembed",
        "--ignore=tests/integration_tests/test_compile.py",
        "tests/integration_tests",
    ]  # fmt: skip
    with running_server(tmp_path / "data", "--qdrant-addr", f"127.0.0.1:{port}"):
        probe = urllib.request.Request(url + "/collections/no-such-collection", method="DELETE")
        try:
            urllib.request.urlopen(probe, timeout=30).close()
            delete_missing_is_404 = False
        except urllib.error.HTTPError as e:
            delete_missing_is_404 = e.code == 404
        run = subprocess.run(
            args, cwd=sdist, capture_output=True, text=True, timeout=1800,
            env={**os.environ, "QDRANT_URL": url, "PYTHONPATH": str(sdist)},
        )  # fmt: skip
    assert junit.is_file(), run.stdout[-3000:] + run.stderr[-3000:]
    outcomes = _outcomes(junit)
    on_strata = {t: o for t, o in outcomes.items() if url in t}
    twin = {t: t.replace(url, ":memory:") for t in on_strata}
    assert len(on_strata) >= 40, run.stdout[-3000:]

    # A test that fails on local mode as well says nothing about strata.
    must_pass = [
        t for t in on_strata if twin[t] not in outcomes or outcomes[twin[t]][0] == "passed"
    ]
    failed = {re.sub(re.escape(url), "<strata>", t): on_strata[t][1] for t in must_pass
              if on_strata[t][0] != "passed"}  # fmt: skip
    failed = {t: m for t, m in failed.items() if not any(r in m for r in CLIENT_REFUSALS)}
    if delete_missing_is_404:
        failed = {t: m for t, m in failed.items() if "no such collection" not in m}
    known = {t: m for t, m in failed.items() if t.split("::")[1].split("[")[0] in KNOWN}
    for t, m in known.items():
        print(f"known difference: {t}: {m}")
    failed = {t: m for t, m in failed.items() if t not in known}
    assert not failed, "\n".join(f"{t}: {m}" for t, m in sorted(failed.items()))
    # No test left out silently: skips are only what the reference skips too.
    skipped = [t for t in on_strata if on_strata[t][0] == "skipped"]
    assert not skipped, skipped
