package hnsw

import (
	"cmp"
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// filterAllowLists returns, for each selectivity, a random allow list (a
// prefix of one permutation) and a correlated one (the rows nearest to one
// row: a region of the space most queries are far from), as
// bench/bench_filter.py makes them.
func filterAllowLists(data []float32, dim int, sels []float64, seed uint64) map[string][]uint64 {
	n := len(data) / dim
	rng := rand.New(rand.NewPCG(seed, 3))
	perm := rng.Perm(n)
	centre := data[rng.IntN(n)*dim:][:dim]
	near := make([]int, n)
	dist := make([]float32, n)
	for i := range near {
		near[i] = i
		dist[i] = metric.L2.Distance(centre, data[i*dim:(i+1)*dim])
	}
	slices.SortStableFunc(near, func(a, b int) int { return cmp.Compare(dist[a], dist[b]) })
	out := map[string][]uint64{}
	for _, s := range sels {
		m := max(1, int(s*float64(n)+0.5))
		for kind, rows := range map[string][]int{"random": perm[:m], "correlated": near[:m]} {
			ids := make([]uint64, m)
			for i, r := range rows {
				ids[i] = uint64(r)
			}
			slices.Sort(ids)
			out[kind+"/"+strconv.FormatFloat(s, 'g', -1, 64)] = ids
		}
	}
	return out
}

// filteredTruth is the exact k nearest of among to each query (L2).
func filteredTruth(data, queries []float32, dim, k int, among []uint64) [][]uint64 {
	type hit struct {
		id uint64
		d  float32
	}
	nq := len(queries) / dim
	truth := make([][]uint64, nq)
	hits := make([]hit, len(among))
	for q := range nq {
		qv := queries[q*dim : (q+1)*dim]
		for i, id := range among {
			hits[i] = hit{id, metric.L2.Distance(qv, data[int(id)*dim:(int(id)+1)*dim])}
		}
		slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(a.d, b.d) })
		for _, h := range hits[:min(k, len(hits))] {
			truth[q] = append(truth[q], h.id)
		}
	}
	return truth
}

