// Command loadgen measures strata-server over loopback: it starts the
// server binary on a free 127.0.0.1 port with a fresh data directory,
// loads n points of dimension d over HTTP (the ingest rate), then runs
// query, filtered query and upsert at each connection count for a fixed
// time, and writes req/s, latency percentiles and each process's CPU time
// as JSON.
//
//	go run ./bench/loadgen --server bin/strata-server --out bench/results/server-load/
//
// An --out ending in "/" is a directory: the file is named as every result
// in bench/results is (bench/runinfo.py),
// server-load-<YYYYMMDDTHHMMSSZ>-<commit>[-<label>].json, with --label.
//
// --data DIR loads and queries real vectors instead (the layout of
// ../shared/data/pypi-use512, dataset.go): cosine, n and dim from the
// files, and the query scenario's recall@10 measured once before the
// cells, so that its figures sit beside VectorDBBench's on the same data
// (bench/bench_vectordbbench.py).
//
// The load generator and the server share the machine's cores, so the
// figures are lower bounds for a server with the machine to itself; the
// CPU time each side used per request is reported so that the generator's
// share can be read off. The generator is made cheap for that reason:
// requests are encoded before the clock starts and sent over one raw
// keep-alive HTTP/1.1 connection per worker (client.go); latencies go into
// a fixed histogram (latency.go). --client net/http sends through
// net/http's client instead, for comparison.
//
// A request counts when its answer has status 200 and a body of the
// expected shape ({"results":[{"id":... for queries, {"upserted":... for
// upserts); anything else counts as an error and is not in the latencies.
//
// The two Python clients' requests, byte for byte but for the generator's
// vectors: client-query and client-upsert-1 are what strata.client sends
// for col.query(vec, k=10, ef=ef, include_metadata=False) and
// col.upsert([id], [vec], metadata=[{"bucket": 1}]); with --qdrant the
// server also serves its Qdrant doors, and qdrant-query and
// qdrant-upsert-1 (REST; qdrant-grpc-query and qdrant-grpc-upsert-1 the
// gRPC calls, prefer_grpc=True) are what qdrant-client sends there for
// query_points(query=vec, limit=10, with_payload=False,
// search_params=SearchParams(hnsw_ef=ef)) and upsert(points=[PointStruct(
// id, vector, payload={"bucket": 1})], wait=True), with its headers (the
// -2w variants send each in two writes, header block then body, as
// httpx does; the others in one, as http.client does). Their
// numbers are written as both clients write them (numpy's tolist, then
// json or pydantic: the shortest text of each float32 widened to float64,
// 16-17 digits). The same generator sends both doors' requests, so the
// server's CPU per request compares the doors' own costs at the rates the
// server allows, not at the clients' rates (bench_qdrant_served.py's
// figures are those). Before each cell of these scenarios the generator waits
// until the index holds every point written (the graph builder's work
// after an upsert cell is not charged to the next cell).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type cell struct {
	Scenario    string  `json:"scenario"`
	Connections int     `json:"connections"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	Seconds     float64 `json:"seconds"`
	ReqPerSec   float64 `json:"req_per_s"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	P90ms       float64 `json:"p90_ms"`
	P999ms      float64 `json:"p999_ms"`
	MaxMs       float64 `json:"max_ms"`
	MeanMs      float64 `json:"mean_ms"`
	FirstError  string  `json:"first_error,omitempty"`
	// Checkpoints the collection completed during the cell: each writes a
	// snapshot in the background, on the cores the cell is measured on.
	Checkpoints int `json:"checkpoints"`
	// Tombstones in the index when the cell started: upsert-1 overwrites
	// the same 2,000 ids, and every overwrite leaves a deleted node that
	// searches still walk through until its slot is reused.
	Tombstones int `json:"tombstones_at_start"`
	// CPU time (user+system) each process spent during the cell: the
	// generator shares the server's cores, so its cost is the server's loss.
	ServerCPUs         float64 `json:"server_cpu_s"`
	LoadgenCPUs        float64 `json:"loadgen_cpu_s"`
	ServerCPUPerReqUs  float64 `json:"server_cpu_us_per_req"`
	LoadgenCPUPerReqUs float64 `json:"loadgen_cpu_us_per_req"`
}

