"""bench/ann_benchmarks/prepare.py against a stand-in ann-benchmarks checkout.

The real harness is not reachable from here (GitHub is not), so the checkout is a
small imitation of the parts prepare.py touches, with ann-benchmarks' control flow
where it matters: run.py imports the algorithm module in the parent and runs the
definitions in a multiprocessing.Process worker, exits 0 even when that worker
dies, and reads data/<name>.hdf5 only for names in DATASETS. The results code
and plot/data_export scripts are simplified stand-ins.

Needs h5py (pip install -e '.[bench]'). Run from outside the repository root:
    cd /tmp && python -m pytest /path/to/strata/bench/test_annb_prepare.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "ann_benchmarks"))

import datasets  # noqa: E402
import prepare  # noqa: E402

h5py = pytest.importorskip("h5py")

FAKE = {
    "requirements.txt": "",
    "ann_benchmarks/__init__.py": "",
    "ann_benchmarks/algorithms/__init__.py": "",
    "ann_benchmarks/algorithms/base/__init__.py": "",
    "ann_benchmarks/algorithms/base/module.py": '''
        class BaseANN:
            def done(self): pass
            def get_memory_usage(self): return 0.0
            def batch_query(self, X, n): self.res = [self.query(q, n) for q in X]
            def get_batch_results(self): return self.res
            def __str__(self): return self.name
        ''',
    "ann_benchmarks/datasets.py": '''
        import h5py

        def get_dataset(name):
            f = h5py.File(f"data/{name}.hdf5", "r")
            return f, int(f.attrs["dimension"])

        DATASETS = {
            "fashion-mnist-784-euclidean": lambda out_fn: None,
        }
        ''',
    "ann_benchmarks/results.py": '''
        import glob, os
        import h5py

        def load_all_results(dataset, count, batch_mode=False):
            for fn in sorted(glob.glob(f"results/{dataset}/{count}/*/*.hdf5")):
                with h5py.File(fn, "r") as f:
                    if bool(f.attrs["batch_mode"]) == batch_mode:
                        yield dict(f.attrs), f
        ''',
    "ann_benchmarks/plotting/__init__.py": "",
    "ann_benchmarks/plotting/utils.py": '''
        import numpy as np

        def compute_metrics_all_runs(dataset, res, recompute=False):
            truth = dataset["neighbors"][:]
            for props, run in res:
                print("Computing knn metrics")  # as the real metrics code does, on stdout
                found = run["neighbors"][:]
                k = found.shape[1]
                hits = sum(len(set(f) & set(t[:k])) for f, t in zip(found, truth))
                yield {"algorithm": props["algo"], "parameters": props["name"],
                       "k-nn": hits / found.size, "qps": 1 / props["best_search_time"],
                       "build": props["build_time"], "indexsize": 0.0}
        ''',
    # main.py --local: import each algorithm module in the parent (algorithm_status),
    # then a multiprocessing.Process worker per CPU takes definitions off a queue.
    "run.py": '''
        import argparse, importlib, json, multiprocessing, os, time
        import h5py, numpy as np
        from ann_benchmarks.datasets import DATASETS, get_dataset

        ap = argparse.ArgumentParser()
        ap.add_argument("--dataset", choices=DATASETS.keys(), required=True)
        ap.add_argument("--algorithm", required=True)
        ap.add_argument("--count", type=int, default=10)
        ap.add_argument("--local", action="store_true")
        ap.add_argument("--force", action="store_true")
        ap.add_argument("--batch", action="store_true")
        args = ap.parse_args()
        module = importlib.import_module(f"ann_benchmarks.algorithms.{args.algorithm}.module")
        if os.environ.get("FAKE_ANNB_START_ENGINE_IN_PARENT"):
            import strata
            strata.kernel_path()

        def run(arg_group, efs):
            print(f"Trying to instantiate {module.__name__}.Strata({arg_group})", flush=True)
            algo = module.Strata("euclidean", arg_group)
            f, _ = get_dataset(args.dataset)
            train, test = f["train"][:], f["test"][:]
            t0 = time.time()
            algo.fit(train)
            build = time.time() - t0
            for ef in efs:
                algo.set_query_arguments(ef)
                t0 = time.time()
                if args.batch:
                    algo.batch_query(test, args.count)
                    found = algo.get_batch_results()
                else:
                    found = [algo.query(q, args.count) for q in test]
                elapsed = (time.time() - t0) / len(test)
                folder = f"results/{args.dataset}/{args.count}/{args.algorithm}" + (
                    "-batch" if args.batch else "")
                os.makedirs(folder, exist_ok=True)
                with h5py.File(f"{folder}/{json.dumps(arg_group['M'])}_{ef}.hdf5", "w") as out:
                    out.attrs.update(algo=args.algorithm, name=str(algo), count=args.count,
                                     batch_mode=args.batch, build_time=build,
                                     best_search_time=elapsed)
                    out["neighbors"] = np.array([list(r) for r in found])
            algo.done()

        def run_worker(queue):
            while not queue.empty():
                run(*queue.get())

        queue = multiprocessing.Queue()
        race = os.environ.get("FAKE_ANNB_EMPTY_QUEUE_ONCE")
        if race and not os.path.exists(race):
            # The real harness's race, made certain: its worker polls the queue before the
            # parent's feeder thread has written a definition, finds it empty and exits.
            open(race, "w").close()
        else:
            queue.put(({"M": 16, "efConstruction": 100}, [16, 64]))
            time.sleep(0.2)  # let the queue's feeder thread write before the fork
        worker = multiprocessing.Process(target=run_worker, args=(queue,))
        worker.start()
        worker.join()
        # Like ann-benchmarks: the worker's fate does not reach the exit status.
        ''',
    "plot.py": '''
        import argparse
        ap = argparse.ArgumentParser()
        for flag in ("--dataset", "--count", "--output"):
            ap.add_argument(flag)
        ap.add_argument("--batch", action="store_true")
        args = ap.parse_args()
        open(args.output, "w").write("png")
        ''',
    "data_export.py": '''
        import argparse
        ap = argparse.ArgumentParser()
        ap.add_argument("--output")
        open(ap.parse_args().output, "w").write("csv")
        ''',
}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "ann-benchmarks"
    for name, text in FAKE.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def _tiny_dataset(folder: Path, name: str, squared: bool = False) -> Path:
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((10, 16)).astype(np.float32) * 3
    train = centres[rng.integers(0, 10, 1500)] + rng.standard_normal((1500, 16), np.float32)
    test = centres[rng.integers(0, 10, 50)] + rng.standard_normal((50, 16), np.float32)
    neighbors, distances = datasets.exact_knn(train, test, "euclidean", k=100, progress=False)
    if squared:
        distances = distances**2
    path = folder / f"{name}.hdf5"
    with h5py.File(path, "w") as f:
        f.attrs.update(type="dense", distance="euclidean", dimension=16, point_type="float")
        f["train"], f["test"] = train, test
        f["neighbors"], f["distances"] = neighbors, distances
    return path


def _prepare(checkout: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(HERE / "ann_benchmarks" / "prepare.py"), "--annb", str(checkout),
           "--no-venv", "--python", sys.executable, "--algorithms", "strata", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env,
                          cwd=checkout.parent)


def test_prepare_registers_data_and_runs_strata_in_forked_worker(checkout: Path) -> None:
    data = _tiny_dataset(checkout.parent, "tiny-16-euclidean")
    proc = _prepare(checkout, "--hdf5", str(data))
    assert proc.returncode == 0, proc.stdout + proc.stderr

    wrapper = checkout / "ann_benchmarks" / "algorithms" / "strata"
    assert {"module.py", "config.yml", "Dockerfile"} <= {p.name for p in wrapper.iterdir()}
    src = wrapper / "src"
    assert (src / "capi" / "strata.h").exists() and (src / "go.mod").exists()
    assert not list(src.rglob("*.so")) and not list(src.rglob("_ffi.py"))
    assert (checkout / "data" / "tiny-16-euclidean.hdf5").samefile(data)
    assert '"tiny-16-euclidean"' in (checkout / "ann_benchmarks" / "datasets.py").read_text()

    table = (checkout / "results" / "tiny-16-euclidean-strata.md").read_text().splitlines()
    assert all(line.startswith("|") for line in table), table  # no harness chatter in it
    rows = [line.split("|") for line in table[2:]]
    assert sorted({r[1].strip() for r in rows}) == ["batch", "single"], table
    assert max(float(r[4]) for r in rows) >= 0.95, table
    for png in ("tiny-16-euclidean-strata.png", "tiny-16-euclidean-strata-batch.png"):
        assert (checkout / "results" / png).exists()


def test_prepare_fails_when_the_worker_wrote_nothing(checkout: Path) -> None:
    # The failure this issue was about: the engine started in the harness's parent, the
    # forked worker raised in fit, and run.py still exited 0 with no results.
    # A successful run first: its result files must not count for the failed one.
    data = _tiny_dataset(checkout.parent, "tiny-16-euclidean")
    steps = ("--steps", "wrapper,data,run")
    proc = _prepare(checkout, "--hdf5", str(data), "--modes", "single", *steps)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    env = dict(os.environ, FAKE_ANNB_START_ENGINE_IN_PARENT="1")
    proc = _prepare(checkout, "--hdf5", str(data), "--modes", "single", "--steps", "run", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "wrote no results for strata (single)" in proc.stderr
    assert "fork()" in proc.stderr  # the worker's own error is in the harness's output


def test_prepare_runs_again_when_the_worker_found_the_queue_empty(checkout: Path) -> None:
    # The real harness's worker loops `while not queue.empty()`: forked before the parent's
    # feeder thread wrote the definitions, it exits at once and run.py exits 0. Seen with
    # the real ann-benchmarks here (hnswlib, --batch): two runs in five wrote nothing.
    data = _tiny_dataset(checkout.parent, "tiny-16-euclidean")
    steps = ("--steps", "wrapper,data,run", "--modes", "single")
    env = dict(os.environ, FAKE_ANNB_EMPTY_QUEUE_ONCE=str(checkout.parent / "raced"))
    proc = _prepare(checkout, "--hdf5", str(data), *steps, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (checkout.parent / "raced").exists()
    assert "running it again, attempt 2 of 8" in proc.stdout, proc.stdout
    assert "strata (single): 2 result files" in proc.stdout, proc.stdout


def test_registration_is_idempotent_and_keeps_known_names(checkout: Path) -> None:
    python = sys.executable
    for name in ("a-1-euclidean", "b-2-angular", "a-1-euclidean"):
        prepare.register_dataset(checkout, python, name)
    prepare.register_dataset(checkout, python, "fashion-mnist-784-euclidean")
    text = (checkout / "ann_benchmarks" / "datasets.py").read_text()
    assert text.count(prepare.BLOCK_START) == 1
    assert 'for _name in ["a-1-euclidean", "b-2-angular"]:' in text
    namespace: dict = {}
    exec(compile(text.replace("import h5py", ""), "datasets.py", "exec"), namespace)
    assert {"a-1-euclidean", "b-2-angular", "fashion-mnist-784-euclidean"} <= set(
        namespace["DATASETS"]
    )


def test_layout_check_rejects_squared_euclidean_distances(checkout: Path) -> None:
    data = _tiny_dataset(checkout.parent, "squared-16-euclidean", squared=True)
    proc = _prepare(checkout, "--hdf5", str(data), "--steps", "data")
    assert proc.returncode == 1
    assert "the harness's euclidean distance of that pair" in proc.stderr, proc.stderr


def test_source_copied_for_docker_builds_a_wheel(checkout: Path, tmp_path: Path) -> None:
    # The Dockerfile's build stage runs `pip wheel --no-deps` on src/: it must be complete.
    proc = _prepare(checkout, "--steps", "wrapper")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    src = checkout / "ann_benchmarks" / "algorithms" / "strata" / "src"
    out = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out),
                    str(src)], check=True, timeout=900)
    wheels = [p.name for p in out.glob("*.whl")]
    assert len(wheels) == 1 and "-cp310-abi3-" in wheels[0], wheels
