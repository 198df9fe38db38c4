package qdrant

import (
	"context"
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
