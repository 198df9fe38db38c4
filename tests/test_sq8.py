"""SQ8 quantization (issue 4): float vs SQ8 on the same data and queries."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import METRICS, clustered, recall, reference_distances

import strata


@pytest.mark.parametrize("metric", METRICS)
def test_sq8_rerank_recall_matches_float(metric: str) -> None:
    data, queries = clustered(5000, 48, queries=200, seed=13)
    truth = np.argsort(reference_distances(metric, queries, data), axis=1)[:, :10]
    found = {}
    for name, kwargs in {
        "float": {},
        "rerank": {"quantization": "sq8"},
        "codes": {"quantization": "sq8", "rerank": False},
    }.items():
        index = strata.Index(48, metric=metric, seed=3, **kwargs)
        index.add(data)
        index.check_integrity()
        found[name] = recall(index.search(queries, k=10, ef=64)[0], truth)
    assert found["rerank"] >= found["float"] - 0.01, found
    assert found["codes"] >= 0.85, found


def test_explicit_train_and_its_rules() -> None:
    data, _ = clustered(1000, 16, seed=2)
    index = strata.Index(16, quantization="sq8")
    assert not index.info()["trained"]
    index.train(data)
    assert index.info()["trained"]
    index.add(data[:10])
    with pytest.raises(ValueError, match="before the first add"):
        index.train(data)
    with pytest.raises(ValueError, match="quantized"):
        strata.Index(16).train(data)
    with pytest.raises(ValueError, match="quantization"):
        strata.Index(16, quantization="pq")
    with pytest.raises(TypeError, match="rerank"):
        strata.Index(16, quantization="sq8", rerank="yes")  # type: ignore[arg-type]


def test_codes_only_get_vectors_returns_decoded_values() -> None:
    data, _ = clustered(500, 16, seed=4)
    index = strata.Index(16, quantization="sq8", rerank=False)
    index.add(data)
    decoded = index.get_vectors(np.arange(500))
    step = (data.max(0) - data.min(0)).max() / 255
    assert np.abs(decoded - data).max() <= step / 2 * 1.01
