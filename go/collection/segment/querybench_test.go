package segment

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// loadAverage is the machine's 1, 5 and 15-minute load averages.
func loadAverage() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	var out []float64
	for _, f := range strings.Fields(string(b))[:3] {
		v, _ := strconv.ParseFloat(f, 64)
		out = append(out, v)
	}
	return out
}

// machine is the CPU model and core count, as bench/runinfo.py records
// them.
func machine() map[string]any {
	model := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if key, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(key) == "model name" {
				model = strings.TrimSpace(value)
				break
			}
		}
	}
	return map[string]any{"cpu_model": model, "cores": runtime.NumCPU(), "goarch": runtime.GOARCH}
}

// cpuSeconds is this process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// TestSegmentQueryBench measures what searching several segments costs
// (issue 24) when STRATA_SEGQUERY names a JSON output file: the same
// points (STRATA_SEGQUERY_N, default 100,000 x 128 clustered synthetic)
// in one hnsw.Index and split evenly into 3 and 9 sealed segments
// (Graphs.SearchFiltered), each at the smallest ef reaching recall@10
// 0.95: QPS, CPU time per query and distance computations per query,
// alternated round by round; and the same at 10 % selectivity (an allow
// list of a random tenth), against its own filtered ground truth.
// STRATA_SEGQUERY_SEGS lists other segment counts ("1,10");
// STRATA_SEGQUERY_CACHE names a directory where the built segments are
// saved and, on a later run (another commit's tree, say), loaded instead
// of built again: at 1M a build takes most of the run.
// STRATA_SEGQUERY_COMMIT is the commit the test binary was built from,
// recorded in the output (a binary of another tree may run in this one).
// STRATA_SEGQUERY_ONLY keeps only the setups whose names contain it
// ("filtered", "1_segments_filtered"): for a profile of one of them.
func TestSegmentQueryBench(t *testing.T) {
	out := os.Getenv("STRATA_SEGQUERY")
	if out == "" {
		t.Skip("set STRATA_SEGQUERY=<file.json> to run")
	}
	n := 100000
	if s := os.Getenv("STRATA_SEGQUERY_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	const dim, k, nq = 128, 10, 200
	rng := rand.New(rand.NewPCG(1, 1))
	vec := synth.NewBlobs(rng, 100, dim, 0.25).Draw
	data, qs := vec(n), vec(nq)
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = uint64(i)
	}
	allow := make([]uint64, 0, n/10)
	for _, key := range keys {
		if rng.IntN(10) == 0 {
			allow = append(allow, key)
		}
	}
	truthOf := func(among []uint64) [][]uint64 {
		// The k nearest by insertion into a sorted k-list: a full sort of
		// a million distances per query was minutes of the run at 1M.
		type hit struct {
			key uint64
			d   float32
		}
		truth := make([][]uint64, nq)
		best := make([]hit, 0, k+1)
		for q := range nq {
			best = best[:0]
			for _, key := range among {
				d := metric.L2.Distance(qs[q*dim:(q+1)*dim], data[key*dim:(key+1)*dim])
				if len(best) == k && d >= best[k-1].d {
					continue
				}
				at, _ := slices.BinarySearchFunc(best, d, func(h hit, d float32) int { return cmp.Compare(h.d, d) })
				best = slices.Insert(best, at, hit{key, d})
				if len(best) > k {
					best = best[:k]
				}
			}
			for _, h := range best {
				truth[q] = append(truth[q], h.key)
			}
		}
		return truth
	}
	truth, filteredTruth := truthOf(keys), truthOf(allow)

	cfg := hnsw.Config{Dim: dim, Metric: metric.L2, Seed: 1, Keys: true}
	cache := os.Getenv("STRATA_SEGQUERY_CACHE")
	build := func(segs int) *Graphs {
		var sealed []*Graph
		for s := range segs {
			lo, hi := s*n/segs, (s+1)*n/segs
			file := filepath.Join(cache, fmt.Sprintf("n%d-of%d-seg%d.hnsw", n, segs, s))
			var x *hnsw.Index
			var err error
			if cache != "" {
				if x, err = hnsw.Load(vfs.Default, file, hnsw.LoadOptions{Keys: true}); err == nil {
					t.Logf("loaded %s", file)
				}
			}
			if x == nil {
				if x, err = hnsw.New(cfg); err != nil {
					t.Fatal(err)
				}
				if err := x.Add(data[lo*dim:hi*dim], keys[lo:hi], nil, 0); err != nil {
					t.Fatal(err)
				}
				if cache != "" {
					if err := x.Save(vfs.Default, file); err != nil {
						t.Fatal(err)
					}
				}
			}
			g, err := LoadedGraph(x, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			sealed = append(sealed, g)
		}
		active, err := hnsw.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return NewGraphs(cfg, active, sealed)
	}
	type setup struct {
		name   string
		g      *Graphs
		filter *hnsw.Filter
		truth  [][]uint64
		ef     int
		recall float64
		qps    []float64
		cpuUs  []float64
		dists  float64
		// per query at ef: link lists a filtered graph search read, and
		// the share of queries a filtered graph search left to its fallback
		links, rerouted float64
		plan            string // the merged plan of the last query
	}
	var setups []*setup
	segCounts := []int{1, 3, 9}
	if s := os.Getenv("STRATA_SEGQUERY_SEGS"); s != "" {
		segCounts = nil
		for _, f := range strings.Split(s, ",") {
			c, err := strconv.Atoi(f)
			if err != nil || c < 1 {
				t.Fatalf("STRATA_SEGQUERY_SEGS: %q", s)
			}
			segCounts = append(segCounts, c)
		}
	}
	loadStart := loadAverage()
	for _, segs := range segCounts {
		began := time.Now()
		g := build(segs)
		t.Logf("%d segments built in %.1fs", segs, time.Since(began).Seconds())
		name := strconv.Itoa(segs) + "_segments"
		for _, s := range []*setup{{name: name, g: g, truth: truth},
			{name: name + "_filtered_10pct", g: g, filter: &hnsw.Filter{Allow: allow}, truth: filteredTruth}} {
			if strings.Contains(s.name, os.Getenv("STRATA_SEGQUERY_ONLY")) {
				setups = append(setups, s)
			}
		}
	}
	outKeys, outDists := make([]int64, k), make([]float32, k)
	var last hnsw.SearchStats // the last pass's totals beside its distances
	pass := func(s *setup, ef int) (recall float64, dists int64) {
		last = hnsw.SearchStats{}
		hits := 0
		for q := range nq {
			st, err := s.g.SearchFiltered(qs[q*dim:(q+1)*dim], k, ef, 1, s.filter, outKeys, outDists)
			if err != nil {
				t.Fatal(err)
			}
			dists += st.DistanceComputations
			last.LinksRead += st.LinksRead
			last.Rerouted += st.Rerouted
			last.Plan = st.Plan
			for _, key := range outKeys {
				if key >= 0 && slices.Contains(s.truth[q], uint64(key)) {
					hits++
				}
			}
		}
		return float64(hits) / float64(nq*k), dists
	}
	for _, s := range setups {
		target := 0.95
		if s.filter != nil {
			target = 0.99
		}
		for _, ef := range []int{10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512} {
			r, d := pass(s, ef)
			s.ef, s.recall, s.dists = ef, r, float64(d)/nq
			s.links, s.rerouted, s.plan = float64(last.LinksRead)/nq, float64(last.Rerouted)/nq, last.Plan.String()
			if r >= target {
				break
			}
		}
	}
	// Rounds alternate the setups; each runs passes for at least 300 ms.
	for range 5 {
		for _, s := range setups {
			done := 0
			start, cpu := time.Now(), cpuSeconds()
			for time.Since(start) < 300*time.Millisecond {
				pass(s, s.ef)
				done += nq
			}
			s.qps = append(s.qps, float64(done)/time.Since(start).Seconds())
			s.cpuUs = append(s.cpuUs, (cpuSeconds()-cpu)/float64(done)*1e6)
		}
	}
	res := map[string]any{"n": n, "dim": dim, "k": k, "queries": nq, "allowed": len(allow),
		"load_average_start": loadStart, "load_average_end": loadAverage(),
		"machine": machine(), "commit": os.Getenv("STRATA_SEGQUERY_COMMIT")}
	median := func(v []float64) float64 { v = slices.Sorted(slices.Values(v)); return v[len(v)/2] }
	byName := map[string]*setup{}
	for _, s := range setups {
		byName[s.name] = s
		res[s.name] = map[string]any{"ef": s.ef, "recall": s.recall, "qps_median": median(s.qps),
			"cpu_us_per_query_median": median(s.cpuUs), "distances_per_query": s.dists,
			"links_read_per_query": s.links, "rerouted_per_query": s.rerouted, "plan": s.plan}
	}
	ratios := map[string]float64{}
	for _, s := range setups {
		base := byName[strconv.Itoa(segCounts[0])+"_segments"]
		if s.filter != nil {
			// Filtered QPS over the unfiltered QPS of the same segments.
			unfiltered := byName[s.name[:len(s.name)-len("_filtered_10pct")]]
			if unfiltered == nil {
				continue
			}
			ratios[s.name+"_over_unfiltered_cpu"] = median(unfiltered.cpuUs) / median(s.cpuUs)
			continue
		}
		if base == nil {
			continue
		}
		ratios[s.name+"_over_one_index_cpu"] = median(base.cpuUs) / median(s.cpuUs)
		ratios[s.name+"_over_one_index_qps"] = median(s.qps) / median(base.qps)
	}
	res["ratios"] = ratios
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", b)
}
