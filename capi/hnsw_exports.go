package main

// #include "strata.h"
import "C"

import (
	"errors"
	"fmt"

	"github.com/strata-db/strata/go/errkind"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/vfs"
)

var (
	errNotHNSW = errkind.New(errkind.Type, "strata: this operation needs an HNSW index (strata.Index)")
	errDamaged = errkind.New(errkind.Corrupt, "strata: damaged index file")
)

// lookupHNSW returns the HNSW index behind h.
func lookupHNSW(h C.strata_handle) (*hnsw.Index, error) {
	x, err := lookup(h)
	if err != nil {
		return nil, err
	}
	ix, ok := x.(*hnsw.Index)
	if !ok {
		return nil, errNotHNSW
	}
	return ix, nil
}

// idList views n ids at p for the duration of one call.
func idList(p *C.uint64_t, n int64, what string) ([]uint64, error) {
	if n < 0 || n > maxFloats {
		return nil, invalidf("number of %s must be in [0, %d], got %d", what, int64(maxFloats), n)
	}
	if n > 0 && p == nil {
		return nil, invalidf("%s pointer is NULL", what)
	}
	if n == 0 {
		return []uint64{}, nil
	}
	return view[uint64](p, int(n)), nil
}

//export strata_create_hnsw
func strata_create_hnsw(dim C.int64_t, metricCode C.int, m C.int64_t, efConstruction C.int64_t,
	seed C.uint64_t, hasSeed C.int, quantization C.int, rerank C.int, bits C.int,
	out *C.strata_handle, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_create_hnsw", errBuf, errLen, func() error {
		if out == nil {
			return invalidf("output handle pointer is NULL")
		}
		x, err := newHNSW(dim, metricCode, m, efConstruction, seed, hasSeed, quantization, rerank, bits)
		if err != nil {
			return err
		}
		*out = newHandle(x)
		return nil
	})
}

//export strata_info_get
func strata_info_get(h C.strata_handle, out *C.strata_info, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_info_get", errBuf, errLen, func() error {
		if out == nil {
			return invalidf("output pointer is NULL")
		}
		x, err := lookupHNSW(h)
		if err != nil {
			return err
		}
		cfg := x.Config()
		quantization, rerank := C.int(cfg.Quantization), cfg.Rerank
		if cfg.RaBitQBits > 0 {
			quantization, rerank = C.STRATA_QUANT_RABITQ, !cfg.RaBitQCodesOnly
			switch cfg.RaBitQLayout {
			case hnsw.LayoutQG:
				quantization = C.STRATA_QUANT_RABITQ_QG
			case hnsw.LayoutRows:
				quantization = C.STRATA_QUANT_RABITQ_ROWS
			}
		}
		mem := x.Memory()
		*out = C.strata_info{
			dim: C.int64_t(cfg.Dim), metric: C.int(cfg.Metric), m: C.int64_t(cfg.M),
			ef_construction: C.int64_t(cfg.EfConstruction), quantization: quantization,
			rerank: cbool(rerank), trained: cbool(x.Trained()), len: C.int64_t(x.Len()),
			tombstones: C.int64_t(x.Tombstones()), mmapped: cbool(x.Mapped()),
			rabitq_bits: C.int(cfg.RaBitQBits), nodes: C.int64_t(mem.Nodes),
			graph_bytes: C.int64_t(mem.Graph), float_bytes: C.int64_t(mem.Floats), sq8_bytes: C.int64_t(mem.SQ8),
			rabitq_code_bytes: C.int64_t(mem.RaBitQCodes), rabitq_factor_bytes: C.int64_t(mem.RaBitQFactors),
			rabitq_block_bytes: C.int64_t(mem.RaBitQBlocks),
		}
		return nil
	})
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

