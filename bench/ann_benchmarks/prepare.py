"""Prepares a local ann-benchmarks checkout to run strata, runs it, and tabulates the results.

    make annb ANNB=/path/to/ann-benchmarks [ANNB_DATASET=fashion-mnist-784-euclidean]
    python bench/ann_benchmarks/prepare.py --annb /path/to/ann-benchmarks --dataset NAME

Steps (--steps picks some; each prints what it does):

  wrapper  bench/ann_benchmarks/strata/{module.py,config.yml,Dockerfile} are copied to
           <annb>/ann_benchmarks/algorithms/strata/, with the build inputs of this source tree in
           its src/ folder: the Dockerfile builds strata from them (`python install.py
           --algorithm strata`), never from PyPI (the PyPI project named strata is unrelated).
  env      a venv, <annb>/.venv-strata (--python picks the interpreter: 3.10 matches the
           harness's older base image), with the harness's requirements.txt, hnswlib, and the
           strata wheel from dist/ (`make wheel`; built here if missing). --no-venv uses
           --python as it is.
  data     bench/datasets.py writes the data set (train, test, neighbors, distances and the
           attrs ann-benchmarks writes); its layout and distance convention are checked, the
           file is hard-linked (else copied) to <annb>/data/<name>.hdf5, and the name is added
           to DATASETS in ann_benchmarks/datasets.py if the harness does not know it (run.py
           --dataset accepts only names it knows). glove-100-angular becomes
           strata-glove6b-100-angular there: bench/datasets.py's glove is GloVe 6B, not the
           harness's Twitter glove of that name. --hdf5 FILE registers any file in that layout.
  run      run.py --local --force --dataset <name> --algorithm A [--batch], for every algorithm
           and mode. run.py exits 0 even when its worker died and skipped every definition, so
           a run that wrote no result files is an error here. One exception is retried: the
           harness's worker loops `while not queue.empty()`, and a forked worker can find the
           queue empty before the parent's feeder thread has written the definitions to it;
           it then exits at once, having instantiated nothing. Such a run (no "Trying to
           instantiate" in its output, no results) is run again, up to RACE_ATTEMPTS times.
  results  plot.py (results/<name>-strata[-batch].png), data_export.py
           (results/<name>-strata.csv, single-query mode only: that is what it exports), and a
           Markdown table of both modes computed by the harness's own metrics code
           (results.load_all_results + plotting.utils.compute_metrics_all_runs), written to
           results/<name>-strata.md and printed.

Extra arguments for run.py go after `--`, e.g. `-- --runs 2 --max-n-algorithms 3`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WRAPPER_FILES = ("module.py", "config.yml", "Dockerfile")
# What `pip wheel` needs to build strata (see setup.py and pyproject.toml).
SOURCE_FILES = ("go.mod", "go.sum", "setup.py", "pyproject.toml", "README.md")
SOURCE_DIRS = ("capi", "go", "python", "strata")
SOURCE_IGNORE = shutil.ignore_patterns("__pycache__", "*.so", "_ffi.py", "testdata", "*.test")
STEPS = ("wrapper", "env", "data", "run", "results")
# bench/datasets.py names whose data differ from the harness's data set of the same name.
HARNESS_NAMES = {"glove-100-angular": "strata-glove6b-100-angular"}
BLOCK_START = "# >>> strata: data sets prepared by strata's bench/ann_benchmarks/prepare.py"
BLOCK_END = "# <<< strata"


class PrepareError(RuntimeError):
    """A step cannot go on; the message says why and what to do."""


def log(message: str) -> None:
    print(f"[annb] {message}", flush=True)


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> None:
    log(" ".join(str(c) for c in cmd) + (f"   (in {cwd})" if cwd else ""))
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env)
    if proc.returncode != 0:
        raise PrepareError(f"{Path(str(cmd[0])).name} {cmd[1]} ... exited with {proc.returncode}")


def output(cmd: list[str], cwd: Path | None = None) -> str:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise PrepareError(f"{' '.join(map(str, cmd[:3]))} ... failed:\n{proc.stderr.strip()}")
    return proc.stdout


def check_checkout(annb: Path) -> None:
    missing = [p for p in ("run.py", "ann_benchmarks/datasets.py", "ann_benchmarks/algorithms")
               if not (annb / p).exists()]
    if missing:
        raise PrepareError(f"{annb} is not an ann-benchmarks checkout: no {', '.join(missing)}")


# ----------------------------------------------------------------------------- wrapper


def install_wrapper(annb: Path) -> Path:
    target = annb / "ann_benchmarks" / "algorithms" / "strata"
    target.mkdir(parents=True, exist_ok=True)
    for name in WRAPPER_FILES:
        shutil.copy2(HERE / "strata" / name, target / name)
    src = target / "src"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir()
    for name in SOURCE_FILES:
        shutil.copy2(REPO / name, src / name)
    for name in SOURCE_DIRS:
        shutil.copytree(REPO / name, src / name, ignore=SOURCE_IGNORE)
    log(f"wrapper and strata's source (for the Dockerfile) in {target}")
    return target


# ----------------------------------------------------------------------------- environment


def find_wheel(wheel: Path | None, wheel_dir: Path) -> Path:
    if wheel is not None:
        if not wheel.is_file():
            raise PrepareError(f"--wheel {wheel}: no such file")
        return wheel
    found = sorted(wheel_dir.glob("strata-*-cp310-abi3-*.whl"), key=lambda p: p.stat().st_mtime)
    if found:
        return found[-1]
    log(f"no strata wheel in {wheel_dir}; building one")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", wheel_dir, REPO])
    return find_wheel(None, wheel_dir)


def make_env(annb: Path, python: str, venv: Path, wheel: Path, algorithms: list[str]) -> str:
    """Returns the interpreter that runs the harness: venv's, set up with everything it needs."""
    venv_python = venv / "bin" / "python"
    if not venv_python.exists():
        run([python, "-m", "venv", venv])
    pip = [venv_python, "-m", "pip", "--disable-pip-version-check"]
    requirements = annb / "requirements.txt"
    if requirements.exists():
        run([*pip, "install", "-r", requirements])
    extra = ["hnswlib"] if "hnswlib" in algorithms else []
    run([*pip, "install", "--force-reinstall", "--no-deps", wheel])  # same version, new build
    run([*pip, "install", wheel, *extra])
    return str(venv_python)


