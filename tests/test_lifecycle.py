"""close(), context manager, repr, progress display, and fork safety."""

import gc
import os
import signal
import sys

import numpy as np
import pytest
from helpers import clustered
from strata._ffi import ffi

import strata
from strata import _lib


def test_context_manager_closes():
    with strata.Index(4, seed=3) as index:
        index.add(np.eye(4))
        assert len(index) == 4
    with pytest.raises(ValueError, match="index is closed"):
        index.search(np.eye(4))


def test_repr_and_properties():
    index = strata.Index(5, metric="cosine", M=8, ef_construction=50)
    assert (index.dim, index.metric, index.M, index.ef_construction) == (5, "cosine", 8, 50)
    assert repr(index) == "strata.Index(dim=5, metric='cosine', M=8, ef_construction=50, len=0)"
    assert repr(strata.FlatIndex(2, "ip")) == "strata.FlatIndex(dim=2, metric='ip', len=0)"


def test_garbage_collected_objects_free_their_handles(tmp_path):
    """An index or collection nobody refers to any more releases its engine handle: the
    library then rejects the handle as freed. A __del__ that did not free it would keep
    every dropped graph (and a collection's directory lock) alive until exit."""
    handles = []
    for kind in (strata.Index, strata.FlatIndex):
        for _ in range(10):
            index = kind(4)
            index.add(np.eye(4))
            handles.append(index._handle)
            del index
    collection = strata.Collection.create(tmp_path / "c", dim=4)
    handles.append(collection._handle)
    del collection
    gc.collect()
    lib = _lib.load()
    out, err = ffi.new("int64_t *"), _lib.errbuf()
    for handle in handles[:-1]:
        assert lib.strata_len(handle, out, err, _lib.ERRLEN) == _lib.const("STRATA_ERR_HANDLE")
    rc = lib.strata_col_count(handles[-1], ffi.NULL, 0, out, err, _lib.ERRLEN)
    assert rc == _lib.const("STRATA_ERR_HANDLE")
    # The freed collection released its directory: it opens again.
    strata.Collection.open(tmp_path / "c").close()


@pytest.mark.parametrize("kind", [strata.Index, strata.FlatIndex], ids=lambda k: k.__name__)
def test_progress_line_without_tqdm(kind, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    data, _ = clustered(3000, 16, seed=21)
    with kind(16) as index:
        ids = index.add(data, progress=True)
        assert len(index) == 3000 and ids.tolist() == list(range(3000))
    assert "strata add: 3000/3000 vectors (100%)" in capsys.readouterr().err


def test_progress_reraises_engine_errors(capsys):
    with strata.FlatIndex(2) as index, pytest.raises(ValueError, match="duplicate id"):
        index.add(np.ones((2, 2)), ids=[4, 4], progress=True)


def run_in_fork(child) -> int:
    """Runs child() in a forked process and returns its exit code (-signal if killed)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        signal.alarm(20)  # a hang becomes a failure, not a stuck test run
        code = 99
        try:
            code = child()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_forked_child_gets_runtime_error_not_a_hang():
    index = strata.FlatIndex(4)
    index.add(np.eye(4))

    def child() -> int:
        failures = 0
        for call in (
            lambda: index.search(np.eye(4)),
            lambda: index.add(np.eye(4)),
            lambda: len(index),
            lambda: strata.FlatIndex(4),
            strata.kernel_path,
        ):
            try:
                call()
                failures += 1
            except RuntimeError as exc:
                failures += "fork" not in str(exc)
        index.close()  # must not touch Go either
        return min(failures, 50)

    assert run_in_fork(child) == 0
    # The parent is unaffected.
    assert index.search(np.eye(4), k=1)[0].ravel().tolist() == [0, 1, 2, 3]
    index.close()