//export strata_search_filtered
func strata_search_filtered(h C.strata_handle, queries *C.float, nq C.int64_t, k C.int64_t, ef C.int64_t,
	numThreads C.int, allow *C.uint64_t, nAllow C.int64_t, deny *C.uint64_t, nDeny C.int64_t,
	outIDs *C.int64_t, outDists *C.float, stats *C.strata_search_stats, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_search_filtered", errBuf, errLen, func() error {
		x, err := lookupHNSW(h)
		if err != nil {
			return err
		}
		a, err := searchViews(x, queries, nq, k, ef, outIDs, outDists)
		if err != nil {
			return err
		}
		var f *hnsw.Filter
		if nAllow >= 0 || nDeny > 0 {
			f = &hnsw.Filter{}
			if nAllow >= 0 {
				if f.Allow, err = idList(allow, int64(nAllow), "allowed ids"); err != nil {
					return err
				}
			}
			if f.Deny, err = idList(deny, int64(nDeny), "excluded ids"); err != nil {
				return err
			}
		}
		st, err := x.SearchFiltered(a.queries, a.k, a.ef, int(numThreads), f, a.ids, a.dists)
		if err != nil {
			return err
		}
		if stats != nil {
			*stats = C.strata_search_stats{
				distance_computations: C.int64_t(st.DistanceComputations),
				plan:                  C.int(st.Plan), allowed: C.int64_t(st.Allowed),
				ef_search: C.int64_t(st.EfSearch), refinements: C.int64_t(st.Refinements),
			}
		}
		return nil
	})
}

//export strata_remove
func strata_remove(h C.strata_handle, ids *C.uint64_t, n C.int64_t, missingOK C.int, outRemoved *C.int64_t,
	errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_remove", errBuf, errLen, func() error {
		x, err := lookupHNSW(h)
		if err != nil {
			return err
		}
		list, err := idList(ids, int64(n), "ids")
		if err != nil {
			return err
		}
		removed, err := x.Remove(list, missingOK != 0)
		if err != nil {
			return err
		}
		if outRemoved != nil {
			*outRemoved = C.int64_t(removed)
		}
		return nil
	})
}

//export strata_contains
func strata_contains(h C.strata_handle, id C.uint64_t, out *C.int, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_contains", errBuf, errLen, func() error {
		if out == nil {
			return invalidf("output pointer is NULL")
		}
		x, err := lookupHNSW(h)
		if err != nil {
			return err
		}
		*out = cbool(x.Contains(uint64(id)))
		return nil
	})
}

//export strata_get_vectors
func strata_get_vectors(h C.strata_handle, ids *C.uint64_t, n C.int64_t, out *C.float, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_get_vectors", errBuf, errLen, func() error {
		x, err := lookupHNSW(h)
		if err != nil {
			return err
		}
		list, err := idList(ids, int64(n), "ids")
		if err != nil {
			return err
		}
		dst, err := floatRows(out, int64(n), x.Dim(), "output vectors")
		if err != nil {
			return err
		}
		return x.GetVectors(list, dst)
	})
}

//export strata_ids
func strata_ids(h C.strata_handle, out *C.uint64_t, capacity C.int64_t, outN *C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_ids", errBuf, errLen, func() error {
		if outN == nil {
			return invalidf("output count pointer is NULL")
		}
		x, err := lookupHNSW(h)
		if err != nil {
			return err
		}
		dst, err := idList(out, int64(capacity), "output ids")
		if err != nil {
			return err
		}
		all, err := x.IDs()
		if err != nil {
			return err
		}
		copy(dst, all)
		*outN = C.int64_t(len(all))
		return nil
	})
}

//export strata_compact
func strata_compact(h C.strata_handle, numThreads C.int, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_compact", errBuf, errLen, func() error {
		x, err := lookupHNSW(h)
		if err != nil {
			return err
		}
		return x.Compact(int(numThreads))
	})
}

//export strata_train
func strata_train(h C.strata_handle, sample *C.float, n C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_train", errBuf, errLen, func() error {
		x, err := lookupHNSW(h)
		if err != nil {
			return err
		}
		rows, err := floatRows(sample, int64(n), x.Dim(), "sample")
		if err != nil {
			return err
		}
		return x.Train(rows)
	})
}

//export strata_save
func strata_save(h C.strata_handle, path *C.char, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_save", errBuf, errLen, func() error {
		x, err := lookupHNSW(h)
		if err != nil {
			return err
		}
		if path == nil {
			return invalidf("path is NULL")
		}
		return x.Save(vfs.Default, C.GoString(path))
	})
}

//export strata_load
func strata_load(path *C.char, mmapVectors C.int, out *C.strata_handle, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_load", errBuf, errLen, func() error {
		if out == nil || path == nil {
			return invalidf("path or output handle pointer is NULL")
		}
		x, err := hnsw.Load(vfs.Default, C.GoString(path), hnsw.LoadOptions{MmapVectors: mmapVectors != 0})
		if err != nil {
			if errors.Is(err, indexfile.ErrCorrupt) || errors.Is(err, indexfile.ErrVersion) {
				return fmt.Errorf("%w: %w", errDamaged, err)
			}
			return err
		}
		*out = newHandle(x)
		return nil
	})
}
