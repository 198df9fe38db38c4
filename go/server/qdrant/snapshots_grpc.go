package qdrant

import (
	"context"
	"time"

	pb "github.com/strata-db/strata/go/server/qdrant/qdrantpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// grpcSnapshots is Qdrant's Snapshots service over the calls of
// snapshots.go and snapshots_full.go (CreateFull, ListFull, DeleteFull);
// recovery has no gRPC call in Qdrant's API (REST only).
type grpcSnapshots struct {
	pb.UnimplementedSnapshotsServer
	h *Handler
}

func pbSnapshot(d snapshotDescription) *pb.SnapshotDescription {
	return &pb.SnapshotDescription{Name: d.Name, CreationTime: timestamppb.New(d.created), Size: d.Size, Checksum: d.Checksum}
}

func pbSnapshots(list []snapshotDescription) []*pb.SnapshotDescription {
	out := make([]*pb.SnapshotDescription, len(list))
	for i, d := range list {
		out[i] = pbSnapshot(d)
	}
	return out
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
	return &pb.ListSnapshotsResponse{SnapshotDescriptions: pbSnapshots(list), Time: elapsed(start)}, nil
}

func (s grpcSnapshots) Delete(ctx context.Context, r *pb.DeleteSnapshotRequest) (*pb.DeleteSnapshotResponse, error) {
	start := time.Now()
	if _, err := s.h.deleteSnapshot(ctx, r.GetCollectionName(), &snapshotRef{Name: r.GetSnapshotName()}); err != nil {
		return nil, err
	}
	return &pb.DeleteSnapshotResponse{Time: elapsed(start)}, nil
}

func (s grpcSnapshots) CreateFull(ctx context.Context, _ *pb.CreateFullSnapshotRequest) (*pb.CreateSnapshotResponse, error) {
	start := time.Now()
	d, err := s.h.createFullSnapshot(ctx, "", &struct{}{})
	if err != nil {
		return nil, err
	}
	return &pb.CreateSnapshotResponse{SnapshotDescription: pbSnapshot(d), Time: elapsed(start)}, nil
}

func (s grpcSnapshots) ListFull(ctx context.Context, _ *pb.ListFullSnapshotsRequest) (*pb.ListSnapshotsResponse, error) {
	start := time.Now()
	list, err := s.h.listFullSnapshots(ctx, "", &struct{}{})
	if err != nil {
		return nil, err
	}
	return &pb.ListSnapshotsResponse{SnapshotDescriptions: pbSnapshots(list), Time: elapsed(start)}, nil
}

func (s grpcSnapshots) DeleteFull(ctx context.Context, r *pb.DeleteFullSnapshotRequest) (*pb.DeleteSnapshotResponse, error) {
	start := time.Now()
	if _, err := s.h.deleteFullSnapshot(ctx, "", &snapshotRef{Name: r.GetSnapshotName()}); err != nil {
		return nil, err
	}
	return &pb.DeleteSnapshotResponse{Time: elapsed(start)}, nil
}
