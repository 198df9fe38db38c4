package qdrant

import (
	"context"
	"time"

	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// grpcSnapshots is Qdrant's Snapshots service over the calls of
// snapshots.go. The full-storage calls (CreateFull, ListFull,
// DeleteFull) answer Unimplemented, as their REST routes answer 404;
// recovery has no gRPC call in Qdrant's API (REST only).
type grpcSnapshots struct {
	pb.UnimplementedSnapshotsServer
	h *Handler
}

func pbSnapshot(d snapshotDescription) *pb.SnapshotDescription {
	return &pb.SnapshotDescription{Name: d.Name, CreationTime: timestamppb.New(d.created), Size: d.Size, Checksum: d.Checksum}
}

func (s grpcSnapshots) Create(ctx context.Context, r *pb.CreateSnapshotRequest) (*pb.CreateSnapshotResponse, error) {
	start := time.Now()
	d, err := s.h.createSnapshot(ctx, r.GetCollectionName(), &struct{}{})
	if err != nil {
		return nil, err
	}
	return &pb.CreateSnapshotResponse{SnapshotDescription: pbSnapshot(d), Time: elapsed(start)}, nil
}

func (s grpcSnapshots) List(ctx context.Context, r *pb.ListSnapshotsRequest) (*pb.ListSnapshotsResponse, error) {
	start := time.Now()
	list, err := s.h.listSnapshots(ctx, r.GetCollectionName(), &struct{}{})
	if err != nil {
		return nil, err
	}
	out := make([]*pb.SnapshotDescription, len(list))
	for i, d := range list {
		out[i] = pbSnapshot(d)
	}
	return &pb.ListSnapshotsResponse{SnapshotDescriptions: out, Time: elapsed(start)}, nil
}

func (s grpcSnapshots) Delete(ctx context.Context, r *pb.DeleteSnapshotRequest) (*pb.DeleteSnapshotResponse, error) {
	start := time.Now()
	if _, err := s.h.deleteSnapshot(ctx, r.GetCollectionName(), &snapshotRef{Name: r.GetSnapshotName()}); err != nil {
		return nil, err
	}
	return &pb.DeleteSnapshotResponse{Time: elapsed(start)}, nil
}
