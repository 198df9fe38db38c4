"""One error taxonomy and one set of limits: every door raises the engine's message."""

from __future__ import annotations

import errno
import re

import numpy as np
import pytest
from server_process import BINARY, running_server

import strata
from strata import _lib
from strata._lib import const

# The engine's own words (go/limits); every door must show exactly these.
EF_CONSTRUCTION_2_32 = "ef_construction must be in [1, 1048576], got 4294967296"
M_300 = "M must be in [2, 256], got 300"
K_TOO_BIG = "k must be in [1, 1048576], got 1048577"
EF_TOO_BIG = "ef must be in [0, 1048576], got 1048577"


def test_create_refuses_ef_construction_the_file_cannot_hold(tmp_path):
    # Issue 20 item 1: 2^32 was stored as 0 in index.hnsw and the collection
    # could never be opened again.
    with pytest.raises(ValueError, match=re.escape(EF_CONSTRUCTION_2_32)):
        strata.Collection.create(tmp_path / "c", dim=4, ef_construction=2**32)
    assert not (tmp_path / "c").exists()
    with pytest.raises(ValueError, match=re.escape(M_300)):
        strata.Collection.create(tmp_path / "c", dim=4, M=300)
    with pytest.raises(ValueError, match=re.escape(EF_CONSTRUCTION_2_32)):
        strata.Index(4, ef_construction=2**32)


def test_query_limits_are_the_engines(tmp_path):
    # Python allowed ef up to 2^24 and the server 2^16: both now ask the engine.
    with strata.Collection.create(tmp_path / "c", dim=4) as col:
        col.upsert([1, 2, 3, 4], np.eye(4, dtype=np.float32))
        with pytest.raises(ValueError, match=re.escape(K_TOO_BIG)):
            col.query(np.ones(4), k=2**20 + 1)
        with pytest.raises(ValueError, match=re.escape(EF_TOO_BIG)):
            col.query(np.ones(4), k=1, ef=2**20 + 1)
        assert col.query(np.ones(4), k=1, ef=100_000).ids.shape == (1, 1)


def test_unknown_analyzer_is_the_engines_message(tmp_path):
    with pytest.raises(ValueError) as local:
        strata.Collection.create(tmp_path / "c", dim=4, text_analyzer="klingon")
    assert "klingon" in str(local.value) and "text:" in str(local.value)
    assert not (tmp_path / "c").exists()


def _raise(status: int, message: str) -> None:
    err = _lib.ffi.new("char[]", message.encode())
    _lib.check(status, err)


@pytest.mark.parametrize(
    ("status", "code", "exc"),
    [
        ("STRATA_ERR_NO_SPACE", errno.ENOSPC, OSError),
        ("STRATA_ERR_EXHAUSTED", errno.EMFILE, OSError),
        ("STRATA_ERR_READ_ONLY", errno.EROFS, OSError),
        ("STRATA_ERR_PERMISSION", errno.EACCES, PermissionError),
    ],
)
def test_the_environments_errors_are_oserrors_with_the_errno(status, code, exc):
    # Issue 20 item 7: a full disk or the fd limit surfaced as an unexplained error.
    message = "collection: create /d/c: write /d/c/wal/1: no space left on device"
    with pytest.raises(exc) as info:
        _raise(const(status), message)
    assert info.value.errno == code and message in str(info.value)


def test_every_status_has_its_exception():
    # Every status of strata.h (one per kind of the engine's taxonomy) raises
    # a typed exception; only STRATA_ERR_INTERNAL (a bug) is a bare RuntimeError.
    internal = const("STRATA_ERR_INTERNAL")
    for status in range(1, const("STRATA_ERR_PERMISSION") + 1):
        with pytest.raises(Exception) as info:
            _raise(status, "the engine's message")
        assert "the engine's message" in str(info.value)
        assert (type(info.value) is RuntimeError) == (status == internal), status


@pytest.mark.skipif(not BINARY.is_file(), reason="strata-server binary not in the package")
def test_every_door_gives_the_engines_message(tmp_path):
    from strata.client import Client

    with running_server(tmp_path / "data") as srv, Client(srv.url) as client:
        with pytest.raises(ValueError, match=re.escape(EF_CONSTRUCTION_2_32)):
            client.create_collection("big", dim=4, ef_construction=2**32)
        col = client.create_collection("c", dim=4)
        col.upsert([1, 2, 3, 4], np.eye(4, dtype=np.float32))
        with pytest.raises(ValueError, match=re.escape(EF_TOO_BIG)):
            col.query(np.ones(4), k=1, ef=2**20 + 1)
    # The refused create left nothing that stops the next start.
    with running_server(tmp_path / "data") as srv, Client(srv.url) as client:
        assert [c["name"] for c in client.list_collections()] == ["c"]
