"""strata where Python forks: import in a parent, fork, use in the child.

The engine's Go runtime does not survive fork(), so strata starts it on first
use, not on import (strata._lib). Each scenario runs in a fresh interpreter:
this pytest process started the engine long ago, and the point is what
happens in a process that has only imported strata when it forks.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
WRAPPER = REPO / "bench" / "ann_benchmarks" / "strata" / "module.py"
RUN_MINIMAL = REPO / "bench" / "ann_benchmarks" / "run_minimal.py"

PRELUDE = """
import os, signal, sys
import numpy as np

def engine_mapped():
    # The engine is strata/_native.so; once opened it is in this process's mappings.
    with open("/proc/self/maps") as f:
        return "strata/_native" in f.read()

def build_and_search(seed):
    import strata
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((500, 16)).astype(np.float32)
    with strata.Index(16, seed=seed) as index:
        index.add(data)
        ids, _ = index.search(data[:20], k=1)
    return ids[:, 0].tolist() == list(range(20))

def collect(results, n, procs, deadline_s=120):
    # n items from a multiprocessing queue; stops early when every worker is gone,
    # so a worker that died fails the test at once instead of at the timeout.
    import queue, time
    got, deadline = [], time.monotonic() + deadline_s
    while len(got) < n and time.monotonic() < deadline:
        try:
            got.append(results.get(timeout=0.2))
        except queue.Empty:
            if not any(p.is_alive() for p in procs) and results.empty():
                break
    return got

def fork_and_wait(child):
    # Bare os.fork(): the child's exit status is child()'s verdict.
    pid = os.fork()
    if pid == 0:
        signal.alarm(60)  # a hang in the child becomes a failure, not a stuck test
        code = 3
        try:
            code = child()
        except BaseException as exc:
            print(f"child raised {type(exc).__name__}: {exc}", file=sys.stderr)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)
