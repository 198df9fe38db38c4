package collection_test

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// writeBytes is this process's write_bytes of /proc/self/io: the bytes it
// caused to be sent to storage (page cache writeback included).
func writeBytes(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "write_bytes: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Skip("no write_bytes in /proc/self/io")
	return 0
}

// procStatusMiB reads a kB field of /proc/self/status (VmRSS, VmHWM) in
// MiB; 0 if absent.
func procStatusMiB(field string) float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

// resetPeakRSS resets VmHWM to the current RSS (writing 5 to
// /proc/self/clear_refs, Linux 4.0 and later); false if it cannot.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0o644) == nil
}

// rssSampler samples VmRSS every 50 ms and keeps what was going on at
// its highest: the Go heap's live objects and goal, the memory the heap
// holds but has returned or not yet returned to the OS, whether a merge
// was building and the segment count. With STRATA_SEGBENCH_HEAPPROF set
// it writes a heap profile there each time the peak grows by 5 %.
type rssSampler struct {
	c    *collection.Collection
	stop chan struct{}
	done sync.WaitGroup
	mu   sync.Mutex
	peak map[string]any
	// mergingPeak is the highest RSS seen while a merge was building.
	mergingPeak, notMergingPeak float64
	// mergingCPU is the process's CPU time over the samples during which
	// a merge was building (writes and queries included).
	mergingCPU float64
	// maxLive is the largest live heap a collection found (the memory
	// the collection and the bench held, without the garbage GOGC lets
	// the heap carry until the next collection).
	maxLive float64
}

func startRSSSampler(c *collection.Collection) *rssSampler {
	s := &rssSampler{c: c, stop: make(chan struct{}), peak: map[string]any{"rss_mib": 0.0}}
	s.done.Add(1)
	go s.run()
	return s
}

func (s *rssSampler) run() {
	defer s.done.Done()
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/goal:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/released:bytes"}, {Name: "/gc/heap/live:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}}
	prof := os.Getenv("STRATA_SEGBENCH_HEAPPROF")
	// STRATA_SEGBENCH_RSSLOG names a file for every sample, one line of
	// space-separated columns named by its first line (MiB unless said):
	// RssAnon and RssFile split the RSS into the heap's and the runtime's
	// pages and the mapped segment files' (the merge's sources).
	var rssLog *os.File
	if name := os.Getenv("STRATA_SEGBENCH_RSSLOG"); name != "" {
		if f, err := os.Create(name); err == nil {
			rssLog = f
			defer f.Close()
			fmt.Fprintln(f, "seconds rss rss_anon rss_file heap_objects heap_live_last_gc heap_goal heap_free_not_released heap_released gc_cycles gc_cpu_seconds merging segments tail_rows")
		}
	}
	began := time.Now()
	lastProf, lastCPU := 0.0, cpuSeconds()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		rss := procStatusMiB("VmRSS")
		merging := s.c.Info().Merging
		cpu := cpuSeconds()
		s.mu.Lock()
		if merging {
			s.mergingCPU += cpu - lastCPU
		}
		lastCPU = cpu
		if merging {
			s.mergingPeak = max(s.mergingPeak, rss)
		} else {
			s.notMergingPeak = max(s.notMergingPeak, rss)
		}
		metrics.Read(samples)
		mib := func(i int) float64 { return float64(samples[i].Value.Uint64()) / (1 << 20) }
		if rssLog != nil {
			fmt.Fprintf(rssLog, "%.2f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %d %.2f %v %v %v\n", time.Since(began).Seconds(), rss,
				procStatusMiB("RssAnon"), procStatusMiB("RssFile"), mib(0), mib(5), mib(1), mib(3), mib(4),
				samples[6].Value.Uint64(), samples[7].Value.Float64(), merging, s.c.Describe()["segments"], s.c.Info().TailRows)
		}
		s.maxLive = max(s.maxLive, mib(5))
		if rss > s.peak["rss_mib"].(float64) {
			s.peak = map[string]any{"rss_mib": rss, "heap_objects_mib": mib(0), "heap_goal_mib": mib(1),
				"heap_unused_mib": mib(2), "heap_free_not_released_mib": mib(3), "heap_released_mib": mib(4), "heap_live_at_last_gc_mib": mib(5),
				"merging": merging, "segments": s.c.Describe()["segments"],
				"rss_anon_mib": procStatusMiB("RssAnon"), "rss_file_mib": procStatusMiB("RssFile")}
		}
		s.mu.Unlock()
		if prof != "" && rss > lastProf*1.05 {
			lastProf = rss
			if f, err := os.Create(prof); err == nil {
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
	}
}

