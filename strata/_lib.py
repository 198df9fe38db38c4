"""Opens strata's Go shared library on first use and turns its status codes into exceptions.

Everything that touches the C ABI goes through this module: the library
(``load()``), its constants (``const()``), the per-thread error buffer every
call writes its message into, ``check`` (status code -> typed exception) and
the fork guard.

Why lazily: the Go runtime starts its threads when the library is opened and
does not survive ``fork()``. Programs that import strata in a parent and fork
workers (ann-benchmarks' runner, ``multiprocessing`` with the "fork" start
method, PyTorch DataLoader workers, gunicorn/Celery prefork) must find the
runtime unstarted in the parent. So importing strata opens nothing: the
library is opened by the first ``load()``, that is by the first call that
needs the engine (creating or loading an index, ``kernel_path()``,
``native_version()``). A process that forks before that works in the parent
and in every child; a child forked after it gets ``RuntimeError(FORK_MESSAGE)``
from every call instead of a hang.

How a module that calls the engine uses this (strata/_index.py does exactly this)::

    from strata import _lib
    from strata._ffi import ffi            # types and constants only: starts no Go runtime
    from strata._lib import ERRLEN, check, const

    # Constants come from the cffi declarations, not from the library: safe at import.
    _KIND_HNSW = const("STRATA_KIND_HNSW")

    # Never call load() (or _engine()) at module level: that opens the library on
    # import, which is the bug this module exists to avoid.
    _native: Any = None                    # the library, bound by _engine()
    _strata_search: Any = None             # hot-path functions too: one global read per call

    def _engine() -> Any:
        global _native, _strata_search
        lib = _lib.load()                  # opens on the first call; raises in a forked child
        if _native is None:
            _strata_search, _native = lib.strata_search, lib
        return lib

    class Thing(_lib.NativeObject):
        _FREE = "strata_free"              # releases the handle: close() and __del__
        def __init__(self) -> None:        # and every classmethod that makes a handle
            lib = _engine()
            ...                            # lib.strata_create(..., err, ERRLEN)
            self._attach(handle)           # registers it, so the fork guard can disable it

        def method(self) -> None:
            if self._dead is not None:     # closed, or disabled in a forked child
                self._raise_dead()
            rc = _native.strata_something(self._handle, ..., err, ERRLEN)  # bound: self exists

Objects that hold engine handles derive from ``NativeObject`` and register in
``live_objects`` (``_attach``); after a fork every one of them is disabled in
the child, so their methods raise instead of calling into a dead runtime.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import weakref
from pathlib import Path
from typing import Any, ClassVar, NoReturn, TypeVar

try:
    from strata._ffi import ffi
except ModuleNotFoundError as exc:  # pragma: no cover - depends on how strata was imported
    raise ImportError(
        f"strata: {Path(__file__).parent} is the source tree, which has no built engine. "
        "Install with `pip install .` and import it from elsewhere (or run `python -P`)."
    ) from exc

ERRLEN = 1024
"""Size of the error-message buffer passed as the last two arguments of every call."""

LIBRARY_NAME = "_native.so"
"""The engine's file name inside the package (and its soname). Not a Python extension module (it
has no PyInit function) and not tied to one Python version: the same file serves every CPython.
strata._calls, the compiled cffi wrappers of its functions, links it; importing them loads it."""


def _library_path() -> str:
    path = Path(__file__).resolve().parent / LIBRARY_NAME
    if not path.is_file():
        raise ImportError(
            f"strata: the engine library {LIBRARY_NAME} is missing from {path.parent}; "
            "install the package with `pip install .` (it needs Go to build)"
        )
    return str(path)


def const(name: str) -> int:
    """Returns the integer constant (an enum value of strata.h) without opening the library.

    The values are compiled into strata._ffi, which holds types and
    constants only, so this loads no engine; an unknown name raises
    AttributeError.
    """
    return int(ffi.integer_const(name))


# --- loading ----------------------------------------------------------------
# _library: the opened library, once opened (stays set in a forked child, so the
# child knows its copy of the runtime is dead). _usable: the same object while
# calls are allowed; None before the first load and in a child forked after it.
# load() reads only _usable on its fast path.

_library: Any = None
_usable: Any = None
_load_lock = threading.Lock()


def load() -> Any:
    """Returns the engine library, opening it on the first call.

    Raises RuntimeError(FORK_MESSAGE) in a process forked after the library
    was opened, and ImportError when the library file is missing.
    """
    lib = _usable
    if lib is None:
        lib = _open()
    return lib


def _open() -> Any:
    global _library, _usable
    with _load_lock:
        if forked:
            raise RuntimeError(FORK_MESSAGE)
        if _library is None:
            _library_path()  # a clear error when the engine file is missing
            # Importing the wrappers loads _native.so (their DT_NEEDED) and so
            # starts the Go runtime: this line is the only place that happens.
            from strata._calls import lib

            _library = lib
            _usable = _library
        return _library


def loaded() -> bool:
    """Whether this process has opened the engine library (its Go runtime is started)."""
    return _library is not None


class IntegrityError(RuntimeError):
    """An index's invariants are broken (check_integrity) or its file is damaged (load)."""