// TestFilterTraversalBench measures the filtered search plans when
// STRATA_FILTERBENCH names a JSON output file: STRATA_FILTERBENCH_N
// (default 100,000) clustered 128-d vectors, 200 queries, k=10, random and
// correlated allow lists at 50/10/1/0.1 %; for each plan (exact scan, the
// routing traversal, the admitted-only traversal) and ef of a sweep:
// recall@10 against the exact filtered answer, distances and link lists
// read per query, CPU µs per query (rounds alternated, medians). The
// unfiltered search is measured beside them, as the reference of the QPS
// ratio (STRATA_FILTERBENCH_PLANS, _SELS and _ROUNDS narrow the run). It
// is the measurement choosePlan's costs come from.
func TestFilterTraversalBench(t *testing.T) {
	out := os.Getenv("STRATA_FILTERBENCH")
	if out == "" {
		t.Skip("set STRATA_FILTERBENCH=<file.json> to run")
	}
	n := envInt("STRATA_FILTERBENCH_N", 100000)
	const dim, k, nq = 128, 10, 200
	data := synth.Clustered(n, dim, 100, 0.25, 21)
	// The queries come from the same centres: synth.Clustered draws them
	// first from the seed, so the rows past n of a longer draw will do.
	queries := synth.Clustered(n+nq, dim, 100, 0.25, 21)[n*dim:]
	x := mustNew(t, Config{Dim: dim, Metric: metric.L2, Seed: 1})
	began := time.Now()
	if err := x.Add(data, nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("built %d in %.1fs", n, time.Since(began).Seconds())
	sels := []float64{0.5, 0.1, 0.01, 0.001}
	if s := os.Getenv("STRATA_FILTERBENCH_SELS"); s != "" {
		sels = nil
		for _, f := range strings.Split(s, ",") {
			v, _ := strconv.ParseFloat(f, 64)
			sels = append(sels, v)
		}
	}
	lists := filterAllowLists(data, dim, sels, 5)
	efs := []int{10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512}

	type point struct {
		Plan      string  `json:"plan"`
		Ef        int     `json:"ef"`
		EfUsed    int     `json:"ef_used"`
		Recall    float64 `json:"recall"`
		Dists     float64 `json:"distances_per_query"`
		Hops      float64 `json:"links_read_per_query"`
		CPUus     float64 `json:"cpu_us_per_query_median"`
		Fallbacks int     `json:"fallbacks"`
		cpu       []float64
	}
	type config struct {
		Name    string   `json:"name"`
		Allowed int      `json:"allowed"`
		Points  []*point `json:"points"`
		filter  *Filter
		truth   [][]uint64
	}
	ids, dists := make([]int64, k), make([]float32, k)
	run := func(c *config, p *point) (recall float64, nd, nh int64, fallbacks int) {
		switch p.Plan {
		case "exact":
			x.testing.forcePlan, x.testing.forcedPlan = true, PlanExact
		default:
			x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph
		}
		x.testing.routeFilter = p.Plan == "route"
		hits := 0
		for q := range nq {
			st, err := x.SearchFiltered(queries[q*dim:(q+1)*dim], k, p.Ef, 1, c.filter, ids, dists)
			if err != nil {
				t.Fatal(err)
			}
			p.EfUsed = st.EfSearch
			nd += st.DistanceComputations
			nh += st.LinksRead
			fallbacks += st.Rerouted
			for _, id := range ids {
				if id >= 0 && slices.Contains(c.truth[q], uint64(id)) {
					hits++
				}
			}
		}
		return float64(hits) / float64(nq*min(k, c.Allowed)), nd, nh, fallbacks
	}
	all := make([]uint64, n)
	for i := range all {
		all[i] = uint64(i)
	}
	configs := []*config{{Name: "none", Allowed: n, truth: filteredTruth(data, queries, dim, k, all)}}
	for _, s := range sels {
		for _, kind := range []string{"random", "correlated"} {
			name := kind + "/" + strconv.FormatFloat(s, 'g', -1, 64)
			among := lists[name]
			configs = append(configs, &config{Name: name, Allowed: len(among), filter: &Filter{Allow: among},
				truth: filteredTruth(data, queries, dim, k, among)})
		}
	}
	var timed []*point
	timedConfig := map[*point]*config{}
	for _, c := range configs {
		plans := []string{"allowed", "route"}
		if s := os.Getenv("STRATA_FILTERBENCH_PLANS"); s != "" {
			plans = strings.Split(s, ",")
		}
		if c.filter == nil {
			plans = []string{"graph"}
		}
		for _, plan := range plans {
			// The sweep stops at the first ef reaching recall 0.995 (0.95 unfiltered).
			target := 0.995
			if c.filter == nil {
				target = 0.95
			}
			for _, ef := range efs {
				p := &point{Plan: plan, Ef: ef}
				r, nd, nh, fb := run(c, p)
				p.Recall, p.Dists, p.Hops, p.Fallbacks = r, float64(nd)/nq, float64(nh)/nq, fb
				c.Points = append(c.Points, p)
				timed = append(timed, p)
				timedConfig[p] = c
				if r >= target || p.Dists > float64(c.Allowed) {
					break
				}
			}
		}
		if c.filter != nil {
			p := &point{Plan: "exact", Ef: 10}
			r, nd, nh, fb := run(c, p)
			p.Recall, p.Dists, p.Hops, p.Fallbacks = r, float64(nd)/nq, float64(nh)/nq, fb
			c.Points = append(c.Points, p)
			timed = append(timed, p)
			timedConfig[p] = c
		}
		t.Logf("%s: %d allowed, %d points", c.Name, c.Allowed, len(c.Points))
	}
	rounds := envInt("STRATA_FILTERBENCH_ROUNDS", 3)
	for range rounds {
		for _, p := range timed {
			c := timedConfig[p]
			start := processCPU()
			run(c, p)
			p.cpu = append(p.cpu, (processCPU()-start)/nq*1e6)
		}
	}
	for _, p := range timed {
		p.CPUus = slices.Sorted(slices.Values(p.cpu))[len(p.cpu)/2]
	}
	x.testing = searchTesting{}
	var load [3]float64
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		for i, f := range strings.Fields(string(b))[:3] {
			load[i], _ = strconv.ParseFloat(f, 64)
		}
	}
	res := map[string]any{"n": n, "dim": dim, "k": k, "queries": nq, "M": 16, "ef_construction": 200,
		"rounds": rounds, "load_average_end": load, "configs": configs}
	b, _ := json.MarshalIndent(res, "", " ")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range configs {
		for _, p := range c.Points {
			t.Logf("%-16s %-7s ef=%-4d used=%-4d R=%.4f dist=%8.0f links=%8.0f cpu=%8.1fus fb=%d", c.Name, p.Plan, p.Ef, p.EfUsed, p.Recall, p.Dists, p.Hops, p.CPUus, p.Fallbacks)
		}
	}
}
