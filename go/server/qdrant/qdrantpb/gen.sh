#!/bin/sh
# Regenerates the Go code of Qdrant's gRPC API from the .proto files here
# (go generate ./go/server/qdrant/qdrantpb). CI needs none of this: the
# generated .pb.go files are committed. Tools, at the versions the
# committed files were made with:
#   protoc 35.1:           pip install grpcio-tools==1.85.1 (python -m grpc_tools.protoc)
#   protoc-gen-go:         go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   protoc-gen-go-grpc:    go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
# PROTOC overrides the compiler command (default: python3 -m grpc_tools.protoc).
set -eu
cd "$(dirname "$0")"
PROTOC=${PROTOC:-"python3 -m grpc_tools.protoc"}
pkg=github.com/strata-db/strata/go/server/qdrant/qdrantpb
files="collections.proto collections_service.proto json_with_int.proto points.proto points_service.proto qdrant.proto qdrant_common.proto snapshots_service.proto"
# The .proto files name no go_package: map each one to this package.
maps=""
for f in $files; do maps="$maps,M$f=$pkg;qdrantpb"; done
maps=${maps#,}
$PROTOC -I. --go_out=. --go_opt=paths=source_relative,"$maps" \
	--go-grpc_out=. --go-grpc_opt=paths=source_relative,"$maps" $files
