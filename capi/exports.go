package main

// #include "strata.h"
import "C"

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/strata-db/strata/go/flat"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/kernels"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/metric"
)

//export strata_create
func strata_create(kind C.int, dim C.int64_t, metricCode C.int, m C.int64_t, efConstruction C.int64_t,
	seed C.uint64_t, hasSeed C.int, out *C.strata_handle, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_create", errBuf, errLen, func() error {
		if out == nil {
			return invalidf("output handle pointer is NULL")
		}
		var (
			x   engine
			err error
		)
		switch kind {
		case C.STRATA_KIND_HNSW:
			x, err = newHNSW(dim, metricCode, m, efConstruction, seed, hasSeed, C.STRATA_QUANT_NONE, 0, 0)
		case C.STRATA_KIND_FLAT:
			var mtr metric.Metric
			if mtr, err = checkMetric(metricCode); err == nil {
				x, err = flat.New(flat.Config{Dim: int(dim), Metric: mtr})
			}
		default:
			return invalidf("unknown index kind %d (0=hnsw, 1=flat)", kind)
		}
		if err != nil {
			return err
		}
		*out = newHandle(x)
		return nil
	})
}

// checkMetric converts a metric code; the dimension and every other
// parameter are the engine's to check (package limits).
func checkMetric(metricCode C.int) (metric.Metric, error) {
	// Range-check before converting: metric.Metric is a uint8.
	mtr := metric.Metric(metricCode)
	if metricCode < 0 || metricCode > math.MaxUint8 || !mtr.Valid() {
		return 0, invalidf("unknown metric code %d (0=l2, 1=ip, 2=cosine)", metricCode)
	}
	return mtr, nil
}

// newHNSW checks the HNSW creation arguments as the C ABI receives them and
// creates the index. With hasSeed 0 the seed is drawn at random.
// STRATA_QUANT_RABITQ is the engine's float index with Config.RaBitQBits.
func newHNSW(dim C.int64_t, metricCode C.int, m, efConstruction C.int64_t, seed C.uint64_t, hasSeed C.int,
	quantization, rerank, bits C.int) (*hnsw.Index, error) {
	mtr, err := checkMetric(metricCode)
	if err != nil {
		return nil, err
	}
	cfg := hnsw.Config{Dim: int(dim), Metric: mtr, M: int(m), EfConstruction: int(efConstruction),
		Quantization: hnsw.Quantization(quantization), Rerank: rerank != 0}
	switch quantization {
	case C.STRATA_QUANT_NONE, C.STRATA_QUANT_SQ8:
		if bits != 0 {
			return nil, invalidf("bits is a setting of quantization rabitq, got bits %d with quantization %s", bits, cfg.Quantization)
		}
	case C.STRATA_QUANT_RABITQ:
		// rerank 0 is the codes-only index (the engine checks its bits).
		cfg.Quantization, cfg.Rerank, cfg.RaBitQBits = hnsw.QuantNone, false, int(bits)
		cfg.RaBitQCodesOnly = rerank == 0
		if bits == 0 {
			cfg.RaBitQBits = hnsw.DefaultRaBitQBits
			if cfg.RaBitQCodesOnly {
				cfg.RaBitQBits = hnsw.DefaultCodesOnlyBits
			}
		}
	case C.STRATA_QUANT_RABITQ_QG:
		if bits > 1 || rerank == 0 {
			return nil, invalidf("the qg layout re-ranks with the float vectors: it takes bits 0 or 1 and rerank 1, got bits %d, rerank %d", bits, rerank)
		}
		cfg.Quantization, cfg.Rerank, cfg.RaBitQBits, cfg.RaBitQLayout = hnsw.QuantNone, false, 1, hnsw.LayoutQG
	case C.STRATA_QUANT_RABITQ_ROWS:
		if bits > 1 || rerank == 0 {
			return nil, invalidf("the rows layout re-ranks with the float vectors: it takes bits 0 or 1 and rerank 1, got bits %d, rerank %d", bits, rerank)
		}
		cfg.Quantization, cfg.Rerank, cfg.RaBitQBits, cfg.RaBitQLayout = hnsw.QuantNone, false, 1, hnsw.LayoutRows
	default:
		return nil, invalidf("unknown quantization %d (0=none, 1=sq8, 2=rabitq, 3=rabitq qg, 4=rabitq rows)", quantization)
	}
	cfg.Seed = uint64(seed)
	if hasSeed == 0 {
		cfg.Seed = rand.Uint64()
	}
	return hnsw.New(cfg)
}

//export strata_free
func strata_free(h C.strata_handle, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_free", errBuf, errLen, func() error { return freeHandle(h) })
}

//export strata_add
func strata_add(h C.strata_handle, vectors *C.float, n C.int64_t, ids *C.uint64_t, outIDs *C.uint64_t,
	numThreads C.int, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_add", errBuf, errLen, func() error {
		x, err := lookup(h)
		if err != nil {
			return err
		}
		vecs, err := floatRows(vectors, int64(n), x.Dim(), "vectors")
		if err != nil {
			return err
		}
		// The engine checks the batch (batch.CheckAdd) before changing anything.
		return x.Add(vecs, view[uint64](ids, int(n)), view[uint64](outIDs, int(n)), int(numThreads))
	})
}

//export strata_search
func strata_search(h C.strata_handle, queries *C.float, nq C.int64_t, k C.int64_t, ef C.int64_t,
	numThreads C.int, outIDs *C.int64_t, outDists *C.float, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_search", errBuf, errLen, func() error {
		x, err := lookup(h)
		if err != nil {
			return err
		}
		a, err := searchViews(x, queries, nq, k, ef, outIDs, outDists)
		if err != nil {
			return err
		}
		return x.Search(a.queries, a.k, a.ef, int(numThreads), a.ids, a.dists)
	})
}

