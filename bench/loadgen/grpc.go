package main

import (
	"context"
	"fmt"

	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// grpcConn sends a request's gRPC call (request.call) on a channel of its
// own, as each qdrant-client process with prefer_grpc=True holds one. The
// call's message is built once, before the clock starts; grpc-go encodes
// it per call, as qdrant-client's grpcio does.
type grpcConn struct {
	conn   *grpc.ClientConn
	points pb.PointsClient
}

func newGRPCConn(addr string) *grpcConn {
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	check(err)
	return &grpcConn{conn: conn, points: pb.NewPointsClient(conn)}
}

// grpcAnswer is what a gRPC call's roundTrip answers as its body when the
// answer has the expected shape (ten points; an upsert completed).
const grpcAnswer = "ok"

func (c *grpcConn) roundTrip(r *request) (int, []byte, error) {
	ctx := context.Background()
	switch m := r.call.(type) {
	case *pb.QueryPoints:
		got, err := c.points.Query(ctx, m)
		if err != nil {
			return 0, nil, err
		}
		if len(got.GetResult()) != int(m.GetLimit()) {
			return 200, fmt.Appendf(nil, "%d points", len(got.GetResult())), nil
		}
	case *pb.UpsertPoints:
		got, err := c.points.Upsert(ctx, m)
		if err != nil {
			return 0, nil, err
		}
		if s := got.GetResult().GetStatus(); s != pb.UpdateStatus_Completed {
			return 200, []byte(s.String()), nil
		}
	default:
		return 0, nil, fmt.Errorf("no gRPC call for %T", r.call)
	}
	return 200, []byte(grpcAnswer), nil
}

func (c *grpcConn) close() { c.conn.Close() }

// grpcQuery is qdrant-client's QueryPoints for query_points(query=vec,
// limit=10, with_payload=False, search_params=SearchParams(hnsw_ef=ef)).
func grpcQuery(vec []float32, ef int) *pb.QueryPoints {
	limit, hnswEf := uint64(10), uint64(ef)
	return &pb.QueryPoints{CollectionName: "bench", Limit: &limit, Params: &pb.SearchParams{HnswEf: &hnswEf},
		WithPayload: &pb.WithPayloadSelector{SelectorOptions: &pb.WithPayloadSelector_Enable{Enable: false}},
		WithVectors: &pb.WithVectorsSelector{SelectorOptions: &pb.WithVectorsSelector_Enable{Enable: false}},
		Query:       &pb.Query{Variant: &pb.Query_Nearest{Nearest: &pb.VectorInput{Variant: &pb.VectorInput_Dense{Dense: &pb.DenseVector{Data: vec}}}}}}
}

// grpcUpsert is qdrant-client's UpsertPoints for upsert(points=
// [PointStruct(id, vector, payload={"bucket": 1})], wait=True).
func grpcUpsert(id uint64, vec []float32) *pb.UpsertPoints {
	wait := true
	return &pb.UpsertPoints{CollectionName: "bench", Wait: &wait, Points: []*pb.PointStruct{{
		Id:      &pb.PointId{PointIdOptions: &pb.PointId_Num{Num: id}},
		Vectors: &pb.Vectors{VectorsOptions: &pb.Vectors_Vector{Vector: &pb.Vector{Vector: &pb.Vector_Dense{Dense: &pb.DenseVector{Data: vec}}}}},
		Payload: map[string]*pb.Value{"bucket": {Kind: &pb.Value_IntegerValue{IntegerValue: 1}}}}}}
}
