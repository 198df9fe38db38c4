package qdrant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/go/collection"
)

// TestAppendResultIsEncodingJSON holds the reflection-free encoder to
// encoding/json's output for random answers of every type it encodes,
// byte for byte: a field out of order, an omitempty rule or a float
// notation of its own would change what clients parse.
func TestAppendResultIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	// The notation's edges: encoding/json switches to 'e' below 1e-6 and
	// from 1e21 on, judged in float32 for a float32.
	edges := []float64{1e-6, 9.999999e-7, 1e-7, 5e20, 9.999999e20, 1e21, 1.0000001e21, 1e20, 123456789, 0.1}
	float := func() float64 {
		switch r.IntN(7) {
		case 6:
			return edges[r.IntN(len(edges))] * float64(1-2*r.IntN(2))
		case 0:
			return 0
		case 1:
			return r.NormFloat64() * 1e-9
		case 2:
			return r.NormFloat64() * 1e25
		case 3:
			return math.Copysign(0, -1)
		default:
			return r.NormFloat64()
		}
	}
	payloads := []string{`{}`, `{"a":1}`, `{"b":[1,2.5,"x"],"c":{"d":null,"e":true}}`, `{"city":"Berlin","n":-3e-7}`}
	id := func() pointID {
		if r.IntN(2) == 0 {
			return pointID{collection.IntID(r.Uint64N(1 << 63))}
		}
		return pointID{collection.StringID(fmt.Sprintf("%08x-0000-4000-8000-%012x", r.Uint32(), r.Uint64N(1<<48)))}
	}
	record1 := func() record {
		var rec record
		rec.ID = id()
		if r.IntN(2) == 0 {
			v := r.Uint64N(5)
			rec.Version = &v
		}
		if r.IntN(3) > 0 {
			s := float()
			rec.Score = &s
		}
		if r.IntN(3) > 0 {
			rec.Payload = json.RawMessage(payloads[r.IntN(len(payloads))])
		}
		switch r.IntN(4) {
		case 1:
			v := make([]float32, r.IntN(6))
			for i := range v {
				v[i] = float32(float())
			}
			rec.Vector = v
		case 2:
			rec.Vector = map[string]any{"text": []float32{float32(float()), 1.5}, "": []float32{}}
		}
		switch r.IntN(4) {
		case 1:
			rec.OrderValue = r.Int64N(1<<62) - 1<<61
		case 2:
			rec.OrderValue = float()
		}
		return rec
	}
	records := func() []record {
		if r.IntN(8) == 0 {
			return nil
		}
		out := make([]record, r.IntN(5))
		for i := range out {
			out[i] = record1()
		}
		return out
	}
	for i := range 2000 {
		var v any
		switch i % 5 {
		case 0:
			v = queryResponse{Points: records()}
		case 1:
			v = records()
		case 2:
			s := scrollResponse{Points: records()}
			if r.IntN(2) == 0 {
				next := id()
				s.NextPageOffset = &next
			}
			v = s
		case 3:
			v = updateResult{OperationID: r.Uint64(), Status: "completed"}
		case 4:
			v = countResponse{Count: r.IntN(1 << 40)}
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := appendResult([]byte("prefix"), v)
		if !ok || err != nil {
			t.Fatalf("%T: ok %v, err %v", v, ok, err)
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("%T:\n got %s\nwant prefix%s", v, got, want)
		}
	}
}

// TestAppendResultRefusesWhatJSONCannotHold: a NaN score is an error, as
// from encoding/json (a 500, not a body that does not parse).
func TestAppendResultRefusesWhatJSONCannotHold(t *testing.T) {
	nan := math.NaN()
	for _, v := range []any{
		[]record{{ID: pointID{collection.IntID(1)}, Score: &nan}},
		queryResponse{Points: []record{{ID: pointID{collection.IntID(1)}, Vector: []float32{float32(math.Inf(1))}}}},
	} {
		if _, err := json.Marshal(v); err == nil {
			t.Fatalf("encoding/json encodes %v", v)
		}
		if _, ok, err := appendResult(nil, v); !ok || err == nil {
			t.Fatalf("appendResult(%v): ok %v, err %v", v, ok, err)
		}
	}
	if _, ok, _ := appendResult(nil, struct{}{}); ok {
		t.Fatal("appendResult claims a type it does not know")
	}
}