// result stops the sampler and returns what it saw at the peak.
func (s *rssSampler) result() map[string]any {
	close(s.stop)
	s.done.Wait()
	s.peak["max_rss_while_merging_mib"] = s.mergingPeak
	s.peak["max_rss_not_merging_mib"] = s.notMergingPeak
	s.peak["cpu_seconds_while_merging"] = s.mergingCPU
	s.peak["max_heap_live_mib"] = s.maxLive
	return s.peak
}

// waitSteady waits until no merge builds and the segment count stayed
// the same for 3 s (at most limit), and returns how long it waited.
func waitSteady(c *collection.Collection, limit time.Duration) time.Duration {
	for c.Info().TailRows > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	from := time.Now()
	segments := func() any { return c.Describe()["segments"] }
	for same, last := 0, segments(); last != nil && same < 6 && time.Since(from) < limit; {
		time.Sleep(500 * time.Millisecond)
		if now := segments(); now == last && c.Describe()["merging"] != true {
			same++
		} else {
			same, last = 0, now
		}
	}
	return time.Since(from)
}

// queryWhileIngesting measures single queries (k 10, default ef) on a
// collection of 20,000 x 512 clustered synthetic points while another
// goroutine upserts new points in batches of 100 as fast as it can
// (fsync always): latency percentiles of 2,000 queries, and the rows the
// writer got in meanwhile.
func queryWhileIngesting(t *testing.T) map[string]float64 {
	const dim, n, batch = 512, 20000, 100
	rng := rand.New(rand.NewPCG(5, 5))
	blobs := synth.NewBlobs(rng, 100, dim, 0.25)
	vec := blobs.DrawWith
	ids := func(from, m int) []collection.ID {
		out := make([]collection.ID, m)
		for i := range out {
			out[i] = collection.IntID(uint64(from + i))
		}
		return out
	}
	c, err := collection.Create(filepath.Join(t.TempDir(), "ingest"), collection.Options{Dim: dim, Metric: metric.L2, Seed: 1}, collection.Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseForDrop()
	data := vec(rng, n)
	for at := 0; at < n; at += 1000 {
		if err := c.Upsert(ids(at, 1000), data[at*dim:(at+1000)*dim], nil); err != nil {
			t.Fatal(err)
		}
	}
	for c.Info().TailRows > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	stop := make(chan struct{})
	var written atomic.Int64
	done := make(chan error, 1)
	go func() {
		wrng := rand.New(rand.NewPCG(6, 6))
		rows := vec(wrng, 10*batch)
		for at := n; ; at += batch {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			r := (at / batch) % 10
			if err := c.Upsert(ids(at, batch), rows[r*batch*dim:(r+1)*batch*dim], nil); err != nil {
				done <- err
				return
			}
			written.Add(batch)
		}
	}()
	qs := vec(rng, 200)
	outIDs, outD := make([]collection.ID, 10), make([]float32, 10)
	lat := make([]float64, 0, 2000)
	began := time.Now()
	for i := range 2000 {
		q := qs[(i%200)*dim : (i%200+1)*dim]
		t0 := time.Now()
		if _, err := c.Query(q, 10, 0, nil, 1, outIDs, outD); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, float64(time.Since(t0).Nanoseconds())/1e6)
	}
	elapsed := time.Since(began).Seconds()
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	slices.Sort(lat)
	return map[string]float64{"points_at_start": n, "dim": dim, "queries": float64(len(lat)),
		"p50_ms": lat[len(lat)/2], "p99_ms": lat[len(lat)*99/100], "max_ms": lat[len(lat)-1],
		"rows_ingested_meanwhile": float64(written.Load()), "ingest_rows_per_s": float64(written.Load()) / elapsed,
		"tail_rows_at_end": float64(c.Info().TailRows)}
}

// TestSegmentBenchQueryWhileIngesting runs queryWhileIngesting alone
// (TestSegmentBench's phase, minutes shorter) when
// STRATA_SEGBENCH_INGESTQ names a JSON output file: the issue's "query
// p99 while another thread ingests flat out" at 20k x 512.
func TestSegmentBenchQueryWhileIngesting(t *testing.T) {
	out := os.Getenv("STRATA_SEGBENCH_INGESTQ")
	if out == "" {
		t.Skip("set STRATA_SEGBENCH_INGESTQ=<file.json> to run")
	}
	res := map[string]any{"load_at_start": loadAverage()}
	res["query_while_ingesting"] = queryWhileIngesting(t)
	res["load_at_end"] = loadAverage()
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", b)
}

