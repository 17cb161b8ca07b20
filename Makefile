# Agent Hub. The README's two commands need none of this:
#   go run ./cmd/hub        # run the hub
#   go test -race ./...     # run the tests
# Targets:
#   make build           bin/hub, bin/hub-hook and bin/hubctl, version, commit and date stamped from git
#   make test            go test -race ./...
#   make bench           the benchmark of BENCHMARKS.md (go run ./cmd/hubbench; BENCHFLAGS=... to pass flags)
#   make generate        install the pinned generators, format, lint and regenerate gen/ and the OpenAPI
#   make check-generate  regenerate and fail if gen/ or the OpenAPI differ from what is committed
#   make release-snapshot  the release into dist/ with GoReleaser (--snapshot: nothing published)
#   make release-check   scripts/release-check.sh: tools, snapshot, smoke tests, image, unit
#   make ci              what .ci/run does

GO      ?= go
GOBIN   := $(shell $(GO) env GOPATH)/bin
BUF     := PATH="$(GOBIN):$$PATH" buf
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE    ?= $(shell TZ=UTC git show -s --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD 2>/dev/null)
LDFLAGS := -X github.com/agenthub/hub/internal/version.version=$(VERSION) \
           -X github.com/agenthub/hub/internal/version.commit=$(COMMIT) \
           -X github.com/agenthub/hub/internal/version.date=$(DATE)
# grpcnotrace leaves gRPC's request tracing (golang.org/x/net/trace, unused
# here) out of hub: every hook run and guard check starts that much lighter.
HUBTAGS := grpcnotrace
GORELEASER := PATH="$(GOBIN):$$PATH" goreleaser
BENCHFLAGS ?=

.PHONY: all build test vet bench tools generate check-generate release-snapshot release-check ci clean

all: build test

build:
	$(GO) build -tags "$(HUBTAGS)" -ldflags "$(LDFLAGS)" -o bin/hub ./cmd/hub
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/hub-hook ./cmd/hub-hook
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/hubctl ./cmd/hubctl

test:
	$(GO) test -race ./...

vet:
	$(GO) vet ./...

bench:
	$(GO) run ./cmd/hubbench $(BENCHFLAGS)

tools:
	bash scripts/tools.sh

generate: tools
	$(BUF) format -w
	$(BUF) lint
	$(BUF) generate
	$(GO) run ./scripts/gen-openapi3

check-generate: tools
	$(BUF) format --diff --exit-code
	$(BUF) lint
	$(BUF) generate
	$(GO) run ./scripts/gen-openapi3
	git diff --exit-code -- gen internal/gateway/openapi
	@untracked="$$(git ls-files --others --exclude-standard -- gen internal/gateway/openapi)"; \
	if [ -n "$$untracked" ]; then echo "generated files not committed:"; echo "$$untracked"; exit 1; fi

# GoReleaser v2.15.1 and the cross compilers: scripts/release-check.sh
# installs them (docs/operations.md, "Install").
release-snapshot:
	$(GORELEASER) release --snapshot --clean

release-check:
	bash scripts/release-check.sh

ci:
	bash .ci/run

clean:
	rm -rf bin dist
