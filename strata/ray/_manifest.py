"""The manifest of a sharded index or collection: one JSON file beside the shards.

    dir/
      manifest.json            {"format": ..., "version": 1, "routing": "splitmix64-mod",
                                "shards": N, "dim": ..., "metric": ..., ...}
      shard-0000.g3.strata     ShardedIndex: one index file per shard and save generation
      shard-0000/              ShardedCollection: one collection (own WAL) per shard

The manifest is replaced only by temp file + fsync + rename + directory
fsync, and a ShardedIndex writes it after every shard file of the new
generation is in place: a crash during save() leaves the previous
generation whole.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from strata.ray._routing import ROUTING

NAME = "manifest.json"
VERSION = 1


class ManifestError(ValueError):
    """A manifest is missing, unreadable, or describes something else."""


def write(directory: str | os.PathLike[str], manifest: dict[str, Any]) -> None:
    """Atomically writes directory/manifest.json."""
    path = Path(directory) / NAME
    tmp = path.with_name(NAME + ".tmp")
    data = json.dumps(manifest, indent=1, sort_keys=True).encode()
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def exists(directory: str | os.PathLike[str]) -> bool:
    return (Path(directory) / NAME).is_file()


def read(directory: str | os.PathLike[str], fmt: str) -> dict[str, Any]:
    """Reads and checks directory/manifest.json; fmt is the expected "format"."""
    path = Path(directory) / NAME
    try:
        manifest = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no manifest; {directory} holds no sharded data") from None
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path}: unreadable manifest: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != fmt:
        got = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise ManifestError(f"{path}: expected format {fmt!r}, found {got!r}")
    if manifest.get("version") != VERSION:
        version = manifest.get("version")
        raise ManifestError(f"{path}: version {version!r}; this strata reads {VERSION}")
    if manifest.get("routing") != ROUTING:
        routing = manifest.get("routing")
        raise ManifestError(f"{path}: routing {routing!r}; this strata knows {ROUTING!r}")
    shards = manifest.get("shards")
    if type(shards) is not int or shards < 1:
        raise ManifestError(f"{path}: shards must be a positive integer, got {shards!r}")
    return manifest
