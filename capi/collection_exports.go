package main

// #include <stdlib.h>
// #include "strata.h"
import "C"

import (
	"encoding/json"
	"fmt"
	"runtime/cgo"
	"unsafe"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/hnsw"
)

// lookupCollection returns the collection behind h; like lookup, a stale
// or forged handle becomes errBadHandle instead of a panic.
func lookupCollection(h C.strata_handle) (c *collection.Collection, err error) {
	if h == 0 {
		return nil, errBadHandle
	}
	defer func() {
		if recover() != nil {
			c, err = nil, fmt.Errorf("%w: %d", errBadHandle, uint64(h))
		}
	}()
	c, ok := cgo.Handle(h).Value().(*collection.Collection)
	if !ok {
		return nil, fmt.Errorf("%w: %d is not a collection", errBadHandle, uint64(h))
	}
	return c, nil
}

// withCollection is call for an export that works on the collection
// behind h.
func withCollection(op string, h C.strata_handle, errBuf *C.char, errLen C.size_t,
	fn func(c *collection.Collection) error) C.int {
	return call(op, errBuf, errLen, func() error {
		c, err := lookupCollection(h)
		if err != nil {
			return err
		}
		return fn(c)
	})
}

// goString copies a NUL-terminated path argument.
func goString(p *C.char, what string) (string, error) {
	if p == nil {
		return "", invalidf("%s is NULL", what)
	}
	return C.GoString(p), nil
}

// bytesArg views n bytes at p for the duration of the call (nil if n == 0).
func bytesArg(p *C.char, n C.size_t, what string) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if p == nil {
		return nil, invalidf("%s pointer is NULL", what)
	}
	if n > 1<<32 {
		return nil, invalidf("%s is %d bytes, more than 4 GiB", what, n)
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)), nil
}

// filterArg parses an optional JSON filter.
func filterArg(p *C.char, n C.size_t) (*meta.Filter, error) {
	raw, err := bytesArg(p, n, "filter")
	if err != nil || raw == nil {
		return nil, err
	}
	return meta.ParseFilter(raw)
}

// setBuffer hands data to the caller in C memory, which the caller frees
// with strata_buffer_free.
func setBuffer(out *C.strata_buffer, data []byte) {
	out.data = (*C.char)(C.CBytes(data))
	out.len = C.size_t(len(data))
}

//export strata_buffer_free
func strata_buffer_free(b *C.strata_buffer) {
	if b != nil && b.data != nil {
		C.free(unsafe.Pointer(b.data))
		b.data, b.len = nil, 0
	}
}

//export strata_col_create
func strata_col_create(path *C.char, dim C.int64_t, metricCode C.int, m C.int64_t, efConstruction C.int64_t,
	quantization C.int, fsync C.int, seed C.uint64_t, out *C.strata_handle, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_col_create", errBuf, errLen, func() error {
		if out == nil {
			return invalidf("output handle pointer is NULL")
		}
		dir, err := goString(path, "path")
		if err != nil {
			return err
		}
		mtr, err := checkMetric(metricCode)
		if err != nil {
			return err
		}
		if quantization != C.STRATA_QUANT_NONE && quantization != C.STRATA_QUANT_SQ8 {
			return invalidf("unknown quantization %d (0=none, 1=sq8)", quantization)
		}
		if fsync < 0 || fsync > 2 {
			return invalidf("unknown fsync policy %d (0=always, 1=batch, 2=never)", fsync)
		}
		c, err := collection.Create(dir, collection.Options{Dim: int(dim), Metric: mtr, M: int(m),
			EfConstruction: int(efConstruction), Quantization: hnsw.Quantization(quantization),
			Fsync: collection.Fsync(fsync), Seed: uint64(seed)}, collection.Tuning{})
		if err != nil {
			return err
		}
		*out = C.strata_handle(cgo.NewHandle(c))
		return nil
	})
}

//export strata_col_open
func strata_col_open(path *C.char, fsync C.int, flags C.int, out *C.strata_handle, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_col_open", errBuf, errLen, func() error {
		if out == nil {
			return invalidf("output handle pointer is NULL")
		}
		dir, err := goString(path, "path")
		if err != nil {
			return err
		}
		if flags&^(C.STRATA_OPEN_REPAIR|C.STRATA_OPEN_VERIFY) != 0 {
			return invalidf("unknown open flags %#x (1=repair, 2=verify before returning)", int(flags))
		}
		tuning := collection.Tuning{Repair: flags&C.STRATA_OPEN_REPAIR != 0, VerifyOnOpen: flags&C.STRATA_OPEN_VERIFY != 0}
		if fsync >= 0 {
			if fsync > 2 {
				return invalidf("unknown fsync policy %d (0=always, 1=batch, 2=never)", fsync)
			}
			tuning.Fsync, tuning.HasFsync = collection.Fsync(fsync), true
		}
		c, err := collection.Open(dir, tuning)
		if err != nil {
			return err
		}
		*out = C.strata_handle(cgo.NewHandle(c))
		return nil
	})
}

