package qdrant

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"time"

	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
)

// GRPCServer returns a gRPC server of Qdrant's Collections, Points,
// Snapshots and Qdrant (HealthCheck) services over h's calls: what qdrant-client speaks
// with prefer_grpc=True (strata-server --qdrant-grpc-addr). Every call
// passes h's guard's API key ("api-key" metadata, or "authorization:
// Bearer <key>") and its limits: a message is at most MaxBodyBytes in,
// MaxAnswerBytes out. Errors carry the REST door's message with the
// gRPC code of its HTTP status (grpcCode); a panic is recovered into
// codes.Internal. Calls the door does not serve answer Unimplemented.
func (h *Handler) GRPCServer() *grpc.Server {
	s := grpc.NewServer(
		grpc.MaxRecvMsgSize(int(min(h.limits.MaxBodyBytes, 1<<31-1))),
		grpc.MaxSendMsgSize(int(min(h.limits.MaxAnswerBytes, 1<<31-1))),
		grpc.ChainUnaryInterceptor(h.intercept),
		// A call runs on one of a set of long-lived goroutines, not on
		// a new one: a new goroutine's stack grew to a search's depth
		// on every call (runtime.newstack and copystack were 11% of the
		// server's CPU serving one connection's queries). Past the set,
		// a call gets a goroutine of its own, as before.
		grpc.NumStreamWorkers(uint32(16*runtime.GOMAXPROCS(0))),
		// Fixed flow-control windows: with grpc-go's dynamic ones the
		// server pings the client with every small request to estimate
		// the bandwidth-delay product (a ping out, an ack back) and
		// sends a window update with most answers. 4 MiB a call, 8 MiB
		// a connection in flight (the dynamic windows start at 64 KiB
		// and grow to 16 MiB): a batch of a few MB is sent without
		// waiting for a window update, and one call still moves 80 MB/s
		// over a link of 50 ms round trip.
		grpc.InitialWindowSize(4<<20),
		grpc.InitialConnWindowSize(8<<20),
	)
	pb.RegisterCollectionsServer(s, grpcCollections{h: h})
	pb.RegisterPointsServer(s, grpcPoints{h: h})
	pb.RegisterQdrantServer(s, grpcQdrant{})
	pb.RegisterSnapshotsServer(s, grpcSnapshots{h: h})
	return s
}

// intercept admits a call (the API key), recovers a panic, gives the
// error its code and records the call in the guard's request metrics
// (door "qdrant-grpc", the method as route).
func (h *Handler) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (resp any, err error) {
	start := time.Now()
	defer func() {
		if v := recover(); v != nil {
			h.log.Error("panic serving Qdrant gRPC call", "method", info.FullMethod, "panic", v)
			resp, err = nil, fmt.Errorf("qdrant: internal error (please report): %v", v)
		}
		code := http.StatusOK
		if err != nil {
			code = httpStatusOf(err)
			h.log.Info("qdrant gRPC call failed", "method", info.FullMethod, "status", code, "error", err)
			err = grpcError(err)
		}
		h.guard.Observe("qdrant-grpc", "POST", info.FullMethod, code, time.Since(start))
	}()
	if info.FullMethod != pb.Qdrant_HealthCheck_FullMethodName {
		// the two keys alone (FromIncomingContext copies all the metadata)
		if err := h.guard.AdmitKey(metadata.ValueFromIncomingContext(ctx, "api-key"),
			metadata.ValueFromIncomingContext(ctx, "authorization")); err != nil {
			return nil, err
		}
	}
	return next(ctx, req)
}

// httpStatusOf is the HTTP status of an error as the REST door answers it
// (errors.go), or the one a gRPC status error stands for.
func httpStatusOf(err error) int {
	if s, ok := grpcstatus.FromError(err); ok {
		switch s.Code() {
		case codes.Unimplemented:
			return http.StatusNotImplemented
		case codes.InvalidArgument:
			return http.StatusBadRequest
		}
	}
	return status(err)
}

// grpcError is err with the gRPC code of its HTTP status, as Qdrant maps
// its errors: bad input InvalidArgument, a missing collection or point
// NotFound, an existing one AlreadyExists, a limit ResourceExhausted, the
// key Unauthenticated / PermissionDenied.
func grpcError(err error) error {
	if _, ok := grpcstatus.FromError(err); ok {
		return err
	}
	return grpcstatus.Error(grpcCode(status(err)), message(err))
}

