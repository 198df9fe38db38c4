package qdrant

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/server"
	"github.com/strata-db/strata/go/server/guard"
	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
)

type grpcDoor struct {
	h           *Handler
	collections pb.CollectionsClient
	points      pb.PointsClient
	qdrant      pb.QdrantClient
}

// newGRPCDoor serves the gRPC door over an in-memory connection.
func newGRPCDoor(t testing.TB, key string, limits guard.Limits) *grpcDoor {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(server.Config{DataDir: t.TempDir(), APIKey: key, Logger: log, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Collections: srv, Guard: srv.Guard(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return newGRPCDoorOn(t, h)
}

// newGRPCDoorOn serves h's gRPC door over an in-memory connection.
func newGRPCDoorOn(t testing.TB, h *Handler) *grpcDoor {
	t.Helper()
	ln := bufconn.Listen(1 << 20)
	gs := h.GRPCServer()
	go gs.Serve(ln)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		gs.Stop()
	})
	return &grpcDoor{h: h, collections: pb.NewCollectionsClient(conn), points: pb.NewPointsClient(conn), qdrant: pb.NewQdrantClient(conn)}
}

func wantCode(t *testing.T, err error, code codes.Code, mentions string) {
	t.Helper()
	s, _ := grpcstatus.FromError(err)
	if s.Code() != code || !strings.Contains(s.Message(), mentions) {
		t.Fatalf("got %v %q, want %v mentioning %q", s.Code(), s.Message(), code, mentions)
	}
}

func dense(v ...float32) *pb.Vectors {
	return &pb.Vectors{VectorsOptions: &pb.Vectors_Vector{Vector: &pb.Vector{Vector: &pb.Vector_Dense{Dense: &pb.DenseVector{Data: v}}}}}
}

func num(n uint64) *pb.PointId { return &pb.PointId{PointIdOptions: &pb.PointId_Num{Num: n}} }

func createDot2(t testing.TB, ctx context.Context, d *grpcDoor, name string) {
	t.Helper()
	_, err := d.collections.Create(ctx, &pb.CreateCollection{CollectionName: name, VectorsConfig: &pb.VectorsConfig{
		Config: &pb.VectorsConfig_Params{Params: &pb.VectorParams{Size: 2, Distance: pb.Distance_Dot}}}})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGRPCRefusesAMissingOrWrongAPIKey(t *testing.T) {
	d := newGRPCDoor(t, "s3cret", guard.Limits{})
	ctx := context.Background()
	_, err := d.collections.List(ctx, &pb.ListCollectionsRequest{})
	wantCode(t, err, codes.Unauthenticated, "API key")
	_, err = d.collections.List(metadata.AppendToOutgoingContext(ctx, "api-key", "wrong"), &pb.ListCollectionsRequest{})
	wantCode(t, err, codes.Unauthenticated, "API key")
	for _, md := range [][]string{{"api-key", "s3cret"}, {"authorization", "Bearer s3cret"}} {
		if _, err := d.collections.List(metadata.AppendToOutgoingContext(ctx, md...), &pb.ListCollectionsRequest{}); err != nil {
			t.Fatalf("%v: %v", md, err)
		}
	}
	// The health check is what a load balancer asks, without a key.
	if r, err := d.qdrant.HealthCheck(ctx, &pb.HealthCheckRequest{}); err != nil || r.Version != Version {
		t.Fatalf("health check: %v %v", r, err)
	}
}

func TestGRPCErrorsCarryQdrantsCodes(t *testing.T) {
	d := newGRPCDoor(t, "", guard.Limits{MaxResults: 5})
	ctx := context.Background()
	_, err := d.collections.Get(ctx, &pb.GetCollectionInfoRequest{CollectionName: "nope"})
	wantCode(t, err, codes.NotFound, "nope")
	createDot2(t, ctx, d, "c")
	_, err = d.collections.Create(ctx, &pb.CreateCollection{CollectionName: "c", VectorsConfig: &pb.VectorsConfig{
		Config: &pb.VectorsConfig_Params{Params: &pb.VectorParams{Size: 2, Distance: pb.Distance_Dot}}}})
	wantCode(t, err, codes.AlreadyExists, "")
	_, err = d.points.Upsert(ctx, &pb.UpsertPoints{CollectionName: "c", Points: []*pb.PointStruct{{Id: num(1), Vectors: dense(1, 2, 3)}}})
	wantCode(t, err, codes.InvalidArgument, "dimension")
	limit := uint64(50)
	_, err = d.points.Query(ctx, &pb.QueryPoints{CollectionName: "c", Limit: &limit})
	wantCode(t, err, codes.ResourceExhausted, "max-results")
	_, err = d.points.Query(ctx, &pb.QueryPoints{CollectionName: "c", Query: &pb.Query{Variant: &pb.Query_Formula{Formula: &pb.Formula{}}}})
	wantCode(t, err, codes.InvalidArgument, "formula")
	_, err = d.points.Upsert(ctx, &pb.UpsertPoints{CollectionName: "c", Points: []*pb.PointStruct{{Id: num(1), Vectors: &pb.Vectors{
		VectorsOptions: &pb.Vectors_Vector{Vector: &pb.Vector{Vector: &pb.Vector_Document{Document: &pb.Document{Text: "hi"}}}}}}}})
	wantCode(t, err, codes.InvalidArgument, "inference")
	m48 := uint64(48)
	_, err = d.collections.Update(ctx, &pb.UpdateCollection{CollectionName: "c", HnswConfig: &pb.HnswConfigDiff{M: &m48}})
	wantCode(t, err, codes.InvalidArgument, "does not rebuild")
	_, err = d.collections.Update(ctx, &pb.UpdateCollection{CollectionName: "nope"})
	wantCode(t, err, codes.NotFound, "nope")
	_, err = d.points.Get(ctx, &pb.GetPoints{CollectionName: "c", Ids: []*pb.PointId{{PointIdOptions: &pb.PointId_Uuid{Uuid: "not-a-uuid"}}}})
	wantCode(t, err, codes.InvalidArgument, "not-a-uuid")
}

func TestGRPCPanicBecomesInternalNotACrash(t *testing.T) {
	d := newGRPCDoor(t, "", guard.Limits{})
	_, err := d.h.intercept(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: pb.Qdrant_HealthCheck_FullMethodName},
		func(context.Context, any) (any, error) { panic("boom") })
	wantCode(t, err, codes.Internal, "boom")
}

func TestGRPCCallsAnswerAsTheRESTCalls(t *testing.T) {
	d := newGRPCDoor(t, "", guard.Limits{})
	ctx := context.Background()
	createDot2(t, ctx, d, "c")
	kind := func(s string) *pb.Value { return &pb.Value{Kind: &pb.Value_StringValue{StringValue: s}} }
	points := []*pb.PointStruct{
		{Id: num(1), Vectors: dense(1, 0), Payload: map[string]*pb.Value{"k": kind("a"), "x": {Kind: &pb.Value_DoubleValue{DoubleValue: 2}},
			"f": {Kind: &pb.Value_DoubleValue{DoubleValue: 1.5e18}}}},
		{Id: num(2), Vectors: dense(0, 1), Payload: map[string]*pb.Value{"k": kind("b")}},
		{Id: num(3), Vectors: dense(1, 1), Payload: map[string]*pb.Value{"k": kind("a")}},
	}
	if _, err := d.points.Upsert(ctx, &pb.UpsertPoints{CollectionName: "c", Points: points}); err != nil {
		t.Fatal(err)
	}
	isA := &pb.Filter{Must: []*pb.Condition{{ConditionOneOf: &pb.Condition_Field{Field: &pb.FieldCondition{
		Key: "k", Match: &pb.Match{MatchValue: &pb.Match_Keyword{Keyword: "a"}}}}}}}
	n, err := d.points.Count(ctx, &pb.CountPoints{CollectionName: "c", Filter: isA})
	if err != nil || n.Result.Count != 2 {
		t.Fatalf("count: %v %v", n, err)
	}
	yes := &pb.WithPayloadSelector{SelectorOptions: &pb.WithPayloadSelector_Enable{Enable: true}}
	q, err := d.points.Query(ctx, &pb.QueryPoints{CollectionName: "c", WithPayload: yes, Filter: isA,
		Query: &pb.Query{Variant: &pb.Query_Nearest{Nearest: &pb.VectorInput{Variant: &pb.VectorInput_Dense{Dense: &pb.DenseVector{Data: []float32{1, -0.5}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Result) != 2 || q.Result[0].Id.GetNum() != 1 || q.Result[0].Score != 1 || q.Result[1].Id.GetNum() != 3 {
		t.Fatalf("query: %v", q.Result)
	}
	// 2.0 comes back as the integer 2: payloads are canonical JSON
	// (package meta), over REST too.
	// 1.5e18 stays a double (as an integer it would be refused, beyond
	// 2^53).
	if x, f := q.Result[0].Payload["x"], q.Result[0].Payload["f"]; x.GetIntegerValue() != 2 || f.GetDoubleValue() != 1.5e18 ||
		q.Result[0].Payload["k"].GetStringValue() != "a" {
		t.Fatalf("payload: %v", q.Result[0].Payload)
	}
	// The groups calls: by k, one hit each, the best group first.
	one, two := uint64(1), uint64(2)
	qg, err := d.points.QueryGroups(ctx, &pb.QueryPointGroups{CollectionName: "c", GroupBy: "k", GroupSize: &one, Limit: &two,
		Query: &pb.Query{Variant: &pb.Query_Nearest{Nearest: &pb.VectorInput{Variant: &pb.VectorInput_Dense{Dense: &pb.DenseVector{Data: []float32{1, -0.5}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	sg, err := d.points.SearchGroups(ctx, &pb.SearchPointGroups{CollectionName: "c", GroupBy: "k", GroupSize: 1, Limit: 2, Vector: []float32{1, -0.5},
		WithLookup: &pb.WithLookup{Collection: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range [][]*pb.PointGroup{qg.Result.Groups, sg.Result.Groups} {
		if len(g) != 2 || g[0].Id.GetStringValue() != "a" || g[0].Hits[0].Id.GetNum() != 1 || g[1].Id.GetStringValue() != "b" ||
			g[1].Hits[0].Id.GetNum() != 2 {
			t.Fatalf("groups: %v", g)
		}
	}
	if sg.Result.Groups[0].Lookup != nil { // no point has the id "a"
		t.Fatalf("lookup: %v", sg.Result.Groups[0].Lookup)
	}
	rg, err := d.points.RecommendGroups(ctx, &pb.RecommendPointGroups{CollectionName: "c", GroupBy: "k", GroupSize: 2, Limit: 2,
		Positive: []*pb.PointId{num(3)}})
	if err != nil || len(rg.Result.Groups) != 2 {
		t.Fatalf("recommend groups: %v %v", rg, err)
	}
	for _, g := range rg.Result.Groups {
		for _, hit := range g.Hits {
			if hit.Id.GetNum() == 3 {
				t.Fatalf("recommend groups answered its example: %v", rg.Result.Groups)
			}
		}
	}
	_, err = d.points.QueryGroups(ctx, &pb.QueryPointGroups{CollectionName: "c", GroupBy: "k",
		ShardKeySelector: &pb.ShardKeySelector{}})
	wantCode(t, err, codes.InvalidArgument, "shard_key_selector")
	// update_filter and update_mode: point 1 (k "a") is left alone.
	isB := &pb.Filter{Must: []*pb.Condition{{ConditionOneOf: &pb.Condition_Field{Field: &pb.FieldCondition{
		Key: "k", Match: &pb.Match{MatchValue: &pb.Match_Keyword{Keyword: "b"}}}}}}}
	insertOnly := pb.UpdateMode_InsertOnly
	changed := []*pb.PointStruct{{Id: num(1), Vectors: dense(5, 5), Payload: map[string]*pb.Value{"k": kind("z")}}}
	for _, u := range []*pb.UpsertPoints{{CollectionName: "c", Points: changed, UpdateFilter: isB},
		{CollectionName: "c", Points: changed, UpdateMode: &insertOnly}} {
		if _, err := d.points.Upsert(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.points.UpdateVectors(ctx, &pb.UpdatePointVectors{CollectionName: "c", UpdateFilter: isB,
		Points: []*pb.PointVectors{{Id: num(1), Vectors: dense(7, 7)}}}); err != nil {
		t.Fatal(err)
	}
	vecs := &pb.WithVectorsSelector{SelectorOptions: &pb.WithVectorsSelector_Enable{Enable: true}}
	if got, err := d.points.Get(ctx, &pb.GetPoints{CollectionName: "c", Ids: []*pb.PointId{num(1)}, WithPayload: yes, WithVectors: vecs}); err != nil ||
		len(got.Result) != 1 || got.Result[0].Payload["k"].GetStringValue() != "a" ||
		got.Result[0].Vectors.GetVector().GetDense().GetData()[0] != 1 {
		t.Fatalf("a conditional update wrote: %v %v", got, err)
	}
	badMode := pb.UpdateMode(9)
	_, err = d.points.Upsert(ctx, &pb.UpsertPoints{CollectionName: "c", Points: changed, UpdateMode: &badMode})
	wantCode(t, err, codes.InvalidArgument, "update_mode")
	// The distance matrix: each of the 3 points' nearest other point.
	pairs, err := d.points.SearchMatrixPairs(ctx, &pb.SearchMatrixPoints{CollectionName: "c", Limit: &one})
	if err != nil || len(pairs.Result.Pairs) != 3 || pairs.Result.Pairs[0].A.GetNum() != 1 {
		t.Fatalf("matrix pairs: %v %v", pairs, err)
	}
	offsets, err := d.points.SearchMatrixOffsets(ctx, &pb.SearchMatrixPoints{CollectionName: "c", Limit: &one})
	if err != nil || len(offsets.Result.Ids) != 3 || len(offsets.Result.Scores) != 3 || len(offsets.Result.OffsetsCol) != 3 {
		t.Fatalf("matrix offsets: %v %v", offsets, err)
	}
	for i, p := range pairs.Result.Pairs {
		col := offsets.Result.OffsetsCol[i]
		if offsets.Result.Ids[col].GetNum() != p.B.GetNum() || offsets.Result.Scores[i] != p.Score {
			t.Fatalf("pairs %v and offsets %v disagree", pairs.Result, offsets.Result)
		}
	}
	nope := "nope"
	_, err = d.points.SearchMatrixPairs(ctx, &pb.SearchMatrixPoints{CollectionName: "c", Using: &nope})
	wantCode(t, err, codes.InvalidArgument, "nope")
	// Aliases: a collection call resolves one; a change is all or none.
	alias := func(a *pb.AliasOperations) []*pb.AliasOperations { return []*pb.AliasOperations{a} }
	if _, err := d.collections.UpdateAliases(ctx, &pb.ChangeAliases{Actions: alias(&pb.AliasOperations{Action: &pb.AliasOperations_CreateAlias{
		CreateAlias: &pb.CreateAlias{CollectionName: "c", AliasName: "al"}}})}); err != nil {
		t.Fatal(err)
	}
	if n, err := d.points.Count(ctx, &pb.CountPoints{CollectionName: "al"}); err != nil || n.Result.Count != 3 {
		t.Fatalf("count through the alias: %v %v", n, err)
	}
	_, err = d.collections.UpdateAliases(ctx, &pb.ChangeAliases{Actions: []*pb.AliasOperations{
		{Action: &pb.AliasOperations_RenameAlias{RenameAlias: &pb.RenameAlias{OldAliasName: "al", NewAliasName: "al2"}}}, {}}})
	wantCode(t, err, codes.InvalidArgument, "actions[1]")
	if _, err := d.collections.UpdateAliases(ctx, &pb.ChangeAliases{Actions: alias(&pb.AliasOperations{Action: &pb.AliasOperations_RenameAlias{
		RenameAlias: &pb.RenameAlias{OldAliasName: "al", NewAliasName: "al2"}}})}); err != nil {
		t.Fatal(err)
	}
	for _, list := range []func() (*pb.ListAliasesResponse, error){
		func() (*pb.ListAliasesResponse, error) {
			return d.collections.ListAliases(ctx, &pb.ListAliasesRequest{})
		},
		func() (*pb.ListAliasesResponse, error) {
			return d.collections.ListCollectionAliases(ctx, &pb.ListCollectionAliasesRequest{CollectionName: "c"})
		},
	} {
		if got, err := list(); err != nil || len(got.Aliases) != 1 || got.Aliases[0].AliasName != "al2" || got.Aliases[0].CollectionName != "c" {
			t.Fatalf("aliases: %v %v", got, err)
		}
	}
	_, err = d.collections.ListCollectionAliases(ctx, &pb.ListCollectionAliasesRequest{CollectionName: "nope"})
	wantCode(t, err, codes.NotFound, "nope")
	if _, err := d.collections.UpdateAliases(ctx, &pb.ChangeAliases{Actions: alias(&pb.AliasOperations{Action: &pb.AliasOperations_DeleteAlias{
		DeleteAlias: &pb.DeleteAlias{AliasName: "al2"}}})}); err != nil {
		t.Fatal(err)
	}
	if got, err := d.collections.ListAliases(ctx, &pb.ListAliasesRequest{}); err != nil || len(got.Aliases) != 0 {
		t.Fatalf("aliases after the delete: %v %v", got, err)
	}
	// UpdateBatch: every operation is translated before any runs.
	up := &pb.PointsUpdateOperation{Operation: &pb.PointsUpdateOperation_Upsert{Upsert: &pb.PointsUpdateOperation_PointStructList{
		Points: []*pb.PointStruct{{Id: num(4), Vectors: dense(2, 2)}}}}}
	set := &pb.PointsUpdateOperation{Operation: &pb.PointsUpdateOperation_SetPayload_{SetPayload: &pb.PointsUpdateOperation_SetPayload{
		Payload: map[string]*pb.Value{"k": kind("c")}, PointsSelector: &pb.PointsSelector{PointsSelectorOneOf: &pb.PointsSelector_Points{
			Points: &pb.PointsIdsList{Ids: []*pb.PointId{num(4)}}}}}}}
	_, err = d.points.UpdateBatch(ctx, &pb.UpdateBatchPoints{CollectionName: "c", Operations: []*pb.PointsUpdateOperation{up, {}}})
	wantCode(t, err, codes.InvalidArgument, "operations[1]")
	if got, err := d.points.Get(ctx, &pb.GetPoints{CollectionName: "c", Ids: []*pb.PointId{num(4)}}); err != nil || len(got.Result) != 0 {
		t.Fatalf("a refused batch wrote: %v %v", got, err)
	}
	batch, err := d.points.UpdateBatch(ctx, &pb.UpdateBatchPoints{CollectionName: "c", Operations: []*pb.PointsUpdateOperation{up, set}})
	if err != nil || len(batch.Result) != 2 || batch.Result[1].Status != pb.UpdateStatus_Completed {
		t.Fatalf("batch: %v %v", batch, err)
	}
	if got, err := d.points.Get(ctx, &pb.GetPoints{CollectionName: "c", Ids: []*pb.PointId{num(4)}, WithPayload: yes}); err != nil ||
		len(got.Result) != 1 || got.Result[0].Payload["k"].GetStringValue() != "c" {
		t.Fatalf("after the batch: %v %v", got, err)
	}
	del4 := &pb.PointsSelector{PointsSelectorOneOf: &pb.PointsSelector_Points{Points: &pb.PointsIdsList{Ids: []*pb.PointId{num(4)}}}}
	if _, err := d.points.Delete(ctx, &pb.DeletePoints{CollectionName: "c", Points: del4}); err != nil {
		t.Fatal(err)
	}
	limit := uint32(2)
	page, err := d.points.Scroll(ctx, &pb.ScrollPoints{CollectionName: "c", Limit: &limit})
	if err != nil || len(page.Result) != 2 || page.NextPageOffset.GetNum() != 3 {
		t.Fatalf("scroll: %v %v", page, err)
	}
	del := &pb.PointsSelector{PointsSelectorOneOf: &pb.PointsSelector_Filter{Filter: isA}}
	if _, err := d.points.Delete(ctx, &pb.DeletePoints{CollectionName: "c", Points: del}); err != nil {
		t.Fatal(err)
	}
	got, err := d.points.Get(ctx, &pb.GetPoints{CollectionName: "c", Ids: []*pb.PointId{num(1), num(2)}})
	if err != nil || len(got.Result) != 1 || got.Result[0].Id.GetNum() != 2 {
		t.Fatalf("get after delete: %v %v", got, err)
	}
	threshold := uint64(1234)
	if _, err := d.collections.Update(ctx, &pb.UpdateCollection{CollectionName: "c", HnswConfig: &pb.HnswConfigDiff{FullScanThreshold: &threshold},
		Metadata: map[string]*pb.Value{"team": kind("x")}}); err != nil {
		t.Fatal(err)
	}
	info, err := d.collections.Get(ctx, &pb.GetCollectionInfoRequest{CollectionName: "c"})
	if err != nil || info.Result.GetPointsCount() != 1 || info.Result.Config.Params.VectorsConfig.GetParams().GetSize() != 2 {
		t.Fatalf("info: %v %v", info, err)
	}
	if c := info.Result.Config; c.HnswConfig.GetFullScanThreshold() != 1234 || c.Metadata["team"].GetStringValue() != "x" {
		t.Fatalf("info does not report the update: %v", c)
	}
}

// FuzzGRPCQueryTranslation feeds arbitrary QueryPoints messages to the
// translation and the call: every message answers or errs, never
// panics (the interceptor would turn a panic into Internal, hiding it).
func FuzzGRPCQueryTranslation(f *testing.F) {
	for _, q := range []*pb.QueryPoints{
		{Query: &pb.Query{Variant: &pb.Query_Nearest{Nearest: &pb.VectorInput{Variant: &pb.VectorInput_Dense{Dense: &pb.DenseVector{Data: []float32{1, 0}}}}}}},
		{Prefetch: []*pb.PrefetchQuery{{}}, Query: &pb.Query{Variant: &pb.Query_Fusion{Fusion: pb.Fusion_RRF}}},
		{Filter: &pb.Filter{Must: []*pb.Condition{{ConditionOneOf: &pb.Condition_Field{Field: &pb.FieldCondition{Key: "k", Range: &pb.Range{}}}}}}},
	} {
		b, err := proto.Marshal(q)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	d := newGRPCDoor(f, "", guard.Limits{})
	ctx := context.Background()
	createDot2(f, ctx, d, "c")
	if _, err := d.points.Upsert(ctx, &pb.UpsertPoints{CollectionName: "c", Points: []*pb.PointStruct{{Id: num(1), Vectors: dense(1, 0)}}}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var q pb.QueryPoints
		if proto.Unmarshal(b, &q) != nil {
			return
		}
		req, err := queryPointsRequest(&q)
		if err != nil {
			return
		}
		q.CollectionName = "c"
		// Through the door: the interceptor must not have a panic to recover.
		if _, err := (grpcPoints{h: d.h}).Query(ctx, &q); err != nil {
			_ = req
		}
	})
}