// request is one POST, encoded once: wire is the whole HTTP request for
// the raw client, path and body serve net/http's.
type request struct {
	path       string
	body, wire []byte
	// head, if not 0, is the length of wire's header block, sent in a
	// write of its own before the body (the raw client only)
	head int
	// call is the gRPC call's message instead (grpcConn)
	call any
}

// roundTripper sends one request on one connection and returns the
// answer's status and body (valid until its next call).
type roundTripper interface {
	roundTrip(r *request) (status int, body []byte, err error)
}

type rawConn struct{ httpConn }

func (c *rawConn) roundTrip(r *request) (int, []byte, error) {
	return c.httpConn.roundTripIn2(r.wire, r.head)
}

// netHTTPConn sends through net/http's client (its pool picks the socket).
type netHTTPConn struct {
	client *http.Client
	url    string
	buf    bytes.Buffer
}

func (c *netHTTPConn) roundTrip(r *request) (int, []byte, error) {
	resp, err := c.client.Post(c.url+r.path, "application/json", bytes.NewReader(r.body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	c.buf.Reset()
	_, err = c.buf.ReadFrom(resp.Body)
	return resp.StatusCode, c.buf.Bytes(), err
}

func main() {
	serverBin := flag.String("server", "bin/strata-server", "strata-server binary")
	n := flag.Int("n", 100_000, "points to load")
	dim := flag.Int("dim", 128, "dimension")
	ef := flag.Int("ef", 64, "query ef")
	batch := flag.Int("batch", 1000, "vectors per ingest request")
	writers := flag.Int("writers", 2, "concurrent ingest requests")
	duration := flag.Duration("duration", 5*time.Second, "time per scenario and connection count")
	conns := flag.String("conns", "1,8,32", "connection counts")
	scenarios := flag.String("scenarios", "query,filtered-query-10pct,upsert-1", "scenarios to run, in order")
	clientKind := flag.String("client", "raw", "raw (one HTTP/1.1 socket per worker, pre-encoded requests) or net/http")
	out := flag.String("out", "", "JSON results file, or a directory ending in / (default: stdout only)")
	label := flag.String("label", "", "with a directory --out: the variant this run measures, appended to the file name (e.g. query-only)")
	engine := flag.Bool("engine", false, "also build the same collection in this process and time collection.Query alone (no HTTP, no JSON) from 1 and 2 goroutines: the ceiling for the query cells")
	wrk := flag.String("wrk", "", "also run each cell through this wrk binary (a cross-check; off when empty)")
	profile := flag.String("profile", "", "write CPU profiles of the server (via its --debug-addr) and of the generator for every cell into this directory")
	dataDir := flag.String("data", "", "load and query real vectors: a directory laid out as ../shared/data/pypi-use512 (train.f16.npy, test.f16.npy, neighbors.npy); sets n and dim, metric cosine, and measures recall@10 of the query scenario once before the cells")
	serverArgs := flag.String("server-args", "", "more strata-server flags, space-separated (e.g. \"--gomaxprocs 4\")")
	qdrantDoor := flag.Bool("qdrant", false, "also serve the Qdrant REST and gRPC doors and offer the scenarios qdrant-query, qdrant-upsert-1 (and their -2w variants), qdrant-grpc-query and qdrant-grpc-upsert-1: qdrant-client's requests (see the package comment)")
	flag.Parse()
	var ds *dataset
	metricName := "l2"
	if *dataDir != "" {
		if *engine {
			check(fmt.Errorf("--engine builds generated L2 data: not with --data"))
		}
		var err error
		ds, err = loadDataset(*dataDir)
		check(err)
		*n, *dim, metricName = ds.trainRows, ds.dim, "cosine"
	}
	if *clientKind != "raw" && *clientKind != "net/http" {
		check(fmt.Errorf("--client must be raw or net/http, got %q", *clientKind))
	}

	dir, err := os.MkdirTemp("", "strata-load-")
	check(err)
	defer os.RemoveAll(dir)
	host := "127.0.0.1:" + strconv.Itoa(freePort())
	url := "http://" + host
	args := []string{"--data-dir", dir, "--addr", host, "--log-level", "error"}
	qhost, ghost := "", ""
	if *qdrantDoor {
		qhost, ghost = "127.0.0.1:"+strconv.Itoa(freePort()), "127.0.0.1:"+strconv.Itoa(freePort())
		args = append(args, "--qdrant-addr", qhost, "--qdrant-grpc-addr", ghost)
	}
	debugURL := ""
	if *profile != "" {
		check(os.MkdirAll(*profile, 0o755))
		debugHost := "127.0.0.1:" + strconv.Itoa(freePort())
		debugURL = "http://" + debugHost
		args = append(args, "--debug-addr", debugHost)
	}
	args = append(args, strings.Fields(*serverArgs)...)
	srv := exec.Command(*serverBin, args...)
	srv.Stderr = os.Stderr
	check(srv.Start())
	var stopOnce sync.Once
	stopServer := func() {
		stopOnce.Do(func() {
			srv.Process.Signal(syscall.SIGTERM)
			srv.Wait()
		})
	}
	defer stopServer()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}
	waitHealthy(client, url)
	newConn := func() roundTripper {
		if *clientKind == "net/http" {
			return &netHTTPConn{client: client, url: url}
		}
		return &rawConn{httpConn{addr: host}}
	}

	post(client, url+"/collections", fmt.Sprintf(`{"name":"bench","dim":%d,"metric":%q,"fsync":"batch","seed":1}`, *dim, metricName))
	rng := rand.New(rand.NewPCG(1, 2))
	centres := make([][]float32, 100)
	for i := range centres {
		centres[i] = make([]float32, *dim)
		for j := range centres[i] {
			centres[i][j] = float32(rng.NormFloat64())
		}
	}
	point := func(r *rand.Rand) []float32 {
		c := centres[r.IntN(len(centres))]
		v := make([]float32, len(c))
		for j := range v {
			v[j] = c[j] + 0.3*float32(r.NormFloat64())
		}
		return v
	}
	var data *engineData
	if *engine {
		data = &engineData{dim: *dim}
	}
	newRequest := func(path string, body []byte) request {
		return request{path: path, body: body, wire: requestBytes(host, path, body)}
	}

	// Ingest: batches of vectors with a small document each, encoded
	// before the clock starts (formatting the floats would otherwise take
	// the server's CPU), sent by `writers` connections.
	var ingestBodies []request
	for at := 0; at < *n; at += *batch {
		var b bytes.Buffer
		b.WriteString(`{"ids":[`)
		end := min(at+*batch, *n)
		for i := at; i < end; i++ {
			if i > at {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(i))
		}
		b.WriteString(`],"vectors":[`)
		for i := at; i < end; i++ {
			if i > at {
				b.WriteByte(',')
			}
			v := point(rng)
			if ds != nil {
				v = ds.train[i*ds.dim : (i+1)*ds.dim]
			}
			writeVector(&b, v)
			if data != nil {
				data.vectors = append(data.vectors, round6(v)...)
			}
		}
		b.WriteString(`],"metadata":[`)
		for i := at; i < end; i++ {
			if i > at {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"bucket":%d}`, i%100)
		}
		b.WriteString(`]}`)
		ingestBodies = append(ingestBodies, newRequest("/collections/bench/upsert", b.Bytes()))
	}
	var ingestProf *profiler
	if *profile != "" { // the first `duration` of the ingest
		ingestProf = startProfiles(debugURL, filepath.Join(*profile, "ingest"), *duration+time.Second)
	}
	ingestCPU := startCPU(srv.Process.Pid)
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range *writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt := newConn()
			for i := next.Add(1) - 1; i < int64(len(ingestBodies)); i = next.Add(1) - 1 {
				status, body, err := rt.roundTrip(&ingestBodies[i])
				if err == nil {
					err = answerError(status, body, `{"upserted":`)
				}
				check(err)
			}
		}()
	}
	wg.Wait()
	ingest := time.Since(start).Seconds()
	ingestServerCPU, ingestLoadgenCPU := ingestCPU.stop()
	ingestCheckpoints, _ := collectionInfo(client, url)
	ingestProf.stop()
	ingestBodies = nil
	fmt.Printf("ingest: %d vectors in %.1f s = %.0f vectors/s (cpu: server %.1f s, loadgen %.1f s; checkpoints %d)\n",
		*n, ingest, float64(*n)/ingest, ingestServerCPU, ingestLoadgenCPU, ingestCheckpoints)

	queries := make([]request, 2000)
	filtered := make([]request, 2000)
	upserts := make([]request, 2000)
	for i := range queries {
		var b bytes.Buffer
		b.WriteString(`{"vector":`)
		v := point(rng)
		if ds != nil {
			v = ds.test[i%ds.tests*ds.dim : (i%ds.tests+1)*ds.dim]
		}
		writeVector(&b, v)
		if data != nil {
			data.queries = append(data.queries, round6(v)...)
		}
		fmt.Fprintf(&b, `,"k":10,"ef":%d,"include":["distances"]}`, *ef)
		queries[i] = newRequest("/collections/bench/query", b.Bytes())
		f := bytes.TrimSuffix(append([]byte(nil), b.Bytes()...), []byte("}"))
		filtered[i] = newRequest("/collections/bench/query", append(f, `,"filter":{"bucket":{"$lt":10}}}`...))
		var u bytes.Buffer
		fmt.Fprintf(&u, `{"ids":[%d],"vectors":[`, *n+i)
		writeVector(&u, point(rng))
		u.WriteString(`],"metadata":[{"bucket":1}]}`)
		upserts[i] = newRequest("/collections/bench/upsert", u.Bytes())
	}
	recall := -1.0
	if ds != nil {
		recall = measureRecall(newConn(), queries, ds, 10)
		fmt.Printf("recall@10 of the query scenario over %d queries: %.4f\n", min(len(queries), ds.tests), recall)
	}
	type scenario struct {
		reqs    []request
		want    string              // the answer's prefix
		conn    func() roundTripper // default newConn (the native door's port)
		indexed bool                // wait for the index before the cell
		idle    bool                // no requests: the server's CPU while it waits
	}
	known := map[string]scenario{
		"query":                {reqs: queries, want: `{"results":[{"id":`},
		"filtered-query-10pct": {reqs: filtered, want: `{"results":[{"id":`},
		"upsert-1":             {reqs: upserts, want: `{"upserted":1}`},
	}
	// The Python clients' requests (the package comment).
	clientQueries, clientUpserts := make([]request, len(queries)), make([]request, len(queries))
	var qdrantQueries, qdrantUpserts, grpcQueries, grpcUpserts []request
	if *qdrantDoor {
		qdrantQueries, qdrantUpserts = make([]request, len(queries)), make([]request, len(queries))
		grpcQueries, grpcUpserts = make([]request, len(queries)), make([]request, len(queries))
	}
	// Their upserts overwrite ids written once here, so that every cell
	// of either door does the same work (the first would insert, the
	// rest overwrite and leave tombstones).
	var prewrite bytes.Buffer
	prewrite.WriteString(`{"ids":[`)
	for i := range clientQueries {
		if i > 0 {
			prewrite.WriteByte(',')
		}
		prewrite.WriteString(strconv.Itoa(*n + i))
	}
	prewrite.WriteString(`],"vectors":[`)
	for i := range clientQueries {
		v, u := point(rng), point(rng)
		if i > 0 {
			prewrite.WriteByte(',')
		}
		prewrite.Write(pyVector(u))
		if ds != nil {
			v = ds.test[i%ds.tests*ds.dim : (i%ds.tests+1)*ds.dim]
		}
		q := fmt.Appendf(nil, `{"k":10,"include":["distances"],"ef":%d,"vectors":[%s]}`, *ef, pyVector(v))
		clientQueries[i] = request{wire: requestWith("POST", host, "/collections/bench/query", strataClientHeaders, q)}
		w := fmt.Appendf(nil, `{"ids":[%d],"vectors":[%s],"metadata":[{"bucket":1}]}`, *n+i, pyVector(u))
		clientUpserts[i] = request{wire: requestWith("POST", host, "/collections/bench/upsert", strataClientHeaders, w)}
		if qdrantQueries == nil {
			continue
		}
		q = fmt.Appendf(nil, `{"query":{"nearest":%s},"params":{"hnsw_ef":%d},"limit":10,"with_vector":false,"with_payload":false}`, pyVector(v), *ef)
		qdrantQueries[i] = request{wire: requestWith("POST", qhost, "/collections/bench/points/query", qdrantClientHeaders, q)}
		w = fmt.Appendf(nil, `{"points":[{"id":%d,"vector":%s,"payload":{"bucket":1}}]}`, *n+i, pyVector(u))
		qdrantUpserts[i] = request{wire: requestWith("PUT", qhost, "/collections/bench/points?wait=true", qdrantClientHeaders, w)}
		grpcQueries[i], grpcUpserts[i] = request{call: grpcQuery(v, *ef)}, request{call: grpcUpsert(uint64(*n+i), u)}
	}
	prewrite.WriteString(`]}`)
	// The server's own CPU with no requests at all (its background work
	// after the index caught up): at a low request rate, this is charged
	// to each request of a cell.
	known["idle"] = scenario{idle: true, indexed: true}
	known["client-query"] = scenario{reqs: clientQueries, want: `{"results":[[{"id":`, indexed: true}
	known["client-upsert-1"] = scenario{reqs: clientUpserts, want: `{"upserted":1}`, indexed: true}
	if qdrantQueries != nil {
		rest := func() roundTripper { return &rawConn{httpConn{addr: qhost}} }
		known["qdrant-query"] = scenario{reqs: qdrantQueries, want: `{"result":{"points":[{"id":`, conn: rest, indexed: true}
		known["qdrant-upsert-1"] = scenario{reqs: qdrantUpserts, want: `{"result":{"operation_id":`, conn: rest, indexed: true}
		viaGRPC := func() roundTripper { return newGRPCConn(ghost) }
		known["qdrant-grpc-query"] = scenario{reqs: grpcQueries, want: grpcAnswer, conn: viaGRPC, indexed: true}
		known["qdrant-grpc-upsert-1"] = scenario{reqs: grpcUpserts, want: grpcAnswer, conn: viaGRPC, indexed: true}
		// the same, each sent in two writes as httpx sends it
		in2 := func(reqs []request) []request {
			out := make([]request, len(reqs))
			for i, r := range reqs {
				out[i] = r
				out[i].head = bytes.Index(r.wire, []byte("\r\n\r\n")) + 4
			}
			return out
		}
		known["qdrant-query-2w"] = scenario{reqs: in2(qdrantQueries), want: known["qdrant-query"].want, conn: rest, indexed: true}
		known["qdrant-upsert-1-2w"] = scenario{reqs: in2(qdrantUpserts), want: known["qdrant-upsert-1"].want, conn: rest, indexed: true}
	}
	prewritten := false
	for _, name := range strings.Split(*scenarios, ",") {
		if !known[name].indexed {
			continue
		}
		// their requests are encoded whole (request.wire, request.call)
		if *clientKind != "raw" || *wrk != "" {
			check(fmt.Errorf("scenario %s takes the raw client and no --wrk", name))
		}
		if !prewritten && strings.Contains(name, "upsert") {
			post(client, url+"/collections/bench/upsert", prewrite.String())
			prewritten = true
		}
	}
	var cells []cell
	for _, c := range strings.Split(*conns, ",") {
		nc, err := strconv.Atoi(c)
		check(err)
		for _, name := range strings.Split(*scenarios, ",") {
			sc, ok := known[name]
			if !ok {
				check(fmt.Errorf("unknown scenario %q", name))
			}
			var prof *profiler
			if *profile != "" {
				prof = startProfiles(debugURL, filepath.Join(*profile, fmt.Sprintf("%s-c%d", name, nc)), *duration)
			}
			if sc.indexed {
				waitIndexed(client, url)
			}
			checkpoints, tombstones := collectionInfo(client, url)
			conn := newConn
			if sc.conn != nil {
				conn = sc.conn
			}
			cpu := startCPU(srv.Process.Pid)
			var r cell
			if sc.idle {
				time.Sleep(*duration)
				r = cell{Connections: nc, Seconds: duration.Seconds()}
			} else {
				r = run(conn, sc.reqs, sc.want, nc, *duration)
			}
			r.ServerCPUs, r.LoadgenCPUs = cpu.stop()
			checkpointsAfter, _ := collectionInfo(client, url)
			r.Checkpoints, r.Tombstones = checkpointsAfter-checkpoints, tombstones
			prof.stop()
			r.Scenario = name
			if r.Requests > 0 {
				r.ServerCPUPerReqUs = r.ServerCPUs / float64(r.Requests) * 1e6
				r.LoadgenCPUPerReqUs = r.LoadgenCPUs / float64(r.Requests) * 1e6
			}
			fmt.Printf("%-22s conns=%-3d %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  errors %d  cpu/req: server %4.0f us, loadgen %4.0f us  checkpoints %d tombstones %d\n",
				r.Scenario, r.Connections, r.ReqPerSec, r.P50ms, r.P99ms, r.Errors, r.ServerCPUPerReqUs, r.LoadgenCPUPerReqUs, r.Checkpoints, r.Tombstones)
			if r.FirstError != "" {
				fmt.Printf("  first error: %s\n", r.FirstError)
			}
			if sc.idle {
				fmt.Printf("  idle: the server used %.1f ms of CPU per second\n", r.ServerCPUs/r.Seconds*1e3)
			}
			cells = append(cells, r)
			if *wrk != "" {
				cpu := startCPU(srv.Process.Pid)
				w, err := runWrk(*wrk, url, dir, sc.reqs, nc, *duration)
				check(err)
				w.ServerCPUs, _ = cpu.stop()
				w.Scenario = name + " (wrk)"
				if w.Requests > 0 {
					w.ServerCPUPerReqUs = w.ServerCPUs / float64(w.Requests) * 1e6
					w.LoadgenCPUPerReqUs = w.LoadgenCPUs / float64(w.Requests) * 1e6
				}
				fmt.Printf("%-22s conns=%-3d %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  errors %d  cpu/req: server %4.0f us, wrk     %4.0f us\n",
					w.Scenario, w.Connections, w.ReqPerSec, w.P50ms, w.P99ms, w.Errors, w.ServerCPUPerReqUs, w.LoadgenCPUPerReqUs)
				cells = append(cells, w)
			}
		}
	}
	engineBuild := 0.0
	if data != nil {
		// The server goes first: its vacuums and checkpoints would share
		// the cores with the in-process build (22.4k vectors/s beside
		// them, against 32.7k over HTTP in the same run).
		stopServer()
		var engineCells []cell
		engineCells, engineBuild, err = runEngine(dir, data, *batch, *ef, *duration)
		check(err)
		fmt.Printf("engine: %d vectors upserted in process at %.0f vectors/s\n", len(data.vectors) / *dim, engineBuild)
		for _, r := range engineCells {
			fmt.Printf("%-22s threads=%d %8.0f q/s    p50 %6.2f ms  p99 %6.2f ms  cpu/query %4.0f us\n",
				r.Scenario, r.Connections, r.ReqPerSec, r.P50ms, r.P99ms, r.LoadgenCPUPerReqUs)
		}
		cells = append(cells, engineCells...)
	}
	if *out != "" {
		commit, _ := exec.Command("git", "rev-parse", "--short=7", "HEAD").Output()
		now := time.Now().UTC()
		result := map[string]any{
			"benchmark": "strata-server loopback load", "time": now.Format(time.RFC3339),
			"commit": strings.TrimSpace(string(commit)), "go": runtime.Version(), "cpus": runtime.NumCPU(),
			"cpu": cpuModel(), "loadavg_at_end": loadAvg(), "n": *n, "dim": *dim, "ef": *ef, "metric": metricName, "fsync": "batch", "data": *dataDir, "recall_at_10": recall,
			"duration_per_cell_s": duration.Seconds(), "ingest_vectors_per_s": float64(*n) / ingest,
			"ingest_batch": *batch, "ingest_writers": *writers,
			"ingest_server_cpu_s": ingestServerCPU, "ingest_loadgen_cpu_s": ingestLoadgenCPU, "ingest_checkpoints": ingestCheckpoints,
			"client": *clientKind, "engine_upsert_vectors_per_s": engineBuild, "server_args": *serverArgs,
			"note": "load generator and server share the machine's cores", "cells": cells,
		}
		data, _ := json.MarshalIndent(result, "", "  ")
		path := *out
		if strings.HasSuffix(path, "/") {
			path = filepath.Join(path, resultName(now, strings.TrimSpace(string(commit)), *label))
			check(os.MkdirAll(filepath.Dir(path), 0o755))
		}
		check(os.WriteFile(path, append(data, '\n'), 0o644))
		fmt.Fprintln(os.Stderr, "wrote", path)
	}
}

// answerError says what is wrong with an answer, or nil if it has status
// 200 and a body starting with want.
func answerError(status int, body []byte, want string) error {
	if status != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", status, body)
	}
	if !bytes.HasPrefix(body, []byte(want)) {
		return fmt.Errorf("answer does not start with %s: %.200s", want, body)
	}
	return nil
}

// run sends reqs round-robin from conns workers, one connection each, for
// d; requests in flight at the end are waited for and counted.
func run(newConn func() roundTripper, reqs []request, want string, conns int, d time.Duration) cell {
	errs := make([]int, conns)
	firstErr := make([]error, conns)
	r := timed(conns, d, func(w int, stop *atomic.Bool, lat *latencies) {
		rt := newConn()
		if c, ok := rt.(interface{ close() }); ok {
			defer c.close()
		}
		for i := w; !stop.Load(); i += conns {
			t := time.Now()
			status, body, err := rt.roundTrip(&reqs[i%len(reqs)])
			elapsed := time.Since(t)
			if err == nil {
				err = answerError(status, body, want)
			}
			if err != nil {
				if firstErr[w] == nil {
					firstErr[w] = err
				}
				errs[w]++
				if status == 0 { // the connection failed: do not spin
					time.Sleep(time.Millisecond)
				}
				continue
			}
			lat.record(elapsed)
		}
	})
	for w := range conns {
		r.Errors += errs[w]
		if firstErr[w] != nil && r.FirstError == "" {
			r.FirstError = firstErr[w].Error()
		}
	}
	return r
}

// timed runs work(w, stop, latencies of w) on n goroutines; stop is set
// after d, and the cell holds the merged latencies and the rate.
func timed(n int, d time.Duration, work func(w int, stop *atomic.Bool, lat *latencies)) cell {
	var stop atomic.Bool
	lat := make([]latencies, n)
	var wg sync.WaitGroup
	start := time.Now()
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()
	for w := range n {
		wg.Go(func() { work(w, &stop, &lat[w]) })
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	var all latencies
	for w := range n {
		all.merge(&lat[w])
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return cell{Connections: n, Requests: int(all.n), Seconds: elapsed, ReqPerSec: float64(all.n) / elapsed,
		P50ms: ms(all.quantile(0.50)), P90ms: ms(all.quantile(0.90)), P99ms: ms(all.quantile(0.99)),
		P999ms: ms(all.quantile(0.999)), MaxMs: ms(all.max), MeanMs: ms(all.mean())}
}

func writeVector(b *bytes.Buffer, v []float32) {
	b.WriteByte('[')
	for j, f := range v {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(f), 'g', 6, 32))
	}
	b.WriteByte(']')
}

// pyVector is v as the Python clients write it: numpy's tolist widens
// each float32 to a float64, and json (strata.client) and pydantic
// (qdrant-client) write its repr, the shortest text, 16-17 digits.
func pyVector(v []float32) []byte {
	b := []byte{'['}
	for j, f := range v {
		if j > 0 {
			b = append(b, ',')
		}
		b = appendRepr(b, float64(f))
	}
	return append(b, ']')
}

// appendRepr appends Python's repr of a finite x: the shortest digits,
// in exponent form when the exponent is below -4 or above 15, and with
// ".0" when they would read as an integer.
func appendRepr(b []byte, x float64) []byte {
	e := strconv.AppendFloat(nil, x, 'e', -1, 64)
	exp, _ := strconv.Atoi(string(e[bytes.IndexByte(e, 'e')+1:]))
	if exp < -4 || exp >= 16 {
		return append(b, e...)
	}
	at := len(b)
	b = strconv.AppendFloat(b, x, 'f', -1, 64)
	if bytes.IndexByte(b[at:], '.') < 0 {
		b = append(b, ".0"...)
	}
	return b
}

// The header lines each Python client sends besides Host, Content-Type
// and Content-Length: http.client's for strata.client, httpx's with
// qdrant-client's User-Agent (qdrant-client 1.20 on CPython 3.11).
const (
	strataClientHeaders = "Accept-Encoding: identity\r\nAccept: application/json\r\n"
	qdrantClientHeaders = "Accept: */*\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n" +
		"User-Agent: python-client/1.20.0 python/3.11.2\r\n"
)

// waitIndexed waits until the index holds every point written (the
// collection's tail_rows is 0) and no merge is building (merging false),
// twice in a row more than the collection's once-a-second merge check
// apart. A cell's overwrites leave tombstones whose merge otherwise runs in the
// next cell and is charged to it (the REST door's upsert cells, run
// after the native door's, paid for its merges).
func waitIndexed(client *http.Client, url string) {
	settledOnce := false
	for range 6000 {
		resp, err := client.Get(url + "/collections/bench")
		check(err)
		var info struct {
			TailRows *int  `json:"tail_rows"`
			Merging  *bool `json:"merging"`
		}
		err = json.NewDecoder(resp.Body).Decode(&info)
		resp.Body.Close()
		check(err)
		if info.TailRows == nil || info.Merging == nil {
			check(fmt.Errorf("GET /collections/bench: no \"tail_rows\" or \"merging\" in the answer"))
		}
		if *info.TailRows == 0 && !*info.Merging {
			if settledOnce {
				return
			}
			settledOnce = true
			time.Sleep(1200 * time.Millisecond)
			continue
		}
		settledOnce = false
		time.Sleep(50 * time.Millisecond)
	}
	check(fmt.Errorf("the index and its merges did not settle in 5 minutes"))
}

func post(client *http.Client, url, body string) {
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	check(err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		check(fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, data))
	}
}

// collectionInfo reads the collection's completed checkpoints and its
// index's tombstones.
func collectionInfo(client *http.Client, url string) (checkpoints, tombstones int) {
	resp, err := client.Get(url + "/collections/bench")
	check(err)
	defer resp.Body.Close()
	var info struct {
		Checkpoints *int `json:"checkpoints"`
		Tombstones  *int `json:"tombstones"`
	}
	check(json.NewDecoder(resp.Body).Decode(&info))
	if info.Checkpoints == nil || info.Tombstones == nil {
		check(fmt.Errorf("GET /collections/bench: no \"checkpoints\" or \"tombstones\" in the answer"))
	}
	return *info.Checkpoints, *info.Tombstones
}

func waitHealthy(client *http.Client, url string) {
	for range 600 {
		if resp, err := client.Get(url + "/health"); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	check(fmt.Errorf("server at %s did not start", url))
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for line := range strings.SplitSeq(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return ""
}

// loadAvg reports /proc/loadavg: on a shared machine, other work skews
// every figure, and this says by how much the machine was busy.
func loadAvg() string {
	data, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(data))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// resultName is bench/results' file name for a run at now of commit:
// server-load-<YYYYMMDDTHHMMSSZ>-<commit>[-<label>].json (bench/runinfo.py).
func resultName(now time.Time, commit, label string) string {
	if commit == "" {
		commit = "nogit"
	}
	name := "server-load-" + now.UTC().Format("20060102T150405Z") + "-" + commit
	if label != "" {
		name += "-" + label
	}
	return name + ".json"
}
