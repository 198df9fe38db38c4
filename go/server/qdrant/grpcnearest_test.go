package qdrant

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/strata-db/strata/go/server/guard"
	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
)

// TestGRPCNearestAnswersAsItsJSON holds the gRPC door's plain nearest
// query, read without JSON (queryRequest.nearest), to the same request
// read through JSON: the same points and scores, the same errors.
func TestGRPCNearestAnswersAsItsJSON(t *testing.T) {
	d := newGRPCDoor(t, "", guard.Limits{})
	ctx := context.Background()
	createDot2(t, ctx, d, "c")
	var points []*pb.PointStruct
	for i := range 50 {
		points = append(points, &pb.PointStruct{Id: num(uint64(i)), Vectors: dense(float32(i%7), float32(i%5)-2)})
	}
	if _, err := d.points.Upsert(ctx, &pb.UpsertPoints{CollectionName: "c", Points: points}); err != nil {
		t.Fatal(err)
	}
	c, err := d.h.named("c")
	if err != nil {
		t.Fatal(err)
	}
	// The points hold many ties (50 points, 35 vectors): two searches
	// answer alike only on the same index state, so wait until the
	// background builder has moved every point from the tail's exact
	// scan into the graph (a search in between broke ties otherwise).
	for c.Info().TailRows > 0 {
		time.Sleep(5 * time.Millisecond)
	}
	nearest := func(v ...float32) *pb.Query {
		return &pb.Query{Variant: &pb.Query_Nearest{Nearest: &pb.VectorInput{Variant: &pb.VectorInput_Dense{Dense: &pb.DenseVector{Data: v}}}}}
	}
	limit, offset, name, missing := uint64(5), uint64(3), "", "nope"
	threshold := float32(1.5)
	for i, q := range []*pb.QueryPoints{
		{Query: nearest(1, 0.5)},
		{Query: nearest(1, 0.5), Limit: &limit, Offset: &offset, ScoreThreshold: &threshold},
		{Query: nearest(0.3, -1), Filter: &pb.Filter{Must: []*pb.Condition{{ConditionOneOf: &pb.Condition_HasId{HasId: &pb.HasIdCondition{HasId: []*pb.PointId{num(1), num(2), num(9)}}}}}}},
		{Query: nearest(1, 0.5), Using: &name},
		{Query: nearest(1, 0.5), Using: &missing},
		{Query: nearest(1, 0.5, 2)},
		{Query: nearest()},
		{Query: nearest(float32(math.NaN()), 1)},
		{Query: nearest(1, 1), Params: &pb.SearchParams{Exact: new(bool)}},
	} {
		fast, fastErr := queryPointsRequest(q)
		slow, slowErr := queryPointsRequest(q)
		if slowErr == nil {
			slowErr = slow.jsonQuery()
		}
		if fmt.Sprint(fastErr) != fmt.Sprint(slowErr) {
			t.Fatalf("case %d: translation errors differ: %v, through JSON %v", i, fastErr, slowErr)
		}
		if fastErr != nil {
			continue
		}
		if fast.nearest == nil {
			t.Fatalf("case %d: the nearest vector went through JSON", i)
		}
		got, gotErr := d.h.search1(c, fast, false)
		want, wantErr := d.h.search1(c, slow, false)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("case %d: errors differ: %v, through JSON %v", i, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: answers differ:\n%+v\nthrough JSON\n%+v", i, got, want)
		}
	}
}
