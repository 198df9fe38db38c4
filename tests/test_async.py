"""strata.AsyncCollection under asyncio: what the contract suite cannot see from sync code.

Concurrency against a sync model, the event loop staying free while an engine call
runs, close with calls in flight, cancellation. Calls that must still be running
at some moment are held there by a gate (a threading.Event the call waits on), so
no test depends on how fast anything runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import clustered

import strata

DIM = 8
N = 400


class GatedCollection:
    """A strata.Collection whose gated methods report that they started, then wait for open()."""

    def __init__(self, col: strata.Collection, gated: tuple[str, ...]) -> None:
        self._col, self._gated = col, gated
        self.gate = threading.Event()
        self.started: dict[str, threading.Event] = {name: threading.Event() for name in gated}
        self.threads: list[threading.Thread] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._col, name)
        if name not in self._gated:
            return method

        def gated(*args: Any, **kwargs: Any) -> Any:
            self.threads.append(threading.current_thread())
            self.started[name].set()
            assert self.gate.wait(timeout=60), "the test never opened the gate"
            return method(*args, **kwargs)

        return gated


def gate(acol: strata.AsyncCollection, *names: str) -> GatedCollection:
    gated = GatedCollection(acol._col, names)
    acol._col = gated  # type: ignore[assignment]
    return gated


async def started(event: threading.Event) -> None:
    """Waits, off the loop, until a gated call has reached its worker thread."""
    assert await asyncio.to_thread(event.wait, 60), "the call never started"


def data_and_docs(n: int = N, seed: int = 3) -> tuple[np.ndarray, list[dict[str, Any]]]:
    data, _ = clustered(n, DIM, centres=8, seed=seed)
    return data, [{"i": i, "even": i % 2 == 0} for i in range(n)]


def test_two_hundred_concurrent_upserts_and_queries_agree_with_the_sync_collection(tmp_path):
    data, docs = data_and_docs()
    model = strata.Collection.create(tmp_path / "model", DIM, metric="l2", seed=1)
    model.upsert(np.arange(N), data, metadata=docs)
    rng = np.random.default_rng(5)
    queries = data[rng.integers(0, N, 100)] + 0.01
    # The new points sit far from the loaded ones: a query's neighbours are the same before,
    # during and after the writes, so every concurrent answer has one right value.
    new_vectors = (rng.standard_normal((100, 2, DIM)) + 1000).astype(np.float32)
    expected = [model.query(q, k=5, where={"even": True}) for q in queries]

    async def main() -> list[Any]:
        acol = await strata.AsyncCollection.create(tmp_path / "async", DIM, metric="l2", seed=1)
        async with acol:
            await acol.upsert(np.arange(N), data, metadata=docs)

            async def write(t: int) -> None:
                ids = [10_000 + 2 * t, 10_000 + 2 * t + 1]
                await acol.upsert(ids, new_vectors[t], metadata=[{"t": t}, {"t": t}])

            async def read(q: int) -> strata.QueryResult:
                return await acol.query(queries[q], k=5, where={"even": True})

            tasks = [write(i // 2) if i % 2 == 0 else read(i // 2) for i in range(200)]
            results = await asyncio.gather(*tasks)
            final = [await acol.count(), await acol.get(np.arange(10_000, 10_200),
                                                        include_vectors=True)]
            await acol.check_integrity()
            return [results[1::2], *final]

    answers, count, got = asyncio.run(main())
    for t in range(100):
        model.upsert([10_000 + 2 * t, 10_000 + 2 * t + 1], new_vectors[t],
                     metadata=[{"t": t}, {"t": t}])
    for answer, want in zip(answers, expected, strict=True):
        np.testing.assert_array_equal(answer.ids, want.ids)
        np.testing.assert_allclose(answer.distances, want.distances, rtol=1e-6)
        assert answer.metadata == want.metadata
    assert count == len(model) == N + 200
    want = model.get(np.arange(10_000, 10_200), include_vectors=True)
    np.testing.assert_array_equal(got.ids, want.ids)
    np.testing.assert_array_equal(got.vectors, want.vectors)
    assert got.metadata == want.metadata
    model.close()


def test_the_event_loop_keeps_running_while_an_engine_call_is_in_flight(tmp_path):
    data, docs = data_and_docs()

    async def main() -> None:
        async with await strata.AsyncCollection.create(tmp_path / "c", DIM, metric="l2") as acol:
            await acol.upsert(np.arange(N), data, metadata=docs)
            want = await acol.query(data[:3], k=4)
            gated = gate(acol, "query")
            query = asyncio.create_task(acol.query(data[:3], k=4))
            await started(gated.started["query"])
            ticks = 0
            for _ in range(50):  # a heartbeat: each tick is the loop running other work
                await asyncio.sleep(0)
                ticks += 1
            assert ticks == 50 and not query.done()
            # Other calls go on meanwhile too.
            assert await acol.count() == N
            gated.gate.set()
            got = await query
            np.testing.assert_array_equal(got.ids, want.ids)
            assert gated.threads[0] is not threading.main_thread()
            assert gated.threads[0].name.startswith("strata-async")

    asyncio.run(main())


def test_close_waits_for_calls_in_flight_and_then_refuses_new_ones(tmp_path):
    data, docs = data_and_docs(50)
    path = tmp_path / "c"

    async def main() -> strata.AsyncCollection:
        acol = await strata.AsyncCollection.create(path, DIM, metric="l2")
        await acol.upsert(np.arange(50), data, metadata=docs)
        gated = gate(acol, "upsert", "count")
        upsert = asyncio.create_task(acol.upsert([777], data[0], metadata=[{"late": True}]))
        count = asyncio.create_task(acol.count())
        await started(gated.started["upsert"])
        await started(gated.started["count"])
        closing = asyncio.create_task(acol.close())
        await asyncio.sleep(0)
        with pytest.raises(ValueError, match="collection is closed"):
            await acol.get([1])
        with pytest.raises(ValueError, match="collection is closed"):
            async for _ in acol.scan():
                pass
        for _ in range(10):
            await asyncio.sleep(0)
        assert not closing.done(), "close() returned while calls were still running"
        gated.gate.set()
        await closing
        await upsert
        assert await count in (50, 51)
        await acol.close()  # a second close returns at once
        with pytest.raises(ValueError, match="collection is closed"):
            await acol.query(data[0])
        return acol

    acol = asyncio.run(main())
    asyncio.run(acol.close())  # and so does one on another event loop
    with strata.Collection.open(path) as col:
        assert col.get([777]).metadata == [{"late": True}]
        col.check_integrity()


def test_a_cancelled_call_finishes_in_the_engine_and_its_result_is_dropped(tmp_path):
    data, docs = data_and_docs(20)
    path = tmp_path / "c"
    one_worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="strata-async-test")

    async def main() -> None:
        acol = await strata.AsyncCollection.create(path, DIM, metric="l2", executor=one_worker)
        await acol.upsert(np.arange(20), data, metadata=docs)
        gated = gate(acol, "upsert")
        running = asyncio.create_task(acol.upsert([100], data[1], metadata=[{"ran": True}]))
        await started(gated.started["upsert"])
        # The only worker is busy: this call is queued, and cancelled before it starts.
        queued = asyncio.create_task(acol.delete(ids=[0, 1, 2]))
        await asyncio.sleep(0)
        running.cancel()
        queued.cancel()
        for task in (running, queued):
            with pytest.raises(asyncio.CancelledError):
                await task
        gated.gate.set()
        await acol.close()

    asyncio.run(main())
    one_worker.shutdown()
    with strata.Collection.open(path) as col:
        assert col.get([100]).metadata == [{"ran": True}], "the started write was lost"
        assert col.get([0, 1, 2]).ids.tolist() == [0, 1, 2], "the cancelled delete ran"
        assert len(col) == 21
        col.check_integrity()


def test_leaving_an_async_scan_early_leaves_the_collection_usable(tmp_path):
    data, docs = data_and_docs(30)

    async def main() -> None:
        async with await strata.AsyncCollection.create(tmp_path / "c", DIM, metric="l2") as acol:
            await acol.upsert(np.arange(30), data, metadata=docs)
            seen = []
            async for page in acol.scan(batch_size=4):
                seen.extend(page.ids.tolist())
                if len(seen) >= 8:
                    break
            assert seen == list(range(8))
            pages = [p.ids.tolist() async for p in acol.scan(batch_size=25, after=3)]
            assert pages == [list(range(4, 29)), [29]]
            with pytest.raises(ValueError, match="batch_size"):
                async for _ in acol.scan(batch_size=0):
                    pass

    asyncio.run(main())


def test_open_exists_and_drop_are_awaitable_and_raise_what_collection_raises(tmp_path):
    async def main() -> None:
        path = tmp_path / "c"
        assert not await strata.AsyncCollection.exists(path)
        with pytest.raises(FileNotFoundError):
            await strata.AsyncCollection.open(path)
        async with await strata.AsyncCollection.create(path, DIM) as acol:
            with pytest.raises(strata.LockedError):
                await strata.AsyncCollection.drop(path)
            assert (acol.dim, acol.metric) == (DIM, "cosine")
        async with await strata.AsyncCollection.open(path) as acol:
            assert await acol.count() == 0
        assert await strata.AsyncCollection.exists(path)
        await strata.AsyncCollection.drop(path)
        assert not await strata.AsyncCollection.exists(path)
        with pytest.raises(TypeError, match=r"strata\.Collection"):
            strata.AsyncCollection(path)  # type: ignore[arg-type]

    asyncio.run(main())


def test_the_async_client_raises_the_sync_clients_error_for_a_refused_connection():
    pytest.importorskip("httpx")
    from server_process import free_port

    from strata.client import AsyncClient, Client

    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ConnectionError):
        Client(url, timeout=5).health()

    async def main() -> None:
        async with AsyncClient(url, timeout=5) as client:
            with pytest.raises(ConnectionError):
                await client.health()

    asyncio.run(main())
    with pytest.raises(ValueError, match="url must be"):
        AsyncClient("ftp://x")


def test_the_sync_client_still_imports_only_the_standard_library():
    # httpx is the extra strata[async]: naming AsyncClient imports it, import strata.client not.
    code = ("import sys, strata.client; assert 'httpx' not in sys.modules, 'httpx imported'; "
            "strata.client.AsyncClient; assert 'httpx' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parent)


def test_the_async_client_carries_string_ids_as_the_sync_client_does(tmp_path):
    pytest.importorskip("httpx")
    from server_process import running_server

    from strata.client import AsyncClient

    async def main(url: str) -> None:
        async with AsyncClient(url, timeout=60) as client:
            col = await client.create_collection("strids", dim=2, metric="l2")
            await col.upsert(np.arange(3), [[0, 0], [1, 1], [2, 2]])
            assert (await col.query([0, 0], k=2)).ids.dtype == np.int64
            await col.upsert(["doc-a", 7, "é"], [[0.1, 0.1], [3, 3], [4, 4]],
                             metadata=[{"k": 1}, {}, {}])
            hits = await col.query([0, 0], k=3)
            assert hits.ids.dtype == object and hits.ids.tolist() == [[0, "doc-a", 1]]
            got = await col.get(["é", 2, "nope"])
            assert got.ids.tolist() == ["é", 2] and got.metadata == [{}, {}]
            pages = [p.ids.tolist() async for p in col.scan(batch_size=2)]
            assert pages == [[0, 1], [2, 7], ["doc-a", "é"]]
            assert [p.ids.tolist() async for p in col.scan(after="doc-a")] == [["é"]]
            assert await col.update_metadata(["doc-a"], [{"k": 2}]) == 1
            with pytest.raises(TypeError, match=r"ids\[1\] must be an int or a str"):
                await col.get([1, 2.5])
            with pytest.raises(ValueError, match="string id must be 1 to 512 bytes"):
                await col.upsert([""], [[0, 0]])
            assert await col.delete(["doc-a", 0, "missing"]) == 2
            assert await col.count() == 4

    with running_server(tmp_path / "data") as srv:
        asyncio.run(main(srv.url))
