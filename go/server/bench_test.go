package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// queryBody is a query of dim numbers with digits significant digits
// (-1: as many as float32 needs, 6-9).
func queryBody(rng *rand.Rand, dim, digits int) []byte {
	b := []byte(`{"vector":[`)
	for j := range dim {
		if j > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, rng.NormFloat64(), 'g', digits, 32)
	}
	return append(b, `],"k":10,"ef":64}`...)
}

// BenchmarkDecodeQuery compares reading a 128-d query body with
// encoding/json into []float32 (reflection per element) and with the
// server's path (struct with raw vector, then numberReader).
func BenchmarkDecodeQuery(b *testing.B) {
	body := queryBody(rand.New(rand.NewPCG(1, 1)), 128, -1)
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var req struct {
				Vector []float32 `json:"vector"`
				K      int       `json:"k"`
				Ef     int       `json:"ef"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Shortest round-trip digits (6-9, strconv's general parse) and 6
	// digits (shortFloat's fast path).
	for _, digits := range []int{-1, 6} {
		body := queryBody(rand.New(rand.NewPCG(1, 1)), 128, digits)
		b.Run(fmt.Sprintf("server/digits=%d", digits), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			var vec []float32
			for b.Loop() {
				var req queryRequest
				if err := req.decode(body); err != nil {
					b.Fatal(err)
				}
				var err error
				if vec, err = parseVector(vec[:0], req.Vector, "vector"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQueryHandler is one query through ServeHTTP (no socket) on
// 20,000 points of dimension 128: compare with BenchmarkDecodeQuery/server
// for decoding's share of a request.
func BenchmarkQueryHandler(b *testing.B) {
	s, err := New(Config{DataDir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n, dim = 20_000, 128
	rng := rand.New(rand.NewPCG(1, 2))
	req := httptest.NewRequest("POST", "/collections", bytes.NewReader([]byte(fmt.Sprintf(`{"name":"b","dim":%d,"metric":"l2","fsync":"never","seed":1}`, dim))))
	s.ServeHTTP(httptest.NewRecorder(), req)
	c, err := s.reg.get("b")
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]uint64, n)
	vecs := make([]float32, n*dim)
	for i := range ids {
		ids[i] = uint64(i)
	}
	for i := range vecs {
		vecs[i] = float32(rng.NormFloat64())
	}
	if err := c.Upsert(ids, vecs, nil); err != nil {
		b.Fatal(err)
	}
	bodies := make([][]byte, 256)
	for i := range bodies {
		bodies[i] = queryBody(rng, dim, -1)
	}
	w := &discardWriter{h: http.Header{}}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		r := httptest.NewRequest("POST", "/collections/b/query", bytes.NewReader(bodies[i%len(bodies)]))
		w.status = 0
		s.ServeHTTP(w, r)
		if w.status != 200 {
			b.Fatalf("status %d", w.status)
		}
		i++
	}
}

type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(status int)      { w.status = status }
