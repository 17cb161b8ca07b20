#!/usr/bin/env bash
# The real agent hosts end to end (test/hosts): Claude Code, Codex CLI and
# Gemini CLI, at the versions pinned below, installed from npm into a cache
# directory, each set up with `hub setup` against a real hub on loopback
# and driven by the scripted model (test/hosts/model) in place of the
# model API. A host that cannot be installed fails the run, with the
# reason: nothing is skipped. The three hosts run side by side, each its
# scenarios one after the other. The last line says what passed per host:
#   hosts: claude-code=V a/b codex=V a/b gemini-cli=V a/b
#
# Usage: bash scripts/ci-hosts.sh   (needs go, node >= 20 and npm)
#   HUB_HOSTS_CACHE  where the hosts are installed (default ~/.cache/agent-hub/hosts)
set -euo pipefail
cd "$(dirname "$0")/.."

claude_version=2.1.328
codex_version=0.171.0
gemini_version=0.61.0

for tool in go node npm; do
	command -v "$tool" >/dev/null || { echo "ci-hosts: $tool is required" >&2; exit 1; }
done
cache=${HUB_HOSTS_CACHE:-$HOME/.cache/agent-hub/hosts}
mkdir -p "$cache"

# install PACKAGE VERSION BIN: the host's binary path on stdout, from the
# cache or installed into it; the reason on stderr when it cannot be.
install() {
	local pkg=$1 version=$2 bin=$3 dir
	dir="$cache/${pkg//\//_}@$version"
	if [ ! -x "$dir/node_modules/.bin/$bin" ]; then
		rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
		if ! (cd "$dir.tmp" && npm install --silent --no-audit --no-fund --no-save "$pkg@$version" >npm.log 2>&1); then
			echo "ci-hosts: cannot install $pkg@$version from npm:" >&2
			tail -20 "$dir.tmp/npm.log" >&2
			return 1
		fi
		rm -rf "$dir" && mv "$dir.tmp" "$dir"
	fi
	echo "$dir/node_modules/.bin/$bin"
}

failed=0
echo "ci-hosts: installing the pinned hosts into $cache"
claude=$(install @anthropic-ai/claude-code "$claude_version" claude) || failed=1
codex=$(install @openai/codex "$codex_version" codex) || failed=1
gemini=$(install @google/gemini-cli "$gemini_version" gemini) || failed=1
if [ "$failed" = 1 ]; then
	echo "hosts: a host could not be installed (above): claude-code=$claude_version codex=$codex_version gemini-cli=$gemini_version" >&2
	exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Each host says its version while the hub builds (a Node host's start is
# seconds of CPU: half a minute on a loaded machine).
pids=()
for bin in "$claude" "$codex" "$gemini"; do
	"$bin" --version &
	pids+=($!)
done
go build -o "$work/hub" ./cmd/hub
go build -o "$work/hub-hook" ./cmd/hub-hook # hub setup points the hosts' hooks at it
for pid in "${pids[@]}"; do
	wait "$pid" || { echo "ci-hosts: a host installed in $cache does not run (above)" >&2; exit 1; }
done

status=0
HUB_TEST_HUB="$work/hub" HUB_TEST_CLAUDE="$claude" HUB_TEST_CODEX="$codex" HUB_TEST_GEMINI="$gemini" \
	go test -count=1 -timeout 15m -parallel 3 -v -run '^(TestClaudeCode|TestCodex|TestGemini)$' ./test/hosts/ >"$work/test.log" 2>&1 || status=$?
grep -v '^=== ' "$work/test.log" | grep -v '^        ' || true
if [ "$status" != 0 ]; then
	# What each failed scenario logged: the lines under its name (go test -v
	# marks whose output follows with === RUN, NAME or CONT).
	echo "ci-hosts: failures, in full:" >&2
	failed=$(grep -oE -- '--- FAIL: [^ ]+' "$work/test.log" | cut -d' ' -f3 | tr '\n' ' ')
	awk -v failed=" $failed" '/^=== (RUN|NAME|CONT|PAUSE) / { cur = $3 } index(failed, " " cur " ") { print }' "$work/test.log" >&2
	tail -20 "$work/test.log" >&2
fi

# count TEST: passed/total of its scenarios (a skipped one is not passed).
count() {
	local pass total
	pass=$(grep -c -- "--- PASS: $1/" "$work/test.log" || true)
	total=$(grep -cE -- "--- (PASS|FAIL|SKIP): $1/" "$work/test.log" || true)
	echo "$pass/$total"
}
line="hosts:"
for host in "claude-code $claude_version TestClaudeCode" "codex $codex_version TestCodex" "gemini-cli $gemini_version TestGemini"; do
	set -- $host
	c=$(count "$3")
	if [ "${c%/*}" != "${c#*/}" ] || [ "$c" = 0/0 ]; then status=1; fi
	line="$line $1=$2 $c"
done
echo "$line"
exit "$status"
