"""ShardedCollection: one strata.Collection per Ray actor, queried as one.

    path/
      manifest.json     format "strata-sharded-collection", shards, dim, metric
      shard-0000/       a complete strata.Collection: its own snapshot and WAL
      shard-0001/
      ...

Durability is per shard: an upsert returns once every shard that received
rows has logged them (and, with fsync="always", fsynced them). There is no
cross-shard transaction: a batch spanning shards can be half applied if a
shard dies during it; upserts are idempotent, so retry after restart_shards().
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
import numpy.typing as npt

from strata._collection import (
    GetResult,
    QueryResult,
    _Expiry,
    _expiry_arg,
    check_ids,
    check_metadata,
    check_where,
    fuse,
)
from strata._fields import (
    check_fusion,
    check_names,
    check_sub_queries,
    check_vectors_arg,
    field_shape,
    field_values,
    query_rows,
    schema_of,
    sparse_schema_of,
    sparse_values,
    split_fields,
)
from strata._ids import id_array, id_values
from strata._index import _as_rows, _i64, _id_list, _int, _k
from strata.ray import _manifest
from strata.ray._actors import COLLECTION_SHARD, ShardPool, connect, put_if_large
from strata.ray._index import _check_finite
from strata.ray._routing import ROUTING, group, id_order, merge_stats, merge_topk

FORMAT = "strata-sharded-collection"
_ID_LIMIT = 2**63


def _ids_arg(ids: object) -> npt.NDArray[Any]:
    """ids as a uint64 array (integers: the path they took before string ids) or, when
    one is a str, an object array of ints and strs (the shards' engines check them)."""
    if not isinstance(ids, str):
        arr = np.asarray(ids)
        if arr.dtype.kind in "iu" or arr.size == 0:
            return _id_list(arr, "ids")
    values = id_values(ids, "ids")
    for i, v in enumerate(values):
        if isinstance(v, int) and v >= _ID_LIMIT:
            raise ValueError(f"ids[{i}] = {v} is not below 2**63")
    if not any(isinstance(v, str) for v in values):
        return np.array(values, dtype=np.uint64)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _check_expiry(expiry: _Expiry | None, n: int) -> None:
    """The engine's checks of ttl / expires_at (collection.Expiry), made before any shard
    writes: a value refused by one shard after others wrote would leave a partial upsert."""
    if expiry is None:
        return
    name, values = ("ttl" if expiry.is_ttl else "expires_at"), expiry.values
    if values.size not in (1, n):
        raise ValueError(
            f"{name} holds {values.size} values for {n} points (give one, or one per point)"
        )
    bad = np.flatnonzero(~np.isnan(values) & ~((values >= 0) & np.isfinite(values)))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name}[{i}] = {values[i]}: must be a finite number of seconds >= 0")


def _local_path(path_or_uri: str | os.PathLike[str]) -> Path:
    """A directory path; file:// URIs are accepted, other schemes are not (yet)."""
    text = os.fspath(path_or_uri)
    if isinstance(text, str) and "://" in text:
        parsed = urlparse(text)
        if parsed.scheme != "file":
            raise ValueError(
                f"unsupported URI scheme {parsed.scheme!r} in {text!r}: shards live in directories "
                "(a path or file:// URI on a filesystem every Ray node sees)"
            )
        text = parsed.path
    return Path(text).resolve()


