package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// runWrk runs the same requests through wrk (C, one epoll thread), as a
// cross-check of the Go generator: wrk's own CPU time is its child rusage.
// Its status check is coarser (any non-2xx counts as an error; bodies are
// not looked at), so the Go generator stays the reference.
func runWrk(wrk, url, dir string, reqs []request, conns int, d time.Duration) (cell, error) {
	var bodies bytes.Buffer
	for _, r := range reqs {
		if bytes.IndexByte(r.body, '\n') >= 0 {
			return cell{}, fmt.Errorf("wrk: a body holds a newline")
		}
		bodies.Write(r.body)
		bodies.WriteByte('\n')
	}
	bodiesFile := filepath.Join(dir, "wrk-bodies.txt")
	scriptFile := filepath.Join(dir, "wrk.lua")
	// Requests are formatted once per thread at start, then cycled; at
	// that point wrk has not set its Host header yet, so it is given here.
	script := fmt.Sprintf(`local reqs = {}
for line in io.lines(%q) do
  reqs[#reqs+1] = wrk.format("POST", %q, {["Host"]=%q, ["Content-Type"]="application/json"}, line)
end
local i = 0
request = function()
  i = i %% #reqs + 1
  return reqs[i]
end
`, bodiesFile, reqs[0].path, strings.TrimPrefix(url, "http://"))
	if err := os.WriteFile(bodiesFile, bodies.Bytes(), 0o644); err != nil {
		return cell{}, err
	}
	if err := os.WriteFile(scriptFile, []byte(script), 0o644); err != nil {
		return cell{}, err
	}
	cmd := exec.Command(wrk, "-t1", "-c"+strconv.Itoa(conns), "-d"+strconv.Itoa(max(1, int(d.Seconds())))+"s",
		"--latency", "-s", scriptFile, url)
	out, err := cmd.Output()
	if err != nil {
		return cell{}, fmt.Errorf("wrk: %v: %s", err, out)
	}
	r, err := parseWrk(string(out))
	r.Connections = conns
	r.LoadgenCPUs = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	return r, err
}

var (
	wrkTotal   = regexp.MustCompile(`(\d+) requests in ([\d.]+)(us|ms|s|m)`)
	wrkRate    = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	wrkPct     = regexp.MustCompile(`(?m)^\s+(50|90|99)%\s+([\d.]+)(us|ms|s)$`)
	wrkLatency = regexp.MustCompile(`Latency\s+([\d.]+)(us|ms|s)\s+[\d.]+\w+\s+([\d.]+)(us|ms|s)`)
	wrkNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkSocket  = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

func wrkMs(value, unit string) float64 {
	v, _ := strconv.ParseFloat(value, 64)
	switch unit {
	case "us":
		return v / 1000
	case "s":
		return v * 1000
	case "m":
		return v * 60000
	}
	return v
}

// parseWrk reads wrk's report (with --latency).
func parseWrk(out string) (cell, error) {
	var r cell
	m := wrkTotal.FindStringSubmatch(out)
	rate := wrkRate.FindStringSubmatch(out)
	if m == nil || rate == nil {
		return r, fmt.Errorf("wrk: unreadable report: %s", out)
	}
	r.Requests, _ = strconv.Atoi(m[1])
	r.Seconds = wrkMs(m[2], m[3]) / 1000
	r.ReqPerSec, _ = strconv.ParseFloat(rate[1], 64)
	for _, p := range wrkPct.FindAllStringSubmatch(out, -1) {
		switch p[1] {
		case "50":
			r.P50ms = wrkMs(p[2], p[3])
		case "90":
			r.P90ms = wrkMs(p[2], p[3])
		case "99":
			r.P99ms = wrkMs(p[2], p[3])
		}
	}
	if l := wrkLatency.FindStringSubmatch(out); l != nil {
		r.MeanMs, r.MaxMs = wrkMs(l[1], l[2]), wrkMs(l[3], l[4])
	}
	if e := wrkNon2xx.FindStringSubmatch(out); e != nil {
		n, _ := strconv.Atoi(e[1])
		r.Errors += n
		r.FirstError = "non-2xx answers"
	}
	if e := wrkSocket.FindStringSubmatch(out); e != nil {
		for _, s := range e[1:] {
			n, _ := strconv.Atoi(s)
			r.Errors += n
		}
		if r.FirstError == "" {
			r.FirstError = strings.TrimSpace(e[0])
		}
	}
	// wrk counts error answers among its requests; the Go generator does not.
	r.Requests -= r.Errors
	return r, nil
}
