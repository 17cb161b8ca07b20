package mcpbridge

import (
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/agenthub/hub/internal/castore"
)

// transportCredentials are how Dial talks to the hub at addr: TLS checked
// against the hub's CA when one is stored for addr (castore, written by
// `hub setup` from a join line), else plain text (a hub on loopback).
func transportCredentials(addr string) (credentials.TransportCredentials, error) {
	cfg, err := castore.ClientConfig(addr)
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		return insecure.NewCredentials(), nil
	}
	return credentials.NewTLS(cfg), nil
}
