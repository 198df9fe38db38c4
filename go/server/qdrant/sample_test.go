package qdrant

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/server/guard"
	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// TestSampleAndLookupFromAnswerAsQdrant prevents two universal-query
// parts from going untested over either door: {"sample": "random"}
// answers each point once (a filter keeps it to its points), and a query
// by id with lookup_from takes the example's vector from the other
// collection, where local mode leaves no point of the searched collection
// out (the id names a point of the other one), while the same id without
// lookup_from is a point of the searched collection and is left out.
func TestSampleAndLookupFromAnswerAsQdrant(t *testing.T) {
	// s: points 1..5 at [i, 0]; o: point 1 at [-1, 0], dot product.
	hs := newTestDoor(t, "")
	call(t, hs, "PUT", "/collections/s", `{"vectors":{"size":2,"distance":"Dot"}}`)
	call(t, hs, "PUT", "/collections/o", `{"vectors":{"size":2,"distance":"Dot"}}`)
	if st, out := call(t, hs, "PUT", "/collections/s/points?wait=true", `{"points":[
		{"id":1,"vector":[1,0],"payload":{"odd":true}},{"id":2,"vector":[2,0],"payload":{"odd":false}},
		{"id":3,"vector":[3,0],"payload":{"odd":true}},{"id":4,"vector":[4,0],"payload":{"odd":false}},
		{"id":5,"vector":[5,0],"payload":{"odd":true}}]}`); st != 200 {
		t.Fatalf("upsert s: %d %v", st, out)
	}
	if st, out := call(t, hs, "PUT", "/collections/o/points?wait=true", `{"points":[{"id":1,"vector":[-1,0]}]}`); st != 200 {
		t.Fatalf("upsert o: %d %v", st, out)
	}
	rest := func(body string) (int, []float64, []float64) {
		t.Helper()
		st, out := call(t, hs, "POST", "/collections/s/points/query", body)
		if st != 200 {
			return st, nil, nil
		}
		var ids, scores []float64
		for _, p := range out["result"].(map[string]any)["points"].([]any) {
			pt := p.(map[string]any)
			ids, scores = append(ids, pt["id"].(float64)), append(scores, pt["score"].(float64))
		}
		return st, ids, scores
	}
	sorted := func(ids []float64) string { return fmt.Sprint(slices.Sorted(slices.Values(ids))) }
	if st, ids, _ := rest(`{"query":{"sample":"random"},"limit":10}`); st != 200 || sorted(ids) != "[1 2 3 4 5]" {
		t.Errorf("REST sample: %d %v, want each of 1..5 once", st, ids)
	}
	if st, ids, _ := rest(`{"query":{"sample":"random"},"limit":10,"filter":{"must":[{"key":"odd","match":{"value":true}}]}}`); st != 200 || sorted(ids) != "[1 3 5]" {
		t.Errorf("REST sample with a filter: %d %v, want 1, 3, 5", st, ids)
	}
	if st, ids, _ := rest(`{"query":{"sample":"random"},"limit":2}`); st != 200 || len(ids) != 2 || ids[0] == ids[1] {
		t.Errorf("REST sample, limit 2: %d %v, want two points", st, ids)
	}
	if st, _, _ := rest(`{"query":{"sample":"first"}}`); st != 400 {
		t.Errorf("REST sample \"first\": %d, want 400", st)
	}
	if st, ids, scores := rest(`{"query":1,"lookup_from":{"collection":"o"},"limit":10}`); st != 200 ||
		fmt.Sprint(ids) != "[1 2 3 4 5]" || fmt.Sprint(scores) != "[-1 -2 -3 -4 -5]" {
		t.Errorf("REST query by id of o: %d %v %v, want 1..5 scored -1..-5", st, ids, scores)
	}
	if st, ids, _ := rest(`{"query":{"nearest":1},"lookup_from":{"collection":"o"},"limit":10}`); st != 200 || fmt.Sprint(ids) != "[1 2 3 4 5]" {
		t.Errorf("REST nearest by id of o: %d %v, want 1..5", st, ids)
	}
	if st, ids, _ := rest(`{"query":1,"limit":10}`); st != 200 || fmt.Sprint(ids) != "[5 4 3 2]" {
		t.Errorf("REST query by id of s: %d %v, want 5, 4, 3, 2 (1 left out)", st, ids)
	}
	if st, _, _ := rest(`{"query":1,"lookup_from":{"collection":"missing"}}`); st != 404 {
		t.Errorf("REST lookup_from a missing collection: %d, want 404", st)
	}
	if st, _, _ := rest(`{"query":{"nearest":[1,0]},"lookup_from":{"collection":"missing"}}`); st != 404 {
		t.Errorf("REST nearest vector, lookup_from a missing collection: %d, want 404 (the lookup is checked)", st)
	}

	d := newGRPCDoor(t, "", guard.Limits{})
	ctx := context.Background()
	createDot2(t, ctx, d, "s")
	createDot2(t, ctx, d, "o")
	var points []*pb.PointStruct
	for i := range 5 {
		points = append(points, &pb.PointStruct{Id: num(uint64(i + 1)), Vectors: dense(float32(i+1), 0)})
	}
	for name, pts := range map[string][]*pb.PointStruct{"s": points, "o": {{Id: num(1), Vectors: dense(-1, 0)}}} {
		if _, err := d.points.Upsert(ctx, &pb.UpsertPoints{CollectionName: name, Points: pts}); err != nil {
			t.Fatal(err)
		}
	}
	ten := uint64(10)
	grpcIDs := func(q *pb.QueryPoints) ([]float64, []float32, error) {
		q.CollectionName, q.Limit = "s", &ten
		r, err := d.points.Query(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		var ids []float64
		var scores []float32
		for _, p := range r.Result {
			ids, scores = append(ids, float64(p.Id.GetNum())), append(scores, p.Score)
		}
		return ids, scores, nil
	}
	if ids, _, err := grpcIDs(&pb.QueryPoints{Query: &pb.Query{Variant: &pb.Query_Sample{Sample: pb.Sample_Random}}}); err != nil ||
		sorted(ids) != "[1 2 3 4 5]" {
		t.Errorf("gRPC sample: %v %v, want each of 1..5 once", ids, err)
	}
	byID := &pb.Query{Variant: &pb.Query_Nearest{Nearest: &pb.VectorInput{Variant: &pb.VectorInput_Id{Id: num(1)}}}}
	if ids, scores, err := grpcIDs(&pb.QueryPoints{Query: byID, LookupFrom: &pb.LookupLocation{CollectionName: "o"}}); err != nil ||
		fmt.Sprint(ids) != "[1 2 3 4 5]" || fmt.Sprint(scores) != "[-1 -2 -3 -4 -5]" {
		t.Errorf("gRPC query by id of o: %v %v %v, want 1..5 scored -1..-5", ids, scores, err)
	}
	if ids, _, err := grpcIDs(&pb.QueryPoints{Query: byID}); err != nil || fmt.Sprint(ids) != "[5 4 3 2]" {
		t.Errorf("gRPC query by id of s: %v %v, want 5, 4, 3, 2", ids, err)
	}
	if _, _, err := grpcIDs(&pb.QueryPoints{Query: byID, LookupFrom: &pb.LookupLocation{CollectionName: "missing"}}); grpcstatus.Code(err) != codes.NotFound {
		t.Errorf("gRPC lookup_from a missing collection: %v, want NotFound", err)
	}
}
