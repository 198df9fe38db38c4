package collection_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/metric"
)

// TestTailBench measures the write path and reopen (issue 24) when
// STRATA_TAILBENCH names a JSON output file; it uses only the public API,
// so the same file runs against older builds for a before/after.
func TestTailBench(t *testing.T) {
	out := os.Getenv("STRATA_TAILBENCH")
	if out == "" {
		t.Skip("set STRATA_TAILBENCH=<file.json> to run")
	}
	const dim, base, tail = 512, 20000, 10000
	rng := rand.New(rand.NewPCG(1, 1))
	vec := func(n int) []float32 {
		v := make([]float32, n*dim)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		return v
	}
	ids := func(from, n int) []collection.ID {
		out := make([]collection.ID, n)
		for i := range out {
			out[i] = collection.IntID(uint64(from + i))
		}
		return out
	}
	res := map[string]any{}
	dir := filepath.Join(t.TempDir(), "c")
	opts := collection.Options{Dim: dim, Metric: metric.L2, Seed: 1, Fsync: collection.FsyncAlways}
	c, err := collection.Create(dir, opts, collection.Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	data := vec(base)
	began, cpu0 := time.Now(), cpuSeconds()
	for at := 0; at < base; at += 1000 {
		if err := c.Upsert(ids(at, 1000), data[at*dim:(at+1000)*dim], nil); err != nil {
			t.Fatal(err)
		}
	}
	res["ingest_vectors_per_s"] = float64(base) / time.Since(began).Seconds()
	// Process CPU time (the builder's graph work included, which runs
	// beside the acks): vectors per CPU second.
	res["ingest_vectors_per_cpu_s"] = float64(base) / (cpuSeconds() - cpu0)
	if err := c.Checkpoint(); err != nil { // waits for the graph
		t.Fatal(err)
	}
	res["ingest_incl_index_vectors_per_s"] = float64(base) / time.Since(began).Seconds()
	single := func(threads, per, from int) (float64, float64) {
		var wg sync.WaitGroup
		lat := make([][]float64, threads)
		rows := make([][]float32, threads)
		for w := range threads {
			rows[w] = vec(per)
		}
		start, cpu0 := time.Now(), cpuSeconds()
		for w := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range per {
					t0 := time.Now()
					if err := c.Upsert(ids(from+w*per+i, 1), rows[w][i*dim:(i+1)*dim], nil); err != nil {
						t.Error(err)
						return
					}
					lat[w] = append(lat[w], float64(time.Since(t0).Microseconds())/1000)
				}
			}()
		}
		wg.Wait()
		rate := float64(threads*per) / time.Since(start).Seconds()
		res[fmt.Sprintf("single_%dthreads_rows_per_cpu_s", threads)] = float64(threads*per) / (cpuSeconds() - cpu0)
		all := slices.Concat(lat...)
		slices.Sort(all)
		return rate, all[len(all)/2]
	}
	r1, p1 := single(1, 1000, 100000)
	r8, p8 := single(8, 500, 200000)
	res["single_1thread_rows_per_s"], res["single_1thread_p50_ms"] = r1, p1
	res["single_8threads_rows_per_s"], res["single_8threads_p50_ms"] = r8, p8
	res["single_8_over_1"] = r8 / r1
	res["load_average"] = loadAverage()
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseForDrop(); err != nil {
		t.Fatal(err)
	}
	// A log tail of 10k single-row records after the snapshot.
	c, err = collection.Open(dir, collection.Tuning{CheckpointBytes: -1, Fsync: collection.FsyncNever, HasFsync: true, TailRows: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	tv := vec(tail)
	for i := range tail {
		if err := c.Upsert(ids(300000+i, 1), tv[i*dim:(i+1)*dim], nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.CloseForDrop(); err != nil {
		t.Fatal(err)
	}
	began = time.Now()
	c, err = collection.Open(dir, collection.Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	res["reopen_seconds"] = time.Since(began).Seconds()
	res["reopen_points"], res["reopen_log_records"] = c.Len(), tail
	qps := func() float64 {
		qs := vec(200)
		outIDs, outD := make([]collection.ID, 10), make([]float32, 10)
		start := time.Now()
		for i := range 200 {
			if _, err := c.Query(qs[i*dim:(i+1)*dim], 10, 0, nil, 1, outIDs, outD); err != nil {
				t.Fatal(err)
			}
		}
		return 200 / time.Since(start).Seconds()
	}
	res["tail_rows_after_open"] = c.Info().TailRows
	res["qps_right_after_open"] = qps()
	res["tail_rows_at_qps"] = c.Info().TailRows
	for c.Info().TailRows > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	res["seconds_until_indexed"] = time.Since(began).Seconds()
	res["qps_indexed"] = qps()
	c.CloseForDrop()
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", b)
}

// cpuSeconds is the process's user + system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// loadAverage is the first line of /proc/loadavg, "" without one.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
