// Package qdrantpb is the Go code generated from Qdrant's published gRPC
// API (the .proto files beside it, package qdrant), which the Qdrant door
// serves (package qdrant, grpc.go). Nothing here is written by hand but
// this file and gen.sh: regenerate with go generate.
//
// The .proto files are Qdrant's, copied unchanged from qdrant-client's
// repository (qdrant_client/proto/, version 1.18.0, commit 326adefcc215),
// under the Apache License 2.0, copyright Qdrant Solutions GmbH; see
// README.md.
package qdrantpb

//go:generate ./gen.sh