class LockedError(RuntimeError):
    """A collection is already open, in this process or another (one writer per directory)."""


class CollectionFailedError(OSError):
    """A write, fsync or checkpoint of a collection failed; it refuses writes until reopened."""


STATUS_OK = const("STRATA_OK")

# One exception per status, and so per kind of the engine's error taxonomy
# (go/errkind; strata.h lists which kind has which status). The classes and
# their bases are part of the API: ValueError for bad input, KeyError for a
# missing id, OSError subclasses for what the operating system refused.
_EXCEPTIONS: dict[int, type[Exception]] = {
    const("STRATA_ERR_INVALID"): ValueError,
    const("STRATA_ERR_TYPE"): TypeError,
    const("STRATA_ERR_NOT_FOUND"): KeyError,
    const("STRATA_ERR_HANDLE"): ValueError,
    const("STRATA_ERR_CORRUPT"): IntegrityError,
    const("STRATA_ERR_INTERNAL"): RuntimeError,
    const("STRATA_ERR_IO"): OSError,
    const("STRATA_ERR_NO_FILE"): FileNotFoundError,
    const("STRATA_ERR_LOCKED"): LockedError,
    const("STRATA_ERR_FAILED"): CollectionFailedError,
    const("STRATA_ERR_EXISTS"): FileExistsError,
}

# The environment's errors: an OSError carrying the errno, so that
# ``except OSError as e: e.errno == errno.ENOSPC`` works as for any file
# call (EACCES makes a PermissionError). The message is the engine's, which
# names the file and the cause.
_ERRNOS: dict[int, int] = {
    const("STRATA_ERR_NO_SPACE"): errno.ENOSPC,
    const("STRATA_ERR_EXHAUSTED"): errno.EMFILE,
    const("STRATA_ERR_READ_ONLY"): errno.EROFS,
    const("STRATA_ERR_PERMISSION"): errno.EACCES,
}


def check(rc: int, err: Any) -> None:
    """Raises the exception for status rc, carrying the engine's message in err.

    Hot paths test ``if rc:`` themselves and only then call check.
    """
    if rc == STATUS_OK:
        return
    message = ffi.string(err).decode("utf-8", "replace") or f"strata: status {rc}"
    code = _ERRNOS.get(rc)
    if code is not None:
        raise OSError(code, message)
    raise _EXCEPTIONS.get(rc, RuntimeError)(message)


class _ErrorBuffer(threading.local):
    # One buffer per thread: the library writes a message into the caller's
    # buffer instead of keeping a global "last error", so threads calling
    # concurrently never see each other's messages. ffi.new allocates from
    # cffi's own backend: no library needed.
    def __init__(self) -> None:
        self.buf = ffi.new("char[]", ERRLEN)


_errors = _ErrorBuffer()


def errbuf() -> Any:
    """Returns this thread's error buffer."""
    return _errors.buf


# --- fork guard -------------------------------------------------------------
# The Go runtime does not survive fork(): its threads are gone in the child
# and an allocation there can hang forever (golang/go#15538). A child forked
# after the library was opened must never call into it, so load() refuses and
# every live index is disabled at fork time. A child forked before that opens
# its own library on first use, like any fresh process.

