package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/strata-db/strata/go/collection"
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
				if err := req.decode(body, nil); err != nil {
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
	const dim = 128
	s := benchServer(b, 20_000, dim)
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 3))
	bodies := make([][]byte, 256)
	for i := range bodies {
		bodies[i] = queryBody(rng, dim, -1)
	}
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
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

// BenchmarkQueryOverSocket is the load generator's query (k=10, ef=64,
// distances only) through a real loopback connection and net/http, on
// 20,000 points of dimension 128, one request at a time on one keep-alive
// connection. The client writes pre-encoded requests and reads answers
// without allocating, so allocs/op is what the server allocates per
// request, net/http's share included.
func BenchmarkQueryOverSocket(b *testing.B) {
	s := benchServer(b, 20_000, 128)
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := s.HTTPServer(Timeouts{})
	go hs.Serve(ln)
	defer hs.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	wires := make([][]byte, 256)
	for i := range wires {
		body := queryBody(rng, 128, 6)
		body = append(body[:len(body)-1], `,"include":["distances"]}`...)
		wires[i] = fmt.Appendf(nil, "POST /collections/b/query HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	rd := bufio.NewReaderSize(conn, 64<<10)
	roundTrip := func(wire []byte) {
		if _, err := conn.Write(wire); err != nil {
			b.Fatal(err)
		}
		length := -1
		for {
			line, err := rd.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if len(line) <= 2 {
				break
			}
			if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
				length = 0
				for _, c := range bytes.TrimSpace(v) {
					length = length*10 + int(c-'0')
				}
			}
		}
		if length < 0 {
			b.Fatal("answer without Content-Length")
		}
		if _, err := rd.Discard(length); err != nil {
			b.Fatal(err)
		}
	}
	for _, w := range wires { // warm the pools and the connection
		roundTrip(w)
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		roundTrip(wires[i%len(wires)])
		i++
	}
}

// benchServer is a server holding collection "b" of n random points.
func benchServer(b testing.TB, n, dim int) *Server {
	s, err := New(Config{DataDir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/collections", bytes.NewReader([]byte(fmt.Sprintf(`{"name":"b","dim":%d,"metric":"l2","fsync":"never","seed":1}`, dim))))
	s.ServeHTTP(httptest.NewRecorder(), req)
	c, err := s.reg.Get("b")
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]uint64, n)
	vecs := make([]float32, n*dim)
	for i := range ids {
		ids[i] = uint64(i)
	}
	for i := range vecs {
		vecs[i] = float32(rng.NormFloat64())
	}
	if err := c.Upsert(collection.IntIDs(ids), vecs, nil); err != nil {
		b.Fatal(err)
	}
	return s
}

// TestQueryHandlerAllocatesNothingOfItsOwn pins the query path's own
// allocations (decoding, scratch, body buffer, status writer, headers) at
// zero once its pools are warm: net/http's per-request allocations
// (ServeMux's one included) are all that is left of the ~30 a request
// cost (BenchmarkQueryOverSocket).
func TestQueryHandlerAllocatesNothingOfItsOwn(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	s := benchServer(t, 2000, 16)
	defer s.Close()
	body := queryBody(rand.New(rand.NewPCG(5, 6)), 16, 6)
	body = append(body[:len(body)-1], `,"include":["distances"]}`...)
	r := httptest.NewRequest("POST", "/collections/b/query", nil)
	rd := &rewindBody{}
	r.Body = rd
	r.ContentLength = int64(len(body))
	w := &discardWriter{h: http.Header{}}
	allocs := testing.AllocsPerRun(200, func() {
		rd.Reset(body)
		w.status = 0
		s.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			t.Fatalf("status %d", w.status)
		}
	})
	// ServeMux allocates the slice of a pattern's wildcard values: that is
	// net/http's share, measured on a bare ServeMux routing the same
	// request to a handler that does nothing.
	mux := http.NewServeMux()
	mux.HandleFunc("POST /collections/{name}/query", func(http.ResponseWriter, *http.Request) {})
	routing := testing.AllocsPerRun(200, func() { mux.ServeHTTP(w, r) })
	if allocs > routing {
		t.Errorf("a query allocates %.1f times in the server's own code, want 0 (%.1f allocations, ServeMux's %.1f)",
			allocs-routing, allocs, routing)
	}
}

// rewindBody is a request body that can be read again.
type rewindBody struct{ bytes.Reader }

func (*rewindBody) Close() error { return nil }
