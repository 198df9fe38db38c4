"""cffi declarations for strata's C ABI: two small API-mode extension modules.

The declarations are not repeated here: they are the text between the
``BEGIN CDEF`` and ``END CDEF`` markers of ``capi/strata.h``, the header the
Go side is compiled against. That text is split in two:

``strata._ffi`` (``ffibuilder``)
    the types and enum constants only. It contains no call into the engine
    and links nothing, so importing it (which ``import strata`` does) starts
    no Go runtime: programs that fork after importing strata stay safe.
``strata._calls`` (``callsbuilder``)
    the functions. It includes ``strata._ffi`` (the two share one set of
    types, so a ``strata_info *`` made by either is accepted by both) and
    links the engine, ``_native.so``, found next to it through
    ``$ORIGIN``: importing it loads the engine and starts the Go runtime,
    which is why ``strata._lib.load()`` imports it on first use and nothing
    imports it earlier.

Why API mode, that is compiled wrappers, rather than ABI mode (``dlopen``
and libffi, which needs no compiler): a call then goes straight from the
wrapper to the engine instead of through libffi's generic call path, about
0.3 us less per call, which is a tenth of a single-query search on a small
index (bench/bench_overhead.py). Building already needs gcc (cgo), and both
modules use the CPython limited API, so one ``abi3`` wheel still serves
every supported CPython.

Run by setuptools through ``cffi_modules`` in setup.py, which also supplies
the engine's directory to link against.
"""

from __future__ import annotations

import os
import re

import cffi

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "capi", "strata.h")

# A function declaration of the CDEF text: every exported call returns int
# or void and is named strata_*. Everything else (typedefs, enums, structs)
# is a type.
_FUNCTION = re.compile(r"^(?:int|void)\s+strata_\w+\s*\([^;]*\);", re.MULTILINE)


def cdef_source(header: str = HEADER) -> str:
    """Returns the declarations between the CDEF markers of the header."""
    with open(header, encoding="utf-8") as f:
        text = f.read()
    match = re.search(r"/\* BEGIN CDEF \*/(.*)/\* END CDEF \*/", text, re.DOTALL)
    if match is None:
        raise RuntimeError(f"{header}: no BEGIN CDEF / END CDEF markers")
    return match.group(1)


def split_cdef(text: str) -> tuple[str, str]:
    """Splits CDEF text into (types, functions)."""
    functions = _FUNCTION.findall(text)
    if not functions:
        raise RuntimeError(f"{HEADER}: no strata_* function declarations between the CDEF markers")
    return _FUNCTION.sub("", text), "\n".join(functions)


_types, _functions = split_cdef(cdef_source())
_INCLUDE = '#include "strata.h"'
_CAPI = os.path.normpath(os.path.dirname(HEADER))

ffibuilder = cffi.FFI()
ffibuilder.cdef(_types)
ffibuilder.set_source("strata._ffi", _INCLUDE, include_dirs=[_CAPI])

callsbuilder = cffi.FFI()
callsbuilder.include(ffibuilder)
callsbuilder.cdef(_functions)
# Linked against _native.so: setup.py's build_ext adds the directory the
# engine was built into and the -l:_native.so / rpath $ORIGIN link flags.
callsbuilder.set_source("strata._calls", _INCLUDE, include_dirs=[_CAPI])
