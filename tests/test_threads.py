"""Calls release the GIL, and searches may run while another thread adds."""

import threading
import time

import numpy as np
import pytest
from helpers import clustered

import strata


def spin_until(stop: threading.Event, counts: list[int]) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        if n % 1000 == 0:
            counts[0] = n


def test_long_search_releases_the_gil():
    """A pure-Python thread keeps running while another thread is inside a search.

    If the GIL were held, the spinning thread would advance for at most a
    couple of 5 ms switch intervals during the search; released, it runs for
    most of it. The threshold (25% of its solo rate) sits far from both, so
    the test can fail but does not flake on a busy 2-core machine.
    """
    data, queries = clustered(20000, 64, queries=50, seed=31)
    index = strata.FlatIndex(64)
    index.add(data)
    # Size the search to take about 0.4 s on one core.
    start = time.perf_counter()
    index.search(queries, k=10, num_threads=1)
    per_query = (time.perf_counter() - start) / len(queries)
    reps = max(1, int(0.4 / per_query / len(queries)))
    big = np.tile(queries, (reps, 1))

    # Solo rate of the spinning thread.
    stop, counts = threading.Event(), [0]
    spinner = threading.Thread(target=spin_until, args=(stop, counts))
    spinner.start()
    time.sleep(0.1)
    stop.set()
    spinner.join()
    solo_rate = counts[0] / 0.1

    stop, counts = threading.Event(), [0]
    spinner = threading.Thread(target=spin_until, args=(stop, counts))
    spinner.start()
    time.sleep(0.02)
    before = counts[0]
    start = time.perf_counter()
    index.search(big, k=10, num_threads=1)
    elapsed = time.perf_counter() - start
    during = counts[0] - before
    stop.set()
    spinner.join()
    index.close()
    assert elapsed > 0.1, f"search too short to judge ({elapsed:.3f}s)"
    share = during / (solo_rate * elapsed)
    assert share > 0.25, f"spinning thread ran {share:.0%} of a {elapsed:.2f}s search"


@pytest.mark.parametrize("kind", [strata.Index, strata.FlatIndex], ids=lambda k: k.__name__)
def test_search_during_add_sees_only_added_ids(kind):
    dim, batches, per_batch = 16, 20, 250
    data, queries = clustered(batches * per_batch, dim, queries=20, seed=32)
    index = kind(dim)
    announced = [0]  # ids below this have been passed to add (finished or in progress)
    done = threading.Event()
    errors: list[BaseException] = []

    def adder() -> None:
        try:
            for b in range(batches):
                announced[0] = (b + 1) * per_batch
                index.add(data[b * per_batch : (b + 1) * per_batch], num_threads=2)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=adder)
    thread.start()
    searches = 0
    while not done.is_set() or searches == 0:
        ids, dists = index.search(queries, k=10, num_threads=2)
        limit = announced[0]
        valid = ids[ids >= 0]
        assert (valid < limit).all(), f"returned id {valid.max()} before it was added"
        assert np.isfinite(dists[ids >= 0]).all() and np.isposinf(dists[ids < 0]).all()
        searches += 1
    thread.join()
    assert not errors, errors
    assert len(index) == batches * per_batch
    index.check_integrity()
    index.close()
