package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// serverBinary builds strata-server once per test run, or takes
// $STRATA_SERVER_BINARY (to run the test against another build).
func serverBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("STRATA_SERVER_BINARY"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "strata-server")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type process struct {
	cmd *exec.Cmd
	url string
	log *bytes.Buffer
}

var listening = regexp.MustCompile(`msg=listening addr=(\S+)`)

// start runs the server on dataDir and returns once it listens (it says
// so in its log: no polling, no sleeping).
func start(t *testing.T, bin, dataDir string) *process {
	t.Helper()
	cmd := exec.Command(bin, "--data-dir", dataDir, "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, log: new(bytes.Buffer)}
	t.Cleanup(func() { p.kill() })
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		p.log.WriteString(lines.Text() + "\n")
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			p.url = "http://" + m[1]
			go io.Copy(p.log, stderr) // keep the pipe drained
			return p
		}
	}
	t.Fatalf("strata-server exited before listening:\n%s", p.log)
	return nil
}

func (p *process) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

func (p *process) do(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, p.url+path, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v\nserver log:\n%s", method, path, err, p.log)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (p *process) must(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	status, out := p.do(t, method, path, body)
	if status/100 != 2 {
		t.Fatalf("%s %s: %d %v", method, path, status, out)
	}
	return out
}

// The repro: 17 of 40 SIGKILLs during a DELETE left <data>/<name>/
// behind, and the name answered 409 to create and 404 to GET and DELETE
// for good. Wherever the kill lands, after a restart the collection must
// be either whole (and droppable) or gone (and creatable), and the data
// dir must hold nothing else.
func TestKillDuringDeleteLeavesTheNameUsable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	bin := serverBinary(t)
	dataDir := t.TempDir()
	const points, dim = 1000, 64
	ids := make([]int, points)
	vectors := make([][]float32, points)
	for i := range ids {
		ids[i] = i
		vectors[i] = make([]float32, dim)
		for j := range vectors[i] {
			vectors[i][j] = float32((i*31+j*17)%101) / 101
		}
	}
	fill := func(p *process) {
		p.must(t, "POST", "/collections", map[string]any{"name": "docs", "dim": dim, "fsync": "batch"})
		p.must(t, "POST", "/collections/docs/upsert", map[string]any{"ids": ids, "vectors": vectors})
		// Checkpointed, so that the drop's close writes nothing and the
		// kills land in the removal of the files, where they did harm.
		p.must(t, "POST", "/collections/docs/checkpoint", nil)
	}
	// How long one whole DELETE takes here, to spread the kills over it.
	p := start(t, bin, dataDir)
	fill(p)
	began := time.Now()
	p.must(t, "DELETE", "/collections/docs", nil)
	took := time.Since(began)
	p.kill()

	const rounds = 16
	var outcomes []string
	for round := range rounds {
		p := start(t, bin, dataDir)
		if status, _ := p.do(t, "GET", "/collections/docs", nil); status == 200 {
			p.must(t, "DELETE", "/collections/docs", nil)
			outcomes = append(outcomes, "kept")
		} else if round > 0 {
			outcomes = append(outcomes, "dropped")
		}
		fill(p)
		deleted := make(chan struct{})
		go func() {
			defer close(deleted)
			req, _ := http.NewRequest("DELETE", p.url+"/collections/docs", nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		// Kill points spread over the drop (and a little past it); the
		// verdict does not depend on where they land.
		time.Sleep(took * time.Duration(round) / (rounds - 2))
		p.kill()
		<-deleted

		entries, err := os.ReadDir(dataDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "docs" && !strings.HasPrefix(e.Name(), ".") {
				t.Fatalf("round %d: the data dir holds %q", round, e.Name())
			}
		}
	}
	p = start(t, bin, dataDir)
	status, out := p.do(t, "GET", "/collections/docs", nil)
	if status == 200 {
		p.must(t, "DELETE", "/collections/docs", nil)
	} else if status != 404 {
		t.Fatalf("after the last kill: %d %v", status, out)
	}
	p.must(t, "POST", "/collections", map[string]any{"name": "docs", "dim": dim})
	if entries, _ := os.ReadDir(dataDir); len(entries) != 1 {
		t.Fatalf("after the restarts the data dir holds %d entries, want only docs", len(entries))
	}
	t.Logf("a whole DELETE took %v; after each kill the collection was: %s", took, fmt.Sprint(outcomes))
}
