"""memory="ram" | "mmap": where a collection's sealed segments keep their float vectors.

The behaviour (equal answers, mapped segments, eviction) is tested in Go
(go/collection/mmap_test.go); these check that each door passes the option through."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import clustered
from server_process import BINARY, running_server

import strata
from strata.client import Client

DIM = 16


def _fill(col, n=400):
    data, queries = clustered(n, DIM, centres=10, queries=5, seed=3)
    col.upsert(np.arange(n), data)
    return data, queries


def test_mmap_collection_answers_as_ram_and_keeps_its_placement(tmp_path):
    cols = {
        m: strata.Collection.create(tmp_path / m, dim=DIM, memory=m, seed=7)
        for m in ("ram", "mmap")
    }
    answers = {}
    for m, col in cols.items():
        _, queries = _fill(col)
        col.checkpoint()
        col.close()
        col = cols[m] = strata.Collection.open(tmp_path / m)
        field = col.info()["vectors"][0]
        assert field["memory"] == m and col.schema[""]["memory"] == m
        assert field["mapped_segments"] == (field["segments"] if m == "mmap" else 0)
        answers[m] = col.query(queries, k=10, ef=200)
        col.close()
    # Exact at this size and ef: both placements find the same neighbours.
    np.testing.assert_array_equal(answers["ram"].ids, answers["mmap"].ids)
    np.testing.assert_allclose(answers["ram"].distances, answers["mmap"].distances, rtol=1e-6)


def test_memory_is_checked_and_named_fields_carry_their_own(tmp_path):
    with pytest.raises(ValueError, match="memory"):
        strata.Collection.create(tmp_path / "a", dim=DIM, memory="disk")
    with pytest.raises(ValueError, match="memory"):
        strata.Collection.create(tmp_path / "b", vectors={"v": {"dim": DIM}}, memory="mmap")
    col = strata.Collection.create(
        tmp_path / "c", vectors={"v": {"dim": DIM, "memory": "mmap"}, "w": {"dim": DIM}}
    )
    assert col.schema["v"]["memory"] == "mmap" and col.schema["w"]["memory"] == "ram"
    col.close()


@pytest.mark.skipif(not BINARY.is_file(), reason="strata-server binary not in the package")
def test_client_create_collection_passes_memory(tmp_path):
    with running_server(tmp_path / "data") as srv, Client(srv.url, timeout=30) as client:
        col = client.create_collection("m", dim=DIM, memory="mmap")
        assert col.schema[""]["memory"] == "mmap"
        with pytest.raises(ValueError, match="memory"):
            client.create_collection("x", dim=DIM, memory="disk")


def test_sq8_rescores_with_its_floats_in_either_placement(tmp_path):
    answers = {}
    for m in ("ram", "mmap"):
        col = strata.Collection.create(tmp_path / m, dim=DIM, quantization="sq8", memory=m, seed=7)
        data, queries = _fill(col)
        col.close()
        col = strata.Collection.open(tmp_path / m)
        field = col.info()["vectors"][0]
        assert field["rescore"] is True and col.schema[""]["rescore"] is True
        assert field["mapped_segments"] == (field["segments"] if m == "mmap" else 0)
        answers[m] = col.query(queries, k=10, ef=200)
        # Re-scored: the distances are the floats' (cosine), not the codes'.
        unit = data / np.linalg.norm(data, axis=1, keepdims=True)
        q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
        want = 1 - np.take_along_axis(q @ unit.T, answers[m].ids, axis=1)
        np.testing.assert_allclose(answers[m].distances, want, atol=1e-5)
        col.close()
    np.testing.assert_array_equal(answers["ram"].ids, answers["mmap"].ids)


def test_rescore_false_keeps_codes_only_and_is_checked(tmp_path):
    col = strata.Collection.create(tmp_path / "a", dim=DIM, quantization="sq8", rescore=False)
    assert col.info()["vectors"][0]["rescore"] is False
    col.close()
    with pytest.raises(ValueError, match="rescore"):
        strata.Collection.create(tmp_path / "b", dim=DIM, rescore=False)
    with pytest.raises(ValueError, match="rescore"):
        strata.Collection.create(tmp_path / "c", vectors={"v": {"dim": DIM}}, rescore=True)
    col = strata.Collection.create(
        tmp_path / "d", vectors={"v": {"dim": DIM, "quantization": "sq8", "rescore": False}}
    )
    assert col.schema["v"]["rescore"] is False
    col.close()