# ----------------------------------------------------------------------------- data set

# Run by the harness's interpreter (it has h5py and numpy; this script needs neither).
CHECK_LAYOUT = r"""
import sys
import h5py
import numpy as np

path, count = sys.argv[1], int(sys.argv[2])
problems = []
with h5py.File(path, "r") as f:
    attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
    missing = [k for k in ("train", "test", "neighbors", "distances") if k not in f]
    if missing:
        sys.exit(f"{path}: no {', '.join(missing)} dataset")
    train, test = f["train"], f["test"]
    neighbors, distances = f["neighbors"][:], f["distances"][:]
    distance = str(attrs.get("distance"))
    if str(attrs.get("type", "dense")) != "dense":
        problems.append(f"type attribute {attrs.get('type')!r}, expected 'dense'")
    if distance not in ("euclidean", "angular"):
        problems.append(f"distance attribute {distance!r}, expected 'euclidean' or 'angular'")
    if str(attrs.get("point_type", "float")) != "float":
        problems.append(f"point_type attribute {attrs.get('point_type')!r}, expected 'float'")
    if train.ndim != 2 or test.ndim != 2 or train.shape[1] != test.shape[1]:
        problems.append(f"train {train.shape} and test {test.shape} are not (n, d) and (nq, d)")
    elif int(attrs.get("dimension", train.shape[1])) != train.shape[1]:
        problems.append(f"dimension attribute {attrs['dimension']} but train is {train.shape}")
    if neighbors.shape != distances.shape or neighbors.shape[0] != test.shape[0]:
        problems.append(f"neighbors {neighbors.shape} / distances {distances.shape} for "
                        f"{test.shape[0]} queries")
    elif neighbors.shape[1] < count:
        problems.append(f"ground truth holds {neighbors.shape[1]} neighbours, fewer than k={count}")
    elif neighbors.min() < 0 or neighbors.max() >= train.shape[0]:
        problems.append("neighbors holds ids outside the train rows")
    elif np.any(np.diff(distances[:, :count], axis=1) < -1e-5):
        problems.append("distances rows are not sorted nearest first")
    if not problems and distance in ("euclidean", "angular"):
        # The harness recomputes each returned neighbour's distance with these formulas and
        # compares it with this file's distances, so the convention must match (not L2^2).
        q = np.asarray(test[0], dtype=np.float64)
        x = np.asarray(train[int(neighbors[0, 0])], dtype=np.float64)
        if distance == "euclidean":
            want = np.linalg.norm(q - x)
        else:
            want = 1 - q @ x / (np.linalg.norm(q) * np.linalg.norm(x))
        if abs(want - distances[0, 0]) > 1e-3 * max(1.0, abs(want)):
            problems.append(f"distances[0, 0] = {distances[0, 0]:.6g}, but the harness's "
                            f"{distance} distance of that pair is {want:.6g}")
if problems:
    sys.exit(f"{path} is not in ann-benchmarks' layout:\n  " + "\n  ".join(problems))
print(distance, train.shape[0], train.shape[1], test.shape[0])
"""


