package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/metric"
)

// engineData is what the HTTP run sent, as the server read it: vectors
// rounded to the 6 digits they were written with.
type engineData struct {
	dim              int
	vectors, queries []float32 // n·dim and nq·dim
}

// round6 is v as the server reads it back from writeVector's text.
func round6(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, f := range v {
		r, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', 6, 32), 32)
		out[i] = float32(r)
	}
	return out
}

// runEngine builds the same collection in this process (same options,
// vectors and documents, upserted in the same batches) and measures
// collection.Query alone, without HTTP or JSON, from 1 and 2 goroutines:
// the rate the server's queries approach as its own overhead goes to zero.
func runEngine(dir string, data *engineData, batch, ef int, d time.Duration) ([]cell, float64, error) {
	c, err := collection.Create(filepath.Join(dir, "engine"), collection.Options{Dim: data.dim, Metric: metric.L2,
		Seed: 1, Fsync: collection.FsyncBatch}, collection.Tuning{})
	if err != nil {
		return nil, 0, err
	}
	defer c.Close()
	n := len(data.vectors) / data.dim
	start := time.Now()
	for at := 0; at < n; at += batch {
		end := min(at+batch, n)
		ids := make([]uint64, end-at)
		var docs []byte
		docs = append(docs, '[')
		for i := range ids {
			ids[i] = uint64(at + i)
			if i > 0 {
				docs = append(docs, ',')
			}
			docs = fmt.Appendf(docs, `{"bucket":%d}`, (at+i)%100)
		}
		parsed, err := meta.ParseDocuments(append(docs, ']'))
		if err != nil {
			return nil, 0, err
		}
		if err := c.Upsert(collection.IntIDs(ids), data.vectors[at*data.dim:end*data.dim], parsed); err != nil {
			return nil, 0, err
		}
	}
	buildRate := float64(n) / time.Since(start).Seconds()
	filter, err := meta.ParseFilter([]byte(`{"bucket":{"$lt":10}}`))
	if err != nil {
		return nil, 0, err
	}
	var cells []cell
	for _, sc := range []struct {
		name string
		f    *meta.Filter
	}{{"engine-query", nil}, {"engine-filtered-query-10pct", filter}} {
		for _, threads := range []int{1, 2} {
			r, err := engineCell(c, data, sc.f, threads, ef, d)
			if err != nil {
				return nil, 0, err
			}
			r.Scenario = sc.name
			cells = append(cells, r)
		}
	}
	return cells, buildRate, nil
}

func engineCell(c *collection.Collection, data *engineData, f *meta.Filter, threads, ef int, d time.Duration) (cell, error) {
	const k = 10
	nq := len(data.queries) / data.dim
	errs := make([]error, threads)
	cpuStart := selfCPU()
	r := timed(threads, d, func(w int, stop *atomic.Bool, lat *latencies) {
		ids := make([]collection.ID, k)
		dists := make([]float32, k)
		for i := w; !stop.Load(); i += threads {
			q := data.queries[(i%nq)*data.dim : (i%nq+1)*data.dim]
			t := time.Now()
			if _, err := c.Query(q, k, ef, f, 1, ids, dists); err != nil {
				errs[w] = err
				return
			}
			lat.record(time.Since(t))
		}
	})
	for _, err := range errs {
		if err != nil {
			return cell{}, err
		}
	}
	r.LoadgenCPUs = selfCPU() - cpuStart
	if r.Requests > 0 {
		r.LoadgenCPUPerReqUs = r.LoadgenCPUs / float64(r.Requests) * 1e6
	}
	return r, nil
}