class ShardedCollection:
    """A strata.Collection split over `shards` Ray actors, each with its own directory and WAL.

    ShardedCollection(path) opens the sharded collection at path;
    ShardedCollection(path, shards=N, dim=D, ...) creates it if path holds
    none (create() and open() say which one you mean). The directory must be
    on a filesystem every node running a shard sees. Metadata filters
    (where=) run on every shard before the merge, so a filtered query returns
    the global top-k of the matching entries.
    """

    def __init__(
        self,
        path_or_uri: str | os.PathLike[str],
        shards: int | None = None,
        *,
        dim: int | None = None,
        metric: str = "cosine",
        M: int = 16,  # noqa: N803 (strata.Collection's name)
        ef_construction: int = 200,
        quantization: str | None = None,
        fsync: str | None = None,
        seed: int | None = None,
        repair: bool = False,
        address: str | None = None,
        actor_options: dict[str, Any] | None = None,
        text_fields: Sequence[str] | None = None,
        text_analyzer: str = "english",
        vectors: dict[str, dict[str, Any]] | None = None,
        sparse_vectors: Sequence[str] | dict[str, dict[str, Any]] | None = None,
    ) -> None:
        path = _local_path(path_or_uri)
        if _manifest.exists(path):
            self._open(path, shards, dim, fsync, repair, address, actor_options)
            self._schema = self._read_schema()
            return
        if dim is None and vectors is None and sparse_vectors is None:
            raise FileNotFoundError(
                f"{path}: no sharded collection there; pass dim=, vectors= or sparse_vectors= "
                "(and shards=) to create one")
        if dim is not None and vectors is not None:
            raise ValueError("give dim (one unnamed field) or vectors= (named), not both")
        options = {"metric": metric, "M": M, "ef_construction": ef_construction,
                   "quantization": quantization, "fsync": fsync or "always", "seed": seed,
                   "text_fields": text_fields, "text_analyzer": text_analyzer}
        if vectors is not None:
            options["vectors"] = vectors
        if sparse_vectors is not None:
            options["sparse_vectors"] = sparse_vectors
        self._create(path, 2 if shards is None else shards, dim, options, address, actor_options)
        self._schema = self._read_schema()

    @classmethod
    def create(cls, path_or_uri: str | os.PathLike[str], dim: int | None = None, shards: int = 2,
               **options: Any) -> ShardedCollection:
        """Creates a sharded collection; FileExistsError if path already holds one."""
        path = _local_path(path_or_uri)
        if _manifest.exists(path):
            raise FileExistsError(f"{path}: a sharded collection already exists there")
        return cls(path, shards, dim=dim, **options)

    @classmethod
    def open(cls, path_or_uri: str | os.PathLike[str], **options: Any) -> ShardedCollection:
        """Opens (and recovers every shard of) the sharded collection at path."""
        path = _local_path(path_or_uri)
        _manifest.read(path, FORMAT)  # FileNotFoundError / ManifestError with the path
        return cls(path, **options)

    def _create(self, path: Path, shards: int, dim: int | None, options: dict[str, Any],
                address: str | None, actor_options: dict[str, Any] | None) -> None:
        # shards is this door's own argument; dim and the options are the engine's to
        # check, in every shard's Collection.create, which raises its own message.
        shards = _int(shards, "shards", 1, 1 << 16)
        if dim is not None:
            dim = _i64(dim, "dim")
        made = not path.exists()
        path.mkdir(parents=True, exist_ok=True)
        dirs = [path / f"shard-{s:04d}" for s in range(shards)]
        fresh = [not d.exists() for d in dirs]
        connect(address)
        self._init(path, dirs, actor_options)
        try:
            answers = self._pool.call(
                "open", [("Collection.create", (str(d), dim), options) for d in dirs])
        except BaseException:
            self._pool.shutdown()
            for d, new in zip(dirs, fresh, strict=True):
                if new:  # ours, half made: leave nothing behind
                    shutil.rmtree(d, ignore_errors=True)
            if made:
                shutil.rmtree(path, ignore_errors=True)
            raise
        # With named fields, dim and metric are the unnamed field's (0 without one).
        self._dim, self._metric = answers[0]
        _manifest.write(path, {
            "format": FORMAT, "version": _manifest.VERSION, "routing": ROUTING,
            "shards": shards, "dim": self._dim, "metric": self._metric,
            "dirs": [d.name for d in dirs],
        })  # fmt: skip

    def _open(self, path: Path, shards: int | None, dim: int | None, fsync: str | None,
              repair: bool, address: str | None, actor_options: dict[str, Any] | None) -> None:
        m = _manifest.read(path, FORMAT)
        if shards is not None and shards != m["shards"]:
            raise ValueError(f"{path} has {m['shards']} shards, not {shards} (resharding is not "
                             "supported: create a new collection and upsert into it)")
        if dim is not None and dim != m["dim"]:
            raise ValueError(f"{path} has dim {m['dim']}, not {dim}")
        names = m.get("dirs")
        if not isinstance(names, list) or len(names) != m["shards"]:
            raise _manifest.ManifestError(f"{path / _manifest.NAME}: lists {names!r} as shard "
                                          f"directories for {m['shards']} shards")
        connect(address)
        self._init(path, [path / name for name in names], actor_options)
        self._open_options = {"fsync": fsync, "repair": repair}
        try:
            answers = self._pool.call("open", [self._open_args(s) for s in range(m["shards"])])
        except BaseException:
            self._pool.shutdown()
            raise
        self._dim, self._metric = answers[0]
        for s, (d, metric) in enumerate(answers):
            if (d, metric) != (m["dim"], m["metric"]):
                self._pool.shutdown()
                raise _manifest.ManifestError(
                    f"{self._dirs[s]}: dim {d}, metric {metric!r}, but the manifest says "
                    f"dim {m['dim']}, metric {m['metric']!r}")

    def _init(self, path: Path, dirs: list[Path], actor_options: dict[str, Any] | None) -> None:
        self._path, self._dirs, self._closed = path, dirs, False
        self._open_options: dict[str, Any] = {"fsync": None, "repair": False}
        self._pool = ShardPool(COLLECTION_SHARD, len(dirs), actor_options,
                               lambda s: str(self._dirs[s]), self._hint)

    def _open_args(self, shard: int) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
        return ("Collection.open", (str(self._dirs[shard]),), self._open_options)

    @staticmethod
    def _hint(shard: int) -> str:
        return ("restart_shards() reopens it from its directory "
                "(its WAL has every acknowledged write)")

    # --- properties and lifecycle -------------------------------------------

    @property
    def path(self) -> str:
        return str(self._path)

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def metric(self) -> str:
        return self._metric

    @property
    def shards(self) -> int:
        return len(self._dirs)

    def _live(self) -> None:
        if self._closed:
            raise ValueError("collection is closed")

    def close(self) -> None:
        """Closes every shard (finishing queued writes) and ends the actors."""
        if self._closed:
            return
        self._closed = True
        self._pool.shutdown()

    def __enter__(self) -> ShardedCollection:  # noqa: PYI034 (Self needs 3.11 typing)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._closed:
            return f"<strata.ray.ShardedCollection({self.path!r}) closed>"
        return (f"strata.ray.ShardedCollection({self.path!r}, shards={self.shards}, "
                f"dim={self._dim}, metric={self._metric!r}, len={len(self)})")

    def restart_shards(self) -> list[int]:
        """Restarts every shard whose actor died, reopening (recovering) it from its
        directory; returns their numbers."""
        self._live()
        dead = self._pool.dead()
        for shard in dead:
            self._pool.respawn(shard)
            self._pool.call("open", [self._open_args(shard)], [shard])
        return dead

    # --- routing helpers ----------------------------------------------------

    def _route(self, ids: npt.NDArray[Any]) -> tuple[Any, list[slice], Any, list[int]]:
        order, spans = group(ids, self.shards)
        targets = [s for s, span in enumerate(spans) if span.stop > span.start]
        return order, spans, ids[order], targets

    def _check_present(self, ids: npt.NDArray[Any]) -> None:
        _, spans, routed, targets = self._route(ids)
        found = self._pool.call("missing", [(routed[spans[s]],) for s in targets], targets)
        missing = {i for part in found for i in part}
        if missing:
            pos = next(p for p, i in enumerate(ids.tolist()) if i in missing)
            raise KeyError(f"id not found: ids[{pos}] = {ids[pos]}")

    # --- writes -------------------------------------------------------------

    def upsert(
        self, ids: object, vectors: Any = None, metadata: object = None, *,
        sparse_vectors: dict[str, Any] | None = None, ttl: object = None,
        expires_at: object = None,
    ) -> None:  # fmt: skip
        """Inserts or replaces entries on the shards that own their ids; see strata.Collection.
        Named and sparse fields' values are cut by the same routing as the ids (ttl=,
        expires_at=: one value, or one per entry, routed with it)."""
        self._live()
        expiry = _expiry_arg(ttl, expires_at)
        if isinstance(vectors, dict) or sparse_vectors is not None:
            if vectors is not None and not isinstance(vectors, dict):
                vectors = {"": vectors}
            self._upsert_points(_ids_arg(ids), vectors, metadata, expiry, sparse_vectors)
            return
        vecs, n = _as_rows(vectors, self._dim, "vectors", "collection")
        id_arr = _ids_arg(ids)
        if id_arr.shape[0] != n:
            raise ValueError(f"got {id_arr.shape[0]} ids for {n} vectors")
        if n == 0:
            return
        if id_arr.dtype == object:  # a bad id refuses the batch on every shard
            check_ids(id_arr)
        elif int(id_arr.max()) >= _ID_LIMIT:
            pos = int(np.argmax(id_arr >= _ID_LIMIT))
            raise ValueError(f"ids[{pos}] = {id_arr[pos]} is not below 2**63")
        docs = check_metadata(metadata, n)
        _check_finite(vecs)
        _check_expiry(expiry, n)
        order, spans, routed, targets = self._route(id_arr)
        vecs = vecs.reshape(n, self._dim)[order] if self.shards > 1 else vecs
        per_shard = []
        for s in targets:
            part = None if docs is None else [docs[i] for i in order[spans[s]].tolist()]
            per_shard.append(("upsert", routed[spans[s]], put_if_large(vecs[spans[s]]), part))
        self._write(per_shard, targets, expiry, order, spans)

    def _write(self, per_shard: list[tuple[Any, ...]], targets: list[int],
               expiry: _Expiry | None, order: Any, spans: list[slice]) -> None:
        """Runs each shard's upsert, with its part of the expiry if there is one."""
        if expiry is None:
            self._pool.call("run", per_shard, targets)
            return
        calls = []
        for (_, *args), s in zip(per_shard, targets, strict=True):
            values = expiry.values if expiry.values.size == 1 else expiry.values[order[spans[s]]]
            part = [None if np.isnan(v) else float(v) for v in values.tolist()]
            calls.append((tuple(args), *((part, None) if expiry.is_ttl else (None, part))))
        self._pool.call("upsert", calls, targets)

    # --- named vector fields ------------------------------------------------

    def _read_schema(self) -> dict[str, dict[str, Any]]:
        """The schema, as shard 0 has it (every shard is changed alike); the sparse
        fields' (sparse_schema) are read with it."""
        info = self._pool.call("run", [("info",)], [0])[0]
        self._sparse = sparse_schema_of(info)
        return schema_of(info)

    @property
    def sparse_schema(self) -> dict[str, dict[str, Any]]:
        """strata.Collection.sparse_schema (the same on every shard)."""
        self._live()
        return {name: dict(spec) for name, spec in self._sparse.items()}

    @property
    def schema(self) -> dict[str, dict[str, Any]]:
        """strata.Collection.schema (the same on every shard)."""
        self._live()
        return {name: dict(spec) for name, spec in self._schema.items()}

    def _split_fields(self, vectors: object, n: int, order: Any, spans: list[slice],
                      targets: list[int], sparse_vectors: object = None,
                      ) -> list[tuple[dict[str, Any], dict[str, Any]]]:  # fmt: skip
        """Named and sparse values for n points, normalised once and cut per shard (in
        routed order): (dense, sparse) per shard."""
        if vectors is not None:
            check_vectors_arg(vectors)
        names = list(vectors or {}) + list(check_vectors_arg(sparse_vectors or {}))
        if any(name not in self._schema and name not in self._sparse for name in names):
            self._schema = self._read_schema()
        values, sparse = split_fields(vectors, sparse_vectors, list(self._sparse))
        whole = {}
        for name, value in values.items():
            dim, multi = field_shape(self._schema, name)
            whole[name] = field_values(name, value, n, dim, multi)
        whole_sparse = {name: sparse_values(name, value, n) for name, value in sparse.items()}
        return [({name: fv.take(order[spans[s]]) for name, fv in whole.items()},
                 {name: sv.take(order[spans[s]]) for name, sv in whole_sparse.items()})
                for s in targets]  # fmt: skip

    def _upsert_points(self, id_arr: npt.NDArray[Any], vectors: object, metadata: object,
                       expiry: _Expiry | None, sparse_vectors: object = None) -> None:  # fmt: skip
        n = id_arr.shape[0]
        if id_arr.dtype == object:
            check_ids(id_arr)
        elif n and int(id_arr.max()) >= _ID_LIMIT:
            pos = int(np.argmax(id_arr >= _ID_LIMIT))
            raise ValueError(f"ids[{pos}] = {id_arr[pos]} is not below 2**63")
        docs = check_metadata(metadata, n)
        _check_expiry(expiry, n)
        order, spans, routed, targets = self._route(id_arr)
        parts = self._split_fields(vectors, n, order, spans, targets, sparse_vectors)
        if n == 0:
            return
        per_shard = []
        for s, (fields, sparse) in zip(targets, parts, strict=True):
            part = None if docs is None else [docs[i] for i in order[spans[s]].tolist()]
            # A shard's vectors= may name sparse fields too (strata.Collection.upsert).
            per_shard.append(("upsert", routed[spans[s]], {**fields, **sparse}, part))
        self._write(per_shard, targets, expiry, order, spans)

    def update_vectors(
        self, ids: object, vectors: dict[str, Any] | None = None, *,
        sparse_vectors: dict[str, Any] | None = None,
    ) -> int:  # fmt: skip
        """Replaces the given fields of existing points on their shards; KeyError (and no
        change) if one is missing. See strata.Collection.update_vectors."""
        self._live()
        id_arr = _ids_arg(ids)
        order, spans, routed, targets = self._route(id_arr)
        parts = self._split_fields(vectors, id_arr.shape[0], order, spans, targets,
                                   sparse_vectors)  # fmt: skip
        self._check_present(id_arr)
        per_shard = [("update_vectors", routed[spans[s]], {**fields, **sparse})
                     for s, (fields, sparse) in zip(targets, parts, strict=True)]
        return sum(self._pool.call("run", per_shard, targets))

    def delete_vectors(self, ids: object, vectors: Sequence[str]) -> int:
        """Drops the named fields of existing points on their shards; see
        strata.Collection.delete_vectors."""
        self._live()
        names = check_names(vectors)
        id_arr = _ids_arg(ids)
        self._check_present(id_arr)
        _, spans, routed, targets = self._route(id_arr)
        if not targets:  # no ids: the field names are still the engine's to check
            return int(self._pool.call("run", [("delete_vectors", routed, names)], [0])[0])
        per_shard = [("delete_vectors", routed[spans[s]], names) for s in targets]
        return sum(self._pool.call("run", per_shard, targets))

    def add_vector_field(
        self,
        name: str,
        dim: int,
        metric: str = "cosine",
        M: int = 16,  # noqa: N803 (hnswlib's name)
        ef_construction: int = 200,
        quantization: str | None = None,
        multivector: str | None = None,
    ) -> None:
        """Adds the field on every shard; see strata.Collection.add_vector_field. A shard
        that fails (FileExistsError on all of them for a taken name) leaves the others'
        done: retry after fixing it."""
        self._live()
        self._pool.run("add_vector_field", name, dim, metric, M, ef_construction, quantization,
                       multivector)  # fmt: skip
        self._schema = self._read_schema()

    def add_sparse_field(self, name: str, modifier: str = "none") -> None:
        """Adds the sparse field on every shard; see strata.Collection.add_sparse_field
        (and add_vector_field for a shard that fails)."""
        self._live()
        self._pool.run("add_sparse_field", name, modifier)
        self._schema = self._read_schema()

    def remove_vector_field(self, name: str) -> None:
        """Removes the field on every shard; see strata.Collection.remove_vector_field."""
        self._live()
        self._pool.run("remove_vector_field", name)
        self._schema = self._read_schema()

    def update_metadata(self, ids: object, metadata: object) -> int:
        """Replaces the metadata of existing ids; KeyError (and no change) if one is missing."""
        self._live()
        id_arr = _ids_arg(ids)
        docs = check_metadata(metadata, id_arr.shape[0])
        if docs is None:
            raise TypeError("metadata must be a list of dicts, got None")
        self._check_present(id_arr)
        order, spans, routed, targets = self._route(id_arr)
        per_shard = [("update_metadata", routed[spans[s]],
                      [docs[i] for i in order[spans[s]].tolist()]) for s in targets]
        return sum(self._pool.call("run", per_shard, targets))

    def delete(self, ids: object = None, where: dict[str, Any] | None = None) -> int:
        """Deletes ids (unknown ones ignored) or every entry matching where, on every shard."""
        self._live()
        if (ids is None) == (where is None):
            raise ValueError("delete needs exactly one of ids= or where=")
        if check_where(where) is not None:
            return sum(self._pool.run("delete", where=where))
        _, spans, routed, targets = self._route(_ids_arg(ids))
        return sum(self._pool.call("run", [("delete", routed[spans[s]]) for s in targets],
                                   targets))

    def create_text_index(self, field: str, analyzer: str = "english") -> None:
        """Has every shard keep a BM25 index over the metadata field; see
        strata.Collection.create_text_index."""
        self._live()
        self._pool.run("create_text_index", field, analyzer)

    def checkpoint(self) -> None:
        """Checkpoints every shard (each writes a snapshot and trims its own log)."""
        self._live()
        self._pool.run("checkpoint")

    # --- reads --------------------------------------------------------------

    def query(
        self,
        queries: npt.ArrayLike | None = None,
        k: int = 10,
        where: dict[str, Any] | None = None,
        ef: int | None = None,
        *,
        vector: npt.ArrayLike | None = None,
        text: str | None = None,
        fusion: str | dict[str, float] = "rrf",
        text_field: str | None = None,
        k1: float | None = None,
        b: float | None = None,
        num_threads: int | None = None,
        include_metadata: bool = True,
        return_stats: bool = False,
        using: str | None = None,
        sparse: tuple[Any, Any] | None = None,
    ) -> QueryResult:
        """The global k nearest entries matching where: every shard filters and searches,
        then the per-shard lists are merged by distance (ties by id). using= names the
        vector field searched (see strata.Collection.query).

        text= alone: every shard answers BM25 over its own entries and the lists are
        merged by score (ties by id). Each shard scores with its own term statistics
        (document frequencies, average length), as Elasticsearch's default
        query_then_fetch does, so scores can differ from one strata.Collection holding
        the same entries. text= with a query vector (hybrid) raises NotImplementedError:
        fusing per-shard fused lists would not be the fusion of the global lists; query
        the vector and the text separately and fuse the two results (search() does).

        sparse= with using= a sparse field: search()'s one list, merged by score."""
        self._live()
        if vector is not None:
            if queries is not None:
                raise ValueError("pass the query vector as queries or as vector=, not both")
            queries = vector
        if sparse is not None:
            if queries is not None or text is not None:
                raise ValueError("a sparse query takes sparse= alone (no query vector or text)")
            if using is None:
                raise ValueError("a sparse query needs using= (the sparse field's name)")
            sub = {"using": using, "sparse": sparse, "limit": k}
            return self.search([sub], k=k, fusion=None, where=where,
                               include_metadata=include_metadata)  # fmt: skip
        if text is not None and using is not None:
            if queries is None:
                raise ValueError("a text query of a field takes text_field=, not using=")
            if fusion not in ("rrf", "dbsf"):
                raise ValueError(
                    f"a hybrid query with using= fuses by 'rrf' or 'dbsf', got {fusion!r}"
                )
            subs = [{"using": using, "vector": queries, "ef": ef},
                    {"text": text, "text_field": text_field}]  # fmt: skip
            return self.search(subs, k=k, fusion=fusion, where=where,
                               rrf_k=60.0 if fusion == "rrf" else None,
                               include_metadata=include_metadata)  # fmt: skip
        if text is not None:
            if queries is not None:
                raise NotImplementedError(
                    "hybrid queries are not supported on a ShardedCollection: query with the "
                    "vector and with text= separately and fuse the two results")
            return self._query_text(text, k, where, text_field, k1, b, include_metadata)
        if queries is None:
            raise ValueError("query needs a query vector (queries or vector=), text=, or both")
        extra: dict[str, Any] = {}
        if using is not None:
            if not isinstance(using, str):
                raise TypeError(f"using must be a vector field name (a str), got {using!r}")
            if using not in self._schema:
                self._schema = self._read_schema()
            dim, multi = field_shape(self._schema, using)
            rows, nq, counts = query_rows(queries, dim, multi, using)
            shared: Any = rows
            if counts is not None:  # one [m, dim] array per query
                starts = np.concatenate(([0], np.cumsum(counts)))
                shared = [rows[starts[i] : starts[i + 1]] for i in range(nq)]
            extra["using"] = using
        else:
            q, nq = _as_rows(queries, self._dim, "queries", "collection")
            shared = put_if_large(q.reshape(nq, self._dim)) if self.shards > 1 else q
        k = _k(k)  # the engine's bound and message, as strata.Collection.query
        check_where(where)
        results = self._pool.call(
            "query", [(shared, k, where, ef)] * self.shards, num_threads=num_threads,
            include_metadata=include_metadata, return_stats=return_stats, **extra,
        )  # fmt: skip
        ids, dists, picked = merge_topk([r[0] for r in results], [r[1] for r in results], k)
        docs: list[list[Any]] = []
        for row in range(nq):
            candidates = [doc for r in results for doc in r[2][row]]
            docs.append([candidates[j] for j in picked[row].tolist()])
        stats = merge_stats([r[3] for r in results]) if return_stats else None
        return QueryResult(ids, dists, docs, stats)

    def search(
        self,
        queries: Sequence[dict[str, Any]],
        k: int = 10,
        *,
        fusion: str | None = "rrf",
        where: dict[str, Any] | None = None,
        rrf_k: float | None = None,
        num_threads: int | None = None,
        include_metadata: bool = True,
    ) -> QueryResult:
        """strata.Collection.search over every shard, fused once.

        Each shard answers every sub-query's own list (its best `limit` matching where,
        scored as strata.Collection.search's fusion=None says); the door merges each
        sub-query's lists by score into the global list (the best `limit` of all
        shards), then fuses those global lists once, in the engine (strata._collection.
        fuse: the same collection.Fuse a single collection runs). Fusing each shard's
        fused list instead would not be one fusion: RRF ranks a shard's local top
        first, and DBSF would normalise by each shard's own score spread. So the answer
        is a single collection's whenever the global lists are: exactly for sparse
        fields without modifier and exact dense search; the IDF modifier and BM25 score
        with each shard's statistics (as query(text=) does), and graph search is as
        approximate as query()."""
        self._live()
        subs = check_sub_queries(queries)
        fusion = check_fusion(fusion)
        if fusion is None and len(subs) != 1:
            raise ValueError(f"fusion=None takes one sub-query (its own list), got {len(subs)}")
        k = _k(k)
        check_where(where)
        limits = [k if fusion is None else _k(q.get("limit", k)) for q in subs]
        answers = self._pool.call(
            "search_lists", [(subs, limits, where, num_threads, include_metadata)] * self.shards)
        lists: list[tuple[list[Any], list[float], list[Any]]] = []
        for i, limit in enumerate(limits):
            hits = [(pid, score, doc) for shard in answers
                    for pid, score, doc in zip(*shard[i], strict=True)]  # fmt: skip
            hits.sort(key=lambda h: (-h[1], id_order(h[0])))
            hits = hits[:limit]
            lists.append(([h[0] for h in hits], [h[1] for h in hits], [h[2] for h in hits]))
        if fusion is None:
            ids, scores, docs = lists[0]
        else:
            pos, fused = fuse([(ids, sc) for ids, sc, _ in lists], fusion, k, rrf_k)
            flat = [(pid, doc) for ids, _, docs in lists
                    for pid, doc in zip(ids, docs, strict=True)]  # fmt: skip
            ids = [flat[p][0] for p in pos.tolist()]
            docs = [flat[p][1] for p in pos.tolist()]
            scores = fused.tolist()
        n = len(ids)
        out_scores = np.full((1, k), np.nan, dtype=np.float64)
        out_scores[0, :n] = scores
        return QueryResult(id_array(list(ids), (1, k)), np.full((1, k), np.nan, np.float32),
                           [list(docs) + [None] * (k - n)], None, out_scores)  # fmt: skip

    def _query_text(self, text: str, k: int, where: dict[str, Any] | None,
                    text_field: str | None, k1: float | None, b: float | None,
                    include_metadata: bool) -> QueryResult:
        k = _k(k)
        check_where(where)
        results = self._pool.run(
            "query", text=text, k=k, where=where, text_field=text_field, k1=k1, b=b,
            include_metadata=include_metadata,
        )  # fmt: skip
        # Highest score first: merge_topk orders by ascending "distance", and padding
        # (NaN scores) must sort last.
        keys = [np.where(np.isnan(r.scores), np.inf, -r.scores).astype(np.float32)
                for r in results]
        ids, _, picked = merge_topk([r.ids for r in results], keys, k)
        col = picked[0].tolist()
        scores = np.concatenate([r.scores for r in results], axis=1)[:, col]
        dists = np.concatenate([r.distances for r in results], axis=1)[:, col]
        docs = [doc for r in results for doc in r.metadata[0]]
        sources = [src for r in results for src in r.sources[0]]
        return QueryResult(ids, dists, [[docs[j] for j in col]], None, scores,
                           [[sources[j] for j in col]])

    def scan(
        self,
        where: dict[str, Any] | None = None,
        batch_size: int = 1000,
        include_vectors: bool = False,
        *,
        after: int | str | None = None,
        vectors: Sequence[str] | None = None,
    ) -> Iterator[GetResult]:
        """Yields every entry matching where, in the engine's scan order over all shards
        (integer ids ascending, then string ids in byte order), batch_size at a time;
        after= starts past that id; vectors= names fields each batch carries (get's).

        Each batch asks every shard for its next batch_size entries past the cursor and
        keeps the batch_size smallest ids, so a shard may be asked again for entries it
        already sent (the cost of a global order without a cursor per shard)."""
        self._live()
        batch_size = _int(batch_size, "batch_size", 1, 1 << 24)
        check_where(where)
        if after is not None and not isinstance(after, str):
            after = _int(after, "after", 0, _ID_LIMIT - 1)
        while True:
            asked = [(where, batch_size, after, include_vectors)] * self.shards
            pages = [p for p in self._pool.call("scan_page", asked) if p is not None]
            if not pages:
                return
            ids = np.concatenate([p.ids for p in pages])
            if ids.dtype == object:
                values = ids.tolist()
                ranked = sorted(range(len(values)), key=lambda j: id_order(values[j]))
                order = np.array(ranked[:batch_size], dtype=np.intp)
            else:
                order = np.argsort(ids, kind="stable")[:batch_size]
            docs = [doc for p in pages for doc in p.metadata]
            batch = id_array(ids[order].tolist())
            if vectors is not None:  # the named values, from the shards that own them
                yield self.get(batch if batch.dtype != object else list(batch), include_vectors,
                               vectors=vectors)  # fmt: skip
            else:
                yield GetResult(batch, [docs[j] for j in order.tolist()],
                                None if not include_vectors else np.concatenate(
                                    [p.vectors for p in pages])[order])  # fmt: skip
            if sum(len(p) for p in pages) <= batch_size and all(
                    len(p) < batch_size for p in pages):
                return
            last = ids[order[-1]]
            after = last if isinstance(last, str) else int(last)

    def get(
        self, ids: object, include_vectors: bool = False, *, vectors: Sequence[str] | None = None,
        include_expiry: bool = False,
    ) -> GetResult:  # fmt: skip
        """Looks ids up on their shards; missing ids are left out, the rest keep request order.
        vectors=, include_expiry=: see strata.Collection.get."""
        self._live()
        names = None if vectors is None else check_names(vectors)
        id_arr = _ids_arg(ids)
        _, spans, routed, targets = self._route(id_arr)
        kw: dict[str, Any] = {} if names is None else {"vectors": names}
        if include_expiry:
            kw["include_expiry"] = True
        parts = self._pool.call(
            "run", [("get", routed[spans[s]], include_vectors) for s in targets], targets, **kw)
        where: dict[int, tuple[int, int]] = {}
        for p, part in enumerate(parts):
            for j, found in enumerate(part.ids.tolist()):
                where.setdefault(found, (p, j))
        hits = [where[i] for i in id_arr.tolist() if i in where]
        out_ids = id_array([parts[p].ids[j].item() if parts[p].ids.dtype != object
                            else parts[p].ids[j] for p, j in hits])
        docs = [parts[p].metadata[j] for p, j in hits]
        vectors = None
        if include_vectors:
            vectors = np.empty((len(hits), self._dim), dtype=np.float32)
            for row, (p, j) in enumerate(hits):
                vectors[row] = parts[p].vectors[j]
        expires = None
        if include_expiry:
            expires = np.array([parts[p].expires_at[j] for p, j in hits], dtype=np.float64)
        if names is None:
            return GetResult(out_ids, docs, vectors, None, expires)
        if any(name not in self._schema and name not in self._sparse for name in names):
            self._schema = self._read_schema()
        named, sparse = {}, {}
        for name in names:
            if name in self._sparse:
                values = [parts[p].sparse_vectors[name].value(j) for p, j in hits]
                sparse[name] = sparse_values(name, values, len(hits))
                continue
            dim, multi = field_shape(self._schema, name)
            per_point = [parts[p].named_vectors[name].value(j) for p, j in hits]
            named[name] = field_values(name, per_point, len(hits), dim, multi)
        return GetResult(out_ids, docs, vectors, named, expires, sparse or None)

    def count(self, where: dict[str, Any] | None = None) -> int:
        """How many entries match where, summed over shards."""
        self._live()
        return sum(self._pool.run("count", where))

    def __len__(self) -> int:
        return self.count()

    def check_integrity(self) -> None:
        """Checks every shard; raises strata.IntegrityError naming the first broken one."""
        self._live()
        self._pool.run("check_integrity")

    def info(self) -> dict[str, Any]:
        """{"path", "shards", "len", "shard_info": [each shard's Collection.info()]}."""
        self._live()
        per_shard = self._pool.run("info")
        return {"path": self.path, "shards": self.shards,
                "len": sum(int(i.get("len", 0)) for i in per_shard), "shard_info": per_shard}