def bench_data_path(name: str) -> Path:
    """Where bench/datasets.py writes NAME (its hdf5_path, without importing numpy here)."""
    root = os.environ.get("STRATA_BENCH_DATA")
    return (Path(root) if root else REPO / "bench" / "data") / f"{name}.hdf5"


def prepare_data(annb: Path, python: str, name: str | None, hdf5: Path | None, count: int,
                 force: bool) -> str:
    """Places the data set in <annb>/data and registers it; returns the harness's name for it."""
    if hdf5 is None:
        assert name is not None
        run([python, REPO / "bench" / "datasets.py", name])
        source, harness_name = bench_data_path(name), HARNESS_NAMES.get(name, name)
    else:
        source, harness_name = hdf5, hdf5.stem
    if not source.is_file():
        raise PrepareError(f"{source}: no such file")
    described = output([python, "-c", CHECK_LAYOUT, source, str(count)]).split()
    log(f"{source}: ann-benchmarks layout, {described[0]}, {described[1]} x {described[2]}, "
        f"{described[3]} queries")
    data_dir = annb / "data"
    data_dir.mkdir(exist_ok=True)
    target = data_dir / f"{harness_name}.hdf5"
    if target.exists() and not force and not os.path.samefile(source, target):
        log(f"{target} exists and is left as it is (--force replaces it)")
    elif not target.exists() or not os.path.samefile(source, target):
        tmp = target.with_suffix(".hdf5.tmp")
        tmp.unlink(missing_ok=True)
        try:
            os.link(source, tmp)  # Docker mode mounts data/: a symlink out of it would dangle
        except OSError:
            shutil.copyfile(source, tmp)
        os.replace(tmp, target)
        log(f"{target} <- {source}")
    register_dataset(annb, python, harness_name)
    return harness_name


def harness_knows(annb: Path, python: str, name: str) -> bool:
    code = ("import sys; from ann_benchmarks.datasets import DATASETS; "
            "print(sys.argv[1] in DATASETS)")
    try:
        return output([python, "-c", code, name], cwd=annb).strip() == "True"
    except PrepareError:
        # The harness could not be imported with this interpreter; its source will do.
        text = (annb / "ann_benchmarks" / "datasets.py").read_text()
        return f'"{name}"' in text or f"'{name}'" in text


def register_dataset(annb: Path, python: str, name: str) -> None:
    """Adds name to the harness's DATASETS (idempotent: one marked block, rewritten)."""
    path = annb / "ann_benchmarks" / "datasets.py"
    text = path.read_text()
    block = re.search(re.escape(BLOCK_START) + r".*?" + re.escape(BLOCK_END) + r"\n?", text,
                      re.DOTALL)
    listed = re.search(r"for _name in \[(.*?)\]:", block.group(0)) if block else None
    names = re.findall(r'"([^"]+)"', listed.group(1)) if listed else []
    if name in names:
        return
    if harness_knows(annb, python, name):  # not through the block: name is not in it
        log(f"the harness knows {name}; {path} is unchanged")
        return
    names.append(name)
    new_block = (
        f"{BLOCK_START}\n"
        "def _strata_prepared(out_fn: str) -> None:\n"
        "    raise RuntimeError(\n"
        '        f"{out_fn} is written by strata\'s bench/ann_benchmarks/prepare.py; "\n'
        '        "run it again"\n'
        "    )\n\n\n"
        f"for _name in [{', '.join(json.dumps(n) for n in names)}]:\n"
        "    DATASETS.setdefault(_name, _strata_prepared)\n"
        f"{BLOCK_END}\n"
    )
    if block:
        text = text[: block.start()] + new_block + text[block.end():]
    else:
        text = text.rstrip("\n") + "\n\n\n" + new_block
    path.write_text(text)
    log(f"registered {name} in {path}")


