package synth

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// PypiSummaries returns the summary of every pypi-demo row
// (DataDir/pypi-demo/docs.jsonl), in file order: row i's summary goes
// with row i of its vectors.f16.npy.
func PypiSummaries() ([]string, error) {
	path := filepath.Join(DataDir(), "pypi-demo", "docs.jsonl")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d struct {
			Summary string `json:"summary"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("synth: %s line %d: %w", path, len(out)+1, err)
		}
		out = append(out, d.Summary)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("synth: %s: %w", path, err)
	}
	return out, nil
}
