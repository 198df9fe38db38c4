"""strata.FieldVectors and the spellings of named vector values (strata/_fields.py)."""

from __future__ import annotations

import numpy as np
import pytest

import strata
from strata._fields import field_values


def test_a_float32_array_crosses_without_a_copy():
    rows = np.random.default_rng(0).random((5, 3), dtype=np.float32)
    fv = field_values("text", rows, 5, 3, False)
    assert fv.vectors is rows and fv.mask is None  # Go reads it in place (ffi.from_buffer)


def test_none_in_a_list_is_a_point_lacking_the_field():
    fv = field_values("text", [np.ones(2), None, np.zeros(2)], 3, 2, False)
    assert list(fv.mask) == [True, False, True] and fv.vectors.shape == (2, 2)
    assert fv.value(1) is None and list(fv.value(2)) == [0, 0]


def test_multivector_values_as_a_list_of_arrays_a_3d_array_or_flat_rows_and_counts():
    a, b = np.ones((2, 2), np.float32), np.zeros((1, 2), np.float32)
    listed = field_values("tok", [a, None, b], 3, 2, True)
    assert list(listed.counts) == [2, 1] and list(listed.mask) == [True, False, True]
    np.testing.assert_array_equal(listed.value(2), b)
    cube = field_values("tok", np.ones((3, 4, 2)), 3, 2, True)
    assert list(cube.counts) == [4, 4, 4] and cube.vectors.shape == (12, 2)
    flat = field_values("tok", strata.FieldVectors(np.ones((3, 2)), None, np.array([1, 2])), 2, 2,
                        True)  # fmt: skip
    np.testing.assert_array_equal(flat.value(1), np.ones((2, 2)))


def test_take_cuts_a_batch_by_position_keeping_each_points_rows():
    fv = field_values("tok", [np.full((2, 2), 1.0), None, np.full((1, 2), 3.0)], 3, 2, True)
    part = fv.take(np.array([2, 1]))
    assert list(part.mask) == [True, False] and list(part.counts) == [1]
    np.testing.assert_array_equal(part.value(0), np.full((1, 2), 3.0))


@pytest.mark.parametrize(("value", "error", "match"), [
    (np.ones((2, 3)), ValueError, "'text'.*dimension 2"),
    (np.ones((3, 2)), ValueError, "'text': 3 vectors for 2 ids"),
    ([np.ones(2)], ValueError, "'text': 1 vectors for 2 ids"),
    ("vectors", TypeError, "text"),
    (strata.FieldVectors(np.ones((1, 2)), np.array([True, True])), ValueError, "1 values for 2"),
])  # fmt: skip
def test_bad_values_name_the_field(value, error, match):
    with pytest.raises(error, match=match):
        field_values("text", value, 2, 2, False)


def test_named_fields_survive_a_reopen(tmp_path):
    path = tmp_path / "c"
    with strata.Collection.create(path, vectors={"t": {"dim": 2, "metric": "l2"},
                                                 "m": {"dim": 2, "multivector": "max_sim"}}) as col:
        col.upsert(["a", 1], {"t": np.eye(2), "m": [None, np.ones((3, 2))]})
    with strata.Collection.open(path) as col:
        assert sorted(col.schema) == ["m", "t"]
        got = col.get(["a", 1], vectors=["m", "t"])
        assert list(got.named_vectors["m"].mask) == [False, True]
        assert list(got.named_vectors["m"].counts) == [3]
        assert list(col.query([1.0, 0.0], k=1, using="t").ids[0]) == ["a"]
