package hnsw

import (
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/kernels"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// The scaffolding the RaBitQ benchmarks share (BenchmarkRaBitQSweep,
// BenchmarkRaBitQModes, BenchmarkRaBitQExpandedAB, BenchmarkRaBitQSearchOne,
// BenchmarkRaBitQBlockBuild): one data set read the same way, one graph
// cached in a file, one exact ground truth cached beside it, one thread
// clock and one description of the run for the result files.
//
// Env: STRATA_RABITQ_SET (default pypi-use512, from synth.DataDir, cosine;
// or fashion-mnist, L2, read from the IDX files of Debian's
// dataset-fashion-mnist; or a directory written by bench/dump_f32_set.py,
// any set of bench/datasets.py such as glove-100-angular: its train.f32,
// queries.f32 and set.json), STRATA_RABITQ_N train rows (each benchmark's
// default), STRATA_RABITQ_Q held-out queries (likewise), STRATA_RABITQ_INDEX
// a file caching the built graph (and, in <file>.truth-<queries>, the
// ground truth).

// rabitqBenchSet is one benchmark's data: the training rows, the queries
// it uses, the metric, and the cache of the graph and the ground truth.
type rabitqBenchSet struct {
	name    string
	data    *synth.RealSet
	metric  metric.Metric
	dim, n  int
	queries []float32 // the first nq held-out queries
	nq, k   int
	index   string // $STRATA_RABITQ_INDEX, or ""
}

// loadRaBitQBenchSet reads $STRATA_RABITQ_SET with the given default row
// and query counts (the env overrides them), skipping the benchmark when
// the data is not on this machine.
func loadRaBitQBenchSet(b *testing.B, defaultN, defaultQ int) *rabitqBenchSet {
	s := &rabitqBenchSet{name: envString("STRATA_RABITQ_SET", "pypi-use512"), metric: metric.Cosine, k: 10,
		index: os.Getenv("STRATA_RABITQ_INDEX")}
	data, err := loadSweepSet(s.name, envInt("STRATA_RABITQ_N", defaultN))
	if err != nil {
		b.Skipf("real data not available: %v", err)
	}
	switch {
	case s.name == "fashion-mnist":
		s.metric = metric.L2
	case strings.Contains(s.name, "/"):
		s.metric = data.Metric
	}
	s.data, s.dim = data.RealSet, data.Dim
	s.n = len(data.Train) / s.dim
	s.nq = min(envInt("STRATA_RABITQ_Q", defaultQ), len(data.Queries)/s.dim)
	s.queries = data.Queries[:s.nq*s.dim]
	return s
}

// query is query i.
func (s *rabitqBenchSet) query(i int) []float32 { return s.queries[i*s.dim : (i+1)*s.dim] }

// graph is the float graph of the set (Config{Seed: 1}, the defaults
// otherwise), loaded from the index cache when it holds this set's graph,
// else built (and saved there); and the build's wall seconds (0 when
// loaded).
func (s *rabitqBenchSet) graph(b *testing.B) (*Index, float64) {
	if s.index != "" {
		if x, err := Load(vfs.Default, s.index, LoadOptions{}); err == nil && x.Len() == s.n && x.cfg.Metric == s.metric {
			return x, 0
		}
	}
	x, err := New(Config{Dim: s.dim, Metric: s.metric, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := x.Add(s.data.Train, nil, nil, 0); err != nil {
		b.Fatal(err)
	}
	sec := time.Since(start).Seconds()
	if s.index != "" {
		if err := x.Save(vfs.Default, s.index); err != nil {
			b.Fatal(err)
		}
	}
	return x, sec
}

// truth is the exact top k of every query (exactTruth), read from
// <index>.truth-<nq> when that file was written for the same rows,
// queries and k, else computed (a brute-force pass over every row per
// query, minutes at 100k rows) and written there.
func (s *rabitqBenchSet) truth() [][]uint64 {
	type cached struct {
		Set         string     `json:"set"`
		N           int        `json:"n"`
		NQ          int        `json:"queries"`
		K           int        `json:"k"`
		Neighbours  [][]uint64 `json:"neighbours"`
		QueriesHash uint64     `json:"data_hash"`
	}
	path := ""
	hash := floatsHash(s.queries) ^ floatsHash(s.data.Train)
	if s.index != "" {
		path = fmt.Sprintf("%s.truth-%d", s.index, s.nq)
		if raw, err := os.ReadFile(path); err == nil {
			var c cached
			if json.Unmarshal(raw, &c) == nil && c.Set == s.name && c.N == s.n && c.NQ == s.nq && c.K == s.k && c.QueriesHash == hash {
				return c.Neighbours
			}
		}
	}
	truth := exactTruth(s.data.Train, s.queries, s.dim, s.k, s.metric)
	if path != "" {
		raw, _ := json.Marshal(cached{Set: s.name, N: s.n, NQ: s.nq, K: s.k, Neighbours: truth, QueriesHash: hash})
		_ = os.WriteFile(path, raw, 0o644) // a cache: failing to write it only costs the next run time
	}
	return truth
}

// floatsHash is an FNV-1a hash of v's bits, to tell a cached ground truth
// of other data from this one's.
func floatsHash(v []float32) uint64 {
	h := uint64(14695981039346656037)
	for _, f := range v {
		h = (h ^ uint64(int32(f*1e6))) * 1099511628211
	}
	return h
}

// runInfo describes the run for a result file: commit, load average, CPU,
// kernel paths, Go version and time, merged into fields.
func runInfo(fields map[string]any) map[string]any {
	commit, _ := exec.Command("git", "rev-parse", "HEAD").Output()
	out := map[string]any{
		"commit": strings.TrimSpace(string(commit)), "loadavg": loadavg(), "cpu": cpuModel(),
		"kernels":   map[string]string{"float": kernels.Path(), "bitdot": kernels.BitDotPath()},
		"goversion": runtime.Version(), "time": time.Now().UTC().Format(time.RFC3339),
	}
	for k, v := range fields {
		out[k] = v
	}
	return out
}

// writeResults writes runInfo(fields) as indented JSON to path.
func writeResults(b *testing.B, path string, fields map[string]any) {
	raw, err := json.MarshalIndent(runInfo(fields), "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		b.Fatal(err)
	}
}

// sweepSet is a benchmark's rows and, for a directory set, its metric.
type sweepSet struct {
	*synth.RealSet
	Metric metric.Metric
}

// loadSweepSet is synth.LoadRealSet, or for "fashion-mnist" the 60k
// training and 10k test images of Debian's dataset-fashion-mnist (784
// bytes each, as float32 0-255), or for a name holding a "/" the
// directory of readF32Set; the first maxTrain training rows.
func loadSweepSet(name string, maxTrain int) (*sweepSet, error) {
	if strings.Contains(name, "/") {
		return readF32Set(name, maxTrain)
	}
	if name != "fashion-mnist" {
		set, err := synth.LoadRealSet(name, maxTrain)
		return &sweepSet{RealSet: set}, err
	}
	const dir = "/usr/share/datasets/fashion-mnist"
	train, err := readIDXImages(dir + "/train-images-idx3-ubyte.gz")
	if err != nil {
		return nil, err
	}
	test, err := readIDXImages(dir + "/t10k-images-idx3-ubyte.gz")
	if err != nil {
		return nil, err
	}
	if maxTrain > 0 && maxTrain*784 < len(train) {
		train = train[:maxTrain*784]
	}
	return &sweepSet{RealSet: &synth.RealSet{Dim: 784, Train: train, Queries: test}, Metric: metric.L2}, nil
}

// readF32Set reads the set bench/dump_f32_set.py wrote to dir:
// set.json ({"dim", "metric": "cosine" or "l2"}), train.f32 and
// queries.f32 (rows of dim little-endian float32s), the first maxTrain
// training rows (every one when maxTrain <= 0).
func readF32Set(dir string, maxTrain int) (*sweepSet, error) {
	raw, err := os.ReadFile(dir + "/set.json")
	if err != nil {
		return nil, err
	}
	var meta struct {
		Dim    int    `json:"dim"`
		Metric string `json:"metric"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("%s/set.json: %w", dir, err)
	}
	m, ok := map[string]metric.Metric{"cosine": metric.Cosine, "l2": metric.L2}[meta.Metric]
	if !ok || meta.Dim <= 0 {
		return nil, fmt.Errorf("%s/set.json: dim %d, metric %q: want dim > 0 and cosine or l2", dir, meta.Dim, meta.Metric)
	}
	rows := func(name string) ([]float32, error) {
		raw, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			return nil, err
		}
		if len(raw)%(4*meta.Dim) != 0 {
			return nil, fmt.Errorf("%s/%s: %d bytes, not rows of %d float32s", dir, name, len(raw), meta.Dim)
		}
		out := make([]float32, len(raw)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return out, nil
	}
	train, err := rows("train.f32")
	if err != nil {
		return nil, err
	}
	queries, err := rows("queries.f32")
	if err != nil {
		return nil, err
	}
	if maxTrain > 0 && maxTrain*meta.Dim < len(train) {
		train = train[:maxTrain*meta.Dim]
	}
	return &sweepSet{RealSet: &synth.RealSet{Dim: meta.Dim, Train: train, Queries: queries}, Metric: m}, nil
}

// readIDXImages reads a gzipped IDX file of uint8 images into float32s.
func readIDXImages(path string) ([]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(raw) < 16 || raw[2] != 0x08 || raw[3] != 3 {
		return nil, fmt.Errorf("%s: not an IDX file of 3-d uint8 images", path)
	}
	count := int(binary.BigEndian.Uint32(raw[4:]))
	size := int(binary.BigEndian.Uint32(raw[8:])) * int(binary.BigEndian.Uint32(raw[12:]))
	if len(raw)-16 != count*size {
		return nil, fmt.Errorf("%s: %d bytes for %d images of %d", path, len(raw)-16, count, size)
	}
	out := make([]float32, count*size)
	for i, v := range raw[16:] {
		out[i] = float32(v)
	}
	return out, nil
}

// exactTruth is the exact top-k by cosine (data and queries normalised on
// the way) or L2, with float32 kernels.
func exactTruth(data, queries []float32, dim, k int, m metric.Metric) [][]uint64 {
	norm := func(v []float32) []float32 {
		out := append([]float32(nil), v...)
		for i := 0; i < len(out); i += dim {
			metric.Normalize(out[i : i+dim])
		}
		return out
	}
	if m == metric.Cosine {
		data, queries = norm(data), norm(queries)
	}
	n := len(data) / dim
	truth := make([][]uint64, len(queries)/dim)
	for qi := range truth {
		var h maxHeap
		q := queries[qi*dim : (qi+1)*dim]
		for i := 0; i < n; i++ {
			var d float32
			if m == metric.Cosine {
				d = 1 - kernels.Dot(q, data[i*dim:(i+1)*dim])
			} else {
				d = kernels.L2Squared(q, data[i*dim:(i+1)*dim])
			}
			if len(h) < k {
				h.push(candidate{d, uint32(i)})
			} else if d < h[0].dist {
				h.replaceTop(candidate{d, uint32(i)})
			}
		}
		sortAscending(h)
		for _, c := range h {
			truth[qi] = append(truth[qi], uint64(c.node))
		}
	}
	return truth
}

// streamReadGBps is this machine's one-thread streaming read bandwidth:
// the best of three passes summing a 256 MiB array (far beyond the
// caches) with four independent accumulators, in GB/s of the calling
// thread's CPU time (as the sweep's QPS: on this shared machine wall time
// counts other processes' turns). It is the physical limit a one-thread
// search's bytes per second are compared with.
func streamReadGBps() float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]uint64, 32<<20)
	for i := range buf {
		buf[i] = uint64(i)
	}
	best := 0.0
	var sink uint64
	for pass := 0; pass < 3; pass++ {
		start := threadCPU()
		var s0, s1, s2, s3 uint64
		for i := 0; i < len(buf); i += 4 {
			s0 += buf[i]
			s1 += buf[i+1]
			s2 += buf[i+2]
			s3 += buf[i+3]
		}
		sink += s0 + s1 + s2 + s3
		best = max(best, float64(8*len(buf))/(threadCPU()-start)/1e9)
	}
	streamSink = sink
	return best
}

// streamSink keeps streamReadGBps's sums live, so the loop is not removed.
var streamSink uint64

// threadCPU is the calling thread's CPU time in seconds.
func threadCPU() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// processCPU is the process's CPU time in seconds (every thread: a build
// runs on every core).
func processCPU() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func loadavg() string {
	raw, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(raw))
}

func cpuModel() string {
	raw, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "model name") {
			return strings.TrimSpace(line[strings.IndexByte(line, ':')+1:])
		}
	}
	return ""
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// envInts is the comma-separated integers of $name, or def.
func envInts(b *testing.B, name string, def []int) []int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i <= 0 {
			b.Fatalf("%s: %q is not a positive integer", name, f)
		}
		out = append(out, i)
	}
	return out
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