# ----------------------------------------------------------------------------- runs


def result_files(annb: Path, name: str, count: int, algorithm: str, batch: bool) -> dict:
    """{path: mtime_ns} of the harness's result files for one algorithm and mode."""
    folder = annb / "results" / name / str(count) / (algorithm + ("-batch" if batch else ""))
    return {p: p.stat().st_mtime_ns for p in folder.glob("*.hdf5")}


# What ann-benchmarks' instantiate_algorithm prints in the worker before each definition.
INSTANTIATING = "Trying to instantiate"
# Runs of one algorithm and mode when the worker found the definition queue empty at start.
RACE_ATTEMPTS = 8


def run_teed(cmd: list[str], cwd: Path, env: dict, marker: str) -> bool:
    """Runs cmd like run(), its stdout passed through; returns whether a line held marker
    (instantiate_algorithm prints to stdout; stderr, with any traceback, is left as it is)."""
    log(" ".join(str(c) for c in cmd) + f"   (in {cwd})")
    seen = False
    with subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          text=True, bufsize=1) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            seen = seen or marker in line
        sys.stdout.flush()
    if proc.returncode != 0:
        raise PrepareError(f"{Path(str(cmd[0])).name} {cmd[1]} ... exited with {proc.returncode}")
    return seen


def run_harness(annb: Path, python: str, name: str, count: int, algorithms: list[str],
                modes: list[str], extra: list[str]) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    for mode in modes:
        for algorithm in algorithms:
            before = result_files(annb, name, count, algorithm, mode == "batch")
            cmd = [python, "run.py", "--local", "--force", "--dataset", name, "--count",
                   str(count), "--algorithm", algorithm, *(["--batch"] if mode == "batch" else []),
                   *extra]
            for attempt in range(1, RACE_ATTEMPTS + 1):
                instantiated = run_teed(cmd, annb, env, INSTANTIATING)
                after = result_files(annb, name, count, algorithm, mode == "batch")
                written = [p for p, mtime in after.items() if before.get(p) != mtime]
                if written or instantiated or attempt == RACE_ATTEMPTS:
                    break
                # Not a failure of the algorithm: the worker never took a definition.
                log(f"{algorithm} ({mode}): run.py's worker exited before taking a definition "
                    "(it found the queue empty before the parent's feeder thread filled it); "
                    f"running it again, attempt {attempt + 1} of {RACE_ATTEMPTS}")
            if not written and not instantiated:
                raise PrepareError(
                    f"run.py exited 0 but wrote no results for {algorithm} ({mode}) in "
                    f"{RACE_ATTEMPTS} runs: each time its worker exited before taking a "
                    "definition (it found the queue empty, or no definition passed the filters)")
            if not written:
                raise PrepareError(
                    f"run.py exited 0 but wrote no results for {algorithm} ({mode}) under "
                    f"{annb / 'results' / name / str(count)}: its worker failed (see its output "
                    "above; the harness skips every definition of a worker that died)")
            log(f"{algorithm} ({mode}): {len(written)} result files")


# ----------------------------------------------------------------------------- results

