package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

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
