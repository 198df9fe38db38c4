"""cffi declarations for strata's C ABI, in out-of-line ABI mode.

The declarations are not repeated here: they are the text between the
``BEGIN CDEF`` and ``END CDEF`` markers of ``capi/strata.h``, the header the
Go side is compiled against. Building writes ``strata/_ffi.py``; ABI mode
needs no C compiler, the Go shared library is opened with ``ffi.dlopen``.

Run by setuptools through ``cffi_modules`` in setup.py, or by hand:
``python python/ffi_build.py`` writes ``strata/_ffi.py`` in the source tree.
"""

from __future__ import annotations

import os
import re

import cffi

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "capi", "strata.h")


def cdef_source(header: str = HEADER) -> str:
    """Returns the declarations between the CDEF markers of the header."""
    with open(header, encoding="utf-8") as f:
        text = f.read()
    match = re.search(r"/\* BEGIN CDEF \*/(.*)/\* END CDEF \*/", text, re.DOTALL)
    if match is None:
        raise RuntimeError(f"{header}: no BEGIN CDEF / END CDEF markers")
    return match.group(1)


ffibuilder = cffi.FFI()
ffibuilder.cdef(cdef_source())
ffibuilder.set_source("strata._ffi", None)

if __name__ == "__main__":
    out = os.path.join(os.path.dirname(HEADER), os.pardir, "strata")
    ffibuilder.emit_python_code(os.path.join(out, "_ffi.py"))
