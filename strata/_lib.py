"""Loads strata's Go shared library once and turns its status codes into exceptions.

Everything that touches the C ABI goes through this module: ``ffi``/``lib``,
the per-thread error buffer every call writes its message into, ``check``
(status code -> typed exception) and the fork guard.
"""

from __future__ import annotations

import importlib.machinery
import os
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    from strata._ffi import ffi
except ModuleNotFoundError as exc:  # pragma: no cover - depends on how strata was imported
    raise ImportError(
        f"strata: {Path(__file__).parent} is the source tree, which has no built engine. "
        "Install with `pip install .` and import it from elsewhere (or run `python -P`)."
    ) from exc

if TYPE_CHECKING:
    from strata._index import _BaseIndex

ERRLEN = 1024
"""Size of the error-message buffer passed as the last two arguments of every call."""


def _library_path() -> str:
    here = Path(__file__).resolve().parent
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = here / f"_native{suffix}"
        if candidate.is_file():
            return str(candidate)
    raise ImportError(
        f"strata: the engine library _native*.so is missing from {here}; "
        "install the package with `pip install .` (it needs Go to build)"
    )


lib: Any = ffi.dlopen(_library_path())


class IntegrityError(RuntimeError):
    """An index's invariants are broken (check_integrity) or its file is damaged (load)."""


_EXCEPTIONS: dict[int, type[Exception]] = {
    lib.STRATA_ERR_INVALID: ValueError,
    lib.STRATA_ERR_TYPE: TypeError,
    lib.STRATA_ERR_NOT_FOUND: KeyError,
    lib.STRATA_ERR_HANDLE: ValueError,
    lib.STRATA_ERR_CORRUPT: IntegrityError,
    lib.STRATA_ERR_INTERNAL: RuntimeError,
    lib.STRATA_ERR_IO: OSError,
    lib.STRATA_ERR_NO_FILE: FileNotFoundError,
}


def check(rc: int, err: Any) -> None:
    """Raises the exception for status rc, carrying the engine's message in err.

    Hot paths test ``if rc:`` themselves and only then call check.
    """
    if rc == lib.STRATA_OK:
        return
    message = ffi.string(err).decode("utf-8", "replace") or f"strata: status {rc}"
    raise _EXCEPTIONS.get(rc, RuntimeError)(message)


class _ErrorBuffer(threading.local):
    # One buffer per thread: the library writes a message into the caller's
    # buffer instead of keeping a global "last error", so threads calling
    # concurrently never see each other's messages.
    def __init__(self) -> None:
        self.buf = ffi.new("char[]", ERRLEN)


_errors = _ErrorBuffer()


def errbuf() -> Any:
    """Returns this thread's error buffer."""
    return _errors.buf


# --- fork guard -------------------------------------------------------------
# The Go runtime does not survive fork(): its threads are gone in the child
# and an allocation there can hang forever (golang/go#15538). A child must
# never call into the library, so every live index is disabled at fork time.

FORK_MESSAGE = (
    "strata cannot be used in a process created by fork() after the library was "
    "loaded: the Go runtime does not survive fork. Create indexes in the child "
    "instead, or use multiprocessing with the 'spawn' or 'forkserver' start method."
)

forked = False
live_indexes: weakref.WeakSet[_BaseIndex] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    global forked
    forked = True
    for index in list(live_indexes):
        index._disable(RuntimeError, FORK_MESSAGE)


os.register_at_fork(after_in_child=_after_fork_in_child)


def ensure_not_forked() -> None:
    """Raises RuntimeError in a forked child."""
    if forked:
        raise RuntimeError(FORK_MESSAGE)


def _read_string(fn: Any) -> str:
    ensure_not_forked()
    out, err = ffi.new("char[]", 256), errbuf()
    rc = fn(out, 256, err, ERRLEN)
    if rc:
        check(rc, err)
    return ffi.string(out).decode("utf-8")


def kernel_path() -> str:
    """Names the distance kernels the engine chose for this CPU (e.g. "avx512", "generic")."""
    return _read_string(lib.strata_kernel_path)


def native_version() -> str:
    """Returns the version of the loaded engine library."""
    return _read_string(lib.strata_version)
