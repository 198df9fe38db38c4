"""save/load, mmap, pickle and damaged files (issue 4)."""

from __future__ import annotations

import pickle
import struct
from pathlib import Path

import numpy as np
import pytest
from helpers import clustered

import strata

CONFIGS = {
    "float": {"metric": "cosine"},
    "sq8-rerank": {"metric": "ip", "quantization": "sq8"},
    "sq8-codes": {"metric": "l2", "quantization": "sq8", "rerank": False},
}


def built(config: dict, n: int = 2000, dim: int = 64) -> tuple[strata.Index, np.ndarray]:
    data, queries = clustered(n, dim, queries=30, seed=9)
    index = strata.Index(dim, M=8, seed=1, **config)
    index.add(data)
    index.remove(np.arange(0, n, 9))
    return index, queries


@pytest.mark.parametrize("name", CONFIGS)
def test_save_load_save_is_byte_identical(tmp_path: Path, name: str) -> None:
    index, queries = built(CONFIGS[name])
    first, second = tmp_path / "a.strata", tmp_path / "b.strata"
    index.save(first)
    for mmap in (False, True):
        loaded = strata.Index.load(first, mmap_vectors=mmap)
        loaded.save(second)
        assert first.read_bytes() == second.read_bytes()
        want_ids, want_d = index.search(queries, k=10)
        got_ids, got_d = loaded.search(queries, k=10)
        np.testing.assert_array_equal(got_ids, want_ids)
        np.testing.assert_array_equal(got_d, want_d)
        assert len(loaded) == len(index) and loaded.quantization == index.quantization
        assert loaded.info()["mmapped"] == (mmap and name != "sq8-codes")
        loaded.check_integrity()
        loaded.close()


def test_codes_only_file_is_about_three_times_smaller(tmp_path: Path) -> None:
    sizes = {}
    for name in ("float", "sq8-codes"):
        index, _ = built(CONFIGS[name], dim=128)
        index.save(tmp_path / name)
        sizes[name] = (tmp_path / name).stat().st_size
    assert sizes["float"] / sizes["sq8-codes"] > 2.5, sizes


def test_pickle_round_trip() -> None:
    index, queries = built(CONFIGS["sq8-rerank"])
    copy = pickle.loads(pickle.dumps(index))
    np.testing.assert_array_equal(copy.search(queries, k=5)[0], index.search(queries, k=5)[0])
    assert repr(copy) == repr(index)


def test_loaded_index_accepts_adds_removes_and_compaction(tmp_path: Path) -> None:
    index, queries = built(CONFIGS["float"])
    index.save(tmp_path / "i")
    loaded = strata.Index.load(tmp_path / "i", mmap_vectors=True)
    loaded.add(queries, ids=np.arange(10_000, 10_030))
    loaded.remove([10_000])
    loaded.compact()
    assert 10_001 in loaded and 10_000 not in loaded
    loaded.check_integrity()


def section_bounds(data: bytes) -> list[int]:
    """Every section's start and end, from the table (format in go/indexfile/doc.go)."""
    (count,) = struct.unpack_from("<I", data, 20)
    bounds = []
    for i in range(count):
        _, _, offset, length = struct.unpack_from("<IIQQ", data, 32 + 32 * i)
        bounds += [offset, offset + length]
    return bounds


def test_damaged_files_raise_integrity_error(tmp_path: Path) -> None:
    index, _ = built(CONFIGS["sq8-rerank"], n=300, dim=16)
    good = tmp_path / "good"
    index.save(good)
    data = good.read_bytes()
    bad = tmp_path / "bad"
    cuts = [c for c in section_bounds(data) if c < len(data)] + [0, 7, 31, 33, len(data) - 1]
    for cut in cuts:
        bad.write_bytes(data[:cut])
        with pytest.raises(strata.IntegrityError, match="corrupt"):
            strata.Index.load(bad)
    for offset in range(0, len(data), max(1, len(data) // 60)):
        flipped = bytearray(data)
        flipped[offset] ^= 0x40
        bad.write_bytes(bytes(flipped))
        with pytest.raises(strata.IntegrityError):
            strata.Index.load(bad, mmap_vectors=True)


def test_load_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        strata.Index.load(tmp_path / "missing")
    with pytest.raises(ValueError, match="NUL"):
        strata.Index.load("a\0b")
    flat = strata.FlatIndex(4)
    assert not hasattr(flat, "save")
