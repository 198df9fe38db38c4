"""Single-call latency over several methods, timed the same way by bench_langchain.py and
bench_llamaindex.py: each round runs every method over every query, methods in an order that
rotates by round so that none always runs first (or last) on a noisy machine."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np


def percentiles(ns: list[int]) -> dict:
    """p50, p99 and mean in µs of per-call times in ns."""
    us = np.asarray(ns, dtype=np.float64) / 1e3
    return {"p50_us": float(np.percentile(us, 50)), "p99_us": float(np.percentile(us, 99)),
            "mean_us": float(us.mean()), "calls": len(ns)}


def time_rotating(methods: dict[str, Callable[[int], object]], calls: int,
                  rounds: int) -> dict[str, list[int]]:
    """Each method's per-call times in ns, calls per round, rounds rounds in rotating order."""
    times: dict[str, list[int]] = {name: [] for name in methods}
    names = list(methods)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn, out = methods[name], times[name]
            for i in range(calls):
                t = time.perf_counter_ns()
                fn(i)
                out.append(time.perf_counter_ns() - t)
    return times


def median_of_round_p50_us(times: dict[str, list[int]], calls: int,
                           rounds: int) -> dict[str, float]:
    """Per method, the median over rounds of each round's p50 in µs."""
    return {
        name: statistics.median(
            float(np.percentile(np.asarray(ns[r * calls:(r + 1) * calls]) / 1e3, 50))
            for r in range(rounds))
        for name, ns in times.items()}
