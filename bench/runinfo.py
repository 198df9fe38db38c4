"""What a result file records about where and how it was made: machine, commit, versions.

Where it goes: one layout for every benchmark (docs/benchmarks-methodology.md)::

    bench/results/<benchmark>/<benchmark>-<YYYYMMDDTHHMMSSZ>-<commit>[-<label>].json

The timestamp is UTC, the commit is the first 7 hex digits of the HEAD that ran (``nogit``
outside a checkout), and the label, when there is one, says what the run was of (a data set,
a variant such as ``query-only``). ``result_path`` makes such a name, ``parse_result_name``
reads one back; bench/report.py builds docs/benchmarks.md from these files.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

REPO_DIR = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_DIR / "bench" / "results"
_RESULT_NAME = re.compile(
    r"^(?P<benchmark>[a-z0-9]+(?:-[a-z0-9]+)*?)-(?P<stamp>\d{8}T\d{6}Z)-(?P<commit>[0-9a-f]{7}|nogit)"
    r"(?:-(?P<label>[A-Za-z0-9._-]+))?\.json$")
FLAGS_OF_INTEREST = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                     "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile")


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def machine() -> dict:
    model, flags = None, set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name" and model is None:
                model = value.strip()
            elif key == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    mem_kib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    except OSError:
        pass
    return {
        "cpu_model": model or platform.processor(),
        "cores": cpu_count(),
        "os_cpu_count": os.cpu_count(),
        "flags": {f: (f in flags) for f in FLAGS_OF_INTEREST},
        "mem_total_gib": round(mem_kib / 2**20, 1) if mem_kib else None,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "hostname_hash": hash(platform.node()) & 0xFFFF,  # tells runs on one machine apart
    }


def git_info() -> dict:
    def run(*args: str) -> str | None:
        try:
            return subprocess.run(["git", *args], cwd=REPO_DIR, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return None

    status = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": run("rev-parse", "HEAD"), "dirty": bool(status) if status is not None
            else None, "branch": run("rev-parse", "--abbrev-ref", "HEAD")}


def versions() -> dict:
    out = {}
    for dist in ("strata", "numpy", "h5py", "hnswlib", "faiss-cpu"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    try:
        from threadpoolctl import threadpool_info

        out["blas"] = [{k: i.get(k) for k in ("internal_api", "version", "architecture",
                                               "num_threads")} for i in threadpool_info()]
    except ImportError:
        pass
    return out


def rss_bytes() -> int:
    """Current resident set size of this process."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_bytes() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class ResultName(NamedTuple):
    benchmark: str
    stamp: str  # YYYYMMDDTHHMMSSZ, UTC
    commit: str  # 7 hex digits, or "nogit"
    label: str | None


def parse_result_name(name: str) -> ResultName:
    """Splits a result file name; ValueError when it does not follow the layout."""
    m = _RESULT_NAME.match(name)
    if m is None:
        raise ValueError(f"result file name {name!r} is not "
                         "<benchmark>-<YYYYMMDDTHHMMSSZ>-<commit>[-<label>].json")
    return ResultName(m["benchmark"], m["stamp"], m["commit"], m["label"])


def result_path(benchmark: str, label: str | None = None, *, when: float | None = None,
                results_dir: Path = RESULTS_DIR) -> Path:
    """bench/results/<benchmark>/<benchmark>-<UTC time>-<commit>[-<label>].json (dir created)."""
    commit = (git_info().get("commit") or "")[:7] or "nogit"
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(when))
    name = f"{benchmark}-{stamp}-{commit}" + (f"-{label}" if label else "") + ".json"
    parse_result_name(name)  # a label the reader could not split back is a bug here
    out = results_dir / benchmark
    out.mkdir(parents=True, exist_ok=True)
    return out / name
