package collection

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// What a checkpoint costs the writes that run beside it (issue 24: writes
// never wait for the index, no query waits on a checkpoint). When
// STRATA_CKPTBENCH names a JSON output file: a collection of
// STRATA_CKPTBENCH_N points (default 200,000; 128-d, 100 gaussian blobs,
// a small document each) takes, in each of two phases, single-row
// upserts and then batches of 100 of new points from one goroutine as
// fast as it can (fsync always) for STRATA_CKPTBENCH_SECONDS (default
// 20), while another calls Checkpoint every 3 s and a third runs one
// query every 5 ms. Reported per phase: the latency of the writes whose
// call overlapped a checkpoint's applyMu section (locked), of the others
// that overlapped its log rotation or removal of old segments (under
// walMu: wal, the sections' times wal_rotate and wal_remove), of the
// others that overlapped a Checkpoint call (checkpoint_unlocked) and of
// the rest (outside), each as count, p50, p99 and max in ms, and of all
// the writes that overlapped a Checkpoint call (during_checkpoint); the
// time of each step run under applyMu (testHooks.checkpointLocked); the
// Checkpoint calls' durations; and query latency, with its max during
// Checkpoint calls.
func TestCheckpointPauseBench(t *testing.T) {
	out := os.Getenv("STRATA_CKPTBENCH")
	if out == "" {
		t.Skip("set STRATA_CKPTBENCH=<file.json> to run")
	}
	n, seconds := 200000, 20
	if s := os.Getenv("STRATA_CKPTBENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("STRATA_CKPTBENCH_SECONDS"); s != "" {
		seconds, _ = strconv.Atoi(s)
	}
	const dim = 128
	rng := rand.New(rand.NewPCG(1, 1))
	blobs := synth.NewBlobs(rng, 100, dim, 0.25)
	docs := func(from, m int) []meta.Document {
		out := make([]meta.Document, m)
		for i := range out {
			d, err := meta.ParseDocument(fmt.Appendf(nil, `{"n":%d,"tag":"t%d"}`, from+i, (from+i)%97))
			if err != nil {
				t.Fatal(err)
			}
			out[i] = d
		}
		return out
	}
	ids := func(from, m int) []ID {
		out := make([]ID, m)
		for i := range out {
			out[i] = IntID(uint64(from + i))
		}
		return out
	}
	c, err := Create(filepath.Join(t.TempDir(), "c"), Options{Dim: dim, Metric: metric.L2, Seed: 1, Fsync: FsyncAlways},
		Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseForDrop()
	var spansMu sync.Mutex
	type lockedSpan struct {
		from, to time.Time
		steps    []checkpointStep
	}
	var spans []lockedSpan
	c.hooks.checkpointLocked = func(from, to time.Time, steps []checkpointStep) {
		spansMu.Lock()
		spans = append(spans, lockedSpan{from, to, steps})
		spansMu.Unlock()
	}

	res := map[string]any{"n": n, "dim": dim, "seconds_per_phase": seconds, "load_at_start": benchLoad()}
	save := func() {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	began := time.Now()
	data := blobs.Draw(n)
	for at := 0; at < n; at += 1000 {
		if err := c.Upsert(ids(at, 1000), data[at*dim:(at+1000)*dim], docs(at, 1000)); err != nil {
			t.Fatal(err)
		}
		if (at+1000)%(n/5) == 0 {
			if err := c.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
	}
	data = nil
	for c.Info().TailRows > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	res["load_seconds"] = time.Since(began).Seconds()
	save()

	next := n
	for _, batch := range []int{1, 100} {
		spansMu.Lock()
		spans = spans[:0]
		spansMu.Unlock()
		rows := blobs.Draw(1000)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var writes, queries, calls [][2]time.Time
		var failed atomic.Pointer[error]
		fail := func(err error) { failed.CompareAndSwap(nil, &err) }
		wg.Add(3)
		go func() { // the writer
			defer wg.Done()
			for r := 0; ; r++ {
				select {
				case <-stop:
					return
				default:
				}
				at := (r * batch) % (1000 - batch + 1)
				t0 := time.Now()
				if err := c.Upsert(ids(next, batch), rows[at*dim:(at+batch)*dim], docs(next, batch)); err != nil {
					fail(err)
					return
				}
				writes = append(writes, [2]time.Time{t0, time.Now()})
				next += batch
			}
		}()
		go func() { // the checkpoints
			defer wg.Done()
			tick := time.NewTicker(3 * time.Second)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				t0 := time.Now()
				if err := c.Checkpoint(); err != nil {
					fail(err)
					return
				}
				calls = append(calls, [2]time.Time{t0, time.Now()})
			}
		}()
		go func() { // the queries
			defer wg.Done()
			qs := blobs.DrawWith(rand.New(rand.NewPCG(2, 2)), 100)
			outIDs, outD := make([]ID, 10), make([]float32, 10)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
				t0 := time.Now()
				if _, err := c.Query(qs[(i%100)*dim:(i%100+1)*dim], 10, 0, nil, 1, outIDs, outD); err != nil {
					fail(err)
					return
				}
				queries = append(queries, [2]time.Time{t0, time.Now()})
			}
		}()
		time.Sleep(time.Duration(seconds) * time.Second)
		close(stop)
		wg.Wait()
		if p := failed.Load(); p != nil {
			t.Fatal(*p)
		}
		spansMu.Lock()
		var locked, rotations []lockedSpan
		for _, s := range spans {
			if strings.HasPrefix(s.steps[0].name, "wal_") {
				rotations = append(rotations, s)
			} else {
				locked = append(locked, s)
			}
		}
		spansMu.Unlock()

		overlaps := func(a [2]time.Time, from, to time.Time) bool { return a[0].Before(to) && a[1].After(from) }
		var inLocked, inRotate, inCall, outside, during, qAll, qCall []float64
		ms := func(a [2]time.Time) float64 { return float64(a[1].Sub(a[0]).Nanoseconds()) / 1e6 }
		for _, w := range writes {
			if slices.ContainsFunc(calls, func(s [2]time.Time) bool { return overlaps(w, s[0], s[1]) }) {
				during = append(during, ms(w))
			}
			switch {
			case slices.ContainsFunc(locked, func(s lockedSpan) bool { return overlaps(w, s.from, s.to) }):
				inLocked = append(inLocked, ms(w))
			case slices.ContainsFunc(rotations, func(s lockedSpan) bool { return overlaps(w, s.from, s.to) }):
				inRotate = append(inRotate, ms(w))
			case slices.ContainsFunc(calls, func(s [2]time.Time) bool { return overlaps(w, s[0], s[1]) }):
				inCall = append(inCall, ms(w))
			default:
				outside = append(outside, ms(w))
			}
		}
		for _, q := range queries {
			qAll = append(qAll, ms(q))
			if slices.ContainsFunc(calls, func(s [2]time.Time) bool { return overlaps(q, s[0], s[1]) }) {
				qCall = append(qCall, ms(q))
			}
		}
		steps := map[string][]float64{}
		var sections, callMs []float64
		for _, s := range locked {
			sections = append(sections, float64(s.to.Sub(s.from).Nanoseconds())/1e6)
			for _, st := range s.steps {
				steps[st.name] = append(steps[st.name], float64(st.took.Nanoseconds())/1e6)
			}
		}
		walMs := map[string][]float64{}
		for _, s := range rotations {
			walMs[s.steps[0].name] = append(walMs[s.steps[0].name], float64(s.to.Sub(s.from).Nanoseconds())/1e6)
		}
		for _, cl := range calls {
			callMs = append(callMs, ms(cl))
		}
		stepRes := map[string]any{}
		for name, v := range steps {
			stepRes[name] = benchSummary(v)
		}
		phase := map[string]any{
			"batch": batch, "writes": len(writes), "rows_written": len(writes) * batch,
			"rows_per_s":                   float64(len(writes)*batch) / float64(seconds),
			"write_ms_locked":              benchSummary(inLocked),
			"write_ms_wal":                 benchSummary(inRotate),
			"wal_rotate_ms":                benchSummary(walMs["wal_rotate"]),
			"wal_remove_ms":                benchSummary(walMs["wal_remove"]),
			"write_ms_checkpoint_unlocked": benchSummary(inCall),
			"write_ms_outside":             benchSummary(outside),
			"write_ms_during_checkpoint":   benchSummary(during),
			"locked_section_ms":            benchSummary(sections),
			"locked_sections_ms":           sections,
			"locked_steps_ms":              stepRes,
			"checkpoint_call_ms":           callMs,
			"query_ms":                     benchSummary(qAll),
			"query_ms_during_checkpoint":   benchSummary(qCall),
			"points_at_end":                next,
			"tail_rows_at_end":             c.Info().TailRows,
			"load_at_end":                  benchLoad(),
		}
		res[fmt.Sprintf("batch_%d", batch)] = phase
		save()
		b, _ := json.MarshalIndent(phase, "", "  ")
		t.Logf("batch %d: %s", batch, b)
	}
}

// benchSummary is the count, mean, p50, p99 and max of v.
func benchSummary(v []float64) map[string]float64 {
	if len(v) == 0 {
		return map[string]float64{"count": 0}
	}
	s := slices.Sorted(slices.Values(v))
	var sum float64
	for _, x := range s {
		sum += x
	}
	return map[string]float64{"count": float64(len(s)), "mean": sum / float64(len(s)),
		"p50": s[len(s)/2], "p99": s[len(s)*99/100], "max": s[len(s)-1]}
}

// benchLoad is the first three fields of /proc/loadavg, "" without it.
func benchLoad() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
