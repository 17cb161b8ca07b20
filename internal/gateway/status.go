package gateway

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func statusCode(err error) codes.Code { return status.Code(err) }
