"""The one wheel: tagged cp310-abi3-<platform>, and working under a second Python version.

Nothing in the wheel depends on the Python minor version (cffi modules compiled
against the limited API, plain C shared library), so one file must serve every
supported CPython. This installs the
wheel that `make install` built (dist/) into a venv of another interpreter,
3.10 preferably (the oldest supported, and ann-benchmarks' image), and searches
there. The venv is kept in .venv-wheel/ between runs, so only the first run downloads
numpy and cffi for it.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import strata

REPO = Path(__file__).resolve().parent.parent
PYENV_ROOT = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
PREFERRED_MINORS = (10, 12, 13, 11)  # 3.10 first: the oldest version requires-python allows

SMOKE = """
import sys
import numpy as np
import strata
with open("/proc/self/maps") as f:
    assert "strata/_native" not in f.read(), "import strata opened the engine"
index = strata.Index(8, seed=1)
data = np.random.default_rng(0).standard_normal((300, 8)).astype(np.float32)
index.add(data)
ids, _ = index.search(data[:10], k=1)
assert ids[:, 0].tolist() == list(range(10)), ids
flat = strata.FlatIndex(8, metric="cosine")
flat.add(data)
assert flat.search(data[3], k=1)[0][0, 0] == 3
print(sys.version_info[0], sys.version_info[1], strata.__file__, strata.native_version())
"""


def _platform_tag() -> str:
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of the installed engine: dist/'s if it matches, else a fresh `pip wheel`."""
    installed = (Path(strata.__file__).parent / "_native.so").read_bytes()
    candidates = sorted(REPO.glob("dist/strata-*.whl"), key=lambda p: p.stat().st_mtime)
    for path in reversed(candidates):
        with zipfile.ZipFile(path) as zf:
            if _sha256(zf.read("strata/_native.so")) == _sha256(installed):
                return path
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(REPO)],
        check=True,
        timeout=900,
    )
    return next(out.glob("strata-*.whl"))


def test_wheel_is_tagged_for_every_python(wheel):
    assert wheel.name.endswith(f"-cp310-abi3-{_platform_tag()}.whl"), wheel.name
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        info = next(n for n in names if n.endswith(".dist-info/WHEEL"))
        metadata = zf.read(info).decode()
    assert f"Tag: cp310-abi3-{_platform_tag()}" in metadata, metadata
    assert "Root-Is-Purelib: false" in metadata, metadata
    libraries = sorted(n for n in names if n.endswith(".so"))
    # No cpython-3XX name to outgrow: the engine is plain C, the cffi modules limited-API.
    assert libraries == ["strata/_calls.abi3.so", "strata/_ffi.abi3.so", "strata/_native.so"]
    assert "strata/bin/strata-server" in names, "the wheel lacks the server binary"
    # What python -m strata.playground_model builds the playground's encoder from.
    model = REPO / "go" / "server" / "playground" / "model"
    for name in ("package.json", "package-lock.json", "entry.js", "build.mjs"):
        with zipfile.ZipFile(wheel) as zf:
            assert zf.read(f"strata/_playground_model/{name}") == (model / name).read_bytes(), name


def _candidates() -> list[str]:
    """Interpreters to try, preferred first: $STRATA_SECOND_PYTHON, python3.X on PATH
    (Debian's python3.X packages), pyenv's versions."""
    override = os.environ.get("STRATA_SECOND_PYTHON")
    if override:
        return [override]
    found = []
    for minor in PREFERRED_MINORS:
        if minor == sys.version_info[1]:
            continue
        on_path = shutil.which(f"python3.{minor}")
        if on_path:
            found.append(on_path)
        found += sorted(glob.glob(str(PYENV_ROOT / "versions" / f"3.{minor}.*" / "bin" / "python")))
    return found


def _second_python() -> tuple[str, tuple[int, int]] | None:
    """The first candidate that runs and is not this Python's minor version."""
    for python in _candidates():
        try:
            proc = subprocess.run(
                [python, "-c", "import sys; print(*sys.version_info[:2])"],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
        except OSError:
            continue
        if proc.returncode != 0:  # e.g. a pyenv shim for a version that is not selected
            continue
        major, minor = map(int, proc.stdout.split())
        if (major, minor) != sys.version_info[:2]:
            return python, (major, minor)
    return None


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert proc.returncode == 0, f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stderr}"
    return proc


def test_wheel_installs_and_searches_under_second_python(wheel, tmp_path):
    found = _second_python()
    if found is None:
        pytest.skip(
            "no second Python version to install the wheel into (looked for python3.X on "
            f"PATH and in {PYENV_ROOT}/versions); set STRATA_SECOND_PYTHON to one"
        )
    python, (major, minor) = found
    venv = REPO / ".venv-wheel" / f"{major}.{minor}"
    venv_python = venv / "bin" / "python"
    if not venv_python.exists():
        _run([python, "-m", "venv", str(venv)], timeout=300)
    pip = [str(venv_python), "-m", "pip", "--quiet", "--disable-pip-version-check"]
    # The version does not change between builds: force the file in, then let pip
    # check requires-python and install the dependencies (only the first time).
    _run([*pip, "install", "--force-reinstall", "--no-deps", str(wheel)], timeout=300)
    _run([*pip, "install", str(wheel)], timeout=900)
    out = _run([str(venv_python), "-c", SMOKE], cwd=tmp_path, timeout=120).stdout.split()
    assert out[:2] == [str(major), str(minor)], out
    assert Path(out[2]).is_relative_to(venv), out  # the venv's copy, not the source tree
    assert out[3] == strata.__version__
