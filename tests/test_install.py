"""The tests must exercise the installed wheel, not the source tree."""

import os
from pathlib import Path

import strata

REPO = Path(__file__).resolve().parent.parent


def test_imports_installed_package_not_source_tree():
    location = Path(strata.__file__).resolve().parent
    assert location != REPO / "strata", f"imported the source tree: {location}"
    assert "site-packages" in location.parts, location


# Every Go binary carries its build information after this magic (runtime/debug.ReadBuildInfo).
GO_BUILDINFO_MAGIC = b"\xff Go buildinf:"


def test_wheel_ships_exactly_one_go_library():
    # Two Go runtimes in one process are unsupported: the cffi wrappers next to
    # the engine must be plain C.
    location = Path(strata.__file__).resolve().parent
    libraries = sorted(p.name for p in location.glob("*.so"))
    go = [name for name in libraries if GO_BUILDINFO_MAGIC in (location / name).read_bytes()]
    assert go == ["_native.so"], (go, libraries)
    assert sorted(set(libraries) - set(go)) == ["_calls.abi3.so", "_ffi.abi3.so"], libraries
    assert not list(location.glob("*.h")), "the cgo-generated header leaked into the wheel"


def test_wheel_ships_the_server_binary():
    # The server, Qdrant and playground suites skip when the binary is missing (a
    # source install without Go): this makes a wheel without it fail instead.
    server = Path(strata.__file__).resolve().parent / "bin" / "strata-server"
    assert server.is_file(), f"{server} is missing: the wheel was built without the server"
    assert os.access(server, os.X_OK), f"{server} is not executable"
    assert GO_BUILDINFO_MAGIC in server.read_bytes(), f"{server} is not a Go binary"


def test_versions_agree():
    assert strata.native_version() == strata.__version__


def test_kernel_path_is_named():
    path = strata.kernel_path()
    assert isinstance(path, str) and path
