"""Do two concurrent strata.AsyncCollection calls run in the engine at the same time?

cffi's API-mode wrappers release the GIL around every engine call, so two queries
awaited together should both be inside Go at once. This times each engine call on
its worker thread (start and end, wall clock) and prints how long the two calls
were in flight together, as a share of the shorter one: near 100 % means they
overlap; near 0 % would mean one waited for the other (the GIL held in the call).
The share does not depend on how loaded the machine is, unlike a speed-up. It also
counts how many times a heartbeat task ran on the event loop during one query.

    .venv/bin/python bench/bench_async_overlap.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time

import numpy as np

import strata


class Timed:
    """Wraps a strata.Collection, recording (start, end) of each call on its worker thread."""

    def __init__(self, col):
        self.col, self.spans = col, []

    def __getattr__(self, name):
        method = getattr(self.col, name)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.spans.append((start, time.perf_counter()))

        return timed


async def heartbeat(stop: asyncio.Event) -> int:
    """Yields to the loop until stop is set; returns how many times it got the loop back."""
    ticks = 0
    while not stop.is_set():
        await asyncio.sleep(0)
        ticks += 1
    return ticks


async def run(rounds: int) -> None:
    rng = np.random.default_rng(1)
    data = rng.standard_normal((20_000, 128)).astype(np.float32)
    queries = rng.standard_normal((200, 128)).astype(np.float32)
    path = tempfile.mkdtemp() + "/c"
    async with await strata.AsyncCollection.create(path, 128, metric="l2", fsync="never") as col:
        for i in range(0, len(data), 5000):
            await col.upsert(np.arange(i, i + 5000), data[i:i + 5000])
        timed = Timed(col._col)
        col._col = timed
        for r in range(rounds):
            timed.spans.clear()
            await asyncio.gather(col.query(queries, k=10, num_threads=1),
                                 col.query(queries, k=10, num_threads=1))
            (a0, a1), (b0, b1) = sorted(timed.spans)
            both = max(0.0, min(a1, b1) - max(a0, b0))
            stop = asyncio.Event()
            beat = asyncio.create_task(heartbeat(stop))
            start = time.perf_counter()
            await col.query(queries, k=10, num_threads=1)
            alone = time.perf_counter() - start
            stop.set()
            ticks = await beat
            print(f"round {r}: calls {(a1 - a0) * 1e3:.0f} ms and {(b1 - b0) * 1e3:.0f} ms, "
                  f"in the engine together {both * 1e3:.0f} ms = "
                  f"{both / min(a1 - a0, b1 - b0):.0%} of the shorter; heartbeat ran {ticks} "
                  f"times during a {alone * 1e3:.0f} ms query; load {os.getloadavg()[0]:.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(run(parser.parse_args().rounds))


if __name__ == "__main__":
    main()
