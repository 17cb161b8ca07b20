#!/usr/bin/env bash
# Records what the real hosts send over OTLP (metrics and log events) into
# internal/usage/testdata, the fixtures of the hub's mapping per host: runs
# the hosts rig (scripts/ci-hosts.sh), whose telemetry scenario sets each
# host up with `hub setup` to export to the hub and writes what reached it
# as HOST_metrics.json and HOST_logs.json (OTLP's JSON, a resource a line).
# Then run `go test ./internal/usage` and review the diff: the figures the
# tests expect follow from the scripted model (10 input and 5 output tokens
# per request).
#
# Usage: bash scripts/record-otlp.sh   (needs what scripts/ci-hosts.sh needs)
set -euo pipefail
cd "$(dirname "$0")/.."
HUB_TEST_OTLP_RECORD="$PWD/internal/usage/testdata" exec bash scripts/ci-hosts.sh
