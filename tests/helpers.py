"""Data and reference computations shared by the tests."""

from __future__ import annotations

import numpy as np

import strata

METRICS = ["l2", "ip", "cosine"]


def clustered(
    n: int, dim: int, *, centres: int = 200, queries: int = 0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """A Gaussian mixture: points (and held-out queries) around `centres` random centres.

    Clustered data, unlike uniform noise, has the near-duplicate neighbourhoods
    real embeddings have, which is where approximate search can go wrong.
    """
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(centres, dim))
    labels = rng.integers(0, centres, size=n + queries)
    points = means[labels] + 0.35 * rng.normal(size=(n + queries, dim))
    points = points.astype(np.float32)
    return points[:n], points[n:]


def reference_distances(metric: str, queries: np.ndarray, data: np.ndarray) -> np.ndarray:
    """All query-to-point distances in float64, with strata's (hnswlib's) conventions."""
    q, x = queries.astype(np.float64), data.astype(np.float64)
    if metric == "l1":
        return np.stack([np.abs(x - row).sum(1) for row in q])
    if metric == "l2":
        return (q * q).sum(1)[:, None] - 2 * q @ x.T + (x * x).sum(1)[None, :]
    if metric == "cosine":
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
    return 1 - q @ x.T


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    k = truth.shape[1]
    hits = sum(len(set(f[:k]) & set(t)) for f, t in zip(found, truth, strict=True))
    return hits / truth.size


def make(kind: type, dim: int, metric: str = "l2") -> strata.Index | strata.FlatIndex:
    if kind is strata.Index:
        return strata.Index(dim, metric=metric, seed=1)
    return strata.FlatIndex(dim, metric=metric)


# What Ray raises when it gives up on its own start-up: it waits a hard-coded 30 s for
# its raylet to register (ray._private.node), and the raylet waits about 15 s for its
# agents; a loaded machine (two CPU hogs beside the suite) can take longer.
RAY_STARTUP_TIMED_OUT = "The current node timed out during startup"


def start_ray(ray, attempts: int = 5, **options) -> None:
    """ray.init(**options), tried again while Ray gives up on its own start-up
    (RAY_STARTUP_TIMED_OUT). Each attempt starts a fresh node; the exception of the
    last one is raised."""
    for attempt in range(attempts):
        try:
            ray.init(**options)
            return
        except Exception as exc:
            if RAY_STARTUP_TIMED_OUT not in str(exc) or attempt == attempts - 1:
                raise
            ray.shutdown()
