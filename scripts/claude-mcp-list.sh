#!/usr/bin/env bash
# Checks `hub setup claude` against Claude Code itself: installs
# @anthropic-ai/claude-code from npm into a temporary directory (pinned
# below) and runs TestSetupClaudeMCPListShowsTheHub, which writes a
# project's and a user's config with `hub setup claude` and expects
# `claude mcp list` to show the hub connected and the servers that were
# there kept. `claude mcp list` needs no Anthropic account.
#
# Usage: scripts/claude-mcp-list.sh      (needs go, node >= 18 and npm)
set -euo pipefail
cd "$(dirname "$0")/.."

version=2.1.197
for tool in go npm; do
	command -v "$tool" >/dev/null || { echo "claude-mcp-list: $tool is required" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "claude-mcp-list: installing @anthropic-ai/claude-code@$version"
(cd "$work" && npm install --silent --no-audit --no-fund "@anthropic-ai/claude-code@$version" >/dev/null)
out=$(HUB_TEST_CLAUDE="$work/node_modules/.bin/claude" \
	go test -count=1 -run '^TestSetupClaudeMCPListShowsTheHub$' -v ./cmd/hub/ 2>&1) || { echo "$out" >&2; exit 1; }
echo "$out" | grep -v '^=== '
# A skipped test is a failed check here: the point is to run Claude Code.
if ! echo "$out" | grep -q -- '--- PASS: TestSetupClaudeMCPListShowsTheHub'; then
	echo "claude-mcp-list: the test did not pass (skipped?)" >&2
	exit 1
fi