//export strata_search_one
func strata_search_one(h C.strata_handle, query *C.float, k C.int64_t, ef C.int64_t,
	outIDs *C.int64_t, outDists *C.float, errBuf *C.char, errLen C.size_t) (status C.int) {
	// The single-query latency floor: same checks as strata_search, without
	// the closure of call (written out here so nothing escapes to the heap)
	// and without a thread count (one query always runs on the caller's
	// thread).
	defer func() {
		if r := recover(); r != nil {
			status = C.STRATA_ERR_INTERNAL
			writeString(errBuf, errLen, fmt.Sprintf("strata_search_one: internal error (please report): %v", r))
		}
	}()
	if err := searchOne(h, query, k, ef, outIDs, outDists); err != nil {
		writeString(errBuf, errLen, err.Error())
		return classify(err)
	}
	return C.STRATA_OK
}

func searchOne(h C.strata_handle, query *C.float, k, ef C.int64_t, outIDs *C.int64_t, outDists *C.float) error {
	x, err := lookup(h)
	if err != nil {
		return err
	}
	a, err := searchViews(x, query, 1, k, ef, outIDs, outDists)
	if err != nil {
		return err
	}
	return x.Search(a.queries, a.k, a.ef, 1, a.ids, a.dists)
}

//export strata_len
func strata_len(h C.strata_handle, out *C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_len", errBuf, errLen, func() error {
		return property(h, out, func(x engine) C.int64_t { return C.int64_t(x.Len()) })
	})
}

//export strata_dim
func strata_dim(h C.strata_handle, out *C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_dim", errBuf, errLen, func() error {
		return property(h, out, func(x engine) C.int64_t { return C.int64_t(x.Dim()) })
	})
}

//export strata_metric
func strata_metric(h C.strata_handle, out *C.int, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_metric", errBuf, errLen, func() error {
		return property(h, out, func(x engine) C.int { return C.int(x.Metric()) })
	})
}

//export strata_progress
func strata_progress(h C.strata_handle, out *C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_progress", errBuf, errLen, func() error {
		return property(h, out, func(x engine) C.int64_t { return C.int64_t(x.Progress()) })
	})
}

// searchArgs are a search call's arguments as Go values over the caller's
// memory, valid for the duration of the call.
type searchArgs struct {
	queries []float32
	k, ef   int
	ids     []int64
	dists   []float32
}

// searchViews checks a search call's arguments and views its buffers.
func searchViews(x engine, queries *C.float, nq, k, ef C.int64_t, outIDs *C.int64_t, outDists *C.float) (searchArgs, error) {
	qs, err := floatRows(queries, int64(nq), x.Dim(), "queries")
	if err != nil {
		return searchArgs{}, err
	}
	if err := checkOutputs(nq, k); err != nil {
		return searchArgs{}, err
	}
	total := int(nq) * int(k)
	if total > 0 && (outIDs == nil || outDists == nil) {
		return searchArgs{}, invalidf("output pointer is NULL")
	}
	// Finite queries and output lengths are the engine's check (batch.CheckSearch).
	ids, dists := view[int64](outIDs, total), view[float32](outDists, total)
	return searchArgs{queries: qs, k: int(k), ef: int(ef), ids: ids, dists: dists}, nil
}

// property stores get(engine) in *out.
func property[T any](h C.strata_handle, out *T, get func(engine) T) error {
	if out == nil {
		return invalidf("output pointer is NULL")
	}
	x, err := lookup(h)
	if err != nil {
		return err
	}
	*out = get(x)
	return nil
}

//export strata_check_integrity
func strata_check_integrity(h C.strata_handle, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_check_integrity", errBuf, errLen, func() error {
		x, err := lookup(h)
		if err != nil {
			return err
		}
		if err := x.CheckIntegrity(); err != nil {
			return fmt.Errorf("%w: %w", errCorrupt, err)
		}
		return nil
	})
}

//export strata_kernel_path
func strata_kernel_path(out *C.char, outLen C.size_t, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_kernel_path", errBuf, errLen, func() error { return copyOut(out, outLen, kernelPath()) })
}

//export strata_check_k
func strata_check_k(k C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_check_k", errBuf, errLen, func() error { return checkOutputs(0, k) })
}

// checkOutputs checks k against the engine's limit (package limits, with
// its message) before nq·k sizes a view of the caller's output buffers;
// every other argument of a search is the engine's to check.
func checkOutputs(nq, k C.int64_t) error {
	if err := limits.CheckK(int(k)); err != nil {
		return fmt.Errorf("%w: %w", errInvalid, err)
	}
	if int64(k) > maxFloats/(int64(nq)+1) {
		return invalidf("%d queries × k=%d results exceed %d", nq, k, int64(maxFloats))
	}
	return nil
}

//export strata_version
func strata_version(out *C.char, outLen C.size_t, errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_version", errBuf, errLen, func() error { return copyOut(out, outLen, Version) })
}

// copyOut writes s, NUL-terminated, into the caller's buffer, or fails if it
// does not fit.
func copyOut(out *C.char, outLen C.size_t, s string) error {
	if out == nil || int(outLen) < len(s)+1 {
		return invalidf("output buffer of %d bytes cannot hold %d bytes", outLen, len(s)+1)
	}
	writeString(out, outLen, s)
	return nil
}

// kernelPath names the distance kernels chosen for this CPU at start-up.
func kernelPath() string { return kernels.Path() }