FORK_MESSAGE = (
    "strata cannot be used in a process created by fork() after the engine was started "
    "in the parent (by creating or loading an index, or by kernel_path()/native_version()): "
    "the Go runtime does not survive fork. Start the engine only after forking (importing "
    "strata does not start it), or use multiprocessing with the 'spawn' or 'forkserver' "
    "start method."
)

forked = False
live_objects: weakref.WeakSet[NativeObject] = weakref.WeakSet()


def _before_fork() -> None:
    # A fork while another thread is opening the library would hand the child a
    # half-initialised runtime and a held lock: wait for the open to finish.
    _load_lock.acquire()


def _after_fork_in_parent() -> None:
    _load_lock.release()


def _after_fork_in_child() -> None:
    global forked, _usable
    _load_lock.release()
    if _library is None:
        return
    forked = True
    _usable = None
    for obj in list(live_objects):
        obj._disable(RuntimeError, FORK_MESSAGE)


os.register_at_fork(
    before=_before_fork,
    after_in_parent=_after_fork_in_parent,
    after_in_child=_after_fork_in_child,
)


_Self = TypeVar("_Self", bound="NativeObject")


class NativeObject:
    """An engine object behind a handle: the lifecycle Index, FlatIndex and Collection share.

    A subclass names the C function that releases its handle (_FREE) and the
    error every call raises once it is closed (_CLOSED), and calls _attach
    with the handle it was given. A live object is disabled in a child forked
    after the engine started (see above), so close() and __del__ there never
    call into the dead runtime.
    """

    __slots__ = ("__weakref__", "_dead", "_dim", "_handle", "_metric")
    _FREE: ClassVar[str]
    _CLOSED: ClassVar[tuple[type[Exception], str]]

    _dead: tuple[type[Exception], str] | None
    _dim: int
    _handle: int
    _metric: str

    def _attach(self, handle: int) -> None:
        self._handle, self._dead = handle, None
        live_objects.add(self)

    def _disable(self, exc: type[Exception], message: str) -> None:
        self._dead = (exc, message)

    def _raise_dead(self) -> NoReturn:
        assert self._dead is not None
        exc, message = self._dead
        raise exc(message)

    def _live(self) -> int:
        """The handle, or the error of a closed (or forked-away) object."""
        if self._dead is not None:
            self._raise_dead()
        return self._handle

    def close(self) -> None:
        """Releases the engine object (a Collection first finishes queued writes,
        checkpoints if needed and releases its directory).

        Later calls raise ValueError("... is closed"). Calling close() again, or on an
        object unusable after fork(), does nothing.
        """
        if self._dead is not None:
            return
        self._dead = self._CLOSED
        err = errbuf()
        rc = getattr(_library, self._FREE)(self._handle, err, ERRLEN)
        if rc:
            check(rc, err)

    def __enter__(self: _Self) -> _Self:  # noqa: PYI019 (typing.Self needs 3.11)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_dead", self._CLOSED) is None:
            # At interpreter shutdown there is nobody to report a failure to.
            with contextlib.suppress(Exception):
                getattr(_library, self._FREE)(self._handle, ffi.NULL, 0)

    @property
    def dim(self) -> int:
        """Number of floats per vector."""
        return self._dim

    @property
    def metric(self) -> str:
        """The distance: "l2" (squared Euclidean), "ip" (1 - dot) or "cosine" (1 - cosine)."""
        return self._metric


def _read_string(name: str) -> str:
    fn = getattr(load(), name)
    out, err = ffi.new("char[]", 256), errbuf()
    rc = fn(out, 256, err, ERRLEN)
    if rc:
        check(rc, err)
    return ffi.string(out).decode("utf-8")


def kernel_path() -> str:
    """Names the distance kernels the engine chose for this CPU (e.g. "avx512", "generic").

    Starts the engine (see strata._lib) if no earlier call did.
    """
    return _read_string("strata_kernel_path")


def native_version() -> str:
    """Returns the version of the engine library. Starts the engine if no earlier call did."""
    return _read_string("strata_version")
