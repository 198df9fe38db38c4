package text

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// BenchmarkIndexPypiSummaries is the text half of a collection's rebuild
// at Open: indexing the 30k pypi-demo summaries (skipped without the
// shared data).
func BenchmarkIndexPypiSummaries(b *testing.B) {
	f, err := os.Open("../../../../shared/data/pypi-demo/docs.jsonl")
	if err != nil {
		b.Skip("shared data absent:", err)
	}
	defer f.Close()
	var ids []uint64
	var texts []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d struct {
			ID      uint64 `json:"id"`
			Summary string `json:"summary"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			b.Fatal(err)
		}
		ids, texts = append(ids, d.ID), append(texts, d.Summary)
	}
	a, _ := ParseAnalyzer(AnalyzerEnglish)
	b.ResetTimer()
	for b.Loop() {
		NewIndex(a).PutBatch(ids, texts)
	}
	b.ReportMetric(float64(len(ids)), "docs")
}
