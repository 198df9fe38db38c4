"""The C ABI itself rejects bad calls with a status code instead of crashing."""

import numpy as np
import pytest
from strata._ffi import ffi

import strata
from strata import _lib
from strata._lib import ERRLEN, check

lib = _lib.load()  # these tests call the C ABI directly


def call(fn, *args):
    err = ffi.new("char[]", ERRLEN)
    rc = fn(*args, err, ERRLEN)
    return rc, ffi.string(err).decode()


def create(kind=lib.STRATA_KIND_FLAT, dim=4, metric=0):
    out = ffi.new("strata_handle *")
    rc, message = call(lib.strata_create, kind, dim, metric, 16, 200, 0, 0, out)
    return rc, message, out[0]


@pytest.mark.parametrize(
    ("kind", "dim", "metric", "words"),
    [
        (7, 4, 0, "unknown index kind"),
        (lib.STRATA_KIND_FLAT, 0, 0, "dim"),
        (lib.STRATA_KIND_FLAT, 4, 4, "unknown metric"),
        (lib.STRATA_KIND_FLAT, 4, 256, "unknown metric"),
        (lib.STRATA_KIND_HNSW, 4, -1, "unknown metric"),
    ],
)
def test_create_rejects_bad_arguments(kind, dim, metric, words):
    rc, message, _ = create(kind, dim, metric)
    assert rc == lib.STRATA_ERR_INVALID and words in message


def test_stale_and_forged_handles_are_errors():
    rc, _, handle = create()
    assert rc == lib.STRATA_OK
    assert call(lib.strata_free, handle)[0] == lib.STRATA_OK
    out = ffi.new("int64_t *")
    for h in (handle, 0, 123456789):
        assert call(lib.strata_len, h, out)[0] == lib.STRATA_ERR_HANDLE
        assert call(lib.strata_free, h)[0] == lib.STRATA_ERR_HANDLE
        assert call(lib.strata_check_integrity, h)[0] == lib.STRATA_ERR_HANDLE
        assert call(lib.strata_search_one, h, ffi.NULL, 1, 0, ffi.NULL, ffi.NULL)[0] == (
            lib.STRATA_ERR_HANDLE
        )


def test_null_pointers_and_bad_counts_are_errors():
    _, _, h = create()
    q = np.ones(4, np.float32)
    fb = ffi.from_buffer
    ids, dists = fb("int64_t[]", np.empty(2, np.int64)), fb("float[]", np.empty(2, np.float32))
    cases = [
        (lib.strata_len, h, ffi.NULL),
        (lib.strata_add, h, ffi.NULL, 1, ffi.NULL, ffi.NULL, 0),
        (lib.strata_add, h, fb("float[]", q), -1, ffi.NULL, ffi.NULL, 0),
        (lib.strata_search, h, fb("float[]", q), 1, 2, 0, 0, ffi.NULL, ffi.NULL),
        (lib.strata_search, h, fb("float[]", q), 1, 2**62, 0, 0, ids, dists),
        (lib.strata_search, h, fb("float[]", q), 1, 2, -5, 0, ids, dists),
        (lib.strata_search_one, h, ffi.NULL, 2, 0, ids, dists),
        (lib.strata_search_one, h, fb("float[]", q), 0, 0, ids, dists),
        (lib.strata_search_one, h, fb("float[]", q), 2, -5, ids, dists),
        (lib.strata_search_one, h, fb("float[]", q), 2, 0, ffi.NULL, dists),
        (lib.strata_version, ffi.new("char[]", 2), 2),
    ]  # fmt: skip
    for fn, *args in cases:
        rc, message = call(fn, *args)
        assert rc == lib.STRATA_ERR_INVALID and message, (fn, args)
    assert call(lib.strata_free, h)[0] == lib.STRATA_OK


def test_error_message_is_truncated_not_overflowed():
    err = ffi.new("char[]", 16)
    err[15] = b"Z"
    out = ffi.new("int64_t *")
    assert lib.strata_len(0, out, err, 15) == lib.STRATA_ERR_HANDLE
    assert len(ffi.string(err)) == 14 and err[15] == b"Z"


def test_check_maps_status_codes_to_exceptions():
    err = ffi.new("char[]", b"engine says no")
    for rc, exc in [
        (lib.STRATA_ERR_INVALID, ValueError),
        (lib.STRATA_ERR_TYPE, TypeError),
        (lib.STRATA_ERR_NOT_FOUND, KeyError),
        (lib.STRATA_ERR_HANDLE, ValueError),
        (lib.STRATA_ERR_CORRUPT, strata.IntegrityError),
        (lib.STRATA_ERR_INTERNAL, RuntimeError),
        (99, RuntimeError),
    ]:
        with pytest.raises(exc, match="engine says no"):
            check(rc, err)
    check(lib.STRATA_OK, err)