//export strata_col_close
func strata_col_close(h C.strata_handle, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_col_close", errBuf, errLen, func() (err error) {
		c, err := lookupCollection(h)
		if err != nil {
			return err
		}
		defer func() {
			if recover() != nil { // lost a race with another close
				err = fmt.Errorf("%w: %d", errBadHandle, uint64(h))
			}
		}()
		cgo.Handle(h).Delete()
		return c.Close()
	})
}

//export strata_col_exists
func strata_col_exists(path *C.char, out *C.int, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_col_exists", errBuf, errLen, func() error {
		dir, err := goString(path, "path")
		if err != nil {
			return err
		}
		if out == nil {
			return invalidf("output pointer is NULL")
		}
		*out = cbool(collection.Exists(nil, dir))
		return nil
	})
}

//export strata_col_drop
func strata_col_drop(path *C.char, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_col_drop", errBuf, errLen, func() error {
		dir, err := goString(path, "path")
		if err != nil {
			return err
		}
		return collection.Drop(nil, dir)
	})
}

// documentsArg parses an optional JSON array of n documents.
func documentsArg(p *C.char, n C.size_t, count int) ([]meta.Document, error) {
	raw, err := bytesArg(p, n, "metadata")
	if err != nil || raw == nil {
		return nil, err
	}
	docs, err := meta.ParseDocuments(raw)
	if err != nil {
		return nil, err
	}
	if len(docs) != count {
		return nil, invalidf("%d metadata documents for %d ids", len(docs), count)
	}
	return docs, nil
}

//export strata_col_upsert
func strata_col_upsert(h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings, vectors *C.float,
	metaJSON *C.char, metaLen C.size_t, errBuf *C.char, errLen C.size_t) C.int {
	return upsert("strata_col_upsert", h, ids, n, strs, vectors, metaJSON, metaLen, nil, nil, 0, errBuf, errLen)
}

//export strata_col_update_metadata
func strata_col_update_metadata(h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings, metaJSON *C.char, metaLen C.size_t,
	outCount *C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_update_metadata", h, errBuf, errLen, func(c *collection.Collection) error {
		idv, err := idsArg(ids, int64(n), strs, "ids")
		if err != nil {
			return err
		}
		docs, err := documentsArg(metaJSON, metaLen, len(idv))
		if err != nil {
			return err
		}
		if docs == nil {
			return invalidf("metadata is required")
		}
		count, err := c.UpdateMetadata(idv, docs)
		if err == nil && outCount != nil {
			*outCount = C.int64_t(count)
		}
		return err
	})
}

//export strata_col_delete
func strata_col_delete(h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings, where *C.char, whereLen C.size_t,
	outCount *C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_delete", h, errBuf, errLen, func(c *collection.Collection) error {
		var count int
		if n < 0 {
			f, err := filterArg(where, whereLen)
			if err != nil {
				return err
			}
			if f == nil {
				return invalidf("delete needs ids or a filter")
			}
			count, err = c.DeleteWhere(f)
			if err != nil {
				return err
			}
		} else {
			idv, err := idsArg(ids, int64(n), strs, "ids")
			if err != nil {
				return err
			}
			if count, err = c.Delete(idv); err != nil {
				return err
			}
		}
		if outCount != nil {
			*outCount = C.int64_t(count)
		}
		return nil
	})
}

// documentsJSON encodes docs as a JSON array, null for missing ones.
func documentsJSON(docs [][]byte) []byte {
	size := 2
	for _, d := range docs {
		size += len(d) + 5
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	for i, d := range docs {
		if i > 0 {
			out = append(out, ',')
		}
		if d == nil {
			out = append(out, "null"...)
		} else {
			out = append(out, d...)
		}
	}
	return append(out, ']')
}

//export strata_col_query
func strata_col_query(h C.strata_handle, queries *C.float, nq C.int64_t, k C.int64_t, ef C.int64_t, numThreads C.int,
	where *C.char, whereLen C.size_t, outIDs *C.int64_t, outIDJSON *C.strata_buffer, outDists *C.float, outMeta *C.strata_buffer,
	stats *C.strata_search_stats, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_query", h, errBuf, errLen, func(c *collection.Collection) error {
		qs, err := floatRows(queries, int64(nq), c.Options().Dim, "queries")
		if err != nil {
			return err
		}
		ids, err := queryOutputs(nq, k, outIDs, outDists)
		if err != nil {
			return err
		}
		f, err := filterArg(where, whereLen)
		if err != nil {
			return err
		}
		st, err := c.Query(qs, int(k), int(ef), f, int(numThreads), ids, view[float32](outDists, len(ids)))
		if err != nil {
			return err
		}
		writeStats(stats, st)
		return writeAnswer(c, ids, outIDs, outIDJSON, outMeta)
	})
}

