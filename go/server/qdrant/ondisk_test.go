package qdrant

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/strata-db/strata/go/server/guard"
	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
)

// TestOnDiskVectorsAreTheMmapPlacement: a vector's on_disk: true creates
// the field with memory "mmap", and get_collection reports it back; a
// vector without it reports none (Qdrant omits the default).
func TestOnDiskVectorsAreTheMmapPlacement(t *testing.T) {
	hs := newTestDoor(t, "")
	for path, body := range map[string]string{
		"/collections/one":   `{"vectors": {"size": 4, "distance": "Cosine", "on_disk": true}}`,
		"/collections/named": `{"vectors": {"a": {"size": 4, "distance": "Dot", "on_disk": true}, "b": {"size": 4, "distance": "Dot"}}}`,
	} {
		if code, out := call(t, hs, "PUT", path, body); code != http.StatusOK {
			t.Fatalf("PUT %s: %d %v", path, code, out)
		}
	}
	_, out := call(t, hs, "GET", "/collections/one", "")
	vectors := out["result"].(map[string]any)["config"].(map[string]any)["params"].(map[string]any)["vectors"].(map[string]any)
	if vectors["on_disk"] != true {
		t.Fatalf("one: vectors %v, want on_disk true", vectors)
	}
	_, out = call(t, hs, "GET", "/collections/named", "")
	vectors = out["result"].(map[string]any)["config"].(map[string]any)["params"].(map[string]any)["vectors"].(map[string]any)
	if a, b := vectors["a"].(map[string]any), vectors["b"].(map[string]any); a["on_disk"] != true || b["on_disk"] != nil {
		t.Fatalf("named: vectors %v, want on_disk on a only", vectors)
	}
	if code, out := call(t, hs, "PUT", "/collections/bad", `{"vectors": {"size": 4, "distance": "Dot", "on_disk": "yes"}}`); code != http.StatusBadRequest {
		t.Fatalf("on_disk \"yes\": %d %v, want 400", code, out)
	}
}

// TestGRPCOnDiskVectorsAreTheMmapPlacement: the gRPC door reads a
// vector's on_disk as REST does and reports it back in Get.
func TestGRPCOnDiskVectorsAreTheMmapPlacement(t *testing.T) {
	d := newGRPCDoor(t, "", guard.Limits{})
	ctx := context.Background()
	_, err := d.collections.Create(ctx, &pb.CreateCollection{CollectionName: "c", VectorsConfig: &pb.VectorsConfig{
		Config: &pb.VectorsConfig_Params{Params: &pb.VectorParams{Size: 2, Distance: pb.Distance_Dot, OnDisk: new(true)}}}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := d.collections.Get(ctx, &pb.GetCollectionInfoRequest{CollectionName: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if p := info.GetResult().GetConfig().GetParams().GetVectorsConfig().GetParams(); !p.GetOnDisk() {
		t.Fatalf("vectors config %v, want on_disk", p)
	}
}

// TestOnDiskQuantizedVectorsRoundTrip: a vector with on_disk and scalar
// int8 quantization is an SQ8 field of mmap placement that keeps its
// floats for rescoring (Qdrant's originals on disk, codes in RAM);
// get_collection reports both back; a search's params.quantization
// oversampling widens the list (same top ids, nothing refused), and an
// oversampling below 1 or an unknown key is a 400.
func TestOnDiskQuantizedVectorsRoundTrip(t *testing.T) {
	hs := newTestDoor(t, "")
	body := `{"vectors": {"v": {"size": 4, "distance": "Euclid", "on_disk": true,
		"quantization_config": {"scalar": {"type": "int8", "always_ram": true}}}}}`
	if code, out := call(t, hs, "PUT", "/collections/q", body); code != http.StatusOK {
		t.Fatalf("create: %d %v", code, out)
	}
	_, out := call(t, hs, "GET", "/collections/q", "")
	v := out["result"].(map[string]any)["config"].(map[string]any)["params"].(map[string]any)["vectors"].(map[string]any)["v"].(map[string]any)
	scalar, _ := v["quantization_config"].(map[string]any)["scalar"].(map[string]any)
	if v["on_disk"] != true || scalar["type"] != "int8" {
		t.Fatalf("vectors.v %v, want on_disk and scalar int8", v)
	}
	points := `{"points": [`
	for i := range 50 {
		if i > 0 {
			points += ","
		}
		points += fmt.Sprintf(`{"id": %d, "vector": {"v": [%d, %d, 1, 1]}}`, i, i, i%2) // distinct distances
	}
	if code, out := call(t, hs, "PUT", "/collections/q/points?wait=true", points+"]}"); code != http.StatusOK {
		t.Fatalf("upsert: %d %v", code, out)
	}
	search := func(params string) (int, map[string]any) {
		return call(t, hs, "POST", "/collections/q/points/query",
			`{"query": [20.3, 0.4, 1, 1], "using": "v", "limit": 5, "params": `+params+`}`)
	}
	code, plain := search(`{}`)
	if code != http.StatusOK {
		t.Fatalf("query: %d %v", code, plain)
	}
	code, over := search(`{"quantization": {"rescore": true, "oversampling": 3.0, "ignore": false}}`)
	if code != http.StatusOK {
		t.Fatalf("query with oversampling: %d %v", code, over)
	}
	if got := fmt.Sprint(ids(plain)); got != "[20 21 19 22 18]" {
		t.Fatalf("query answered %s, the exact top 5 is [20 21 19 22 18]", got)
	}
	if fmt.Sprint(ids(plain)) != fmt.Sprint(ids(over)) {
		t.Fatalf("oversampling changed the answer: %v, %v", ids(plain), ids(over))
	}
	for _, bad := range []string{`{"quantization": {"oversampling": 0.5}}`, `{"quantization": {"oversample": 2}}`} {
		if code, out := search(bad); code != http.StatusBadRequest {
			t.Fatalf("params %s: %d %v, want 400", bad, code, out)
		}
	}
}

func ids(out map[string]any) []any {
	var got []any
	for _, p := range out["result"].(map[string]any)["points"].([]any) {
		got = append(got, p.(map[string]any)["id"])
	}
	return got
}

// TestGRPCOnDiskQuantizedVectorsRoundTrip: the gRPC door reads a named
// vector's on_disk and scalar int8 quantization as REST does and reports
// both back in Get.
func TestGRPCOnDiskQuantizedVectorsRoundTrip(t *testing.T) {
	d := newGRPCDoor(t, "", guard.Limits{})
	ctx := context.Background()
	scalar := &pb.QuantizationConfig{Quantization: &pb.QuantizationConfig_Scalar{
		Scalar: &pb.ScalarQuantization{Type: pb.QuantizationType_Int8, AlwaysRam: new(true)}}}
	_, err := d.collections.Create(ctx, &pb.CreateCollection{CollectionName: "c", VectorsConfig: &pb.VectorsConfig{
		Config: &pb.VectorsConfig_ParamsMap{ParamsMap: &pb.VectorParamsMap{Map: map[string]*pb.VectorParams{
			"v": {Size: 4, Distance: pb.Distance_Euclid, OnDisk: new(true), QuantizationConfig: scalar}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := d.collections.Get(ctx, &pb.GetCollectionInfoRequest{CollectionName: "c"})
	if err != nil {
		t.Fatal(err)
	}
	p := info.GetResult().GetConfig().GetParams().GetVectorsConfig().GetParamsMap().GetMap()["v"]
	if !p.GetOnDisk() || p.GetQuantizationConfig().GetScalar().GetType() != pb.QuantizationType_Int8 {
		t.Fatalf("vectors config %v, want on_disk and scalar int8", p)
	}
}
