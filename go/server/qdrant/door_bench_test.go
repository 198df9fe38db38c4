package qdrant

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/strata-db/strata/go/server"
	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
)

// BenchmarkDoor times one call through each door in process, the same
// collection behind all three: the native REST route and the Qdrant REST
// route through their http.Handlers (no socket), the Qdrant gRPC call
// through grpc-go over an in-memory connection (its protobuf both ways).
// The bodies are the two Python clients' own for the served benchmark's
// calls (strata.client with include_metadata=False, qdrant-client with
// with_payload=False: ids and scores on both sides), numbers included.
// The ratio qdrant/native per operation is the door's own cost; the
// served figures over loopback are bench/bench_qdrant_served.py's.
// cpu-ns/op is the process's CPU time (user+system, every goroutine) per
// operation: steadier than ns/op on a loaded machine.
//
//	go test ./go/server/qdrant -run '^$' -bench Door -benchmem -cpuprofile cpu.out
func BenchmarkDoor(b *testing.B) {
	const n, dim = 20000, 128
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(server.Config{DataDir: b.TempDir(), Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	h, err := New(Config{Collections: srv, Guard: srv.Guard(), Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	serve := func(hd http.Handler, method, path string, body []byte) []byte {
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		hd.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body.Bytes())
		}
		return rec.Body.Bytes()
	}
	serve(h, "PUT", "/collections/bench", []byte(`{"vectors":{"size":128,"distance":"Euclid"}}`))
	r := rand.New(rand.NewPCG(1, 2))
	centres := make([][]float32, 100)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(r.NormFloat64())
		}
	}
	point := func() []float32 {
		c := centres[r.IntN(len(centres))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + 0.3*float32(r.NormFloat64())
		}
		return v
	}
	// list writes a vector as both Python clients do (numpy's tolist,
	// then json / pydantic): each float32 widened to a float64 and written
	// in its shortest form, 16-17 digits (0.30000001192092896), not the 6
	// a float32 needs.
	list := func(v []float32) string {
		var s []byte
		s = append(s, '[')
		for j, x := range v {
			if j > 0 {
				s = append(s, ',')
			}
			s = strconv.AppendFloat(s, float64(x), 'g', -1, 64)
		}
		return string(append(s, ']'))
	}
	for at := 0; at < n; at += 1000 {
		var body bytes.Buffer
		body.WriteString(`{"points":[`)
		for i := at; i < at+1000; i++ {
			if i > at {
				body.WriteByte(',')
			}
			fmt.Fprintf(&body, `{"id":%d,"vector":%s,"payload":{"bucket":%d}}`, i, list(point()), i%100)
		}
		body.WriteString(`]}`)
		serve(h, "PUT", "/collections/bench/points?wait=true", body.Bytes())
	}
	c, err := srv.Collection("bench")
	if err != nil {
		b.Fatal(err)
	}
	// indexed waits until the graph holds every point written (the
	// graph, not the tail's exact scan, answers the queries)
	indexed := func() {
		for c.Info().TailRows > 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	indexed()
	const queries = 256
	vecs := make([][]float32, queries)
	for i := range vecs {
		vecs[i] = point()
	}
	ctx := context.Background()
	door := newGRPCDoorOn(b, h)
	upsertID := func(i int) uint64 { return uint64(n + i%2000) }

	b.Run("query/native", func(b *testing.B) {
		bodies := make([][]byte, queries)
		for i := range bodies {
			// strata.client's query(vec, k=10, ef=64, include_metadata=False)
			bodies[i] = fmt.Appendf(nil, `{"k":10,"include":["distances"],"ef":64,"vectors":[%s]}`, list(vecs[i]))
		}
		defer reportCPU(b, indexed)()
		i := 0
		for b.Loop() {
			serve(srv, "POST", "/collections/bench/query", bodies[i%queries])
			i++
		}
	})
	b.Run("query/rest", func(b *testing.B) {
		bodies := make([][]byte, queries)
		for i := range bodies {
			// qdrant-client's query_points(query=vec, limit=10,
			// with_payload=False, search_params=SearchParams(hnsw_ef=64)),
			// byte for byte
			bodies[i] = fmt.Appendf(nil, `{"query":{"nearest":%s},"params":{"hnsw_ef":64},"limit":10,"with_vector":false,"with_payload":false}`, list(vecs[i]))
		}
		defer reportCPU(b, indexed)()
		i := 0
		for b.Loop() {
			serve(h, "POST", "/collections/bench/points/query", bodies[i%queries])
			i++
		}
	})
	b.Run("query/grpc", func(b *testing.B) {
		ef, limit := uint64(64), uint64(10)
		defer reportCPU(b, indexed)()
		i := 0
		for b.Loop() {
			// qdrant-client sends with_payload and with_vectors as given
			q := &pb.QueryPoints{CollectionName: "bench", Limit: &limit, Params: &pb.SearchParams{HnswEf: &ef},
				WithPayload: &pb.WithPayloadSelector{SelectorOptions: &pb.WithPayloadSelector_Enable{Enable: false}},
				WithVectors: &pb.WithVectorsSelector{SelectorOptions: &pb.WithVectorsSelector_Enable{Enable: false}},
				Query:       &pb.Query{Variant: &pb.Query_Nearest{Nearest: &pb.VectorInput{Variant: &pb.VectorInput_Dense{Dense: &pb.DenseVector{Data: vecs[i%queries]}}}}}}
			got, err := door.points.Query(ctx, q)
			if err != nil || len(got.Result) != 10 {
				b.Fatal(err, len(got.GetResult()))
			}
			i++
		}
	})
	for _, size := range []int{1, 100} {
		b.Run(fmt.Sprintf("upsert-%d/native", size), func(b *testing.B) {
			bodies := make([][]byte, queries)
			for i := range bodies {
				var s bytes.Buffer
				s.WriteString(`{"ids":[`)
				for j := range size {
					if j > 0 {
						s.WriteByte(',')
					}
					fmt.Fprintf(&s, "%d", upsertID(i*size+j))
				}
				s.WriteString(`],"vectors":[`)
				for j := range size {
					if j > 0 {
						s.WriteByte(',')
					}
					s.WriteString(list(vecs[(i+j)%queries]))
				}
				s.WriteString(`],"metadata":[`)
				for j := range size {
					if j > 0 {
						s.WriteByte(',')
					}
					fmt.Fprintf(&s, `{"bucket":%d}`, j%100)
				}
				s.WriteString(`]}`)
				bodies[i] = s.Bytes()
			}
			defer reportCPU(b, indexed)()
			i := 0
			for b.Loop() {
				serve(srv, "POST", "/collections/bench/upsert", bodies[i%queries])
				i++
			}
		})
		b.Run(fmt.Sprintf("upsert-%d/rest", size), func(b *testing.B) {
			bodies := make([][]byte, queries)
			for i := range bodies {
				var s bytes.Buffer
				s.WriteString(`{"points":[`)
				for j := range size {
					if j > 0 {
						s.WriteByte(',')
					}
					fmt.Fprintf(&s, `{"id":%d,"vector":%s,"payload":{"bucket":%d}}`, upsertID(i*size+j), list(vecs[(i+j)%queries]), j%100)
				}
				s.WriteString(`]}`)
				bodies[i] = s.Bytes()
			}
			defer reportCPU(b, indexed)()
			i := 0
			for b.Loop() {
				serve(h, "PUT", "/collections/bench/points?wait=true", bodies[i%queries])
				i++
			}
		})
		b.Run(fmt.Sprintf("upsert-%d/grpc", size), func(b *testing.B) {
			wait := true
			defer reportCPU(b, indexed)()
			i := 0
			for b.Loop() {
				points := make([]*pb.PointStruct, size)
				for j := range points {
					points[j] = &pb.PointStruct{Id: num(upsertID(i*size + j)), Vectors: dense(vecs[(i+j)%queries]...),
						Payload: map[string]*pb.Value{"bucket": {Kind: &pb.Value_IntegerValue{IntegerValue: int64(j % 100)}}}}
				}
				if _, err := door.points.Upsert(ctx, &pb.UpsertPoints{CollectionName: "bench", Wait: &wait, Points: points}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// reportCPU returns the function that reports the process's CPU time per
// operation since reportCPU was called, as cpu-ns/op. Both ends first
// wait (indexed) until the background graph builder has indexed every
// point written: an operation is charged the indexing of its own
// upserts, and none of the sub-benchmark's before it (upsert-100/rest,
// run after upsert-100/native, was charged the builder's work left from
// native's points). Call it after the requests are built, so that
// building them is not counted either.
func reportCPU(b *testing.B, indexed func()) func() {
	indexed()
	start := processCPU(b)
	return func() {
		indexed()
		if b.N > 0 {
			b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
