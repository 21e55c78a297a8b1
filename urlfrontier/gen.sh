#!/bin/sh
# Regenerates the Go code of the URLFrontier API from urlfrontierpb/urlfrontier.proto. The generated files are
# committed, so building and testing need neither protoc nor the plugins; run this only after editing the .proto.
# Needs protoc (Debian: protobuf-compiler) and, on PATH:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
set -eu
cd "$(dirname "$0")/urlfrontierpb"
pkg=github.com/frontiercrawl/frontier/urlfrontier/urlfrontierpb
protoc --proto_path=. \
	--go_out=. --go_opt=paths=source_relative --go_opt=Murlfrontier.proto=$pkg \
	--go-grpc_out=. --go-grpc_opt=paths=source_relative --go-grpc_opt=Murlfrontier.proto=$pkg \
	urlfrontier.proto