# Run in the checkout by the harness's interpreter: its own metrics, both modes.
# The harness's metrics code prints its progress ("Computing knn metrics", "Found cached
# result") to stdout, which is where the table goes: that goes to stderr while it runs.
TABLE = r"""
import contextlib
import sys
from ann_benchmarks.datasets import get_dataset
from ann_benchmarks.plotting.utils import compute_metrics_all_runs
from ann_benchmarks.results import load_all_results

name, count, algorithms = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
dataset, _ = get_dataset(name)
modes = {}
with contextlib.redirect_stdout(sys.stderr):
    for batch in (False, True):
        modes[batch] = [r for r in compute_metrics_all_runs(dataset,
                                                            load_all_results(name, count, batch))
                        if r["algorithm"] in algorithms]
print(f"| mode | algorithm | parameters | recall@{count} (k-nn) | QPS | build s | index kB |")
print("|---|---|---|---:|---:|---:|---:|")
for batch in (False, True):
    rows = modes[batch]
    rows.sort(key=lambda r: (r["algorithm"], -r["qps"]))
    for r in rows:
        print(f"| {'batch' if batch else 'single'} | {r['algorithm']} | {r['parameters']} "
              f"| {r['k-nn']:.4f} | {r['qps']:,.0f} | {r['build']:.1f} | {r['indexsize']:,.0f} |")
"""


def export_results(annb: Path, python: str, name: str, count: int, algorithms: list[str],
                   modes: list[str]) -> Path:
    results = annb / "results"
    for mode in modes:
        suffix = "-batch" if mode == "batch" else ""
        run([python, "plot.py", "--dataset", name, "--count", str(count),
             "--output", results / f"{name}-strata{suffix}.png",
             *(["--batch"] if mode == "batch" else [])], cwd=annb)
    run([python, "data_export.py", "--output", results / f"{name}-strata.csv"], cwd=annb)
    table = output([python, "-c", TABLE, name, str(count), ",".join(algorithms)], cwd=annb)
    md = results / f"{name}-strata.md"
    md.write_text(table)
    print(table)
    log(f"table: {md}; plots and CSV beside it")
    return md


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--annb", type=Path, required=True, help="the ann-benchmarks checkout")
    source = ap.add_mutually_exclusive_group()
    source.add_argument("--dataset", default="random-clustered-20k-64-euclidean",
                        help="a bench/datasets.py data set (python bench/datasets.py --list)")
    source.add_argument("--hdf5", type=Path, help="any file in ann-benchmarks' layout instead")
    ap.add_argument("--count", type=int, default=10, help="k (run.py --count)")
    ap.add_argument("--algorithms", default="strata,hnswlib")
    ap.add_argument("--modes", default="single,batch", help="single, batch or both")
    ap.add_argument("--steps", default=",".join(STEPS), help=f"some of {','.join(STEPS)}")
    ap.add_argument("--python", default=sys.executable, help="interpreter for the venv")
    ap.add_argument("--venv", type=Path, help="default: <annb>/.venv-strata")
    ap.add_argument("--no-venv", action="store_true", help="run the harness with --python itself")
    ap.add_argument("--wheel", type=Path, help="the strata wheel (default: newest in --wheel-dir)")
    ap.add_argument("--wheel-dir", type=Path, default=REPO / "dist")
    ap.add_argument("--force", action="store_true", help="replace an existing data/<name>.hdf5")
    args = ap.parse_args(argv)

    annb = args.annb.resolve()
    steps = args.steps.split(",")
    algorithms = args.algorithms.split(",")
    modes = args.modes.split(",")
    unknown = sorted(set(steps) - set(STEPS)) + sorted(set(modes) - {"single", "batch"})
    if unknown:
        ap.error(f"unknown step or mode: {', '.join(unknown)}")
    try:
        check_checkout(annb)
        if "wrapper" in steps:
            install_wrapper(annb)
        python = args.python
        if not args.no_venv:
            venv = (args.venv or annb / ".venv-strata").resolve()
            if "env" in steps:
                wheel = find_wheel(args.wheel, args.wheel_dir.resolve())
                python = make_env(annb, args.python, venv, wheel, algorithms)
            else:
                python = str(venv / "bin" / "python")
        name = HARNESS_NAMES.get(args.dataset, args.dataset) if args.hdf5 is None \
            else args.hdf5.stem
        if "data" in steps:
            name = prepare_data(annb, python, None if args.hdf5 else args.dataset,
                                args.hdf5.resolve() if args.hdf5 else None, args.count,
                                args.force)
        if "run" in steps:
            run_harness(annb, python, name, args.count, algorithms, modes, extra)
        if "results" in steps:
            export_results(annb, python, name, args.count, algorithms, modes)
    except PrepareError as exc:
        print(f"prepare.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