// TestSegmentBench measures what segments change (issue 24, step 2) when
// STRATA_SEGBENCH names a JSON output file: bytes written per checkpoint
// after small changes, reopen with a 10k-record log tail, query QPS at
// recall@10 0.95 against one hnsw.Index over the same vectors, single-row
// upsert p50 and the segment count over an ingest. It uses only the public
// API (segments read from Describe, absent before), so the same file runs
// against main for a before/after. STRATA_SEGBENCH_N sets the size
// (default 100,000 x 128).
func TestSegmentBench(t *testing.T) {
	out := os.Getenv("STRATA_SEGBENCH")
	if out == "" {
		t.Skip("set STRATA_SEGBENCH=<file.json> to run")
	}
	n := 100000
	if s := os.Getenv("STRATA_SEGBENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	const dim, k, tailRecords = 128, 10, 10000
	rng := rand.New(rand.NewPCG(1, 1))
	// Clustered synthetic data: 100 gaussian blobs.
	vec := synth.NewBlobs(rng, 100, dim, 0.25).Draw
	ids := func(from, m int) []collection.ID {
		out := make([]collection.ID, m)
		for i := range out {
			out[i] = collection.IntID(uint64(from + i))
		}
		return out
	}
	segments := func(c *collection.Collection) any { return c.Describe()["segments"] }
	res := map[string]any{"n": n, "dim": dim}
	// The results so far are written after each phase, so a run stopped
	// by a timeout leaves what it measured.
	save := func() {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "c")
	opts := collection.Options{Dim: dim, Metric: metric.L2, Seed: 1, Fsync: collection.FsyncAlways}
	c, err := collection.Create(dir, opts, collection.Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	data := vec(n)
	// Ingest in batches of 1000 with a checkpoint every 10% (as the
	// automatic ones every 64 MiB of log would at 1M x 128).
	var segCounts []any
	var ckptBytes []int64 // each checkpoint's write_bytes, after n/10 rows
	var ckptSeconds []float64
	res["load_at_start"] = loadAverage()
	w0 := writeBytes(t)
	began, cpu0 := time.Now(), cpuSeconds()
	for at := 0; at < n; at += 1000 {
		if err := c.Upsert(ids(at, 1000), data[at*dim:(at+1000)*dim], nil); err != nil {
			t.Fatal(err)
		}
		if (at+1000)%(n/10) == 0 {
			before, t0 := writeBytes(t), time.Now()
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			ckptSeconds = append(ckptSeconds, time.Since(t0).Seconds())
			ckptBytes = append(ckptBytes, writeBytes(t)-before)
			segCounts = append(segCounts, segments(c))
		}
	}
	res["ingest_incl_checkpoints_seconds"] = time.Since(began).Seconds()
	res["ingest_cpu_seconds"] = cpuSeconds() - cpu0
	res["ingest_rows_per_s"] = float64(n) / time.Since(began).Seconds()
	res["ingest_cpu_us_per_row"] = (cpuSeconds() - cpu0) / float64(n) * 1e6
	res["ingest_checkpoint_seconds"] = ckptSeconds
	data = nil // the collection holds the vectors now: keep them out of the RSS below
	res["ingest_write_bytes"] = writeBytes(t) - w0
	res["ingest_write_over_raw"] = float64(writeBytes(t)-w0) / float64(n*dim*4)
	res["segments_over_ingest"] = segCounts
	res["ingest_checkpoint_bytes"] = ckptBytes
	res["ingest_upserted_bytes_per_checkpoint"] = n / 10 * dim * 4
	res["ingest_peak_rss_mib"] = procStatusMiB("VmHWM")
	res["ingest_vacuums"] = c.Info().Vacuums
	save()

	// Bytes per checkpoint after a small change: 100 upserts (50 new, 50
	// overwrites) and 10 deletions, then a checkpoint, five times.
	var perCheckpoint, perCheckpointSeconds []float64
	for round := range 5 {
		newIDs := ids(n+round*50, 50)
		old := make([]collection.ID, 50)
		for i := range old {
			old[i] = collection.IntID(uint64(rng.IntN(n)))
		}
		slices.SortFunc(old, func(a, b collection.ID) int { return cmp.Compare(a.Int(), b.Int()) })
		old = slices.Compact(old)
		if err := c.Upsert(append(newIDs, old...), vec(50+len(old)), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Delete(ids(round*10, 10)); err != nil {
			t.Fatal(err)
		}
		before, t0 := writeBytes(t), time.Now()
		if err := c.Checkpoint(); err != nil {
			t.Fatal(err)
		}
		perCheckpointSeconds = append(perCheckpointSeconds, time.Since(t0).Seconds())
		perCheckpoint = append(perCheckpoint, float64(writeBytes(t)-before))
	}
	slices.Sort(perCheckpoint)
	slices.Sort(perCheckpointSeconds)
	res["checkpoint_seconds_after_small_change_median"] = perCheckpointSeconds[2]
	res["small_change_upserted_bytes"] = 100 * dim * 4
	res["checkpoint_bytes_after_small_change"] = perCheckpoint
	res["checkpoint_bytes_median"] = perCheckpoint[2]
	res["segments_after_small_changes"] = segments(c)
	save()

	// Single-row upsert p50.
	lat := make([]float64, 0, 1000)
	rows := vec(1000)
	for i := range 1000 {
		t0 := time.Now()
		if err := c.Upsert(ids(2*n+i, 1), rows[i*dim:(i+1)*dim], nil); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
	}
	slices.Sort(lat)
	res["single_upsert_p50_ms"] = lat[len(lat)/2]
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}

	// Queries at steady state against one hnsw.Index of the same points.
	// Steady state: the merges the checkpoints (and then idleness)
	// started are done: no merge building and the count unchanged for
	// 3 s, at most 20 minutes (main has no count; builds before the
	// idle merges have no "merging").
	res["steady_state_wait_seconds"] = waitSteady(c, 20*time.Minute).Seconds()
	res["segments_at_steady"] = segments(c)
	// Everything written from empty to here: the ingest, the small
	// changes and the merges down to the steady state (each persisted
	// when it lands).
	res["write_bytes_to_steady"] = writeBytes(t) - w0
	res["write_to_steady_over_raw"] = float64(writeBytes(t)-w0) / float64(n*dim*4)
	res["vacuums_to_steady"] = c.Info().Vacuums
	debug.FreeOSMemory()
	res["rss_at_steady_mib"] = procStatusMiB("VmRSS")
	res["load_at_steady"] = loadAverage()
	save()
	// Reopen with a log tail of 10k single-row records after the snapshot
	// (before the queries, which then run on the reopened collection once
	// it settles: a reopen is the bench's target, the queries the most
	// expensive phase at 1M).
	if err := c.CloseForDrop(); err != nil {
		t.Fatal(err)
	}
	c, err = collection.Open(dir, collection.Tuning{CheckpointBytes: -1, Fsync: collection.FsyncNever, HasFsync: true, TailRows: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	tv := vec(tailRecords)
	for i := range tailRecords {
		if err := c.Upsert(ids(3*n+i, 1), tv[i*dim:(i+1)*dim], nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.CloseForDrop(); err != nil {
		t.Fatal(err)
	}
	began, cpu := time.Now(), cpuSeconds()
	c, err = collection.Open(dir, collection.Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	res["reopen_10k_tail_seconds"] = time.Since(began).Seconds()
	res["reopen_10k_tail_cpu_seconds"] = cpuSeconds() - cpu
	res["reopen_points"] = c.Len()
	// The process's RSS once the garbage is returned: the collection and
	// the bench's small state.
	debug.FreeOSMemory()
	res["rss_after_reopen_mib"] = procStatusMiB("VmRSS")
	save()
	res["steady_after_reopen_wait_seconds"] = waitSteady(c, 20*time.Minute).Seconds()
	res["segments_at_query"] = segments(c)
	var keys []uint64
	var all []float32
	for _, r := range [][2]int{{0, n + 250}, {2 * n, 2*n + 1000}, {3 * n, 3*n + tailRecords}} {
		for at := r[0]; at < r[1]; at += 1000 {
			found, _, vs, err := c.Get(ids(at, min(1000, r[1]-at)), true)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range found {
				keys = append(keys, id.Int())
			}
			all = append(all, vs...)
		}
	}
	ref, err := hnsw.New(hnsw.Config{Dim: dim, Metric: metric.L2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Add(all, keys, nil, 0); err != nil {
		t.Fatal(err)
	}
	const nq = 200
	qs := vec(nq)
	truth := make([][]uint64, nq)
	type hit struct {
		key uint64
		d   float32
	}
	for q := range nq {
		hits := make([]hit, len(keys))
		for i, key := range keys {
			hits[i] = hit{key, metric.L2.Distance(qs[q*dim:(q+1)*dim], all[i*dim:(i+1)*dim])}
		}
		slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(a.d, b.d) })
		for _, h := range hits[:k] {
			truth[q] = append(truth[q], h.key)
		}
	}
	// recallAt is the recall@k of one pass over the queries; qpsAt runs
	// passes for at least 300 ms (the machine is shared: short runs are
	// noise).
	recallAt := func(search func(q []float32, ef int, out []int64) error, ef int) float64 {
		out := make([]int64, k)
		hits := 0
		for q := range nq {
			if err := search(qs[q*dim:(q+1)*dim], ef, out); err != nil {
				t.Fatal(err)
			}
			for _, id := range out {
				if slices.Contains(truth[q], uint64(id)) {
					hits++
				}
			}
		}
		return float64(hits) / float64(nq*k)
	}
	// qpsAt also returns the CPU time per query in microseconds (this
	// process's, steadier than wall time on the shared machine).
	qpsAt := func(search func(q []float32, ef int, out []int64) error, ef int) (float64, float64) {
		out := make([]int64, k)
		done := 0
		start, cpu := time.Now(), cpuSeconds()
		for time.Since(start) < 300*time.Millisecond {
			for q := range nq {
				if err := search(qs[q*dim:(q+1)*dim], ef, out); err != nil {
					t.Fatal(err)
				}
			}
			done += nq
		}
		return float64(done) / time.Since(start).Seconds(), (cpuSeconds() - cpu) / float64(done) * 1e6
	}
	outIDs, outD := make([]collection.ID, k), make([]float32, k)
	colSearch := func(q []float32, ef int, out []int64) error {
		if _, err := c.Query(q, k, ef, nil, 1, outIDs, outD); err != nil {
			return err
		}
		for i, id := range outIDs {
			out[i] = int64(id.Int())
		}
		return nil
	}
	refD := make([]float32, k)
	refSearch := func(q []float32, ef int, out []int64) error { return ref.Search(q, k, ef, 1, out, refD) }
	efAt95 := func(search func([]float32, int, []int64) error) (int, float64) {
		for _, ef := range []int{10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512} {
			if r := recallAt(search, ef); r >= 0.95 || ef == 512 {
				return ef, r
			}
		}
		return 0, 0
	}
	// Filtered: among a random tenth of the points (QueryAmong, the
	// planner per segment), against the exact top k of that tenth.
	var among []collection.ID
	amongKeys := map[uint64]bool{}
	for _, key := range keys {
		if rng.IntN(10) == 0 {
			among = append(among, collection.IntID(key))
			amongKeys[key] = true
		}
	}
	unfilteredTruth := truth
	filteredTruth := make([][]uint64, nq)
	for q := range nq {
		hits := make([]hit, 0, len(among))
		for i, key := range keys {
			if amongKeys[key] {
				hits = append(hits, hit{key, metric.L2.Distance(qs[q*dim:(q+1)*dim], all[i*dim:(i+1)*dim])})
			}
		}
		slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(a.d, b.d) })
		for _, h := range hits[:k] {
			filteredTruth[q] = append(filteredTruth[q], h.key)
		}
	}
	filteredSearch := func(q []float32, ef int, out []int64) error {
		if _, err := c.QueryAmong(q, k, ef, nil, among, 1, outIDs, outD); err != nil {
			return err
		}
		for i, id := range outIDs {
			out[i] = int64(id.Int())
		}
		return nil
	}
	colEf, colRecall := efAt95(colSearch)
	oneEf, oneRecall := efAt95(refSearch)
	truth = filteredTruth
	filteredRecall := recallAt(filteredSearch, colEf)
	truth = unfilteredTruth
	// Alternate the three, five times each, and take medians.
	var colQPS, oneQPS, filteredQPS, colCPU, oneCPU, filteredCPU []float64
	for range 5 {
		qps, cpu := qpsAt(colSearch, colEf)
		colQPS, colCPU = append(colQPS, qps), append(colCPU, cpu)
		qps, cpu = qpsAt(refSearch, oneEf)
		oneQPS, oneCPU = append(oneQPS, qps), append(oneCPU, cpu)
		qps, cpu = qpsAt(filteredSearch, colEf)
		filteredQPS, filteredCPU = append(filteredQPS, qps), append(filteredCPU, cpu)
	}
	for _, v := range [][]float64{colQPS, oneQPS, filteredQPS, colCPU, oneCPU, filteredCPU} {
		slices.Sort(v)
	}
	res["query_collection"] = map[string]float64{"ef": float64(colEf), "recall": colRecall, "qps_median": colQPS[2], "cpu_us_per_query_median": colCPU[2]}
	res["query_one_index"] = map[string]float64{"ef": float64(oneEf), "recall": oneRecall, "qps_median": oneQPS[2], "cpu_us_per_query_median": oneCPU[2]}
	res["query_filtered_10pct"] = map[string]float64{"ef": float64(colEf), "recall": filteredRecall, "qps_median": filteredQPS[2],
		"cpu_us_per_query_median": filteredCPU[2], "allowed": float64(len(among))}
	res["qps_ratio_at_95"] = colQPS[2] / oneQPS[2]
	res["cpu_ratio_at_95"] = oneCPU[2] / colCPU[2]
	res["filtered_over_unfiltered_qps"] = filteredQPS[2] / colQPS[2]
	res["filtered_over_unfiltered_cpu"] = colCPU[2] / filteredCPU[2]
	save()
	ref.Close()
	ref, all = nil, nil
	if err := c.CloseForDrop(); err != nil {
		t.Fatal(err)
	}
	res["overwrite_merge"] = overwriteMerge(t, dir, n, vec, ids)
	save()
	res["query_while_ingesting"] = queryWhileIngesting(t)
	res["load_at_end"] = loadAverage()
	save()
	b, _ := json.MarshalIndent(res, "", "  ")
	t.Logf("%s", b)
}

// overwriteMerge opens the bench's collection with the default tuning
// (automatic checkpoints, merges), lets it settle, and overwrites 30 % of
// its n points in batches of 1,000 while a goroutine queries (k 10,
// default ef) one query at a time; then waits for the merges to settle.
// It reports the steady RSS before, the peak RSS (VmHWM, reset at the
// start) and the query latencies over the overwrites and merges.
func overwriteMerge(t *testing.T, dir string, n int, vec func(int) []float32,
	ids func(int, int) []collection.ID) map[string]any {
	const dim = 128
	c, err := collection.Open(dir, collection.Tuning{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseForDrop()
	res := map[string]any{}
	res["settle_seconds"] = waitSteady(c, 20*time.Minute).Seconds()
	res["segments_before"] = c.Describe()["segments"]
	qs := vec(200)
	debug.FreeOSMemory()
	steady := procStatusMiB("VmRSS")
	res["steady_rss_mib"] = steady
	if !resetPeakRSS() {
		res["peak_rss_note"] = "clear_refs unavailable: VmHWM since process start"
	}
	stop := make(chan struct{})
	lats := make(chan []float64, 1)
	go func() {
		outIDs, outD := make([]collection.ID, 10), make([]float32, 10)
		var lat []float64
		for i := 0; ; i++ {
			select {
			case <-stop:
				lats <- lat
				return
			default:
			}
			t0 := time.Now()
			if _, err := c.Query(qs[(i%200)*dim:(i%200+1)*dim], 10, 0, nil, 1, outIDs, outD); err != nil {
				lats <- nil
				return
			}
			lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
		}
	}()
	sampler := startRSSSampler(c)
	// STRATA_SEGBENCH_ALLOCPROF=<prefix>: allocation profiles at the
	// phase's start and end (<prefix>.start, <prefix>.end), for
	// go tool pprof -sample_index=alloc_space -base <prefix>.start <prefix>.end
	// (run with -test.memprofilerate to sample finer than 512 KiB).
	allocProf := func(suffix string) {
		if p := os.Getenv("STRATA_SEGBENCH_ALLOCPROF"); p != "" {
			if f, err := os.Create(p + suffix); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}
	}
	allocProf(".start")
	defer allocProf(".end")
	// With STRATA_SEGBENCH_HEAPPROF, also the live heap once the merges
	// have settled (<name>.end, after a collection): what the collection
	// still holds.
	defer func() {
		if p := os.Getenv("STRATA_SEGBENCH_HEAPPROF"); p != "" {
			runtime.GC()
			if f, err := os.Create(p + ".end"); err == nil {
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
	}()
	w0, cpu0 := writeBytes(t), cpuSeconds()
	gc0 := gcWork()
	began := time.Now()
	rng := rand.New(rand.NewPCG(9, 9))
	over := n * 3 / 10
	for done := 0; done < over; done += 1000 {
		batch := make([]collection.ID, 0, 1000)
		seen := map[uint64]bool{}
		for len(batch) < 1000 {
			if k := uint64(rng.IntN(n)); !seen[k] {
				seen[k] = true
				batch = append(batch, collection.IntID(k))
			}
		}
		if err := c.Upsert(batch, vec(len(batch)), nil); err != nil {
			t.Fatal(err)
		}
	}
	res["overwrite_seconds"] = time.Since(began).Seconds()
	res["merge_settle_seconds"] = waitSteady(c, 30*time.Minute).Seconds()
	close(stop)
	lat := <-lats
	res["write_bytes"] = writeBytes(t) - w0
	res["write_over_overwritten_raw"] = float64(writeBytes(t)-w0) / float64(over*dim*4)
	res["cpu_seconds"] = cpuSeconds() - cpu0
	res["cpu_us_per_overwritten_row"] = (cpuSeconds() - cpu0) / float64(over) * 1e6
	gc1 := gcWork()
	res["gc_cycles"], res["gc_cpu_seconds"] = gc1.cycles-gc0.cycles, gc1.cpuSeconds-gc0.cpuSeconds
	res["at_peak_rss"] = sampler.result()
	res["merge_seconds"] = c.Info().VacuumSeconds
	peak := procStatusMiB("VmHWM")
	res["peak_rss_mib"] = peak
	if steady > 0 {
		res["peak_over_steady_rss"] = peak / steady
	}
	res["segments_after"] = c.Describe()["segments"]
	res["tombstones_after"] = c.Info().Tombstones
	res["vacuums"] = c.Info().Vacuums
	if len(lat) > 0 {
		slices.Sort(lat)
		res["queries"] = len(lat)
		res["query_p50_ms"] = lat[len(lat)/2]
		res["query_p99_ms"] = lat[len(lat)*99/100]
		res["query_max_ms"] = lat[len(lat)-1]
	}
	return res
}

// gcCounters is the Go collector's work so far: cycles and the CPU time
// of its mark and sweep (runtime/metrics, an estimate the runtime keeps).
type gcCounters struct {
	cycles     uint64
	cpuSeconds float64
}

func gcWork() gcCounters {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return gcCounters{cycles: s[0].Value.Uint64(), cpuSeconds: s[1].Value.Float64()}
}

// TestSegmentBenchOverwrite runs TestSegmentBench's 30 % overwrite phase
// alone (STRATA_SEGBENCH_OVERWRITE names the JSON output,
// STRATA_SEGBENCH_N the size, default 100,000 x 128): the collection is
// built as TestSegmentBench builds it (batches of 1,000, a checkpoint
// every 10 %) but without fsync, and left to settle first. It is the
// merge's memory measurement, without the hour of phases before it at 1M.
func TestSegmentBenchOverwrite(t *testing.T) {
	out := os.Getenv("STRATA_SEGBENCH_OVERWRITE")
	if out == "" {
		t.Skip("set STRATA_SEGBENCH_OVERWRITE=<file.json> to run")
	}
	n := 100000
	if s := os.Getenv("STRATA_SEGBENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	const dim = 128
	rng := rand.New(rand.NewPCG(1, 1))
	vec := synth.NewBlobs(rng, 100, dim, 0.25).Draw
	ids := func(from, m int) []collection.ID {
		out := make([]collection.ID, m)
		for i := range out {
			out[i] = collection.IntID(uint64(from + i))
		}
		return out
	}
	dir := filepath.Join(t.TempDir(), "c")
	c, err := collection.Create(dir, collection.Options{Dim: dim, Metric: metric.L2, Seed: 1, Fsync: collection.FsyncNever},
		collection.Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	res := map[string]any{"n": n, "dim": dim, "load_at_start": loadAverage()}
	began, cpu := time.Now(), cpuSeconds()
	for at := 0; at < n; at += 1000 {
		if err := c.Upsert(ids(at, 1000), vec(1000), nil); err != nil {
			t.Fatal(err)
		}
		if (at+1000)%(n/10) == 0 {
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
	}
	res["build_seconds"], res["build_cpu_seconds"] = time.Since(began).Seconds(), cpuSeconds()-cpu
	res["build_settle_seconds"] = waitSteady(c, 30*time.Minute).Seconds()
	res["build_vacuums"] = c.Info().Vacuums
	if err := c.CloseForDrop(); err != nil {
		t.Fatal(err)
	}
	res["overwrite_merge"] = overwriteMerge(t, dir, n, vec, ids)
	res["load_at_end"] = loadAverage()
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", b)
}

// TestSegmentBenchReopen measures a reopen with a 10k-record log tail of
// an existing collection of 128-d points (STRATA_SEGBENCH_REOPEN names a
// copy of one, e.g. TestSegmentBench's at 1M, which it changes) and
// writes JSON to STRATA_SEGBENCH_REOPEN_OUT: the same measurement as
// TestSegmentBench's reopen phase, for a collection whose run is too long
// to reach it.
func TestSegmentBenchReopen(t *testing.T) {
	dir, out := os.Getenv("STRATA_SEGBENCH_REOPEN"), os.Getenv("STRATA_SEGBENCH_REOPEN_OUT")
	if dir == "" || out == "" {
		t.Skip("set STRATA_SEGBENCH_REOPEN=<collection copy> and STRATA_SEGBENCH_REOPEN_OUT=<file.json> to run")
	}
	res := map[string]any{}
	if spec := os.Getenv("STRATA_SEGBENCH_REOPEN_BUILD"); spec != "" {
		if _, err := os.Stat(dir); err != nil {
			buildReopenCollection(t, dir, spec)
			t.Skip("built " + dir + "; copy it and run again to measure")
		}
	}
	// STRATA_SEGBENCH_REOPEN_FRESH=1: the collection's log already holds
	// the tail (a previous run's); only the timed reopen runs, the first
	// thing this process does (a restart, without the heap the first open
	// and the writes leave behind).
	fresh := os.Getenv("STRATA_SEGBENCH_REOPEN_FRESH") == "1"
	res["fresh_process"] = fresh
	if !fresh {
		writeReopenTail(t, dir, res)
	}
	// STRATA_SEGBENCH_REOPEN_PROFILE names a CPU profile of the reopen
	// alone.
	if p := os.Getenv("STRATA_SEGBENCH_REOPEN_PROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
	}
	// STRATA_SEGBENCH_REOPEN_VERIFY=open checks every byte before Open
	// returns (Tuning.VerifyOnOpen), as before issue 24's lazy CRCs.
	verifyOnOpen := os.Getenv("STRATA_SEGBENCH_REOPEN_VERIFY") == "open"
	res["verify_on_open"] = verifyOnOpen
	began, cpu := time.Now(), cpuSeconds()
	c, err := collection.Open(dir, collection.Tuning{CheckpointBytes: -1, VerifyOnOpen: verifyOnOpen})
	pprof.StopCPUProfile()
	if err != nil {
		t.Fatal(err)
	}
	res["reopen_10k_tail_seconds"] = time.Since(began).Seconds()
	res["reopen_10k_tail_cpu_seconds"] = cpuSeconds() - cpu
	res["reopen_points"] = c.Len()
	res["tail_rows_after_reopen"] = c.Info().TailRows
	res["reopen_segments"] = c.Describe()["segments"]
	res["rss_at_reopen_mib"] = procStatusMiB("VmRSS") // before the verifier has read much
	// Time to verified: the background CRC check (verify.go) is done.
	if err := c.WaitVerified(); err != nil {
		t.Fatal(err)
	}
	res["verified_seconds"] = time.Since(began).Seconds()
	res["verified_cpu_seconds"] = cpuSeconds() - cpu
	debug.FreeOSMemory()
	res["rss_after_reopen_mib"] = procStatusMiB("VmRSS")
	res["rss_file_after_reopen_mib"] = procStatusMiB("RssFile")
	c.CloseForDrop()
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", b)
}

// buildReopenCollection makes the collection TestSegmentBenchReopen
// reopens when STRATA_SEGBENCH_REOPEN_BUILD is
// "<n>x<dim>[x<segments>[x<ef_construction>]]": n clustered synthetic
// points (100 blobs, spread 0.25, L2) of dim, upserted in batches of
// 1,000 with a checkpoint after each n/segments (default 1: one segment),
// graphs built at ef_construction (default 200; a lower one builds a
// 1M collection in a fraction of the time on a loaded machine, and a
// reopen reads files of the same shape), then left to its idle merges (at most 20
// minutes) and closed. The reopen changes the collection it measures, so
// each measurement runs on a fresh copy of the one built.
func buildReopenCollection(t *testing.T, dir, spec string) {
	parts := strings.Split(spec, "x")
	n, _ := strconv.Atoi(parts[0])
	dim, _ := strconv.Atoi(parts[1])
	segs := 1
	if len(parts) > 2 {
		segs, _ = strconv.Atoi(parts[2])
	}
	efc := 200
	if len(parts) > 3 {
		efc, _ = strconv.Atoi(parts[3])
	}
	if n <= 0 || dim <= 0 || segs <= 0 || efc <= 0 || n%(1000*segs) != 0 {
		t.Fatalf("STRATA_SEGBENCH_REOPEN_BUILD %q: want <n>x<dim>[x<segments>[x<ef_construction>]], n a multiple of 1000*segments", spec)
	}
	tuning := collection.Tuning{CheckpointBytes: -1, Fsync: collection.FsyncNever, HasFsync: true}
	if segs > 1 {
		tuning.VacuumRatio = -1 // keep the segments apart
	}
	c, err := collection.Create(dir, collection.Options{Dim: dim, Metric: metric.L2, Seed: 1, EfConstruction: efc}, tuning)
	if err != nil {
		t.Fatal(err)
	}
	vec := synth.NewBlobs(rand.New(rand.NewPCG(1, 1)), 100, dim, 0.25).Draw
	ids := make([]collection.ID, 1000)
	for at := 0; at < n; at += 1000 {
		for i := range ids {
			ids[i] = collection.IntID(uint64(at + i))
		}
		if err := c.Upsert(ids, vec(1000), nil); err != nil {
			t.Fatal(err)
		}
		if (at+1000)%(n/segs) == 0 {
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			t.Logf("built %d of %d", at+1000, n)
		}
	}
	if segs == 1 {
		waitSteady(c, 20*time.Minute)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeReopenTail opens the collection in dir, notes the open's cost in
// res, logs 10,000 single-row upserts (the tail TestSegmentBenchReopen's
// reopen replays) and closes it without a checkpoint.
func writeReopenTail(t *testing.T, dir string, res map[string]any) {
	const tailRecords = 10000
	began, cpu := time.Now(), cpuSeconds()
	c, err := collection.Open(dir, collection.Tuning{CheckpointBytes: -1, Fsync: collection.FsyncNever, HasFsync: true, TailRows: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	res["open_seconds"] = time.Since(began).Seconds()
	res["open_cpu_seconds"] = cpuSeconds() - cpu
	res["points"] = c.Len()
	res["segments"] = c.Describe()["segments"]
	dim := c.Options().Dim
	res["dim"] = dim
	vec := synth.NewBlobs(rand.New(rand.NewPCG(7, 7)), 100, dim, 0.25).Draw
	tv := vec(tailRecords)
	base := uint64(1) << 40 // ids no bench run uses
	for i := range tailRecords {
		if err := c.Upsert([]collection.ID{collection.IntID(base + uint64(i))}, tv[i*dim:(i+1)*dim], nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.CloseForDrop(); err != nil {
		t.Fatal(err)
	}
	debug.FreeOSMemory()
}