func grpcCode(httpStatus int) codes.Code {
	switch httpStatus {
	case http.StatusBadRequest:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusConflict:
		return codes.AlreadyExists
	case http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity, http.StatusInsufficientStorage:
		return codes.ResourceExhausted
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	}
	return codes.Internal
}

// elapsed is the "time" of an answer: seconds since start.
func elapsed(start time.Time) float64 { return time.Since(start).Seconds() }

type grpcQdrant struct {
	pb.UnimplementedQdrantServer
}

func (grpcQdrant) HealthCheck(context.Context, *pb.HealthCheckRequest) (*pb.HealthCheckReply, error) {
	return &pb.HealthCheckReply{Title: "qdrant - vector search engine", Version: Version}, nil
}

type grpcCollections struct {
	pb.UnimplementedCollectionsServer
	h *Handler
}

func (s grpcCollections) Get(ctx context.Context, r *pb.GetCollectionInfoRequest) (*pb.GetCollectionInfoResponse, error) {
	start := time.Now()
	ci, err := s.h.getCollection(ctx, r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	info, err := pbCollectionInfo(ci)
	if err != nil {
		return nil, err
	}
	return &pb.GetCollectionInfoResponse{Result: info, Time: elapsed(start)}, nil
}

func (s grpcCollections) List(ctx context.Context, _ *pb.ListCollectionsRequest) (*pb.ListCollectionsResponse, error) {
	start := time.Now()
	names, err := s.h.listCollections(ctx)
	if err != nil {
		return nil, err
	}
	out := &pb.ListCollectionsResponse{}
	for _, name := range names {
		out.Collections = append(out.Collections, &pb.CollectionDescription{Name: name})
	}
	out.Time = elapsed(start)
	return out, nil
}

func (s grpcCollections) Create(ctx context.Context, r *pb.CreateCollection) (*pb.CollectionOperationResponse, error) {
	start := time.Now()
	req, err := createRequestOf(r)
	if err != nil {
		return nil, err
	}
	ok, err := s.h.createCollection(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	return &pb.CollectionOperationResponse{Result: ok, Time: elapsed(start)}, nil
}

func (s grpcCollections) Delete(ctx context.Context, r *pb.DeleteCollection) (*pb.CollectionOperationResponse, error) {
	start := time.Now()
	ok, err := s.h.deleteCollection(ctx, r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	return &pb.CollectionOperationResponse{Result: ok, Time: elapsed(start)}, nil
}

func (s grpcCollections) CollectionExists(ctx context.Context, r *pb.CollectionExistsRequest) (*pb.CollectionExistsResponse, error) {
	start := time.Now()
	exists, err := s.h.collectionExists(ctx, r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	return &pb.CollectionExistsResponse{Result: &pb.CollectionExists{Exists: exists}, Time: elapsed(start)}, nil
}

func (s grpcCollections) Update(ctx context.Context, r *pb.UpdateCollection) (*pb.CollectionOperationResponse, error) {
	start := time.Now()
	req, err := updateCollectionRequestOf(r)
	if err != nil {
		return nil, err
	}
	ok, err := s.h.updateCollection(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	return &pb.CollectionOperationResponse{Result: ok, Time: elapsed(start)}, nil
}

func (s grpcCollections) UpdateAliases(ctx context.Context, r *pb.ChangeAliases) (*pb.CollectionOperationResponse, error) {
	start := time.Now()
	req := &changeAliasesRequest{Actions: make([]aliasAction, len(r.GetActions()))}
	for i, a := range r.GetActions() {
		switch k := a.GetAction().(type) {
		case *pb.AliasOperations_CreateAlias:
			req.Actions[i].CreateAlias = &createAlias{CollectionName: k.CreateAlias.GetCollectionName(), AliasName: k.CreateAlias.GetAliasName()}
		case *pb.AliasOperations_DeleteAlias:
			req.Actions[i].DeleteAlias = &deleteAlias{AliasName: k.DeleteAlias.GetAliasName()}
		case *pb.AliasOperations_RenameAlias:
			req.Actions[i].RenameAlias = &renameAlias{OldAliasName: k.RenameAlias.GetOldAliasName(), NewAliasName: k.RenameAlias.GetNewAliasName()}
		} // none set: updateAliases refuses it by its index
	}
	ok, err := s.h.updateAliases(ctx, req)
	if err != nil {
		return nil, err
	}
	return &pb.CollectionOperationResponse{Result: ok, Time: elapsed(start)}, nil
}

func pbAliases(res aliasesResponse, start time.Time) *pb.ListAliasesResponse {
	out := &pb.ListAliasesResponse{Aliases: make([]*pb.AliasDescription, len(res.Aliases))}
	for i, a := range res.Aliases {
		out.Aliases[i] = &pb.AliasDescription{AliasName: a.AliasName, CollectionName: a.CollectionName}
	}
	out.Time = elapsed(start)
	return out
}

func (s grpcCollections) ListCollectionAliases(ctx context.Context, r *pb.ListCollectionAliasesRequest) (*pb.ListAliasesResponse, error) {
	start := time.Now()
	res, err := s.h.collectionAliases(ctx, r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	return pbAliases(res, start), nil
}

func (s grpcCollections) ListAliases(ctx context.Context, _ *pb.ListAliasesRequest) (*pb.ListAliasesResponse, error) {
	start := time.Now()
	res, err := s.h.listAliases(ctx)
	if err != nil {
		return nil, err
	}
	return pbAliases(res, start), nil
}

func (s grpcCollections) CollectionClusterInfo(context.Context, *pb.CollectionClusterInfoRequest) (*pb.CollectionClusterInfoResponse, error) {
	return nil, grpcstatus.Error(codes.Unimplemented, "cluster info: strata is not distributed")
}

func (s grpcCollections) UpdateCollectionClusterSetup(context.Context, *pb.UpdateCollectionClusterSetupRequest) (*pb.UpdateCollectionClusterSetupResponse, error) {
	return nil, grpcstatus.Error(codes.Unimplemented, "cluster setup: strata is not distributed")
}

func (s grpcCollections) CreateShardKey(context.Context, *pb.CreateShardKeyRequest) (*pb.CreateShardKeyResponse, error) {
	return nil, grpcstatus.Error(codes.Unimplemented, "shard keys: strata is not distributed")
}

func (s grpcCollections) DeleteShardKey(context.Context, *pb.DeleteShardKeyRequest) (*pb.DeleteShardKeyResponse, error) {
	return nil, grpcstatus.Error(codes.Unimplemented, "shard keys: strata is not distributed")
}

func (s grpcCollections) ListShardKeys(context.Context, *pb.ListShardKeysRequest) (*pb.ListShardKeysResponse, error) {
	return nil, grpcstatus.Error(codes.Unimplemented, "shard keys: strata is not distributed")
}

type grpcPoints struct {
	pb.UnimplementedPointsServer
	h *Handler
}

// refuseShardKey: shard keys name shards strata does not have; a request
// that names some would be answered from all, so it is refused.
func refuseShardKey(sel *pb.ShardKeySelector) error {
	if sel != nil {
		return unsupportedf("shard_key_selector (strata is not sharded)")
	}
	return nil
}

func (s grpcPoints) Upsert(ctx context.Context, r *pb.UpsertPoints) (*pb.PointsOperationResponse, error) {
	start := time.Now()
	if err := refuseShardKey(r.GetShardKeySelector()); err != nil {
		return nil, err
	}
	req, err := upsertRequestOf(r.GetPoints(), r.UpdateFilter, r.UpdateMode)
	if err != nil {
		return nil, err
	}
	res, err := s.h.upsert(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	return pbUpdate(res, start), nil
}

func (s grpcPoints) Delete(ctx context.Context, r *pb.DeletePoints) (*pb.PointsOperationResponse, error) {
	start := time.Now()
	if err := refuseShardKey(r.GetShardKeySelector()); err != nil {
		return nil, err
	}
	sel, err := selectorJSON(r.GetPoints())
	if err != nil {
		return nil, err
	}
	res, err := s.h.deletePoints(ctx, r.GetCollectionName(), &sel)
	if err != nil {
		return nil, err
	}
	return pbUpdate(res, start), nil
}

func (s grpcPoints) Get(ctx context.Context, r *pb.GetPoints) (*pb.GetResponse, error) {
	start := time.Now()
	if err := refuseShardKey(r.GetShardKeySelector()); err != nil {
		return nil, err
	}
	ids, err := idsJSON(r.GetIds())
	if err != nil {
		return nil, err
	}
	req := &retrieveRequest{IDs: nonNil(ids), WithPayload: withPayloadJSON(r.GetWithPayload()), WithVector: withVectorsJSON(r.GetWithVectors())}
	if req.WithVector == nil { // gRPC's default, unlike REST's retrieve
		req.WithVector = jsonBool(false)
	}
	recs, err := s.h.retrieve(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	points, err := pbRetrieved(recs)
	if err != nil {
		return nil, err
	}
	return &pb.GetResponse{Result: points, Time: elapsed(start)}, nil
}

func (s grpcPoints) UpdateVectors(ctx context.Context, r *pb.UpdatePointVectors) (*pb.PointsOperationResponse, error) {
	start := time.Now()
	if err := refuseShardKey(r.GetShardKeySelector()); err != nil {
		return nil, err
	}
	req, err := updateVectorsRequestOf(r.GetPoints(), r.UpdateFilter)
	if err != nil {
		return nil, err
	}
	res, err := s.h.updateVectors(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	return pbUpdate(res, start), nil
}

func (s grpcPoints) DeleteVectors(ctx context.Context, r *pb.DeletePointVectors) (*pb.PointsOperationResponse, error) {
	start := time.Now()
	if err := refuseShardKey(r.GetShardKeySelector()); err != nil {
		return nil, err
	}
	sel, err := selectorJSON(r.GetPointsSelector())
	if err != nil {
		return nil, err
	}
	res, err := s.h.deleteVectors(ctx, r.GetCollectionName(), &deleteVectorsRequest{selectorRequest: sel, Vector: r.GetVectors().GetNames()})
	if err != nil {
		return nil, err
	}
	return pbUpdate(res, start), nil
}

// payloadCall runs one of the four payload edits.
func (s grpcPoints) payloadCall(ctx context.Context, name string, shard *pb.ShardKeySelector, sel *pb.PointsSelector,
	req *payloadRequest, fn qdrantCall[payloadRequest, updateResult]) (*pb.PointsOperationResponse, error) {
	start := time.Now()
	if err := refuseShardKey(shard); err != nil {
		return nil, err
	}
	var err error
	if req.selectorRequest, err = selectorJSON(sel); err != nil {
		return nil, err
	}
	res, err := fn(ctx, name, req)
	if err != nil {
		return nil, err
	}
	return pbUpdate(res, start), nil
}

func (s grpcPoints) setPayloadRequest(r *pb.SetPayloadPoints) (*payloadRequest, error) {
	payload, err := payloadJSON(r.GetPayload())
	if err != nil {
		return nil, err
	}
	return &payloadRequest{Payload: payload, Key: r.Key}, nil
}

func (s grpcPoints) SetPayload(ctx context.Context, r *pb.SetPayloadPoints) (*pb.PointsOperationResponse, error) {
	req, err := s.setPayloadRequest(r)
	if err != nil {
		return nil, err
	}
	return s.payloadCall(ctx, r.GetCollectionName(), r.GetShardKeySelector(), r.GetPointsSelector(), req, s.h.setPayload)
}

func (s grpcPoints) OverwritePayload(ctx context.Context, r *pb.SetPayloadPoints) (*pb.PointsOperationResponse, error) {
	req, err := s.setPayloadRequest(r)
	if err != nil {
		return nil, err
	}
	return s.payloadCall(ctx, r.GetCollectionName(), r.GetShardKeySelector(), r.GetPointsSelector(), req, s.h.overwritePayload)
}

func (s grpcPoints) DeletePayload(ctx context.Context, r *pb.DeletePayloadPoints) (*pb.PointsOperationResponse, error) {
	req := &payloadRequest{Keys: nonNil(r.GetKeys())}
	return s.payloadCall(ctx, r.GetCollectionName(), r.GetShardKeySelector(), r.GetPointsSelector(), req, s.h.deletePayload)
}

func (s grpcPoints) ClearPayload(ctx context.Context, r *pb.ClearPayloadPoints) (*pb.PointsOperationResponse, error) {
	return s.payloadCall(ctx, r.GetCollectionName(), r.GetShardKeySelector(), r.GetPoints(), &payloadRequest{}, s.h.clearPayload)
}

func (s grpcPoints) CreateFieldIndex(ctx context.Context, r *pb.CreateFieldIndexCollection) (*pb.PointsOperationResponse, error) {
	start := time.Now()
	req, err := indexRequestOf(r)
	if err != nil {
		return nil, err
	}
	res, err := s.h.createIndex(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	return pbUpdate(res, start), nil
}

func (s grpcPoints) DeleteFieldIndex(ctx context.Context, r *pb.DeleteFieldIndexCollection) (*pb.PointsOperationResponse, error) {
	start := time.Now()
	res, err := s.h.deleteIndex(ctx, r.GetCollectionName(), r.GetFieldName())
	if err != nil {
		return nil, err
	}
	return pbUpdate(res, start), nil
}

func (s grpcPoints) Search(ctx context.Context, r *pb.SearchPoints) (*pb.SearchResponse, error) {
	start := time.Now()
	if err := refuseShardKey(r.GetShardKeySelector()); err != nil {
		return nil, err
	}
	req, err := searchPointsRequest(r)
	if err != nil {
		return nil, err
	}
	recs, err := s.h.search(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	points, err := pbScored(recs)
	if err != nil {
		return nil, err
	}
	return &pb.SearchResponse{Result: points, Time: elapsed(start)}, nil
}

func (s grpcPoints) SearchBatch(ctx context.Context, r *pb.SearchBatchPoints) (*pb.SearchBatchResponse, error) {
	start := time.Now()
	req, err := batchOf(r.GetSearchPoints(), "search_points", searchPointsRequest)
	if err != nil {
		return nil, err
	}
	answers, err := s.h.searchBatch(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	out := &pb.SearchBatchResponse{Result: make([]*pb.BatchResult, len(answers))}
	for i, recs := range answers {
		points, err := pbScored(recs)
		if err != nil {
			return nil, err
		}
		out.Result[i] = &pb.BatchResult{Result: points}
	}
	out.Time = elapsed(start)
	return out, nil
}

func (s grpcPoints) Scroll(ctx context.Context, r *pb.ScrollPoints) (*pb.ScrollResponse, error) {
	start := time.Now()
	if err := refuseShardKey(r.GetShardKeySelector()); err != nil {
		return nil, err
	}
	req, err := scrollRequestOf(r)
	if err != nil {
		return nil, err
	}
	res, err := s.h.scroll(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	points, err := pbRetrieved(res.Points)
	if err != nil {
		return nil, err
	}
	out := &pb.ScrollResponse{Result: points, Time: elapsed(start)}
	if res.NextPageOffset != nil {
		out.NextPageOffset = pbID(res.NextPageOffset.ID)
	}
	return out, nil
}

func (s grpcPoints) Recommend(ctx context.Context, r *pb.RecommendPoints) (*pb.RecommendResponse, error) {
	start := time.Now()
	points, err := s.scoredQuery(ctx, r.GetCollectionName(), r.GetShardKeySelector(), func() (*queryRequest, error) { return recommendPointsRequest(r) })
	if err != nil {
		return nil, err
	}
	return &pb.RecommendResponse{Result: points, Time: elapsed(start)}, nil
}

func (s grpcPoints) RecommendBatch(ctx context.Context, r *pb.RecommendBatchPoints) (*pb.RecommendBatchResponse, error) {
	start := time.Now()
	req, err := batchOf(r.GetRecommendPoints(), "recommend_points", recommendPointsRequest)
	if err != nil {
		return nil, err
	}
	results, err := s.scoredBatch(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	return &pb.RecommendBatchResponse{Result: results, Time: elapsed(start)}, nil
}

func (s grpcPoints) Discover(ctx context.Context, r *pb.DiscoverPoints) (*pb.DiscoverResponse, error) {
	start := time.Now()
	points, err := s.scoredQuery(ctx, r.GetCollectionName(), r.GetShardKeySelector(), func() (*queryRequest, error) { return discoverPointsRequest(r) })
	if err != nil {
		return nil, err
	}
	return &pb.DiscoverResponse{Result: points, Time: elapsed(start)}, nil
}

func (s grpcPoints) DiscoverBatch(ctx context.Context, r *pb.DiscoverBatchPoints) (*pb.DiscoverBatchResponse, error) {
	start := time.Now()
	req, err := batchOf(r.GetDiscoverPoints(), "discover_points", discoverPointsRequest)
	if err != nil {
		return nil, err
	}
	results, err := s.scoredBatch(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	return &pb.DiscoverBatchResponse{Result: results, Time: elapsed(start)}, nil
}

func (s grpcPoints) Count(ctx context.Context, r *pb.CountPoints) (*pb.CountResponse, error) {
	start := time.Now()
	if err := refuseShardKey(r.GetShardKeySelector()); err != nil {
		return nil, err
	}
	filter, err := rawFilter(r.GetFilter())
	if err != nil {
		return nil, err
	}
	res, err := s.h.count(ctx, r.GetCollectionName(), &countRequest{Filter: filter, Exact: r.Exact})
	if err != nil {
		return nil, err
	}
	return &pb.CountResponse{Result: &pb.CountResult{Count: uint64(res.Count)}, Time: elapsed(start)}, nil
}

func (s grpcPoints) Query(ctx context.Context, r *pb.QueryPoints) (*pb.QueryResponse, error) {
	start := time.Now()
	points, err := s.scoredQuery(ctx, r.GetCollectionName(), r.GetShardKeySelector(), func() (*queryRequest, error) { return queryPointsRequest(r) })
	if err != nil {
		return nil, err
	}
	return &pb.QueryResponse{Result: points, Time: elapsed(start)}, nil
}

func (s grpcPoints) QueryBatch(ctx context.Context, r *pb.QueryBatchPoints) (*pb.QueryBatchResponse, error) {
	start := time.Now()
	req, err := batchOf(r.GetQueryPoints(), "query_points", queryPointsRequest)
	if err != nil {
		return nil, err
	}
	results, err := s.scoredBatch(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	return &pb.QueryBatchResponse{Result: results, Time: elapsed(start)}, nil
}

func (s grpcPoints) Facet(ctx context.Context, r *pb.FacetCounts) (*pb.FacetResponse, error) {
	start := time.Now()
	if err := refuseShardKey(r.GetShardKeySelector()); err != nil {
		return nil, err
	}
	req, err := facetRequestOf(r)
	if err != nil {
		return nil, err
	}
	res, err := s.h.facet(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	return &pb.FacetResponse{Hits: pbFacetHits(res.Hits), Time: elapsed(start)}, nil
}

// scoredQuery answers a call that is one query: translate, then the
// query call, then its points as ScoredPoints.
func (s grpcPoints) scoredQuery(ctx context.Context, name string, shard *pb.ShardKeySelector,
	translate func() (*queryRequest, error)) ([]*pb.ScoredPoint, error) {
	if err := refuseShardKey(shard); err != nil {
		return nil, err
	}
	req, err := translate()
	if err != nil {
		return nil, err
	}
	res, err := s.h.query(ctx, name, req)
	if err != nil {
		return nil, err
	}
	return pbScored(res.Points)
}

// sharded is a request that may name shards.
type sharded interface {
	GetShardKeySelector() *pb.ShardKeySelector
}

// batchOf translates the requests of a batch call (what names them in
// errors) into one batchRequest.
func batchOf[M sharded](list []M, what string, translate func(M) (*queryRequest, error)) (*batchRequest, error) {
	req := &batchRequest{Searches: make([]queryRequest, len(list))}
	for i, m := range list {
		if err := refuseShardKey(m.GetShardKeySelector()); err != nil {
			return nil, err
		}
		q, err := translate(m)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", what, i, err)
		}
		req.Searches[i] = *q
	}
	return req, nil
}

// scoredBatch answers a batch of queries (query_batch: the limits are
// checked for the whole batch first) as BatchResults.
func (s grpcPoints) scoredBatch(ctx context.Context, name string, req *batchRequest) ([]*pb.BatchResult, error) {
	answers, err := s.h.queryBatch(ctx, name, req)
	if err != nil {
		return nil, err
	}
	out := make([]*pb.BatchResult, len(answers))
	for i, a := range answers {
		points, err := pbScored(a.Points)
		if err != nil {
			return nil, err
		}
		out[i] = &pb.BatchResult{Result: points}
	}
	return out, nil
}

func unimplemented(what string) error {
	return grpcstatus.Error(codes.Unimplemented, what+" is not supported by strata's Qdrant API")
}

func (s grpcPoints) CreateVectorName(context.Context, *pb.CreateVectorNameRequest) (*pb.PointsOperationResponse, error) {
	return nil, unimplemented("adding a vector to a collection")
}

func (s grpcPoints) DeleteVectorName(context.Context, *pb.DeleteVectorNameRequest) (*pb.PointsOperationResponse, error) {
	return nil, unimplemented("removing a vector from a collection")
}

func (s grpcPoints) SearchGroups(ctx context.Context, r *pb.SearchPointGroups) (*pb.SearchGroupsResponse, error) {
	start := time.Now()
	res, err := groupsCall(ctx, s.h.searchGroups, r, searchGroupsRequestOf)
	if err != nil {
		return nil, err
	}
	return &pb.SearchGroupsResponse{Result: res, Time: elapsed(start)}, nil
}

func (s grpcPoints) RecommendGroups(ctx context.Context, r *pb.RecommendPointGroups) (*pb.RecommendGroupsResponse, error) {
	start := time.Now()
	res, err := groupsCall(ctx, s.h.recommendGroups, r, recommendGroupsRequestOf)
	if err != nil {
		return nil, err
	}
	return &pb.RecommendGroupsResponse{Result: res, Time: elapsed(start)}, nil
}

func (s grpcPoints) QueryGroups(ctx context.Context, r *pb.QueryPointGroups) (*pb.QueryGroupsResponse, error) {
	start := time.Now()
	res, err := groupsCall(ctx, s.h.queryGroups, r, queryGroupsRequestOf)
	if err != nil {
		return nil, err
	}
	return &pb.QueryGroupsResponse{Result: res, Time: elapsed(start)}, nil
}

// groupsRequest is a groups call's message.
type groupsRequest interface {
	sharded
	GetCollectionName() string
}

// groupsCall answers a groups call: translate, the shared call, the
// groups as protobuf.
func groupsCall[M groupsRequest, Req any](ctx context.Context, fn qdrantCall[Req, groupsResult], r M,
	translate func(M) (*Req, error)) (*pb.GroupsResult, error) {
	if err := refuseShardKey(r.GetShardKeySelector()); err != nil {
		return nil, err
	}
	req, err := translate(r)
	if err != nil {
		return nil, err
	}
	res, err := fn(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	return pbGroups(res)
}

func (s grpcPoints) UpdateBatch(ctx context.Context, r *pb.UpdateBatchPoints) (*pb.UpdateBatchResponse, error) {
	start := time.Now()
	ops := make([]batchOperation, len(r.GetOperations()))
	for i, op := range r.GetOperations() {
		var err error
		if ops[i], err = s.batchOperationOf(op); err != nil {
			return nil, fmt.Errorf("operations[%d]: %w", i, err)
		}
	}
	results, err := s.h.runBatch(ctx, r.GetCollectionName(), ops)
	if err != nil {
		return nil, err
	}
	out := &pb.UpdateBatchResponse{Result: make([]*pb.UpdateResult, len(results))}
	for i, res := range results {
		out.Result[i] = pbUpdate(res, start).Result
	}
	out.Time = elapsed(start)
	return out, nil
}

// batchOperationOf translates one operation of UpdateBatch into the
// request of the call it names, bound to that call (as the REST batch
// decodes its JSON bodies); all are translated before any runs.
func (s grpcPoints) batchOperationOf(op *pb.PointsUpdateOperation) (batchOperation, error) {
	type shardedSel interface {
		GetShardKeySelector() *pb.ShardKeySelector
		GetPointsSelector() *pb.PointsSelector
	}
	payloadOp := func(o shardedSel, req *payloadRequest, call qdrantCall[payloadRequest, updateResult]) (batchOperation, error) {
		if err := refuseShardKey(o.GetShardKeySelector()); err != nil {
			return nil, err
		}
		var err error
		if req.selectorRequest, err = selectorJSON(o.GetPointsSelector()); err != nil {
			return nil, err
		}
		return bound(req, call), nil
	}
	switch k := op.GetOperation().(type) {
	case *pb.PointsUpdateOperation_Upsert:
		if err := refuseShardKey(k.Upsert.GetShardKeySelector()); err != nil {
			return nil, err
		}
		req, err := upsertRequestOf(k.Upsert.GetPoints(), k.Upsert.UpdateFilter, k.Upsert.UpdateMode)
		if err != nil {
			return nil, err
		}
		return bound(req, s.h.upsert), nil
	case *pb.PointsUpdateOperation_DeletePoints_:
		if err := refuseShardKey(k.DeletePoints.GetShardKeySelector()); err != nil {
			return nil, err
		}
		sel, err := selectorJSON(k.DeletePoints.GetPoints())
		if err != nil {
			return nil, err
		}
		return bound(&sel, s.h.deletePoints), nil
	case *pb.PointsUpdateOperation_DeleteDeprecated:
		//lint:ignore SA1019 older clients send it
		sel, err := selectorJSON(k.DeleteDeprecated)
		if err != nil {
			return nil, err
		}
		return bound(&sel, s.h.deletePoints), nil
	case *pb.PointsUpdateOperation_SetPayload_:
		payload, err := payloadJSON(k.SetPayload.GetPayload())
		if err != nil {
			return nil, err
		}
		return payloadOp(k.SetPayload, &payloadRequest{Payload: payload, Key: k.SetPayload.Key}, s.h.setPayload)
	case *pb.PointsUpdateOperation_OverwritePayload_:
		payload, err := payloadJSON(k.OverwritePayload.GetPayload())
		if err != nil {
			return nil, err
		}
		return payloadOp(k.OverwritePayload, &payloadRequest{Payload: payload, Key: k.OverwritePayload.Key}, s.h.overwritePayload)
	case *pb.PointsUpdateOperation_DeletePayload_:
		return payloadOp(k.DeletePayload, &payloadRequest{Keys: nonNil(k.DeletePayload.GetKeys())}, s.h.deletePayload)
	case *pb.PointsUpdateOperation_ClearPayload_:
		if err := refuseShardKey(k.ClearPayload.GetShardKeySelector()); err != nil {
			return nil, err
		}
		sel, err := selectorJSON(k.ClearPayload.GetPoints())
		if err != nil {
			return nil, err
		}
		return bound(&payloadRequest{selectorRequest: sel}, s.h.clearPayload), nil
	case *pb.PointsUpdateOperation_ClearPayloadDeprecated:
		//lint:ignore SA1019 older clients send it
		sel, err := selectorJSON(k.ClearPayloadDeprecated)
		if err != nil {
			return nil, err
		}
		return bound(&payloadRequest{selectorRequest: sel}, s.h.clearPayload), nil
	case *pb.PointsUpdateOperation_UpdateVectors_:
		if err := refuseShardKey(k.UpdateVectors.GetShardKeySelector()); err != nil {
			return nil, err
		}
		req, err := updateVectorsRequestOf(k.UpdateVectors.GetPoints(), k.UpdateVectors.UpdateFilter)
		if err != nil {
			return nil, err
		}
		return bound(req, s.h.updateVectors), nil
	case *pb.PointsUpdateOperation_DeleteVectors_:
		if err := refuseShardKey(k.DeleteVectors.GetShardKeySelector()); err != nil {
			return nil, err
		}
		sel, err := selectorJSON(k.DeleteVectors.GetPointsSelector())
		if err != nil {
			return nil, err
		}
		return bound(&deleteVectorsRequest{selectorRequest: sel, Vector: k.DeleteVectors.GetVectors().GetNames()}, s.h.deleteVectors), nil
	}
	return nil, badRequestf("one of upsert, delete_points, set_payload, overwrite_payload, delete_payload, clear_payload, " +
		"update_vectors, delete_vectors")
}

// matrixRequestOf translates SearchMatrixPoints.
func matrixRequestOf(r *pb.SearchMatrixPoints) (*matrixRequest, error) {
	if err := refuseShardKey(r.GetShardKeySelector()); err != nil {
		return nil, err
	}
	filter, err := rawFilter(r.GetFilter())
	if err != nil {
		return nil, err
	}
	return &matrixRequest{Filter: filter, Sample: intPtr(r.Sample), Limit: intPtr(r.Limit), Using: r.Using}, nil
}

func (s grpcPoints) SearchMatrixPairs(ctx context.Context, r *pb.SearchMatrixPoints) (*pb.SearchMatrixPairsResponse, error) {
	start := time.Now()
	req, err := matrixRequestOf(r)
	if err != nil {
		return nil, err
	}
	res, err := s.h.searchMatrixPairs(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	out := &pb.SearchMatrixPairs{Pairs: make([]*pb.SearchMatrixPair, len(res.Pairs))}
	for i, p := range res.Pairs {
		out.Pairs[i] = &pb.SearchMatrixPair{A: pbID(p.A.ID), B: pbID(p.B.ID), Score: float32(p.Score)}
	}
	return &pb.SearchMatrixPairsResponse{Result: out, Time: elapsed(start)}, nil
}

func (s grpcPoints) SearchMatrixOffsets(ctx context.Context, r *pb.SearchMatrixPoints) (*pb.SearchMatrixOffsetsResponse, error) {
	start := time.Now()
	req, err := matrixRequestOf(r)
	if err != nil {
		return nil, err
	}
	res, err := s.h.searchMatrixOffsets(ctx, r.GetCollectionName(), req)
	if err != nil {
		return nil, err
	}
	out := &pb.SearchMatrixOffsets{OffsetsRow: make([]uint64, len(res.OffsetsRow)), OffsetsCol: make([]uint64, len(res.OffsetsCol)),
		Scores: make([]float32, len(res.Scores)), Ids: make([]*pb.PointId, len(res.IDs))}
	for i, v := range res.OffsetsRow {
		out.OffsetsRow[i] = uint64(v)
	}
	for i, v := range res.OffsetsCol {
		out.OffsetsCol[i] = uint64(v)
	}
	for i, v := range res.Scores {
		out.Scores[i] = float32(v)
	}
	for i, id := range res.IDs {
		out.Ids[i] = pbID(id.ID)
	}
	return &pb.SearchMatrixOffsetsResponse{Result: out, Time: elapsed(start)}, nil
}

var (
	_ pb.CollectionsServer = grpcCollections{}
	_ pb.PointsServer      = grpcPoints{}
)
