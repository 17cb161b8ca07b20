#!/usr/bin/env bash
# Installs the pinned code generators into $(go env GOPATH)/bin.
# Everything comes from the Go module proxy; nothing needs the buf registry.
set -euo pipefail
BUF_VERSION=v1.75.0
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
GRPC_GATEWAY_VERSION=v2.32.0

install() {
  echo "tools: installing $1@$2" >&2
  go install "$1@$2"
}
install github.com/bufbuild/buf/cmd/buf "$BUF_VERSION"
install google.golang.org/protobuf/cmd/protoc-gen-go "$PROTOC_GEN_GO_VERSION"
install google.golang.org/grpc/cmd/protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION"
install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway "$GRPC_GATEWAY_VERSION"
install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2 "$GRPC_GATEWAY_VERSION"
