// Command loadgen measures strata-server over loopback: it starts the
// server binary on a free 127.0.0.1 port with a fresh data directory,
// loads n points of dimension d over HTTP (the ingest rate), then runs
// query, filtered query and upsert at each connection count for a fixed
// time, and writes req/s and latency percentiles as JSON.
//
//	go run ./bench/loadgen --server bin/strata-server --out bench/results/server-load.json
//
// The load generator and the server share the machine's cores, so the
// figures are lower bounds for a server with the machine to itself.
package main

import (
	"bytes"
	"context"
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
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	// CPU time (user+system) each process spent during the cell: the
	// generator shares the server's cores, so its cost is the server's loss.
	ServerCPUs         float64 `json:"server_cpu_s"`
	LoadgenCPUs        float64 `json:"loadgen_cpu_s"`
	ServerCPUPerReqUs  float64 `json:"server_cpu_us_per_req"`
	LoadgenCPUPerReqUs float64 `json:"loadgen_cpu_us_per_req"`
}

func main() {
	serverBin := flag.String("server", "bin/strata-server", "strata-server binary")
	n := flag.Int("n", 100_000, "points to load")
	dim := flag.Int("dim", 128, "dimension")
	ef := flag.Int("ef", 64, "query ef")
	batch := flag.Int("batch", 1000, "vectors per ingest request")
	duration := flag.Duration("duration", 5*time.Second, "time per scenario and connection count")
	conns := flag.String("conns", "1,8,32", "connection counts")
	out := flag.String("out", "", "JSON results file (default: stdout only)")
	profile := flag.String("profile", "", "write CPU profiles of the server (via its --debug-addr) and of the generator for every cell into this directory")
	flag.Parse()

	dir, err := os.MkdirTemp("", "strata-load-")
	check(err)
	defer os.RemoveAll(dir)
	port := freePort()
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	args := []string{"--data-dir", dir, "--addr", "127.0.0.1:" + strconv.Itoa(port), "--log-level", "error"}
	debugURL := ""
	if *profile != "" {
		check(os.MkdirAll(*profile, 0o755))
		debugPort := freePort()
		debugURL = "http://127.0.0.1:" + strconv.Itoa(debugPort)
		args = append(args, "--debug-addr", "127.0.0.1:"+strconv.Itoa(debugPort))
	}
	srv := exec.Command(*serverBin, args...)
	srv.Stderr = os.Stderr
	check(srv.Start())
	defer func() {
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}
	waitHealthy(client, url)

	post(client, url+"/collections", fmt.Sprintf(`{"name":"bench","dim":%d,"metric":"l2","fsync":"batch","seed":1}`, *dim))
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
	// Ingest: batches of vectors with a small document each, 2 writers.
	ingestCPU := startCPU(srv.Process.Pid)
	start := time.Now()
	var wg sync.WaitGroup
	bodies := make(chan []byte, 4)
	go func() {
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
				writeVector(&b, point(rng))
			}
			b.WriteString(`],"metadata":[`)
			for i := at; i < end; i++ {
				if i > at {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"bucket":%d}`, i%100)
			}
			b.WriteString(`]}`)
			bodies <- b.Bytes()
		}
		close(bodies)
	}()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for body := range bodies {
				post(client, url+"/collections/bench/upsert", string(body))
			}
		}()
	}
	wg.Wait()
	ingest := time.Since(start).Seconds()
	ingestServerCPU, ingestLoadgenCPU := ingestCPU.stop()
	fmt.Printf("ingest: %d vectors in %.1f s = %.0f vectors/s (cpu: server %.1f s, loadgen %.1f s)\n",
		*n, ingest, float64(*n)/ingest, ingestServerCPU, ingestLoadgenCPU)

	queries := make([][]byte, 2000)
	filtered := make([][]byte, 2000)
	upserts := make([][]byte, 2000)
	for i := range queries {
		var b bytes.Buffer
		b.WriteString(`{"vector":`)
		writeVector(&b, point(rng))
		fmt.Fprintf(&b, `,"k":10,"ef":%d,"include":["distances"]}`, *ef)
		queries[i] = b.Bytes()
		f := bytes.TrimSuffix(append([]byte(nil), queries[i]...), []byte("}"))
		filtered[i] = append(f, `,"filter":{"bucket":{"$lt":10}}}`...)
		var u bytes.Buffer
		fmt.Fprintf(&u, `{"ids":[%d],"vectors":[`, *n+i)
		writeVector(&u, point(rng))
		u.WriteString(`],"metadata":[{"bucket":1}]}`)
		upserts[i] = u.Bytes()
	}
	var cells []cell
	for _, c := range strings.Split(*conns, ",") {
		nc, err := strconv.Atoi(c)
		check(err)
		for _, sc := range []struct {
			name, path string
			bodies     [][]byte
		}{{"query", "/collections/bench/query", queries},
			{"filtered-query-10pct", "/collections/bench/query", filtered},
			{"upsert-1", "/collections/bench/upsert", upserts}} {
			var prof *profiler
			if *profile != "" {
				prof = startProfiles(debugURL, filepath.Join(*profile, fmt.Sprintf("%s-c%d", sc.name, nc)), *duration)
			}
			cpu := startCPU(srv.Process.Pid)
			r := run(client, url+sc.path, sc.bodies, nc, *duration)
			r.ServerCPUs, r.LoadgenCPUs = cpu.stop()
			prof.stop()
			r.Scenario = sc.name
			if r.Requests > 0 {
				r.ServerCPUPerReqUs = r.ServerCPUs / float64(r.Requests) * 1e6
				r.LoadgenCPUPerReqUs = r.LoadgenCPUs / float64(r.Requests) * 1e6
			}
			fmt.Printf("%-22s conns=%-3d %8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  errors %d  cpu/req: server %4.0f us, loadgen %4.0f us\n",
				r.Scenario, r.Connections, r.ReqPerSec, r.P50ms, r.P99ms, r.Errors, r.ServerCPUPerReqUs, r.LoadgenCPUPerReqUs)
			cells = append(cells, r)
		}
	}
	if *out != "" {
		commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
		result := map[string]any{
			"benchmark": "strata-server loopback load", "time": time.Now().UTC().Format(time.RFC3339),
			"commit": strings.TrimSpace(string(commit)), "go": runtime.Version(), "cpus": runtime.NumCPU(),
			"cpu": cpuModel(), "loadavg_at_end": loadAvg(), "n": *n, "dim": *dim, "ef": *ef, "metric": "l2", "fsync": "batch",
			"duration_per_cell_s": duration.Seconds(), "ingest_vectors_per_s": float64(*n) / ingest,
			"ingest_batch": *batch, "ingest_writers": 2,
			"ingest_server_cpu_s": ingestServerCPU, "ingest_loadgen_cpu_s": ingestLoadgenCPU,
			"note": "load generator and server share the machine's cores", "cells": cells,
		}
		data, _ := json.MarshalIndent(result, "", "  ")
		check(os.WriteFile(*out, append(data, '\n'), 0o644))
	}
}

// run sends bodies round-robin from conns goroutines for d.
func run(client *http.Client, url string, bodies [][]byte, conns int, d time.Duration) cell {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	lat := make([][]time.Duration, conns)
	errs := make([]int, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ctx.Err() == nil; i += conns {
				t := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(bodies[i%len(bodies)]))
				if err != nil {
					errs[w]++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs[w]++
				}
				lat[w] = append(lat[w], time.Since(t))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	var all []time.Duration
	nerr := 0
	for w := range conns {
		all = append(all, lat[w]...)
		nerr += errs[w]
	}
	slices.Sort(all)
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[int(p*float64(len(all)-1))].Microseconds()) / 1000
	}
	return cell{Connections: conns, Requests: len(all), Errors: nerr, Seconds: elapsed,
		ReqPerSec: float64(len(all)) / elapsed, P50ms: pct(0.50), P99ms: pct(0.99)}
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

func post(client *http.Client, url, body string) {
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	check(err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		check(fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, data))
	}
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

// cpuMark is the CPU time both processes had used at a cell's start.
type cpuMark struct {
	pid             int
	server, loadgen float64
}

func startCPU(pid int) cpuMark {
	return cpuMark{pid: pid, server: processCPU(pid), loadgen: selfCPU()}
}

// stop returns the CPU seconds each process used since the mark.
func (m cpuMark) stop() (server, loadgen float64) {
	return processCPU(m.pid) - m.server, selfCPU() - m.loadgen
}

// processCPU reads utime+stime of pid from /proc/pid/stat, in seconds.
func processCPU(pid int) float64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	check(err)
	// The command name (field 2) may hold spaces: count from after its ')'.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	utime, err := strconv.ParseFloat(fields[11], 64)
	check(err)
	stime, err := strconv.ParseFloat(fields[12], 64)
	check(err)
	return (utime + stime) / 100 // USER_HZ is 100 on Linux
}

func selfCPU() float64 {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// profiler records a cell's CPU profiles: the server's, fetched from its
// pprof listener, and the generator's own.
type profiler struct {
	base    string
	self    *os.File
	fetched chan error
}

func startProfiles(debugURL, base string, d time.Duration) *profiler {
	p := &profiler{base: base, fetched: make(chan error, 1)}
	seconds := max(1, int(d.Seconds())-1) // pprof takes whole seconds; end inside the cell
	go func() {
		resp, err := http.Get(debugURL + "/debug/pprof/profile?seconds=" + strconv.Itoa(seconds))
		if err != nil {
			p.fetched <- err
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("server profile: %d %s", resp.StatusCode, data)
		}
		if err == nil {
			err = os.WriteFile(base+"-server.pprof", data, 0o644)
		}
		p.fetched <- err
	}()
	var err error
	p.self, err = os.Create(base + "-loadgen.pprof")
	check(err)
	check(pprof.StartCPUProfile(p.self))
	return p
}

func (p *profiler) stop() {
	if p == nil {
		return
	}
	pprof.StopCPUProfile()
	check(p.self.Close())
	check(<-p.fetched)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}
