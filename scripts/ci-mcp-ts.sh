#!/usr/bin/env bash
# Drives the hub's MCP bridge with a client that is not ours: the official
# TypeScript SDK (@modelcontextprotocol/sdk, pinned in test/mcpts). Builds
# the hub, starts it on free loopback ports with a temporary data dir,
# creates five agents, installs the npm project and runs its tests:
#   client.test.mjs  stdio through `hub mcp` and streamable HTTP at /mcp;
#   hosts.test.mjs   `hub mcp` started exactly as docs/hosts.md's Claude Code
#                    line and Gemini CLI snippet configure it;
#   channel.test.mjs Claude Code channel notifications pushed by `hub mcp`;
#   ask.test.mjs     ask_human parked until a person answers from the inbox.
#
# Usage: scripts/ci-mcp-ts.sh      (needs go, node >= 18 and npm)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# A fresh Debian machine has no Node.js: install it from Debian (node 18+).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		echo "ci-mcp-ts: installing nodejs and npm from Debian"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
	fi
fi
for tool in go node npm curl; do
	command -v "$tool" >/dev/null || { echo "ci-mcp-ts: $tool is required (node >= 18 with npm: apt-get install nodejs npm)" >&2; exit 1; }
done

# shellcheck source=lib/testhub.sh
source scripts/lib/testhub.sh
testhub_init ci-mcp-ts

echo "ci-mcp-ts: building the hub"
go build -o "$work/hub" ./cmd/hub
testhub_start "$work/hub"
echo "ci-mcp-ts: hub at gRPC $grpc_addr, HTTP $http_addr"

export HUB_BIN="$work/hub" HUB_ADDR="$grpc_addr" HUB_MCP_URL="http://$http_addr/mcp"
export AGENT_A=ts-alice AGENT_B=ts-bob AGENT_C=ts-carol AGENT_D=claude-dora AGENT_E=gemini-eve AGENT_F=ts-frank AGENT_G=ts-grace
TOKEN_A=$(testhub_agent "$AGENT_A")
TOKEN_B=$(testhub_agent "$AGENT_B")
TOKEN_C=$(testhub_agent "$AGENT_C")
TOKEN_D=$(testhub_agent "$AGENT_D")
TOKEN_E=$(testhub_agent "$AGENT_E")
TOKEN_F=$(testhub_agent "$AGENT_F")
TOKEN_G=$(testhub_agent "$AGENT_G")
export TOKEN_A TOKEN_B TOKEN_C TOKEN_D TOKEN_E TOKEN_F TOKEN_G
export HUB_HTTP="$http_addr" ADMIN_TOKEN="$admin_token"

cd test/mcpts
echo "ci-mcp-ts: npm ci"
npm ci --no-audit --no-fund --loglevel=error
echo "ci-mcp-ts: running the TypeScript SDK client against the hub"
node --test --test-reporter=spec client.test.mjs hosts.test.mjs channel.test.mjs ask.test.mjs