"""


def run_script(body: str, tmp_path: Path, timeout: float = 180) -> str:
    """Runs PRELUDE + body in a fresh interpreter (outside the source tree); returns stdout."""
    script = tmp_path / "scenario.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_import_starts_no_engine(tmp_path):
    out = run_script(
        f"""
        import strata, strata._index, strata._lib
        import importlib.util
        assert not engine_mapped() and not strata._lib.loaded(), "import strata opened the engine"
        spec = importlib.util.spec_from_file_location("annb_strata_module", {str(WRAPPER)!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        algo = module.Strata("euclidean", {{"M": 16, "efConstruction": 200}})
        algo.set_query_arguments(32)
        assert not engine_mapped(), "importing or configuring the wrapper opened the engine"
        index = strata.FlatIndex(4)
        assert engine_mapped() and strata._lib.loaded()
        print("ok")
        """,
        tmp_path,
    )
    assert out.strip() == "ok"


@pytest.mark.parametrize(
    "call",
    ["strata.Index(4)", "strata.FlatIndex(4)", "strata.kernel_path()", "strata.native_version()"],
)
def test_documented_calls_start_the_engine(tmp_path, call):
    # docs/index-api.md "Forking and multiprocessing" lists these (and Index.load, Collection).
    run_script(
        f"""
        import strata
        assert not engine_mapped()
        {call}
        assert engine_mapped()
        """,
        tmp_path,
    )


def test_concurrent_first_use_opens_the_engine_once(tmp_path):
    run_script(
        """
        import threading
        import strata, strata._index

        barrier, errors = threading.Barrier(8), []

        def first_use(seed):
            try:
                barrier.wait()
                assert build_and_search(seed)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=first_use, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "strata/_native" in line}
        assert len(paths) == 1, paths
        assert strata._index._native is strata._lib.load()
        """,
        tmp_path,
    )


def test_multiprocessing_fork_children_work_when_parent_only_imported(tmp_path):
    out = run_script(
        """
        import multiprocessing
        import strata

        def work(seed, results):
            results.put((seed, build_and_search(seed)))

        ctx = multiprocessing.get_context("fork")
        results = ctx.Queue()
        procs = [ctx.Process(target=work, args=(seed, results)) for seed in (1, 2)]
        for p in procs:
            p.start()
        got = dict(collect(results, len(procs), procs))
        for p in procs:
            p.join(60)
        assert [p.exitcode for p in procs] == [0, 0], [p.exitcode for p in procs]
        assert got == {1: True, 2: True}, got
        assert not engine_mapped(), "the children's engines must not appear in the parent"
        assert build_and_search(3)  # and the parent can start its own afterwards
        print("ok")
        """,
        tmp_path,
    )
    assert out.strip() == "ok"


def test_bare_fork_child_works_when_parent_only_imported(tmp_path):
    run_script(
        """
        import strata
        code = fork_and_wait(lambda: 0 if build_and_search(5) and engine_mapped() else 1)
        assert code == 0, f"child exited with {code}"
        assert not engine_mapped()
        assert build_and_search(6)
        """,
        tmp_path,
    )


def test_child_forked_after_engine_started_gets_clear_error(tmp_path):
    # Both fork routes, after the parent started the engine: every call in the child
    # raises the fork RuntimeError (no hang, no crash), and the parent is unaffected.
    run_script(
        """
        import multiprocessing
        import strata

        index = strata.Index(4, seed=1)
        index.add(np.eye(4, dtype=np.float32))

        def child():
            failures = 0
            for call in (
                lambda: strata.Index(4),
                lambda: strata.FlatIndex(4),
                lambda: index.search(np.eye(4, dtype=np.float32)),
                lambda: index.add(np.eye(4, dtype=np.float32)),
                lambda: len(index),
                strata.kernel_path,
                strata.native_version,
                lambda: strata.Index.load("missing.strata"),
            ):
                try:
                    call()
                    failures += 1
                except RuntimeError as exc:
                    failures += "fork()" not in str(exc)
            index.close()  # must not touch the dead runtime either
            return min(failures, 50)

        assert fork_and_wait(child) == 0

        def mp_child():
            sys.exit(child())

        ctx = multiprocessing.get_context("fork")
        p = ctx.Process(target=mp_child)
        p.start()
        p.join(120)
        assert p.exitcode == 0, p.exitcode

        ids, _ = index.search(np.eye(4, dtype=np.float32), k=1)
        assert ids.ravel().tolist() == [0, 1, 2, 3]
        """,
        tmp_path,
    )


def test_ann_benchmarks_wrapper_driven_in_forked_worker(tmp_path):
    # ann-benchmarks' main.py with --local: every algorithm module is imported in the
    # parent (algorithm_status), definitions go on a multiprocessing.Queue, and
    # multiprocessing.Process workers (fork on Linux) run runner.run: fit, then per
    # query argument set_query_arguments, query one at a time, batch_query. Before
    # the lazy engine start the worker died in fit and every definition was skipped.
    out = run_script(
        f"""
        import importlib.util, multiprocessing

        spec = importlib.util.spec_from_file_location("annb_strata_module", {str(WRAPPER)!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert hasattr(module, "Strata") and not engine_mapped()

        rng = np.random.default_rng(11)
        centres = rng.standard_normal((20, 24)).astype(np.float32) * 4
        train = centres[rng.integers(0, 20, 3000)] + rng.standard_normal((3000, 24), np.float32)
        test = centres[rng.integers(0, 20, 100)] + rng.standard_normal((100, 24), np.float32)
        d = (test ** 2).sum(1)[:, None] - 2 * test @ train.T + (train ** 2).sum(1)[None, :]
        truth = np.argsort(d, axis=1)[:, :10]

        def recall(rows):
            return np.mean([len(set(r[:10].tolist()) & set(t.tolist())) / 10
                            for r, t in zip(rows, truth)])

        def run_worker(queue, results):
            while not queue.empty():
                metric, args, efs = queue.get()
                algo = module.Strata(metric, args)
                algo.fit(train)
                for ef in efs:
                    algo.set_query_arguments(ef)
                    single = [algo.query(q, 10) for q in test]
                    algo.batch_query(test, 10)
                    batch = algo.get_batch_results()
                    results.put((str(algo), recall(single), recall(batch)))
                algo.done()

        ctx = multiprocessing.get_context("fork")
        # The harness uses a Queue for the definitions too; a SimpleQueue writes them
        # before the fork instead of from a feeder thread, so empty() cannot race.
        queue, results = ctx.SimpleQueue(), ctx.Queue()
        for M in (8, 16):
            queue.put(("euclidean", {{"M": M, "efConstruction": 100}}, [16, 128]))
        worker = ctx.Process(target=run_worker, args=(queue, results))
        worker.start()
        got = collect(results, 4, [worker])
        worker.join(60)
        assert worker.exitcode == 0 and len(got) == 4, (worker.exitcode, got)
        for name, single, batch in got:
            print(name, single, batch)
        assert all(single >= 0.9 and abs(batch - single) <= 0.02 for _, single, batch in got), got
        assert max(single for _, single, _ in got) >= 0.99, got
        assert not engine_mapped()
        """,
        tmp_path,
    )
    assert out.count("strata (") == 4


def test_run_minimal_forks_a_worker_per_definition(tmp_path):
    # The stand-in runner's command line imports the wrapper in its parent and
    # forks like ann-benchmarks; it exits 1 if the worker fails or recall is low.
    proc = subprocess.run(
        [sys.executable, str(RUN_MINIMAL), "--n", "2000", "--queries", "50", "--dim", "16"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "best recall@10" in proc.stdout


def test_child_forked_after_open_does_not_keep_the_collection_locked(tmp_path):
    # The child inherits the lock file's descriptor; the parent's close must release
    # the lock all the same, while the child is still alive (issue 20 item 10).
    run_script(
        """
        import time
        import strata
        col = strata.Collection.create("col", 4, metric="l2")
        col.upsert([1], np.ones((1, 4), dtype=np.float32))
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.read(r, 1)  # lives, holding the inherited descriptors, until the parent is done
            os._exit(0)
        os.close(r)
        try:
            col.close()
            again = strata.Collection.open("col")  # raised LockedError while the child lived
            assert len(again) == 1
            again.close()
        finally:
            os.close(w)
            os.waitpid(pid, 0)
        print("ok")
        """,
        tmp_path,
    )


def test_async_collection_in_a_forked_child_raises_instead_of_hanging(tmp_path):
    # The parent's shared pool has started threads; in the child they do not exist,
    # so a call queued on that pool would wait forever. The child gets a pool of its own
    # and every call raises the fork RuntimeError; close() in the child touches nothing.
    run_script(
        """
        import asyncio
        import strata

        async def opened():
            col = await strata.AsyncCollection.create("c", 4, metric="l2")
            await col.upsert([1], np.ones(4, dtype=np.float32))
            return col

        col = asyncio.run(opened())

        def child():
            async def calls():
                failures = 0
                for call in (col.count, col.info, lambda: col.query(np.ones(4))):
                    try:
                        await call()
                        failures += 1
                    except RuntimeError as exc:
                        failures += "fork()" not in str(exc)
                await col.close()
                return failures
            return asyncio.run(calls())

        assert fork_and_wait(child) == 0
        assert asyncio.run(col.count()) == 1
        asyncio.run(col.close())
        """,
        tmp_path,
    )