//export strata_col_get
func strata_col_get(h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings, outFound *C.uint64_t,
	outIDJSON *C.strata_buffer, outN *C.int64_t, outVectors *C.float, outMeta *C.strata_buffer, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_get", h, errBuf, errLen, func(c *collection.Collection) error {
		idv, err := idsArg(ids, int64(n), strs, "ids")
		if err != nil {
			return err
		}
		if outN == nil || outMeta == nil || (len(idv) > 0 && outFound == nil) {
			return invalidf("output pointer is NULL")
		}
		found, docs, vecs, err := c.Get(idv, outVectors != nil)
		if err != nil {
			return err
		}
		if err := uintResults(found, view[uint64](outFound, len(idv)), outIDJSON); err != nil {
			return err
		}
		if outVectors != nil {
			copy(view[float32](outVectors, len(idv)*c.Options().Dim), vecs)
		}
		*outN = C.int64_t(len(found))
		setBuffer(outMeta, documentsJSON(docs))
		return nil
	})
}

//export strata_col_count
func strata_col_count(h C.strata_handle, where *C.char, whereLen C.size_t, out *C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_count", h, errBuf, errLen, func(c *collection.Collection) error {
		if out == nil {
			return invalidf("output pointer is NULL")
		}
		f, err := filterArg(where, whereLen)
		if err != nil {
			return err
		}
		n, err := c.Count(f)
		if err != nil {
			return err
		}
		*out = C.int64_t(n)
		return nil
	})
}

//export strata_col_scan_ids
func strata_col_scan_ids(h C.strata_handle, where *C.char, whereLen C.size_t, after C.uint64_t, hasAfter C.int,
	afterStr *C.char, afterLen C.size_t, limit C.int64_t, out *C.uint64_t, outIDJSON *C.strata_buffer, outN *C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_scan_ids", h, errBuf, errLen, func(c *collection.Collection) error {
		if limit <= 0 { // to the engine 0 means "no limit"; here it sizes out
			return invalidf("limit must be positive, got %d", limit)
		}
		if out == nil || outN == nil {
			return invalidf("output pointer is NULL")
		}
		f, err := filterArg(where, whereLen)
		if err != nil {
			return err
		}
		from := collection.IntID(uint64(after))
		switch hasAfter {
		case 0, 1:
		case 2:
			raw, err := bytesArg(afterStr, afterLen, "after")
			if err != nil {
				return err
			}
			from = collection.StringID(string(raw))
		default:
			return invalidf("has_after must be 0 (none), 1 (integer) or 2 (string), got %d", hasAfter)
		}
		ids, err := c.ScanIDs(f, from, hasAfter != 0, int(limit))
		if err != nil {
			return err
		}
		if err := uintResults(ids, view[uint64](out, int(limit)), outIDJSON); err != nil {
			return err
		}
		*outN = C.int64_t(len(ids))
		return nil
	})
}

//export strata_col_checkpoint
func strata_col_checkpoint(h C.strata_handle, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_checkpoint", h, errBuf, errLen, func(c *collection.Collection) error {
		return c.Checkpoint()
	})
}

//export strata_col_check_integrity
func strata_col_check_integrity(h C.strata_handle, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_check_integrity", h, errBuf, errLen, func(c *collection.Collection) error {
		if err := c.CheckIntegrity(); err != nil {
			return fmt.Errorf("%w: %w", errCorrupt, err)
		}
		return nil
	})
}

//export strata_col_info
func strata_col_info(h C.strata_handle, out *C.strata_buffer, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_info", h, errBuf, errLen, func(c *collection.Collection) error {
		if out == nil {
			return invalidf("output pointer is NULL")
		}
		info := c.Describe()
		info["path"] = c.Dir()
		data, err := json.Marshal(info)
		if err != nil {
			return err
		}
		setBuffer(out, data)
		return nil
	})
}
